"""Zed's agent threads: the SQLite database `threads/threads.db` in Zed's data folder (`$XDG_DATA_HOME/zed`, else
`~/.local/share/zed`; `~/Library/Application Support/Zed` on macOS), read as Zed's own code defines it
(zed-industries/zed `crates/agent/src/db.rs`: `ThreadsDatabase`, `DbThread`; `crates/agent/src/thread.rs`:
`Message`, `AgentMessage::to_request`; `crates/language_model/src/request.rs`: `LanguageModelToolUse`,
`LanguageModelToolResult`).

Table `threads` (id, summary, updated_at, data_type `zstd` or `json`, data, parent_id, folder_paths, created_at):
`data` is a `DbThread` as serde_json writes it (version "0.3.0"), zstd-compressed: `messages` is a list of
`{"User": {"id", "content": [{"Text": ...} | {"Mention": {"uri", "content"}} | {"Image": ...}]}}`,
`{"Agent": {"content": [{"Text"} | {"Thinking": {"text", "signature"}} | {"RedactedThinking"} | {"ToolUse": {"id",
"name", "raw_input", "input", "is_input_complete"}}], "tool_results": {id: {"tool_use_id", "tool_name",
"is_error", "content", "output"}}}}` and `"Resume"`.

Zed sends an agent message as an assistant message of its text, thinking and the tool uses that have a result,
then a user message of every one of its `tool_results`: a call left without a result (Zed killed while the tool
ran) is left out of what it sends, and read so here (with a warning); a result whose call is not in the message
is sent, and the provider refuses it (a thread that stays unusable). Repair makes such a result a user note that
keeps its text: the entry leaves `tool_results` and a user message holding the note follows the agent message.
Everything else in the thread (every field, known or not) is written back as it was read; a repair that would
rename, move or drop anything is refused, naming why.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from chatmend import ChatMessage, RepairResult, TextPart, ThinkingPart, ToolCall
from chatmend.files.io import InputError, json_kind
from chatmend.messages import Part, text_of
from chatmend.repair import IsReadOnly
from chatmend.transcripts._records import writable_repair
from chatmend.transcripts.sqlite_stores import (
    RowUpdate,
    SqliteStore,
    checked,
    stored_json,
    zstandard_package,
    zstd_decompressed,
)
from chatmend.transcripts.stores import (
    StoredSession,
    WriteBack,
    data_home,
    existing_files,
    home,
    register,
    store_session,
)

__all__ = ["NAME", "ZedThreads", "compress", "decompress"]

NAME = "zed"
_VERSION = "0.3.0"
_RESUME = "Continue where you left off"
"""What Zed sends for a `Resume` message."""
_COMPRESSION_LEVEL = 3
"""The level Zed's `save_thread_sync` compresses a thread at."""


def decompress(data: bytes, where: str = "a Zed thread's data") -> bytes:
    """A thread's data as Zed's `zstd::decode_all` reads it."""
    return zstd_decompressed(data, where)


def compress(data: bytes) -> bytes:
    """A thread's data as Zed's `zstd::encode_all` writes it (level 3)."""
    return bytes(zstandard_package("a Zed thread").ZstdCompressor(level=_COMPRESSION_LEVEL).compress(data))


def _provider(model: object) -> str:
    """The wire format of the provider a thread's model names (`{"provider": ..., "model": ...}`)."""
    name = model.get("provider") if isinstance(model, Mapping) else None
    return {"anthropic": "anthropic", "zed.dev": "anthropic", "google": "gemini", "openai": "openai_responses",
            "bedrock": "bedrock", "mistral": "mistral", "deepseek": "deepseek"}.get(str(name), "openai_chat")


def _result_text(content: object) -> str:
    """A tool result's content as Zed's `LanguageModelToolResultContent` reads it: a string, `{"Text": ...}`,
    `{"type": "text", "text": ...}`, an image, or a list of those."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_result_text(c) for c in content)
    if isinstance(content, Mapping):
        for key, value in content.items():
            if key.lower() == "text" and isinstance(value, str):
                return value
        return "[image]"
    return ""


def _one(value: object, where: str) -> tuple[str, Any]:
    """A serde enum value `{"Variant": payload}` (or a unit variant `"Variant"`) as (variant, payload)."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, Mapping) and len(value) == 1:
        [(kind, payload)] = value.items()
        return str(kind), payload
    raise InputError(f"{where}: expected one {{\"Variant\": ...}} of Zed's enums, got {json_kind(value)}")


