"""Qwen Code sessions (`@qwen-code/qwen-code`): `~/.qwen/projects/<project>/chats/<session id>.jsonl`.

One record a line, each with a `uuid`, the `parentUuid` of the record it follows, the `sessionId` and a `type`
(`user`, `assistant`, `tool_result`, `system`): a tree. Qwen Code resumes from the leaf, the last record that is
part of the conversation (not an artifact record), walks `parentUuid` back to the root, and gathers the records of
one `uuid` (fragments) as one. Each record's `message` is a Gemini Content (`role` `user` or `model`, `parts`:
text, `functionCall`, `functionResponse`), read here by the Gemini adapter's own reader; a `tool_result` record
holds the `functionResponse` of a call. A `chat_compression` system record's `compressedHistory` replaces the
history before it; a `mid_turn_user_message` joins the user turn before it; the `slash_command` result of a command
answered locally takes the command's user turn back out; other system records (telemetry,
titles, snapshots) are not sent. Qwen Code sends the Contents through the provider its auth type names
(`session_model` records; OpenAI Chat Completions by default).

Qwen Code 0.24 heals a session cut mid-tool itself when it resumes (`repairOrphanedToolUseTurns`: an unanswered
call gets an error response, in memory only). A repair writes the same answer into the file: a `tool_result`
record after its call's other results, whose `parentUuid` is the record before it, and the record that followed
takes it as its parent, so the chain Qwen Code walks passes it. Every other line is kept byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from chatmend import ChatMessage
from chatmend.exceptions import ReadError
from chatmend.files.io import InputError, first_line
from chatmend.files.session import Session
from chatmend.providers.gemini.read import read_content
from chatmend.transcripts._records import (
    Record,
    TranscriptFormat,
    errors_at_line,
    expect,
    fresh_id,
    joined_text,
    parse_records,
    relink_chain,
    seeded_uuid,
)
from chatmend.transcripts.stores import FileFormat, any_record, tool_locations

__all__ = [
    "FORMAT", "NAME", "TOOL", "default_locations", "is_record", "is_session_file", "read", "resume_command",
    "session_id",
]

NAME = "qwen_code"
"""The format's name (`--from qwen_code`)."""
TOOL = "Qwen Code"
"""The tool's name, as a person knows it."""
_WHAT = "one Qwen Code session record a line (uuid, parentUuid, sessionId, type, message)"
_TYPES = ("user", "assistant", "tool_result", "system")
_ARTIFACTS = ("session_artifact_event", "session_artifact_snapshot", "session_sources_snapshot",
              "managed_session_header_v1", "managed_session_event_v1", "managed_session_commit_v1")
"""System subtypes that are no part of the conversation's chain (Qwen Code's transcript records module)."""
_HEAD_BYTES = 1 << 20
"""How much of a file's first line is read to tell a session file (a first prompt may be a long paste)."""
_PROVIDERS = {"openai": "openai_chat", "qwen-oauth": "openai_chat", "openai-responses": "openai_responses",
              "anthropic": "anthropic", "gemini": "gemini", "vertex-ai": "gemini"}
"""A Qwen Code auth type to the provider whose rules `check` applies."""


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Qwen Code keeps its projects: `~/.qwen/projects` (`$QWEN_HOME` in place of `~/.qwen` when set)."""
    return tool_locations(env, "QWEN_HOME", ".qwen", "projects")


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a session file: a `.jsonl` in a `chats` folder whose first record is a Qwen Code record."""
    file = Path(path)
    if file.suffix != ".jsonl" or file.parent.name != "chats":
        return False
    head = first_line(file, _HEAD_BYTES)
    if head is None:
        return False
    compact = head.replace(b" ", b"")
    return head.startswith(b"{") and b'"parentUuid":' in compact and b'"sessionId":' in compact


