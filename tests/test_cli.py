"""The command line as a user runs it: outputs, reports, exit codes, errors and atomic writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import chatmend
import chatmend.repair
from chatmend import dumps, loads, repair_history
from chatmend.cli import main
from chatmend.formats import read
from tests.strategies import messy_histories

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

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)  # the os module _io writes with
    code, _out, err = call(capsys, "repair", str(EXAMPLES / "ctrl_c_during_tools.jsonl"), "-o", str(target))
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


# --- step 2: every command on every format --------------------------------------------------------------

SESSIONS = EXAMPLES / "sessions"
SAMPLES = sorted(p.name for p in SESSIONS.iterdir())
PROVIDERS = ["openai_chat", "kimi", "mistral", "anthropic", "openai_responses", "gemini"]
FIRST_PROBLEM = {
    "anthropic_body.json": "messages[2]: AN1: messages.2: `tool_use` ids were found without `tool_result` blocks "
    "immediately after: toolu_01Ld6Mgj1x3Qm4KgxJu9hY2b.",
    "bedrock_converse.json": "messages[2].content: BR1: Expected toolResult blocks at messages.2.content for the "
    "following Ids: tooluse_a8nlf2bqGLcZvaSoBpQ1sH",
    "deepseek_body.json": "messages[2].reasoning_content: DS3: Missing `reasoning_content` field in the assistant "
    "message at message index 2.",
    "xai_body.json": "messages[2].role: OC1: An assistant message with 'tool_calls' must be followed by tool "
    "messages",
    "cline_task.json": "messages[1].tool_calls[1]: R6: the call toolu_01B (execute_command) has no result "
    "(line 1 [1])",
    "roo_code_task.json": "messages[1].tool_calls[0]: R6: the call call_7 (list_files) has no result "
    "(line 1 messages[1])",
    "pydantic_ai_history.json": "messages[1].tool_calls[1]: R6: the call call_R0m3 (get_weather) has no result "
    "(line 1 [1])",
    "kimi_cli_context.jsonl": "messages[1].tool_calls[1]: R6: the call Shell:1 (Shell) has no result (line 4)",
    "copilot_cli_events.jsonl": "messages[3].tool_calls[1]: R6: the call toolu_03 (bash) has no result (line 9)",
    "qwen_code_session.jsonl": "messages[3].tool_calls[1]: R6: the call call_a3 (run_shell_command) has no result "
    "(line 5)",
    "pi_session.jsonl": "messages[1].tool_calls[1]: R6: the call toolu_02 (bash) has no result (line 5)",
    "kimi_code_wire.jsonl": "messages[1].tool_calls[1]: R6: the call Bash_1 (Bash) has no result (line 7)",
    "claude_code.jsonl": "messages[1].tool_calls[1]: R6: the call toolu_01VwP4sLm8GzR2tXq9nB6cYe (Bash) has no "
    "result (line 3)",
    "codex_rollout.jsonl": "messages[4].tool_calls[0]: R6: the call call_Fh3Wc9TqL2vN8xPz6mRb0KdY (apply_patch) "
    "has no result (line 9)",
    "gemini_cli_session.jsonl": "messages[3].tool_calls[0]: R6: the call "
    "run_shell_command__run_shell_command_1772615528100_0 (run_shell_command) has no result (line 9)",
    "gemini_contents.json": "contents[2]: GE1: ",
    "gemini_checkpoint.json": "contents[2]: GE1: Please ensure that the number of function response parts",
    "kimi_body.json": "messages[3].reasoning_content: KI2: thinking is enabled but reasoning_content is missing",
    "mistral_body.json": "messages[1].tool_calls[0].id: MI1: Tool call id was call_0qL7cYfT2mWz9RkA but must be "
    "a-z, A-Z, 0-9, with a length of 9.",
    "openai_chat_body.json": "messages[2].role: OC1: An assistant message with 'tool_calls' must be followed by "
    "tool messages",
    "openai_chat_messages.jsonl": "messages[1].role: OC1: An assistant message with 'tool_calls' must be followed "
    "by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response "
    "messages: call_s2 (line 2)",
    "openai_responses_input.json": "input[1]: OR2: No tool call found for function call output with call_id "
    "call_ci_7.",
}


def test_every_sample_is_listed_with_its_first_problem() -> None:
    assert sorted(FIRST_PROBLEM) == SAMPLES


@pytest.mark.parametrize("name", SAMPLES)
def test_check_finds_what_the_provider_would_reject(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = call(capsys, "check", str(SESSIONS / name))
    assert code == 1
    assert out.splitlines()[0].startswith(FIRST_PROBLEM[name]), out
    assert "problem" in err


@pytest.mark.parametrize("name", SAMPLES)
def test_repair_writes_back_what_check_then_accepts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    source = SESSIONS / name
    target = tmp_path / name
    code, out, err = call(capsys, "repair", str(source), "-o", str(target))
    assert (code, err) == (0, "")
    assert out.startswith(f"{source}: repaired (")
    code, again, _ = call(capsys, "check", str(target))
    assert (code, again) == (0, "")
    code, out, _ = call(capsys, "repair", str(target), "-o", str(tmp_path / "again"))
    assert code == 0
    assert out.startswith(f"{target}: nothing to repair")


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("to", PROVIDERS)
def test_convert_gives_a_body_the_provider_accepts(
    capsys: pytest.CaptureFixture[str], name: str, to: str
) -> None:
    code, out, _ = call(capsys, "convert", str(SESSIONS / name), "--to", to, "--model", "some-model")
    assert code == 0
    body = json.loads(out)
    assert chatmend.providers.get(to).check(body) == []


@pytest.mark.parametrize("name", SAMPLES)
def test_convert_to_neutral_keeps_the_history_as_read(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = call(capsys, "convert", str(SESSIONS / name), "--to", "chatmend")
    assert (code, err) == (0, "")
    history = loads(out)
    assert repair_history(history).changed or name == "mistral_body.json"


@pytest.mark.parametrize("name", SAMPLES)
def test_show_marks_what_repair_would_change(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = call(capsys, "show", str(SESSIONS / name))
    assert code == 0
    assert "\x1b[" not in out  # not a terminal: no colors
    lines = out.splitlines()
    assert lines[0].startswith(f"{SESSIONS / name} (")
    expected = "repair would change nothing" if name == "mistral_body.json" else "repair would change:"
    assert expected in lines


def test_show_timeline_of_the_quick_start_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(capsys, "show", "examples/ctrl_c_during_tools.jsonl", "--width", "100")
    assert code == 0
    assert out.splitlines()[3:10] == [
        "line 3  assistant  I'll look at the failing test and run the suite.",
        '        -> read_file [call_7Qm2LfXh0aTn] {"path": "tests/test_billing.py"}',
        "           <- result at line 4",
        '        -> run_tests [call_Vd81kPz3sWq4] {"args": ["tests/", "-q"]}',
        "           no result: repair answers it as interrupted",
        '        -> git_log [call_Hc5nRy0uJe62] {"path": "src/billing", "since": "2 days ago"}',
        "           no result: repair answers it as interrupted",
    ]


def test_show_colors_only_when_asked_or_on_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(capsys, "show", str(SESSIONS / "claude_code.jsonl"), "--color", "always")
    assert code == 0
    assert "\x1b[31mno result: repair answers it as interrupted\x1b[0m" in out
    code, out, _ = call(capsys, "show", str(SESSIONS / "claude_code.jsonl"), "--color", "never")
    assert "\x1b[" not in out


def test_report_json_lists_every_change(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(capsys, "repair", str(SESSIONS / "openai_chat_messages.jsonl"), "--report", "json")
    assert code == 0
    assert json.loads(err) == {
        "file": str(SESSIONS / "openai_chat_messages.jsonl"), "format": "openai_chat", "changed": True,
        "messages": 6, "moved": [{"at": "line 5", "tool_call_id": "call_s2"}], "interrupted": [], "notes": [],
        "renamed": [], "dropped": [], "rewritten": [],  # the result moved: every line kept as it was, reordered
        "rejected": [
            {"path": "messages[1].role", "code": "OC1", "message": json.loads(err)["rejected"][0]["message"]},
            {"path": "messages[4].role", "code": "OC2", "message": json.loads(err)["rejected"][1]["message"]},
        ],
    }


def test_in_place_keeps_a_backup_and_replaces_atomically(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "session.jsonl"
    original = (SESSIONS / "claude_code.jsonl").read_bytes()
    path.write_bytes(original)
    code, out, err = call(capsys, "repair", str(path), "--in-place")
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == f"  wrote {path} (the original is in {path}.bak)"
    assert (tmp_path / "session.jsonl.bak").read_bytes() == original
    code, expected, _ = call(capsys, "repair", str(SESSIONS / "claude_code.jsonl"))
    assert path.read_text() == expected
    # Nothing left to repair: the file and its backup stay as they are.
    code, out, _ = call(capsys, "repair", str(path), "--in-place")
    assert out == f"{path}: nothing to repair (6 messages)\n"
    assert (tmp_path / "session.jsonl.bak").read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl", "session.jsonl.bak"]


def test_in_place_failure_half_way_leaves_the_original(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "body.json"
    original = (SESSIONS / "anthropic_body.json").read_bytes()
    path.write_bytes(original)
    real_replace = os.replace

    def failing_replace(src: str, dst: str) -> None:
        if dst == str(path):
            raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    code, out, err = call(capsys, "repair", str(path), "--in-place")
    assert (code, out) == (2, "")
    assert err == f"chatmend: error: {path}: cannot write: Input/output error\n"
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["body.json", "body.json.bak"]


def test_in_place_into_a_read_only_directory_fails_cleanly(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories")
    path = tmp_path / "s.jsonl"
    path.write_bytes((EXAMPLES / "ctrl_c_during_tools.jsonl").read_bytes())
    tmp_path.chmod(0o500)
    try:
        code, _, err = call(capsys, "repair", str(path), "--in-place")
    finally:
        tmp_path.chmod(0o700)
    assert code == 2
    assert "cannot write the backup" in err
    assert path.read_bytes() == (EXAMPLES / "ctrl_c_during_tools.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["repair", "-", "--in-place"], "chatmend: error: --in-place needs a file, not stdin\n"),
        (["repair", str(SESSIONS / "claude_code.jsonl"), "--in-place", "--to", "chatmend"],
         "chatmend: error: --in-place writes claude_code back; --to chatmend needs -o OUT\n"),
        (["repair", str(EXAMPLES / "steer_during_tools.jsonl"), "--to", "claude_code"],
         "chatmend: error: cannot write a claude_code transcript from chatmend; choose chatmend or a provider\n"),
        (["repair", str(EXAMPLES / "steer_during_tools.jsonl"), "--to", "anthropic"],
         "chatmend: error: a request body for anthropic names its model: give it with --model\n"),
        (["convert", str(EXAMPLES / "steer_during_tools.jsonl"), "--to", "openai_responses"],
         "chatmend: error: a request body for openai_responses names its model: give it with --model\n"),
    ],
)
def test_impossible_requests_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], expected: str) -> None:
    code, out, err = call(capsys, *args)
    assert (code, out, err) == (2, "", expected)


def test_unknown_format_and_provider_names_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(capsys, "repair", "x.json", "--from", "openai")
    assert code == 2
    assert "argument --from: invalid choice: 'openai'" in err
    code, _, err = call(capsys, "check", "x.json", "--provider", "claude")
    assert code == 2
    assert "argument --provider: invalid choice: 'claude'" in err


def test_repair_to_another_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call(capsys, "repair", str(SESSIONS / "claude_code.jsonl"), "--to", "chatmend")
    assert code == 0
    assert err.startswith(f"{SESSIONS / 'claude_code.jsonl'}: repaired (claude_code)\n")
    history = loads(out)
    assert not repair_history(history).changed
    assert history[3].tool_call_id == "toolu_01VwP4sLm8GzR2tXq9nB6cYe" and history[3].is_error
    code, out, _ = call(capsys, "repair", str(EXAMPLES / "kimi_repeated_ids.jsonl"), "--to", "anthropic",
                        "--model", "claude-sonnet-4-5")
    assert code == 0
    body = json.loads(out)
    assert body["model"] == "claude-sonnet-4-5"
    assert chatmend.providers.get("anthropic").check(body) == []


def test_check_against_another_provider_lists_neutral_problems(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call(capsys, "check", str(SESSIONS / "kimi_body.json"), "--provider", "anthropic")
    assert code == 1
    assert out == ("messages[3].tool_calls[0]: R5: the call id 'functions.web_search:0' is already used by an "
                   "earlier call\n")
    assert err.endswith("1 problem (anthropic); `chatmend repair` fixes what repair can\n")
    code, out, err = call(capsys, "check", str(EXAMPLES / "placeholder_before_tools.jsonl"))
    assert (code, out) == (1, "messages[2]: R1: a whitespace-only assistant message without calls (a "
                              "placeholder) ends the span of the calls before it (line 3)\n")


def test_check_of_a_valid_file_exits_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}))
    code, out, err = call(capsys, "check", str(path))
    assert (code, out, err) == (0, "", f"{path}: no problems (openai_chat)\n")


@pytest.mark.parametrize(
    ("content", "args", "expected"),
    [
        (b'{"model": "gpt-4o", "messages": [{"role": "assistant", "tool_calls": "nope"}]}', [],
         ": messages[0].tool_calls: 'tool_calls' must be a list (reading openai_chat)\n"),
        (b'{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f"}}]}\n'
         b'{"role":"tool","tool_call_id":"a","content":5}\n', [],
         ":2: content: content must be a string or a list of parts, got int (reading openai_chat)\n"),
        (b'{"messages": [{"role": "user", "content": "hi"}]}', [],
         ": cannot tell the format: the messages hold only plain text, which OpenAI Chat, Anthropic Messages and "
         "Bedrock Converse share; say which with --from openai_chat or --from anthropic or --from bedrock\n"),
        (b'{\n  "messages": [\n    {"role": "user" "content": "hi"}\n  ]\n}\n', [],
         ":3:21: invalid JSON: Expecting ',' delimiter; expected a JSON request body, a JSON list of messages, "
         "or JSON Lines\n"),
        (b'[{"role": "user", "content": "caf\xe9"}]', [],
         ":1:34: not UTF-8 text (byte 0xe9); expected a UTF-8 encoded file\n"),
        (b"  \n", ["--from", "anthropic"],
         ": empty file; expected a chat session (JSON Lines or a JSON request body)\n"),
    ],
)
def test_bad_input_in_any_format_is_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, args: list[str], expected: str
) -> None:
    path = tmp_path / "in.json"
    path.write_bytes(content)
    for command in ("repair", "check", "show"):
        code, out, err = call(capsys, command, str(path), *args)
        assert (code, out, err) == (2, "", str(path) + expected)


# --- from a subprocess, as a user runs it ---------------------------------------------------------------


def test_subprocess_check_exit_codes() -> None:
    proc = run("check", str(SESSIONS / "anthropic_body.json"))
    assert proc.returncode == 1
    assert proc.stdout.decode().startswith("messages[2]: AN1: ")
    repaired = run("repair", str(SESSIONS / "anthropic_body.json"))
    assert repaired.returncode == 0
    proc = run("check", "-", stdin=repaired.stdout)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert proc.stderr == b"<stdin>: no problems (anthropic)\n"


def test_subprocess_transcript_repair_and_convert_from_stdin() -> None:
    source = (SESSIONS / "codex_rollout.jsonl").read_bytes()
    proc = run("repair", "-", stdin=source)
    assert proc.returncode == 0
    assert proc.stdout.count(b"\n") == source.count(b"\n") + 1
    assert proc.stderr.decode() == (
        "<stdin>: repaired (codex)\n  answered 1 call as interrupted: call_Fh3Wc9TqL2vN8xPz6mRb0KdY (apply_patch)\n")
    proc = run("convert", "-", "--to", "openai_responses", stdin=source)
    assert proc.returncode == 0
    body = json.loads(proc.stdout)
    assert body["model"] == "gpt-5-codex"
    assert chatmend.providers.get("openai_responses").check(body) == []


def test_subprocess_show_and_errors() -> None:
    proc = run("show", str(SESSIONS / "gemini_contents.json"))
    assert proc.returncode == 0
    assert b"no result: repair answers it as interrupted" in proc.stdout
    proc = run("convert", str(SESSIONS / "gemini_contents.json"), "--to", "nope")
    assert proc.returncode == 2
    assert b"invalid choice: 'nope'" in proc.stderr
    proc = run("--help")
    assert proc.returncode == 0
    assert b"exit codes: 0 ok, 1 problems found, 2 bad input" in proc.stdout
    proc = run("formats")  # the formats are listed once, not on every help page
    assert proc.returncode == 0 and b"claude_code" in proc.stdout


def test_text_report_names_a_few_and_counts_the_rest(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "kimi.jsonl"
    turn = ('{"role":"assistant","tool_calls":[{"id":"functions.f:0","name":"f"}]}\n'
            '{"role":"tool","tool_call_id":"functions.f:0","content":"ok"}\n')
    path.write_text(turn * 12)
    code, _, err = call(capsys, "repair", str(path))
    assert code == 0
    renamed = err.splitlines()[1]
    assert renamed.startswith("  renamed 11 ids: functions.f:0 -> functions.f:0_1 (line 3), ")
    assert renamed.endswith("functions.f:0 -> functions.f:0_8 (line 17) and 3 more")
    code, _, err = call(capsys, "repair", str(path), "--report", "json")
    assert len(json.loads(err)["renamed"]) == 11


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messy_histories())
def test_repair_of_any_neutral_file_is_repair_history(
    capsys: pytest.CaptureFixture[str], history: list[chatmend.ChatMessage]
) -> None:
    if not history:
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "h.jsonl"
        path.write_text(dumps(history), encoding="utf-8")
        code, out, err = call(capsys, "repair", str(path), "--report", "json")
    result = repair_history(history)
    assert code == 0
    assert out == dumps(result.messages)
    report = json.loads(err)
    assert report["changed"] == result.changed
    assert [c["id"] for c in report["interrupted"]] == [c.id for c in result.interrupted]
    assert len(report["renamed"]) == len(result.renamed)
    assert [m["at"] for m in report["moved"]] == [f"line {i + 1}" for i in result.moved]


# --- one provider contract: check's context, --provider on a shared shape, a provider added by registering --


def _gemini3_body_without_signatures() -> dict[str, object]:
    """A Gemini body whose current call turn has no thought signature: fine for Gemini 2, GE4 for Gemini 3."""
    from chatmend import ChatMessage, ToolCall
    from chatmend.providers import gemini

    history = [ChatMessage(role="user", content="read a"),
               ChatMessage(role="assistant", tool_calls=(ToolCall(id="c1", name="read", arguments={"p": "a"}),)),
               ChatMessage(role="tool", tool_call_id="c1", content="text of a")]
    return gemini.to_request(history, model="gemini-3-pro-preview", thought_signature_fallback=None)


def test_check_model_reports_what_check_with_that_model_reports(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from chatmend.providers import gemini

    body = _gemini3_body_without_signatures()
    expected = gemini.check(body, model="gemini-3-pro-preview")
    assert [p.code for p in expected] == ["GE4"]
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    code, out, _ = call(capsys, "check", str(path), "--model", "gemini-3-pro-preview")
    assert code == 1
    assert out.splitlines() == [f"{p.path}: {p.code}: {p.message}" for p in expected]
    assert call(capsys, "check", str(path))[0] == 0  # without the model, GE4 cannot be told
    # a model the body names serves when --model is not given
    path.write_text(json.dumps({"model": "gemini-3-pro-preview", **body}))
    assert call(capsys, "check", str(path))[1] == out


def test_check_platform_passes_the_platform_to_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(_gemini3_body_without_signatures()))
    code, out, _ = call(capsys, "check", str(path), "--platform", "vertex")
    assert code == 1 and {line.split(": ")[1] for line in out.splitlines()} == {"GE8"}  # Vertex takes no ids
    # converting for Gemini on Vertex writes no ids
    history = tmp_path / "h.jsonl"
    history.write_text(chatmend.dumps([chatmend.ChatMessage(role="user", content="hi")]))
    assert call(capsys, "check", str(history), "--provider", "gemini", "--platform", "vertex")[0] == 0
    code, _, err = call(capsys, "check", str(history), "--provider", "openai_chat", "--platform", "vertex")
    assert code == 2 and "--platform vertex is not a platform of openai_chat" in err


def test_check_provider_reads_a_shape_it_shares_as_its_own(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "body.json"
    path.write_text(json.dumps({"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}))
    assert call(capsys, "check", str(path))[0] == 2  # plain text: OpenAI Chat or Anthropic Messages
    code, out, err = call(capsys, "check", str(path), "--provider", "anthropic")
    assert (code, out) == (0, "")
    assert err == f"{path}: no problems (anthropic)\n"
    # an OpenAI Chat body checked for Kimi is read as Kimi's (KI3: an empty assistant message)
    path.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"},
                                                           {"role": "assistant", "content": ""}]}))
    code, out, _ = call(capsys, "check", str(path), "--provider", "kimi")
    assert code == 1 and out.splitlines() == [
        "messages[1].content: KI3: Invalid request: the message at position 1 with role 'assistant' must not be "
        "empty"]


def test_a_registered_provider_is_one_the_command_line_reads_writes_and_checks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from typing import ClassVar

    from chatmend import providers
    from chatmend.providers.openai_chat import OpenAIChat

    class Toy(OpenAIChat):
        """A new OpenAI-compatible service: one class, one registration, nothing in formats/ or the CLI."""

        name: ClassVar[str] = "toy"
        title: ClassVar[str] = "Toy"
        description: ClassVar[str] = "Toy (OpenAI Chat shaped, 12-character ids)"
        id_max_length: ClassVar[int | None] = 12
        model_prefixes: ClassVar[tuple[str, ...]] = ("toy-",)
        shape_of: ClassVar[str | None] = "openai_chat"

    monkeypatch.setitem(providers._LOADED, "toy", Toy())
    history = tmp_path / "h.jsonl"
    history.write_text(chatmend.dumps([
        chatmend.ChatMessage(role="user", content="go"),
        chatmend.ChatMessage(role="assistant", tool_calls=(chatmend.ToolCall(id="a-very-long-call-id", name="f"),)),
    ]))
    code, out, _ = call(capsys, "convert", str(history), "--to", "toy", "--model", "toy-1")
    assert code == 0
    body = json.loads(out)
    assert body["model"] == "toy-1" and len(body["messages"][1]["tool_calls"][0]["id"]) <= 12
    path = tmp_path / "body.json"
    path.write_text(out)
    code, _, err = call(capsys, "check", str(path))  # detected by its model's name
    assert (code, err) == (0, f"{path}: no problems (toy)\n")
    assert "Toy (OpenAI Chat shaped" in call(capsys, "formats")[1]


# --- one repair per command ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["repair", "{s}/claude_code.jsonl"],
        ["repair", "{s}/codex_rollout.jsonl", "--report", "json"],
        ["repair", "{s}/openai_chat_body.json"],
        ["repair", "{s}/kimi_body.json"],
        ["repair", "{s}/anthropic_body.json", "--to", "gemini", "--read-only", "Read"],
        ["repair", "{s}/claude_code.jsonl", "--to", "chatmend"],
        ["repair", "{e}/ctrl_c_during_tools.jsonl"],
        ["repair", "{e}/kimi_repeated_ids.jsonl", "--to", "openai_responses", "--model", "gpt-5"],
        ["convert", "{s}/codex_rollout.jsonl", "--to", "anthropic", "--model", "claude-sonnet-4-5"],
        ["convert", "{s}/openai_chat_messages.jsonl", "--to", "kimi", "--model", "kimi-k2"],
        ["check", "{e}/steer_during_tools.jsonl"],
        ["check", "{e}/ctrl_c_during_tools.jsonl", "--provider", "mistral"],
        ["show", "{s}/claude_code.jsonl"],
    ],
    ids=lambda args: " ".join(a.rsplit("/", 1)[-1] for a in args),
)
def test_each_command_runs_the_repair_pass_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    runs: list[int] = []  # how many messages each pass repaired
    run_pass = chatmend.repair.HistoryRepair.run

    def counted(self: chatmend.repair.HistoryRepair, history: list[Any], start: int = 0, **kwargs: Any) -> Any:
        runs.append(len(history) - start)
        return run_pass(self, history, start, **kwargs)

    monkeypatch.setattr(chatmend.repair.HistoryRepair, "run", counted)
    argv = [a.format(s=SESSIONS, e=EXAMPLES) for a in args]
    code, _, _ = call(capsys, *argv)
    assert code in (0, 1)
    # one pass over the history, or (a transcript repaired a part at a time) one over each part that needs it
    assert runs and sum(runs) <= len(read(argv[1]).messages)
