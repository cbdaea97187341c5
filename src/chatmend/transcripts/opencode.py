"""opencode sessions: the SQLite database (1.2 and later) and the older `storage/` folder of JSON files.

The database (`$OPENCODE_DB`, else `$XDG_DATA_HOME/opencode/opencode.db`, else
`~/.local/share/opencode/opencode.db`; WAL) holds every session: table `session` (id, title, time_updated),
`message` (id, session_id, time_created, `data`: the message's JSON, `role` `user` or `assistant`) and `part`
(id, message_id, session_id, time_created, `data`: the part's JSON). The older layout keeps the same JSON as
files: `storage/session/<project>/<session>.json`, `storage/message/<session>/<message>.json`,
`storage/part/<message>/<part>.json` (with `id`, `sessionID` and `messageID` inside).

opencode sends a session as its messages in order (from the last completed compaction on), each assistant
message split at its `step-start` parts into one reply per step; a `tool` part is a call (`callID`, `tool`,
`state.input`) whose result is its own `state`: `completed` (`output`) or `error` (`error`). A part killed
while its tool ran stays `running` (or `pending`) forever. Repair sets such a part's state to `error` with the
interrupted result's text (what opencode itself writes when a run is aborted) and renames a repeated `callID`;
every other row (or file) is unchanged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from chatmend import ChatMessage, RepairResult, TextPart, ToolCall
from chatmend.files.io import InputError, atomic_write, json_kind, write_backup
from chatmend.repair import IsReadOnly
from chatmend.transcripts._records import joined_text, writable_repair
from chatmend.transcripts.sqlite_stores import RowsAsRead, RowUpdate, SqliteStore, checked, stored_json
from chatmend.transcripts.stores import (
    Store,
    StoredSession,
    WriteBack,
    data_home,
    existing_files,
    register,
    store_session,
)

__all__ = ["NAME", "OpencodeDatabase", "OpencodeFolder"]

NAME = "opencode"
_ERROR_STATES = ("completed", "error")


def _provider(provider_id: object) -> str:
    """The wire format opencode speaks to a provider it names (`anthropic`, `openai`, `google`; every other is
    reached through an OpenAI-compatible Chat Completions endpoint)."""
    return {"anthropic": "anthropic", "openai": "openai_responses", "google": "gemini",
            "google-vertex": "gemini"}.get(str(provider_id), "openai_chat")


@dataclass
class _Part:
    id: str
    data: dict[str, Any]
    raw: str
    created: int
    where: str


@dataclass
class _Message:
    id: str
    data: dict[str, Any]
    parts: list[_Part]


def _loads(raw: object, where: str) -> dict[str, Any]:
    """A row's (or file's) JSON object, or an InputError naming where it is."""
    value: dict[str, Any] = stored_json(raw, f"{where}: data", dict, "a JSON object (an opencode message or part)")
    return value


def _dump(value: Mapping[str, Any]) -> str:
    """JSON as opencode writes it (`JSON.stringify`: compact, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Reader:
    """One session's messages as opencode sends them, and how a repair is written back into its parts."""

    def __init__(self, session_id: str, messages: list[_Message]) -> None:
        self.session_id = session_id
        self.messages: list[ChatMessage] = []
        self.where: list[str] = []
        self.calls: list[list[_Part]] = []
        """For each neutral message, the tool parts of its calls (empty for others)."""
        self.model: str | None = None
        self.provider = "openai_chat"
        for message in _from_last_compaction(messages):
            self._read(message)

    def _add(self, message: ChatMessage, where: str, calls: list[_Part]) -> None:
        self.messages.append(message)
        self.where.append(where)
        self.calls.append(calls)

    def _read(self, message: _Message) -> None:
        role = message.data.get("role")
        if role == "user":
            texts = [p for p in message.parts if p.data.get("type") == "text" and not p.data.get("ignored")]
            content = tuple(TextPart(text=_text(p)) for p in texts if _text(p))
            if content:
                self._add(ChatMessage(role="user", content=content if len(content) > 1 else content[0].text),
                          texts[0].where, [])
            return
        if role != "assistant":
            raise InputError(f"message {message.id}: data.role: expected 'user' or 'assistant', got "
                             f"{json_kind(role)}")
        if isinstance(message.data.get("modelID"), str):
            self.model = message.data["modelID"]
            self.provider = _provider(message.data.get("providerID"))
        step: list[_Part] = []
        for part in message.parts:
            if part.data.get("type") == "step-start" and step:
                self._read_step(message, step)
                step = []
            step.append(part)
        self._read_step(message, step)

    def _read_step(self, message: _Message, parts: list[_Part]) -> None:
        texts = [p for p in parts if p.data.get("type") == "text" and _text(p)]
        tools = [p for p in parts if p.data.get("type") == "tool"]
        calls = tuple(_call(p) for p in tools)
        if not texts and not calls:
            return
        first = (texts or tools)[0]
        self._add(ChatMessage(role="assistant", content="".join(_text(p) for p in texts), tool_calls=calls),
                  first.where, tools)
        for part, call in zip(tools, calls):
            state = part.data["state"]
            status = state.get("status")
            if status not in _ERROR_STATES:
                continue  # pending or running: killed while its tool ran, no result
            if status == "completed":
                output = "[Old tool result content cleared]" if _compacted(state) else state.get("output")
            else:
                output = state.get("error")
            if not isinstance(output, str):
                raise InputError(f"{part.where}: state.{'output' if status == 'completed' else 'error'}: "
                                 f"expected a string, got {json_kind(output)}")
            self._add(ChatMessage(role="tool", tool_call_id=call.id, tool_name=call.name,
                                  is_error=status == "error", content=output), part.where, [])

    def repair(self, is_read_only: IsReadOnly | None) -> tuple[RepairResult, list[tuple[_Part, dict[str, Any]]]]:
        """The repair, and each tool part it changes with its new data."""
        result = writable_repair(self.messages, is_read_only, ("moved", "dropped", "notes"),
                                 "back into an opencode session")
        changed: dict[str, tuple[_Part, dict[str, Any]]] = {}

        def data_of(part: _Part) -> dict[str, Any]:
            if part.id not in changed:
                changed[part.id] = (part, json.loads(part.raw))
            return changed[part.id][1]

        for renamed in result.renamed:
            data_of(self.calls[renamed.message_index][renamed.call_index])["callID"] = renamed.new
        for message, origin in zip(result.messages, result.origins()):
            if origin.kind != "synthetic":
                continue
            assert origin.call_index is not None
            part = self.calls[origin.message_index][origin.call_index]
            data = data_of(part)
            state: dict[str, Any] = data["state"] if isinstance(data.get("state"), dict) else {}
            time: dict[str, Any] = state["time"] if isinstance(state.get("time"), dict) else {}
            start = time["start"] if isinstance(time.get("start"), int) else part.created
            new_state: dict[str, Any] = {"status": "error", "input": state.get("input") or {},
                                         "error": joined_text(message.content)}
            if isinstance(state.get("metadata"), dict):
                new_state["metadata"] = state["metadata"]
            new_state["time"] = {"start": start, "end": start}
            data["state"] = new_state
        return result, list(changed.values())


def _text(part: _Part) -> str:
    text = part.data.get("text")
    if not isinstance(text, str):
        raise InputError(f"{part.where}: text: expected a string, got {json_kind(text)}")
    return text


def _compacted(state: Mapping[str, Any]) -> bool:
    time = state.get("time")
    return isinstance(time, Mapping) and time.get("compacted") is not None


def _call(part: _Part) -> ToolCall:
    data = part.data
    state = data.get("state")
    if not isinstance(state, dict):
        raise InputError(f"{part.where}: state: expected an object, got {json_kind(state)}")
    arguments = state.get("input")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InputError(f"{part.where}: state.input: expected an object (the call's arguments), got "
                         f"{json_kind(arguments)}")
    call_id, tool = data.get("callID"), data.get("tool")
    if not isinstance(call_id, str):
        raise InputError(f"{part.where}: callID: expected a string, got {json_kind(call_id)}")
    if not isinstance(tool, str) or not tool:
        raise InputError(f"{part.where}: tool: expected the tool's name, got {json_kind(tool)}")
    return ToolCall(id=call_id, name=tool, arguments=arguments)


def _from_last_compaction(messages: list[_Message]) -> list[_Message]:
    """The messages opencode sends: from the user message of the last compaction whose summary completed."""
    for k in range(len(messages) - 1, -1, -1):
        message = messages[k]
        if message.data.get("role") == "user" and any(p.data.get("type") == "compaction" for p in message.parts):
            summarized = any(m.data.get("role") == "assistant" and m.data.get("summary") is True
                             and isinstance(m.data.get("time"), Mapping) and m.data["time"].get("completed")
                             for m in messages[k + 1:])
            if summarized:
                return messages[k:]
    return messages


def _stored(store: Store, session_id: str, title: str, modified: float, messages: list[_Message],
            change: Any, command: str = "opencode") -> StoredSession:
    """A StoredSession of either layout (`change`: a part and its new data -> the store's change; `command`: the
    tool's, which resumes it with `--session ID`)."""
    reader = _Reader(session_id, messages)
    if not reader.messages:
        raise InputError(f"session {session_id}: no conversation messages")
    session = store_session(store.name, reader.provider, reader.messages, reader.where, model=reader.model)

    def repair(is_read_only: IsReadOnly | None) -> tuple[RepairResult, WriteBack]:
        result, parts = reader.repair(is_read_only)
        fixes = [f"wrote {len(parts)} tool {'part' if len(parts) == 1 else 'parts'} anew (every other part as it "
                 f"was): {', '.join(p.id for p, _ in parts)}"] if parts else []
        return result, WriteBack([change(p, d) for p, d in parts], fixes)

    return StoredSession(id=session_id, title=title, modified=modified, session=session, repair=repair,
                         resume=f"{command} --session {session_id}")


@register
class OpencodeDatabase(SqliteStore):
    """opencode's SQLite database (opencode 1.2 and later)."""

    name: ClassVar[str] = NAME
    tool: ClassVar[str] = "opencode"
    description: ClassVar[str] = "opencode sessions (~/.local/share/opencode/opencode.db, or its older storage/ folder)"
    tables: ClassVar[frozenset[str]] = frozenset({"session", "message", "part"})
    holder: ClassVar[str] = "a running opencode"
    command: ClassVar[str] = "opencode"
    """The tool's command, which resumes a session with `--session ID`."""

    @classmethod
    def recognizes(cls, path: str) -> bool:
        """opencode's tables, in a database that is not a fork's (Kilo Code's holds them and tables of its own)."""
        return super().recognizes(path) and not any(fork.recognizes(path) for fork in cls.__subclasses__())

    @classmethod
    def default_paths(cls, env: Mapping[str, str]) -> list[str]:
        return existing_files([env.get("OPENCODE_DB") or os.path.join(data_home(env), "opencode", "opencode.db")])

    def sessions(self) -> list[StoredSession]:
        out = []
        for session_id, title, updated in self.query(
                "SELECT id, title, time_updated FROM session ORDER BY time_created, id"):
            messages, as_read = self._messages(session_id)
            if not messages:
                continue
            stored = _stored(self, session_id, title if isinstance(title, str) else "",
                             updated / 1000 if isinstance(updated, (int, float)) else self.modified(),
                             messages, self._change, self.command)
            stored.repair = checked(stored.repair, as_read)  # written only while its rows are as read
            out.append(stored)
        return out

    def _messages(self, session_id: str) -> tuple[list[_Message], list[RowsAsRead]]:
        parts: dict[str, list[_Part]] = {}
        part_rows, parts_read = self.query_as_read(
            "SELECT id, message_id, time_created, data FROM part WHERE session_id = ? ORDER BY message_id, id",
            (session_id,))
        for part_id, message_id, created, raw in part_rows:
            where = f"message {message_id} part {part_id}"
            parts.setdefault(message_id, []).append(_Part(part_id, _loads(raw, where), raw, created, where))
        message_rows, messages_read = self.query_as_read(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (session_id,))
        return [_Message(message_id, _loads(raw, f"message {message_id}"), parts.get(message_id, []))
                for message_id, raw in message_rows], [parts_read, messages_read]

    @staticmethod
    def _change(part: _Part, data: dict[str, Any]) -> RowUpdate:
        return RowUpdate("part", (("id", part.id),), "data", part.raw, _dump(data))


@dataclass(frozen=True)
class _FileRewrite:
    path: str
    old: bytes
    new: str


@register
class OpencodeFolder(Store):
    """opencode's older `storage/` folder: one JSON file a session, a message and a part."""

    name: ClassVar[str] = NAME
    tool: ClassVar[str] = "opencode"
    description: ClassVar[str] = OpencodeDatabase.description

    @classmethod
    def recognizes(cls, path: str) -> bool:
        return os.path.isdir(path) and all(os.path.isdir(os.path.join(path, d)) for d in ("session", "message"))

    @classmethod
    def default_paths(cls, env: Mapping[str, str]) -> list[str]:
        path = os.path.join(data_home(env), "opencode", "storage")
        return [path] if cls.recognizes(path) else []

    def sessions(self) -> list[StoredSession]:
        out = []
        root = os.path.join(self.path, "session")
        for project in sorted(os.listdir(root)):
            folder = os.path.join(root, project)
            if not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                if not name.endswith(".json"):
                    continue
                info = _loads(_read_text(os.path.join(folder, name)), f"session/{project}/{name}")
                session_id = _id(info, name)
                messages, modified = self._messages(session_id)
                if not messages:
                    continue
                title = info.get("title")
                out.append(_stored(self, session_id, title if isinstance(title, str) else "", modified, messages,
                                   self._change))
        return out

    def _messages(self, session_id: str) -> tuple[list[_Message], float]:
        folder = os.path.join(self.path, "message", session_id)
        if not os.path.isdir(folder):
            return [], 0.0
        modified = os.stat(folder).st_mtime
        messages = []
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json"):
                continue
            path = os.path.join(folder, name)
            modified = max(modified, os.stat(path).st_mtime)
            data = _loads(_read_text(path), f"message/{session_id}/{name}")
            message_id = _id(data, name)
            parts = []
            part_folder = os.path.join(self.path, "part", message_id)
            for part_name in sorted(os.listdir(part_folder)) if os.path.isdir(part_folder) else []:
                if part_name.endswith(".json"):
                    part_path = os.path.join(part_folder, part_name)
                    modified = max(modified, os.stat(part_path).st_mtime)
                    raw = _read_text(part_path)
                    where = f"part/{message_id}/{part_name}"
                    part_data = _loads(raw, where)
                    part_id = _id(part_data, part_name)
                    time = part_data.get("time")
                    start = time.get("start") if isinstance(time, Mapping) else None
                    created = start if isinstance(start, int) else 0
                    parts.append(_Part(part_id, part_data, raw, created, where))
            messages.append(_Message(message_id, data, parts))
        messages.sort(key=lambda m: (_created(m.data), m.id))
        return messages, modified

    def _change(self, part: _Part, data: dict[str, Any]) -> _FileRewrite:
        path = os.path.join(self.path, part.where)
        return _FileRewrite(path, part.raw.encode("utf-8"), json.dumps(data, ensure_ascii=False, indent=2))

    def in_use(self) -> str | None:
        return None  # the folder has no lock; `doctor` looks at how recently it changed

    def write_back(self, repairs: Sequence[WriteBack], *, output: str | None = None) -> str | None:
        if output is not None:
            raise InputError("an opencode storage/ folder is repaired in place (--in-place); -o needs a file")
        rewrites: list[_FileRewrite] = [c for r in repairs for c in r.changes]
        backups: list[str] = []
        for rewrite in rewrites:  # refuse before writing anything when a file changed since it was read
            with open(rewrite.path, "rb") as handle:
                if handle.read() != rewrite.old:
                    raise InputError(f"{rewrite.path}: changed while chatmend was repairing it; nothing was "
                                     "written: run again once opencode is no longer using it")
        for rewrite in rewrites:
            st = os.stat(rewrite.path)
            backups.append(write_backup(rewrite.path, rewrite.old, st))
            atomic_write(rewrite.path, [rewrite.new], like=st)
        return ", ".join(backups) if backups else None


def _id(data: Mapping[str, Any], file_name: str) -> str:
    """A file's `id`, or its name without `.json`."""
    value = data.get("id")
    return value if isinstance(value, str) else file_name[:-5]


def _created(data: Mapping[str, Any]) -> int:
    time = data.get("time")
    created = time.get("created") if isinstance(time, Mapping) else None
    return created if isinstance(created, int) else 0


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
