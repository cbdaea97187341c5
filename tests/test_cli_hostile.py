"""Hostile input and a hostile environment, as a user meets them: every case exits 0, 1, 2 (or 3 for a bug,
which none of these is), says what is wrong in one line, and never prints a traceback (issue #21)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import chatmend
import chatmend.cli._show
from chatmend import providers
from chatmend.cli import main
from chatmend.formats import read

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
    monkeypatch.setattr(chatmend.cli._show, "timeline", broken)
    assert main(["show", str(EXAMPLE)]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0] == "chatmend: internal error: ZeroDivisionError: a bug"
    # and from a subprocess: a bug planted through sitecustomize, as a user would meet one
    (tmp_path / "sitecustomize.py").write_text(
        "import chatmend.cli._show\n"
        "def broken(*a, **k):\n    raise ZeroDivisionError('a bug')\n"
        "chatmend.cli._show.timeline = broken\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT / 'src'}"}
    env.pop("CHATMEND_TRACEBACK", None)
    proc = subprocess.run([sys.executable, "-m", "chatmend", "show", str(EXAMPLE)], capture_output=True,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 3
    no_traceback(proc)
    assert proc.stderr.startswith(b"chatmend: internal error: ZeroDivisionError: a bug\n")


# --- 13: closed or full standard streams -----------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(("redirect", "reason"), [("> /dev/full", b"No space left on device"),
                                                  (">&-", b"stdout is closed")], ids=["full", "closed"])
@pytest.mark.parametrize("command", ["show", "check", "repair", "convert --to chatmend"])
def test_a_full_or_closed_stdout_is_an_error_with_exit_2(tmp_path: Path, command: str, redirect: str,
                                                         reason: bytes) -> None:
    (tmp_path / "s.jsonl").write_bytes(EXAMPLE.read_bytes())
    proc = shell(f"$CHATMEND {command} s.jsonl {redirect}", tmp_path)
    no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    # repair and convert write through the located writer (`<stdout>: cannot write`), the others end in main()
    said = rb"chatmend: error: (<stdout>: cannot write|cannot write the output): " + re.escape(reason) + rb"\n$"
    assert re.search(said, proc.stderr), proc.stderr


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


WRONG_TYPES = [
    '{"role":"assistant","content":"","tool_calls":5}\n',
    '{"type":["user"],"role":"user","content":"x","uuid":"u"}\n',
    '{"type":{"a":1},"role":"user","content":"x"}\n',
    json.dumps({"messages": [{"role": "assistant", "tool_calls": 3}]}),
    json.dumps({"messages": [{"role": "user", "content": [{"type": ["text"]}]}]}),
    json.dumps([{"type": {"x": 1}}]),
    json.dumps({"input": [{"type": ["message"], "role": "user", "content": [{"type": {"a": 1}}]}]}),
]


@pytest.mark.parametrize("text", WRONG_TYPES, ids=["calls-number", "type-list", "type-object", "body-calls-number",
                                                   "part-type-list", "item-type-object", "responses-type-list"])
def test_fields_of_the_wrong_type_are_bad_input_not_a_crash(tmp_path: Path, text: str) -> None:
    (tmp_path / "s.json").write_text(text)
    for k, command in enumerate(COMMANDS):
        # the first command of the first case as a user runs it, the sweep in-process (the same main(), fast)
        proc = (run if k == 0 and text == WRONG_TYPES[0] else in_process)(*command, "s.json", cwd=tmp_path)
        no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stderr)
        assert proc.stderr.startswith(b"s.json") or proc.stderr.startswith(b"chatmend: error: s.json"), proc.stderr


SESSIONS = ROOT / "examples" / "sessions"
TARGETS = ["chatmend", "openai_chat", "anthropic", "gemini", "mistral", "kimi", "openai_responses"]


def in_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """`main(args)` run in `cwd`, its streams encoded as `run`'s process encodes them (PYTHONIOENCODING=utf-8:
    stdout strict, stderr backslashreplace); fast, for sweeps: each item has cases in a real process too."""
    out, err = io.BytesIO(), io.BytesIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with io.TextIOWrapper(out, encoding="utf-8", write_through=True) as stdout, \
                io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True) as stderr, \
                contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(list(args))
            return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
    finally:
        os.chdir(here)


def every_command(path: str, cwd: Path, *, subprocess_too: bool = False
                  ) -> list[tuple[list[str], subprocess.CompletedProcess[bytes]]]:
    """Every command on `path`: check, repair, show and convert to each target (and check from a subprocess)."""
    commands = [["check"], ["repair"], ["show"], *(["convert", "--to", t, "--model", "m"] for t in TARGETS)]
    done = [(command, in_process(*command, path, cwd=cwd)) for command in commands]
    if subprocess_too:
        done.append((["check"], run("check", path, cwd=cwd)))
    return done


def with_value(source: Path, literal: str) -> str:
    """The sample `source` with `literal` (JSON text) put in its first string value's place, the file's text."""
    text = source.read_text()
    match = re.search(r'":\s*("(?:[^"\\]|\\.)*")', text)  # the first string value of the sample
    assert match is not None
    return text[:match.start(1)] + literal + text[match.end(1):]


# --- 11: numbers JSON cannot write -------------------------------------------------------------------------


NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000]


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("sample", ["anthropic_body.json", "openai_chat_messages.jsonl", "codex_rollout.jsonl"])
def test_numbers_json_cannot_write_are_located_bad_input(tmp_path: Path, number: str, sample: str) -> None:
    (tmp_path / sample).write_text(with_value(SESSIONS / sample, number))
    for command, proc in every_command(sample, tmp_path, subprocess_too=number == NUMBERS[0]):
        no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stderr)
        assert proc.stdout == b""
        err = proc.stderr.decode()
        assert err.startswith(f"{sample}:1:") or err.startswith(f"{sample}:2:"), err
        assert "is not a JSON number" in err or "an integer of more than" in err, err


def test_the_library_refuses_them_too() -> None:
    for number in ("NaN", "1e999", "9" * 5000):
        with pytest.raises(chatmend.HistoryError, match="line 1"):
            chatmend.loads('{"role":"user","content":"x","provider_data":{"p":{"a":' + number + "}}}\n")
    # the integer limit is the process's, left as it was
    assert sys.get_int_max_str_digits() == 4300 or sys.get_int_max_str_digits() >= 0


# --- 12: lone surrogates -----------------------------------------------------------------------------------

# checked from a real process too: a body, a JSON Lines transcript and a JSON store file
SURROGATES_IN_A_PROCESS = ("anthropic_body.json", "claude_code.jsonl", "cline_task.json")


@pytest.mark.parametrize("sample", sorted(p.name for p in SESSIONS.iterdir()))
def test_a_lone_surrogate_is_located_bad_input_and_a_pair_is_text(tmp_path: Path, sample: str) -> None:
    (tmp_path / sample).write_text(with_value(SESSIONS / sample, '"\\ud800 x"'))
    in_a_process = sample in SURROGATES_IN_A_PROCESS
    if sample.endswith(".json") and read(str(SESSIONS / sample)).format in providers.names():
        # a body (one JSON document): check finds it, repair mends it
        for command, proc in every_command(sample, tmp_path, subprocess_too=in_a_process):
            no_traceback(proc)
            if command == ["check"]:
                assert proc.returncode == 1 and b": JSON: " in proc.stdout, (command, proc.stdout)
            elif command == ["repair"]:
                out = proc.stdout.decode()
                assert proc.returncode == 0 and ("\ufffd" in out or "\\ufffd" in out), (command, proc.stderr)
    else:
        for command, proc in every_command(sample, tmp_path, subprocess_too=in_a_process):
            no_traceback(proc)
            assert proc.returncode == 2, (command, proc.stderr)
            err = proc.stderr.decode()  # located: the escape itself, or the field it made unreadable
            assert "a lone surrogate escape: not valid UTF-8 text" in err or "'\\ud800 x'" in err, err
    (tmp_path / sample).write_text(with_value(SESSIONS / sample, '"\\ud83d\\ude00 x"'))
    for command, proc in every_command(sample, tmp_path):
        no_traceback(proc)
        assert proc.returncode in (0, 1, 2), (command, proc.stderr)
        assert b"surrogate" not in proc.stderr


# --- 10: nesting -------------------------------------------------------------------------------------------


def test_deep_nesting_anywhere_is_located_bad_input(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "doc.json").write_text(deep)
    (tmp_path / "line.jsonl").write_text('{"role":"user","content":"x"}\n'
                                         '{"role":"user","content":"x","provider_data":{"p":' + deep + "}}\n")
    for name, line in (("doc.json", 1), ("line.jsonl", 2)):
        for command, proc in every_command(name, tmp_path, subprocess_too=True):
            no_traceback(proc)
            assert proc.returncode == 2, (command, proc.stderr)
            assert proc.stderr.decode().startswith(f"{name}:{line}:"), proc.stderr
            assert "nested too deeply" in proc.stderr.decode()


@pytest.mark.parametrize("depth", [500, 900])
def test_arguments_nested_hundreds_deep_work_end_to_end(tmp_path: Path, depth: int) -> None:
    arguments = {"x": json.loads("[" * depth + "]" * depth)}
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": json.dumps(arguments)}}
    body = {"model": "m", "messages": [{"role": "user", "content": "go"},
                                       {"role": "assistant", "content": None, "tool_calls": [call]}]}
    (tmp_path / "b.json").write_text(json.dumps(body))
    for command, proc in every_command("b.json", tmp_path, subprocess_too=True):
        no_traceback(proc)
        assert proc.returncode in (0, 1), (command, proc.stderr)
        if command[0] == "convert" and command[2] == "chatmend":
            assert chatmend.loads(proc.stdout.decode())[1].tool_calls[0].arguments == arguments


# --- 15: terminal escapes in what is printed for a person ------------------------------------------------

ESCAPES = '"\\u001b]0;pwned\\u0007"'


def test_control_characters_are_escaped_in_everything_printed_for_a_person(tmp_path: Path) -> None:
    call = '{"id":' + ESCAPES + ',"name":"f\\u001b[2J","arguments":{}}'
    (tmp_path / "s.jsonl").write_text('{"role":"assistant","content":' + ESCAPES + ',"tool_calls":[' + call + "]}\n"
                                      '{"role":"user","content":"x\\r\\nfake: no problems\\u009b"}\n')
    for k, command in enumerate((["show", "--color", "always"], ["check"], ["repair", "-o", "out.jsonl"],
                                 ["repair"])):
        proc = (run if k == 0 else in_process)(*command, "s.jsonl", cwd=tmp_path)
        no_traceback(proc)
        printed = proc.stderr + (proc.stdout if command[0] != "repair" or "-o" in command else b"")
        text = printed.decode()
        assert "\x07" not in text and "\x1b]" not in text and "\x1b[2J" not in text and "\r" not in text
        assert "\x9b" not in text
        assert "\\x1b]0;pwned\\x07" in text, text
    # the session written keeps them, as JSON escapes; and the JSON report is JSON
    assert chatmend.loads((tmp_path / "out.jsonl").read_text())[0].tool_calls[0].id == "\x1b]0;pwned\x07"
    proc = in_process("repair", "s.jsonl", "-o", "out2.jsonl", "--report", "json", cwd=tmp_path)
    assert json.loads(proc.stdout)["interrupted"][0]["id"] == "\x1b]0;pwned\x07"


# --- 14: input with no line end, or binary -----------------------------------------------------------------

# A parent that feeds `chatmend ARGS -` from a child writing FEED forever, and prints chatmend's exit code, its
# stderr and its peak memory (the children's max RSS, in KiB on Linux): chatmend is its only memory-hungry child.
_FED = """
import json, resource, subprocess, sys
args = sys.argv[2:]
writer = subprocess.Popen([sys.executable, "-c",
    "import sys\\nchunk = bytes.fromhex(sys.argv[1]) * 65536\\n"
    "try:\\n    while True: sys.stdout.buffer.write(chunk)\\nexcept BrokenPipeError: pass\\n", sys.argv[1]],
    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
proc = subprocess.run([sys.executable, "-m", "chatmend", *args, "-"], stdin=writer.stdout, capture_output=True,
                      timeout=30)
writer.stdout.close(); writer.kill(); writer.wait()
print(json.dumps({"rc": proc.returncode, "stderr": proc.stderr.decode("utf-8", "replace"),
                  "rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def fed(feed: str, *args: str, cwd: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("CHATMEND_TRACEBACK", None)
    proc = subprocess.run([sys.executable, "-c", _FED, feed.encode().hex(), *args], capture_output=True, cwd=cwd,
                          env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr  # the parent's own timeout (30 s) did not fire: chatmend stopped
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
@pytest.mark.parametrize("command", ["check", "show", "repair", "trim --max-messages 1"])
def test_an_endless_stream_of_nul_bytes_is_refused_at_once(tmp_path: Path, command: str) -> None:
    got = fed("\0", *command.split(), cwd=tmp_path)
    assert got["rc"] == 2, got
    assert "Traceback" not in got["stderr"]
    assert got["stderr"] == ("<stdin>:1:1: a NUL byte (byte 0 of the input): binary data or UTF-16 text; "
                             "expected UTF-8 JSON text\n")
    assert got["rss_kib"] < 150 * 1024, got  # read a piece at a time: nowhere near the 64 MiB limit


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
@pytest.mark.parametrize(("limit", "shown", "rss_mib"),
                         [([], "64 MiB", 320), (["--max-json-size", "1M"], "1 MiB", 150)])
def test_an_endless_line_is_refused_at_the_limit_in_bounded_memory(
        tmp_path: Path, limit: list[str], shown: str, rss_mib: int) -> None:
    got = fed("y", "check", *limit, cwd=tmp_path)
    assert got["rc"] == 2, got
    assert got["stderr"] == (f"<stdin>:1: a line longer than {shown}, the limit (no line end: binary data?); "
                             "expected JSON text (a larger limit: --max-json-size)\n")
    assert got["rss_kib"] < rss_mib * 1024, got


def test_a_nul_byte_is_located_in_a_file_and_in_place_leaves_it_alone(tmp_path: Path) -> None:
    good = EXAMPLE.read_bytes()
    lines = good.splitlines(keepends=True)
    bad = b"".join(lines[:2]) + lines[2][:5] + b"\0" + lines[2][5:] + b"".join(lines[3:])
    (tmp_path / "s.jsonl").write_bytes(bad)
    offset = len(b"".join(lines[:2])) + 5
    for k, command in enumerate((["repair", "--in-place"], ["check"], ["show"], ["repair"],
                                 ["convert", "--to", "gemini"])):
        proc = (run if k == 0 else in_process)(*command, "s.jsonl", cwd=tmp_path)
        no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stderr)
        assert proc.stderr == (f"s.jsonl:3:6: a NUL byte (byte {offset} of the input): binary data or UTF-16 "
                               "text; expected UTF-8 JSON text\n").encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    assert (tmp_path / "s.jsonl").read_bytes() == bad


def test_the_limit_bounds_lines_and_whole_documents_and_can_be_raised(tmp_path: Path) -> None:
    body = json.loads((SESSIONS / "anthropic_body.json").read_text())
    body["messages"][0]["content"] = [{"type": "text", "text": f"part {i}"} for i in range(200)]
    (tmp_path / "pretty.json").write_text(json.dumps(body, indent=2))  # a document of many short lines
    (tmp_path / "one.jsonl").write_text(json.dumps({"role": "user", "content": "y" * 5000}) + "\n")
    proc = run("check", "--max-json-size", "4K", "pretty.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (b"pretty.json: a JSON document larger than 4 KiB, the limit; expected a request body or "
                           b"a list of messages (a larger limit: --max-json-size)\n")
    proc = in_process("show", "--max-json-size", "4096", "one.jsonl", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(b"one.jsonl:1: a line longer than 4 KiB, the limit")
    for name in ("pretty.json", "one.jsonl"):
        assert in_process("check", "--max-json-size", "64K", name, cwd=tmp_path).returncode in (0, 1)
        assert in_process("check", name, cwd=tmp_path).returncode in (0, 1)  # the default, 64 MiB


def test_exactly_the_limit_is_read_and_one_byte_more_is_not(tmp_path: Path) -> None:
    line = json.dumps({"role": "user", "content": "z" * 3000})
    (tmp_path / "s.jsonl").write_text(line + "\r\n")  # the line end does not count
    assert run("show", "--max-json-size", str(len(line)), "s.jsonl", cwd=tmp_path).returncode == 0
    proc = in_process("show", "--max-json-size", str(len(line) - 1), "s.jsonl", cwd=tmp_path)
    assert proc.returncode == 2 and b"a line longer than" in proc.stderr


BAD_SIZES = ["0", "12x", "-5", "M"]


@pytest.mark.parametrize("value", BAD_SIZES)
def test_a_bad_size_is_a_usage_error(value: str) -> None:
    proc = (run if value == BAD_SIZES[0] else in_process)("check", "--max-json-size", value, str(EXAMPLE), cwd=ROOT)
    assert proc.returncode == 2
    assert b"argument --max-json-size: expected a size such as 64M" in proc.stderr


def test_the_help_documents_the_limit() -> None:
    for k, command in enumerate(("check", "repair", "show", "convert", "trim")):
        proc = run(command, "--help") if k == 0 else in_process(command, "--help", cwd=ROOT)
        text = " ".join(proc.stdout.decode().split())
        assert "--max-json-size SIZE the largest line of JSON Lines, or whole JSON document" in text, command
        assert "(default: 64M; input with no line end, or a NUL byte, is refused" in text, command


# --- also: what a writer writes, its own check accepts ---------------------------------------------------


def as_a_user_runs_it(provider: str) -> Callable[..., subprocess.CompletedProcess[bytes]]:
    """`run` for one provider, `in_process` for the others: what differs between providers is their adapter, not
    the process."""
    return run if provider == "anthropic" else in_process


@pytest.mark.parametrize("provider", chatmend.providers.names())
def test_a_system_only_history_is_refused_or_written_as_its_check_accepts(tmp_path: Path, provider: str) -> None:
    (tmp_path / "s.jsonl").write_text('{"role":"system","content":"Be brief."}\n')
    empty = chatmend.providers.get(provider).empty_list_error
    converted = as_a_user_runs_it(provider)("convert", "s.jsonl", "--to", provider, "--model", "m", "-o", "body.json",
                                            cwd=tmp_path)
    checked = in_process("check", "s.jsonl", "--provider", provider, cwd=tmp_path)
    no_traceback(converted)
    no_traceback(checked)
    if converted.returncode == 0:  # written: then its own check passes it, and so does check of the history
        assert in_process("check", "body.json", "--provider", provider, cwd=tmp_path).returncode == 0
        assert checked.returncode == 0, checked.stdout
    else:  # refused (Anthropic: `system` is its own field, so no messages are left), and check says so
        assert converted.returncode == 2
        assert f"{provider}: messages: no messages to send ({empty})".encode() in converted.stderr
        assert checked.returncode == 1
        assert checked.stdout.startswith(b"messages: UNSUPPORTED: no messages to send")
        assert not (tmp_path / "body.json").exists()
    assert (converted.returncode == 2) == (provider == "anthropic")  # the only one that sends system apart


@pytest.mark.parametrize("provider", chatmend.providers.names())
def test_a_history_with_nothing_to_send_is_refused_or_written_as_it_reads_back(tmp_path: Path,
                                                                               provider: str) -> None:
    # found by bench/fuzz_cli.py: Bedrock wrote `"messages": []` and Gemini a lone bridge turn, bodies that carry
    # nothing and that chatmend could not read back
    (tmp_path / "s.jsonl").write_text('{"role":"user","content":""}\n')
    converted = as_a_user_runs_it(provider)("convert", "s.jsonl", "--to", provider, "--model", "m", "-o", "body.json",
                                            cwd=tmp_path)
    no_traceback(converted)
    if converted.returncode == 0:  # the empty message itself is sent (the OpenAI-compatible formats take it)
        body = json.loads((tmp_path / "body.json").read_text())
        assert chatmend.providers.get(provider).from_request(body) == [chatmend.ChatMessage(role="user", content="")]
        assert in_process("check", "body.json", "--provider", provider, cwd=tmp_path).returncode == 0
    else:
        assert converted.returncode == 2
        assert b"no messages to send" in converted.stderr
        assert not (tmp_path / "body.json").exists()
        with pytest.raises(chatmend.UnsupportedError, match="no messages to send"):
            chatmend.providers.get(provider).to_request([chatmend.ChatMessage(role="user", content="")], model="m")
    assert (converted.returncode == 2) == (provider in ("anthropic", "bedrock", "gemini"))


@pytest.mark.parametrize("provider", [p for p in chatmend.providers.names()
                                      if chatmend.providers.get(p).empty_list_error is not None])
def test_a_saved_body_with_no_messages_is_a_problem_check_reports(tmp_path: Path, provider: str) -> None:
    adapter = chatmend.providers.get(provider)
    body = adapter.to_request([chatmend.ChatMessage(role="user", content="hi")], model="claude-x" if provider ==
                              "anthropic" else "m")
    body[adapter.list_key] = []
    assert adapter.check(body)[0] == chatmend.Problem(code="EMPTY", path=adapter.list_key,
                                                       message=adapter.empty_list_error or "", provider=provider)
    (tmp_path / "b.json").write_text(json.dumps(body))
    proc = as_a_user_runs_it(provider)("check", "b.json", "--from", provider, cwd=tmp_path)
    if provider == "anthropic":  # its system text is read, so there is a history to check
        body["system"] = "Be brief."
        (tmp_path / "b.json").write_text(json.dumps(body))
        proc = as_a_user_runs_it(provider)("check", "b.json", "--from", provider, cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout.decode().splitlines()[0] == f"{adapter.list_key}: EMPTY: {adapter.empty_list_error}"
    else:  # nothing at all to read
        assert proc.returncode == 2
        assert proc.stderr == f"b.json: no messages in this {provider} body\n".encode()
    with pytest.raises(chatmend.UnsupportedError, match="no messages to send"):
        adapter.to_request([], model="m")


def test_an_image_with_an_empty_url_is_located_bad_input_in_the_neutral_form(tmp_path: Path) -> None:
    image = '{"type":"image","url":" "}'
    (tmp_path / "s.jsonl").write_text('{"role":"user","content":"hi"}\n'
                                      '{"role":"user","content":[{"type":"text","text":"see"},' + image + ']}\n')
    for k, command in enumerate(COMMANDS):
        proc = (run if k == 0 else in_process)(*command, "s.jsonl", cwd=tmp_path)
        no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stderr)
        assert proc.stderr == (b"s.jsonl:2: message 1, field 'content.1': an image's 'url' is empty; expected an "
                               b"https URL or a data: URI (content is a string or a list of text, image, thinking, "
                               b"file and native parts)\n")
    with pytest.raises(ValueError, match="an image's 'url' is empty"):
        chatmend.ImagePart(url="")


@pytest.mark.parametrize("provider", chatmend.providers.names())
def test_a_body_with_an_empty_image_url_is_located_bad_input(tmp_path: Path, provider: str) -> None:
    image = chatmend.ImagePart(url="https://example.com/a.png")
    history = [chatmend.ChatMessage(role="user", content=(chatmend.TextPart(text="see"), image))]
    adapter = chatmend.providers.get(provider)
    # a provider that writes no image (DeepSeek) still reads a body of its shape that has one
    writer = adapter if "image" in adapter.writes_parts else chatmend.providers.get(adapter.shape_of or provider)
    body = writer.to_request(history, model="m")
    if not any(getattr(p, "url", None) == image.url for m in adapter.from_request(body)
               if not isinstance(m.content, str) for p in m.content):
        pytest.skip(f"{provider} carries no image by URL (the writer sends it another way)")
    (tmp_path / "b.json").write_text(json.dumps(body).replace("https://example.com/a.png", ""))
    for k, command in enumerate([*COMMANDS, ["convert", "--to", "gemini"]]):
        # the first as a user runs it, the sweep over the others in-process (the same main(), fast)
        proc = (as_a_user_runs_it(provider) if k == 0 else in_process)(*command, "b.json", "--from", provider,
                                                                        cwd=tmp_path)
        no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stderr)
        text = proc.stderr.decode()
        assert text.startswith(f"b.json: {chatmend.providers.get(provider).list_key}[0]"), text
        # the neutral model's words, or the provider's own where its checker says it (Chat: "Invalid image URL")
        assert text.endswith((f"an image's 'url' is empty; expected an https URL or a data: URI (reading {provider})\n",
                              f"but got an empty string (reading {provider})\n")), text
