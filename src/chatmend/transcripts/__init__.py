"""Readers and writers for the session files agent tools save: Claude Code, Codex CLI and Gemini CLI sessions.

Each module offers `read(lines) -> Session`; repairing a transcript writes it back record by record,
keeping every record chatmend does not need untouched.
"""

from __future__ import annotations

__all__ = ["claude_code", "cline", "codex", "gemini_checkpoint", "gemini_cli", "kimi_code", "pydantic_ai", "roo_code"]
