"""pydantic-ai message histories saved as JSON: `ModelMessagesTypeAdapter.dump_json(messages)` (what
`result.all_messages_json()` writes), read and written without pydantic-ai itself.

The file is a JSON list of `ModelRequest` (`"kind": "request"`) and `ModelResponse` (`"kind": "response"`)
objects, each with its `parts` (`part_kind`). A response is one assistant message: its `text`, `thinking` and
`tool-call` parts are read; every other part (native tools, files, compaction) is kept as a `NativePart`, so a
reply holding only those is not taken for a placeholder. Each part of a request is a message of its own, as the
pydantic-ai bridge reads them: `tool-return` and a `retry-prompt` that names its tool answer a call,
`system-prompt` is a system message, `user-prompt` a user message, and any other part a user message holding it
as a `NativePart`.

A repair rewrites only the items it changes, in the file's style, every other character as it was. A synthetic
result is a `tool-return` part with `outcome: "interrupted"` and `metadata: {"chatmend_synthesized_tool_return":
true}` (as the bridge makes them), put into the request holding its turn's other results, or a new request
after its call's response.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall
from chatmend.files.io import InputError
from chatmend.files.session import Session
from chatmend.messages import NativePart, Part
from chatmend.transcripts._document import DocumentFormat, item_records, list_text, read_json
from chatmend.transcripts._records import BlockAt, Record, errors_at_line, expect, optional_text, read_call
from chatmend.transcripts.stores import FileFormat

__all__ = ["FORMAT", "NAME", "SYNTHESIZED", "TOOL", "default_locations", "holds_session", "is_session_file", "read",
           "read_document", "resume_command"]

NAME = "pydantic_ai"
"""The format's name (`--from pydantic_ai`)."""
TOOL = "pydantic-ai"
"""The framework's name, as a person knows it."""
SYNTHESIZED = "chatmend_synthesized_tool_return"
"""The `metadata` key of a result chatmend made (its value is true), as the pydantic-ai bridge marks them."""
_WHAT = "a pydantic-ai message (an object with 'kind' \"request\" or \"response\" and its 'parts')"
_NATIVE = "pydantic_ai"
"""The `provider` of the NativeParts holding parts chatmend does not read."""


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """None: pydantic-ai keeps no history of its own; an application saves it where it chooses (give the
    files or directories to scan)."""
    return []


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a JSON file whose content is a pydantic-ai message history (read from its first bytes)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    text = head.decode("utf-8", "replace").lstrip()
    return text.startswith("[") and '"parts"' in text and ('"kind":"request"' in text.replace(" ", "")
                                                           or '"kind":"response"' in text.replace(" ", ""))


def resume_command(path: str | os.PathLike[str]) -> str:
    """How an application resumes from the file."""
    return (f"ModelMessagesTypeAdapter.validate_json(Path({os.fspath(path)!r}).read_bytes()) as the agent's "
            "message_history=")


# --- detection -----------------------------------------------------------------------------------------------