class _Reader:
    """One thread's messages as Zed sends them, and where each came from."""

    def __init__(self, thread_id: str, thread: dict[str, Any]) -> None:
        self.thread_id = thread_id
        self.thread = thread
        self.messages: list[ChatMessage] = []
        self.where: list[str] = []
        self.origin: list[tuple[int, str | None]] = []  # (index in `messages`, the result's key or None)
        self.warnings: list[str] = []
        messages = thread.get("messages")
        if not isinstance(messages, list):
            raise InputError(f"thread {thread_id}: messages: expected a list, got {json_kind(messages)}")
        for i, message in enumerate(messages):
            self._read(i, message)

    def _add(self, message: ChatMessage, i: int, key: str | None = None) -> None:
        self.messages.append(message)
        self.where.append(f"messages[{i}]" + (f".Agent.tool_results[{key!r}]" if key is not None else ""))
        self.origin.append((i, key))

    def _read(self, i: int, value: object) -> None:
        where = f"thread {self.thread_id}: messages[{i}]"
        kind, payload = _one(value, where)
        if kind == "Resume":
            self._add(ChatMessage(role="user", content=_RESUME), i)
        elif kind == "User":
            content = payload.get("content") if isinstance(payload, Mapping) else None
            if not isinstance(content, list):
                raise InputError(f"{where}.User.content: expected a list, got {json_kind(content)}")
            texts = []
            for k, chunk in enumerate(content):
                part, data = _one(chunk, f"{where}.User.content[{k}]")
                if part == "Text" and isinstance(data, str):
                    texts.append(data)
                elif part == "Mention" and isinstance(data, Mapping):
                    texts.append(str(data.get("content") or ""))
                else:
                    texts.append(f"[{part.lower()}]")
            if texts:
                self._add(ChatMessage(role="user", content="\n".join(texts) or "[empty]"), i)
        elif kind == "Agent":
            self._read_agent(i, payload, where)
        else:
            raise InputError(f"{where}: expected User, Agent or Resume, got {kind!r}")

    def _read_agent(self, i: int, payload: object, where: str) -> None:
        if not isinstance(payload, Mapping):
            raise InputError(f"{where}.Agent: expected an object, got {json_kind(payload)}")
        content, results = payload.get("content"), payload.get("tool_results")
        if not isinstance(content, list) or not isinstance(results, Mapping):
            raise InputError(f"{where}.Agent: expected a content list and a tool_results object")
        parts: list[Part] = []
        calls = []
        for k, chunk in enumerate(content):
            kind, data = _one(chunk, f"{where}.Agent.content[{k}]")
            if kind == "Text" and isinstance(data, str):
                parts.append(TextPart(text=data))
            elif kind == "Thinking" and isinstance(data, Mapping):
                parts.append(ThinkingPart(text=str(data.get("text") or ""), signature=data.get("signature")))
            elif kind == "RedactedThinking":
                parts.append(ThinkingPart(redacted=True, data=str(data)))
            elif kind == "ToolUse" and isinstance(data, Mapping):
                call_id = str(data.get("id") or "")
                if call_id not in results:
                    self.warnings.append(f"{where}.Agent.content[{k}]: the call {call_id} has no result; Zed "
                                         "leaves it out of what it sends")
                    continue
                arguments = data.get("input")
                calls.append(ToolCall(id=call_id, name=str(data.get("name") or "invalid"),
                                      arguments=arguments if isinstance(arguments, dict) else
                                      str(data.get("raw_input") or "")))
        if parts or calls:
            only_text = all(isinstance(p, TextPart) for p in parts)
            self._add(ChatMessage(role="assistant", tool_calls=tuple(calls),
                                  content="".join(p.text for p in parts if isinstance(p, TextPart)) if only_text
                                  else tuple(parts)), i)
        for key, result in results.items():
            if not isinstance(result, Mapping):
                raise InputError(f"{where}.Agent.tool_results[{key!r}]: expected an object, got {json_kind(result)}")
            self._add(ChatMessage(role="tool", tool_call_id=str(key), tool_name=str(result.get("tool_name") or "")
                                  or None, is_error=result.get("is_error") is True,
                                  content=_result_text(result.get("content"))), i, str(key))

    def repair(self, raw: bytes, data_type: str,
               is_read_only: IsReadOnly | None) -> tuple[RepairResult, WriteBack]:
        result = writable_repair(self.messages, is_read_only,
                                 ("moved", "renamed", "dropped", "interrupted", "stripped"), "back into a Zed thread")
        if not result.changed:
            return result, WriteBack()
        notes: dict[int, list[tuple[str, str]]] = {}  # agent message index -> (result key, note text)
        for message, found in zip(result.messages, result.origins()):
            if found.kind == "note":
                i, key = self.origin[found.message_index]
                assert key is not None
                notes.setdefault(i, []).append((key, text_of(message.content)))
        thread = dict(self.thread)
        messages: list[Any] = []
        for i, value in enumerate(thread["messages"]):
            if i not in notes:
                messages.append(value)
                continue
            agent = dict(value["Agent"])
            agent["tool_results"] = {k: v for k, v in agent["tool_results"].items()
                                     if k not in {key for key, _ in notes[i]}}
            messages.append({"Agent": agent})
            for key, text in notes[i]:
                note_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"chatmend:zed:{self.thread_id}:{key}"))
                messages.append({"User": {"id": note_id, "content": [{"Text": text}]}})
        thread["messages"] = messages
        encoded = json.dumps(thread, ensure_ascii=False, separators=(",", ":")).encode("utf-8")  # serde_json's
        new = compress(encoded) if data_type == "zstd" else encoded
        fixes = [f"thread {self.thread_id}: {sum(len(n) for n in notes.values())} orphan results made user notes"]
        return result, WriteBack([RowUpdate("threads", (("id", self.thread_id),), "data", raw, new)], fixes)


