"""Codex CLI session files: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.

One JSON record a line: `{"timestamp", "type", "payload"}` (rollouts before that envelope hold a session
line, then the bare items, and `{"record_type": "state"}` lines). Records of type `response_item` hold one
OpenAI Responses item (`message`, `function_call`, `function_call_output`, `custom_tool_call`,
`local_shell_call`, `reasoning`, ...); `session_meta`, `turn_context`, `event_msg` and `compacted` records
describe the session and are kept as they are and not read, like `reasoning` items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chatmend import ChatMessage, ImagePart, TextPart, ToolCall
from chatmend.formats._session import Session
from chatmend.messages import Part
from chatmend.providers.base import text_field
from chatmend.transcripts._records import (
    BlockAt,
    Record,
    TranscriptFormat,
    errors_at_line,
    expect,
    optional_text,
    parse_records,
)

__all__ = ["Codex", "read"]

NAME = "codex"
_WHAT = "one Codex session record a line"
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_RESULTS = {"function_call_output": "function_call", "custom_tool_call_output": "custom_tool_call",
            "local_shell_call_output": "local_shell_call"}
_ITEM_TYPES = frozenset({"message", *_CALLS, *_RESULTS})
_OUTPUT_OF = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output",
              "local_shell_call": "function_call_output"}


def read(lines: Iterable[str]) -> Session:
    """A Session from a Codex CLI session file."""
    return Codex(parse_records(lines, what=_WHAT)).session()


def _image(url: str) -> ImagePart:
    """An `input_image` URL as an ImagePart (inline when a base64 data URL)."""
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return ImagePart(media_type=head or "image/png", data=data)
    return ImagePart(url=url)


def _parts(content: object) -> str | tuple[Part, ...]:
    """Responses content (a string or input/output parts) as neutral content."""
    if isinstance(content, str):
        return content
    parts: list[Part] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if text_field(part) in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            parts.append(TextPart(text=part["text"]))
        elif part.get("type") == "input_image" and isinstance(part.get("image_url"), str):
            parts.append(_image(part["image_url"]))
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return tuple(parts)


def _output(payload: Mapping[str, Any]) -> tuple[str | tuple[Part, ...], bool]:
    """A call output's content, and whether it failed (`{"content", "success": false}`)."""
    output = payload.get("output")
    if isinstance(output, Mapping):
        failed = output.get("success") is False
        return _parts(output.get("content", "")), failed
    return _parts(output if output is not None else ""), False


class Codex(TranscriptFormat):
    """Reads the conversation out of a session file and writes repaired records back."""

    name = NAME
    provider = "openai_responses"

    def __init__(self, records: list[Record]) -> None:
        super().__init__(records)
        self.legacy = "payload" not in records[0].data and "type" not in records[0].data
        self._assistant: tuple[list[Part], list[ToolCall], list[BlockAt]] | None = None
        for k, record in enumerate(records):
            with errors_at_line(record, _WHAT):
                self._read(k, record)
        with errors_at_line(records[-1], _WHAT):
            self._flush()

    def _read(self, k: int, record: Record) -> None:
        """Read one record: messages, calls and outputs; everything else is kept unread."""
        data = record.data
        payload = data.get("payload")
        if data.get("type") == "turn_context" and isinstance(payload, Mapping) \
                and isinstance(payload.get("model"), str):
            self.model = payload["model"]
        if self.legacy and "payload" not in data and isinstance(data.get("type"), str) and data["type"] in _ITEM_TYPES:
            payload = data  # the bare item of an older rollout
        elif data.get("type") != "response_item" or not isinstance(payload, Mapping):
            return
        kind = payload.get("type")
        where = "" if payload is data else "payload."  # (an older rollout's items have no envelope)
        # an item without a type is not one chatmend reads: kept as it is, as any other
        expect(record, f"{where}type", kind, (str, type(None)), "a string (the item's type)")
        if kind == "message":
            role = payload.get("role")
            if role == "assistant":
                # An assistant message and the calls right after it are one reply.
                self._flush()
                record.blocks = [payload]
                self._assistant = ([], [], [(k, 0)])
                content = _parts(payload.get("content"))
                self._assistant[0].extend((TextPart(text=content),) if isinstance(content, str) else content)
            elif role in ("user", "developer", "system"):
                self._flush()
                record.blocks = [payload]
                self.add(ChatMessage(role="user" if role == "user" else "system",
                                     content=_parts(payload.get("content"))), [(k, 0)])
        elif kind in _CALLS:
            record.blocks = [payload]
            if self._assistant is None:
                self._assistant = ([], [], [])
            call_id = (optional_text(record, f"{where}call_id", payload.get("call_id"))
                       or optional_text(record, f"{where}id", payload.get("id")))
            name = optional_text(record, f"{where}name", payload.get("name")) or (
                "local_shell" if kind == "local_shell_call" else "tool")
            field = "arguments" if kind == "function_call" else ("input" if kind == "custom_tool_call" else "action")
            arguments = payload.get(field) or {}
            expect(record, f"{where}{field}", arguments, (dict, str),
                   "a string (the call's JSON arguments) or an object")
            self._assistant[1].append(ToolCall(id=call_id, name=name, arguments=arguments))
            self._assistant[2].append((k, 0))
        elif kind in _RESULTS:
            self._flush()
            record.blocks = [payload]
            call_id = optional_text(record, f"{where}call_id", payload.get("call_id"))
            content, failed = _output(payload)
            self.add(ChatMessage(role="tool", tool_call_id=call_id, tool_name=self.tool_name(call_id),
                                 is_error=failed, content=content), [(k, 0)])

    def _flush(self) -> None:
        """Emit the reply being read, if any."""
        if self._assistant is None:
            return
        parts, calls, blocks_at = self._assistant
        self._assistant = None
        content: str | tuple[Part, ...] = tuple(parts)
        if all(isinstance(p, TextPart) for p in parts):
            content = "".join(p.text for p in parts if isinstance(p, TextPart))
        self.add_reply(ChatMessage(role="assistant", content=content, tool_calls=tuple(calls)), blocks_at)

    # --- writing -------------------------------------------------------------------------------------------

    def is_call(self, block: Any) -> bool:
        return isinstance(block, Mapping) and text_field(block) in _CALLS

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return {**block, "call_id": new_id}

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        return {**block, "call_id": new_id}

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        content: list[dict[str, Any]] = []
        for part in note.content if isinstance(note.content, tuple) else (TextPart(text=note.content),):
            if isinstance(part, TextPart):
                content.append({"type": "input_text", "text": part.text})
            elif isinstance(part, ImagePart):
                url = part.url if part.url is not None else f"data:{part.media_type};base64,{part.data}"
                content.append({"type": "input_image", "image_url": url})
        return [{"type": "message", "role": "user", "content": content}]

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        text = result.content if isinstance(result.content, str) else ""
        kind = _OUTPUT_OF.get(str(call.get("type")), "function_call_output")
        return [{"type": kind, "call_id": result.tool_call_id, "output": text}]

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        # One item a record: a run of several blocks only happens for new blocks, written one a record.
        if self.legacy and "payload" not in record.data:
            return dict(blocks[0])
        data = dict(record.data)
        data["payload"] = blocks[0] if len(blocks) == 1 else {"type": "message", "role": "user", "content": [
            c for b in blocks for c in b.get("content", [])]}
        return data

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        if self.legacy and "payload" not in near.data:
            return dict(blocks[0])
        data: dict[str, Any] = {}
        if "timestamp" in near.data:
            data["timestamp"] = near.data["timestamp"]
        data["type"] = "response_item"
        data["payload"] = blocks[0]
        return data
