"""The proxy under faults: upstream down, slow, breaking mid-stream, answering errors; bodies too large or not
JSON; clients leaving mid-stream; many streams at once."""

from __future__ import annotations

import concurrent.futures
import gzip
import json
import logging
import socket
import time
from typing import Any

import httpx2
import pytest

from chatmend.proxy import REPAIRED_HEADER
from tests.proxy.conftest import proxy_config, running_proxy
from tests.proxy.test_proxy_sdks import BROKEN_ANTHROPIC, BROKEN_CHAT
from tests.proxy.upstream import Upstream

ANTHROPIC_BODY = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": BROKEN_ANTHROPIC}
CHAT_BODY = {"model": "gpt-4o", "messages": BROKEN_CHAT}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_every_header_the_client_sent_arrives(proxy: str, upstream: Upstream) -> None:
    headers = {"x-api-key": "k-1", "anthropic-version": "2023-06-01", "anthropic-beta": "a-1,b-2",
               "x-odd-header": "v", "user-agent": "ua/1"}
    httpx2.post(proxy + "/v1/messages?beta=true", json=ANTHROPIC_BODY, headers=headers)
    seen = upstream.seen[-1]
    assert {k: seen.headers[k] for k in headers} == headers
    assert seen.query == "beta=true"


@pytest.mark.parametrize(("family", "path", "shape"), [
    ("anthropic", "/v1/messages", lambda b: b["error"]["type"] == "api_error" and b["type"] == "error"),
    ("openai", "/v1/chat/completions", lambda b: b["error"]["type"] == "server_error"),
    ("gemini", "/v1beta/models/gemini-2.5-pro:generateContent", lambda b: b["error"]["status"] == "UNAVAILABLE"),
])
def test_an_unreachable_upstream_is_a_502_in_the_providers_shape(family: str, path: str, shape: Any) -> None:
    dead = f"http://127.0.0.1:{_free_port()}"
    with running_proxy(proxy_config_for(dead)) as url:
        response = httpx2.post(url + path, json=ANTHROPIC_BODY)
    assert response.status_code == 502
    assert shape(response.json())
    assert "chatmend proxy" in json.dumps(response.json())


def proxy_config_for(url: str) -> Any:
    from chatmend.proxy import ProxyConfig

    return ProxyConfig(upstreams={"anthropic": url, "openai": url + "/v1", "gemini": url})


def test_a_slow_upstream_is_a_504(upstream: Upstream) -> None:
    with running_proxy(proxy_config(upstream, read_timeout=0.3)) as url:
        response = httpx2.post(url + "/v1/messages", json=ANTHROPIC_BODY, headers={"x-test-delay": "1.5"})
    assert response.status_code == 504
    assert response.json()["error"]["type"] == "timeout_error"


@pytest.mark.parametrize("status", [400, 429, 500])
def test_upstream_errors_pass_through_as_they_are(proxy: str, upstream: Upstream, status: int) -> None:
    response = httpx2.post(proxy + "/v1/chat/completions", json=CHAT_BODY, headers={"x-test-status": str(status)})
    assert response.status_code == status
    assert response.content == upstream.sent["/v1/chat/completions"]


def test_a_body_over_the_limit_is_a_413_and_is_not_forwarded(upstream: Upstream) -> None:
    with running_proxy(proxy_config(upstream, max_body_bytes=1000)) as url:
        big = {**CHAT_BODY, "messages": [{"role": "user", "content": "x" * 2000}]}
        response = httpx2.post(url + "/v1/chat/completions", json=big)
        chunked = httpx2.post(url + "/v1/chat/completions", content=iter([b"{" + b" " * 1500, b"}"]))
    assert response.status_code == 413 and chunked.status_code == 413
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert upstream.seen == []


@pytest.mark.parametrize("data", [b"{not json", b'{"messages": "nope"}', b"[1, 2]", b'{"messages": [{"role": 7}]}'])
def test_an_unreadable_body_is_forwarded_unchanged(proxy: str, upstream: Upstream, data: bytes,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="chatmend.proxy"):
        response = httpx2.post(proxy + "/v1/chat/completions", content=data,
                               headers={"content-type": "application/json"})
    assert response.status_code == 200
    assert upstream.seen[-1].raw == data
    assert any("unreadable" in r.getMessage() for r in caplog.records)


def test_a_stream_broken_by_the_upstream_ends_the_clients_stream(proxy: str, upstream: Upstream) -> None:
    body = {**CHAT_BODY, "stream": True}
    with pytest.raises(httpx2.HTTPError), httpx2.stream("POST", proxy + "/v1/chat/completions", json=body,
                                                          headers={"x-test-reset": "1"}) as response:
        b"".join(response.iter_raw())
    assert httpx2.get(proxy + "/healthz").json() == {"status": "ok"}  # the proxy lives on