@register
class ZedThreads(SqliteStore):
    """Zed's `threads.db`."""

    name: ClassVar[str] = NAME
    tool: ClassVar[str] = "Zed"
    description: ClassVar[str] = "Zed agent threads (~/.local/share/zed/threads/threads.db)"
    tables: ClassVar[frozenset[str]] = frozenset({"threads"})
    holder: ClassVar[str] = "a running Zed"

    @classmethod
    def recognizes(cls, path: str) -> bool:
        if not super().recognizes(path):
            return False
        store = cls(path)
        try:
            columns = {row[1] for row in store.query("PRAGMA table_info(threads)")}
        except InputError:
            return False
        finally:
            store.close()
        return {"id", "summary", "updated_at", "data_type", "data"} <= columns

    @classmethod
    def default_paths(cls, env: Mapping[str, str]) -> list[str]:
        folders = [os.path.join(data_home(env), "zed")]
        if sys.platform == "darwin":
            folders.append(os.path.join(home(env), "Library", "Application Support", "Zed"))
        return existing_files(os.path.join(folder, "threads", "threads.db") for folder in folders)

    def sessions(self) -> list[StoredSession]:
        out = []
        for thread_id, title, updated, data_type, raw in self.query(
                "SELECT id, summary, updated_at, data_type, data FROM threads ORDER BY updated_at, id"):
            where = f"thread {thread_id}"
            reader = _Reader(str(thread_id), self._thread(where, data_type, raw))
            if not reader.messages:
                continue
            as_read = self.query_as_read("SELECT data_type, data FROM threads WHERE id = ?", (thread_id,))[1]
            session = store_session(NAME, _provider(reader.thread.get("model")), reader.messages, reader.where,
                                    model=_model(reader.thread.get("model")), warnings=reader.warnings)

            def repair(is_read_only: IsReadOnly | None, reader: _Reader = reader, raw: bytes = raw,
                       data_type: str = data_type) -> tuple[RepairResult, WriteBack]:
                return reader.repair(raw, data_type, is_read_only)

            out.append(StoredSession(id=str(thread_id), title=title if isinstance(title, str) else "",
                                     modified=_seconds(updated) or self.modified(), session=session,
                                     repair=checked(repair, [as_read]),
                                     resume="open the thread in Zed's agent panel (its thread history)"))
        return out

    @staticmethod
    def _thread(where: str, data_type: object, raw: object) -> dict[str, Any]:
        if not isinstance(raw, bytes):
            raw = raw.encode("utf-8") if isinstance(raw, str) else b""
        if data_type == "zstd":
            raw = decompress(raw, f"{where}: data")
        elif data_type != "json":
            raise InputError(f"{where}: data_type: expected 'zstd' or 'json', got {data_type!r}")
        thread: dict[str, Any] = stored_json(raw, f"{where}: data", dict, "a JSON object (a Zed thread)")
        if thread.get("version") != _VERSION:
            raise InputError(f"{where}: version: expected Zed's thread format {_VERSION}, got "
                             f"{thread.get('version')!r}; open the thread in Zed once to upgrade it")
        return thread


def _model(model: object) -> str | None:
    name = model.get("model") if isinstance(model, Mapping) else None
    return name if isinstance(name, str) else None


def _seconds(stamp: object) -> float | None:
    """An RFC 3339 time (as Zed writes `updated_at`) in seconds since the epoch."""
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
