"""The command line as a user runs it: outputs, reports, exit codes, errors and atomic writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import chatmend
from chatmend import dumps, loads, repair_history
from chatmend.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`python -m chatmend ARGS` in a subprocess, as a user runs it."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "chatmend", *args], input=stdin, capture_output=True,
                          cwd=cwd, env=env, timeout=60, check=False)


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`main(args)` in-process: exit code, stdout, stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --- step 1: repair on the neutral JSON Lines ----------------------------------------------------------


def test_quick_start_example_is_repaired_from_a_subprocess() -> None:
    proc = run("repair", "examples/ctrl_c_during_tools.jsonl", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    repaired = loads(proc.stdout.decode())
    expected = repair_history(loads((EXAMPLES / "ctrl_c_during_tools.jsonl").read_text())).messages
    assert repaired == expected
    assert proc.stdout.decode() == dumps(expected)
    err = proc.stderr.decode()
    assert err.splitlines() == [
        "examples/ctrl_c_during_tools.jsonl: repaired (chatmend)",
        "  answered 2 calls as interrupted: call_Vd81kPz3sWq4 (run_tests), call_Hc5nRy0uJe62 (git_log)",
    ]


@pytest.mark.parametrize(
    ("name", "summary"),
    [
        ("kimi_repeated_ids.jsonl",
         "  renamed 2 ids: functions.web_search:1 -> functions.web_search:1_1 (line 5), "
         "functions.web_search:0 -> functions.web_search:0_1 (line 8)"),
        ("steer_during_tools.jsonl", "  moved 1 result to just after the call: toolu_01B7dYr4 (line 6)"),
        ("orphan_screenshot.jsonl", "  turned 1 orphan result into a user note: call_screenshot_3 (line 2)"),
        ("placeholder_before_tools.jsonl", "  dropped 1 placeholder: line 3"),
    ],
)
def test_each_example_reports_its_one_kind_of_change(
    capsys: pytest.CaptureFixture[str], name: str, summary: str
) -> None:
    path = str(EXAMPLES / name)
    code, out, err = call(capsys, "repair", path)
    assert code == 0
    assert err.splitlines() == [f"{path}: repaired (chatmend)", summary]
    assert loads(out) == repair_history(loads(Path(path).read_text())).messages


def test_orphan_screenshot_keeps_its_image(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(capsys, "repair", str(EXAMPLES / "orphan_screenshot.jsonl"))
    assert code == 0
    note = loads(out)[1]
    assert note.role == "user"
    assert isinstance(note.content, tuple)
    image = note.content[1]
    assert isinstance(image, chatmend.ImagePart)
    import base64

    assert base64.b64decode(image.data or "").startswith(b"\x89PNG\r\n\x1a\n")


def test_read_only_changes_the_interrupted_wording(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "ctrl_c_during_tools.jsonl")
    code, out, _ = call(capsys, "repair", path, "--read-only", "git_log,read_file")
    assert code == 0
    results = {m.tool_call_id: m.content for m in loads(out) if m.role == "tool"}
    assert "safe to run it again" in str(results["call_Hc5nRy0uJe62"])
    assert "may have partly run" in str(results["call_Vd81kPz3sWq4"])


def test_nothing_to_repair_is_said(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    history = loads((EXAMPLES / "steer_during_tools.jsonl").read_text())
    path.write_text(dumps(repair_history(history).messages))
    code, out, err = call(capsys, "repair", str(path))
    assert code == 0
    assert out == path.read_text()
    assert err == f"{path}: nothing to repair (7 messages)\n"


def test_stdin_to_output_file(tmp_path: Path) -> None:
    source = (EXAMPLES / "kimi_repeated_ids.jsonl").read_bytes()
    target = tmp_path / "out.jsonl"
    proc = run("repair", "-", "-o", str(target), stdin=source)
    assert proc.returncode == 0, proc.stderr
    # The history went to a file, so the report is the command's output.
    assert proc.stderr == b""
    assert proc.stdout.decode().startswith("<stdin>: repaired (chatmend)\n")
    assert target.read_text() == dumps(repair_history(loads(source.decode())).messages)
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temporary file left behind


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"role":"user","content":"hi"}\n{"role":"user",\n',
         ":2:16: invalid JSON: Expecting property name enclosed in double quotes; "
         "expected one JSON message a line"),
        (b'{"role":"user","content":"hi"}\n\n{"role":"robot","content":"x"}\n',
         ":3: message 1, field 'role': unknown role 'robot'; expected one of system, user, assistant, tool"),
        (b'{"role":"tool","content":"x"}\n',
         ":1: message 0: a tool message needs 'tool_call_id', the id of the call it answers"),
        (b'{"role":"user","content":42}\n', ":1: message 0, field 'content': "),
        (b'[1,2]\n', ": [0]: expected a message (a JSON object), got a number"),
        (b'{"role":"user","content":"hi"}\n[1,2]\n',
         ":2: message 1: expected a message (a mapping with a 'role'), got list"),
        (b'{"role":"user","content":"caf\xe9"}\n', ":1:30: not UTF-8 text (byte 0xe9); expected a UTF-8"),
        (b"", ": empty file; expected a chat session (JSON Lines or a JSON request body)"),
        (b"\n  \n", ": empty file; expected a chat session"),
    ],
)
def test_bad_input_exits_2_names_the_line_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    target = tmp_path / "out.jsonl"
    code, out, err = call(capsys, "repair", str(path), "-o", str(target))
    assert code == 2
    assert out == ""
    assert err.startswith(str(path) + expected), err
    assert len(err.splitlines()) == 1
    assert not target.exists()


def test_bad_input_from_a_subprocess_writes_nothing_to_stdout(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"role":"user","content":"hi"}\n{"role":"assistant","tool_calls":[{"id":"x"}]}\n')
    proc = run("repair", str(path))
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert proc.stderr.decode() == (
        f"{path}:2: message 1, field 'tool_calls.0.name': required field is missing\n"
    )


def test_missing_file_and_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = call(capsys, "repair", str(tmp_path / "nope.jsonl"))
    assert (code, err) == (2, f"{tmp_path / 'nope.jsonl'}: no such file\n")
    code, _, err = call(capsys, "repair")
    assert code == 2
    assert "the following arguments are required: FILE" in err
    code, _, err = call(capsys, "frobnicate", "x")
    assert code == 2
    assert "invalid choice" in err


def test_output_is_written_atomically_and_a_failure_keeps_the_old_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("precious\n")
    import chatmend.formats._io as io_module

    real_fsync = os.fsync

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(io_module.os, "fsync", broken_fsync)
    code, _out, err = call(capsys, "repair", str(EXAMPLES / "ctrl_c_during_tools.jsonl"), "-o", str(target))
    monkeypatch.setattr(io_module.os, "fsync", real_fsync)
    assert code == 2
    assert err == f"chatmend: error: {target}: cannot write: No space left on device\n"
    assert target.read_text() == "precious\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_unwritable_target_directory_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = call(capsys, "repair", str(EXAMPLES / "ctrl_c_during_tools.jsonl"),
                        "-o", str(tmp_path / "no" / "such" / "dir.jsonl"))
    assert code == 2
    assert "cannot write" in err


def test_examples_are_all_broken_and_repair_is_idempotent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for path in sorted(EXAMPLES.glob("*.jsonl")):
        history = loads(path.read_text())
        assert repair_history(history).changed, path
        code, out, _ = call(capsys, "repair", str(path))
        assert code == 0
        again = tmp_path / path.name
        again.write_text(out)
        code, out2, err = call(capsys, "repair", str(again))
        assert (code, out2) == (0, out)
        assert err == f"{again}: nothing to repair ({len(loads(out))} messages)\n"
