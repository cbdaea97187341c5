"""What `chatmend proxy` adds: latency over a direct call, 100 concurrent streams, memory over a soak.

    python bench/proxy.py                      # latency of every route, mixed load, concurrency (a few minutes)
    python bench/proxy.py --soak-seconds 600   # and a 10-minute soak under load

Three processes, all on 127.0.0.1: a fake upstream (standard library; reads the body, answers a fixed reply or a
stream), the proxy (`chatmend proxy`, as a user starts it), and this client (httpx2, keep-alive). For each body
(10, 1,000 and 10,000 OpenAI Chat messages, valid and broken: calls without results), requests alternate between
the upstream directly and through the proxy, so both see the same machine load; the figures are percentiles of
each and the difference of the medians. Then every route (Chat, Anthropic, Responses, Gemini, Bedrock Converse) at
10 and 1,000 messages, valid and broken, the same way; then a mixed load: one client sends broken 1,000-message
Gemini bodies back to back while another sends small Chat bodies (its added p50 is the target: <= 5 ms, issue #44).
Targets (issue #23): added p50 at most 5 ms at 1,000 messages and at most
10% of a real provider's time to answer 10,000 messages (the fake answers at once, so its direct time is not that
denominator: the added time is reported as it is); memory flat over the soak (within 10% after warm-up).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2

REPLY = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}]}).encode()
STREAM = [b'data: {"choices":[{"index":0,"delta":{"content":"do"}}]}\n\n'] * 20 + [b"data: [DONE]\n\n"]


class _Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else headers and body go in two segments and a delayed ACK adds ~40 ms

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if b'"stream":true' in body or b'"stream": true' in body or self.path.endswith("converse-stream") or \
                ":streamGenerateContent" in self.path:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for event in STREAM:
                    self.wfile.write(event)
                    self.wfile.flush()
                    time.sleep(0.005)  # a model emitting tokens
            except OSError:  # the client left: the proxy closed this stream, as it must
                pass
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(REPLY)))
        self.end_headers()
        self.wfile.write(REPLY)


class _Server(ThreadingHTTPServer):
    request_queue_size = 512
    daemon_threads = True


def serve_upstream() -> None:
    """The fake upstream's process: prints its port, serves until killed."""
    server = _Server(("127.0.0.1", 0), _Upstream)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def processes(every_family: bool = False) -> Iterator[tuple[str, str, int]]:
    """The upstream and the proxy in front of it (for the openai family, or `every_family`); yields (upstream
    base, proxy base, proxy pid)."""
    upstream = subprocess.Popen([sys.executable, __file__, "--serve-upstream"], stdout=subprocess.PIPE, text=True)
    assert upstream.stdout is not None
    upstream_url = f"http://127.0.0.1:{upstream.stdout.readline().strip()}"
    port = _free_port()
    chatmend = Path(sys.executable).with_name("chatmend")
    families = [f"openai={upstream_url}/v1"]
    if every_family:
        families += [f"{name}={upstream_url}" for name in ("anthropic", "gemini", "bedrock")]
    upstreams = [arg for family in families for arg in ("--upstream", family)]
    proxy = subprocess.Popen([str(chatmend), "proxy", "--port", str(port), *upstreams], stderr=subprocess.DEVNULL)
    proxy_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx2.get(proxy_url + "/healthz", timeout=1)
            break
        except httpx2.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    try:
        yield upstream_url, proxy_url, proxy.pid
    finally:
        for p in (proxy, upstream):
            p.send_signal(signal.SIGTERM)
            p.wait(30)