def test_a_client_leaving_mid_stream_closes_the_upstream_stream(proxy: str, upstream: Upstream) -> None:
    body = {**CHAT_BODY, "stream": True}
    with httpx2.stream("POST", proxy + "/v1/chat/completions", json=body, headers={"x-test-hold": "1"}) as response:
        for _ in response.iter_raw():
            break  # one chunk, then the client goes away
    deadline = time.monotonic() + 10
    while not upstream.gone and time.monotonic() < deadline:
        time.sleep(0.05)
    assert upstream.gone == ["/v1/chat/completions"]


def test_a_hundred_concurrent_streams(proxy: str, upstream: Upstream) -> None:
    body = {**ANTHROPIC_BODY, "stream": True}

    def one(i: int) -> bytes:
        with httpx2.stream("POST", proxy + "/v1/messages", json=body, headers={"x-n": str(i)}, timeout=30) as r:
            return b"".join(r.iter_raw())

    with concurrent.futures.ThreadPoolExecutor(100) as pool:
        streams = list(pool.map(one, range(100)))
    assert sorted({len(s) for s in streams}) == [len(upstream.sent["/v1/messages"])]
    assert all(s == upstream.sent["/v1/messages"] for s in streams)
    assert len(upstream.seen) == 100 and all(s.problems == [] for s in upstream.seen)


def test_dry_run_forwards_the_original_and_logs_what_it_would_change(
        upstream: Upstream, caplog: pytest.LogCaptureFixture) -> None:
    data = json.dumps(CHAT_BODY).encode()
    with caplog.at_level(logging.INFO, logger="chatmend.proxy"), \
            running_proxy(proxy_config(upstream, dry_run=True)) as url:
        response = httpx2.post(url + "/v1/chat/completions", content=data)
    assert REPAIRED_HEADER not in response.headers
    assert upstream.seen[-1].raw == data
    assert any("would_repair" in r.getMessage() and "call_1" in r.getMessage() for r in caplog.records)


def test_the_log_line_names_counts_and_ids_never_content_or_keys(
        upstream: Upstream, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="chatmend.proxy"), \
            running_proxy(proxy_config(upstream, log_json=True)) as url:
        httpx2.post(url + "/v1/chat/completions", json=CHAT_BODY, headers={"authorization": "Bearer sk-secret"})
    lines = [r.__dict__["chatmend"] for r in caplog.records if r.name == "chatmend.proxy"]
    assert lines == [{"event": "repaired", "route": "/v1/chat/completions", "provider": "openai_chat",
                      "interrupted": ["call_1"], "moved": 0, "notes": 0, "renamed": 0, "rewritten": 1,
                      "ms": lines[0]["ms"]}]
    text = caplog.text
    assert "sk-secret" not in text and "list the files" not in text


def test_the_upstream_is_fixed_by_configuration_not_by_the_request(proxy: str, upstream: Upstream) -> None:
    response = httpx2.post(proxy + "/v1/chat/completions", json=CHAT_BODY,
                           headers={"x-forwarded-host": "evil.example", "forwarded": "host=evil.example"})
    assert response.status_code == 200
    assert upstream.seen[-1].headers["host"] == upstream.url.removeprefix("http://")
    absolute = httpx2.get(proxy + "/http://evil.example/v1/models")
    # a path at the configured upstream, never a new host
    assert upstream.seen[-1].path.endswith("/http://evil.example/v1/models")
    assert upstream.seen[-1].headers["host"] == upstream.url.removeprefix("http://")
    assert absolute.status_code == 200


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "zstd"])
def test_a_compressed_body_is_read_repaired_and_sent_plain(proxy: str, upstream: Upstream, encoding: str) -> None:
    import zlib

    import zstandard

    data = json.dumps(CHAT_BODY).encode()
    packed = {"gzip": gzip.compress(data), "deflate": zlib.compress(data),
              "zstd": zstandard.ZstdCompressor().compress(data)}[encoding]
    response = httpx2.post(proxy + "/v1/chat/completions", content=packed,
                           headers={"content-encoding": encoding, "content-type": "application/json"})
    assert response.status_code == 200 and REPAIRED_HEADER in response.headers
    seen = upstream.seen[-1]
    assert "content-encoding" not in seen.headers and seen.problems == []


def test_a_valid_compressed_body_is_forwarded_as_it_came(proxy: str, upstream: Upstream) -> None:
    valid = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    packed = gzip.compress(json.dumps(valid).encode())
    httpx2.post(proxy + "/v1/chat/completions", content=packed, headers={"content-encoding": "gzip"})
    assert upstream.seen[-1].raw == packed and upstream.seen[-1].headers["content-encoding"] == "gzip"


def test_a_decompression_bomb_is_not_inflated_past_the_limit(upstream: Upstream) -> None:
    bomb = gzip.compress(b"[" + b" " * 5_000_000 + b"]")
    with running_proxy(proxy_config(upstream, max_body_bytes=100_000)) as url:
        response = httpx2.post(url + "/v1/chat/completions", content=bomb, headers={"content-encoding": "gzip"})
    assert response.status_code == 200  # forwarded as it came: the provider is the judge
    assert upstream.seen[-1].raw == bomb
