"""Hostile input and a hostile environment, as a user meets them: every case exits 0, 1, 2 (or 3 for a bug,
which none of these is), says what is wrong in one line, and never prints a traceback (issue #21)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import chatmend.cli
from chatmend.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "ctrl_c_during_tools.jsonl"


def shell(command: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """`command` through sh, `chatmend` being this checkout's (redirections such as `>&-` are the point)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "CHATMEND": f"{sys.executable} -m chatmend"}
    env.pop("CHATMEND_TRACEBACK", None)
    return subprocess.run(["sh", "-c", command], capture_output=True, cwd=cwd, env=env, timeout=timeout,
                          check=False)


def no_traceback(proc: subprocess.CompletedProcess[bytes]) -> None:
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr, proc.stderr


# --- 17: the last-resort handler -------------------------------------------------------------------------


def test_an_unexpected_exception_is_an_internal_error_with_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("a bug")

    monkeypatch.delenv("CHATMEND_TRACEBACK", raising=False)
    monkeypatch.setattr(chatmend.cli, "timeline", broken)
    assert main(["show", str(EXAMPLE)]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0] == "chatmend: internal error: ZeroDivisionError: a bug"
    # and from a subprocess: a bug planted through sitecustomize, as a user would meet one
    (tmp_path / "sitecustomize.py").write_text(
        "import chatmend.cli\n"
        "def broken(*a, **k):\n    raise ZeroDivisionError('a bug')\n"
        "chatmend.cli.timeline = broken\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT / 'src'}"}
    env.pop("CHATMEND_TRACEBACK", None)
    proc = subprocess.run([sys.executable, "-m", "chatmend", "show", str(EXAMPLE)], capture_output=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 3
    no_traceback(proc)
    assert proc.stderr.startswith(b"chatmend: internal error: ZeroDivisionError: a bug\n")


# --- 13: closed or full standard streams -----------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["show", "check", "repair", "convert --to chatmend"])
def test_a_full_stdout_is_an_error_with_exit_2(tmp_path: Path, command: str) -> None:
    (tmp_path / "s.jsonl").write_bytes(EXAMPLE.read_bytes())
    proc = shell(f"$CHATMEND {command} s.jsonl > /dev/full", tmp_path)
    no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.endswith(b"chatmend: error: cannot write the output: No space left on device\n")


@pytest.mark.parametrize("command", ["show", "check", "repair", "convert --to chatmend"])
def test_a_closed_stdout_is_an_error_with_exit_2(tmp_path: Path, command: str) -> None:
    (tmp_path / "s.jsonl").write_bytes(EXAMPLE.read_bytes())
    proc = shell(f"$CHATMEND {command} s.jsonl >&-", tmp_path)
    no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.endswith(b"chatmend: error: cannot write the output: stdout is closed\n")


def test_a_closed_stdin_is_bad_input(tmp_path: Path) -> None:
    proc = shell("$CHATMEND check - <&-", tmp_path)
    no_traceback(proc)
    assert (proc.returncode, proc.stderr) == (2, b"<stdin>: stdin is closed; expected a session on stdin "
                                                 b"(or give a file)\n")


def test_a_closed_or_full_stderr_keeps_the_exit_code(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_bytes(EXAMPLE.read_bytes())
    proc = shell("$CHATMEND check s.jsonl 2>&-", tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.count(b": R6: ") == 2
    if os.path.exists("/dev/full"):
        assert shell("$CHATMEND check s.jsonl 2>/dev/full", tmp_path).returncode == 1
        assert shell("$CHATMEND check nope.jsonl 2>/dev/full", tmp_path).returncode == 2


def test_the_help_lists_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "3 internal error" in capsys.readouterr().out


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """`python -m chatmend ARGS` in a subprocess."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("CHATMEND_TRACEBACK", None)
    return subprocess.run([sys.executable, "-m", "chatmend", *args], input=stdin, capture_output=True, cwd=cwd,
                          env=env, timeout=timeout, check=False)


COMMANDS = [["check"], ["repair"], ["show"], ["convert", "--to", "anthropic", "--model", "m"]]


# --- 9: detection on fields of the wrong type --------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '{"role":"assistant","content":"","tool_calls":5}\n',
    '{"type":["user"],"role":"user","content":"x","uuid":"u"}\n',
    '{"type":{"a":1},"role":"user","content":"x"}\n',
    json.dumps({"messages": [{"role": "assistant", "tool_calls": 3}]}),
    json.dumps({"messages": [{"role": "user", "content": [{"type": ["text"]}]}]}),
    json.dumps([{"type": {"x": 1}}]),
    json.dumps({"input": [{"type": ["message"], "role": "user", "content": [{"type": {"a": 1}}]}]}),
], ids=["calls-number", "type-list", "type-object", "body-calls-number", "part-type-list", "item-type-object",
        "responses-type-list"])
def test_fields_of_the_wrong_type_are_bad_input_not_a_crash(tmp_path: Path, text: str) -> None:
    (tmp_path / "s.json").write_text(text)
    for command in COMMANDS:
        proc = run(*command, "s.json", cwd=tmp_path)
        no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stderr)
        assert proc.stderr.startswith(b"s.json") or proc.stderr.startswith(b"chatmend: error: s.json"), proc.stderr
