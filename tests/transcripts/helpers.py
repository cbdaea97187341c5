"""Turn neutral histories into agent-tool transcripts, so properties can run over messy ones."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall
from chatmend.formats import Session, read_lines

PLACEHOLDER_BEFORE_RESULT = [
    ChatMessage(role="assistant", content="", tool_calls=(ToolCall(id="", name="search", arguments={}),)),
    ChatMessage(role="assistant", content=""),
    ChatMessage(role="tool", content="ok", tool_call_id=""),
]
"""Found by a fuzz run: a placeholder reply between a call and its result (the result names the call's tool
whether read before or after a repair, which drops the placeholder)."""


def normal(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """Messages with one-text-part contents as strings (the transcripts read them so)."""
    out = []
    for m in messages:
        content = m.content
        if isinstance(content, tuple) and len(content) == 1 and isinstance(content[0], TextPart):
            content = content[0].text
        elif isinstance(content, tuple) and not content:
            content = ""
        out.append(replace(m, content=content))
    return out


def lines_of(records: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records]


def split_lines(text: str) -> list[str]:
    """Lines split on newlines only, as files are read (str.splitlines also splits on U+0085)."""
    return [line + "\n" for line in text.split("\n") if line]


def read_text(text: str, fmt: str = "auto") -> Session:
    return read_lines(split_lines(text), fmt)


def _cc_blocks(content: str | tuple[Any, ...], *, assistant: bool) -> list[Any] | str:
    if isinstance(content, str):
        return content
    blocks: list[Any] = []
    for part in content:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            source = (
                {"type": "base64", "media_type": part.media_type, "data": part.data}
                if part.data
                else {"type": "url", "url": part.url}
            )
            blocks.append({"type": "image", "source": source})
        elif isinstance(part, ThinkingPart) and assistant:
            if part.redacted:
                blocks.append({"type": "redacted_thinking", "data": part.data})
            else:
                blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature or ""})
    return blocks


def claude_code_records(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """A linear Claude Code transcript: each assistant block its own record, each result its own record."""
    records: list[dict[str, Any]] = [{"type": "summary", "summary": "test", "leafUuid": "x"}]
    parent: str | None = None

    def add(kind: str, message: dict[str, Any]) -> None:
        nonlocal parent
        uid = f"u{len(records)}"
        records.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "sessionId": "s",
                "type": kind,
                "message": message,
                "uuid": uid,
                "timestamp": "2026-01-01T00:00:00Z",
            }
        )
        parent = uid

    for i, m in enumerate(history):
        if m.role in ("user", "system"):
            add("user", {"role": "user", "content": _cc_blocks(m.content, assistant=False)})
        elif m.role == "tool":
            inner = _cc_blocks(m.content, assistant=False)
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": inner}
            if m.is_error:
                block["is_error"] = True
            add("user", {"role": "user", "content": [block]})
        else:
            blocks = _cc_blocks(m.content, assistant=True)
            if isinstance(blocks, str):
                blocks = [{"type": "text", "text": blocks}]
            blocks += [
                {
                    "type": "tool_use",
                    "id": c.id,
                    "name": c.name,
                    "input": c.arguments if isinstance(c.arguments, dict) else {"raw": c.arguments},
                }
                for c in m.tool_calls
            ]
            for block in blocks or [{"type": "text", "text": ""}]:
                add("assistant", {"id": f"msg_{i}", "role": "assistant", "content": [block]})
        if i % 3 == 0:
            records.append({"type": "file-history-snapshot", "messageId": parent, "snapshot": {}})
    return records


def codex_records(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """A Codex rollout: session_meta, then one response_item a message, call or output."""
    records: list[dict[str, Any]] = [{"timestamp": "t0", "type": "session_meta", "payload": {"id": "s"}}]

    def item(payload: dict[str, Any]) -> None:
        records.append({"timestamp": f"t{len(records)}", "type": "response_item", "payload": payload})

    def parts(content: str | tuple[Any, ...], kind: str) -> list[dict[str, Any]]:
        if isinstance(content, str):
            return [{"type": kind, "text": content}]
        out: list[dict[str, Any]] = []
        for p in content:
            if isinstance(p, TextPart):
                out.append({"type": kind, "text": p.text})
            elif isinstance(p, ImagePart):
                url = p.url or f"data:{p.media_type};base64,{p.data}"
                out.append({"type": "input_image", "image_url": url})
        return out

    for m in history:
        if m.role in ("user", "system"):
            role = "user" if m.role == "user" else "developer"
            item({"type": "message", "role": role, "content": parts(m.content, "input_text")})
        elif m.role == "tool":
            item(
                {
                    "type": "function_call_output",
                    "call_id": m.tool_call_id,
                    "output": m.content if isinstance(m.content, str) else parts(m.content, "input_text"),
                }
            )
        else:
            text = parts(m.content, "output_text")
            if text or not m.tool_calls:
                item({"type": "message", "role": "assistant", "content": text})
            for c in m.tool_calls:
                args = c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)
                item({"type": "function_call", "name": c.name, "arguments": args, "call_id": c.id})
        records.append({"timestamp": "tx", "type": "event_msg", "payload": {"type": "token_count"}})
    return records


REAL = Path(__file__).resolve().parents[3] / "shared" / "real-world"
"""The real session files of `../shared/real-world/` (tests that read them skip when it is absent)."""


def real_claude_transcripts() -> list[str]:
    """The names of the real Claude Code transcripts there (none when it is absent)."""
    if not REAL.is_dir():
        return []
    return sorted(p.name for p in REAL.iterdir() if p.suffix == ".jsonl" and "claude" in p.name.lower())
