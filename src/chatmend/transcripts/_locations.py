"""The tools whose sessions are files, registered for `chatmend doctor`: where each keeps them by default and how
it resumes one. Claude Code, Codex CLI and Gemini CLI are described here (their readers are `claude_code`, `codex`
and `gemini_cli`); every store module that names these things itself (`TOOL`, `NAME`, `default_locations`,
`is_session_file`, `resume_command`, and `READ_AS_HELD` when its tool's files come in more than one format) is
registered from its own names (OpenClaw's files are pi's)."""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from types import ModuleType

from chatmend.transcripts import pi
from chatmend.transcripts._stores import SessionFiles, home, register_files, store_modules

__all__: list[str] = []

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _files(*patterns: str) -> list[str]:
    return sorted({p for pattern in patterns for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)})


def _claude(env: Mapping[str, str]) -> list[str]:
    root = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home(env), ".claude")
    # the sessions Claude Code resumes by id (a subagent's agent-*.jsonl is part of its parent's)
    return [p for p in _files(os.path.join(root, "projects", "*", "*.jsonl"))
            if not os.path.basename(p).startswith("agent-")]


def _codex(env: Mapping[str, str]) -> list[str]:
    root = env.get("CODEX_HOME") or os.path.join(home(env), ".codex")
    return _files(os.path.join(root, "sessions", "**", "rollout-*.jsonl"),
                  os.path.join(root, "archived_sessions", "**", "rollout-*.jsonl"))


def _gemini(env: Mapping[str, str]) -> list[str]:
    chats = os.path.join(home(env), ".gemini", "tmp", "*", "chats")
    return _files(os.path.join(chats, "session-*.jsonl"), os.path.join(chats, "session-*.json"))


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _uuid_in_name(path: str) -> str:
    """Codex's rollout-<time>-<thread id>.jsonl: the thread id."""
    found = _UUID.findall(os.path.basename(path))
    return found[-1] if found else _stem(path)


def _gemini_id(path: str) -> str:
    """The `sessionId` of the header line (the file name holds only 8 characters of it)."""
    try:
        with open(path, encoding="utf-8") as handle:
            head = json.loads(handle.readline() if path.endswith(".jsonl") else handle.read())
    except (OSError, ValueError):
        return _stem(path)
    value = head.get("sessionId") if isinstance(head, dict) else None
    return value if isinstance(value, str) else _stem(path)


def _command(template: str, session_id: Callable[[str], str], path: str) -> str:
    """A resume command from its template, `{id}` the session's id."""
    return template.format(id=session_id(path))


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


register_files(SessionFiles("claude_code", "Claude Code", _claude, _stem,
                            partial(_command, "claude --resume {id}", _stem)))
register_files(SessionFiles("codex", "Codex", _codex, _uuid_in_name, partial(_command, "codex resume {id}",
                                                                             _uuid_in_name)))
register_files(SessionFiles("gemini_cli", "Gemini CLI", _gemini, _gemini_id,
                            partial(_command, "gemini --resume {id}", _gemini_id)))
for _module in store_modules():
    if hasattr(_module, "TOOL"):
        register_files(_named(_module))
# OpenClaw's session files (before its SQLite store) are pi's, written by pi's own session manager
register_files(SessionFiles(pi.NAME, pi.OPENCLAW, partial(_under, pi.openclaw_locations, pi.is_session_file),
                            pi.session_id, pi.resume_command))
