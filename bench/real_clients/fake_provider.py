"""A fake OpenAI Chat Completions provider on 127.0.0.1, for driving real agent CLIs with no real provider.

    python bench/real_clients/fake_provider.py --log-dir DIR [--port-file F] [--max-seconds S]

Python's standard library only. It answers `POST .../chat/completions` (streamed as SSE chunks or as one JSON
object) and `GET .../models`, saves every request as `DIR/NNNN.json` (path, body, the violations found, the status
answered and what was answered) and stops by itself after `--max-seconds`.

Before answering, a body is checked by the pairing rules of Chat Completions, in OpenAI's words: every id of an
assistant message's `tool_calls` is answered by one `tool` message in the run of `tool` messages right after it,
and no `tool` message stands anywhere else. A body that breaks them is answered 400 with OpenAI's error JSON.

What the model says is scripted by a marker in the prompt, `rc-case:NAME`:

  slow      one shell call that runs 60 s (`timeout 60 tail -f /dev/null`), then text
  parallel  two such calls in one reply, then text
  round     `echo rc-first-round` (fast), then the 60 s call, then text

Once a user text holds `rc-resume` (the prompt of a resume), the answer is the text `done`; so is it after the last
step, and for a body that offers no shell tool (titles, summaries).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DONE = "done"
SLOW = "timeout {} tail -f /dev/null; echo rc-slow-finished"
CASES: dict[str, list[list[str]]] = {
    "slow": [[SLOW.format(60)]],
    "parallel": [[SLOW.format(61), SLOW.format(62)]],
    "round": [["echo rc-first-round"], [SLOW.format(60)]],
}
"""Each case's tool-call turns, one list of shell commands a turn; text follows the last."""
SHELL_TOOLS = ("bash", "Bash", "run_shell_command", "shell", "shell_command", "powershell", "exec")
"""The shell tool's name in each client (Copilot CLI and Kilo Code: `bash`; Qwen Code: `run_shell_command`;
OpenClaw: `exec`)."""


def text_of(content: Any) -> str:
    """A message's text: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def violations(messages: list[Any]) -> list[str]:
    """What OpenAI refuses in a Chat Completions `messages` list, in its words."""
    found: list[str] = []
    k = 0
    while k < len(messages):
        message = messages[k] if isinstance(messages[k], dict) else {}
        if message.get("role") == "tool":
            found.append(f"messages.[{k}].role: Invalid parameter: messages with role 'tool' must be a response to "
                         "a preceeding message with 'tool_calls'.")
            k += 1
            continue
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        k += 1
        if not calls:
            continue
        wanted = [c.get("id") for c in calls if isinstance(c, dict)]
        answered: list[Any] = []
        while k < len(messages) and isinstance(messages[k], dict) and messages[k].get("role") == "tool":
            call_id = messages[k].get("tool_call_id")
            if call_id not in wanted or call_id in answered:
                found.append(f"messages.[{k}].role: Invalid parameter: messages with role 'tool' must be a response "
                             "to a preceeding message with 'tool_calls'.")
            answered.append(call_id)
            k += 1
        missing = [str(c) for c in wanted if c not in answered]
        if missing:
            found.append("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                         f"each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                         f"{', '.join(missing)}")
    return found


def shell_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    """The shell tool the request offers (its `function` object), or None."""
    offered = {t["function"].get("name"): t["function"] for t in body.get("tools") or []
               if isinstance(t, dict) and isinstance(t.get("function"), dict)}
    return next((offered[name] for name in SHELL_TOOLS if name in offered), None)


def shell_arguments(tool: dict[str, Any], command: str) -> dict[str, Any]:
    """The arguments of a call of `tool` that runs `command` in the foreground, every required field filled."""
    schema = tool.get("parameters") or {}
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {"command": command}
    for name in schema.get("required") or []:
        if name in arguments:
            continue
        spec = properties.get(name) or {}
        kind = spec.get("type")
        if spec.get("enum"):
            arguments[name] = "sync" if "sync" in spec["enum"] else spec["enum"][0]
        elif kind in ("integer", "number"):
            arguments[name] = 120  # a wait long enough that the command is still running in the foreground
        elif kind == "boolean":
            arguments[name] = False
        else:
            arguments[name] = "rc"
    if "is_background" in properties:
        arguments["is_background"] = False
    return arguments


def script(body: dict[str, Any]) -> tuple[str, Any]:
    """What the model answers: ("calls", [(id, name, arguments JSON)...]) or ("text", TEXT)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    tool = shell_tool(body)
    users = [k for k, m in enumerate(messages) if m.get("role") == "user"]
    marked = next((k for k in users if "rc-case:" in text_of(messages[k].get("content"))), None)
    if tool is None or marked is None or any("rc-resume" in text_of(messages[k].get("content")) for k in users):
        return "text", DONE
    case = re.search(r"rc-case:(\w+)", text_of(messages[marked].get("content")))
    steps = CASES.get(case.group(1) if case else "", [])
    step = sum(1 for m in messages[marked:] if m.get("role") == "assistant" and m.get("tool_calls"))
    if step >= len(steps):
        return "text", DONE
    seq = len(messages)
    return "calls", [(f"call_rc{seq}x{n}", tool["name"], json.dumps(shell_arguments(tool, command)))
                     for n, command in enumerate(steps[step])]


