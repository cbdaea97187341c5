"""OpenAI Agents SDK `SQLiteSession` databases: what an agent built on the SDK persists between runs.

`SQLiteSession(session_id, db_path)` keeps table `agent_sessions` (session_id, created_at, updated_at) and
`agent_messages` (id INTEGER autoincrement, session_id, message_data: one OpenAI Responses input item as JSON,
created_at); `get_items()` returns a session's items in `id` order (rows that are not JSON are skipped). Custom
table names (`sessions_table=`, `messages_table=`) are not recognized.

A session is repaired as a Responses `input` list (`openai_responses`' `repair_body`: the items repair leaves
alone are kept as they are). The items keep their rows: the rows before the first item repair changes are
untouched; from there on, each row takes the repaired list's item at its place (rewritten only when it
differs), and what repair adds (an interrupted call's `function_call_output`) goes into new rows at the end, so
`get_items()` returns exactly the repaired list.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from chatmend import RepairResult, providers
from chatmend.exceptions import ChatmendError
from chatmend.files.bodies import read_provider
from chatmend.files.io import InputError
from chatmend.repair import IsReadOnly
from chatmend.transcripts.sqlite_stores import RowDelete, RowInsert, RowUpdate, SqliteStore, checked, sql_timestamp
from chatmend.transcripts.stores import StoredSession, WriteBack, register, store_session

__all__ = ["NAME", "AgentsSdkSession"]

NAME = "agents_sdk"
_PROVIDER = "openai_responses"


@register
class AgentsSdkSession(SqliteStore):
    """An OpenAI Agents SDK `SQLiteSession` database (default table names)."""

    name: ClassVar[str] = NAME
    tool: ClassVar[str] = "Agents SDK"
    description: ClassVar[str] = "OpenAI Agents SDK SQLiteSession databases (agent_sessions, agent_messages)"
    tables: ClassVar[frozenset[str]] = frozenset({"agent_sessions", "agent_messages"})

    def sessions(self) -> list[StoredSession]:
        listed = self.query("SELECT session_id, updated_at FROM agent_sessions ORDER BY created_at, session_id")
        known = {row[0] for row in listed}
        listed += [(row[0], None) for row in self.query(
            "SELECT session_id FROM agent_messages GROUP BY session_id ORDER BY MIN(id)") if row[0] not in known]
        out = []
        for session_id, updated in listed:
            rows, as_read = self.query_as_read(
                "SELECT id, message_data FROM agent_messages WHERE session_id = ? ORDER BY id ASC", (session_id,))
            stored = self._session(str(session_id), rows, sql_timestamp(updated) or self.modified())
            if stored is not None:
                stored.repair = checked(stored.repair, [as_read])  # written only while its rows are as read
                out.append(stored)
        return out

    def _session(self, session_id: str, rows: list[tuple[Any, ...]], modified: float) -> StoredSession | None:
        items: list[Any] = []
        ids: list[int] = []
        raws: list[str] = []
        warnings = []
        for row_id, raw in rows:
            try:
                item = json.loads(raw)
            except (TypeError, ValueError):
                warnings.append(f"row {row_id}: not JSON (the SDK skips it); kept as it is")
                continue
            items.append(item)
            ids.append(row_id)
            raws.append(raw)
        if not items:
            return None
        adapter = providers.get(_PROVIDER)

        def body_repair(is_read_only: IsReadOnly | None) -> Any:
            try:
                return adapter.repair_body({"input": items}, is_read_only=is_read_only)
            except ChatmendError as exc:
                raise InputError(f"session {session_id}: {exc}") from None

        done = body_repair(None)
        history = done.history
        if done.item_of:
            where = [f"row {ids[k]}" for k in done.item_of]
        else:  # located as a Responses list is: by row where each item is one message, else by position
            read = read_provider(_PROVIDER, items, shape="list", locations=[f"row {i}" for i in ids])
            where = read.where if read.messages == history else [f"message {i}" for i in range(len(history))]
        session = store_session(NAME, _PROVIDER, history, where, warnings=warnings)

        def repair(is_read_only: IsReadOnly | None) -> tuple[RepairResult, WriteBack]:
            fixed = done if is_read_only is None else body_repair(is_read_only)
            return fixed.result, self._changes(session_id, ids, raws, items, fixed.body["input"])

        return StoredSession(id=session_id, title="", modified=modified, session=session, repair=repair,
                             resume=f"SQLiteSession({session_id!r}, {self.path!r})")

    @staticmethod
    def _changes(session_id: str, ids: list[int], raws: list[str], old: list[Any], new: list[Any]) -> WriteBack:
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a is not b), min(len(old), len(new)))
        changes: list[Any] = []
        for i in range(first, max(len(old), len(new))):
            if i < len(old) and i < len(new):
                text = json.dumps(new[i])  # as the SDK writes an item
                if new[i] is not old[i] and text != raws[i]:
                    changes.append(RowUpdate("agent_messages", (("id", ids[i]),), "message_data", raws[i], text))
            elif i < len(new):
                changes.append(RowInsert("agent_messages", (("session_id", session_id),
                                                            ("message_data", json.dumps(new[i])))))
            else:
                changes.append(RowDelete("agent_messages", (("id", ids[i]),), "message_data", raws[i]))
        if not changes:
            return WriteBack()
        updated = sum(isinstance(c, RowUpdate) for c in changes)
        added = sum(isinstance(c, RowInsert) for c in changes)
        removed = len(changes) - updated - added
        said = [f"{n} {what}" for n, what in ((updated, "rewritten"), (added, "added"), (removed, "removed")) if n]
        return WriteBack(changes, [f"agent_messages rows of {session_id}: {', '.join(said)} (every row before the "
                                   "first change as it was)"])

