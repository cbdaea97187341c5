"""The proxy's soak (issue #23): memory over a long run of every route, streamed and not, broken and valid, with
clients leaving streams half-read.

    python bench/proxy_soak.py                          # 10 minutes, 16 connections
    python bench/proxy_soak.py --seconds 60 --connections 8

Three processes on 127.0.0.1, as `bench/proxy.py` starts them: its fake upstream (answers at once; streams 21
events 5 ms apart), `chatmend proxy` in front of it for every route family, and this client (httpx2, one
keep-alive client per connection thread). Each thread sends, round and round: Anthropic Messages, OpenAI Chat and
Responses, Gemini and Bedrock Converse bodies of 300 messages with every tenth call unanswered (the proxy repairs
each) and the same valid, every one also streamed; one stream in five is left after its first chunk (the client
goes away, the proxy must close the upstream stream). The proxy's RSS (`/proc/PID/status`) is read each second.

Target (issue #23): memory flat over the soak, within 10% after warm-up. Warm-up is the first tenth of the run
(at least 30 s); "growth" compares the median RSS of the last tenth with that of the first tenth after warm-up,
"peak" the highest sample after warm-up with that same first window.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proxy import _rss_kb, processes, route_body  # bench/ is not a package

N = 300


def anthropic(broken: bool) -> dict[str, Any]:
    return route_body("anthropic", N, broken)


def chat(broken: bool) -> dict[str, Any]:
    return route_body("chat", N, broken)


def responses(broken: bool) -> dict[str, Any]:
    return route_body("responses", N, broken)


def gemini(broken: bool) -> dict[str, Any]:
    return route_body("gemini", N, broken)


def bedrock(broken: bool) -> dict[str, Any]:
    return route_body("bedrock", N, broken)


def requests() -> list[tuple[str, bytes, bool, dict[str, str]]]:
    """(path, body, streamed, headers) of every request of a round."""
    out = []
    for broken in (True, False):
        for streamed in (False, True):
            a, c, r = anthropic(broken), chat(broken), responses(broken)
            if streamed:
                a, c, r = {**a, "stream": True}, {**c, "stream": True}, {**r, "stream": True}
            g_path = "/v1beta/models/gemini-2.5-pro:" + ("streamGenerateContent?alt=sse" if streamed
                                                         else "generateContent")
            b_path = "/model/us.anthropic.claude-sonnet-4-5%3A0/" + ("converse-stream" if streamed else "converse")
            for path, body, headers in (
                    ("/v1/messages", a, {"anthropic-version": "2023-06-01", "x-api-key": "k"}),
                    ("/v1/chat/completions", c, {"authorization": "Bearer k"}),
                    ("/v1/responses", r, {"authorization": "Bearer k"}),
                    (g_path, gemini(broken), {"x-goog-api-key": "k"}),
                    (b_path, bedrock(broken), {"authorization": "Bearer k"})):
                data = json.dumps(body, separators=(",", ":")).encode()
                out.append((path, data, streamed, {"content-type": "application/json", **headers}))
    return out


def soak(proxy: str, pid: int, seconds: float, connections: int) -> dict[str, Any]:
    plan = requests()
    stop = time.monotonic() + seconds
    counts = {"requests": 0, "repaired": 0, "left_mid_stream": 0, "failed": 0}
    lock = threading.Lock()

    def load(offset: int) -> None:
        with httpx2.Client(timeout=120) as client:
            i = offset
            while time.monotonic() < stop:
                path, data, streamed, headers = plan[i % len(plan)]
                i += 1
                repaired = leave = failed = False
                try:
                    if streamed:
                        leave = i % 5 == 0
                        with client.stream("POST", proxy + path, content=data, headers=headers) as response:
                            repaired = "chatmend-repaired" in response.headers
                            failed = response.status_code != 200
                            for _ in response.iter_raw():
                                if leave:
                                    break  # the client goes away mid-stream
                    else:
                        response = client.post(proxy + path, content=data, headers=headers)
                        repaired = "chatmend-repaired" in response.headers
                        failed = response.status_code != 200
                except httpx2.HTTPError:
                    failed = True
                with lock:
                    counts["requests"] += 1
                    counts["repaired"] += repaired
                    counts["left_mid_stream"] += leave
                    counts["failed"] += failed

    threads = [threading.Thread(target=load, args=(k * 7,)) for k in range(connections)]
    started = time.monotonic()
    for t in threads:
        t.start()
    samples: list[tuple[float, int]] = []
    while time.monotonic() < stop:
        samples.append((time.monotonic() - started, _rss_kb(pid)))
        time.sleep(1)
    for t in threads:
        t.join()
    warm = max(30.0, seconds / 10)
    settled = [kb for at, kb in samples if at >= warm] or [kb for _, kb in samples]
    window = max(1, len(settled) // 10)
    first, last = statistics.median(settled[:window]), statistics.median(settled[-window:])
    row = {"seconds": seconds, "connections": connections, **counts,
           "requests_per_s": round(counts["requests"] / seconds, 1),
           "rss_mb_start": round(samples[0][1] / 1024, 1), "rss_mb_after_warmup": round(first / 1024, 1),
           "rss_mb_peak": round(max(settled) / 1024, 1), "rss_mb_end": round(last / 1024, 1),
           "growth": round(last / first - 1, 3), "peak_over_first": round(max(settled) / first - 1, 3)}
    print(json.dumps(row), flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600, help="how long (default 600: the issue's 10 minutes)")
    parser.add_argument("--connections", type=int, default=16, help="client threads, each its own connection")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores", flush=True)
    with processes(every_family=True) as (_, proxy, pid):
        row = soak(proxy, pid, args.seconds, args.connections)
    ok = row["failed"] == 0 and row["growth"] <= 0.10
    print(f"target: memory within 10% after warm-up: growth {row['growth']:.1%}, peak {row['peak_over_first']:.1%} "
          f"over the first window; {row['failed']} failed -> {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
