"""Where the tools whose sessions are files keep them by default, and how each resumes a session: Claude Code,
Codex CLI and Gemini CLI (registered for `chatmend doctor`; their readers are `claude_code`, `codex` and
`gemini_cli`)."""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Mapping

from chatmend.transcripts._stores import SessionFiles, register_files

__all__: list[str] = []

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _files(*patterns: str) -> list[str]:
    return sorted({p for pattern in patterns for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)})


def _claude(env: Mapping[str, str]) -> list[str]:
    root = env.get("CLAUDE_CONFIG_DIR") or os.path.join(_home(env), ".claude")
    # the sessions Claude Code resumes by id (a subagent's agent-*.jsonl is part of its parent's)
    return [p for p in _files(os.path.join(root, "projects", "*", "*.jsonl"))
            if not os.path.basename(p).startswith("agent-")]


def _codex(env: Mapping[str, str]) -> list[str]:
    root = env.get("CODEX_HOME") or os.path.join(_home(env), ".codex")
    return _files(os.path.join(root, "sessions", "**", "rollout-*.jsonl"),
                  os.path.join(root, "archived_sessions", "**", "rollout-*.jsonl"))


def _gemini(env: Mapping[str, str]) -> list[str]:
    chats = os.path.join(_home(env), ".gemini", "tmp", "*", "chats")
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


register_files(SessionFiles("claude_code", "Claude Code", _claude, _stem, "claude --resume {id}"))
register_files(SessionFiles("codex", "Codex", _codex, _uuid_in_name, "codex resume {id}"))
register_files(SessionFiles("gemini_cli", "Gemini CLI", _gemini, _gemini_id, "gemini --resume {id}"))