def session_id(path: str | os.PathLike[str]) -> str:
    """The session's id: Qwen Code names its file `<session id>.jsonl`."""
    return Path(path).stem


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the session (from the project's folder): `qwen --resume ID`."""
    return f"qwen --resume {session_id(path)}"


# --- detection -----------------------------------------------------------------------------------------------


def is_record(value: Mapping[str, Any]) -> bool:
    """True for a Qwen Code record: its identity fields and, for a message, a Gemini Content (`parts`, where
    Claude Code's records, otherwise alike, hold `content`)."""
    if not (isinstance(value.get("uuid"), str) and "parentUuid" in value and isinstance(value.get("sessionId"), str)
            and value.get("type") in _TYPES):
        return False
    message = value.get("message")
    if isinstance(message, Mapping):
        return "parts" in message
    return value.get("type") == "system" and "systemPayload" in value


# --- reading -------------------------------------------------------------------------------------------------


def _is_conversation(data: Mapping[str, Any]) -> bool:
    return (isinstance(data.get("uuid"), str) and data.get("type") in _TYPES
            and not (data.get("type") == "system" and data.get("subtype") in _ARTIFACTS))


class QwenCode(TranscriptFormat):
    """A Qwen Code session file: the Contents Qwen Code sends when it resumes, and how a repair is written back."""

    name = NAME
    provider = "openai_chat"

    def __init__(self, records: list[Record]) -> None:
        super().__init__(records)
        self.uuids: set[str] = {r.data["uuid"] for r in records if isinstance(r.data.get("uuid"), str)}
        self.chain = self._chain()
        self.on_chain = {id(records[k]) for k in self.chain}
        self.frozen: set[int] = set()
        """Records whose Contents a repair cannot rewrite (a compression's stored history)."""
        self._read_chain()

    def _chain(self) -> list[int]:
        """The records Qwen Code walks: from the leaf by `parentUuid` to the root, every fragment of each `uuid`,
        in file order."""
        by_uuid: dict[str, list[int]] = {}
        for k, record in enumerate(self.records):
            if _is_conversation(record.data):
                by_uuid.setdefault(record.data["uuid"], []).append(k)
        leaf = next((r.data["uuid"] for r in reversed(self.records) if _is_conversation(r.data)), None)
        chain: list[int] = []
        seen: set[str] = set()
        current = leaf
        while isinstance(current, str) and current in by_uuid and current not in seen:
            seen.add(current)
            chain.extend(by_uuid[current])
            current = self.records[by_uuid[current][0]].data.get("parentUuid")
        return sorted(chain)

    def _read_chain(self) -> None:
        """The chain's Contents as Qwen Code's history accumulator builds them, read by the Gemini adapter."""
        contents: list[tuple[dict[str, Any], list[tuple[int, int]], Record]] = []
        for k in self.chain:
            record = self.records[k]
            data = record.data
            with errors_at_line(record, _WHAT):
                if data.get("type") == "system":
                    self._read_system(k, record, contents)
                    continue
                message = data.get("message")
                if message is None or data.get("subtype") == "realtime_message":
                    continue
                expect(record, "message", message, (dict,), "a Gemini Content (an object with role and parts)")
                parts = message.get("parts") or []
                expect(record, "message.parts", parts, (list,), "a list of parts")
                record.blocks = [("part", p) for p in parts]
                at = [(k, b) for b in range(len(parts))]
                role = "model" if message.get("role") == "model" else "user"
                last = contents[-1] if contents else None
                fragment = last is not None and last[2].data.get("uuid") == data.get("uuid")
                joins = (last is not None and data.get("subtype") == "mid_turn_user_message"
                         and last[0]["role"] == "user")
                if last is not None and (fragment or joins):  # one Content: a fragment, or a message mid-turn
                    last[0]["parts"] = [*last[0]["parts"], *parts]
                    last[1].extend(at)
                else:
                    contents.append(({"role": role, "parts": list(parts)}, at, record))
        self._read_contents(contents)
        for k in reversed(self.chain):
            data = self.records[k].data
            if data.get("type") == "system" and data.get("subtype") == "session_model":
                payload = data.get("systemPayload")
                auth = payload.get("authType") if isinstance(payload, Mapping) else None
                self.provider = _PROVIDERS.get(str(auth), self.provider)
                model = payload.get("modelId") if isinstance(payload, Mapping) else None
                if isinstance(model, str):
                    self.model = model
                break
        if self.model is None:
            self.model = next((self.records[k].data["model"] for k in reversed(self.chain)
                               if isinstance(self.records[k].data.get("model"), str)), None)

    def _read_system(self, k: int, record: Record,
                     contents: list[tuple[dict[str, Any], list[tuple[int, int]], Record]]) -> None:
        """A compression's stored history replaces the Contents before it; a local slash command's result takes the
        command's own user turn back out of them; other system records are not sent."""
        data = record.data
        payload = data.get("systemPayload")
        if data.get("subtype") == "slash_command" and isinstance(payload, Mapping) and contents:
            if _local_command(payload, contents[-1][2].data):
                contents.pop()  # as Qwen Code's history accumulator does: the model never saw it
            return
        history = payload.get("compressedHistory") if isinstance(payload, Mapping) else None
        if data.get("subtype") != "chat_compression" or not history:
            return
        expect(record, "systemPayload.compressedHistory", history, (list,), "a list of Gemini Contents")
        contents.clear()
        record.blocks = []
        self.frozen.add(k)
        for content in history:
            if not isinstance(content, Mapping):
                continue
            parts: list[Any] = content["parts"] if isinstance(content.get("parts"), list) else []
            start = len(record.blocks)
            record.blocks.extend(("stored", p) for p in parts)
            contents.append(({"role": "model" if content.get("role") == "model" else "user", "parts": list(parts)},
                             [(k, b) for b in range(start, len(record.blocks))], record))

    def _read_contents(self, contents: list[tuple[dict[str, Any], list[tuple[int, int]], Record]]) -> None:
        calls: Any = ()
        for content, at, record in contents:
            try:
                messages, calls = read_content([content], 0, calls)
            except ReadError as exc:
                where = (exc.path or "").replace("contents[0]", "message", 1)
                raise InputError(f"{where}: {exc.reason}" if where else exc.reason, line=record.line) from None
            responses = [b for b, part in zip(at, content["parts"])
                         if isinstance(part, Mapping) and isinstance(part.get("functionResponse"), Mapping)]
            others = [b for b in at if b not in responses]
            n = 0
            for message in messages:
                if message.role == "assistant":
                    self.add_reply(message, at)
                elif message.role == "tool":
                    self.add(message, [responses[n]] if n < len(responses) else [])
                    n += 1
                else:
                    self.add(message, others)
                    others = []
            if others and n:  # parts of a results turn that read as no message of their own stay with its last result
                self.blocks_at[-1] = sorted(self.blocks_at[-1] + others)
        read = {k for blocks in self.blocks_at for k, _ in blocks}
        for k in self.chain:
            if k not in read and k not in self.frozen:
                self.records[k].blocks = []  # sent as nothing (before a compression): kept as it is

    # --- writing -------------------------------------------------------------------------------------------

    def is_call(self, block: Any) -> bool:
        return bool(isinstance(block[1], Mapping) and isinstance(block[1].get("functionCall"), Mapping))

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return (block[0], {**block[1], "functionCall": {**block[1]["functionCall"], "id": new_id}})

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        if not (isinstance(block[1], Mapping) and isinstance(block[1].get("functionResponse"), Mapping)):
            return block
        return (block[0], {**block[1], "functionResponse": {**block[1]["functionResponse"], "id": new_id}})

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        return [(orphan[0], {"text": joined_text(note.content)})]

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        # as Qwen Code answers an interrupted call itself when it resumes (an error response)
        return [("part", {"functionResponse": {"id": result.tool_call_id, "name": call[1]["functionCall"].get("name"),
                                               "response": {"error": joined_text(result.content)}}})]

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        if self.records.index(record) in self.frozen:
            raise InputError("repair would change the history a chat_compression record stores; not written back "
                             "(use --to chatmend or a provider)", line=record.line)
        data = dict(record.whole())
        if copy:
            data["uuid"] = fresh_id(f"{data.get('uuid')}:{copy}", self.uuids, seeded_uuid)
        data["message"] = {**data["message"], "parts": [b[1] for b in blocks]}
        return data

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        data: dict[str, Any] = {"uuid": fresh_id(f"{near.data.get('uuid')}:{serial}", self.uuids, seeded_uuid),
                                "parentUuid": near.data.get("uuid")}
        for key in ("sessionId", "timestamp"):
            if key in near.data:
                data[key] = near.data[key]
        data["type"] = "tool_result"
        data["provenance"] = "tool_result"
        for key in ("cwd", "version", "gitBranch"):
            if key in near.data:
                data[key] = near.data[key]
        data["message"] = {"role": "user", "parts": [b[1] for b in blocks]}
        return data

    def relink(self, out: list[tuple[Record | None, dict[str, Any] | None]]) -> None:
        """Make the chain Qwen Code walks pass every record of it that is written, and every new one, in file
        order (`relink_chain`: the fragments of one `uuid` share the first one's parent); records off the chain keep
        theirs."""
        lines = [] if self.as_read(out) else relink_chain(out, self.on_chain, "uuid", "parentUuid")
        if lines:
            self.fixes.append(f"relinked {len(lines)} {'record' if len(lines) == 1 else 'records'} (a new "
                              f"parentUuid, so Qwen Code's chain passes what repair added): line "
                              f"{', '.join(map(str, lines))}")


def _local_command(payload: Mapping[str, Any], before: Mapping[str, Any]) -> bool:
    """True for the result of a slash command answered locally (not sent to the model) right after the user turn
    that is only the command's text."""
    items = payload.get("outputHistoryItems")
    message = before.get("message")
    parts = message.get("parts") if isinstance(message, Mapping) else None
    return (payload.get("phase") == "result" and payload.get("sentToModel") is not True and isinstance(items, list)
            and bool(items) and all(isinstance(i, Mapping) and i.get("type") == "assistant" for i in items)
            and before.get("type") == "user" and before.get("subtype") is None and isinstance(parts, list)
            and len(parts) == 1 and parts[0] == {"text": payload.get("rawCommand")})


def read(lines: Iterable[str]) -> Session:
    """A Session from a Qwen Code session file (a torn last line is kept and warned about)."""
    warnings: list[str] = []
    return QwenCode(parse_records(lines, what=_WHAT, warnings=warnings)).session(warnings)


FORMAT = FileFormat(
    NAME, "Qwen Code sessions (~/.qwen/projects/*/chats/*.jsonl)", order=70, read_lines=read,
    holds_records=any_record(is_record),
)
"""The format table's entry (its check runs before Claude Code's, whose records look alike)."""
