"""Issue #44 items 1-3 and 5, #43 items 5 and 6a: `repair --in-place` and `doctor --fix` never lose what an agent
writes. Each test runs `chatmend` as a user does, in a subprocess, on real files in a temporary directory; an
agent holding a session open is a real second process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatmend.files.inplace import torn_tail

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "examples" / "sessions"
CLAUDE = (SESSIONS / "claude_code.jsonl").read_bytes()  # a call left unanswered
CODEX = (SESSIONS / "codex_rollout.jsonl").read_bytes()  # a call left unanswered
HOUR_AGO = time.time() - 3600
TORN = b'{"type":"user","message":{"role":"us'  # what a writer that died mid-line leaves


def chatmend(*args: str, hook: str = "", stdout: int | IO[str] = subprocess.PIPE,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`chatmend ARGS` in a subprocess; `hook`, Python code, runs where a write in place checks the file just
    before its rename (`os` and `signal` at hand)."""
    plain = "import sys, chatmend.cli as c\nsys.exit(c.main(sys.argv[1:]))"
    code = ("import os, signal, sys, chatmend.cli as c\n"
            "import chatmend.files.inplace as ip\n"
            "checked = ip.unchanged\n"
            f"def hook(*a, **k):\n    {hook or 'pass'}\n    return checked(*a, **k)\n"
            "ip.unchanged = hook\n"
            "sys.exit(c.main(sys.argv[1:]))\n") if hook else plain
    return subprocess.run([sys.executable, "-c", code, *args], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=120, cwd=cwd, check=False)


