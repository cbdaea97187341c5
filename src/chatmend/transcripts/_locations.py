"""The tools whose sessions are files, registered for `chatmend doctor` from the names each store module gives
(`TOOL`, `NAME`, `default_locations`, `is_session_file`, `session_id`, `resume_command`, and `READ_AS_HELD` when its
tool's files come in more than one format): where each keeps them by default and how it resumes one (OpenClaw's
files are pi's)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from types import ModuleType

from chatmend.transcripts import pi
from chatmend.transcripts.stores import SessionFiles, register_files, store_modules

__all__: list[str] = []


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _under(locations: Callable[[Mapping[str, str]], list[Path]], is_session_file: Callable[[str], bool],
           env: Mapping[str, str]) -> list[str]:
    """The session files under a store's default locations."""
    found: set[str] = set()
    for root in locations(env):
        for folder, _, names in os.walk(root):
            found.update(p for p in (os.path.join(folder, n) for n in names) if is_session_file(p))
    return sorted(found)


def _named(module: ModuleType) -> SessionFiles:
    """A store that names its tool, format, locations and resume command itself."""
    session_id = getattr(module, "session_id", None) or getattr(module, "task_id", None) or _stem
    return SessionFiles(module.NAME, module.TOOL, partial(_under, module.default_locations, module.is_session_file),
                        session_id, module.resume_command, getattr(module, "READ_AS_HELD", False))


for _module in store_modules():
    if hasattr(_module, "TOOL"):
        register_files(_named(_module))
# OpenClaw's session files (before its SQLite store) are pi's, written by pi's own session manager
register_files(SessionFiles(pi.NAME, pi.OPENCLAW, partial(_under, pi.openclaw_locations, pi.is_session_file),
                            pi.session_id, pi.resume_command))
