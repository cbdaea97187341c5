"""The command line's texts for people and programs: short `--help` pages (the formats listed once, by
`chatmend formats`), `check --format json`, and shell completion."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chatmend.cli import main
from chatmend.cli._check_json import parse_line
from chatmend.formats import formats
from tests.test_docs import heading_anchors

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
COMMANDS = ["repair", "convert", "check", "show", "trim", "doctor", "proxy", "formats", "completion"]
RULE_ANCHORS = heading_anchors((ROOT / "docs" / "rules.md").read_text(encoding="utf-8"))


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_is_short_and_lists_no_formats(command: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([command, "--help"] if command else ["--help"], capsys)
    assert code == 0
    assert len(out.splitlines()) <= 60, out
    assert "gemini_checkpoint" not in out  # one of the formats: listed by `chatmend formats` only
    if command not in ("formats", "completion"):
        assert "chatmend formats" in out


def test_formats_lists_every_format_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["formats"], capsys)
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines()[1:]]
    assert listed == list(formats())
    assert len(listed) >= 25


def test_check_json_gives_every_problem_with_its_rule_anchor(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "ctrl_c_during_tools.jsonl")
    code, out, _ = run(["check", path, "--format", "json"], capsys)
    assert code == 1
    document = json.loads(out)
    assert document["files"] == 1 and document["unreadable"] == []
    problems = document["problems"]
    assert [p["code"] for p in problems] == ["R6", "R6"]
    first = problems[0]
    assert set(first) == {"file", "session", "path", "code", "message", "line", "docs"}
    assert first["file"] == path
    assert first["path"] == "messages[2].tool_calls[1]"
    assert first["line"] == 3
    assert first["message"].startswith("the call call_Vd81kPz3sWq4 (run_tests) has no result")
    assert first["docs"] == "docs/rules.md#r6"


def test_check_json_of_a_clean_file_is_no_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = tmp_path / "clean.jsonl"
    clean.write_text('{"role":"user","content":"hi"}\n{"role":"assistant","content":"hello"}\n', encoding="utf-8")
    code, out, _ = run(["check", str(clean), "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out) == {"problems": [], "files": 1, "unreadable": []}


def test_check_json_of_a_folder_names_each_file_and_the_unreadable(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "sessions"
    shutil.copytree(EXAMPLES / "sessions", folder)
    (folder / "zz_broken.jsonl").write_text('{"role": "user", "content": \n', encoding="utf-8")
    code, out, _ = run(["check", str(folder), "--format", "json"], capsys)
    assert code == 2
    document = json.loads(out)
    assert document["files"] == len(list(folder.iterdir()))
    assert [u["file"] for u in document["unreadable"]] == [str(folder / "zz_broken.jsonl")]
    files = {p["file"] for p in document["problems"]}
    assert str(folder / "anthropic_body.json") in files
    assert all(p["code"] is not None and p["docs"].split("#")[1] in RULE_ANCHORS for p in document["problems"])


@pytest.mark.parametrize("example", sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.json*")))
def test_check_json_says_what_check_says(example: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Every line `check` prints is a problem of the JSON, with a code whose rule has its anchor."""
    path = str(EXAMPLES / example)
    text_code, text, _ = run(["check", path], capsys)
    json_code, out, _ = run(["check", path, "--format", "json"], capsys)
    assert json_code == text_code
    problems = json.loads(out)["problems"]
    assert [f"{p['path']}: {p['code']}: {p['message']}" for p in problems] == [
        f"{p['path']}: {p['code']}: {p['message']}" for p in (parse_line(line, path) for line in text.splitlines())]
    assert len(problems) == len(text.splitlines())
    for problem in problems:
        assert problem["code"] is not None, problem
        assert problem["docs"].split("#")[1] in RULE_ANCHORS


def test_parse_line_reads_every_shape_check_prints() -> None:
    assert parse_line("session ses_1: messages[3]: AN1: messages.3: text", "db") == {
        "file": "db", "session": "ses_1", "path": "messages[3]", "code": "AN1", "message": "messages.3: text",
        "line": None, "docs": "docs/rules.md#an1"}
    assert parse_line("line 7: input[3].call_id: OR3: Invalid 'call_id': string too long.", "f")["line"] == 7
    assert parse_line("messages[1].tool_calls[1]: R6: the call c (x) has no result (line 1 [1])", "f")["line"] == 1
    assert parse_line("something else entirely", "f")["code"] is None


def _bash_complete(words: list[str], script: str) -> list[str]:
    line = " ".join(words)
    probe = (f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _chatmend; "
             'printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True, timeout=30)
    return done.stdout.split()


def test_bash_completion_completes_commands_options_and_values(capsys: pytest.CaptureFixture[str]) -> None:
    code, script, _ = run(["completion", "bash"], capsys)
    assert code == 0
    assert _bash_complete(["chatmend", "re"], script) == ["repair"]
    assert "--provider" in _bash_complete(["chatmend", "check", "--pro"], script)
    assert "--format" in _bash_complete(["chatmend", "check", "--f"], script)
    assert _bash_complete(["chatmend", "check", "--provider", "anth"], script) == ["anthropic"]
    assert _bash_complete(["chatmend", "check", "--format", "j"], script) == ["json"]
    assert _bash_complete(["chatmend", "completion", "z"], script) == ["zsh"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, script, _ = run(["completion", shell], capsys)
    assert code == 0
    if shell == "fish":
        assert "complete -c chatmend -n '__fish_seen_subcommand_from check' -l provider -x -a" in script
    else:
        assert "bashcompinit" in script and "complete -o filenames -o bashdefault -F _chatmend chatmend" in script
    if shutil.which(shell) is None:
        return  # the shell is not installed here: its syntax check is the next line's, where it is
    done = subprocess.run([shell, "-n"], input=script, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_completion_of_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["completion", "tcsh"], capsys)
    assert code == 2
    assert "invalid choice" in err


def test_the_program_prints_its_completion(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "chatmend", "completion", "bash"], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.startswith("# chatmend completion for bash")
