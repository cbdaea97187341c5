"""Roo Code tasks: what a doctor needs to find them. Their files are read by `chatmend.transcripts.cline` (the
list of Anthropic message params Roo Code wrote before its version 2 is Cline's format; `{"version": 2,
"messages": [...]}` is `roo_code`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from chatmend.transcripts.cline import ROO_NAME, editor_storage, is_session_file, read, task_id

__all__ = ["NAME", "TOOL", "default_locations", "is_session_file", "read", "resume_command"]

NAME = ROO_NAME
"""The format of Roo Code's version-2 history (`--from roo_code`)."""
TOOL = "Roo Code"
"""The tool's name, as a person knows it."""
EXTENSION_ID = "rooveterinaryinc.roo-cline"
"""Roo Code's VS Code extension id: its global storage directory's name."""


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Roo Code keeps its tasks: `.../globalStorage/rooveterinaryinc.roo-cline/tasks` in each VS Code
    build (`$APPDATA` on Windows, `~/Library/Application Support` on macOS, `$XDG_CONFIG_HOME` or `~/.config`
    elsewhere). The directories to scan; some may not exist."""
    return [storage / "tasks" for storage in editor_storage(EXTENSION_ID, env)]


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the task: Roo Code has no command line; its history panel in the editor opens it."""
    return f"open task {task_id(path)} from Roo Code's history in the editor"
