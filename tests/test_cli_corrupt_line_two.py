"""A transcript whose line 2 is corrupt is an error located at that line (`FILE:2:COL: ...`), not a complaint about
the first record (issue #44 item 6): detection stops at the line that is not JSON, and says so."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from chatmend.exceptions import InputError
from chatmend.formats import read

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sessions" / "claude_code.jsonl"
SNAPSHOT = ('{"type":"file-history-snapshot","messageId":"m1","snapshot":{"trackedFileBackups":{}},'
            '"isSnapshotUpdate":false}')


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "chatmend", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def with_line_two_cut(first: str | None = None) -> str:
    """The example transcript with its line 2 cut short (and another first line, when given)."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1][:40] + "\n"
    if first is not None:
        lines[0] = first + "\n"
    return "".join(lines)


@pytest.mark.parametrize("first", [None, SNAPSHOT], ids=["summary", "file-history-snapshot"])
@pytest.mark.parametrize("command", ["check", "repair", "show", "convert"])
def test_a_corrupt_line_two_is_located(tmp_path: Path, first: str | None, command: str) -> None:
    (tmp_path / "session.jsonl").write_text(with_line_two_cut(first), encoding="utf-8")
    args = ["convert", "--to", "openai_chat"] if command == "convert" else [command]
    done = run(*args, "session.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert re.match(r"session\.jsonl:2:\d+: invalid JSON: ", done.stderr), done.stderr


def test_the_library_error_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(with_line_two_cut(SNAPSHOT), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read(str(path))
    assert (caught.value.line, caught.value.column) == (2, 40)
    assert caught.value.in_file("session.jsonl").startswith("session.jsonl:2:40: invalid JSON: Unterminated string")


def test_a_summary_then_a_torn_last_line_is_read_as_claude_code_reads_it(tmp_path: Path) -> None:
    """Claude Code skips a half-written last line; the summary record alone tells the format."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "session.jsonl").write_text(lines[0] + lines[1][:40], encoding="utf-8")
    done = run("check", "session.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert "no conversation messages in this claude_code transcript" in done.stderr
