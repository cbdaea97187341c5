"""Claude Code, Codex and Gemini CLI say what a doctor needs in their own modules (#48), as every other store of
session files does: where the tool keeps them (its variables honoured), how to tell one, its id and how to resume
it; `_locations` registers them from those names alone."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from chatmend.transcripts.stores import registered_files

CLAUDE_ID = "5f1d3c2a-9b8e-4a7d-8c6b-1e2f3a4b5c6d"
CODEX_ID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
GEMINI_ID = "4f6c2a9e-1b3d-4e8f-9a7c-2d5e6f8a1b3c"

SESSIONS = {
    "claude_code": [f".claude/projects/-work-app/{CLAUDE_ID}.jsonl"],
    "codex": [f".codex/sessions/2026/12/01/rollout-2026-12-01T10-00-00-{CODEX_ID}.jsonl",
              f".codex/archived_sessions/rollout-2026-11-30T10-00-00-{CODEX_ID}.jsonl"],
    "gemini_cli": [".gemini/tmp/9d2f41c6/chats/session-2026-03-04T09-12-4f6c2a9e.jsonl",
                   ".gemini/tmp/9d2f41c6/chats/session-2025-01-01T00-00-4f6c2a9e.json"],
}
"""Session files where each tool writes them under a home."""
NOT_SESSIONS = {
    "claude_code": [".claude/projects/-work-app/agent-1a2b.jsonl",
                    f".claude/projects/-work-app/{CLAUDE_ID}/subagents/agent-1a2b.jsonl",
                    f".claude/projects/-work-app/{CLAUDE_ID}.jsonl.bak", ".claude/history.jsonl"],
    "codex": [f".codex/sessions/2026/rollout-2026-12-01T10-00-00-{CODEX_ID}.jsonl.bak", ".codex/history.jsonl"],
    "gemini_cli": [".gemini/tmp/9d2f41c6/chats/session-2026-03-04T09-12-4f6c2a9e.jsonl.bak",
                   ".gemini/tmp/9d2f41c6/checkpoint-refactor.json", ".gemini/tmp/9d2f41c6/logs.json"],
}
"""Files beside them that are no session of their own (a subagent's, a backup, the tool's other files)."""
RESUME = {"claude_code": f"claude --resume {CLAUDE_ID}", "codex": f"codex resume {CODEX_ID}",
          "gemini_cli": f"gemini --resume {GEMINI_ID}"}


def _seed(home: Path) -> None:
    for names in [*SESSIONS.values(), *NOT_SESSIONS.values()]:
        for name in names:
            path = home / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'{{"sessionId": "{GEMINI_ID}"}}\n', encoding="utf-8")


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_each_module_names_where_its_sessions_are_and_how_to_resume_them(name: str, tmp_path: Path) -> None:
    store = importlib.import_module(f"chatmend.transcripts.{name}")
    _seed(tmp_path)
    assert all(store.is_session_file(tmp_path / p) for p in SESSIONS[name])
    assert not any(store.is_session_file(tmp_path / p) for p in NOT_SESSIONS[name])
    assert all(str(p).startswith(str(tmp_path)) for p in store.default_locations({"HOME": str(tmp_path)}))
    assert {store.resume_command(tmp_path / p) for p in SESSIONS[name]} == {RESUME[name]}
    for attribute in ("default_locations", "is_session_file", "session_id", "resume_command"):
        assert getattr(store, attribute).__doc__, attribute
    files = next(f for f in registered_files() if f.format == name)
    assert files.tool == store.TOOL and files.resume is store.resume_command
    assert files.find({"HOME": str(tmp_path)}) == sorted(str(tmp_path / p) for p in SESSIONS[name])


@pytest.mark.parametrize(("name", "variable"), [("claude_code", "CLAUDE_CONFIG_DIR"), ("codex", "CODEX_HOME")])
def test_the_tools_variable_moves_its_sessions(name: str, variable: str, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    _seed(moved)
    dotdir = SESSIONS[name][0].split("/")[0]
    files = next(f for f in registered_files() if f.format == name)
    env = {"HOME": str(tmp_path / "home"), variable: str(moved / dotdir)}
    assert files.find(env) == sorted(str(moved / p) for p in SESSIONS[name])
    assert files.find({"HOME": str(tmp_path / "home")}) == []


def test_gemini_cli_sessions_are_under_its_home_override_as_its_checkpoints_are(tmp_path: Path) -> None:
    # GEMINI_CLI_HOME: "the root directory for Gemini CLI's user-level configuration and storage" (its docs)
    from chatmend.transcripts import gemini_checkpoint, gemini_cli

    elsewhere = tmp_path / "gemini-home"
    _seed(elsewhere)
    env = {"HOME": str(tmp_path / "home"), "GEMINI_CLI_HOME": str(elsewhere)}
    assert gemini_cli.default_locations(env) == [elsewhere / ".gemini" / "tmp"]
    assert gemini_checkpoint.default_locations(env) == gemini_cli.default_locations(env)
    files = next(f for f in registered_files() if f.format == "gemini_cli")
    assert files.find(env) == sorted(str(elsewhere / p) for p in SESSIONS["gemini_cli"])
