"""Readers and writers for the sessions agent tools and frameworks save: Claude Code, Codex CLI, Gemini CLI
(sessions and checkpoints), Kimi Code CLI and kimi-cli, pi and OpenClaw, Cline and Roo Code tasks and pydantic-ai
message histories (files), and the session stores (databases and folders of many sessions) of opencode, Kilo Code,
Goose and the OpenAI Agents SDK.

Each file module reads its file into a `Session`; repairing one writes it back record by record (or item by item),
keeping every record chatmend does not need untouched. Each declares its format for the format table (`FORMAT`, a
`stores.FileFormat`: its readers, how it is detected). The file modules name, for `chatmend doctor`, the tool
(`TOOL`), its format (`NAME`), where it keeps sessions (`default_locations`), how to tell one (`is_session_file`)
and how to resume it (`resume_command`). Each store module registers a `Store` class (`stores.register`) whose
sessions are repaired by changes the store applies itself, in one write after a backup (`sqlite_stores.SqliteStore` for
SQLite databases).
"""

from __future__ import annotations

__all__ = [
    "agents_sdk", "claude_code", "cline", "codex", "gemini_checkpoint", "gemini_cli", "goose", "kilo_code", "kimi_cli",
    "kimi_code", "opencode", "pi", "pydantic_ai", "roo_code",
]
