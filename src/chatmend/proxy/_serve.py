"""Serving the proxy with uvicorn: the socket bound first (a port taken is a clear error, not uvicorn's exit),
"listening" said only once the server accepts connections."""

from __future__ import annotations

import errno
import logging
import os
import socket
from collections.abc import Callable
from typing import Any

from chatmend.proxy._app import create_app
from chatmend.proxy._config import ProxyConfig

__all__ = ["CONFIG_ENV", "PortTaken", "bind", "serve"]

CONFIG_ENV = "CHATMEND_PROXY_CONFIG"
"""The environment variable that hands the configuration (as JSON) to each worker process of `--workers N`."""

log = logging.getLogger("chatmend.proxy")


class PortTaken(OSError):
    """The address to listen on is in use (or not this machine's): the proxy cannot serve there."""


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port`, as uvicorn binds one (an IPv6 host when it has a `:`); PortTaken when
    the port is taken or the address cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortTaken(exc.errno, f"port {port} on {host} is taken: another process listens there "
                                       f"(choose another with --port)") from None
        raise PortTaken(exc.errno or 0, f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def app_from_environment() -> object:
    """The application of the configuration in `CHATMEND_PROXY_CONFIG` (uvicorn's factory for workers)."""
    return create_app(ProxyConfig.from_json(os.environ[CONFIG_ENV]))


def serve(config: ProxyConfig, on_listening: Callable[[str], None] | None = None) -> None:
    """Serve the proxy with uvicorn until SIGINT or SIGTERM (in-flight requests get `grace_seconds`).

    The socket is bound first: PortTaken when it cannot be. `on_listening(url)` is called once the server
    accepts connections (by default: one `listening` log line)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    sock = bind(config.host, config.port)
    bound_port = sock.getsockname()[1]
    shown = f"[{config.host}]" if ":" in config.host else config.host
    url = f"http://{shown}:{bound_port}"
    said = on_listening or _log_listening(config)
    common: dict[str, Any] = {
        "host": config.host, "port": bound_port, "timeout_graceful_shutdown": int(config.grace_seconds),
        # the upstream's own server and date headers pass through; the CLI configures logging
        "log_config": None, "access_log": False, "server_header": False, "date_header": False,
    }
    if config.workers > 1:
        os.environ[CONFIG_ENV] = config.to_json()  # the CLI owns its process: the workers read it
        uv_config = uvicorn.Config("chatmend.proxy._serve:app_from_environment", factory=True,
                                   workers=config.workers, **common)
        said(url)  # bound: the workers accept on this socket as each starts
        Multiprocess(uv_config, sockets=[sock]).run()
        return

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:
                said(url)

    server = _Server(uvicorn.Config(create_app(config), **common))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def _log_listening(config: ProxyConfig) -> Callable[[str], None]:
    def said(url: str) -> None:
        routes = ", ".join(f"{name} -> {base}" for name, base in config.upstreams.items())
        log.info("listening on %s (%s)", url, routes,
                 extra={"chatmend": {"event": "listening", "url": url, "upstreams": dict(config.upstreams)}})
    return said
