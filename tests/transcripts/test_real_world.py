"""The real session files in ../shared/real-world/ (skipped when absent, never copied here): each reads as its
store (or is reported as not a session), repairs, and writes back losing no line; a repair repairs nothing more."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatmend.exceptions import InputError
from chatmend.formats import read
from tests.transcripts.helpers import read_text

REAL = Path(__file__).resolve().parents[3] / "shared" / "real-world"
STORES = {"__claude__": "claude_code", "claude-code": "claude_code", "claude-nexus": None, "__codex__": "codex",
          "codex_052": "codex", "__gemini__": "gemini_cli"}


def _sessions() -> list[str]:
    if not REAL.is_dir():
        return []
    return sorted(p.name for p in REAL.iterdir() if p.suffix in (".jsonl", ".json")
                  and any(k in p.name for k in ("claude", "codex", "__gemini__", "__kimi__")) and "nexus" not in p.name)


def _key(line: str) -> str:
    """A record by what stays when repair relinks or patches it: its uuid, else the line itself."""
    try:
        data = json.loads(line)
    except ValueError:
        return line
    return str(data.get("uuid")) if isinstance(data, dict) and isinstance(data.get("uuid"), str) else line


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-world is absent")
@pytest.mark.parametrize("name", _sessions())
def test_real_sessions_read_repair_and_lose_no_line(name: str) -> None:
    path = REAL / name
    text = path.read_text(encoding="utf-8")
    try:
        session = read(str(path))
    except InputError as exc:  # not a session (a subagent file with text only): said, not a crash
        assert "no conversation messages" in exc.message
        return
    assert session.format in ("claude_code", "codex", "gemini_cli", "kimi_code")
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    out = "".join(chunks)
    if not result.changed and not session.fixes:
        assert out == text
        return
    before = [_key(line) for line in text.splitlines() if line.strip()]
    after = {_key(line) for line in out.splitlines()}
    if session.format == "codex" and not (result.renamed or result.notes or result.dropped or session.fixes):
        assert out.startswith(text)  # what repair adds is appended: every line keeps its byte offset
    lost = [k for k in before if k not in after]
    assert len(lost) <= len(result.notes) + len(result.renamed) + len(result.dropped) + len(session.fixes), lost[:3]
    again = read_text(out, session.format)
    assert not again.repaired(None)[0].changed


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-world is absent")
@pytest.mark.parametrize("name", [n for n in _sessions() if n.split("__")[-1].startswith("agent-")])
def test_real_subagent_transcripts_are_sessions(name: str) -> None:
    session = read(str(REAL / name))  # every record isSidechain: the subagent's own conversation
    assert session.format == "claude_code" and session.messages
