"""Kimi Code CLI sessions: `~/.kimi-code/sessions/wd_<slug>_<hash>/session_<uuid>/agents/<agent>/wire.jsonl`.

The wire log is what Kimi Code replays on resume: a `metadata` header (`protocol_version`), then one record a
line, each `{type, ..., time}`. The conversation is in `context.append_message` (a whole message: the user's
prompts and steers) and `context.append_loop_event` records: a `step.begin` opens one model response, whose
`content.part` (`text`, `think`) and `tool.call` (`toolCallId`, `name`, `args`) events make the assistant
message, and `tool.result` (`toolCallId`, `result.output`, `result.isError`) answers a call. The last
`context.apply_compaction` (its summary) or `context.clear` starts the history over: what lies before it is kept
and not read. Every other record (`llm.request`, `usage.record`, `turn.*`, `config.update`, ...) is kept as it is.

A repair writes each changed record where it stands and every other line byte for byte; a synthetic result for a
call killed mid-run is a `tool.result` event (`isError: true`) after its step's other results, as Kimi Code
writes them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, TextPart, ThinkingPart, ToolCall
from chatmend.files.session import Session
from chatmend.messages import Part, plainest_content
from chatmend.transcripts._records import (
    BlockAt,
    Record,
    TranscriptFormat,
    errors_at_line,
    expect,
    joined_text,
    optional_text,
    parse_records,
    read_call,
)
from chatmend.transcripts.stores import FileFormat, any_record, tool_locations

__all__ = ["FORMAT", "NAME", "TOOL", "default_locations", "is_record", "is_session_file", "read", "resume_command"]

NAME = "kimi_code"
"""The format's name (`--from kimi_code`)."""
TOOL = "Kimi Code CLI"
"""The tool's name, as a person knows it."""
_WHAT = "one Kimi Code wire record a line"
_EVENT = "context.append_loop_event"
_MESSAGE = "context.append_message"
_RESTARTS = ("context.apply_compaction", "context.clear")


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Kimi Code keeps its sessions: `$KIMI_CODE_HOME/sessions`, else `~/.kimi-code/sessions`."""
    return tool_locations(env, "KIMI_CODE_HOME", ".kimi-code", "sessions")


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for an agent's wire log: `.../session_<uuid>/agents/<agent>/wire.jsonl`."""
    parts = Path(path).parts
    return len(parts) >= 4 and parts[-1] == "wire.jsonl" and parts[-3] == "agents"


def session_id(path: str | os.PathLike[str]) -> str:
    """The session id of a wire log: its session directory's name without `session_`."""
    name = Path(path).parents[2].name if len(Path(path).parts) >= 4 else Path(path).parent.name
    return name.removeprefix("session_")


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the session in Kimi Code (from its working directory)."""
    return f"kimi --session {session_id(path)}"


# --- detection -----------------------------------------------------------------------------------------------


def is_record(value: Mapping[str, Any]) -> bool:
    """True for a line only a Kimi Code wire log has: its header, or a context record."""
    kind = value.get("type")
    return (kind == "metadata" and "protocol_version" in value) or (
        kind in (_EVENT, _MESSAGE) and isinstance(value.get("event" if kind == _EVENT else "message"), Mapping))


# --- reading -------------------------------------------------------------------------------------------------


def _text_parts(content: object) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(text=content)]
    parts: list[Part] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("text"), str):
            parts.append(TextPart(text=part["text"]))
    return parts


def _output(result: object) -> tuple[str, bool]:
    """A tool.result's `result` as (text, is_error)."""
    if isinstance(result, str):
        return result, False
    if not isinstance(result, Mapping):
        return "", False
    output = result.get("output")
    text = joined_text(_text_parts(output)) if not isinstance(output, str) else output
    note = result.get("note") if isinstance(result.get("note"), str) else ""
    return (text or note or ""), bool(result.get("isError"))


class _Step:
    """One model response being read: its parts, its calls and the blocks they come from."""

    def __init__(self, position: int) -> None:
        self.position = position
        self.parts: list[Part] = []
        self.calls: list[ToolCall] = []
        self.at: list[BlockAt] = []


