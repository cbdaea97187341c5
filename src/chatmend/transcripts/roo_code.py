"""Roo Code tasks: what a doctor needs to find them. Their files are read by `chatmend.transcripts.cline` (the
list of Anthropic message params Roo Code wrote before its version 2 is Cline's format; `{"version": 2,
"messages": [...]}` is `roo_code`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chatmend.files.session import Session
from chatmend.transcripts import cline
from chatmend.transcripts.cline import ROO_NAME, editor_storage, is_session_file, read, task_id
from chatmend.transcripts.stores import FileFormat

__all__ = [
    "FORMAT", "NAME", "READ_AS_HELD", "TOOL", "default_locations", "holds_task", "is_session_file", "read",
    "read_document", "resume_command",
]

NAME = ROO_NAME
"""The format of Roo Code's version-2 history (`--from roo_code`)."""
TOOL = "Roo Code"
"""The tool's name, as a person knows it."""
READ_AS_HELD = True
"""Roo Code's task files come in two formats (Cline's, then its version 2): `chatmend doctor` reads each as the
format it holds, not as `NAME`."""
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


def holds_task(value: object) -> bool:
    """True for Roo Code's version-2 history: `{"version": 2, "messages": [...]}`."""
    return cline.holds_session(value) == NAME


def read_document(value: Any, text: str) -> Session:
    """A Session from a version-2 task history (`value`, its parsed JSON, and `text`, its content)."""
    return cline.read_document(value, text, NAME)


FORMAT = FileFormat(NAME, 'Roo Code version-2 tasks ({"version": 2, "messages"} in api_conversation_history.json)',
                    order=95, read_document=read_document, holds_document=holds_task)
"""The format table's entry."""