def holds_session(value: object) -> bool:
    """True for a pydantic-ai message history: a list of objects of `kind` request or response with `parts`."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(m, Mapping) and m.get("kind") in ("request", "response") and isinstance(m.get("parts"), list)
        for m in value[:200])


# --- reading -------------------------------------------------------------------------------------------------


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def _user_content(content: object) -> str | tuple[Part, ...]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return _text(content)
    parts: list[Part] = []
    for item in content:
        if isinstance(item, str):
            parts.append(TextPart(text=item))
        elif isinstance(item, Mapping) and item.get("kind") == "image-url" and isinstance(item.get("url"), str) \
                and item["url"].strip():
            parts.append(ImagePart(url=item["url"]))
        elif isinstance(item, Mapping):
            parts.append(NativePart(provider=_NATIVE, data=dict(item)))
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return tuple(parts)


class MessageHistory(DocumentFormat):
    """A saved pydantic-ai history: its messages as neutral ones, and how a repair is written back."""

    name = NAME
    provider = ""
    turn_key = "kind"
    result_turns = ("request",)
    blocks_key = "parts"

    def __init__(self, value: list[Any], text: str) -> None:
        found = list_text(text, None)
        super().__init__(found, item_records(found, value))
        for k, (record, item) in enumerate(zip(self.records, value)):
            if not isinstance(item, Mapping) or item.get("kind") not in ("request", "response"):
                raise InputError(f"[{k}]: expected {_WHAT}", line=record.line)
            parts = item.get("parts")
            expect(record, f"[{k}].parts", parts, (list,), "a list of parts")
            record.blocks = list(parts) if isinstance(parts, list) else []
            with errors_at_line(record, _WHAT):
                if item["kind"] == "response" and not record.blocks:
                    # a reply of nothing (rule 1's placeholder): a stand-in block, so that repair's drop drops it
                    record.blocks = [None]
                    self.add_reply(ChatMessage(role="assistant", content=""), [(k, 0)])
                elif item["kind"] == "response":
                    self._read_response(k, record, item)
                else:
                    self._read_request(k, record)

    def session(self, warnings: Sequence[str] = ()) -> Session:
        session = super().session(warnings)
        session.provider = None  # any model's history: the neutral rules
        return session

    def _read_response(self, k: int, record: Record, item: Mapping[str, Any]) -> None:
        if isinstance(item.get("model_name"), str):
            self.model = item["model_name"]
        parts: list[Part] = []
        calls: list[ToolCall] = []
        at: list[BlockAt] = []
        for b, part in enumerate(record.blocks):
            at.append((k, b))
            expect(record, f"parts[{b}]", part, (dict,), "a part (an object with 'part_kind')")
            kind = part.get("part_kind")
            path = f"parts[{b}]"
            if kind == "text":
                parts.append(TextPart(text=optional_text(record, f"{path}.content", part.get("content"))))
            elif kind == "thinking":
                signature = part.get("signature")
                expect(record, f"{path}.signature", signature, (str, type(None)), "a string")
                source = part.get("provider_name")
                parts.append(ThinkingPart(text=optional_text(record, f"{path}.content", part.get("content")),
                                          signature=signature, provider=source if isinstance(source, str) else None))
            elif kind == "tool-call":
                calls.append(read_call(record, f"{path}.", part, id="tool_call_id", name="tool_name", arguments="args",
                                       expected="an object or a JSON string (the arguments)"))
            else:
                parts.append(NativePart(provider=_NATIVE, data=part))
        single = len(parts) == 1 and isinstance(parts[0], TextPart)
        content: str | tuple[Part, ...] = parts[0].text if single and isinstance(parts[0], TextPart) else tuple(parts)
        self.add_reply(ChatMessage(role="assistant", content=content, tool_calls=tuple(calls)), at)

    def _read_request(self, k: int, record: Record) -> None:
        for b, part in enumerate(record.blocks):
            expect(record, f"parts[{b}]", part, (dict,), "a part (an object with 'part_kind')")
            kind = part.get("part_kind")
            path = f"parts[{b}]"
            if kind == "tool-return" or (kind == "retry-prompt" and part.get("tool_name") is not None):
                call_id = optional_text(record, f"{path}.tool_call_id", part.get("tool_call_id"))
                name = optional_text(record, f"{path}.tool_name", part.get("tool_name"))
                error = kind == "retry-prompt" or part.get("outcome") in ("failed", "retried", "interrupted")
                message = ChatMessage(role="tool", tool_call_id=call_id, tool_name=self.tool_name(call_id) or name
                                      or None, is_error=error, content=_text(part.get("content")))
            elif kind == "system-prompt":
                message = ChatMessage(role="system", content=_text(part.get("content")))
            elif kind in ("user-prompt", "retry-prompt"):
                message = ChatMessage(role="user", content=_user_content(part.get("content")))
            else:
                message = ChatMessage(role="user", content=(NativePart(provider=_NATIVE, data=part),))
            self.add(message, [(k, b)])

    # --- writing -------------------------------------------------------------------------------------------

    def is_call(self, block: Any) -> bool:
        return isinstance(block, Mapping) and block.get("part_kind") == "tool-call"

    def is_result(self, block: Any) -> bool:
        return isinstance(block, Mapping) and block.get("part_kind") == "tool-return"

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return {**block, "tool_call_id": new_id}

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        return {**block, "tool_call_id": new_id}

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        content = note.content if isinstance(note.content, str) else [
            p.text if isinstance(p, TextPart) else {"url": p.url, "kind": "image-url"}
            for p in note.content if isinstance(p, TextPart) or (isinstance(p, ImagePart) and p.url)]
        return [{"content": content, "timestamp": orphan.get("timestamp"), "part_kind": "user-prompt"}]

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        return [{"tool_name": call.get("tool_name"), "content": result.content if isinstance(result.content, str)
                 else "", "tool_call_id": result.tool_call_id, "metadata": {SYNTHESIZED: True},
                 "timestamp": self._time_of(call), "outcome": "interrupted", "part_kind": "tool-return"}]

    def _time_of(self, call: Any) -> object:
        """The timestamp of the response holding `call` (else the file's last), for the result made for it."""
        stamps = [r.data["timestamp"] for r in self.records if isinstance(r.data.get("timestamp"), str)]
        return next((r.data.get("timestamp") for r in self.records if call in r.blocks),
                    stamps[-1] if stamps else None)

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        return {**record.data, "parts": blocks}

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        template = next((r.data for r in self.records if r.data.get("kind") == "request"), {})
        data: dict[str, Any] = {key: None for key in template if key not in ("parts", "kind")}
        data = {"parts": blocks, **data, "kind": "request"}
        for key in ("run_id", "conversation_id"):
            if key in template:
                data[key] = near.data.get(key)
        if "state" in template:
            data["state"] = "complete"
        if "timestamp" in template:
            data["timestamp"] = near.data.get("timestamp")
        if "instructions" in template:  # pydantic-ai sends the instructions of the last request that has them
            before = [r.data for r in self.records if r.data.get("kind") == "request" and r.line <= near.line]
            data["instructions"] = before[-1].get("instructions") if before else None
        return data


def read_document(value: Any, text: str) -> Session:
    """A Session from a saved pydantic-ai history (`value`, its parsed JSON, and `text`, its content)."""
    if not isinstance(value, list):
        raise InputError(f"expected a pydantic-ai message history: a JSON list of messages ({_WHAT})")
    return MessageHistory(value, text).session()


def read(path: str | os.PathLike[str]) -> Session:
    """A Session from a saved pydantic-ai history on disk."""
    return read_document(*read_json(os.fspath(path)))


FORMAT = FileFormat(NAME, "pydantic-ai message histories (ModelMessagesTypeAdapter.dump_json, all_messages_json())",
                    order=110, read_document=read_document, holds_document=holds_session)
"""The format table's entry."""
