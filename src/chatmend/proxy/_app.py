"""The ASGI application: repair each history-carrying request in its own format, forward everything, stream back
exactly what the upstream sends."""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import re
import time
import zlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import anyio
import anyio.to_thread
import httpx2
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route as StarletteRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from chatmend import providers
from chatmend import strict_json as strict_json
from chatmend.exceptions import ChatmendError
from chatmend.providers.http import Family, Route, error_body, error_headers, family_of, route_of, signed, signing_scope
from chatmend.proxy._config import ProxyConfig, is_loopback
from chatmend.proxy._sigv4 import Signer, load_signer

__all__ = ["REPAIRED_HEADER", "TOKEN_HEADER", "Repaired", "create_app", "repair_request"]

REPAIRED_HEADER = "chatmend-repaired"
"""The response header of a repaired request: a short summary of the changes."""

TOKEN_HEADER = "x-chatmend-token"
"""The request header that carries the proxy's token (`--token`), else `Proxy-Authorization: Bearer TOKEN`."""

log = logging.getLogger("chatmend.proxy")

try:  # zstd-encoded requests (Codex's) are read with `zstandard`, which the proxy extra installs
    import zstandard as _zstd
except ImportError:
    _zstd = None  # type: ignore[assignment]

try:  # a repaired body is written with `orjson`, which chatmend installs on CPython (else with json)
    import orjson as _orjson
except ImportError:
    _orjson = None  # type: ignore[assignment]

# Hop-by-hop headers (RFC 9110 §7.6.1) and those the proxy recomputes: never forwarded.
_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
                  "te", "trailer", "transfer-encoding", "upgrade"})
_NOT_FORWARDED = _HOP | {"host", "content-length", TOKEN_HEADER}
_THREAD_ABOVE = 16 * 1024  # bodies above this are repaired on a worker thread: the event loop keeps serving
_REPAIR_THREADS = 4  # repairs at once on worker threads (they share one interpreter lock: more would only wait for it)
# The Bedrock routes `--sign-bedrock` signs: Converse, ConverseStream, InvokeModel, InvokeModelWithResponseStream
_SIGNABLE = re.compile(r"/model/[^/]+/(?:converse|converse-stream|invoke|invoke-with-response-stream)")


@dataclass(frozen=True)
class Repaired:
    """What repair did to one request body."""

    body: bytes
    """The body to forward: the original bytes when nothing changed."""
    changed: bool
    interrupted: list[str]
    """Ids of the calls answered as interrupted."""
    moved: int
    notes: int
    renamed: int
    rewritten: int
    """Items of the list written anew."""

    def summary(self) -> str:
        """The `chatmend-repaired` header: counts only (ids and content stay out of headers)."""
        return (f"interrupted={len(self.interrupted)}; moved={self.moved}; notes={self.notes}; "
                f"renamed={self.renamed}; rewritten={self.rewritten}")


def repair_request(provider_name: str, raw: bytes, model: str | None = None) -> Repaired:
    """The request body repaired by the provider's `repair_body`; the original bytes when nothing changed. With
    the `model` a route names (Bedrock's path), the adapter of that model's own rules (`for_model`) repairs it.

    Raises ValueError (a body that is not JSON) or ChatmendError (not a body of that provider): the caller
    forwards such a body unchanged.
    """
    body, finite = _read_json(raw)
    adapter = providers.get(provider_name)
    if model is not None:
        adapter = adapter.for_model(model)
    result = adapter.repair_body(body)
    if not result.changed:
        return Repaired(raw, False, [], 0, 0, 0, 0)
    data = _encoded(result.body, finite)
    report = result.report  # counts only: the neutral side of a fast repair is never worked out here
    return Repaired(data, True, list(report.interrupted), report.moved, report.notes, report.renamed,
                    len(result.rewritten))


def _read_json(raw: bytes) -> tuple[Any, bool]:
    """`json.loads(raw)`, and True when orjson may write what repair makes of it: every number in it finite (orjson
    would write `NaN`, `Infinity` or `1e999`, which json.loads reads, as `null`)."""
    if _orjson is not None:
        try:
            return strict_json.finite_loads(raw), True
        except strict_json.NotFinite:
            pass
    return json.loads(raw), False


