"""Goose sessions: `sessions.db` (`$XDG_DATA_HOME/goose/sessions/sessions.db`, else
`~/.local/share/goose/sessions/sessions.db`; WAL), read from Goose's public schema (block/goose,
`crates/goose/src/session/session_manager.rs` and `conversation/message.rs`).

Table `sessions` (id, name, description, working_dir, updated_at, provider_name, ...) and `messages` (id
INTEGER autoincrement, message_id, session_id, role `user` or `assistant`, content_json: the message's
`MessageContent` list, created_timestamp, ...), in `id` order. A `toolRequest` content (`id`,
`toolCall: {status: "success", value: {name, arguments}}`) is a call, a `toolResponse` (`id`, `toolResult:
{status: "success", value: {content: [...]}}` or `{status: "error", error}`) in a later user message its
result; `text` is text; thinking, images and Goose's own notifications are not read (kept as they are).

Repair answers an interrupted call with an error `toolResponse`: put into the user message that follows the
call, after the responses to the calls before it (as Goose itself sends results), or, when none follows, in a
new user message row at the end. Every
other row is unchanged. Not covered: the older per-session `.jsonl` files, results moved, orphan results (a
repair that needs those changes is refused, naming them), custom data paths (`GOOSE_PATH_ROOT`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from chatmend import ChatMessage, HistoryError, RepairResult, TextPart, ToolCall
from chatmend.repair import IsReadOnly
from chatmend.transcripts._records import writable_repair
from chatmend.transcripts.sqlite_stores import RowInsert, RowUpdate, SqliteStore, checked, sql_timestamp, stored_json
from chatmend.transcripts.stores import StoredSession, WriteBack, data_home, existing_files, register, store_session

__all__ = ["NAME", "GooseDatabase"]

NAME = "goose"


def _provider(name: object) -> str:
    """The wire format Goose speaks to its provider (by `sessions.provider_name`)."""
    return {"anthropic": "anthropic", "google": "gemini", "gcp_vertex_ai": "gemini"}.get(str(name), "openai_chat")


@dataclass
class _Row:
    id: int
    role: str
    raw: str
    content: list[Any]
    created: Any


def _result_text(result: object) -> tuple[str, bool]:
    """A `toolResult` as (text, is_error)."""
    if not isinstance(result, Mapping):
        return json.dumps(result), False
    if result.get("status") == "error":
        return str(result.get("error") or ""), True
    value = result.get("value")
    content = value.get("content") if isinstance(value, Mapping) else value
    texts = [c["text"] for c in content or [] if isinstance(c, Mapping) and isinstance(c.get("text"), str)] \
        if isinstance(content, list) else []
    error = isinstance(value, Mapping) and value.get("isError") is True
    return "\n".join(texts) if texts else json.dumps(value, ensure_ascii=False), error


@register
class GooseDatabase(SqliteStore):
    """Goose's `sessions.db`."""

    name: ClassVar[str] = NAME
    tool: ClassVar[str] = "Goose"
    description: ClassVar[str] = "Goose sessions (~/.local/share/goose/sessions/sessions.db)"
    tables: ClassVar[frozenset[str]] = frozenset({"sessions", "messages", "schema_version"})
    holder: ClassVar[str] = "a running Goose"

    @classmethod
    def default_paths(cls, env: Mapping[str, str]) -> list[str]:
        return existing_files([os.path.join(data_home(env), "goose", "sessions", "sessions.db")])

    def sessions(self) -> list[StoredSession]:
        out = []
        for session_id, title, updated, provider in self.query(
                "SELECT id, name, updated_at, provider_name FROM sessions ORDER BY created_at, id"):
            rows = []
            found, as_read = self.query_as_read(
                "SELECT id, role, content_json, created_timestamp FROM messages WHERE session_id = ? ORDER BY id",
                (session_id,))
            for row_id, role, raw, created in found:
                where = f"session {session_id} message row {row_id}"
                content = stored_json(raw, f"{where}: content_json", list,
                                      "a JSON list (Goose's message contents)")
                rows.append(_Row(row_id, str(role), raw, content, created))
            if rows:
                stored = self._stored(str(session_id), title if isinstance(title, str) else "", updated,
                                      _provider(provider), rows)
                stored.repair = checked(stored.repair, [as_read])  # written only while its rows are as read
                out.append(stored)
        return out

    def _stored(self, session_id: str, title: str, updated: Any, provider: str, rows: list[_Row]) -> StoredSession:
        messages: list[ChatMessage] = []
        where: list[str] = []
        origin: list[int] = []  # the row index of each message
        for k, row in enumerate(rows):
            at = f"row {row.id}"
            texts = [c["text"] for c in row.content if isinstance(c, Mapping) and c.get("type") == "text"
                     and isinstance(c.get("text"), str)]
            if row.role == "assistant":
                calls = []
                for c in row.content:
                    if isinstance(c, Mapping) and c.get("type") == "toolRequest":
                        call = c.get("toolCall")
                        value = call.get("value") if isinstance(call, Mapping) else None
                        name = value.get("name") if isinstance(value, Mapping) else None
                        arguments = value.get("arguments") if isinstance(value, Mapping) else None
                        calls.append(ToolCall(id=str(c.get("id") or ""), name=name if isinstance(name, str) and name
                                              else "invalid", arguments=arguments if isinstance(arguments, dict)
                                              else {}))
                if texts or calls:
                    messages.append(ChatMessage(role="assistant", content="".join(texts), tool_calls=tuple(calls)))
                    where.append(at)
                    origin.append(k)
                continue
            for c in row.content:
                if isinstance(c, Mapping) and c.get("type") == "toolResponse":
                    text, error = _result_text(c.get("toolResult"))
                    messages.append(ChatMessage(role="tool", tool_call_id=str(c.get("id") or ""), is_error=error,
                                                content=text))
                    where.append(at)
                    origin.append(k)
            if any(t.strip() for t in texts):
                messages.append(ChatMessage(role="user", content=tuple(TextPart(text=t) for t in texts)
                                            if len(texts) > 1 else texts[0]))
                where.append(at)
                origin.append(k)
        session = store_session(NAME, provider, messages, where)

        def repair(is_read_only: IsReadOnly | None) -> tuple[RepairResult, WriteBack]:
            result = writable_repair(messages, is_read_only, ("moved", "renamed", "dropped", "notes"),
                                     "back into a Goose session")
            added: dict[int, list[tuple[int, int, Any]]] = {}  # row index -> (message, call index, response)
            for message, found in zip(result.messages, result.origins()):
                if found.kind != "synthetic":
                    continue
                assert found.call_index is not None
                call = messages[found.message_index].tool_calls[found.call_index]
                text = message.content if isinstance(message.content, str) else ""
                row = origin[found.message_index] + 1
                if row < len(rows) and rows[row].role != "user":
                    raise HistoryError(f"row {rows[row - 1].id}: the call {call.id} is followed by another assistant "
                                       "message, which leaves no place in a Goose session to answer it; write it "
                                       "with --to chatmend or a provider")
                target = row if row < len(rows) else len(rows)
                added.setdefault(target, []).append((found.message_index, found.call_index, {
                    "type": "toolResponse", "id": call.id, "toolResult": {"status": "error", "error": text}}))
            changes: list[Any] = []
            for target, responses in sorted(added.items()):
                if target < len(rows):
                    row_ = rows[target]
                    content = list(row_.content)
                    for mi, ci, response in responses:  # after the responses to the calls before it
                        earlier = {c.id for c in messages[mi].tool_calls[:ci]}
                        at = max((k + 1 for k, c in enumerate(content) if isinstance(c, Mapping)
                                  and c.get("type") == "toolResponse" and c.get("id") in earlier), default=0)
                        content.insert(at, response)
                    changes.append(RowUpdate("messages", (("id", row_.id),), "content_json", row_.raw,
                                             json.dumps(content, ensure_ascii=False, separators=(",", ":"))))
                else:
                    changes.append(RowInsert("messages", (
                        ("session_id", session_id), ("role", "user"),
                        ("content_json", json.dumps([r for _, _, r in responses], ensure_ascii=False,
                                                    separators=(",", ":"))),
                        ("created_timestamp", rows[-1].created))))
            fixes = [f"{len(changes)} messages {'row' if len(changes) == 1 else 'rows'} written (every other row as "
                     "it was)"] if changes else []
            return result, WriteBack(changes, fixes)

        modified = sql_timestamp(updated) or self.modified()
        return StoredSession(id=session_id, title=title, modified=modified, session=session, repair=repair,
                             resume=f"goose session --resume --session-id {session_id}")
