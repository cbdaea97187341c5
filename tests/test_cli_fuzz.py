"""The fuzz run of bench/fuzz_cli.py, small (CI keeps it honest), and a regression test for each failure the
full run (10,000 mutated files) found (issue #21)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import chatmend.providers
from tests.test_cli_hostile import in_process

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "examples" / "sessions"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("CHATMEND_TRACEBACK", None)
    return subprocess.run([sys.executable, "-m", "chatmend", *args], capture_output=True, cwd=cwd, env=env,
                          timeout=60, check=False)


def sweep(*args: str, cwd: Path, first_in_a_subprocess: bool) -> subprocess.CompletedProcess[bytes]:
    """`chatmend ARGS`: in a subprocess for the first command of a test (as a user runs it), in-process for
    the sweep over the others (fast: the same main())."""
    return run(*args, cwd=cwd) if first_in_a_subprocess else in_process(*args, cwd=cwd)


def no_traceback(proc: subprocess.CompletedProcess[bytes]) -> None:
    assert b"Traceback" not in proc.stderr and b"internal error" not in proc.stderr, proc.stderr


def test_a_small_fuzz_run_finds_nothing(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fuzz_cli.py"), "--count", "40", "--seed", "21",
                           "--workers", "1", "--save", str(tmp_path / "failing")],
                          capture_output=True, timeout=300, check=False, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    commands = 6 + 1 + len(chatmend.providers.names())  # repair (3 ways), check, show, trim; convert to each form
    assert lines[0].startswith(f"fuzz_cli: 40 mutated files (seed 21), {40 * commands} runs ({commands} commands each)")
    assert lines[-1] == "no failures: no traceback, no exit outside 0/1/2, no file lost or half-written"
    assert not (tmp_path / "failing").exists()


def test_the_mutations_are_a_function_of_seed_and_index() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import fuzz_cli
    finally:
        sys.path.remove(str(ROOT / "bench"))
    sources = fuzz_cli.seeds()
    names = {name for name, _ in sources}
    assert {"examples/sessions/claude_code.jsonl", "generated/gemini.json", "generated/anthropic.json"} <= names
    first = [fuzz_cli.mutated(3, i, sources) for i in range(30)]
    assert first == [fuzz_cli.mutated(3, i, sources) for i in range(30)]
    assert first != [fuzz_cli.mutated(4, i, sources) for i in range(30)]
    assert len({data for _, _, data in first}) > 25  # the files differ from one another


# --- what the 10,000-file run found ------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '{"role":{"a":{"a":1}},"content":"x"}\n{"role":"user","content":"y"}\n',
    '[{"role":["user"],"content":"x"}]',
    json.dumps({"messages": [{"role": "user", "content": "x"}, {"role": {"a": 1}, "content": "y"}]}),
], ids=["jsonl", "list", "body"])
def test_a_role_that_is_an_object_or_a_list_is_bad_input(tmp_path: Path, text: str) -> None:
    (tmp_path / "s.json").write_text(text)
    commands = (["check"], ["show"], ["repair"], ["convert", "--to", "gemini"], ["trim", "--max-messages", "1"])
    for k, command in enumerate(commands):
        proc = sweep(*command, "s.json", cwd=tmp_path, first_in_a_subprocess=k == 0)
        no_traceback(proc)
        assert proc.returncode == 2, (command, proc.stderr)
        assert b"role" in proc.stderr


def test_a_deep_value_is_named_by_its_kind_in_an_error_not_printed_whole(tmp_path: Path) -> None:
    deep = '{"a":' * 600 + "1" + "}" * 600
    (tmp_path / "s.json").write_text('{"messages":[{"role":"user","content":"x"},{"role":' + deep
                                     + ',"content":"y"}],"model":"gpt-5"}')
    proc = run("check", "s.json", "--from", "openai_chat", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.decode() == ("s.json: messages[1].role: unsupported role <an object>; expected system, "
                                    "developer, user, assistant, tool or function (reading openai_chat)\n")
    assert len(proc.stderr) < 300


@pytest.mark.parametrize("depth", [800])
def test_gemini_reads_back_arguments_as_deep_as_json_is_read(tmp_path: Path, depth: int) -> None:
    body = json.loads((SESSIONS / "anthropic_body.json").read_text())
    calls = [b for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
             if b.get("type") == "tool_use"]
    calls[0]["input"] = {"x": json.loads('{"a":' * depth + "1" + "}" * depth)}
    (tmp_path / "s.json").write_text(json.dumps(body))
    proc = run("convert", "s.json", "--to", "gemini", "-o", "g.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for command in (["check"], ["show"]):
        proc = in_process(*command, "g.json", cwd=tmp_path)
        no_traceback(proc)
        assert proc.returncode in (0, 1), (command, proc.stderr)
    back = json.loads(run("convert", "g.json", "--to", "anthropic", "--model", "m", cwd=tmp_path).stdout)
    found = [b["input"] for m in back["messages"] if isinstance(m["content"], list) for b in m["content"]
             if b.get("type") == "tool_use"]
    assert found[0] == calls[0]["input"]
