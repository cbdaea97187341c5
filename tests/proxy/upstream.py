"""A fake upstream API on 127.0.0.1 for the proxy's tests: it records every request, judges each history body with
chatmend's `check`, and answers with recorded replies in each provider's shape, streamed or not.

Test headers steer it: `x-test-status: 429` answers that status; `x-test-delay: S` waits before answering;
`x-test-reset: 1` breaks the connection in the middle of a stream; `x-test-hold: 1` streams one event every 50 ms
until the client goes away (recorded as `gone`); `x-test-hop: 1` answers with a header its `Connection` names.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from chatmend import providers
from tests.providers import eventstream

ANTHROPIC_MESSAGE = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 2},
}
CHAT_COMPLETION = {
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}
RESPONSE = {
    "id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "gpt-4o",
    "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "done", "annotations": []}]}],
    "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
}
GEMINI_REPLY = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]}, "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    "modelVersion": "gemini-2.5-pro",
}


BEDROCK_REPLY = {
    "output": {"message": {"role": "assistant", "content": [{"text": "done"}]}}, "stopReason": "end_turn",
    "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1},
}


def bedrock_stream() -> list[bytes]:
    return eventstream.reply_events([{"text": "done"}])


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def anthropic_stream() -> list[bytes]:
    start = {**ANTHROPIC_MESSAGE, "content": [], "stop_reason": None}
    return [
        _sse("message_start", {"type": "message_start", "message": start}),
        _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": "do"}}),
        _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": "ne"}}),
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": 2}}),
        _sse("message_stop", {"type": "message_stop"}),
    ]


def chat_stream() -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(None, {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    return [chunk({"role": "assistant", "content": "do"}), chunk({"content": "ne"}), chunk({}, "stop"),
            b"data: [DONE]\n\n"]


def responses_stream() -> list[bytes]:
    created = {**RESPONSE, "status": "in_progress", "output": []}
    return [
        _sse("response.created", {"type": "response.created", "sequence_number": 0, "response": created}),
        _sse("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 1,
                                            "item_id": "msg_1", "output_index": 0, "content_index": 0,
                                            "delta": "done", "logprobs": []}),
        _sse("response.completed", {"type": "response.completed", "sequence_number": 2, "response": RESPONSE}),
    ]


def gemini_stream() -> list[bytes]:
    first = {**GEMINI_REPLY, "candidates": [{"content": {"role": "model", "parts": [{"text": "do"}]}, "index": 0}]}
    second = {**GEMINI_REPLY, "candidates": [{"content": {"role": "model", "parts": [{"text": "ne"}]},
                                              "finishReason": "STOP", "index": 0}]}
    return [f"data: {json.dumps(first)}\r\n\r\n".encode(), f"data: {json.dumps(second)}\r\n\r\n".encode()]


@dataclass
class Seen:
    """One request as the upstream received it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    raw: bytes
    provider: str | None = None
    problems: list[str] = field(default_factory=list)

    def json(self) -> Any:
        return json.loads(self.raw)


@dataclass
class Upstream:
    url: str
    seen: list[Seen]
    sent: dict[str, bytes]
    """The bytes of the last answer per path, exactly as written."""
    gone: list[str]
    """Paths whose stream the client left (the write failed)."""


