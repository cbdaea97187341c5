"""Gemini CLI sessions: `~/.gemini/tmp/<project>/chats/session-*.jsonl`, and the older single-JSON chat files.

The JSON Lines file is a log Gemini CLI replays: a header line (`sessionId`, `projectHash`), then message
records (`type` `user`, `gemini`, `info`, `error`, `warning`) each replacing any earlier record with the same
`id` in its place, `{"$set": {...}}` metadata updates (a `messages` list there replaces every message), and
`{"$rewindTo": id}` (drops that message and all after it). The older `.json` file is one object with a
`messages` list. A `gemini` record's calls are its `toolCalls[]`; a completed call's response is stored in
`toolCalls[].result`, and (0.61) once more in a separate `user` record of `functionResponse` parts. Gemini CLI
sends both on resume (2 responses for 1 call, a 400): chatmend reads them as one response, warns, and repair
removes the second copy. User text Gemini CLI does not send (`<session_context>`, `/` commands) is not read,
nor are thoughts. The parts themselves (text, images, calls, responses) are read by the Gemini adapter.

Repair writes the records it changes where they stand (a synthetic response goes into its call's
`toolCalls[]` entry, as Gemini CLI writes one) and keeps every other line byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, HistoryError, RepairResult, ToolCall
from chatmend.files.io import InputError
from chatmend.files.session import Session
from chatmend.messages import plainest_content
from chatmend.providers.gemini.read import read_model, read_plain, read_response
from chatmend.providers.words import provider_words
from chatmend.repair import IsReadOnly
from chatmend.transcripts._records import (
    Record,
    as_read_only,
    compact_json,
    joined_text,
    parse_records,
    writable_repair,
)
from chatmend.transcripts.stores import FileFormat, any_record, home

__all__ = [
    "FORMAT", "NAME", "TOOL", "default_locations", "holds_session", "is_record", "is_session_file", "read",
    "read_document", "resume_command", "session_id",
]

NAME = "gemini_cli"
"""The format's name (`--from gemini_cli`)."""
TOOL = "Gemini CLI"
"""The tool's name, as a person knows it."""
_WHAT = "one Gemini CLI session record a line"
_IGNORED = ("/", "?", "<session_context>", "<hook_context>")
"""How user text Gemini CLI does not send on resume begins."""


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Gemini CLI keeps its project directories, whose `chats` folders hold the sessions (and its checkpoints):
    `$GEMINI_CLI_HOME/.gemini/tmp` (Gemini CLI's home override), else `~/.gemini/tmp`."""
    env = os.environ if env is None else env
    return [Path(env.get("GEMINI_CLI_HOME", "").strip() or home(env)) / ".gemini" / "tmp"]


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a session file: `session-*.jsonl` (or an older `session-*.json`) in a project's `chats` folder."""
    file = Path(path)
    return file.name.startswith("session-") and file.suffix in (".jsonl", ".json") and file.parent.name == "chats"


def session_id(path: str | os.PathLike[str]) -> str:
    """The session's id: the `sessionId` of its header line (the file's name holds only 8 characters of it)."""
    file = Path(path)
    try:
        with file.open(encoding="utf-8") as handle:
            head = json.loads(handle.readline() if file.suffix == ".jsonl" else handle.read())
    except (OSError, ValueError):
        return file.stem
    value = head.get("sessionId") if isinstance(head, dict) else None
    return value if isinstance(value, str) else file.stem


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the session (from the project's directory): `gemini --resume ID`."""
    return f"gemini --resume {session_id(path)}"


def holds_session(value: object) -> bool:
    """True for a Gemini CLI chat: an older single-JSON session or the header line of a JSON Lines one."""
    return isinstance(value, Mapping) and isinstance(value.get("sessionId"), str) and (
        isinstance(value.get("projectHash"), str) or (isinstance(value.get("messages"), list)
        and any(isinstance(m, Mapping) and m.get("type") in ("user", "gemini") for m in value["messages"])))


def is_record(value: Mapping[str, Any]) -> bool:
    """True for a line only a Gemini CLI session has (its header, a `$set` or `$rewindTo`)."""
    return holds_session(value) or "$rewindTo" in value or (
        isinstance(value.get("$set"), Mapping) and len(value) == 1)


@dataclass
class _Source:
    """Where a message record stands: record `line` (index), and `item` its place in an embedded list."""

    line: int
    item: int | None = None


def _parts(content: object) -> list[Any]:
    """A record's content as a list of parts (a string is one text part)."""
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content]
    return [content] if isinstance(content, Mapping) else []


def _text(parts: list[Any]) -> str:
    """The text Gemini CLI sees in a user record (to tell whether it is sent)."""
    return "".join(p["text"] for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str))