def _encoded(body: Any, finite: bool) -> bytes:
    """A repaired body as JSON, compact and unescaped as the SDKs write bodies (deterministic, so a prompt cache
    keeps hitting): by orjson when installed (faster than json, and the same text for the values json.loads
    reads, numbers finite), else by json."""
    if finite and _orjson is not None:
        try:
            return _orjson.dumps(body)
        except TypeError:  # an integer beyond 64 bits, a lone surrogate: json writes it, or refuses it as before
            pass
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def create_app(config: ProxyConfig) -> ASGIApp:
    """The proxy as an ASGI application (what `chatmend proxy` serves with uvicorn).

    Every request first passes the access check (`_Guard`): its `Host` must name this proxy on a loopback address
    (what a page using DNS rebinding cannot send), and, when the configuration sets a token, it must carry it.
    """
    if not is_loopback(config.host) and not config.token:
        raise ValueError(f"the proxy listens on {config.host}, beyond this machine: set a token the clients must "
                         f"send (--token or CHATMEND_PROXY_TOKEN)")
    state: dict[str, Any] = {"inflight": 0}
    if config.sign_bedrock:
        state["signer"] = load_signer()  # at once: a proxy that cannot sign does not start

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        timeout = httpx2.Timeout(config.read_timeout, connect=config.connect_timeout, pool=None)
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=200)
        state["threads"] = anyio.CapacityLimiter(_REPAIR_THREADS)
        # trust_env=False: no proxy or netrc from the environment reaches a request meant for a fixed upstream
        async with httpx2.AsyncClient(timeout=timeout, limits=limits, trust_env=False,
                                     follow_redirects=False) as client:
            state["client"] = client
            yield

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def forward(request: Request) -> Response:
        return await _forward(request, config, state)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes = [StarletteRoute("/healthz", healthz, methods=["GET"]),
              StarletteRoute("/{path:path}", forward, methods=methods)]
    return _Guard(Starlette(routes=routes, lifespan=lifespan), config)


class _Guard:
    """The access check in front of the application: the `Host` (on a loopback address) and the token."""

    def __init__(self, app: ASGIApp, config: ProxyConfig) -> None:
        self.app = app
        self._config = config
        self._check_host = is_loopback(config.host)
        self._token = config.token.encode() if config.token else b""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                status, message = refusal
                path = scope.get("path", "")
                headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
                _log(self._config, "refused", level=logging.WARNING, route=path, status=status,
                     reason=message.split(": ", 1)[-1])
                await _error(family_of(path, headers), status, message)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers: dict[bytes, bytes] = {}
        for k, v in scope.get("headers", []):
            headers.setdefault(k.lower(), v)
        if self._check_host:
            server = scope.get("server")
            port = server[1] if server and server[1] else self._config.port
            host = headers.get(b"host", b"").decode("latin-1")
            if not _names_loopback(host, port):
                return 403, (f"chatmend proxy: the Host header {host[:100]!r} does not name this proxy (a loopback "
                             f"address with port {port}): refused, as a page using DNS rebinding would send it")
        if self._token and scope.get("path") != "/healthz":
            given = headers.get(TOKEN_HEADER.encode(), b"")
            if not given:
                scheme, _, value = headers.get(b"proxy-authorization", b"").partition(b" ")
                given = value.strip() if scheme.lower() == b"bearer" else b""
            if not hmac.compare_digest(given, self._token):
                return 401, (f"chatmend proxy: this proxy needs its token: send it in the {TOKEN_HEADER} header "
                             f"(or Proxy-Authorization: Bearer TOKEN)")
        return None


def _names_loopback(host: str, port: int) -> bool:
    """True when a `Host` header names a loopback address (`localhost`, `127.0.0.1`, `[::1]`) with `port` (80
    when it names none)."""
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        given = rest[1:] if rest.startswith(":") else ("" if not rest else "x")
    else:
        name, sep, given = host.rpartition(":")
        if not sep:
            name, given = host, ""
    if given and not given.isdigit():
        return False
    return bool(name) and is_loopback(name) and (int(given) if given else 80) == port