def chat_body(n: int, *, broken: bool) -> bytes:
    """A Chat body of about `n` messages: tool rounds of a user turn, a call and its result; broken: every tenth
    call has no result (interrupted), so repair has something to do all along the history."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    k = 0
    while len(messages) < n:
        messages.append({"role": "user", "content": f"step {k}: look at file_{k}.py and tell me what it does"})
        call_id = f"call_{k:06d}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": call_id, "type": "function", "function": {"name": "read_file", "arguments": json.dumps(
                {"path": f"src/file_{k}.py"})}}]})
        if not (broken and k % 10 == 9):
            messages.append({"role": "tool", "tool_call_id": call_id, "content": f"def f{k}():\n    return {k}\n"})
        k += 1
    return json.dumps({"model": "gpt-4o", "messages": messages[:n]}, separators=(",", ":")).encode()


def _rounds(n: int, broken: bool) -> list[tuple[int, bool]]:
    """The rounds of a history of about `n` messages (a user turn, a call, its result), with whether each call
    keeps its result (broken: every tenth does not)."""
    return [(k, not (broken and k % 10 == 9)) for k in range(max(1, n // 3))]


def route_body(route: str, n: int, broken: bool) -> dict[str, Any]:
    """A body of about `n` messages for one route: `chat`, `anthropic`, `responses`, `gemini`, `bedrock`."""
    rounds = _rounds(n, broken)
    if route == "chat":
        chat: list[dict[str, Any]] = []
        for k, answered in rounds:
            chat.append({"role": "user", "content": f"step {k}: read file_{k}.py"})
            chat.append({"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{k:06d}", "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"file_{k}.py"})}}]})
            if answered:
                chat.append({"role": "tool", "tool_call_id": f"call_{k:06d}", "content": f"def f{k}(): return {k}"})
        return {"model": "gpt-4o", "messages": chat}
    if route == "anthropic":
        messages: list[dict[str, Any]] = []
        for k, answered in rounds:
            messages.append({"role": "user", "content": f"step {k}: read file_{k}.py"})
            messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k:06d}",
                                                                "name": "read_file", "input": {"path": f"{k}.py"}}]})
            if answered:
                messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{k:06d}", "content": f"def f{k}(): return {k}"}]})
        messages.append({"role": "user", "content": "go on"})
        return {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": messages}
    if route == "responses":
        items: list[dict[str, Any]] = []
        for k, answered in rounds:
            items.append({"role": "user", "content": f"step {k}: read file_{k}.py"})
            items.append({"type": "function_call", "call_id": f"call_{k:06d}", "name": "read_file",
                          "arguments": json.dumps({"path": f"file_{k}.py"})})
            if answered:
                items.append({"type": "function_call_output", "call_id": f"call_{k:06d}",
                              "output": f"def f{k}(): return {k}"})
        return {"model": "gpt-4o", "input": items}
    if route == "gemini":
        contents: list[dict[str, Any]] = []
        for k, answered in rounds:
            contents.append({"role": "user", "parts": [{"text": f"step {k}: read file_{k}.py"}]})
            contents.append({"role": "model", "parts": [
                {"functionCall": {"name": "read_file", "args": {"path": f"file_{k}.py"}}}]})
            if answered:
                contents.append({"role": "user", "parts": [{"functionResponse": {
                    "name": "read_file", "response": {"output": f"def f{k}(): return {k}"}}}]})
        return {"contents": contents}
    turns: list[dict[str, Any]] = []
    for k, answered in rounds:
        text = {"text": f"step {k}: read file_{k}.py"}
        if turns and turns[-1]["role"] == "user":
            turns[-1]["content"].append(text)  # strict alternation: the words join the results' turn
        else:
            turns.append({"role": "user", "content": [text]})
        turns.append({"role": "assistant", "content": [
            {"toolUse": {"toolUseId": f"tooluse_{k:06d}", "name": "read_file", "input": {"path": f"file_{k}.py"}}}]})
        if answered:
            turns.append({"role": "user", "content": [{"toolResult": {
                "toolUseId": f"tooluse_{k:06d}", "content": [{"text": f"def f{k}(): return {k}"}]}}]})
    if turns[-1]["role"] == "user":
        turns[-1]["content"].append({"text": "go on"})  # strict alternation, as above
    else:
        turns.append({"role": "user", "content": [{"text": "go on"}]})
    return {"messages": turns, "toolConfig": {"tools": [{"toolSpec": {
        "name": "read_file", "inputSchema": {"json": {"type": "object"}}}}]}}


ROUTES = {
    "chat": ("/v1/chat/completions", {"authorization": "Bearer k"}),
    "anthropic": ("/v1/messages", {"anthropic-version": "2023-06-01", "x-api-key": "k"}),
    "responses": ("/v1/responses", {"authorization": "Bearer k"}),
    "gemini": ("/v1beta/models/gemini-2.5-pro:generateContent", {"x-goog-api-key": "k"}),
    "bedrock": ("/model/us.anthropic.claude-sonnet-4-5%3A0/converse", {"authorization": "Bearer k"}),
}
"""Each route's path (its upstream path too: the fake upstream's OpenAI base ends in `/v1`) and its key header."""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency(upstream: str, proxy: str, rounds: int) -> list[dict[str, Any]]:
    rows = []
    headers = {"content-type": "application/json", "authorization": "Bearer k"}
    with httpx2.Client(timeout=120) as client:
        for n in (10, 1_000, 10_000):
            for broken in (False, True):
                body = chat_body(n, broken=broken)
                direct: list[float] = []
                through: list[float] = []
                for _ in range(3):  # warm-up: connections, caches
                    client.post(upstream + "/v1/chat/completions", content=body, headers=headers)
                    client.post(proxy + "/v1/chat/completions", content=body, headers=headers)
                for _ in range(rounds):
                    for target, times in ((upstream, direct), (proxy, through)):
                        start = time.perf_counter()
                        response = client.post(target + "/v1/chat/completions", content=body, headers=headers)
                        times.append((time.perf_counter() - start) * 1000)
                        assert response.status_code == 200
                d50, p50 = statistics.median(direct), statistics.median(through)
                rows.append({"messages": n, "broken": broken, "bytes": len(body),
                             "direct_p50_ms": round(d50, 2), "direct_p99_ms": round(_percentile(direct, 0.99), 2),
                             "proxy_p50_ms": round(p50, 2), "proxy_p99_ms": round(_percentile(through, 0.99), 2),
                             "added_p50_ms": round(p50 - d50, 2), "added_share": round((p50 - d50) / d50, 3)})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def _paired(client: httpx2.Client, upstream: str, proxy: str, path: str, body: bytes, headers: dict[str, str],
            rounds: int) -> tuple[list[float], list[float]]:
    """Times (ms) of `rounds` requests straight to the upstream and through the proxy, alternating."""
    direct: list[float] = []
    through: list[float] = []
    for _ in range(3):  # warm-up: connections, caches
        client.post(upstream + path, content=body, headers=headers)
        client.post(proxy + path, content=body, headers=headers)
    for _ in range(rounds):
        for target, times in ((upstream, direct), (proxy, through)):
            start = time.perf_counter()
            response = client.post(target + path, content=body, headers=headers)
            times.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200, response.text[:300]
    return direct, through


def every_route(upstream: str, proxy: str, rounds: int) -> list[dict[str, Any]]:
    """Added p50 and p99 of every route, valid and broken, at 10 and 1,000 messages."""
    rows = []
    with httpx2.Client(timeout=120) as client:
        for route, (path, key) in ROUTES.items():
            for n in (10, 1_000):
                for broken in (False, True):
                    body = json.dumps(route_body(route, n, broken), separators=(",", ":")).encode()
                    headers = {"content-type": "application/json", **key}
                    direct, through = _paired(client, upstream, proxy, path, body, headers, rounds)
                    d50, p50 = statistics.median(direct), statistics.median(through)
                    d99, p99 = _percentile(direct, 0.99), _percentile(through, 0.99)
                    rows.append({"route": route, "messages": n, "broken": broken, "bytes": len(body),
                                 "direct_p50_ms": round(d50, 2), "proxy_p50_ms": round(p50, 2),
                                 "added_p50_ms": round(p50 - d50, 2), "added_p99_ms": round(p99 - d99, 2)})
                    print(json.dumps(rows[-1]), flush=True)
    return rows


def mixed_load(upstream: str, proxy: str, seconds: float) -> dict[str, Any]:
    """One client sends broken 1,000-message Gemini bodies back to back while another sends small Chat bodies
    (10 messages, broken): the small client's added p50 and p99 under that load."""
    big = json.dumps(route_body("gemini", 1_000, True), separators=(",", ":")).encode()
    small = json.dumps(route_body("chat", 10, True), separators=(",", ":")).encode()
    big_path, big_key = ROUTES["gemini"]
    small_path, small_key = ROUTES["chat"]
    stop = threading.Event()
    big_times: list[float] = []

    def load() -> None:
        with httpx2.Client(timeout=120) as client:
            while not stop.is_set():
                start = time.perf_counter()
                client.post(proxy + big_path, content=big, headers={"content-type": "application/json", **big_key})
                big_times.append((time.perf_counter() - start) * 1000)

    heavy = threading.Thread(target=load)
    heavy.start()
    direct: list[float] = []
    through: list[float] = []
    try:
        with httpx2.Client(timeout=120) as client:
            headers = {"content-type": "application/json", **small_key}
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                d, t = _paired(client, upstream, proxy, small_path, small, headers, 10)
                direct.extend(d)
                through.extend(t)
                time.sleep(0.003)
    finally:
        stop.set()
        heavy.join()
    d50, p50 = statistics.median(direct), statistics.median(through)
    row = {"mixed": "gemini 1,000 broken back to back + chat 10 broken", "small_requests": len(through),
           "big_requests": len(big_times), "big_p50_ms": round(statistics.median(big_times), 2),
           "small_direct_p50_ms": round(d50, 2), "small_proxy_p50_ms": round(p50, 2),
           "small_added_p50_ms": round(p50 - d50, 2),
           "small_added_p99_ms": round(_percentile(through, 0.99) - _percentile(direct, 0.99), 2)}
    print(json.dumps(row), flush=True)
    return row


