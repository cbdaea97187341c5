"""The proxy's log as a user runs `chatmend proxy` (issue #44, items 7 and 10): no key at any level, one formatter
for every line (`--log-json`: JSON lines only), one line per upstream failure, "listening" only once bound, a taken
port exit 2."""

from __future__ import annotations

import json
import os
import signal
import socket
import string
import subprocess
import sys

import httpx2
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.proxy.test_proxy_cli import CHAT_BODY, _free_port, proxy_process
from tests.proxy.test_proxy_faults import ANTHROPIC_BODY
from tests.proxy.upstream import Upstream

SECRETS = {
    "query": "qkey-7f3a9c1e5b",
    "authorization": "bearer-2d8e4f6a0c",
    "x-api-key": "anthropic-9b1c3e5d7f",
    "x-goog-api-key": "goog-4a6c8e0b2d",
    "bedrock": "bedrock-key-5e7a9c1b3d",
    "token": "proxy-token-8c0e2a4b6d",
    "wrong-token": "wrong-token-1f3b5d7a9c",
}
GEMINI = "/v1beta/models/gemini-2.5-pro:generateContent"
GEMINI_BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def _traffic(url: str) -> None:
    """Requests that carry every secret, through every path that logs: repaired, forwarded, refused, failing."""
    token = {"x-chatmend-token": SECRETS["token"]}
    with httpx2.Client(timeout=20) as http:
        assert http.post(url + GEMINI + f"?key={SECRETS['query']}&alt=json", json=GEMINI_BODY,
                         headers={**token, "x-goog-api-key": SECRETS["x-goog-api-key"]}).status_code == 200
        assert http.post(url + "/v1/messages", json=ANTHROPIC_BODY,
                         headers={**token, "x-api-key": SECRETS["x-api-key"]}).status_code == 200
        bearer = {**token, "authorization": f"Bearer {SECRETS['authorization']}"}
        assert http.post(url + "/v1/chat/completions", json=CHAT_BODY, headers=bearer).status_code == 200
        assert http.post(url + "/v1/chat/completions", json=CHAT_BODY,
                         headers={**bearer, "x-test-status": "500"}).status_code == 500
        with pytest.raises(httpx2.HTTPError), http.stream(
                "POST", url + "/v1/chat/completions", json={**CHAT_BODY, "stream": True},
                headers={**bearer, "x-test-reset": "1"}) as response:
            b"".join(response.iter_raw())
        # the bedrock upstream is down: a 502
        assert http.post(url + "/model/m/converse", json={"messages": []},
                         headers={**token, "authorization": f"Bearer {SECRETS['bedrock']}"}).status_code == 502
        assert http.post(url + GEMINI + f"?key={SECRETS['query']}", json=GEMINI_BODY,
                         headers={"x-chatmend-token": SECRETS["wrong-token"]}).status_code == 401
        assert http.post(url + "/v1/chat/completions", json=CHAT_BODY,
                         headers={**bearer, "host": "evil.example"}).status_code == 403


@pytest.mark.parametrize("level", ["debug", "info", "warning"])
@pytest.mark.parametrize("json_lines", [True, False])
def test_no_key_reaches_the_log_at_any_level(upstream: Upstream, level: str, json_lines: bool) -> None:
    dead = f"http://127.0.0.1:{_free_port()}"
    args = ["--upstream", f"openai={upstream.url}/v1", "--upstream", f"anthropic={upstream.url}",
            "--upstream", f"gemini={upstream.url}", "--upstream", f"bedrock={dead}", "--log-level", level]
    os.environ["CHATMEND_PROXY_TOKEN"] = SECRETS["token"]
    try:
        with proxy_process(*args, *(["--log-json"] if json_lines else [])) as (url, process):
            _traffic(url)
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=20)
    finally:
        del os.environ["CHATMEND_PROXY_TOKEN"]
    for secret in SECRETS.values():
        assert secret not in out and secret not in err, (secret, err)
    assert upstream.seen[0].query == f"key={SECRETS['query']}&alt=json"  # the key itself went upstream
    lines = err.splitlines()
    if json_lines:
        records = [json.loads(line) for line in lines]  # every line is JSON, uvicorn's and httpx2's too
        loggers = {r["logger"] for r in records}
        events = [r.get("event") for r in records]
    else:
        loggers = {line.split(" ")[2].rstrip(":") for line in lines if line[:4].isdigit()}
        events = [line.split(": ", 1)[1].split(" ")[0] for line in lines if line[:4].isdigit()]
    if level == "debug":
        assert "httpx2" in loggers  # its request lines (with the URL) are on, and redacted
        assert "forwarded" in events
    else:
        assert "httpx2" not in loggers and "forwarded" not in events
    if level in ("debug", "info"):
        assert "listening" in events and "repaired" in events
    else:
        assert "repaired" not in events
    for event in ("upstream_status", "upstream_broken", "upstream_error", "refused"):
        assert event in events  # warnings, shown at every level here
    assert "Traceback" not in err


