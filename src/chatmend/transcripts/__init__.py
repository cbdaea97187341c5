"""Readers and writers for the session files agent tools and frameworks save: Claude Code, Codex CLI, Gemini CLI
(sessions and checkpoints), Kimi Code CLI and kimi-cli, Cline and Roo Code tasks, pydantic-ai message histories.

Each module reads its store into a `Session`; repairing one writes it back record by record (or item by item),
keeping every record chatmend does not need untouched. The modules added for `chatmend doctor` also name the
tool (`TOOL`), its format (`NAME`), where it keeps sessions (`default_locations`), how to tell one
(`is_session_file`) and how to resume it (`resume_command`).
"""

from __future__ import annotations

__all__ = [
    "claude_code", "cline", "codex", "gemini_checkpoint", "gemini_cli", "kimi_cli", "kimi_code", "pydantic_ai",
    "roo_code",
]
