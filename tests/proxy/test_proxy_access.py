"""Who may use the proxy, and where a request may go (issue #44, items 8 and 10): the `Host` must name the proxy
on loopback (DNS rebinding), a token beyond loopback, `--sign-bedrock` signs only the Converse and InvokeModel
routes, no path leaves the upstream's base path, no header named in `Connection` is forwarded."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.proxy.conftest import proxy_config, running_proxy
from tests.proxy.test_proxy_bedrock import BROKEN, CLAUDE, _verifies
from tests.proxy.test_proxy_cli import CHAT_BODY, proxy_process
from tests.proxy.upstream import Upstream


def _raw(url: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, bytes]:
    """A request sent as it is (the path and Host unnormalised, as a browser page or curl may send them)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=20)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("content-length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}",
                                  "127.0.0.1:1", "localhost", "", "attacker.localhost.example:{port}"])
def test_a_host_that_is_not_the_proxy_is_refused(proxy: str, upstream: Upstream, host: str) -> None:
    port = urlsplit(proxy).port
    status, body = _raw(proxy, "POST", "/v1/chat/completions",
                        {"host": host.format(port=port), "content-type": "application/json"}, b"{}")
    assert status == 403 and b"does not name this proxy" in body
    assert upstream.seen == []


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}", "127.0.0.2:{port}"])
def test_the_proxys_own_loopback_names_are_served(proxy: str, upstream: Upstream, host: str) -> None:
    port = urlsplit(proxy).port
    status, _ = _raw(proxy, "POST", "/v1/chat/completions",
                     {"host": host.format(port=port), "content-type": "application/json"},
                     b'{"model":"m","messages":[{"role":"user","content":"hi"}]}')
    assert status == 200 and len(upstream.seen) == 1


@pytest.fixture
def signing_env() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                            "AWS_PROFILE")}
    os.environ.update(AWS_ACCESS_KEY_ID="AKIDPROXY", AWS_SECRET_ACCESS_KEY="proxy-secret")
    os.environ.pop("AWS_SESSION_TOKEN", None)
    os.environ.pop("AWS_PROFILE", None)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_dns_rebinding_cannot_borrow_the_signing_identity(upstream: Upstream, signing_env: None) -> None:
    with running_proxy(proxy_config(upstream, sign_bedrock=True)) as url:
        port = urlsplit(url).port
        path = "/model/" + quote(CLAUDE, safe="") + "/converse"
        status, _ = _raw(url, "POST", path, {"host": f"rebound.example:{port}"}, b'{"messages": []}')
        assert status == 403
        assert upstream.seen == []
        status, _ = _raw(url, "POST", path, {"host": f"127.0.0.1:{port}", "authorization": SIGV4},
                         json_bytes(BROKEN))
    assert status == 200
    from botocore.credentials import Credentials

    assert _verifies(upstream.seen[-1], upstream.url, Credentials("AKIDPROXY", "proxy-secret"))


SIGV4 = "AWS4-HMAC-SHA256 Credential=K/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=0"


def json_bytes(value: object) -> bytes:
    import json

    return json.dumps(value).encode()


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/model/m/async-invoke"), ("GET", "/model/m/converse"), ("POST", "/guardrail/g/version/1/apply"),
    ("POST", "/model/m/count-tokens"), ("GET", "/foundation-models"), ("POST", "/model/m/converse/x"),
])
def test_sign_bedrock_signs_only_converse_and_invoke(upstream: Upstream, signing_env: None, method: str,
                                                     path: str) -> None:
    with running_proxy(proxy_config(upstream, sign_bedrock=True)) as url:
        response = httpx2.request(method, url + path, content=b"{}", headers={"authorization": SIGV4})
        assert response.status_code == 403 and "signs only Converse" in response.json()["message"]
        assert response.headers["x-amzn-errortype"]
        for route in ("converse", "converse-stream", "invoke", "invoke-with-response-stream"):
            assert httpx2.post(url + f"/model/m/{route}", content=b"{}",
                               headers={"authorization": SIGV4}).status_code == 200
    signed = [s for s in upstream.seen]
    assert [s.path for s in signed] == [f"/model/m/{r}" for r in ("converse", "converse-stream", "invoke",
                                                                 "invoke-with-response-stream")]
    assert all("/bedrock/aws4_request" in s.headers["authorization"] for s in signed)


def test_a_host_beyond_loopback_needs_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CHATMEND_PROXY_TOKEN"}
    result = subprocess.run([sys.executable, "-m", "chatmend", "proxy", "--host", "0.0.0.0", "--port", "1"],
                            capture_output=True, text=True, timeout=30, env=env)
    assert result.returncode == 2
    assert "set a token" in result.stderr and "--token" in result.stderr and "listening" not in result.stderr


