"""Issue #44 item 4: SQLite session stores (Goose, the Agents SDK, opencode) written while the tool that owns them
is running. Each test runs `chatmend` in a subprocess against a real database while a real second sqlite
connection holds a lock or writes a turn between chatmend's read and its write."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.transcripts.test_goose import make, request, text

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = (ROOT / "examples" / "sessions" / "claude_code.jsonl").read_bytes()
HOUR_AGO = time.time() - 3600
NEW_TURN = json.dumps([{"type": "text", "text": "the app's next turn"}])


# How long chatmend waits for a lock in these runs: a lock here is held until chatmend has exited, so the wait only
# sets how long each refusal takes, not what happens.
BUSY_SECONDS = 0.5


def chatmend(*args: str, before_write: str = "") -> subprocess.CompletedProcess[str]:
    """`chatmend ARGS` in a subprocess, waiting `BUSY_SECONDS` for a lock; `before_write`, Python code, runs as the
    database store is about to write (`sqlite3` and `db`, the store's path, at hand): what the tool does
    meanwhile."""
    code = ("import sys, chatmend.cli as c, chatmend.transcripts.sqlite_stores as store\n"
            f"store.BUSY_SECONDS = {BUSY_SECONDS!r}\n")
    if before_write:
        code += ("import sqlite3\nfrom chatmend.transcripts.sqlite_stores import SqliteStore\n"
                 "write_back = SqliteStore.write_back\n"
                 "def hooked(self, *a, **k):\n    db = self.path\n"
                 f"    exec({before_write!r})\n    return write_back(self, *a, **k)\n"
                 "SqliteStore.write_back = hooked\n")
    code += "sys.exit(c.main(sys.argv[1:]))\n"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          check=False)


def app_writes_a_turn(session_id: str) -> str:
    """Code that writes the app's next turn into session `session_id`, through its own connection."""
    insert = ("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) "
              "VALUES ('msg_new', ?, 'user', ?, 1762599999)")
    return (f"conn = sqlite3.connect(db)\nconn.execute({insert!r}, ({session_id!r}, {NEW_TURN!r}))\n"
            "conn.commit()\nconn.close()\n")


def goose(path: Path, *, journal: str = "wal") -> Path:
    """A Goose database whose last turn is a call left unanswered (repair adds a row answering it)."""
    make(path, [("user", [text("build it")]), ("assistant", [request("toolu_1")])])
    conn = sqlite3.connect(path)
    try:
        conn.execute(f"PRAGMA journal_mode={journal}")
    finally:
        conn.close()
    for name in (path, Path(f"{path}-wal")):
        if name.exists():
            os.utime(name, (HOUR_AGO, HOUR_AGO))
    return path


def rows(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, role, content_json FROM messages ORDER BY id").fetchall()
    finally:
        conn.close()


def test_a_database_another_connection_reads_is_written_once_it_is_done_or_refused_naming_it(
        tmp_path: Path) -> None:
    db = goose(tmp_path / "sessions.db", journal="delete")  # a rollback journal: a reader blocks the commit
    before = rows(db)
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT * FROM messages").fetchall()  # the tool's read transaction, held
        proc = chatmend("repair", str(db), "--in-place")
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    assert proc.returncode == 2, proc.stderr  # never 3, "internal error"
    assert proc.stderr.startswith(f"{db}: ") and "locked" in proc.stderr and "nothing was written" in proc.stderr
    assert rows(db) == before and not list(tmp_path.glob("*.bak*"))
    done = chatmend("repair", str(db), "--in-place")
    assert done.returncode == 0, done.stderr
    assert len(rows(db)) == len(before) + 1


def test_a_database_locked_past_the_busy_timeout_is_exit_2_naming_it(tmp_path: Path) -> None:
    db = goose(tmp_path / "sessions.db", journal="delete")
    before = db.read_bytes()
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # the tool writing a turn: no one reads until it commits
        proc = chatmend("repair", str(db), "--in-place")
        check = chatmend("check", str(db))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    for done in (proc, check):
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"{db}: the database is locked by another process"), done.stderr
    assert db.read_bytes() == before and not list(tmp_path.glob("*.bak*"))


def test_a_turn_the_app_writes_between_the_read_and_the_write_refuses_the_repair(tmp_path: Path) -> None:
    db = goose(tmp_path / "sessions.db")
    app_turn = app_writes_a_turn("20251108_1")
    before = rows(db)
    proc = chatmend("repair", str(db), "--in-place", before_write=app_turn)
    assert proc.returncode == 2, proc.stderr
    assert "changed while chatmend was repairing it" in proc.stderr and "nothing was written" in proc.stderr
    after = rows(db)
    assert after[:-1] == before and after[-1][2] == NEW_TURN  # the app's turn, last, and nothing of chatmend's
    assert not list(tmp_path.glob("*.bak*"))


def test_doctor_fixes_what_it_can_and_reports_a_locked_database_in_use(tmp_path: Path) -> None:
    (tmp_path / "goose").mkdir()
    locked = goose(tmp_path / "goose" / "sessions.db", journal="delete")
    session = tmp_path / "s.jsonl"
    session.write_bytes(CLAUDE)
    os.utime(session, (HOUR_AGO, HOUR_AGO))
    holder = sqlite3.connect(locked, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        proc = chatmend("doctor", "--fix", "--force", "--json", "--workers", "1", str(tmp_path))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 1, proc.stderr
    found = {f["path"]: f for f in map(json.loads, proc.stdout.splitlines())}
    assert found[str(session)]["status"] == "fixed"
    assert found[str(locked)]["status"] == "in use"
    assert "locked" in found[str(locked)]["problems"][0]


def test_doctor_writes_the_sessions_that_did_not_change_and_leaves_the_one_that_did(tmp_path: Path) -> None:
    db = goose(tmp_path / "sessions.db")
    conn = sqlite3.connect(db)
    try:
        conn.execute("INSERT INTO sessions (id, name, working_dir, provider_name, updated_at) VALUES "
                     "('20251108_2', 'second', '/work', 'anthropic', '2025-11-08 10:00:00')")
        for n, (role, content) in enumerate([("user", [text("again")]), ("assistant", [request("toolu_2")])]):
            conn.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) "
                         "VALUES (?, '20251108_2', ?, ?, ?)", (f"two_{n}", role, json.dumps(content), 1762596100 + n))
        conn.commit()
    finally:
        conn.close()
    os.utime(db, (HOUR_AGO, HOUR_AGO))
    app_turn = app_writes_a_turn("20251108_2")
    proc = chatmend("doctor", "--fix", "--force", "--json", "--workers", "1", str(db), before_write=app_turn)
    assert proc.returncode == 1, proc.stderr
    found = {f["session"]: f for f in map(json.loads, proc.stdout.splitlines())}
    assert found["20251108_1"]["status"] == "fixed" and found["20251108_1"]["backup"]
    assert found["20251108_2"]["status"] == "in use"
    assert "changed while chatmend was repairing it" in found["20251108_2"]["problems"][-1]
    conn = sqlite3.connect(db)
    try:
        second = conn.execute("SELECT content_json FROM messages WHERE session_id = '20251108_2' ORDER BY id"
                              ).fetchall()
    finally:
        conn.close()
    assert len(second) == 3 and second[-1][0] == NEW_TURN  # the app's turn, last; no answer added after it


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_an_unlocked_database_is_repaired_in_one_transaction(tmp_path: Path, journal: str) -> None:
    db = goose(tmp_path / "sessions.db", journal=journal)
    proc = chatmend("repair", str(db), "--in-place")
    assert proc.returncode == 0, proc.stderr
    assert chatmend("check", str(db)).returncode == 0


def test_the_stores_reads_wait_for_a_lock_as_long_as_its_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`BUSY_SECONDS` is the one wait: the read connection takes it too (what these runs shorten in the child)."""
    from chatmend.transcripts import sqlite_stores
    from chatmend.transcripts.stores import open_store

    monkeypatch.setattr(sqlite_stores, "BUSY_SECONDS", BUSY_SECONDS)
    store = open_store(str(goose(tmp_path / "sessions.db")))
    assert isinstance(store, sqlite_stores.SqliteStore)
    with store:
        assert store.read_connection().execute("PRAGMA busy_timeout").fetchone() == (BUSY_SECONDS * 1000,)