def concurrency(upstream: str, proxy: str, streams: int = 100) -> dict[str, Any]:
    body = json.loads(chat_body(100, broken=True))
    body["stream"] = True
    data = json.dumps(body).encode()

    def run(base: str) -> float:
        def one(_: int) -> int:
            with httpx2.stream("POST", base + "/v1/chat/completions", content=data, timeout=120,
                               headers={"content-type": "application/json"}) as response:
                return len(b"".join(response.iter_raw()))

        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(streams) as pool:
            sizes = list(pool.map(one, range(streams)))
        assert len(set(sizes)) == 1, sizes
        return time.perf_counter() - start

    run(proxy)  # warm-up
    direct, through = run(upstream), run(proxy)
    row = {"streams": streams, "direct_s": round(direct, 3), "proxy_s": round(through, 3),
           "proxy_streams_per_s": round(streams / through, 1), "ratio": round(through / direct, 2)}
    print(json.dumps(row), flush=True)
    return row


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def soak(proxy: str, pid: int, seconds: float) -> dict[str, Any]:
    """Broken 1,000-message bodies and streams, back to back from 8 threads, sampling the proxy's RSS each second."""
    body = chat_body(1_000, broken=True)
    streamed = json.dumps({**json.loads(chat_body(100, broken=True)), "stream": True}).encode()
    stop = time.monotonic() + seconds
    done = [0]

    def load() -> None:
        with httpx2.Client(timeout=120) as client:
            while time.monotonic() < stop:
                client.post(proxy + "/v1/chat/completions", content=body, headers={"content-type": "application/json"})
                with client.stream("POST", proxy + "/v1/chat/completions", content=streamed) as response:
                    for _ in response.iter_raw():
                        pass
                done[0] += 2

    threads = [threading.Thread(target=load) for _ in range(8)]
    for t in threads:
        t.start()
    samples = []
    while time.monotonic() < stop:
        samples.append(_rss_kb(pid))
        time.sleep(1)
    for t in threads:
        t.join()
    settled = samples[len(samples) // 10:]  # after warm-up
    row = {"seconds": seconds, "requests": done[0], "rss_mb_first": round(settled[0] / 1024, 1),
           "rss_mb_max": round(max(settled) / 1024, 1), "rss_mb_last": round(settled[-1] / 1024, 1),
           "growth": round(max(settled) / settled[0] - 1, 3)}
    print(json.dumps(row), flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="requests per body and target (default 30)")
    parser.add_argument("--soak-seconds", type=float, default=0, help="run the soak this long (0: no soak)")
    parser.add_argument("--mixed-seconds", type=float, default=20, help="the mixed-load run's length (default 20)")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream()
        return 0
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores", flush=True)
    with processes(every_family=True) as (upstream, proxy, pid):
        rows = latency(upstream, proxy, args.rounds)
        routes = every_route(upstream, proxy, args.rounds)
        mixed = mixed_load(upstream, proxy, args.mixed_seconds)
        concurrency(upstream, proxy)
        if args.soak_seconds:
            soak(proxy, pid, args.soak_seconds)
    thousand = next(r for r in rows if r["messages"] == 1_000 and r["broken"])
    big = next(r for r in rows if r["messages"] == 10_000 and r["broken"])
    # the 10% target is of a real provider's time to answer 10,000 messages (seconds); this fake answers at once, so
    # its direct time is no denominator: the absolute added time is what is reported
    print(f"targets: added p50 at 1,000 broken = {thousand['added_p50_ms']} ms (<= 5); at 10,000 broken "
          f"{big['added_p50_ms']} ms added (10% of a provider that answers in {big['added_p50_ms'] * 10:.0f} ms; "
          f"this fake answers in {big['direct_p50_ms']} ms)")
    for r in routes:
        if r["messages"] == 1_000:
            print(f"target: {r['route']} 1,000 {'broken' if r['broken'] else 'valid'}: added p50 "
                  f"{r['added_p50_ms']} ms (<= 5), p99 {r['added_p99_ms']} ms")
    print(f"target: mixed load, the small client's added p50 {mixed['small_added_p50_ms']} ms (<= 5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