class KimiCode(TranscriptFormat):
    """A Kimi Code wire log: the conversation Kimi Code replays from it, and how a repair is written back."""

    name = NAME
    provider = "kimi"

    def __init__(self, records: list[Record], warnings: list[str]) -> None:
        super().__init__(records)
        self.warnings = warnings
        agent = next((r.data.get("agentId") for r in records if isinstance(r.data.get("agentId"), str)), None)
        start = max((k for k, r in enumerate(records) if r.data.get("type") in _RESTARTS), default=-1)
        pending: list[tuple[int, Any]] = []  # (position, a step or (message, blocks)), put in order below
        steps: dict[str, _Step] = {}
        current: _Step | None = None
        for k in range(max(start, 0), len(records)):
            record = records[k]
            data = record.data
            if data.get("agentId", agent) != agent:
                continue  # another agent's record: kept as it is
            kind = data.get("type")
            with errors_at_line(record, _WHAT):
                if kind in _RESTARTS and k == start:
                    if kind == "context.apply_compaction":
                        summary = data.get("contextSummary") or data.get("summary")
                        if isinstance(summary, str) and summary:
                            record.blocks = [data]
                            pending.append((k, (ChatMessage(role="user", content=summary), [(k, 0)])))
                elif kind == "context.undo":
                    self.warnings.append(f"line {record.line}: context.undo is not replayed; the records before it "
                                         "are read as they stand")
                elif kind == _MESSAGE:
                    self._read_message(k, record, pending)
                elif kind == _EVENT:
                    event = data.get("event")
                    expect(record, "event", event, (dict,), "an object (the loop event)")
                    assert isinstance(event, dict)
                    current = self._read_event(k, record, event, steps, current, pending)
                if self.model is None and kind == "llm.request" and isinstance(data.get("model"), str):
                    self.model = data["model"]
        for _, item in sorted(pending, key=lambda p: p[0]):
            if isinstance(item, _Step):
                if item.at:
                    thinking = any(isinstance(p, ThinkingPart) for p in item.parts)
                    content = tuple(item.parts) if thinking else plainest_content(item.parts)
                    self.add_reply(ChatMessage(role="assistant", content=content, tool_calls=tuple(item.calls)),
                                   item.at)
                continue
            message, at = item
            if message.role == "tool":
                named = self.tool_name(message.tool_call_id or "")
                message = replace(message, tool_name=named)
            self.add(message, at)

    def _read_message(self, k: int, record: Record, pending: list[tuple[int, Any]]) -> None:
        stored = record.data.get("message")
        expect(record, "message", stored, (dict,), "an object (the message)")
        assert isinstance(stored, dict)
        role = stored.get("role")
        if role not in ("user", "system"):
            return  # an assistant or tool message appended whole is rare: kept as it is, not read
        parts = _text_parts(stored.get("content"))
        record.blocks = [record.data]
        message = ChatMessage(role="user" if role == "user" else "system", content=plainest_content(parts))
        pending.append((k, (message, [(k, 0)])))

    def _read_event(self, k: int, record: Record, event: Mapping[str, Any], steps: dict[str, _Step],
                    current: _Step | None, pending: list[tuple[int, Any]]) -> _Step | None:
        kind = event.get("type")
        if kind == "step.begin":
            began = _Step(k)
            if isinstance(event.get("uuid"), str):
                steps[event["uuid"]] = began
            pending.append((k, began))
            return began
        if kind in ("content.part", "tool.call"):
            owner = event.get("stepUuid")
            part = event.get("part")
            if kind == "content.part":
                expect(record, "event.part", part, (dict,), "an object (the content part)")
            found = steps.get(owner) if isinstance(owner, str) else current
            if found is None:  # an event before any step.begin (or its step's): a step of its own
                found = _Step(k)
                pending.append((k, found))
                current = found
            step = found
            record.blocks = [record.data]
            step.at.append((k, 0))
            if kind == "tool.call":
                step.calls.append(read_call(record, "event.", event, id="toolCallId", name="name", arguments="args",
                                            expected="an object (the tool's arguments)"))
            elif isinstance(part, dict):
                if part.get("type") == "text":
                    step.parts.append(TextPart(text=optional_text(record, "event.part.text", part.get("text"))))
                elif part.get("type") == "think":
                    step.parts.append(ThinkingPart(text=optional_text(record, "event.part.think", part.get("think")),
                                                   provider="kimi"))
            return current
        if kind == "tool.result":
            call_id = optional_text(record, "event.toolCallId", event.get("toolCallId"))
            text, error = _output(event.get("result"))
            record.blocks = [record.data]
            message = ChatMessage(role="tool", tool_call_id=call_id, is_error=error, content=text)
            pending.append((k, (message, [(k, 0)])))
        return current

    def session(self, warnings: Iterable[str] = ()) -> Session:
        return super().session(self.warnings)

    # --- writing -------------------------------------------------------------------------------------------

    def is_call(self, block: Any) -> bool:
        event = block.get("event") if isinstance(block, Mapping) else None
        return isinstance(event, Mapping) and event.get("type") == "tool.call"

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return _renamed(block, new_id, "uuid")

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        return _renamed(block, new_id, "parentUuid")

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        return [_stamped({"type": _MESSAGE, "message": {
            "role": "user", "content": [{"type": "text", "text": joined_text(note.content)}], "toolCalls": [],
            "origin": {"kind": "user"}}}, orphan)]

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        event = call["event"]
        return [_stamped({"type": _EVENT, "event": {
            "type": "tool.result", "parentUuid": event.get("uuid", result.tool_call_id),
            "toolCallId": result.tool_call_id,
            "result": {"output": result.content if isinstance(result.content, str) else "", "isError": True}}}, call)]

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        data: dict[str, Any] = blocks[0]
        return data

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        data: dict[str, Any] = dict(blocks[0])
        if isinstance(data.get("time"), (int, float)) and not isinstance(data["time"], bool):
            data["time"] = data["time"] + serial
        return data


def _renamed(record: Mapping[str, Any], new_id: str, linked: str) -> dict[str, Any]:
    """A tool.call or tool.result record under a new call id, and its `linked` field (a call's `uuid`, a result's
    `parentUuid`) too when it held the call id."""
    event = dict(record["event"])
    if event.get(linked) == event.get("toolCallId"):
        event[linked] = new_id
    event["toolCallId"] = new_id
    return {**record, "event": event}


def _stamped(data: dict[str, Any], like: Mapping[str, Any]) -> dict[str, Any]:
    """A new record with the `time` and `agentId` of the record it stands in for (when and whose it is)."""
    data.update((key, like[key]) for key in ("time", "agentId") if key in like)
    return data


def read(lines: Iterable[str]) -> Session:
    """A Session from a Kimi Code wire log (a line that is not a record is kept and warned about)."""
    warnings: list[str] = []
    return KimiCode(parse_records(lines, what=_WHAT, warnings=warnings), warnings).session()


FORMAT = FileFormat(
    NAME, "Kimi Code CLI sessions (~/.kimi-code/sessions/*/session_*/agents/*/wire.jsonl)", order=40, read_lines=read,
    holds_records=any_record(is_record),
)
"""The format table's entry."""
