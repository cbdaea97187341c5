"""Crush sessions: the SQLite database `<project>/.crush/crush.db` (WAL), read from Crush's own code
(charmbracelet/crush: `internal/db/migrations/*.sql`, `internal/message/message.go` and `content.go`,
`internal/agent/agent.go`).

Table `sessions` (id, parent_session_id, title, summary_message_id, created_at, updated_at, ...) and `messages`
(id, session_id, role `user` / `assistant` / `tool`, `parts`: a JSON list of `{"type", "data"}`, created_at in
seconds, ...). Crush lists a session's messages `ORDER BY created_at` (the row order breaks ties) and, when the
session was summarized, sends them from its summary message on. A `tool_call` part (`id`, `name`, `input`: JSON
text) of an assistant message is a call, a `tool_result` part (`tool_call_id`, `content`, `is_error`) of a tool
message its result; `text`, `reasoning`, `shell_command`, `binary` and `finish` parts are content or kept as they
are. Crush skips an assistant message with no text, reasoning or calls (cancelled before it said anything).

Crush since 0.59 heals a session on resume by itself, only in what it sends: it drops a result whose call is gone
and answers a call left without a result ("tool call was interrupted..."); older Crush sent both as stored. So the
store is read as it is, a result whose call is gone left out (as Crush sends it, with a warning), and repair writes
each missing result into the store: into the tool message right after the call's message (after the results of
the calls before it), or as a new tool message row, one for each such reply (as Crush writes the results of a
cancelled turn: a `tool_result` part with `is_error`, then a `finish` part). Every other row, and every other part
byte for byte, is unchanged. A repair that would move a result, rename an id or make a note of a result is refused
(naming why); write it with `--to chatmend` or a provider.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from chatmend import ChatMessage, HistoryError, RepairResult, TextPart, ThinkingPart, ToolCall
from chatmend.files.io import InputError, json_kind
from chatmend.messages import Part
from chatmend.repair import IsReadOnly
from chatmend.transcripts._records import writable_repair
from chatmend.transcripts.sqlite_stores import RowInsert, RowUpdate, SqliteStore, checked, stored_json
from chatmend.transcripts.stores import StoredSession, WriteBack, data_home, existing_files, register, store_session

__all__ = ["NAME", "CrushDatabase", "go_json", "parts_with"]

NAME = "crush"
_PART_TYPES = ("reasoning", "text", "image_url", "binary", "tool_call", "tool_result", "finish", "shell_command")
"""Every part type Crush's `unmarshalParts` reads; any other makes Crush refuse the message."""


def _provider(provider: object) -> str:
    """The wire format Crush speaks to a provider, by the provider id a message records (Crush's own types:
    anthropic, openai, gemini, bedrock, vertexai...; every other is an OpenAI-compatible endpoint)."""
    return {"anthropic": "anthropic", "gemini": "gemini", "google": "gemini", "vertexai": "gemini",
            "bedrock": "bedrock", "openai": "openai_responses"}.get(str(provider or ""), "openai_chat")


def go_json(value: Any) -> str:
    """JSON as Go's `encoding/json` writes it: compact, non-ASCII kept, `<`, `>`, `&`, U+2028 and U+2029 escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _element_spans(raw: str) -> list[tuple[int, int]]:
    """Where each element of the JSON array `raw` is (start, end), to splice parts in byte for byte."""
    decoder = json.JSONDecoder()
    spans: list[tuple[int, int]] = []
    at = raw.index("[") + 1
    while True:
        while raw[at] in " \t\r\n,":
            at += 1
        if raw[at] == "]":
            return spans
        _, end = decoder.raw_decode(raw, at)
        spans.append((at, end))
        at = end


def parts_with(raw: str, inserts: list[tuple[int, dict[str, Any]]]) -> str:
    """The parts JSON `raw` with each new part put before the element at its index, parts at one index in the order
    given (every other element kept as it is written)."""
    spans = _element_spans(raw)
    texts = [raw[start:end] for start, end in spans]
    for _, (index, part) in sorted(enumerate(inserts), key=lambda x: (x[1][0], x[0]), reverse=True):
        texts.insert(index, go_json(part))  # from the end, so parts put at one index stay in their given order
    return "[" + ",".join(texts) + "]"


def _result_part(call_id: str, name: str, text: str) -> dict[str, Any]:
    """A `tool_result` part as Crush marshals its `ToolResult` (every field, in the struct's order)."""
    return {"type": "tool_result", "data": {"tool_call_id": call_id, "name": name, "content": text, "data": "",
                                            "mime_type": "", "metadata": "", "is_error": True}}


_FINISH = {"type": "finish", "data": {"reason": "stop", "time": 0}}
"""The part Crush's `messages.Create` appends to every message it creates that is not an assistant's."""


@dataclass
class _Row:
    rowid: int
    id: str
    role: str
    raw: str
    parts: list[dict[str, Any]]
    created: int
    where: str

    def of(self, kind: str) -> list[tuple[int, dict[str, Any]]]:
        """(index, data) of each part of a type."""
        return [(k, p["data"]) for k, p in enumerate(self.parts) if p.get("type") == kind]


def _parts(raw: object, where: str) -> list[dict[str, Any]]:
    value: list[Any] = stored_json(raw, f"{where}: parts", list, "a JSON list (Crush's message parts)")
    for k, part in enumerate(value):
        kind = part.get("type") if isinstance(part, dict) else part
        if kind not in _PART_TYPES or not isinstance(part, dict) or not isinstance(part.get("data"), dict):
            raise InputError(f"{where}: parts[{k}]: expected {{\"type\": one of {', '.join(_PART_TYPES)}, "
                             f"\"data\": {{...}}}}, got {json_kind(kind)}")
    return value


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def _arguments(text: str) -> dict[str, Any] | str:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, dict) else text