def _escapes(path: str) -> bool:
    """True when a request path has a dot segment (`.`, `..`), also once or twice percent-decoded (`%2e%2e`):
    such a path would leave the upstream's base path."""
    for _ in range(3):
        if any(segment in (".", "..") for segment in re.split(r"[/\\]", path)):
            return True
        decoded = unquote(path)
        if decoded == path:
            return False
        path = decoded
    return True  # still encoded after three rounds: no client of an API sends that


class _Busy(Exception):
    pass


async def _forward(request: Request, config: ProxyConfig, state: dict[str, Any]) -> Response:
    path = request.url.path
    raw_path = request.scope.get("raw_path")
    wire_path = raw_path.decode("latin-1") if isinstance(raw_path, bytes) and raw_path else path
    found = route_of(path) or route_of(wire_path)  # an ARN's `/` stays encoded in the wire path only
    family = found[0] if found else family_of(path, request.headers)
    if _escapes(path) or _escapes(wire_path):
        _log(config, "refused", level=logging.WARNING, route=path[:200], status=400, reason="dot segment")
        return _error(family, 400, "chatmend proxy: a path with a dot segment ('.' or '..', encoded or not) would "
                                   "leave the upstream's base path: refused")
    signer: Signer | None = state.get("signer")
    if signer is not None and family.name == "bedrock" and not (
            request.method == "POST" and (_SIGNABLE.fullmatch(path) or _SIGNABLE.fullmatch(wire_path))):
        _log(config, "refused", level=logging.WARNING, route=path[:200], status=403, reason="not signable")
        return _error(family, 403, "chatmend proxy: --sign-bedrock signs only Converse, ConverseStream, InvokeModel "
                                   "and InvokeModelWithResponseStream requests (POST /model/{id}/converse, "
                                   "converse-stream, invoke, invoke-with-response-stream)")
    held = [0]
    try:
        return await _forward_body(request, config, state, path, wire_path, found, family, held)
    except _Busy:
        _log(config, "busy", level=logging.WARNING, route=path, inflight_bytes=state["inflight"],
             limit=config.max_inflight_bytes)
        response = _error(family, 503, f"chatmend proxy: busy: {config.max_inflight_bytes} bytes of request bodies "
                                       f"are in flight (--max-inflight-bytes); retry shortly")
        response.headers["retry-after"] = "1"
        return response
    finally:
        state["inflight"] -= held[0]


