"""The proxy's configuration: upstreams by route family, limits, logging; from options or a JSON file."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from chatmend.exceptions import InputError
from chatmend.providers import names as provider_names
from chatmend.providers.http import FAMILIES

__all__ = ["TOKEN_ENV", "ProxyConfig", "is_loopback", "load_config", "parse_upstreams"]

TOKEN_ENV = "CHATMEND_PROXY_TOKEN"
"""The environment variable `chatmend proxy` reads its token from when `--token` is not given."""


def _default_upstreams() -> dict[str, str]:
    return {name: family.default_upstream for name, family in FAMILIES.items()}


@dataclass(frozen=True)
class ProxyConfig:
    """Everything the proxy needs; the upstream of a route is fixed here, never by a request."""

    host: str = "127.0.0.1"
    port: int = 8787
    upstreams: dict[str, str] = field(default_factory=_default_upstreams)
    """The base URL of each route family (`anthropic`, `openai`, `gemini`, `bedrock`), as its SDK's `base_url`."""
    chat_provider: str = "openai_chat"
    """The adapter that repairs `/v1/chat/completions` bodies: `openai_chat`, or an OpenAI-compatible one
    (`kimi`, `mistral`, a dialect) when the `openai` upstream is that service."""
    dry_run: bool = False
    """Log what repair would change and forward the original body."""
    max_body_bytes: int = 32 * 1024 * 1024
    """Request bodies above this get a 413 in the provider's error shape."""
    max_inflight_bytes: int = 128 * 1024 * 1024
    """The request bodies being read, repaired and sent at once, in bytes: a request that would pass it gets a
    503 with `Retry-After: 1` in the provider's error shape (the SDKs retry it); one body alone always goes."""
    token: str = field(default="", repr=False)
    """A secret every client must send (`x-chatmend-token: TOKEN`, or `Proxy-Authorization: Bearer TOKEN`); needed
    to listen beyond loopback. Never logged."""
    log_level: str = "info"
    """The proxy's own log level (`debug`, `info`, `warning`, `error`); uvicorn's and httpx2's stay at warning
    unless it is `debug`."""
    log_json: bool = False
    """One JSON object a log line, for log collectors."""
    connect_timeout: float = 10.0
    read_timeout: float = 600.0
    """Seconds without a byte from the upstream before the request is answered 504 (a long generation streams)."""
    grace_seconds: float = 30.0
    """On SIGTERM: how long in-flight requests and streams may take to finish."""
    workers: int = 1
    sign_bedrock: bool = False
    """Sign each Bedrock request again with SigV4, with the AWS credentials of the proxy's own process (botocore's
    chain: environment, profile, instance role): a SigV4 signature covers the host and the body, so a signed request
    can only be repaired, and sent to the upstream's host, when signed again. Off: a signed request is forwarded
    as it came, unrepaired (a request with a Bedrock API key, `Authorization: Bearer`, is repaired either way)."""

    def to_json(self) -> str:
        """The configuration as JSON (how `--workers` hands it to each worker process)."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ProxyConfig:
        return _from_mapping(json.loads(text), "<config>")


def parse_upstreams(specs: Sequence[str], base: Mapping[str, str]) -> dict[str, str]:
    """`NAME=URL` options over the defaults; a located error for an unknown family or a URL that is not http(s)."""
    upstreams = dict(base)
    for spec in specs:
        name, sep, url = spec.partition("=")
        if not sep:
            raise InputError(f"--upstream {spec!r}: expected NAME=URL, NAME one of {', '.join(FAMILIES)}")
        upstreams[name] = url
    return _checked_upstreams(upstreams, "--upstream")


def _checked_upstreams(upstreams: Mapping[str, Any], where: str) -> dict[str, str]:
    out = {}
    for name, url in upstreams.items():
        if name not in FAMILIES:
            raise InputError(f"{where}: unknown route family {name!r}; expected one of {', '.join(FAMILIES)}")
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise InputError(f"{where}: the {name} upstream must be an http(s) URL, got {url!r}")
        out[name] = url.rstrip("/")
    return out


def load_config(path: str) -> ProxyConfig:
    """A configuration file: a JSON object with any of `ProxyConfig`'s fields."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the proxy configuration: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"{path}: the proxy configuration is not JSON: {exc}") from None
    return _from_mapping(data, path)


def _from_mapping(data: Any, where: str) -> ProxyConfig:
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a JSON object of proxy settings")
    known = set(ProxyConfig.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise InputError(f"{where}: unknown setting {unknown[0]!r}; expected one of {', '.join(sorted(known))}")
    config = ProxyConfig()
    values = dict(data)
    if "upstreams" in values:
        if not isinstance(values["upstreams"], dict):
            raise InputError(f"{where}: 'upstreams' must be an object of NAME: URL")
        values["upstreams"] = {**config.upstreams, **_checked_upstreams(values["upstreams"], f"{where}: upstreams")}
    for name, value in values.items():
        default = getattr(config, name)
        if name != "upstreams" and not isinstance(value, type(default)) and not (
                isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool)):
            raise InputError(f"{where}: {name!r} must be a {type(default).__name__}, got {value!r}")
    config = replace(config, **values)
    return validated(config, where)


def is_loopback(host: str) -> bool:
    """True for a name or address of this machine only: `localhost`, `127.0.0.0/8`, `::1`."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def validated(config: ProxyConfig, where: str) -> ProxyConfig:
    """The configuration, or a located error for a value out of range."""
    if not is_loopback(config.host) and not config.token:
        raise InputError(f"{where}: --host {config.host} listens beyond this machine: anyone who reaches it would "
                         f"use your keys and AWS identity; set a token the clients must send (--token, or "
                         f"{TOKEN_ENV} in the environment)")
    if config.log_level.lower() not in ("debug", "info", "warning", "error"):
        raise InputError(f"{where}: log level {config.log_level!r}: expected debug, info, warning or error")
    if config.chat_provider not in provider_names():
        raise InputError(f"{where}: unknown chat provider {config.chat_provider!r}; expected one of "
                         f"{', '.join(provider_names())}")
    if not 0 < config.port < 65536 and config.port != 0:
        raise InputError(f"{where}: port {config.port} is not a TCP port")
    if config.max_body_bytes <= 0 or config.workers <= 0 or config.max_inflight_bytes <= 0:
        raise InputError(f"{where}: max_body_bytes, max_inflight_bytes and workers must be positive")
    return config
