"""OpenClaw's SQLite store (OpenClaw 2026.9 and later): `~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite`
(`$OPENCLAW_STATE_DIR`, else `$OPENCLAW_HOME/.openclaw`, else `~/.openclaw`), read as OpenClaw's own code defines it
(npm `openclaw`, `dist/openclaw-agent-board-schema-*.mjs`: `OPENCLAW_AGENT_SCHEMA_SQL`).

Each session window (`session_windows`: session_id, session_key, updated_at, model_provider, display_name) keeps its
transcript as rows of `transcript_events` (session_id, seq, `event_json`, or `event_zstd` with the same JSON
compressed): one pi session entry a row, in `seq` order, the session header first (`type: "session"`), then
entries with an `id` and a `parentId`, exactly the lines of the pi session file OpenClaw wrote before this store
(`openclaw doctor --fix` imports those files into it). So a session is read as pi's reader reads that file
(`chatmend.transcripts.pi`), each message located by its event's `seq`.

OpenClaw heals what it sends by itself: before every request its transport runs `repairToolUseResultPairing`
(`dist/session-transcript-repair-*.mjs`), which answers a call left without a result ("missing tool result in session
history; inserted synthetic error result"), drops a result whose call is gone and puts results after their call. The
store keeps the history as it was (a call killed while its tool ran stays unanswered), but what OpenClaw sends is
valid, so a session is read as OpenClaw sends it (`as_openclaw_sends`): each call it answers itself, each result it
leaves out, told in a warning, and nothing reported as a problem (the real OpenClaw 2026.9.6 killed mid-tool resumes
as is: bench/real_clients/openclaw.py). chatmend does not write into this store (its transcript is also projected
into `transcript_event_identities`, `session_transcript_active_events` and a full-text index under write fences of
OpenClaw's own): a repair that would change it is refused, naming why; `--to chatmend` or a provider writes the
history out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from chatmend import ChatMessage, HistoryError, RepairResult, repair_history
from chatmend.files.io import InputError
from chatmend.repair import IsReadOnly
from chatmend.transcripts import pi
from chatmend.transcripts.sqlite_stores import SqliteStore, checked, zstd_decompressed
from chatmend.transcripts.stores import StoredSession, WriteBack, register, store_session

__all__ = ["NAME", "OpenclawDatabase", "as_openclaw_sends"]

NAME = "openclaw"
_LINE = re.compile(r"\bline (\d+)")
_REFUSED = ("chatmend does not write into OpenClaw's SQLite store (OpenClaw pairs calls and results itself before "
            "every request); write the repaired history with --to chatmend or a provider")


def _decompress(blob: bytes, where: str) -> str:
    try:
        return zstd_decompressed(blob, f"{where}: event_zstd").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: event_zstd: not UTF-8 JSON ({exc})") from None


@register
class OpenclawDatabase(SqliteStore):
    """An OpenClaw agent's `openclaw-agent.sqlite`."""

    name: ClassVar[str] = NAME
    tool: ClassVar[str] = "OpenClaw"
    description: ClassVar[str] = "OpenClaw sessions (~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite)"
    tables: ClassVar[frozenset[str]] = frozenset({"schema_meta", "session_nodes", "session_windows",
                                                  "transcript_events"})
    holder: ClassVar[str] = "a running OpenClaw"

    @classmethod
    def default_paths(cls, env: Mapping[str, str]) -> list[str]:
        # beside each agent's legacy `sessions` folder, its `agent` folder holds the database
        paths = [folder.parent / "agent" / "openclaw-agent.sqlite" for folder in pi.openclaw_locations(env)]
        return [str(p) for p in paths if p.is_file()]

    def _agent(self) -> str:
        rows = self.query("SELECT agent_id FROM schema_meta WHERE agent_id IS NOT NULL LIMIT 1")
        return str(rows[0][0]) if rows else Path(self.path).parent.parent.name

    def sessions(self) -> list[StoredSession]:
        agent = self._agent()
        out = []
        for session_id, key, updated, title in self.query(
                "SELECT session_id, session_key, updated_at, display_name FROM session_windows "
                "ORDER BY created_at, session_id"):
            events, as_read = self.query_as_read(
                "SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq",
                (session_id,))
            if not events:
                continue
            lines = []
            for seq, text, blob in events:
                at = f"session {session_id} event seq {seq}"
                if text is None and not isinstance(blob, bytes):
                    raise InputError(f"{at}: expected event_json or event_zstd")
                lines.append((text if text is not None else _decompress(blob, at)).rstrip("\n") + "\n")
            try:
                read = pi.read(lines)
            except InputError as exc:
                raise InputError(f"session {session_id}: {_located(str(exc), events)}") from None
            messages, located, healed = as_openclaw_sends(list(read.messages),
                                                          [_located(w, events) for w in read.where])
            session = store_session(NAME, read.provider or "openai_chat", messages, located, model=read.model,
                                    warnings=[*(_located(w, events) for w in read.warnings), *healed])

            def repair(is_read_only: IsReadOnly | None,
                       messages: list[Any] = messages) -> tuple[RepairResult, WriteBack]:
                result = repair_history(messages, is_read_only=is_read_only)
                if result.changed:
                    raise HistoryError(_REFUSED)
                return result, WriteBack()

            out.append(StoredSession(
                id=str(session_id), title=title if isinstance(title, str) else str(key or ""),
                modified=updated / 1000 if isinstance(updated, (int, float)) else self.modified(),
                session=session, repair=checked(repair, [as_read]),
                resume=f"openclaw agent --agent {agent} --session-id {session_id}"))
        return out


def as_openclaw_sends(messages: list[ChatMessage], where: list[str]) -> tuple[list[ChatMessage], list[str], list[str]]:
    """The history as OpenClaw's transport sends it, where each message stands, and what it changed, in words: a
    call left without a result answered (here in chatmend's words), a result whose call is gone left out, results
    put after their call (the pairs `repair_history` makes; its notes are results OpenClaw drops)."""
    result = repair_history(messages)
    if not result.changed:
        return messages, where, []
    kept: list[ChatMessage] = []
    placed: list[str] = []
    said: list[str] = []
    for message, origin in zip(result.messages, result.origins()):
        at = where[origin.message_index]
        if origin.kind == "note":
            said.append(f"{at}: a result whose call is gone; OpenClaw leaves it out when it sends")
            continue
        if origin.kind == "synthetic":
            call = messages[origin.message_index].tool_calls[origin.call_index or 0]
            said.append(f"{at}: the call {call.id} ({call.name}) has no result; OpenClaw answers it itself when it "
                        "sends")
            at = f"{at} (OpenClaw's answer)"
        kept.append(message)
        placed.append(at)
    return kept, placed, said


def _located(text: str, events: list[tuple[Any, ...]]) -> str:
    """pi's `line N` as the event it is (`event seq S`: line N is the Nth event of the session)."""
    def seq(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"event seq {events[n - 1][0]}" if 0 < n <= len(events) else match.group(0)
    return _LINE.sub(seq, text)