def test_with_a_token_every_client_must_send_it(upstream: Upstream) -> None:
    token = "t0k3n-for-the-test"
    os.environ["CHATMEND_PROXY_TOKEN"] = token
    try:
        with proxy_process("--host", "0.0.0.0", "--upstream", f"openai={upstream.url}/v1") as (url, _):
            endpoint = url + "/v1/chat/completions"
            assert httpx2.post(endpoint, json=CHAT_BODY).status_code == 401
            assert httpx2.post(endpoint, json=CHAT_BODY, headers={"x-chatmend-token": "nope"}).status_code == 401
            assert httpx2.post(endpoint, json=CHAT_BODY,
                               headers={"proxy-authorization": "Basic " + token}).status_code == 401
            assert upstream.seen == []
            ok = httpx2.post(endpoint, json=CHAT_BODY, headers={"x-chatmend-token": token})
            assert ok.status_code == 200
            assert httpx2.post(endpoint, json=CHAT_BODY,
                               headers={"proxy-authorization": f"Bearer {token}"}).status_code == 200
            assert httpx2.get(url + "/healthz").status_code == 200  # a health check needs no token
    finally:
        del os.environ["CHATMEND_PROXY_TOKEN"]
    assert len(upstream.seen) == 2
    assert all("x-chatmend-token" not in s.headers and "proxy-authorization" not in s.headers
               for s in upstream.seen)  # the token stays at the proxy


@pytest.mark.parametrize("path", [
    "/v1/../admin", "/v1/%2e%2e/admin", "/v1/%2E%2E/%2e%2e/admin", "/v1/chat/./completions", "/v1/%252e%252e/x",
    "/model/..%2f..%2fadmin/converse", "/v1/..\\admin", "/v1beta/models/%2e%2e/x:generateContent",
])
def test_dot_segments_never_leave_the_upstream_base(upstream: Upstream, path: str) -> None:
    config = proxy_config(upstream, upstreams={"openai": upstream.url + "/base/v1", "anthropic": upstream.url + "/a",
                                               "gemini": upstream.url + "/g", "bedrock": upstream.url + "/b"})
    with running_proxy(config) as url:
        port = urlsplit(url).port
        status, body = _raw(url, "POST", path, {"host": f"127.0.0.1:{port}"}, b"{}")
    assert status == 400 and b"dot segment" in body
    assert upstream.seen == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["v1", "chat", "..", ".", "%2e", "%2E%2e", "%2e.", "a%2fb", "x", "%252e%252e", ""]),
                max_size=6))
def test_whatever_the_path_the_upstream_sees_it_under_its_base(proxy_with_base: tuple[str, Upstream],
                                                               segments: list[str]) -> None:
    url, upstream = proxy_with_base
    before = len(upstream.seen)
    port = urlsplit(url).port
    _raw(url, "GET", "/v1/" + "/".join(segments), {"host": f"127.0.0.1:{port}"})
    for seen in upstream.seen[before:]:
        assert seen.path.startswith("/base/v1/") or seen.path == "/base/v1"
        assert ".." not in seen.path.split("/") and "%2e" not in seen.path.lower()


@pytest.fixture(scope="module")
def proxy_with_base() -> Iterator[tuple[str, Upstream]]:
    from tests.proxy.upstream import fake_upstream

    with fake_upstream() as upstream, \
            running_proxy(proxy_config(upstream, upstreams={"openai": upstream.url + "/base/v1"})) as url:
        yield url, upstream


def test_headers_named_in_connection_are_not_forwarded(proxy: str, upstream: Upstream) -> None:
    port = urlsplit(proxy).port
    status, _ = _raw(proxy, "POST", "/v1/chat/completions",
                     {"host": f"127.0.0.1:{port}", "connection": "keep-alive, X-Hop-Secret, x-other",
                      "x-hop-secret": "s", "x-other": "o", "x-kept": "k"}, json_bytes(CHAT_BODY))
    assert status == 200
    seen = upstream.seen[-1].headers
    assert "x-hop-secret" not in seen and "x-other" not in seen and seen["x-kept"] == "k"


def test_headers_the_upstream_names_in_connection_are_not_relayed(proxy: str, upstream: Upstream) -> None:
    response = httpx2.post(proxy + "/v1/chat/completions", json=CHAT_BODY, headers={"x-test-hop": "1"})
    assert response.status_code == 200
    assert "x-up-hop" not in response.headers and response.headers["x-upstream"] == "fake"
