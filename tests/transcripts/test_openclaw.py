"""OpenClaw's SQLite store: each session window's `transcript_events` are pi session entries, read as pi's reader
reads the file they replaced, located by `seq`; chatmend reports what the store holds and writes nothing into it
(OpenClaw answers an open call itself when it sends). Databases are built with the tables this reader reads, as
OpenClaw defines them (npm `openclaw` 2026.9.6, `dist/openclaw-agent-board-schema-*.mjs`,
`OPENCLAW_AGENT_SCHEMA_SQL`); the real ones OpenClaw writes in bench/real_clients/openclaw.py's runs are read
where they are when present."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from chatmend import ChatMessage, ToolCall
from chatmend.cli import main
from chatmend.doctor import doctor
from chatmend.transcripts.openclaw import OpenclawDatabase, as_openclaw_sends
from chatmend.transcripts.stores import Store, open_store

SCHEMA = """
CREATE TABLE schema_meta (meta_key TEXT NOT NULL PRIMARY KEY, role TEXT NOT NULL, schema_version INTEGER NOT NULL,
  agent_id TEXT, app_version TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY, current_session_id TEXT NOT NULL,
  entry_json TEXT NOT NULL, entry_valid INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL,
  previous_session_id TEXT, reason TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  model_provider TEXT, model TEXT, display_name TEXT) STRICT;
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
  created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
  PRIMARY KEY (session_id, seq)) STRICT;