@contextmanager
def held_open(path: Path) -> Iterator[subprocess.Popen[str]]:
    """A second process holding `path` open for appending, as Codex's recorder does, until the block ends."""
    agent = subprocess.Popen([sys.executable, "-c", "import sys\nf = open(sys.argv[1], 'ab')\nprint('ready', "
                              "flush=True)\nsys.stdin.read()\n", str(path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert agent.stdout is not None and agent.stdout.readline() == "ready\n"
        yield agent
    finally:
        agent.communicate("", timeout=30)


def session(tmp_path: Path, data: bytes = CLAUDE, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    os.utime(path, (HOUR_AGO, HOUR_AGO))  # not written in the last minute: only an open handle says in use
    return path


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def doctor_json(*args: str) -> tuple[int, list[dict[str, object]]]:
    proc = chatmend("doctor", "--json", "--workers", "1", *args)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()]


# 1: an agent holding its session open ---------------------------------------------------------------------


def test_repair_in_place_refuses_a_session_an_agent_holds_open_and_names_it(tmp_path: Path) -> None:
    path = session(tmp_path)
    with held_open(path) as agent:
        proc = chatmend("repair", str(path), "--in-place")
        assert proc.returncode == 2, proc.stderr
        assert f"open in another process (pid {agent.pid} (python" in proc.stderr
        assert "nothing was written" in proc.stderr and "--force" in proc.stderr
        assert path.read_bytes() == CLAUDE and names(tmp_path) == ["s.jsonl"]
        forced = chatmend("repair", str(path), "--in-place", "--force")
        assert forced.returncode == 0, forced.stderr
        assert (tmp_path / "s.jsonl.bak").read_bytes() == CLAUDE and path.read_bytes() != CLAUDE


def test_repair_in_place_refuses_a_process_that_opened_the_session_while_it_was_repaired(tmp_path: Path) -> None:
    path = session(tmp_path)
    child = f"import sys\nf = open({str(path)!r}, 'ab')\nprint('ready', flush=True)\nsys.stdin.read()\n"
    opener = ("import subprocess\nif not hasattr(os, 'agent'):\n    os.agent = subprocess.Popen([sys.executable, "
              f"'-c', {child!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n    os.agent.stdout.readline()\n")
    opener = f"exec({opener!r})"  # an agent opens the session after chatmend read it, before the rename
    proc = chatmend("repair", str(path), "--in-place", hook=opener)
    assert proc.returncode == 2 and "open in another process" in proc.stderr, proc.stderr
    assert path.read_bytes() == CLAUDE and not [n for n in names(tmp_path) if n != "s.jsonl"]


def test_doctor_takes_a_session_held_open_for_in_use_and_leaves_it(tmp_path: Path) -> None:
    path = session(tmp_path)
    with held_open(path) as agent:
        code, found = doctor_json("--fix", str(path))
        assert code == 1
        assert found[0]["status"] == "in use"
        assert any(f"pid {agent.pid} (python" in str(p) for p in found[0]["problems"])  # type: ignore[attr-defined]
        assert path.read_bytes() == CLAUDE and names(tmp_path) == ["s.jsonl"]
    code, found = doctor_json("--fix", str(path))
    assert code == 0 and found[0]["status"] == "fixed"


# 2: doctor --fix writes as repair --in-place does ---------------------------------------------------------


def test_doctor_fix_repairs_a_symlinked_session_through_the_link(tmp_path: Path) -> None:
    target = session(tmp_path, name="real.jsonl")
    link = tmp_path / "link.jsonl"
    link.symlink_to("real.jsonl")
    code, found = doctor_json("--fix", str(link))
    assert code == 0 and found[0]["status"] == "fixed"
    assert link.is_symlink() and os.readlink(link) == "real.jsonl"
    assert target.read_bytes() != CLAUDE and (tmp_path / "real.jsonl.bak").read_bytes() == CLAUDE
    assert chatmend("check", str(link)).returncode == 0


def test_doctor_fix_does_not_split_hard_links(tmp_path: Path) -> None:
    path = session(tmp_path)
    os.link(path, tmp_path / "other-name.jsonl")
    code, found = doctor_json("--fix", str(path))
    assert code == 1 and found[0]["status"] == "broken"
    assert any("has 2 hard links" in str(p) for p in found[0]["problems"])  # type: ignore[attr-defined]
    assert path.read_bytes() == CLAUDE and names(tmp_path) == ["other-name.jsonl", "s.jsonl"]


def test_doctor_fix_leaves_a_session_another_run_holds_locked(tmp_path: Path) -> None:
    path = session(tmp_path)
    locker = subprocess.Popen([sys.executable, "-c", "import fcntl, sys\nf = open(sys.argv[1], 'rb')\n"
                               "fcntl.flock(f, fcntl.LOCK_EX)\nf.close\nprint('ready', flush=True)\n"
                               "sys.stdin.read()\n", str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "ready\n"
        for forced in ([], ["--force"]):  # another chatmend is writing it: never two at once
            code, found = doctor_json("--fix", *forced, str(path))
            assert code == 1 and found[0]["status"] == "in use", found
            assert "locked by another process" in str(found[0]["problems"])
            assert path.read_bytes() == CLAUDE and names(tmp_path) == ["s.jsonl"]
    finally:
        locker.communicate("", timeout=30)


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_signal_during_doctor_fix_leaves_no_temporary_file(tmp_path: Path, signame: str) -> None:
    path = session(tmp_path)
    proc = chatmend("doctor", "--fix", "--workers", "1", str(path), hook=f"os.kill(os.getpid(), signal.{signame})")
    assert proc.returncode in (-getattr(signal, signame), 130), proc.stderr
    assert path.read_bytes() == CLAUDE and names(tmp_path) == ["s.jsonl"]  # no temporary file, no backup


@pytest.mark.parametrize("command", [["repair", "--in-place"], ["doctor", "--fix", "--workers", "1"]])
def test_a_killed_run_s_temporary_files_are_swept_when_stale_and_not_open(tmp_path: Path,
                                                                         command: list[str]) -> None:
    path = session(tmp_path)
    stale, fresh, held = (tmp_path / f".s.jsonl.{h * 12}.tmp" for h in "abc")
    other = tmp_path / f".other.jsonl.{'d' * 12}.tmp"  # another file's: not this run's to sweep
    for leftover in (stale, fresh, held, other):
        leftover.write_bytes(CLAUDE[:100])
    for leftover in (stale, held, other):
        os.utime(leftover, (HOUR_AGO, HOUR_AGO))
    with held_open(held):
        proc = chatmend(command[0], *command[1:], str(path))
        assert proc.returncode == 0, proc.stderr
    assert not stale.exists()
    assert fresh.exists() and held.exists() and other.exists()
    assert (tmp_path / "s.jsonl.bak").read_bytes() == CLAUDE


# 3: a torn last line -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["repair", "--in-place"], ["doctor", "--fix", "--workers", "1"]])
@pytest.mark.parametrize("sample", [CLAUDE, CODEX], ids=["claude_code", "codex"])
def test_a_torn_last_line_is_left_out_kept_in_the_backup_and_the_next_record_is_read(
        tmp_path: Path, command: list[str], sample: bytes) -> None:
    path = session(tmp_path, sample + TORN)
    proc = chatmend(command[0], *command[1:], str(path))
    assert proc.returncode == 0, proc.stderr
    lines = (sample + TORN).count(b"\n") + 1
    assert f"line {lines}: a torn last line ({len(TORN)} bytes) left out; kept in {path}.bak" in proc.stdout
    repaired = path.read_bytes()
    assert repaired.endswith(b"\n") and TORN not in repaired
    assert (tmp_path / "s.jsonl.bak").read_bytes() == sample + TORN
    record = (b'{"type":"summary","summary":"the next turn","leafUuid":"x"}\n' if sample is CLAUDE else
              b'{"timestamp":"2026-02-11T16:09:00.000Z","type":"event_msg","payload":{"type":"token_count"}}\n')
    with open(path, "ab") as agent:  # the agent's next record starts a line of its own: read, not lost
        agent.write(record)
    assert path.read_bytes() == repaired + record
    assert all(json.loads(line) for line in path.read_bytes().splitlines())
    check = chatmend("check", str(path))
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_codex_rollout_with_a_torn_last_line_is_read_as_codex_reads_it(tmp_path: Path) -> None:
    path = session(tmp_path, CODEX)
    assert chatmend("repair", str(path), "--in-place").returncode == 0  # now healthy
    healthy = path.read_bytes()
    with open(path, "ab") as agent:
        agent.write(TORN)
    check = chatmend("check", str(path))
    assert check.returncode == 0, check.stderr  # Codex skips the line; nothing it would send is wrong
    repair = chatmend("repair", str(path))
    assert repair.returncode == 0
    last = healthy.count(b"\n") + 1
    assert f"line {last}: a torn last line" in repair.stderr
    assert repair.stdout.encode() == healthy


def test_a_corrupt_line_before_the_last_is_an_error_naming_its_line(tmp_path: Path) -> None:
    healthy = session(tmp_path, CLAUDE, name="h.jsonl")
    assert chatmend("repair", str(healthy), "--in-place").returncode == 0
    lines = healthy.read_bytes().splitlines(keepends=True)
    corrupt = session(tmp_path, b"".join([*lines[:3], b'{"type":"user",\n', *lines[3:]]), name="c.jsonl")
    proc = chatmend("check", str(corrupt))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{corrupt}:4:")
    repair = chatmend("repair", str(corrupt), "--in-place")
    assert repair.returncode == 2 and corrupt.read_bytes() == b"".join([*lines[:3], b'{"type":"user",\n',
                                                                         *lines[3:]])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3), min_size=1, max_size=5),
       st.binary(max_size=40))
def test_a_torn_tail_is_only_ever_the_bytes_after_the_last_line_end(records: list[dict[str, int]],
                                                                   tail: bytes) -> None:
    body = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    found = torn_tail(body + tail)
    assert found in (b"", tail)
    assert torn_tail(body) == b""  # a file that ends with its line end has no torn line
    if b"\n" not in tail and found:
        assert (body + tail)[:-len(found)] == body


# 5: -o /dev/stdout ----------------------------------------------------------------------------------------


def test_output_to_dev_stdout_writes_into_a_pipe(tmp_path: Path) -> None:
    path = session(tmp_path)
    plain = chatmend("repair", str(path))
    proc = chatmend("repair", str(path), "-o", "/dev/stdout")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == plain.stdout and "repaired" in proc.stderr  # the report goes to stderr
    assert names(tmp_path) == ["s.jsonl"]


def test_output_to_dev_stdout_appends_to_a_log_opened_for_appending(tmp_path: Path) -> None:
    path = session(tmp_path)
    plain = chatmend("repair", str(path)).stdout
    log = tmp_path / "log"
    log.write_text("earlier lines\n")
    for output in ("/dev/stdout", str(log)):
        with open(log, "a") as out:  # chatmend ... -o OUTPUT >> log
            proc = chatmend("repair", str(path), "-o", output, stdout=out)
        assert proc.returncode == 0, proc.stderr
    assert log.read_text() == "earlier lines\n" + plain + plain


# #43 item 6a: an empty session file -------------------------------------------------------------------------


def test_an_empty_session_file_is_skipped_not_broken(tmp_path: Path) -> None:
    empty = session(tmp_path, b"", name="empty.jsonl")
    code, found = doctor_json(str(empty))
    assert code == 0 and found[0]["status"] == "empty"
    code, found = doctor_json("--fix", str(tmp_path))
    assert code == 0 and [f["status"] for f in found] == ["empty"]
    assert empty.read_bytes() == b"" and names(tmp_path) == ["empty.jsonl"]
    table = chatmend("doctor", "--workers", "1", str(tmp_path))
    assert table.returncode == 0 and "empty session files hold nothing to send: skipped" in table.stdout


# 6: file names printed escaped ------------------------------------------------------------------------------


CHAT = b'{"model": "gpt-4o", "messages": [{"role": "developer", "content": "hi"}]}'


@pytest.mark.parametrize("sample", [CLAUDE, CHAT], ids=["problems", "clean"])
def test_check_escapes_control_characters_of_a_file_name_in_its_summary(tmp_path: Path, sample: bytes) -> None:
    path = session(tmp_path, sample, name="a\nb\x1b[31m.jsonl")
    proc = chatmend("check", str(path))
    assert proc.returncode in (0, 1), proc.stderr
    assert "\x1b" not in proc.stderr and "a\\x0ab\\x1b[31m.jsonl: " in proc.stderr
    assert proc.stderr.count("\n") == 1  # one line: a name cannot fake another line of the report