class _Reader:
    """One session's messages as Crush sends them, and where each came from."""

    def __init__(self, rows: list[_Row], summary_id: object) -> None:
        self.rows = rows
        self.messages: list[ChatMessage] = []
        self.where: list[str] = []
        self.origin: list[int] = []  # the row index of each message
        self.warnings: list[str] = []
        start = next((k for k, r in enumerate(rows) if summary_id and r.id == summary_id), 0)
        calls = {c.get("id") for r in rows[start:] if r.role == "assistant" for _, c in r.of("tool_call")}
        for k in range(start, len(rows)):
            self._read(k, "user" if k == start and start > 0 else rows[k].role, calls)

    def _add(self, message: ChatMessage, where: str, k: int) -> None:
        self.messages.append(message)
        self.where.append(where)
        self.origin.append(k)

    def _read(self, k: int, role: str, calls: set[Any]) -> None:
        row = self.rows[k]
        if not row.parts:
            return
        texts = [_text(d, "text") for _, d in row.of("text")]
        text = texts[0].strip() if texts else ""  # Crush sends a message's first text part
        if role == "user":
            shells = [f"$ {_text(d, 'command')}\n{_text(d, 'output')}\n(exit code {d.get('exit_code', 0)})"
                      for _, d in row.of("shell_command")]
            said = "\n\n".join(t for t in [text, *shells] if t)
            attached = row.of("binary") + row.of("image_url")
            self._add(ChatMessage(role="user", content=said or ("[attachment]" if attached else "")), row.where, k)
        elif role == "assistant":
            reasoning = next((_text(d, "thinking") for _, d in row.of("reasoning")), "")
            tool_calls = tuple(ToolCall(id=_text(d, "id"), name=_text(d, "name") or "invalid",
                                        arguments=_arguments(_text(d, "input")), raw_arguments=_text(d, "input"))
                               for _, d in row.of("tool_call"))
            if not text and not reasoning and not tool_calls:
                return  # Crush skips it: cancelled before it said anything
            content: list[Part] = [ThinkingPart(text=reasoning)] if reasoning else []
            if text:
                content.append(TextPart(text=text))
            self._add(ChatMessage(role="assistant", content=tuple(content) if reasoning else text,
                                  tool_calls=tool_calls), row.where, k)
        elif role == "tool":
            for n, data in row.of("tool_result"):
                call_id = _text(data, "tool_call_id")
                if call_id not in calls:
                    self.warnings.append(f"{row.where} part {n}: the result of {call_id or 'a call with no id'} "
                                         "has no call in the session; Crush leaves it out of what it sends")
                    continue
                self._add(ChatMessage(role="tool", tool_call_id=call_id, tool_name=_text(data, "name") or None,
                                      is_error=data.get("is_error") is True, content=_text(data, "content")),
                          f"{row.where} part {n}", k)
        else:
            raise InputError(f"{row.where}: role: expected 'user', 'assistant' or 'tool', got {role!r}")

    def repair(self, session_id: str, is_read_only: IsReadOnly | None) -> tuple[RepairResult, WriteBack]:
        result = writable_repair(self.messages, is_read_only, ("moved", "renamed", "dropped", "notes"),
                                 "back into a Crush session")
        added: dict[int, list[tuple[int, dict[str, Any]]]] = {}  # assistant row index -> (call index, part)
        for message, found in zip(result.messages, result.origins()):
            if found.kind != "synthetic":
                continue
            assert found.call_index is not None
            call = self.messages[found.message_index].tool_calls[found.call_index]
            text = message.content if isinstance(message.content, str) else ""
            added.setdefault(self.origin[found.message_index], []).append(
                (found.call_index, _result_part(call.id, call.name, text)))
        changes: list[Any] = []
        for k, results in sorted(added.items()):
            changes.append(self._write(session_id, k, results))
        fixes = [f"{len(changes)} messages {'row' if len(changes) == 1 else 'rows'} written (every other row as "
                 "it was)"] if changes else []
        return result, WriteBack(changes, fixes)

    def _write(self, session_id: str, k: int, results: list[tuple[int, dict[str, Any]]]) -> Any:
        """The change that puts the synthetic results of the calls of row `k` right after it."""
        reply = self.rows[k]
        calls = [_text(d, "id") for _, d in reply.of("tool_call")]
        following = self.rows[k + 1] if k + 1 < len(self.rows) else None
        if following is not None and following.role == "tool":
            inserts = []
            for call_index, part in results:  # after the results of the calls before it
                earlier = set(calls[:call_index])
                at = max((n + 1 for n, d in following.of("tool_result") if _text(d, "tool_call_id") in earlier),
                         default=0)
                inserts.append((at, part))
            return RowUpdate("messages", (("id", following.id),), "parts", following.raw,
                             parts_with(following.raw, inserts))
        if following is not None and following.created == reply.created:
            raise HistoryError(f"{reply.where}: the message after it has the same created_at, so a new result "
                               "message cannot be ordered between them; write it with --to chatmend or a provider")
        row_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"chatmend:crush:{session_id}:{reply.id}"))
        return RowInsert("messages", (
            ("id", row_id), ("session_id", session_id), ("role", "tool"),
            ("parts", go_json([part for _, part in results] + [_FINISH])), ("model", ""),
            ("created_at", reply.created), ("updated_at", reply.created), ("is_summary_message", 0)))


