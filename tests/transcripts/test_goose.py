"""Goose's sessions.db (schema as Goose creates it): calls and results read from the message contents, an
interrupted call answered in the user message after it (or a new row at the end), every other row unchanged."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatmend import HistoryError
from chatmend.cli import main
from chatmend.transcripts.goose import GooseDatabase
from chatmend.transcripts.stores import Store, open_store
from tests.transcripts.opencode_db import rows

SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT,
    tenant_id TEXT, user_id TEXT);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
"""


def request(call_id: str, name: str = "developer__shell") -> dict[str, Any]:
    return {"type": "toolRequest", "id": call_id,
            "toolCall": {"status": "success", "value": {"name": name, "arguments": {"command": "ls"}}}}


def response(call_id: str, text: str = "a b") -> dict[str, Any]:
    return {"type": "toolResponse", "id": call_id,
            "toolResult": {"status": "success", "value": {"content": [{"type": "text", "text": text}],
                                                          "isError": False}}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def make(path: Path, messages: list[tuple[str, list[dict[str, Any]]]], provider: str = "anthropic") -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(SCHEMA)
        conn.execute("INSERT INTO schema_version (version) VALUES (9)")
        conn.execute("INSERT INTO sessions (id, name, working_dir, provider_name, updated_at) VALUES "
                     "('20251108_1', 'fix the build', '/work', ?, '2025-11-08 10:00:00')", (provider,))
        for n, (role, content) in enumerate(messages):
            conn.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) "
                         "VALUES (?, '20251108_1', ?, ?, ?)", (f"msg_{n}", role, json.dumps(content), 1762596000 + n))
        conn.commit()
    finally:
        conn.close()


def _open(path: Path) -> Store:
    store = open_store(str(path))
    assert store is not None
    return store


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_calls_and_results_are_read_from_the_contents(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    make(db, [("user", [text("build it")]),
              ("assistant", [text("running"), request("toolu_1"), request("toolu_2")]),
              ("user", [response("toolu_1"), {"type": "toolResponse", "id": "toolu_2",
                                               "toolResult": {"status": "error", "error": "denied"}}]),
              ("assistant", [text("done")])])
    with _open(db) as store:
        assert isinstance(store, GooseDatabase)
        [stored] = store.sessions()
    assert (stored.id, stored.title, stored.resume) == ("20251108_1", "fix the build",
                                                        "goose session --resume --session-id 20251108_1")
    messages = stored.session.messages
    assert [(m.role, m.tool_call_id, m.is_error) for m in messages] == [
        ("user", None, False), ("assistant", None, False), ("tool", "toolu_1", False), ("tool", "toolu_2", True),
        ("assistant", None, False)]
    assert messages[1].tool_calls[0].name == "developer__shell" and messages[2].content == "a b"
    assert stored.session.provider == "anthropic"
    assert not stored.repair(None)[0].changed


def test_an_interrupted_call_is_answered_first_in_the_next_user_message(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    make(db, [("user", [text("build it")]), ("assistant", [request("toolu_1"), request("toolu_2")]),
              ("user", [response("toolu_2"), text("why so slow?")])])
    before = rows(db)
    code, out, _ = call(capsys, "check", str(db))
    assert code == 1 and "R6: the call toolu_1 (developer__shell) has no result" in out
    code, out, _ = call(capsys, "repair", str(db), "--in-place")
    assert code == 0 and "answered 1 call as interrupted: toolu_1" in out
    after = rows(db)
    assert after["sessions"] == before["sessions"] and after["messages"][:2] == before["messages"][:2]
    content = json.loads(after["messages"][2][4])
    assert [c.get("id") for c in content] == ["toolu_1", "toolu_2", None]
    assert content[0]["toolResult"]["status"] == "error"
    assert call(capsys, "check", str(db))[0] == 0


def test_a_last_interrupted_call_gets_a_new_user_row(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    make(db, [("user", [text("build it")]), ("assistant", [request("toolu_1")])])
    before = rows(db)
    with _open(db) as store:
        [stored] = store.sessions()
        _, write_back = stored.repair(None)
        store.write_back([write_back])
    after = rows(db)
    assert after["messages"][:2] == before["messages"]
    new = after["messages"][2]
    assert (new[3], new[5]) == ("user", before["messages"][-1][5])
    assert json.loads(new[4])[0]["id"] == "toolu_1"
    with _open(db) as store:
        assert not store.sessions()[0].repair(None)[0].changed


def test_a_repair_goose_cannot_hold_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sessions.db"
    make(db, [("user", [text("go")]), ("user", [response("toolu_9")])])  # an orphan result
    before = rows(db)
    code, _, err = call(capsys, "repair", str(db), "--in-place")
    assert code == 2 and "cannot be written back into a Goose session" in err
    assert rows(db) == before


@settings(max_examples=25)
@given(st.lists(st.tuples(st.lists(st.booleans(), min_size=1, max_size=3), st.booleans()), min_size=1, max_size=4))
def test_any_mix_is_valid_after_one_repair_and_keeps_every_content(
        tmp_path_factory: pytest.TempPathFactory, turns: list[tuple[list[bool], bool]]) -> None:
    """Turns of calls (each answered or not), each followed or not by the user typing: after one repair nothing
    is left to repair, and every row's contents are still there, in order, around what repair put in."""
    db = tmp_path_factory.mktemp("goose") / "sessions.db"
    messages: list[tuple[str, list[dict[str, Any]]]] = [("user", [text("go")])]
    n = 0
    for answered, typed in turns:
        ids = [f"toolu_{n + k}" for k in range(len(answered))]
        n += len(answered)
        messages.append(("assistant", [request(i) for i in ids]))
        follow = [response(i) for i, done in zip(ids, answered) if done] + ([text("and?")] if typed else [])
        if follow:
            messages.append(("user", follow))
    make(db, messages)
    before = rows(db)["messages"]
    roles = [role for role, _ in messages]
    stranded = any(role == "assistant" and roles[k + 1:k + 2] == ["assistant"] for k, role in enumerate(roles))
    with _open(db) as store:
        [stored] = store.sessions()
        if stranded:  # an unanswered call right before another reply: refused, nothing written
            with pytest.raises(HistoryError, match="followed by another assistant message"):
                stored.repair(None)
            return
        _, write_back = stored.repair(None)
        store.write_back([write_back])
    after = rows(db)["messages"]
    for old, new in zip(before, after):
        assert new[:4] == old[:4] and new[5:] == old[5:]
        old_content, new_content = json.loads(old[4]), json.loads(new[4])
        assert [c for c in new_content if c in old_content] == old_content
    with _open(db) as store:
        assert not store.sessions()[0].repair(None)[0].changed
