"""GitHub Copilot CLI sessions (`@github/copilot`): `~/.copilot/session-state/<session id>/events.jsonl`.

An event log, one event a line: `{"type", "data", "id", "timestamp", "parentId"}`, each event's `parentId` the
event before it (the shapes are in the package's own `schemas/session-events.schema.json`). The conversation is
read from `user.message` (`transformedContent`, what the model is sent, else `content`), `assistant.message`
(`content` and `toolRequests[]`: `toolCallId`, `name`, `arguments`; the chunks of one model call, with
`chunkCount`, share an `apiCallId` and are one reply) and `tool.execution_complete` (`toolCallId`, `success`,
`result.content` or `error.message`). A result pairs with its call by `toolCallId` wherever it stands: results
arrive in the order tools finish, after events of other turns, and Copilot CLI itself appends the results it
makes up on resume at the end of the log. So results are read grouped by their call's turn, not by line. A
successful `session.compaction_complete` replaces what came before with its `summaryContent`. Events of a
sub-agent (`agentId`, `data.parentToolCallId`) and every other event (turns, telemetry) are not read; the last
`session.usage_record` names the API the model was called through (`apiEndpoint`: `/chat/completions`,
`/responses`, `/v1/messages`), whose provider's rules `check` applies (OpenAI Chat Completions when none does).

Copilot CLI 1.0 heals a session cut mid-tool itself when it resumes: it appends a `tool.execution_complete`
(`success: false`, `error.code: "interrupted"`) for each call without a result. A repair does the same, before
Copilot CLI runs: the synthetic results are appended at the end of the log, chained to its last event; every line
that was there is kept byte for byte. A repair that would move, drop, rename or turn a result into a note is not
written into the log yet (write it with `--to chatmend` or to a provider).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, RepairResult
from chatmend.files.io import InputError, first_line
from chatmend.files.session import Session
from chatmend.repair import IsReadOnly
from chatmend.transcripts._records import (
    Record,
    as_read_only,
    compact_json,
    errors_at_line,
    expect,
    joined_text,
    optional_text,
    parse_records,
    read_call,
    seeded_uuid,
    writable_repair,
)
from chatmend.transcripts.stores import FileFormat, any_record, tool_locations

__all__ = [
    "FORMAT", "NAME", "TOOL", "default_locations", "is_record", "is_session_file", "read", "resume_command",
    "session_id",
]

NAME = "copilot_cli"
"""The format's name (`--from copilot_cli`)."""
TOOL = "Copilot CLI"
"""The tool's name, as a person knows it."""
_WHAT = "one Copilot CLI session event a line ({\"type\", \"data\", \"id\", \"parentId\"})"
_READ = ("user.message", "assistant.message", "tool.execution_complete", "session.compaction_complete")
_ENDPOINTS = {"/chat/completions": "openai_chat", "/responses": "openai_responses", "/v1/messages": "anthropic",
              "/messages": "anthropic"}
"""The API a model call went to (`session.usage_record`'s `apiEndpoint`) to the provider whose rules `check`
applies."""
_SUMMARY_PREFIX = "<conversation_summary>\n"
_SUMMARY_SUFFIX = "\n</conversation_summary>"


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Copilot CLI keeps its sessions: `$COPILOT_HOME/session-state`, else `~/.copilot/session-state`."""
    return tool_locations(env, "COPILOT_HOME", ".copilot", "session-state")


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a session's `events.jsonl` whose first line is a Copilot CLI event."""
    file = Path(path)
    if file.name != "events.jsonl":
        return False
    head = first_line(file, 1 << 20)  # the first event, `session.start`, is a short one
    if head is None:
        return False
    try:
        first = json.loads(head)
    except ValueError:
        return False
    return isinstance(first, dict) and is_record(first)