def chunks(model: str, answer: tuple[str, Any], usage: bool) -> Iterator[dict[str, Any]]:
    """The answer as Chat Completions stream chunks."""
    base = {"id": "chatcmpl-rc", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    kind, value = answer
    if kind == "text":
        yield chunk({"content": value})
        yield chunk({}, "stop")
    else:
        for n, (call_id, name, arguments) in enumerate(value):
            half = len(arguments) // 2
            yield chunk({"tool_calls": [{"index": n, "id": call_id, "type": "function",
                                         "function": {"name": name, "arguments": arguments[:half]}}]})
            yield chunk({"tool_calls": [{"index": n, "function": {"arguments": arguments[half:]}}]})
        yield chunk({}, "tool_calls")
    if usage:
        yield {**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def completion(model: str, answer: tuple[str, Any]) -> dict[str, Any]:
    """The answer as one Chat Completions object."""
    kind, value = answer
    message: dict[str, Any] = {"role": "assistant", "content": value if kind == "text" else None}
    if kind == "calls":
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in value]
    return {"id": "chatcmpl-rc", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop" if kind == "text" else "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


class Provider(BaseHTTPRequestHandler):
    log_dir = "."
    serial = itertools.count(1)
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: every request is saved as JSON instead."""

    def _save(self, record: dict[str, Any]) -> None:
        with self.lock:
            n = next(self.serial)
        with open(os.path.join(self.log_dir, f"{n:04d}.json"), "w", encoding="utf-8") as handle:
            json.dump({"seq": n, **record}, handle, ensure_ascii=False, indent=1)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._save({"method": "GET", "path": self.path})
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "rc-model", "object": "model", "owned_by": "rc"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            self._save({"method": "POST", "path": self.path, "status": 404,
                        "raw": raw[:2000].decode("utf-8", "replace")})
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        found = violations(body.get("messages") or [])
        record: dict[str, Any] = {"method": "POST", "path": self.path, "body": body, "violations": found}
        if found:
            self._save({**record, "status": 400, "answer": "error"})
            self._send(400, {"error": {"message": found[0], "type": "invalid_request_error", "param": "messages",
                                       "code": None}})
            return
        answer = script(body)
        self._save({**record, "status": 200, "answer": answer[0], "calls": answer[1] if answer[0] == "calls" else []})
        model = str(body.get("model") or "rc-model")
        if not body.get("stream"):
            self._send(200, completion(model, answer))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        try:
            for event in chunks(model, answer, usage):
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was killed while reading
        self.close_connection = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log-dir", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--max-seconds", type=float, default=900.0)
    args = parser.parse_args()
    os.makedirs(args.log_dir, exist_ok=True)
    Provider.log_dir = args.log_dir
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Provider)
    server.daemon_threads = True
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as handle:
            handle.write(str(server.server_address[1]))
        os.replace(args.port_file + ".tmp", args.port_file)
    threading.Timer(args.max_seconds, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
