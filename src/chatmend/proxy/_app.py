"""The ASGI application: repair each history-carrying request in its own format, forward everything, stream back
exactly what the upstream sends."""

from __future__ import annotations

import contextlib
import json
import logging
import time
import zlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import httpx2
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route as StarletteRoute

from chatmend import _json as strict_json
from chatmend import providers
from chatmend.exceptions import ChatmendError
from chatmend.providers.http import Family, error_body, error_headers, family_of, route_of, signed, signing_scope
from chatmend.proxy._config import ProxyConfig
from chatmend.proxy._sigv4 import Signer, load_signer

__all__ = ["REPAIRED_HEADER", "Repaired", "create_app", "repair_request"]

REPAIRED_HEADER = "chatmend-repaired"
"""The response header of a repaired request: a short summary of the changes."""

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
_NOT_FORWARDED = _HOP | {"host", "content-length"}
_THREAD_ABOVE = 256 * 1024  # bodies above this are repaired on a worker thread: the event loop keeps serving


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
    keeps hitting): by orjson when installed (an order of magnitude faster than json, and the same text for the
    values json.loads reads, numbers finite), else by json."""
    if finite and _orjson is not None:
        try:
            return _orjson.dumps(body)
        except TypeError:  # an integer beyond 64 bits, a lone surrogate: json writes it, or refuses it as before
            pass
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def create_app(config: ProxyConfig) -> Starlette:
    """The proxy as an ASGI application (what `chatmend proxy` serves with uvicorn)."""
    state: dict[str, Any] = {}
    if config.sign_bedrock:
        state["signer"] = load_signer()  # at once: a proxy that cannot sign does not start

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        timeout = httpx2.Timeout(config.read_timeout, connect=config.connect_timeout, pool=None)
        limits = httpx2.Limits(max_connections=None, max_keepalive_connections=200)
        # trust_env=False: no proxy or netrc from the environment reaches a request meant for a fixed upstream
        async with httpx2.AsyncClient(timeout=timeout, limits=limits, trust_env=False,
                                     follow_redirects=False) as client:
            state["client"] = client
            yield

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def forward(request: Request) -> Response:
        return await _forward(request, config, state["client"], state.get("signer"))

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    routes = [StarletteRoute("/healthz", healthz, methods=["GET"]),
              StarletteRoute("/{path:path}", forward, methods=methods)]
    return Starlette(routes=routes, lifespan=lifespan)


async def _forward(request: Request, config: ProxyConfig, client: httpx2.AsyncClient,
                   signer: Signer | None) -> Response:
    path = request.url.path
    raw_path = request.scope.get("raw_path")
    wire_path = raw_path.decode("latin-1") if isinstance(raw_path, bytes) and raw_path else path
    found = route_of(path) or route_of(wire_path)  # an ARN's `/` stays encoded in the wire path only
    family = found[0] if found else family_of(path, request.headers)
    is_signed = family.name == "bedrock" and signed(request.headers)
    try:
        raw = await _read_body(request, config.max_body_bytes)
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
        if plain is None:
            _log(config, "unreadable", route=path, provider=provider, error=f"content-encoding {encoding}")
        else:
            model = route.model_of(wire_path) or route.model_of(path)
            body, extra_headers = await _repaired(plain, provider, path, config, model)
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
            return _error(family, 502, f"chatmend proxy: {exc}")
    upstream_request = client.build_request(request.method, url, headers=headers, content=raw)
    try:
        upstream = await client.send(upstream_request, stream=True)
    except httpx2.TimeoutException:
        return _error(family, 504, f"chatmend proxy: the upstream {family.name} API did not answer in time")
    except httpx2.TransportError as exc:
        return _error(family, 502, f"chatmend proxy: cannot reach the upstream {family.name} API "
                                   f"({type(exc).__name__})")
    response = StreamingResponse(_relay(upstream), status_code=upstream.status_code)
    # the upstream's headers as they came, repeated ones (set-cookie) included
    response.raw_headers = [(k, v) for k, v in upstream.headers.raw if k.lower().decode("latin-1") not in _HOP]
    response.raw_headers.extend((k.encode("latin-1"), v.encode("latin-1")) for k, v in extra_headers.items())
    return response


async def _repaired(raw: bytes, provider: str, path: str, config: ProxyConfig,
                    model: str | None = None) -> tuple[bytes, dict[str, str]]:
    """The body to forward and the headers to add, with one log line for a repaired (or unreadable) body."""
    started = time.perf_counter()
    try:
        if len(raw) > _THREAD_ABOVE:
            repaired = await anyio.to_thread.run_sync(repair_request, provider, raw, model)
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


async def _read_body(request: Request, limit: int) -> bytes:
    """The whole request body, or _TooLarge as soon as it passes `limit` (nothing more is read)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


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
    """Every header the client sent but the hop-by-hop ones, host and length (httpx sets those)."""
    out = [(k, v) for k, v in headers.items() if k.lower() not in _NOT_FORWARDED]
    if not any(k.lower() == "accept-encoding" for k, _ in out):
        out.append(("accept-encoding", "identity"))  # no encoding the client did not ask for
    return out


def _error(family: Family, status: int, message: str) -> Response:
    """An error from the proxy itself, in the provider's own error shape, saying it came from the proxy."""
    return JSONResponse(error_body(family, status, message), status_code=status,
                        headers={"x-chatmend-proxy": "1", **error_headers(family, status)})


def _log(config: ProxyConfig, event: str, **fields: Any) -> None:
    """One structured line: counts and call ids, never content, never keys."""
    if config.log_json:
        log.info(json.dumps({"event": event, **fields}, sort_keys=True))
    else:
        log.info("%s %s", event, " ".join(f"{k}={v}" for k, v in fields.items()))