async def _forward_body(request: Request, config: ProxyConfig, state: dict[str, Any], path: str, wire_path: str,
                        found: tuple[Family, Route] | None, family: Family, held: list[int]) -> Response:
    """`_forward` once the request may go: its body read (counted in `held` against the bytes in flight),
    repaired, sent, and the answer relayed."""
    client: httpx2.AsyncClient = state["client"]
    signer: Signer | None = state.get("signer")
    is_signed = family.name == "bedrock" and signed(request.headers)
    try:
        raw = await _read_body(request, config, state, held)
    except _TooLarge:
        return _error(family, 413, f"chatmend proxy: the request body is over {config.max_body_bytes} bytes")
    except ClientDisconnect:
        return Response(status_code=499)
    extra_headers: dict[str, str] = {}
    headers = _request_headers(request.headers)
    if found is not None and request.method == "POST" and raw and is_signed and signer is None:
        # the client's signature covers this body: changed, it would not verify (--sign-bedrock signs again)
        _log(config, "signed_unrepaired", route=path, provider=found[1].provider)
    elif found is not None and request.method == "POST" and raw:
        route = found[1]
        provider = config.chat_provider if route.provider == "openai_chat" else route.provider
        encoding = request.headers.get("content-encoding", "").strip().lower()
        plain = _decoded(raw, encoding, config.max_body_bytes)
        if plain is not None and plain is not raw:
            _hold(state, config, held, len(plain))  # a compressed body counts at its decoded size too
        if plain is None:
            _log(config, "unreadable", route=path, provider=provider, error=f"content-encoding {encoding}")
        else:
            model = route.model_of(wire_path) or route.model_of(path)
            body, extra_headers = await _repaired(plain, provider, path, config, state, model)
            if extra_headers:  # repaired: sent as plain JSON (a compressed body is not compressed again)
                raw = body
                headers = [(k, v) for k, v in headers if k.lower() != "content-encoding"]
    # Bedrock's path as the client encoded it (a model id's `:`, an ARN's `/`): what its signature covers
    url = _upstream_url(config.upstreams[family.name], family, wire_path if family.name == "bedrock" else path,
                        request.url.query)
    if signer is not None and family.name == "bedrock":
        try:
            headers = signer.sign(request.method, url, headers, raw, signing_scope(request.headers))
        except ValueError as exc:
            _log(config, "upstream_error", level=logging.WARNING, route=path, status=502, error=str(exc))
            return _error(family, 502, f"chatmend proxy: {exc}")
    upstream_request = client.build_request(request.method, url, headers=headers, content=raw)
    started = time.perf_counter()
    try:
        upstream = await client.send(upstream_request, stream=True)
    except httpx2.TimeoutException as exc:
        _log(config, "upstream_error", level=logging.WARNING, route=path, status=504, error=type(exc).__name__)
        return _error(family, 504, f"chatmend proxy: the upstream {family.name} API did not answer in time")
    except httpx2.TransportError as exc:
        _log(config, "upstream_error", level=logging.WARNING, route=path, status=502, error=type(exc).__name__)
        return _error(family, 502, f"chatmend proxy: cannot reach the upstream {family.name} API "
                                   f"({type(exc).__name__})")
    if upstream.status_code >= 500:
        _log(config, "upstream_status", level=logging.WARNING, route=path, status=upstream.status_code)
    _log(config, "forwarded", level=logging.DEBUG, method=request.method, route=path, status=upstream.status_code,
         ms=round((time.perf_counter() - started) * 1000, 2))
    response = _Relay(upstream, config, path)
    # the upstream's headers as they came, repeated ones (set-cookie) included; not those it names in Connection
    dropped = _HOP | _connection_named(upstream.headers.get_list("connection"))
    response.raw_headers = [(k, v) for k, v in upstream.headers.raw if k.lower().decode("latin-1") not in dropped]
    response.raw_headers.extend((k.encode("latin-1"), v.encode("latin-1")) for k, v in extra_headers.items())
    return response


