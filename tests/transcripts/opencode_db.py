"""Build opencode session stores as opencode 1.18 writes them: the SQLite database (its own table definitions,
WAL) and the older `storage/` folder of JSON files."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL);
CREATE TABLE `session` (
  `id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text, `slug` text NOT NULL,
  `directory` text NOT NULL, `path` text, `title` text NOT NULL, `version` text NOT NULL, `share_url` text,
  `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text,
  `metadata` text, `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL,
  `revert` text, `permission` text, `agent` text, `model` text, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer,
  CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`)
  ON DELETE CASCADE);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`)
  ON DELETE CASCADE);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`)
  ON DELETE CASCADE);
CREATE TABLE `event` (`id` text PRIMARY KEY, `aggregate_id` text NOT NULL, `seq` integer NOT NULL,
  `type` text NOT NULL, `data` text NOT NULL);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
"""

T0 = 1_796_186_013_000


def user(text: str) -> tuple[str, list[dict[str, Any]]]:
    return "user", [{"type": "text", "text": text}]


def tool(call_id: str, status: str, output: str = "ok", name: str = "bash") -> dict[str, Any]:
    """A tool part in one of opencode's states."""
    state: dict[str, Any]
    if status == "pending":
        state = {"status": "pending", "input": {}, "raw": ""}
    elif status == "running":
        state = {"metadata": {"output": ""}, "status": "running", "input": {"command": f"echo {call_id}"},
                 "time": {"start": T0 + 500}}
    elif status == "completed":
        state = {"status": "completed", "input": {"command": f"echo {call_id}"}, "output": output,
                 "title": "echo", "metadata": {"exit": 0}, "time": {"start": T0 + 500, "end": T0 + 600}}
    else:
        state = {"status": "error", "input": {"command": f"echo {call_id}"}, "error": output,
                 "time": {"start": T0 + 500, "end": T0 + 600}}
    return {"type": "tool", "tool": name, "callID": call_id, "state": state}


def assistant(*parts: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    return "assistant", list(parts)


STEP = {"type": "step-start"}
FINISH = {"reason": "tool-calls", "type": "step-finish", "tokens": {"total": 10}, "cost": 0}


def _message_data(role: str, parent: str | None) -> dict[str, Any]:
    if role == "user":
        return {"role": "user", "time": {"created": T0}, "agent": "build",
                "model": {"providerID": "rc", "modelID": "rc-model"}}
    return {"parentID": parent, "role": "assistant", "mode": "build", "agent": "build", "cost": 0,
            "modelID": "rc-model", "providerID": "rc", "time": {"created": T0}}


def make_db(path: Path, sessions: dict[str, list[tuple[str, list[dict[str, Any]]]]], *, wal: bool = True) -> None:
    """A database holding `sessions` (id -> messages of (role, parts)), ids and times in opencode's order."""
    conn = sqlite3.connect(path)
    try:
        if wal:
            conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(SCHEMA)
        conn.execute("INSERT INTO project VALUES ('global', '/', NULL, NULL, ?, ?)", (T0, T0))
        clock = 0
        for s, (session_id, messages) in enumerate(sessions.items()):
            conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
                         "time_updated) VALUES (?, 'global', 'slug', '/work', ?, '1.18.33', ?, ?)",
                         (session_id, f"title {s}", T0 + s, T0 + s + 100))
            parent = None
            for m, (role, parts) in enumerate(messages):
                clock += 1
                message_id = f"msg_{s:03d}{m:04d}"
                conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                             (message_id, session_id, T0 + clock, T0 + clock,
                              json.dumps(_message_data(role, parent), separators=(",", ":"))))
                parent = message_id if role == "user" else parent
                for p, part in enumerate(parts):
                    conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                                 (f"prt_{s:03d}{m:04d}{p:03d}", message_id, session_id, T0 + clock, T0 + clock,
                                  json.dumps(part, ensure_ascii=False, separators=(",", ":"))))
            conn.execute("INSERT INTO event VALUES (?, ?, 0, 'session.created.1', '{}')",
                         (f"evt_{s:03d}", session_id))
        conn.commit()
    finally:
        conn.close()


def rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, to compare a database before and after."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: conn.execute(f"SELECT * FROM `{t}` ORDER BY 1").fetchall() for t in tables}
    finally:
        conn.close()


def part_data(path: Path, part_id: str) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        value: dict[str, Any] = json.loads(conn.execute("SELECT data FROM part WHERE id = ?", (part_id,)).fetchone()[0])
        return value
    finally:
        conn.close()


def make_folder(root: Path, sessions: dict[str, list[tuple[str, list[dict[str, Any]]]]]) -> Path:
    """The older `storage/` layout holding `sessions`; returns the storage folder."""
    storage = root / "storage"
    for s, (session_id, messages) in enumerate(sessions.items()):
        (storage / "session" / "global").mkdir(parents=True, exist_ok=True)
        (storage / "session" / "global" / f"{session_id}.json").write_text(json.dumps(
            {"id": session_id, "projectID": "global", "title": f"title {s}", "version": "0.9.0",
             "time": {"created": T0, "updated": T0}}))
        folder = storage / "message" / session_id
        folder.mkdir(parents=True, exist_ok=True)
        parent = None
        for m, (role, parts) in enumerate(messages):
            message_id = f"msg_{s:03d}{m:04d}"
            data = {"id": message_id, "sessionID": session_id, **_message_data(role, parent)}
            data["time"] = {"created": T0 + m}
            (folder / f"{message_id}.json").write_text(json.dumps(data, indent=2))
            parent = message_id if role == "user" else parent
            part_folder = storage / "part" / message_id
            part_folder.mkdir(parents=True, exist_ok=True)
            for p, part in enumerate(parts):
                part_id = f"prt_{s:03d}{m:04d}{p:03d}"
                (part_folder / f"{part_id}.json").write_text(json.dumps(
                    {"id": part_id, "sessionID": session_id, "messageID": message_id, **part}, indent=2))
    return storage
