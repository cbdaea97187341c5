"""`chatmend proxy` as a user runs it: a real process, its options, its config file, SIGTERM."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from tests.proxy.test_proxy_sdks import BROKEN_CHAT
from tests.proxy.upstream import Upstream

CHAT_BODY = {"model": "gpt-4o", "messages": BROKEN_CHAT}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def proxy_process(*args: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "chatmend", "proxy", "--port", str(port), *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx2.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the proxy did not start: {process.communicate()[1]}")
            time.sleep(0.1)
        yield url, process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the workers of --workers too: they hold the pipes
        process.communicate(timeout=20)


def test_the_command_serves_and_says_where(upstream: Upstream) -> None:
    with proxy_process("--upstream", f"openai={upstream.url}/v1", "--log-json") as (url, process):
        response = httpx2.post(url + "/v1/chat/completions", json=CHAT_BODY)
        assert response.status_code == 200
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    assert process.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    assert f"listening on {url}" in err
    assert any(json.loads(line).get("event") == "repaired" for line in err.splitlines() if line.startswith("{"))
    assert upstream.seen[-1].problems == []


def test_sigterm_lets_a_stream_in_flight_finish(upstream: Upstream) -> None:
    with proxy_process("--upstream", f"openai={upstream.url}/v1", "--grace-seconds", "10") as (url, process):
        received: list[bytes] = []

        def stream() -> None:
            with httpx2.stream("POST", url + "/v1/chat/completions", json={**CHAT_BODY, "stream": True},
                               headers={"x-test-delay": "2"}, timeout=20) as response:
                received.append(b"".join(response.iter_raw()))

        client = threading.Thread(target=stream)
        client.start()
        deadline = time.monotonic() + 20
        while not upstream.seen and time.monotonic() < deadline:  # the request is at the upstream, which waits
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        client.join(20)
        process.communicate(timeout=20)
    assert received == [upstream.sent["/v1/chat/completions"]]
    assert process.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down


def test_a_config_file_and_options_over_it(upstream: Upstream, tmp_path: Path) -> None:
    config = tmp_path / "proxy.json"
    config.write_text(json.dumps({"upstreams": {"openai": upstream.url + "/v1"}, "max_body_bytes": 100}))
    with proxy_process("--config", str(config), "--max-body-bytes", "100000") as (url, _):
        assert httpx2.post(url + "/v1/chat/completions", json=CHAT_BODY).status_code == 200
    with proxy_process("--config", str(config)) as (url, _):
        assert httpx2.post(url + "/v1/chat/completions", json=CHAT_BODY).status_code == 413


def test_workers_share_the_configuration(upstream: Upstream) -> None:
    with proxy_process("--upstream", f"openai={upstream.url}/v1", "--workers", "2") as (url, process):
        for _ in range(4):
            assert httpx2.post(url + "/v1/chat/completions", json=CHAT_BODY).status_code == 200
        process.send_signal(signal.SIGTERM)  # the manager stops its workers
        process.communicate(timeout=30)
    assert len(upstream.seen) == 4 and all(s.problems == [] for s in upstream.seen)


@pytest.mark.parametrize(("args", "message"), [
    (["--upstream", "openai"], "expected NAME=URL"),
    (["--upstream", "azure=https://x"], "unknown route family 'azure'"),
    (["--upstream", "openai=ftp://x"], "must be an http(s) URL"),
    (["--chat-provider", "nope"], "unknown chat provider 'nope'"),
    (["--config", "/nonexistent/proxy.json"], "cannot read the proxy configuration"),
])
def test_bad_options_are_exit_2_with_a_clear_message(args: list[str], message: str) -> None:
    result = subprocess.run([sys.executable, "-m", "chatmend", "proxy", *args], capture_output=True, text=True,
                            timeout=30, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bad_config_file_says_which_setting(tmp_path: Path) -> None:
    config = tmp_path / "proxy.json"
    config.write_text(json.dumps({"prot": 1}))
    result = subprocess.run([sys.executable, "-m", "chatmend", "proxy", "--config", str(config)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "unknown setting 'prot'" in result.stderr and str(config) in result.stderr