def session_id(path: str | os.PathLike[str]) -> str:
    """The session's id: the name of the folder its `events.jsonl` is in."""
    return Path(path).parent.name


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the session: `copilot --resume ID`."""
    return f"copilot --resume {session_id(path)}"


# --- detection -----------------------------------------------------------------------------------------------


def is_record(value: Mapping[str, Any]) -> bool:
    """True for a Copilot CLI event: a dotted `type` (`session.start`, `user.message`...), a `data` object, an
    `id` and a `parentId` (null for the first)."""
    kind = value.get("type")
    return (isinstance(kind, str) and "." in kind and isinstance(value.get("data"), Mapping)
            and isinstance(value.get("id"), str) and "parentId" in value)


# --- reading -------------------------------------------------------------------------------------------------


@dataclass
class _Reply:
    """An assistant reply (its events) and the results read for its calls, in the order its calls stand."""

    message: ChatMessage
    lines: list[int]
    results: dict[str, tuple[ChatMessage, int]] = field(default_factory=dict)


class CopilotCli:
    """A session's events, the conversation Copilot CLI would send from them, and how a repair is written back."""

    def __init__(self, records: list[Record], warnings: list[str]) -> None:
        self.records = records
        self.warnings = warnings
        self.fixes: list[str] = []
        self.model: str | None = None
        self.provider = "openai_chat"
        self.items: list[_Reply | tuple[ChatMessage, int]] = []
        """The conversation in order: replies (each with its results) and other messages with their record."""
        chunked: _Reply | None = None
        for k, record in enumerate(records):
            data = record.data
            kind = data.get("type")
            event = data.get("data")
            if kind == "session.usage_record" and isinstance(event, Mapping) and not data.get("agentId"):
                usage = event.get("usage")
                endpoint = usage.get("apiEndpoint") if isinstance(usage, Mapping) else None
                self.provider = _ENDPOINTS.get(str(endpoint), self.provider)
            if kind not in _READ or not isinstance(event, Mapping) or data.get("agentId") \
                    or event.get("parentToolCallId"):
                continue  # not the conversation, or a sub-agent's
            with errors_at_line(record, _WHAT):
                chunked = self._read(k, record, kind, event, chunked)
        self.messages: list[ChatMessage] = []
        self.where: list[str] = []
        self.call_lines: list[int] = []
        """For each neutral message, the record of the reply it is or answers (-1 for other messages)."""
        for item in self.items:
            if isinstance(item, _Reply):
                self._emit(item.message, item.lines[0], item.lines[0])
                calls = [c.id for c in item.message.tool_calls]
                for call_id in sorted(item.results, key=calls.index):
                    result, line = item.results[call_id]
                    self._emit(result, line, item.lines[0])
            else:
                self._emit(item[0], item[1], -1)

    def _emit(self, message: ChatMessage, k: int, reply: int) -> None:
        self.messages.append(message)
        self.where.append(f"line {self.records[k].line}")
        self.call_lines.append(reply)

    def _read(self, k: int, record: Record, kind: str, event: Mapping[str, Any],
              chunked: _Reply | None) -> _Reply | None:
        if kind == "user.message":
            text = event.get("transformedContent")
            text = text if isinstance(text, str) else optional_text(record, "data.content", event.get("content"))
            self.items.append((ChatMessage(role="user", content=text), k))
            return None
        if kind == "session.compaction_complete":
            summary = event.get("summaryContent")
            if event.get("success") is True and isinstance(summary, str):
                self.items = [(ChatMessage(role="user", content=_SUMMARY_PREFIX + summary + _SUMMARY_SUFFIX), k)]
            return None
        if kind == "tool.execution_complete":
            self._read_result(k, record, event)
            return chunked
        return self._read_reply(k, record, event, chunked)

    def _read_reply(self, k: int, record: Record, event: Mapping[str, Any], chunked: _Reply | None) -> _Reply | None:
        if isinstance(event.get("model"), str):
            self.model = event["model"]
        text = optional_text(record, "data.content", event.get("content"))
        requests = event.get("toolRequests") or []
        expect(record, "data.toolRequests", requests, (list,), "a list of tool requests")
        calls = []
        for n, request in enumerate(requests):
            expect(record, f"data.toolRequests[{n}]", request, (dict,), "a tool request (an object)")
            calls.append(read_call(record, f"data.toolRequests[{n}].", request, id="toolCallId", name="name",
                                   arguments="arguments", expected="an object or a string"))
        api_call = event.get("apiCallId")
        if (chunked is not None and isinstance(event.get("chunkCount"), int) and isinstance(api_call, str)
                and self.records[chunked.lines[0]].data["data"].get("apiCallId") == api_call):
            joined = chunked.message
            chunked.message = ChatMessage(role="assistant", content=joined_text(joined.content) + text,
                                          tool_calls=(*joined.tool_calls, *calls))
            chunked.lines.append(k)
            return chunked
        if not text.strip() and not calls:
            return None  # an empty reply (only reasoning): nothing of it is sent
        reply = _Reply(ChatMessage(role="assistant", content=text, tool_calls=tuple(calls)), [k])
        self.items.append(reply)
        return reply if isinstance(event.get("chunkCount"), int) else None

    def _read_result(self, k: int, record: Record, event: Mapping[str, Any]) -> None:
        call_id = optional_text(record, "data.toolCallId", event.get("toolCallId"))
        success = event.get("success") is not False
        if success:
            result = event.get("result")
            content = result.get("content") if isinstance(result, Mapping) else None
            text = optional_text(record, "data.result.content", content)
        else:
            error = event.get("error")
            text = optional_text(record, "data.error.message", error.get("message") if isinstance(error, Mapping)
                                 else error)
        for item in reversed(self.items):  # its call's turn, wherever the result stands
            if isinstance(item, _Reply) and call_id not in item.results and any(
                    c.id == call_id for c in item.message.tool_calls):
                name = next(c.name for c in item.message.tool_calls if c.id == call_id)
                item.results[call_id] = (ChatMessage(role="tool", tool_call_id=call_id, tool_name=name,
                                                     is_error=not success, content=text), k)
                return
        self.items.append((ChatMessage(role="tool", tool_call_id=call_id, is_error=not success, content=text), k))

    # --- writing -------------------------------------------------------------------------------------------

    def session(self) -> Session:
        if not self.messages:
            raise InputError(f"no conversation messages in this {NAME} session")
        return Session(format=NAME, messages=self.messages, where=self.where, write=self._write_unrepaired,
                       provider=self.provider, model=self.model, repair_and_write=self._repair, warnings=self.warnings,
                       fixes=self.fixes)

    def _write_unrepaired(self, messages: Iterable[ChatMessage]) -> Iterator[str]:
        as_read_only(NAME, messages, self.messages)
        return self._lines([])

    def _repair(self, is_read_only: IsReadOnly | None) -> tuple[RepairResult, Iterator[str]]:
        self.fixes.clear()
        result = writable_repair(self.messages, is_read_only, ("moved", "dropped", "renamed", "notes"),
                                 "into a Copilot CLI session yet")
        answers = []
        for message, origin in zip(result.messages, result.origins()):
            if origin.kind == "synthetic":
                answers.append(message)
        return result, self._lines(answers)

    def _lines(self, answers: list[ChatMessage]) -> Iterator[str]:
        """The log as read, then the synthetic results appended, chained to its last event (as Copilot CLI appends
        the ones it makes up on resume). A torn last line is left out when something is appended after it."""
        records = self.records
        torn = bool(answers) and not records[-1].data and records[-1].raw.strip() != ""
        kept = records[:-1] if torn else records
        if torn:
            self.fixes.append(f"line {records[-1].line}: a torn last line left out (the appended events start on a "
                              "line of their own)")
        yield records[0].before
        for record in kept:
            yield record.raw + (record.end or ("\n" if answers else "")) + record.after
        last = next((r.data for r in reversed(kept) if isinstance(r.data.get("id"), str)), {})
        parent = last.get("id")
        for answer in answers:
            event_id = seeded_uuid(f"{parent}:{answer.tool_call_id}")
            event: dict[str, Any] = {"type": "tool.execution_complete", "data": {
                "toolCallId": answer.tool_call_id, "success": False,
                "error": {"message": joined_text(answer.content), "code": "interrupted"}}, "id": event_id}
            if "timestamp" in last:
                event["timestamp"] = last["timestamp"]
            event["parentId"] = parent
            yield compact_json(event) + "\n"
            parent = event_id
        if answers:
            self.fixes.append(f"appended {len(answers)} tool.execution_complete "
                              f"{'event' if len(answers) == 1 else 'events'} at the end of the log")


def read(lines: Iterable[str]) -> Session:
    """A Session from a Copilot CLI `events.jsonl` (a torn last line is kept and warned about)."""
    warnings: list[str] = []
    return CopilotCli(parse_records(lines, what=_WHAT, warnings=warnings), warnings).session()


FORMAT = FileFormat(
    NAME, "GitHub Copilot CLI sessions (~/.copilot/session-state/*/events.jsonl)", order=20, read_lines=read,
    holds_records=any_record(is_record),
)
"""The format table's entry."""