class _Relay(StreamingResponse):
    """The upstream's answer relayed as it comes; when the upstream breaks mid-stream, one log line (with its
    status) and the client's response is cut short (the server closes the connection), never a traceback."""

    def __init__(self, upstream: httpx2.Response, config: ProxyConfig, route: str) -> None:
        super().__init__(_relay(upstream), status_code=upstream.status_code)
        self._upstream = upstream
        self._config = config
        self._route = route

    async def stream_response(self, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        sent = 0
        try:
            async for chunk in self.body_iterator:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                sent += len(chunk)
        except httpx2.HTTPError as exc:
            _log(self._config, "upstream_broken", level=logging.WARNING, route=self._route,
                 status=self._upstream.status_code, error=type(exc).__name__, bytes_sent=sent)
            return  # the response stays incomplete: the client sees its stream cut, as the upstream's was
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _connection_named(values: list[str]) -> frozenset[str]:
    """The header names a `Connection` header lists (RFC 9110 §7.6.1: hop-by-hop, never forwarded)."""
    return frozenset(name.strip().lower() for value in values for name in value.split(",") if name.strip())


async def _repaired(raw: bytes, provider: str, path: str, config: ProxyConfig, state: dict[str, Any],
                    model: str | None = None) -> tuple[bytes, dict[str, str]]:
    """The body to forward and the headers to add, with one log line for a repaired (or unreadable) body."""
    started = time.perf_counter()
    try:
        if len(raw) > _THREAD_ABOVE:
            repaired = await anyio.to_thread.run_sync(repair_request, provider, raw, model, limiter=state["threads"])
        else:
            repaired = repair_request(provider, raw, model)
    except (ValueError, ChatmendError, RecursionError) as exc:
        # the provider is the judge of a body chatmend cannot read: forwarded as it came
        _log(config, "unreadable", route=path, provider=provider, error=type(exc).__name__)
        return raw, {}
    if not repaired.changed:
        return raw, {}
    _log(config, "would_repair" if config.dry_run else "repaired", route=path, provider=provider,
         interrupted=repaired.interrupted, moved=repaired.moved, notes=repaired.notes, renamed=repaired.renamed,
         rewritten=repaired.rewritten, ms=round((time.perf_counter() - started) * 1000, 2))
    if config.dry_run:
        return raw, {}
    return repaired.body, {REPAIRED_HEADER: repaired.summary()}


def _decoded(raw: bytes, encoding: str, limit: int) -> bytes | None:
    """The request body without its content encoding (Codex compresses its requests), or None when it cannot be
    decoded here or decodes to more than `limit` bytes."""
    if encoding in ("", "identity"):
        return raw
    try:
        if encoding in ("gzip", "x-gzip", "deflate"):
            # wbits: gzip's header, or zlib's for deflate; max_length stops a decompression bomb
            inflater = zlib.decompressobj(wbits=31 if "gzip" in encoding else 15)
            plain = inflater.decompress(raw, limit + 1)
        elif encoding == "zstd" and _zstd is not None:
            plain = _zstd.ZstdDecompressor().decompress(raw, max_output_size=limit + 1)
        else:
            return None
    except Exception:  # any corrupt stream: the provider is the judge
        return None
    return plain if len(plain) <= limit else None


class _TooLarge(Exception):
    pass


async def _read_body(request: Request, config: ProxyConfig, state: dict[str, Any], held: list[int]) -> bytes:
    """The whole request body, or _TooLarge as soon as it passes the body limit (nothing more is read); its bytes
    are counted in `held` and in the bytes in flight, or _Busy when they would pass `max_inflight_bytes`."""
    limit = config.max_body_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit():
        if int(declared) > limit:
            raise _TooLarge
        _hold(state, config, held, int(declared))
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        if size > held[0]:
            _hold(state, config, held, size - held[0])
        chunks.append(chunk)
    return b"".join(chunks)


def _hold(state: dict[str, Any], config: ProxyConfig, held: list[int], size: int) -> None:
    """Count `size` more bytes of this request in flight; _Busy when that passes the limit."""
    if state["inflight"] + size > config.max_inflight_bytes and state["inflight"] > held[0]:  # one alone goes
        raise _Busy
    state["inflight"] += size
    held[0] += size


async def _relay(upstream: httpx2.Response) -> AsyncIterator[bytes]:
    """The upstream's bytes as they come (still encoded: the client decodes what it asked for); the upstream
    stream is closed when the client goes away."""
    try:
        async for chunk in upstream.aiter_raw():
            yield chunk
    finally:
        await upstream.aclose()


def _upstream_url(base: str, family: Family, path: str, query: str) -> str:
    """The upstream URL of a request path: the family's base in place of its mount (OpenAI's `/v1`)."""
    rest = path[len(family.mount):] if family.mount and path.startswith(family.mount + "/") else path
    return base + rest + (f"?{query}" if query else "")


def _request_headers(headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every header the client sent but the hop-by-hop ones (those its `Connection` header names too), host,
    length (httpx sets those) and the proxy's token."""
    dropped = _NOT_FORWARDED | _connection_named([v for k, v in headers.items() if k.lower() == "connection"])
    out = [(k, v) for k, v in headers.items() if k.lower() not in dropped]
    if not any(k.lower() == "accept-encoding" for k, _ in out):
        out.append(("accept-encoding", "identity"))  # no encoding the client did not ask for
    return out


def _error(family: Family, status: int, message: str) -> Response:
    """An error from the proxy itself, in the provider's own error shape, saying it came from the proxy."""
    return JSONResponse(error_body(family, status, message), status_code=status,
                        headers={"x-chatmend-proxy": "1", **error_headers(family, status)})


def _log(config: ProxyConfig, event: str, *, level: int = logging.INFO, **fields: Any) -> None:
    """One structured line: counts and call ids, never content, never keys. The fields ride on the record
    (`record.chatmend`) for the formatter of `--log-json`; the message is `EVENT k=v ...`."""
    if log.isEnabledFor(level):
        log.log(level, "%s %s", event, " ".join(f"{k}={v}" for k, v in fields.items()),
                extra={"chatmend": {"event": event, **fields}})