@register
class CrushDatabase(SqliteStore):
    """Crush's `crush.db`."""

    name: ClassVar[str] = NAME
    tool: ClassVar[str] = "Crush"
    description: ClassVar[str] = "Crush sessions (<project>/.crush/crush.db)"
    tables: ClassVar[frozenset[str]] = frozenset({"sessions", "messages", "files", "goose_db_version"})
    holder: ClassVar[str] = "a running Crush"

    @classmethod
    def default_paths(cls, env: Mapping[str, str]) -> list[str]:
        """The data directories of the projects Crush knows (its `projects.json`), and the current directory's."""
        data = env.get("CRUSH_GLOBAL_DATA") or os.path.join(data_home(env), "crush")
        folders = [os.path.join(env["PWD"], ".crush")] if env.get("PWD") else []
        try:
            with open(os.path.join(data, "projects.json"), encoding="utf-8") as handle:
                listed = json.load(handle).get("projects") or []
            folders += [p["data_dir"] for p in listed if isinstance(p, dict) and isinstance(p.get("data_dir"), str)]
        except (OSError, ValueError, AttributeError):
            pass  # no projects.json (or not Crush's): the current directory only
        return existing_files(os.path.join(folder, "crush.db") for folder in dict.fromkeys(folders))

    def sessions(self) -> list[StoredSession]:
        out = []
        for session_id, title, updated, summary_id in self.query(
                "SELECT id, title, updated_at, summary_message_id FROM sessions ORDER BY created_at, rowid"):
            found, as_read = self.query_as_read(
                "SELECT rowid, id, role, parts, created_at, provider, model FROM messages WHERE session_id = ? "
                "ORDER BY created_at, rowid", (session_id,))
            if not found:
                continue
            rows = []
            provider = model = None
            for rowid, message_id, role, raw, created, provider_, model_ in found:
                where = f"message {message_id}"
                rows.append(_Row(rowid, str(message_id), str(role), raw, _parts(raw, where), created, where))
                if role == "assistant" and provider_:
                    provider, model = provider_, model_
            reader = _Reader(rows, summary_id)
            session = store_session(NAME, _provider(provider), reader.messages, reader.where,
                                    model=model if isinstance(model, str) and model else None,
                                    warnings=reader.warnings)
            sid = str(session_id)

            def repair(is_read_only: IsReadOnly | None, reader: _Reader = reader,
                       sid: str = sid) -> tuple[RepairResult, WriteBack]:
                return reader.repair(sid, is_read_only)

            project = os.path.dirname(os.path.dirname(os.path.abspath(self.path)))
            out.append(StoredSession(
                id=sid, title=title if isinstance(title, str) else "",
                modified=updated / 1000 if isinstance(updated, int) and updated > 10**11 else float(updated or 0)
                or self.modified(),
                session=session, repair=checked(repair, [as_read]),
                resume=f"cd {project} && crush --session {sid}"))
        return out