def test_a_stream_broken_by_the_upstream_is_one_line_with_its_status(upstream: Upstream) -> None:
    with proxy_process("--upstream", f"openai={upstream.url}/v1") as (url, process):
        for _ in range(3):
            with pytest.raises(httpx2.HTTPError), httpx2.stream(
                    "POST", url + "/v1/chat/completions", json={**CHAT_BODY, "stream": True},
                    headers={"x-test-reset": "1"}) as response:
                b"".join(response.iter_raw())
        assert httpx2.get(url + "/healthz").status_code == 200
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    broken = [line for line in err.splitlines() if "upstream_broken" in line]
    assert len(broken) == 3 and all("status=200" in line for line in broken)
    assert "Traceback" not in err and "ASGI" not in err
    assert len(err.splitlines()) <= 3 + 6  # listening, the repairs, the breaks: nothing more


def test_an_unreachable_upstream_is_logged_with_its_502() -> None:
    dead = f"http://127.0.0.1:{_free_port()}"
    with proxy_process("--upstream", f"openai={dead}/v1", "--log-json") as (url, process):
        assert httpx2.post(url + "/v1/chat/completions", json=CHAT_BODY).status_code == 502
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    records = [json.loads(line) for line in err.splitlines()]
    failed = [r for r in records if r.get("event") == "upstream_error"]
    assert len(failed) == 1 and failed[0]["status"] == 502 and failed[0]["level"] == "warning"
    assert failed[0]["route"] == "/v1/chat/completions" and failed[0]["error"] == "ConnectError"


def test_a_taken_port_is_exit_2_and_never_says_listening() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "chatmend", "proxy", "--port", str(port)],
                                capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert f"port {port} on 127.0.0.1 is taken" in result.stderr
    assert "listening" not in result.stderr and "Traceback" not in result.stderr


def test_listening_names_the_bound_port_and_only_json_with_log_json(upstream: Upstream) -> None:
    with proxy_process("--upstream", f"openai={upstream.url}/v1", "--log-json") as (url, process):
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    records = [json.loads(line) for line in err.splitlines()]
    assert [r["url"] for r in records if r.get("event") == "listening"] == [url]
    assert f"listening on {url}" in records[0]["message"]
    assert out == ""


_SECRET = st.text(alphabet=string.ascii_letters + string.digits + "-_.~+/=", min_size=6, max_size=40)
_PLACES = [
    "HTTP Request: POST http://127.0.0.1:1/v1beta/models/m:generateContent?key={s} \"HTTP/1.1 200 OK\"",
    "HTTP Request: GET http://h/x?alt=sse&key={s}&b=1",
    "headers=[(b'x-api-key', b'{s}'), (b'host', b'h')]",
    "{{'authorization': 'Bearer {s}', 'accept': '*/*'}}",
    "x-goog-api-key: {s}",
    "Authorization: AWS4-HMAC-SHA256 Credential={s}/20260101/us-east-1/bedrock/aws4_request, Signature={s}",
    "proxy-authorization: Bearer {s}",
    "x-chatmend-token={s}",
]


@settings(max_examples=300, deadline=None)
@given(_SECRET, st.sampled_from(_PLACES), st.booleans())
def test_redact_removes_a_key_from_every_place_keys_go(secret: str, place: str, json_lines: bool) -> None:
    import logging

    from chatmend.proxy._logging import LogFormatter

    assume(secret not in place.format(s="") and secret not in "[redacted]")
    record = logging.LogRecord("httpx2", logging.DEBUG, __file__, 1, place.format(s=secret), None, None)
    line = LogFormatter(json_lines=json_lines).format(record)
    assert secret not in line
    if json_lines:
        assert json.loads(line)["logger"] == "httpx2"
