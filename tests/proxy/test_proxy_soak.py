"""A short, bounded soak of the proxy (the 10-minute one is `bench/proxy_soak.py`): every route family, streamed and
not, broken and valid, some streams left mid-way, from several connections at once, in two equal rounds. Nothing
may pile up between the rounds: open file descriptors (sockets) and threads come back to what the first round
left, every broken body arrives repaired, every client gets the upstream's bytes."""

from __future__ import annotations

import concurrent.futures
import json
import os
import threading
import time
from typing import Any

import httpx2

from tests.proxy.test_proxy_bedrock import BROKEN as BROKEN_BEDROCK
from tests.proxy.test_proxy_sdks import BROKEN_ANTHROPIC, BROKEN_CHAT, BROKEN_GEMINI, BROKEN_RESPONSES
from tests.proxy.upstream import Upstream, _answer

_GEMINI = "/v1beta/models/gemini-2.5-pro"
_BEDROCK = "/model/us.anthropic.claude-sonnet-4-5%3A0"
PLAN: list[tuple[str, dict[str, Any], bool]] = [
    ("/v1/messages", {"model": "m", "max_tokens": 10, "messages": BROKEN_ANTHROPIC}, False),
    ("/v1/messages", {"model": "m", "max_tokens": 10, "messages": BROKEN_ANTHROPIC, "stream": True}, True),
    ("/v1/chat/completions", {"model": "m", "messages": BROKEN_CHAT}, False),
    ("/v1/chat/completions", {"model": "m", "messages": BROKEN_CHAT, "stream": True}, True),
    ("/v1/responses", {"model": "m", "input": BROKEN_RESPONSES}, False),
    ("/v1/responses", {"model": "m", "input": BROKEN_RESPONSES, "stream": True}, True),
    (_GEMINI + ":generateContent", {"contents": BROKEN_GEMINI}, False),
    (_GEMINI + ":streamGenerateContent", {"contents": BROKEN_GEMINI}, True),
    (_BEDROCK + "/converse", BROKEN_BEDROCK, False),
    (_BEDROCK + "/converse-stream", BROKEN_BEDROCK, True),
]


def _expected(path: str, body: dict[str, Any]) -> bytes:
    """The bytes the fake upstream answers a path and body with."""
    answer, events = _answer(path, body)
    return b"".join(events) if events is not None else json.dumps(answer).encode()


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _round(proxy: str, upstream: Upstream, requests: int, connections: int) -> int:
    """`requests` requests over `connections` keep-alive clients; every fifth stream is left after one chunk.
    Returns how many were left."""
    left = [0]
    lock = threading.Lock()

    def worker(k: int) -> None:
        with httpx2.Client(timeout=30) as client:
            for i in range(k, requests, connections):
                path, body, streamed = PLAN[i % len(PLAN)]
                if not streamed:
                    response = client.post(proxy + path, json=body)
                    assert response.status_code == 200 and response.content == _expected(path, body)
                    continue
                leave = i % 5 == 0
                with client.stream("POST", proxy + path, json=body,
                                   headers={"x-test-hold": "1"} if leave else {}) as response:
                    assert response.status_code == 200
                    chunks = []
                    for chunk in response.iter_raw():
                        chunks.append(chunk)
                        if leave:
                            break  # the client goes away mid-stream
                    if leave:
                        with lock:
                            left[0] += 1
                    else:
                        assert b"".join(chunks) == _expected(path, body)

    with concurrent.futures.ThreadPoolExecutor(connections) as pool:
        list(pool.map(worker, range(connections)))
    return left[0]


def _settled(upstream: Upstream, gone: int) -> None:
    """Wait until the upstream saw every left stream end (the proxy closed it), at most 10 s."""
    deadline = time.monotonic() + 10
    while len(upstream.gone) < gone and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(upstream.gone) == gone
    time.sleep(0.2)  # the fake upstream's handler threads end


def test_two_rounds_of_mixed_load_leave_nothing_behind(proxy: str, upstream: Upstream) -> None:
    left = _round(proxy, upstream, 60, 6)
    _settled(upstream, left)
    fds, threads = _fds(), threading.active_count()
    left += _round(proxy, upstream, 60, 6)
    _settled(upstream, left)
    assert _fds() <= fds + 2, "sockets pile up between equal rounds"
    assert threading.active_count() <= threads + 1
    assert len(upstream.seen) == 120
    assert all(s.problems == [] for s in upstream.seen), [s.problems for s in upstream.seen if s.problems][:1]