def _is_response(part: object) -> bool:
    """True for a `functionResponse` part."""
    return isinstance(part, Mapping) and isinstance(part.get("functionResponse"), Mapping)


def _responses(result: object, call: Mapping[str, Any], path: str) -> list[tuple[int, ChatMessage]]:
    """A toolCalls entry's stored result as (part index, tool message) responses, each read by the Gemini
    adapter (a result string is Gemini CLI's own: the response's text); a response without an id answers
    its entry's call."""
    own_id = str(call.get("id") or "")
    name = str(call.get("name") or "tool")
    is_error = call.get("status") == "error"
    if isinstance(result, str):
        return [(-1, ChatMessage(role="tool", tool_call_id=own_id, tool_name=name, is_error=is_error,
                                 content=result))]
    out = []
    for n, part in enumerate(_parts(result)):
        if _is_response(part):
            response = read_response(part, f"{path}.result[{n}]")
            out.append((n, replace(response, tool_call_id=response.tool_call_id or own_id, tool_name=name,
                                   is_error=is_error or response.is_error)))
    return out


class GeminiCli:
    """A session's records, what Gemini CLI would resume from them, and how a repair is written back."""

    def __init__(self, records: list[Record], document: dict[str, Any] | None = None,
                 warnings: list[str] | None = None) -> None:
        self.records = records
        self.document = document
        self.warnings = warnings if warnings is not None else []
        self.messages: list[ChatMessage] = []
        self.where: list[str] = []
        self.sources: list[tuple[str, _Source, int]] = []
        """For each neutral message: its kind (`user`, `model`, `result`, `response`), record, and index (the
        call's in toolCalls, the part's in content)."""
        self.fixes: list[str] = []
        """What repair fixed beyond the history, for its report (shared with the Session)."""
        self.result_copies: dict[tuple[int, int | None], list[tuple[int, int]]] = {}
        """(record, embedded item) -> (call, part) of toolCalls results that repeat another call's response."""
        self.duplicates: dict[tuple[int, int | None], list[int]] = {}
        """(record, embedded item) -> the parts of it that repeat a response its call's turn already holds."""
        self.model: str | None = None
        self._answered: set[str] = set()
        """The calls whose responses the last model record holds."""
        self._copies: list[str] = []
        self.problems: list[str] = []
        """Each copy of a response, as the 400 Gemini answers the body Gemini CLI sends with it (`check`)."""
        """The warnings about responses stored twice (a repair's report says it removed them instead)."""
        for source, record in self._replay():
            self._read(source, record)

    # --- reading -------------------------------------------------------------------------------------------

    def _replay(self) -> list[tuple[_Source, Mapping[str, Any]]]:
        """The message records Gemini CLI ends with, in its order, each with where its last version stands."""
        if self.document is not None:
            messages = self.document.get("messages")
            return [(_Source(0, j), m) for j, m in enumerate(messages if isinstance(messages, list) else [])
                    if isinstance(m, Mapping)]
        final: dict[str, tuple[_Source, Mapping[str, Any]]] = {}
        for k, record in enumerate(self.records):
            data = record.data
            if isinstance(data.get("$rewindTo"), str):
                ids = list(final)
                cut = ids.index(data["$rewindTo"]) if data["$rewindTo"] in ids else 0
                for gone in ids[cut:]:
                    del final[gone]
            elif isinstance(data.get("id"), str):
                final[data["id"]] = (_Source(k), data)  # a new version keeps the first one's place (a Map's set)
            else:
                embedded: Mapping[str, Any] = data["$set"] if isinstance(data.get("$set"), Mapping) else data
                messages = embedded.get("messages")
                if not isinstance(messages, list) or (embedded is data and not holds_session(data)):
                    continue
                if embedded is not data:
                    final = {}
                for j, m in enumerate(messages):
                    if isinstance(m, Mapping) and isinstance(m.get("id"), str):
                        final[m["id"]] = (_Source(k, j), m)
        return list(final.values())

    def _at(self, source: _Source) -> str:
        """Where a message record stands, for reports."""
        if self.document is not None:
            return f"messages[{source.item}]"
        line = f"line {self.records[source.line].line}"
        return line if source.item is None else f"{line} messages[{source.item}]"

    def _add(self, message: ChatMessage, kind: str, source: _Source, index: int) -> None:
        self.messages.append(message)
        self.where.append(self._at(source))
        self.sources.append((kind, source, index))

    def _read(self, source: _Source, record: Mapping[str, Any]) -> None:
        """One message record as Gemini CLI turns it into history on resume."""
        kind = record.get("type")
        parts = _parts(record.get("content"))
        if kind == "user":
            self._read_user(source, parts)
        elif kind == "gemini":
            self._read_model(source, record, parts)

    def _read_user(self, source: _Source, parts: list[Any]) -> None:
        answered = self._answered
        texts: list[Any] = []
        for n, part in enumerate(parts):
            if not _is_response(part):
                texts.append(part)
                continue
            response = read_response(part, f"{self._at(source)}: content[{n}]")
            call_id = response.tool_call_id or ""
            if call_id and call_id in answered:  # a response its call's turn already holds (toolCalls[].result)
                self.duplicates.setdefault((source.line, source.item), []).append(n)
                self._copies.append(f"{self._at(source)}: a second copy of the response to {call_id} (Gemini CLI "
                                    "would send both); repair removes it")
                self.warnings.append(self._copies[-1])
                self._copy_problem(source, call_id)
                continue
            self._add(response, "response", source, n)
            answered.add(call_id)
        text = _text(texts)
        if texts and text.strip() and not text.strip().startswith(_IGNORED):
            where = f"{self._at(source)}: content"
            read = [read_plain(part, f"{where}[{n}]") for n, part in enumerate(texts) if isinstance(part, Mapping)]
            self._add(ChatMessage(role="user", content=plainest_content([p for p in read if p is not None])),
                      "user", source, -1)

    def _read_model(self, source: _Source, record: Mapping[str, Any], parts: list[Any]) -> None:
        if isinstance(record.get("model"), str):
            self.model = record["model"]
        sent = [p for p in parts if isinstance(p, Mapping) and not p.get("thought")]  # Gemini CLI sends no thoughts
        model = read_model(sent, f"{self._at(source)}: content")
        tool_calls = [c for c in record.get("toolCalls") or [] if isinstance(c, Mapping)]
        calls = model.tool_calls or tuple(
            ToolCall(id=str(c.get("id") or ""), name=str(c.get("name") or "tool"),
                     arguments=args if isinstance(args := c.get("args"), dict) else {}) for c in tool_calls)
        self._answered = set()
        if not calls and not model.content:
            return  # Gemini CLI sends no turn for it
        self._add(replace(model, tool_calls=calls), "model", source, -1)
        own = {str(c.get("id") or "") for c in tool_calls}
        for n, call in enumerate(tool_calls):
            for p, response in _responses(call.get("result"), call, f"{self._at(source)}: toolCalls[{n}]"):
                call_id = response.tool_call_id or ""
                if call_id in self._answered or (call_id != str(call.get("id") or "") and call_id in own):
                    # another call's response (after a resume Gemini CLI stores the whole turn with each call)
                    self.result_copies.setdefault((source.line, source.item), []).append((n, p))
                    self._copies.append(f"{self._at(source)}: toolCalls[{n}] holds a copy of the response to "
                                        f"{call_id} (Gemini CLI would send both); repair removes it")
                    self.warnings.append(self._copies[-1])
                    self._copy_problem(source, call_id, f"toolCalls[{n}]")
                    continue
                self._add(response, "result", source, n)
                self._answered.add(call_id)

    def _copy_problem(self, source: _Source, call_id: str, where: str = "") -> None:
        """A stored copy of a response as `check` says it: Gemini's 400 for the body Gemini CLI would send."""
        said = " ".join(provider_words("gemini", orphans=[call_id]))
        self.problems.append(f"{self._at(source)}: {where + ': ' if where else ''}GE1: {said} (a second response "
                             f"to {call_id}, which Gemini CLI would send)")

    # --- writing -------------------------------------------------------------------------------------------

    def session(self) -> Session:
        if not self.messages:
            raise InputError(f"no conversation messages in this {NAME} session")
        return Session(format=NAME, messages=self.messages, where=self.where, write=self._write_unrepaired,
                       provider="gemini", model=self.model, repair_and_write=self._repair, warnings=self.warnings,
                       fixes=self.fixes, problems=self.problems)

    def _write_unrepaired(self, messages: Iterable[ChatMessage]) -> Iterator[str]:
        as_read_only(NAME, messages, self.messages)
        return self._lines({}, set())

    def _repair(self, is_read_only: IsReadOnly | None) -> tuple[RepairResult, Iterator[str]]:
        result = writable_repair(self.messages, is_read_only, ("moved", "dropped", "renamed"),
                                 "back into a Gemini CLI session yet")
        changed: dict[int, dict[str, Any]] = {}
        for message, origin in zip(result.messages, result.origins()):
            if origin.kind == "synthetic":
                assert origin.call_index is not None
                self._answer(changed, origin.message_index, origin.call_index, message)
            elif origin.kind == "note":
                self._note(changed, origin.message_index, message)
        removed: set[int] = set()
        emptied: dict[int, list[int]] = {}  # record -> embedded items left with no part
        self.fixes.clear()
        self.warnings[:] = [w for w in self.warnings if w not in self._copies]  # said as fixed below
        for (k, item), gone in self.duplicates.items():
            self.fixes.append(f"removed {len(gone)} second {'copy' if len(gone) == 1 else 'copies'} of a stored "
                              f"response at {self._at(_Source(k, item))} (Gemini CLI would send both)")
            data = self._data(changed, _Source(k, item))
            content = [p for n, p in enumerate(_parts(data.get("content"))) if n not in gone]
            if content:
                data["content"] = content
            elif item is None:
                removed.add(k)
            else:
                emptied.setdefault(k, []).append(item)
        for (k, item), copies in self.result_copies.items():
            self.fixes.append(f"removed {len(copies)} {'copy' if len(copies) == 1 else 'copies'} of other calls' "
                              f"responses from toolCalls at {self._at(_Source(k, item))} (Gemini CLI would send both)")
            calls = self._data(changed, _Source(k, item))["toolCalls"]
            for n in {n for n, _ in copies}:
                drop = {p for m, p in copies if m == n}
                calls[n]["result"] = [part for p, part in enumerate(_parts(calls[n]["result"])) if p not in drop]
        for k, items in emptied.items():
            holder = changed[k] if self.document is not None or "$set" not in changed[k] else changed[k]["$set"]
            holder["messages"] = [m for j, m in enumerate(holder["messages"]) if j not in items]
        return result, self._lines(changed, removed)

    def _data(self, changed: dict[int, dict[str, Any]], source: _Source) -> dict[str, Any]:
        """The message record at `source`, as a copy to change (the copy of its line is kept in `changed`)."""
        if source.line not in changed:
            base = self.document if self.document is not None else self.records[source.line].data
            changed[source.line] = json.loads(json.dumps(base))
        data = changed[source.line]
        if self.document is None and source.item is None:
            return data
        holder = data if self.document is not None or "$set" not in data else data["$set"]
        message: dict[str, Any] = holder["messages"][source.item]
        return message

    def _answer(self, changed: dict[int, dict[str, Any]], index: int, call_index: int, result: ChatMessage) -> None:
        """A synthetic response stored with its call, as Gemini CLI stores a cancelled one."""
        _, source, _ = self.sources[index]
        data = self._data(changed, source)
        call = self.messages[index].tool_calls[call_index]
        response = {"functionResponse": {"id": call.id, "name": call.name,
                                         "response": {"error": result.content if isinstance(result.content, str)
                                                      else ""}}}
        entries = data.setdefault("toolCalls", [])
        entry = next((e for e in entries if isinstance(e, dict) and e.get("id") == call.id and not e.get("result")),
                     None)
        if entry is None:
            entry = {"id": call.id, "name": call.name, "args": call.arguments}
            entries.append(entry)
        entry["result"] = [response]
        entry["status"] = "cancelled"

    def _note(self, changed: dict[int, dict[str, Any]], index: int, note: ChatMessage) -> None:
        """An orphan response part replaced by the note's text."""
        kind, source, n = self.sources[index]
        if kind != "response":
            raise HistoryError(f"{self.where[index]}: an orphan stored result cannot be turned into a note here; "
                               "write it with --to chatmend or a provider")
        data = self._data(changed, source)
        text = joined_text(note.content)
        content = _parts(data.get("content"))
        content[n] = {"text": text}
        data["content"] = content

    def _lines(self, changed: dict[int, dict[str, Any]], removed: set[int]) -> Iterator[str]:
        """The file: unchanged lines as read, changed records rewritten in their place, removed ones left out."""
        if self.document is not None:
            if not changed:
                yield self.records[0].raw
                return
            yield json.dumps(changed[0], ensure_ascii=False, indent=2)
            return
        yield self.records[0].before
        last = len(self.records) - 1
        for k, record in enumerate(self.records):
            if k in removed:
                continue
            text = compact_json(changed[k]) if k in changed else record.raw
            end = record.end if record.end or k == last else "\n"
            yield text + end + record.after


def read(lines: Iterable[str]) -> Session:
    """A Session from a Gemini CLI JSON Lines session (a line that is not a record is kept and warned about)."""
    warnings: list[str] = []
    return GeminiCli(parse_records(lines, what=_WHAT, warnings=warnings), warnings=warnings).session()


def read_document(value: Any, text: str) -> Session:
    """A Session from an older single-JSON Gemini CLI chat file (`value`, its parsed JSON, and `text`, its content,
    written back as is when nothing changes)."""
    if not isinstance(value, dict):
        raise InputError(f"a single JSON document; {NAME} sessions are JSON Lines (one record a line)")
    record = Record(1, text, value)
    return GeminiCli([record], document=value).session()


FORMAT = FileFormat(NAME, "Gemini CLI sessions (~/.gemini/tmp/*/chats/session-*.jsonl, and the older .json chats)",
                    order=30, read_lines=read, read_document=read_document, holds_records=any_record(is_record),
                    holds_document=holds_session)
"""The format table's entry."""
