"""kimi-cli sessions (the Python Kimi CLI, before Kimi Code): `~/.kimi/sessions/<md5 of the work dir>/<id>/
context.jsonl`.

One kosong `Message` a line (`role` `user`, `assistant`, `tool`; `content` a string or `text` / `think` /
`image_url` parts; an assistant's `tool_calls` in the OpenAI shape with JSON-string `arguments`; a tool message's
`tool_call_id`), and kimi-cli's own lines: `_system_prompt`, `_usage` (the token count) and `_checkpoint` (a
place `/rewind` can go back to). kimi-cli restores the context by reading every message line in order; its own
lines are kept as they are. A repair writes each changed line where it stands and keeps every other line byte
for byte; a synthetic result is a `tool` message after its call's other results.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall
from chatmend.files.session import Session
from chatmend.messages import Part, plainest_content
from chatmend.transcripts._records import (
    Record,
    TranscriptFormat,
    content_blocks,
    errors_at_line,
    expect,
    joined_text,
    optional_text,
    parse_records,
)
from chatmend.transcripts.stores import FileFormat, any_record, tool_locations

__all__ = ["FORMAT", "NAME", "TOOL", "default_locations", "is_record", "is_session_file", "read", "resume_command"]

NAME = "kimi_cli"
"""The format's name (`--from kimi_cli`)."""
TOOL = "kimi-cli"
"""The tool's name, as a person knows it."""
_WHAT = "one kimi-cli context record a line (a message, or a _usage, _checkpoint or _system_prompt line)"
_OWN = ("_usage", "_checkpoint", "_system_prompt")
"""The roles of kimi-cli's own lines."""


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where kimi-cli keeps its sessions: `$KIMI_SHARE_DIR/sessions`, else `~/.kimi/sessions`."""
    return tool_locations(env, "KIMI_SHARE_DIR", ".kimi", "sessions")


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a session's context file: `sessions/<dir hash>/<id>/context.jsonl` (or a legacy
    `sessions/<dir hash>/<id>.jsonl`)."""
    file = Path(path)
    return file.suffix == ".jsonl" and "sessions" in file.parts[-4:-1] and (
        file.name == "context.jsonl" or file.parent.parent.name == "sessions")


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the session in kimi-cli (from its work directory)."""
    file = Path(path)
    session = file.parent.name if file.name == "context.jsonl" else file.stem
    return f"kimi --session {session}"


# --- detection -----------------------------------------------------------------------------------------------


def is_record(value: Mapping[str, Any]) -> bool:
    """True for a line only a kimi-cli context has: `_usage`, `_checkpoint` or `_system_prompt`."""
    return value.get("role") in _OWN


# --- reading -------------------------------------------------------------------------------------------------


def _neutral(parts: list[Any], *, assistant: bool) -> str | tuple[Part, ...]:
    out: list[Part] = []
    for part in parts:
        if isinstance(part, str):
            out.append(TextPart(text=part))
        elif isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
            out.append(TextPart(text=part["text"]))
        elif isinstance(part, Mapping) and part.get("type") == "think" and assistant:
            out.append(ThinkingPart(text=str(part.get("think") or ""), provider="kimi"))
        elif isinstance(part, Mapping) and part.get("type") == "image_url":
            url = part.get("image_url", {}).get("url") if isinstance(part.get("image_url"), Mapping) else None
            if isinstance(url, str) and url.strip():
                out.append(ImagePart(url=url))
    return plainest_content(out)


class KimiCli(TranscriptFormat):
    """A kimi-cli context file: the messages kimi-cli restores, and how a repair is written back."""

    name = NAME
    provider = "kimi"

    def __init__(self, records: list[Record]) -> None:
        super().__init__(records)
        for k, record in enumerate(records):
            with errors_at_line(record, _WHAT):
                self._read(k, record)

    def _read(self, k: int, record: Record) -> None:
        data = record.data
        role = data.get("role")
        if role in _OWN or not data:
            return  # kimi-cli's own line, or a line that is not a record: kept as it is
        if role == "assistant":
            content = content_blocks(data.get("content"))
            calls = data.get("tool_calls")
            calls = [] if calls is None else calls
            expect(record, "tool_calls", calls, (list,), "a list of tool calls")
            # a reply of nothing (rule 1's placeholder) gets a stand-in block, so that repair's drop drops it
            record.blocks = [("content", p) for p in content] + [("call", c) for c in calls] or [("empty", None)]
            tool_calls = []
            for n, call in enumerate(calls):
                expect(record, f"tool_calls[{n}]", call, (dict,), "a tool call (an object with 'function')")
                function = call.get("function")
                expect(record, f"tool_calls[{n}].function", function, (dict,), "an object with 'name' and 'arguments'")
                arguments = function.get("arguments")
                arguments = "" if arguments is None else arguments
                expect(record, f"tool_calls[{n}].function.arguments", arguments, (str, dict),
                       "a string (the call's JSON arguments)")
                tool_calls.append(ToolCall(id=optional_text(record, f"tool_calls[{n}].id", call.get("id")),
                                           name=optional_text(record, f"tool_calls[{n}].function.name",
                                                              function.get("name")) or "tool",
                                           arguments=arguments))
            self.add_reply(ChatMessage(role="assistant", content=_neutral(content, assistant=True),
                                       tool_calls=tuple(tool_calls)), [(k, b) for b in range(len(record.blocks))])
        elif role == "tool":
            record.blocks = [("result", data)]
            call_id = optional_text(record, "tool_call_id", data.get("tool_call_id"))
            self.add(ChatMessage(role="tool", tool_call_id=call_id, tool_name=self.tool_name(call_id),
                                 content=_neutral(content_blocks(data.get("content")), assistant=False)), [(k, 0)])
        elif role in ("user", "system"):
            record.blocks = [("message", data)]
            self.add(ChatMessage(role=role, content=_neutral(content_blocks(data.get("content")), assistant=False)),
                     [(k, 0)])
        else:
            expect(record, "role", role, (type(None),), "'user', 'assistant', 'tool' or one of kimi-cli's own "
                   f"roles ({', '.join(_OWN)})")

    # --- writing -------------------------------------------------------------------------------------------

    def is_call(self, block: Any) -> bool:
        return bool(block[0] == "call")

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return ("call", {**block[1], "id": new_id})

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        return ("result", {**block[1], "tool_call_id": new_id})

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        return [("message", {"role": "user", "content": [{"type": "text", "text": joined_text(note.content)}]})]

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        text = result.content if isinstance(result.content, str) else ""
        return [("result", {"role": "tool", "content": [{"type": "text", "text": text}],
                            "tool_call_id": result.tool_call_id})]

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        kind = blocks[0][0]
        if kind in ("result", "message"):
            data: dict[str, Any] = blocks[0][1]
            return data
        data = dict(record.data)
        content = [b[1] for b in blocks if b[0] == "content"]
        calls = [b[1] for b in blocks if b[0] == "call"]
        original = record.data.get("content")
        data["content"] = original if isinstance(original, str) and content == [original] else content
        if calls or "tool_calls" in record.data:
            data["tool_calls"] = calls
        return data

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        data: dict[str, Any] = blocks[0][1]
        return data


def read(lines: Iterable[str]) -> Session:
    """A Session from a kimi-cli context file (a line that is not a record is kept and warned about)."""
    warnings: list[str] = []
    return KimiCli(parse_records(lines, what=_WHAT, warnings=warnings)).session(warnings)


FORMAT = FileFormat(
    NAME, "kimi-cli sessions (~/.kimi/sessions/*/*/context.jsonl)", order=60, read_lines=read,
    holds_records=any_record(is_record),
)
"""The format table's entry."""
