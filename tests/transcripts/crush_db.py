"""A Crush `crush.db` built as Crush's own code builds it: the schema of its migrations
(charmbracelet/crush `internal/db/migrations/*.sql`, applied by pressly/goose, which keeps `goose_db_version`)
and message rows as `internal/message/message.go` writes them (`marshalParts`: `{"type", "data"}` parts, Go's JSON;
`Create` appends a `finish` part to every message that is not an assistant's; `created_at` in seconds)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL,
    is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')));
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    prompt_tokens INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens>= 0),
    cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0), updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL,
    summary_message_id TEXT, todos TEXT);
CREATE TABLE files (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE, UNIQUE(path, session_id, version));
CREATE TABLE messages (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, parts TEXT NOT NULL default '[]', model TEXT,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT,
    is_summary_message INTEGER DEFAULT 0 NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE);
CREATE INDEX idx_messages_session_id ON messages (session_id);
CREATE INDEX idx_messages_created_at ON messages (created_at);
CREATE TABLE read_files (
    session_id TEXT NOT NULL CHECK (session_id != ''), path TEXT NOT NULL CHECK (path != ''),
    read_at INTEGER NOT NULL, FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    PRIMARY KEY (path, session_id));
"""

TRIGGERS = """
CREATE TRIGGER update_sessions_updated_at AFTER UPDATE ON sessions BEGIN
UPDATE sessions SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
CREATE TRIGGER update_messages_updated_at AFTER UPDATE ON messages BEGIN
UPDATE messages SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
CREATE TRIGGER update_session_message_count_on_insert AFTER INSERT ON messages BEGIN
UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id; END;
"""
"""Crush's triggers, made after the rows a test starts with (which then keep the times the test gives them)."""

T0 = 1764000000
FINISH_STOP = {"type": "finish", "data": {"reason": "stop", "time": 0}}


def go(value: Any) -> str:
    """Go's `json.Marshal` of the parts (compact; `<`, `>`, `&` escaped)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c") \
        .replace(">", "\\u003e").replace("&", "\\u0026")


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": value}}


def call(call_id: str, name: str = "bash", input_: str = '{"command":"sleep 60"}',
         finished: bool = True) -> dict[str, Any]:
    return {"type": "tool_call", "data": {"id": call_id, "name": name, "input": input_, "provider_executed": False,
                                          "finished": finished}}


def result(call_id: str, content: str = "ok", name: str = "bash", is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "data": {"tool_call_id": call_id, "name": name, "content": content, "data": "",
                                            "mime_type": "", "metadata": "", "is_error": is_error}}


def finish(reason: str = "tool_use") -> dict[str, Any]:
    return {"type": "finish", "data": {"reason": reason, "time": T0}}


def user(prompt: str) -> tuple[str, list[dict[str, Any]]]:
    return "user", [text(prompt), FINISH_STOP]


def assistant(*parts: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    return "assistant", list(parts)


def tool(*results: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    return "tool", [*results, FINISH_STOP]


def make_db(path: Path, sessions: dict[str, list[tuple[str, list[dict[str, Any]]]]],
            provider: str = "anthropic", step: int = 1, summary: dict[str, str] | None = None) -> None:
    """A crush.db with these sessions; message `n` of a session is created `n * step` seconds after the first,
    with the id `<session>-m<n>`."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(SCHEMA)
        conn.executemany("INSERT INTO goose_db_version (version_id, is_applied) VALUES (?, 1)",
                         [(0,), (20250424200609,), (20260127000000,)])
        for s, (session_id, messages) in enumerate(sessions.items()):
            conn.execute("INSERT INTO sessions (id, title, created_at, updated_at, summary_message_id, message_count) "
                         "VALUES (?, ?, ?, ?, ?, ?)", (session_id, f"task {session_id}", T0 + s, T0 + s,
                                                       (summary or {}).get(session_id), len(messages)))
            for n, (role, parts) in enumerate(messages):
                conn.execute(
                    "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (f"{session_id}-m{n}", session_id, role, go(parts), "claude-sonnet-4" if role == "assistant"
                     else "", provider if role == "assistant" else None, T0 + n * step, T0 + n * step))
        conn.executescript(TRIGGERS)
        conn.commit()
    finally:
        conn.close()


def rows(path: Path, session_id: str) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(id, role, parts) of a session's messages, in Crush's order."""
    conn = sqlite3.connect(path)
    try:
        return [(i, r, json.loads(p)) for i, r, p in conn.execute(
            "SELECT id, role, parts FROM messages WHERE session_id = ? ORDER BY created_at, rowid", (session_id,))]
    finally:
        conn.close()
