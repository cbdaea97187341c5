"""Readers and writers for the sessions agent tools save: Claude Code, Codex CLI and Gemini CLI session files,
and the session stores (databases and folders of many sessions) of opencode, Goose and the OpenAI Agents SDK.

Each file module offers `read(lines) -> Session`; repairing a transcript writes it back record by record,
keeping every record chatmend does not need untouched. Each store module registers a `Store` class
(`_stores.register`) whose sessions are repaired by changes the store applies itself, in one write after a
backup (`_sqlite.SqliteStore` for SQLite databases).
"""

from __future__ import annotations

__all__ = ["agents_sdk", "claude_code", "codex", "gemini_cli", "goose", "opencode"]