"""
T0 = 1796527700000
RUNS = Path(os.environ.get("RC_ROOT", "/tmp/chatmend-real-clients")) / "runs" / "openclaw"


def _entries(calls_answered: bool) -> list[dict[str, Any]]:
    """A session as OpenClaw 2026.9.6 wrote it when killed while `exec` ran (its shape from a real run)."""
    entries: list[dict[str, Any]] = [
        {"type": "session", "version": 4, "id": "s1", "timestamp": "2026-12-06T03:29:07.342Z", "cwd": "/work"},
        {"type": "model_change", "provider": "rc", "modelId": "rc-model", "id": "e1", "parentId": None,
         "timestamp": "2026-12-06T03:29:07.404Z"},
        {"type": "message", "id": "e2", "parentId": "e1", "timestamp": "2026-12-06T03:29:10.031Z",
         "message": {"role": "user", "content": "run it", "timestamp": T0, "__openclaw": {"senderIsOwner": True}}},
        {"type": "message", "id": "e3", "parentId": "e2", "timestamp": "2026-12-06T03:29:10.769Z",
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "call_1", "name": "exec",
                                                       "arguments": {"command": "sleep 60"}}],
                     "api": "openai-completions", "provider": "rc", "model": "rc-model", "stopReason": "toolUse",
                     "timestamp": T0}},
    ]
    if calls_answered:
        entries.append({"type": "message", "id": "e4", "parentId": "e3", "timestamp": "2026-12-06T03:30:10.000Z",
                        "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": "exec",
                                    "content": [{"type": "text", "text": "done"}], "isError": False,
                                    "timestamp": T0}})
    return entries


def make_db(path: Path, entries: list[dict[str, Any]], *, compressed: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(SCHEMA)
        conn.execute("INSERT INTO schema_meta VALUES ('primary', 'agent', 23, 'main', '2026.9.6', ?, ?)", (T0, T0))
        conn.execute("INSERT INTO session_nodes VALUES ('agent:main:explicit:s1', 's1', '{}', 1, ?)", (T0,))
        conn.execute("INSERT INTO session_windows (session_id, session_key, created_at, updated_at, model_provider, "
                     "model) VALUES ('s1', 'agent:main:explicit:s1', ?, ?, 'rc', 'rc-model')", (T0, T0))
        for seq, entry in enumerate(entries):
            text = json.dumps(entry, separators=(",", ":"))
            if compressed:
                import zstandard

                blob = zstandard.ZstdCompressor().compress(text.encode())
                conn.execute("INSERT INTO transcript_events (session_id, seq, created_at, event_zstd, "
                             "event_utf8_bytes, navigation_json) VALUES ('s1', ?, ?, ?, ?, '{}')",
                             (seq, T0, blob, len(text)))
            else:
                conn.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES "
                             "('s1', ?, ?, ?)", (seq, text, T0))
        conn.commit()
    finally:
        conn.close()


def _open(path: Path) -> Store:
    store = open_store(str(path))
    assert store is not None
    return store


def test_a_session_is_read_from_its_events_as_pi_reads_them(tmp_path: Path) -> None:
    db = tmp_path / "openclaw-agent.sqlite"
    make_db(db, _entries(calls_answered=True))
    with _open(db) as store:
        assert isinstance(store, OpenclawDatabase)
        [stored] = store.sessions()
    assert (stored.id, stored.resume) == ("s1", "openclaw agent --agent main --session-id s1")
    messages = stored.session.messages
    assert [(m.role, m.tool_call_id) for m in messages] == [("user", None), ("assistant", None), ("tool", "call_1")]
    assert messages[1].tool_calls[0].arguments == {"command": "sleep 60"}
    assert stored.session.where == ["event seq 2", "event seq 3", "event seq 4"]
    assert stored.session.provider == "openai_chat"
    assert not stored.repair(None)[0].changed


def test_a_call_killed_while_it_ran_is_read_as_openclaw_sends_it_and_never_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """OpenClaw answers the call itself before every request (the real client resumes such a session as is), so
    the session is not broken: the answer is told, nothing is written."""
    db = tmp_path / "openclaw-agent.sqlite"
    make_db(db, _entries(calls_answered=False))
    before = db.read_bytes()
    assert main(["check", str(db)]) == 0
    capsys.readouterr()
    with _open(db) as store:
        [stored] = store.sessions()
        result, write_back = stored.repair(None)
    assert not result.changed and not write_back.changes
    assert [(m.role, m.tool_call_id) for m in stored.session.messages] == [
        ("user", None), ("assistant", None), ("tool", "call_1")]
    assert stored.session.where[-1] == "event seq 3 (OpenClaw's answer)"
    assert stored.session.warnings == [
        "event seq 3: the call call_1 (exec) has no result; OpenClaw answers it itself when it sends"]
    assert main(["repair", str(db), "--in-place"]) == 0
    assert db.read_bytes() == before and not Path(f"{db}.bak").exists()
    assert main(["repair", str(db), "--to", "chatmend"]) == 0  # the history as sent, written out
    assert '"tool_call_id":"call_1"' in capsys.readouterr().out.replace(" ", "")


def test_as_sent_answers_open_calls_and_leaves_out_results_whose_call_is_gone() -> None:
    history = [ChatMessage(role="user", content="go"),
               ChatMessage(role="tool", tool_call_id="gone", content="orphan"),
               ChatMessage(role="assistant", tool_calls=(ToolCall(id="c1", name="exec", arguments={}),)),
               ChatMessage(role="user", content="next")]
    messages, where, said = as_openclaw_sends(history, ["seq 1", "seq 2", "seq 3", "seq 4"])
    assert [(m.role, m.tool_call_id) for m in messages] == [
        ("user", None), ("assistant", None), ("tool", "c1"), ("user", None)]
    assert where == ["seq 1", "seq 3", "seq 3 (OpenClaw's answer)", "seq 4"]
    assert said == ["seq 2: a result whose call is gone; OpenClaw leaves it out when it sends",
                    "seq 3: the call c1 (exec) has no result; OpenClaw answers it itself when it sends"]
    assert as_openclaw_sends(messages, where) == (messages, where, [])


def test_compressed_events_are_read(tmp_path: Path) -> None:
    pytest.importorskip("zstandard")
    db = tmp_path / "openclaw-agent.sqlite"
    make_db(db, _entries(calls_answered=True), compressed=True)
    with _open(db) as store:
        assert [m.role for m in store.sessions()[0].session.messages] == ["user", "assistant", "tool"]


def test_doctor_lists_openclaw_agents_in_their_state_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    make_db(db, _entries(calls_answered=False))
    for path in (db, Path(f"{db}-wal")):
        if path.exists():
            os.utime(path, (T0 / 1000, T0 / 1000))
    [found] = [f for f in doctor(env={"HOME": str(home)}, fix=True, workers=1) if f.tool == "OpenClaw"]
    assert (found.status, found.session, found.problems) == ("ok", "s1", [])  # OpenClaw answers the call itself
    elsewhere = tmp_path / "state"
    make_db(elsewhere / "agents" / "ops" / "agent" / "openclaw-agent.sqlite", _entries(calls_answered=True))
    assert [f.tool for f in doctor(env={"HOME": str(tmp_path / "none"), "OPENCLAW_STATE_DIR": str(elsewhere)},
                                   workers=1)] == ["OpenClaw"]


@pytest.mark.skipif(not RUNS.is_dir(), reason="no run of bench/real_clients/openclaw.py under $RC_ROOT")
def test_the_stores_real_openclaw_wrote_when_killed_are_read() -> None:
    """Read in place: each store OpenClaw left when killed while its tool ran holds that call with no result."""
    stores = sorted(RUNS.glob("*/home.interrupted/.openclaw/agents/main/agent/openclaw-agent.sqlite"))
    assert stores
    for db in stores:
        with _open(db) as store:
            [stored] = store.sessions()
            assert stored.session.messages[0].role == "user"
            assert any(m.tool_calls for m in stored.session.messages)