def _provider_of(path: str) -> str | None:
    if path.endswith("/messages") or path.endswith("/messages/count_tokens"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai_chat"
    if path.endswith("/responses"):
        return "openai_responses"
    if ":generateContent" in path or ":streamGenerateContent" in path or ":countTokens" in path:
        return "gemini"
    if path.startswith("/model/") and path.endswith(("/converse", "/converse-stream")):
        return "bedrock"
    return None


def model_of(path: str) -> str | None:
    """The model of a Bedrock path (`/model/{id}/converse`), decoded."""
    if not path.startswith("/model/"):
        return None
    return unquote(path.split("/")[2])


def _answer(path: str, body: Any) -> tuple[Any, list[bytes] | None]:
    """The JSON answer, or the stream events, for a path."""
    stream = isinstance(body, dict) and body.get("stream") is True
    if path.endswith("/messages/count_tokens"):
        return {"input_tokens": 12}, None
    if path.endswith("/messages"):
        return ANTHROPIC_MESSAGE, anthropic_stream() if stream else None
    if path.endswith("/chat/completions"):
        return CHAT_COMPLETION, chat_stream() if stream else None
    if path.endswith("/responses"):
        return RESPONSE, responses_stream() if stream else None
    if ":streamGenerateContent" in path:
        return GEMINI_REPLY, gemini_stream()
    if ":generateContent" in path:
        return GEMINI_REPLY, None
    if path.endswith("/converse-stream"):
        return BEDROCK_REPLY, bedrock_stream()
    if path.endswith("/converse"):
        return BEDROCK_REPLY, None
    return {"object": "list", "data": [{"id": "m-1", "object": "model"}]}, None


class _Server(ThreadingHTTPServer):
    request_queue_size = 512  # a burst of 100 streams must not overflow the accept queue (the default is 5)
    daemon_threads = True


@contextmanager
def fake_upstream(*, judge: bool = True) -> Iterator[Upstream]:
    """The fake upstream, serving on a free port for the block (`judge`: check each history body)."""
    seen: list[Seen] = []
    sent: dict[str, bytes] = {}
    gone: list[str] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body in two writes: else a delayed ACK holds the body back

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            record = Seen(self.command, parts.path, parts.query, {k.lower(): v for k, v in self.headers.items()},
                          raw, _provider_of(parts.path))
            body: Any = None
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    record.problems.append("not JSON")
            if judge and record.provider and isinstance(body, dict):
                record.problems.extend(str(p) for p in providers.get(record.provider).check(
                    body, model=model_of(parts.path)))
            with lock:
                seen.append(record)
            delay = float(self.headers.get("x-test-delay") or 0)
            if delay:
                time.sleep(delay)
            status = int(self.headers.get("x-test-status") or 200)
            if status != 200:
                return self._json(status, {"error": {"message": f"upstream says {status}", "type": "test"}})
            answer, events = _answer(parts.path, body)
            if events is None:
                return self._json(200, answer)
            self._stream(parts.path, events)

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            sent[urlsplit(self.path).path] = data
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-upstream", "fake")
            self.send_header("set-cookie", "a=1")
            self.send_header("set-cookie", "b=2")
            if self.headers.get("x-test-hop"):  # a header the upstream names hop-by-hop in its Connection
                self.send_header("connection", "keep-alive, X-Up-Hop")
                self.send_header("x-up-hop", "1")
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, path: str, events: list[bytes]) -> None:
            self.send_response(200)
            kind = eventstream.CONTENT_TYPE if path.endswith("/converse-stream") else "text/event-stream"
            self.send_header("content-type", kind)
            self.send_header("x-upstream", "fake")
            self.send_header("connection", "close")  # the stream ends when the connection does
            self.end_headers()
            self.close_connection = True
            if self.headers.get("x-test-reset"):
                self.wfile.write(events[0])
                self.wfile.flush()
                # RST instead of FIN: the connection breaks mid-stream
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                return
            if self.headers.get("x-test-hold"):
                try:
                    for _ in range(400):  # 20 s at most
                        self.wfile.write(events[0])
                        self.wfile.flush()
                        time.sleep(0.05)
                except OSError:
                    gone.append(path)
                return
            written = b""
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()
                written += event
            sent[path] = written

        do_GET = do_POST = do_PUT = do_DELETE = _handle

    httpd = _Server(("127.0.0.1", 0), Handler)
    # shutdown() waits for the serve loop's next poll: poll often, or each server takes half a second to stop
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Upstream(f"http://127.0.0.1:{httpd.server_address[1]}", seen, sent, gone)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def main() -> None:
    """`python -m tests.proxy.upstream`: the fake upstream in its own process, judging nothing (a load test's:
    it takes no time from the test's own process), its URL on the first line of stdout, until killed."""
    with fake_upstream(judge=False) as upstream:
        print(upstream.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
