"""The proxy under load (issue #44, item 9): a slow repair does not stall the other clients, and the request bodies
in flight are bounded (a 503 with Retry-After past `--max-inflight-bytes`, in the provider's error shape)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2

from tests.proxy.test_proxy_cli import CHAT_BODY, proxy_process
from tests.proxy.upstream import Upstream

GEMINI = "/v1beta/models/gemini-2.5-pro:generateContent"


def gemini_body(rounds: int) -> bytes:
    """A Gemini body of `rounds` calls with their results, every tenth answered only after the user's words
    typed while it ran (a result to move, a call to answer: repaired by the neutral route, slow)."""
    contents: list[dict[str, Any]] = []
    for k in range(rounds):
        contents.append({"role": "user", "parts": [{"text": f"step {k}: read file_{k}.py"}]})
        contents.append({"role": "model", "parts": [{"functionCall": {"name": "read", "args": {"path": f"{k}"}}}]})
        if k % 10 == 9:
            contents.append({"role": "user", "parts": [{"text": "meanwhile: hurry"}]})
        contents.append({"role": "user", "parts": [
            {"functionResponse": {"name": "read", "response": {"output": f"def f{k}(): return {k}"}}}]})
    return json.dumps({"contents": contents}, separators=(",", ":")).encode()


@contextmanager
def upstream_process() -> Iterator[str]:
    """The fake upstream in a process of its own (answering at once, judging nothing); yields its URL."""
    process = subprocess.Popen([sys.executable, "-m", "tests.proxy.upstream"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.kill()
        process.communicate(timeout=10)


def test_a_slow_repair_does_not_stall_a_small_client() -> None:
    big = gemini_body(700)  # about 2,000 contents, well under 256 KiB: repaired on the loop before
    small = json.dumps(CHAT_BODY).encode()
    headers = {"content-type": "application/json"}
    with upstream_process() as up, \
            proxy_process("--upstream", f"openai={up}/v1", "--upstream", f"gemini={up}",
                          "--log-level", "warning") as (url, _):  # no line a request: nothing reads its pipe here
        stop = threading.Event()
        big_times: list[float] = []

        def load() -> None:
            with httpx2.Client(timeout=60) as http:
                while not stop.is_set():
                    started = time.perf_counter()
                    assert http.post(url + GEMINI, content=big, headers=headers).status_code == 200
                    big_times.append(time.perf_counter() - started)

        threads = [threading.Thread(target=load) for _ in range(2)]
        for t in threads:
            t.start()
        small_times = []
        try:
            with httpx2.Client(timeout=60) as http:
                time.sleep(0.5)
                for _ in range(60):
                    started = time.perf_counter()
                    assert http.post(url + "/v1/chat/completions", content=small, headers=headers).status_code == 200
                    small_times.append(time.perf_counter() - started)
                    time.sleep(0.01)
        finally:
            stop.set()
            for t in threads:
                t.join()
    big_p50, small_p50 = statistics.median(big_times), statistics.median(small_times)
    print(f"big p50 {big_p50 * 1000:.1f} ms, small p50 {small_p50 * 1000:.1f} ms")
    # on the loop, a small request waited for the repair in progress: about half a big one's time at the median
    assert small_p50 < big_p50 / 4, (small_p50, big_p50)


def test_bodies_past_the_inflight_limit_get_a_503_to_retry(upstream: Upstream) -> None:
    body = json.dumps({**CHAT_BODY, "padding": "x" * 60_000}).encode()
    with proxy_process("--upstream", f"openai={upstream.url}/v1", "--max-inflight-bytes", "100000") as (url, _):
        first: list[httpx2.Response] = []
        held = threading.Thread(target=lambda: first.append(httpx2.post(
            url + "/v1/chat/completions", content=body, headers={"x-test-delay": "1.5"}, timeout=30)))
        held.start()
        deadline = time.monotonic() + 10
        while not upstream.seen and time.monotonic() < deadline:  # the first is at the upstream, which waits
            time.sleep(0.02)
        busy = httpx2.post(url + "/v1/chat/completions", content=body, timeout=30)
        small = httpx2.post(url + "/v1/chat/completions", json=CHAT_BODY, timeout=30)  # fits beside it
        held.join()
        after = httpx2.post(url + "/v1/chat/completions", content=body, timeout=30)
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    assert busy.json()["error"]["type"] == "server_error" and "--max-inflight-bytes" in busy.json()["error"]["message"]
    assert small.status_code == 200 and first[0].status_code == 200 and after.status_code == 200
    assert len(upstream.seen) == 3  # the refused body never reached the upstream


def test_a_compressed_body_counts_at_its_decoded_size(upstream: Upstream) -> None:
    import gzip

    packed = gzip.compress(json.dumps({**CHAT_BODY, "padding": " " * 200_000}).encode())
    assert len(packed) < 10_000
    with proxy_process("--upstream", f"openai={upstream.url}/v1", "--max-inflight-bytes", "150000") as (url, _):
        first: list[httpx2.Response] = []
        held = threading.Thread(target=lambda: first.append(httpx2.post(
            url + "/v1/chat/completions", json=CHAT_BODY, headers={"x-test-delay": "1.5"}, timeout=30)))
        held.start()
        deadline = time.monotonic() + 10
        while not upstream.seen and time.monotonic() < deadline:
            time.sleep(0.02)
        busy = httpx2.post(url + "/v1/chat/completions", content=packed, headers={"content-encoding": "gzip"})
        held.join()
        alone = httpx2.post(url + "/v1/chat/completions", content=packed, headers={"content-encoding": "gzip"})
    assert busy.status_code == 503 and first[0].status_code == 200
    assert alone.status_code == 200  # one body alone always goes, whatever its size under --max-body-bytes
