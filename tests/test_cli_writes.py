"""Writes that must not lose data (issue #21): each as a user runs the CLI, in a subprocess, in a temporary
directory. A race or a signal between reading and renaming is made deterministic by the test hook
`chatmend.cli._output._before_replace`, which runs just before a finished file is renamed into place."""

from __future__ import annotations

import errno
import fcntl
import io
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chatmend
from chatmend.cli._output import batched
from chatmend.files.io import Chunk, FileBytes, as_bytes, atomic_write
from tests.strategies import examples

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "examples" / "sessions"
BROKEN = (SESSIONS / "claude_code.jsonl").read_bytes()  # a transcript with a call left unanswered


def run(*args: str, hook: str = "", env: dict[str, str] | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`chatmend ARGS` in a subprocess; `hook`, Python code, runs just before the rename (`path`, `os` and
    `signal` at hand)."""
    code = ("import os, signal, sys, chatmend.cli as c, chatmend.cli._output as output\n"
            f"def hook():\n    {hook or 'pass'}\n"
            "output._before_replace = hook\n"
            "sys.exit(c.main(sys.argv[1:]))\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd, env={**os.environ, **(env or {})}, check=False)


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# 1 --------------------------------------------------------------------------------------------------------


def test_in_place_refuses_a_file_appended_to_between_read_and_write(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)
    record = '{"type":"summary","summary":"appended by the agent"}\n'
    proc = run("repair", str(path), "--in-place", hook=f"open({str(path)!r}, 'a').write({record!r})")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"{path}: changed while chatmend was repairing it")
    assert path.read_bytes() == BROKEN + record.encode()  # the agent's record is there, nothing else changed
    assert names(tmp_path) == ["s.jsonl"]  # no backup, no temporary file


def test_in_place_refuses_a_file_another_run_holds_locked(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)
    with open(path, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        proc = run("repair", str(path), "--in-place")
    assert proc.returncode == 2 and "locked by another process" in proc.stderr
    assert path.read_bytes() == BROKEN and names(tmp_path) == ["s.jsonl"]


def _overwrite_keeping_stat(path: Path) -> str:
    """A hook that replaces the file's first byte and puts its mtime back (a change the stat check cannot see)."""
    return (f"st = os.stat({str(path)!r}); f = open({str(path)!r}, 'r+b'); f.write(b'X'); f.close(); "
            f"os.utime({str(path)!r}, ns=(st.st_atime_ns, st.st_mtime_ns))")


def test_the_backup_holds_the_bytes_that_were_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = (SESSIONS / "codex_rollout.jsonl").read_bytes()  # read whole, once
    path.write_bytes(original)
    # Replacing the file's content after the read (same size and mtime: not seen) must not reach the backup.
    proc = run("repair", str(path), "--in-place", hook=_overwrite_keeping_stat(path))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s.jsonl.bak").read_bytes() == original


def test_a_file_read_again_as_it_is_repaired_is_refused_when_its_bytes_changed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)  # a Claude Code transcript: repaired a part at a time, its bytes read again
    proc = run("repair", str(path), "--in-place", hook=_overwrite_keeping_stat(path))
    assert proc.returncode == 2 and "changed while chatmend was repairing it" in proc.stderr
    assert path.read_bytes() == b"X" + BROKEN[1:] and names(tmp_path) == ["s.jsonl"]  # no backup, nothing else


# 2 --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_full_disk_is_exit_2_never_a_short_file(tmp_path: Path, unbuffered: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)
    env = {"PYTHONUNBUFFERED": unbuffered} if unbuffered else {}
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "chatmend", "repair", str(path)], stdout=full,
                              capture_output=False, stderr=subprocess.PIPE, text=True, timeout=60,
                              env={**os.environ, **env}, check=False)
    assert proc.returncode == 2
    assert "chatmend: error: <stdout>: cannot write: No space left on device" in proc.stderr
    proc = run("repair", str(path), "-o", "/dev/full", env=env)
    assert proc.returncode == 2
    assert proc.stderr == "chatmend: error: /dev/full: cannot write: No space left on device\n"


# 3 --------------------------------------------------------------------------------------------------------


def test_in_place_through_a_symlink_repairs_its_target(tmp_path: Path) -> None:
    target = tmp_path / "real.jsonl"
    target.write_bytes(BROKEN)
    link = tmp_path / "link.jsonl"
    link.symlink_to("real.jsonl")
    proc = run("repair", "link.jsonl", "--in-place", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == "real.jsonl"
    assert target.read_bytes() != BROKEN and (tmp_path / "real.jsonl.bak").read_bytes() == BROKEN
    assert "wrote real.jsonl (the original is in real.jsonl.bak)" in proc.stdout
    out = tmp_path / "out-link"
    out.symlink_to("dangling.jsonl")  # -o through a dangling link creates its target
    assert run("repair", str(target), "-o", str(out)).returncode == 0
    assert out.is_symlink() and (tmp_path / "dangling.jsonl").is_file()


def test_output_into_a_fifo_and_a_device_is_written_into_them(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    proc = run("repair", str(path), "-o", str(fifo))
    reader.join(30)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode) and got[0] == run("repair", str(path)).stdout.encode()
    assert run("repair", str(path), "-o", "/dev/null").returncode == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    proc = run("repair", str(fifo), "--in-place")
    assert proc.returncode == 2 and "--in-place needs a regular file" in proc.stderr


def test_a_hard_linked_file_is_not_split(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)
    os.link(path, tmp_path / "other-name.jsonl")
    for args in (["--in-place"], ["-o", str(tmp_path / "other-name.jsonl")]):
        proc = run("repair", str(path), *args)
        assert proc.returncode == 2 and "has 2 hard links" in proc.stderr
    assert path.read_bytes() == BROKEN and names(tmp_path) == ["other-name.jsonl", "s.jsonl"]


# 4 --------------------------------------------------------------------------------------------------------


def test_an_existing_backup_is_kept_and_the_report_names_the_new_one(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    for existing in ("s.jsonl.bak", "s.jsonl.bak.1"):
        (tmp_path / existing).write_text(f"older: {existing}")
    path.write_bytes(BROKEN)
    proc = run("repair", str(path), "--in-place", "--report", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["backup"] == f"{path}.bak.2"
    assert (tmp_path / "s.jsonl.bak").read_text() == "older: s.jsonl.bak"
    assert (tmp_path / "s.jsonl.bak.1").read_text() == "older: s.jsonl.bak.1"
    assert (tmp_path / "s.jsonl.bak.2").read_bytes() == BROKEN
    path.write_bytes(BROKEN)
    proc = run("repair", str(path), "--in-place")
    assert proc.stdout.splitlines()[-1] == f"  wrote {path} (the original is in {path}.bak.3)"


# 5 --------------------------------------------------------------------------------------------------------


def test_what_repair_does_not_change_is_not_reported_fixed_nor_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "body.json"
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100,
            "tools": [{"name": "bad name", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": "hi"}]}
    original = json.dumps(body).encode()
    path.write_bytes(original)
    for _ in range(2):
        proc = run("repair", str(path), "--in-place", "--report", "json")
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        assert (report["changed"], report["rejected"], report["written"], report["backup"]) == (False, [], None, None)
    assert path.read_bytes() == original and names(tmp_path) == ["body.json"]
    # A repaired file, repaired again, changes nothing and makes no second backup.
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(BROKEN)
    assert run("repair", str(transcript), "--in-place").returncode == 0
    repaired = transcript.read_bytes()
    proc = run("repair", str(transcript), "--in-place")
    assert proc.stdout == f"{transcript}: nothing to repair (6 messages)\n"
    assert transcript.read_bytes() == repaired and names(tmp_path) == ["body.json", "s.jsonl", "s.jsonl.bak"]


# 6 --------------------------------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root gives files away")
def test_in_place_keeps_owner_group_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)
    os.chown(path, 1234, 1234)
    path.chmod(0o600)
    proc = run("repair", str(path), "--in-place")
    assert proc.returncode == 0, proc.stderr
    for kept in (path, tmp_path / "s.jsonl.bak"):
        st = kept.stat()
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 1234, 0o600)
    assert path.read_bytes() != BROKEN


# 7 --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("where", ["--in-place", "-o"])
def test_a_signal_during_the_write_leaves_no_temporary_file(tmp_path: Path, signame: str, where: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BROKEN)
    out = tmp_path / "out.jsonl"
    out.write_text("old output\n")
    args = ["--in-place"] if where == "--in-place" else ["-o", str(out)]
    proc = run("repair", str(path), *args, hook=f"os.kill(os.getpid(), signal.{signame})")
    assert proc.returncode == -getattr(signal, signame)  # ended by the signal, as the sender meant
    assert path.read_bytes() == BROKEN and out.read_text() == "old output\n"
    assert not [n for n in names(tmp_path) if n.endswith(".tmp")]


# 8 --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", ["claude_code.jsonl", "codex_rollout.jsonl"])
def test_transcripts_keep_crlf_blank_lines_and_a_bom(tmp_path: Path, sample: str) -> None:
    lines = (SESSIONS / sample).read_bytes().splitlines()
    original = b"\xef\xbb\xbf" + b"\r\n".join(lines[:2]) + b"\r\n\r\n  \r\n" + b"\r\n".join(lines[2:]) + b"\r\n"
    path = tmp_path / sample
    path.write_bytes(original)
    proc = run("repair", str(path), "--in-place")
    assert proc.returncode == 0, proc.stderr
    written = path.read_bytes()
    assert written.startswith(b"\xef\xbb\xbf" + lines[0] + b"\r\n" + lines[1] + b"\r\n\r\n  \r\n")
    assert written.count(b"\n") == written.count(b"\r\n")  # new lines end as the file's do
    plain = run("repair", str(SESSIONS / sample)).stdout.encode()
    assert written.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n\r\n  \r\n", b"\r\n").replace(b"\r\n", b"\n") == plain


@pytest.mark.parametrize("sample", ["ctrl_c_during_tools.jsonl", "kimi_repeated_ids.jsonl"])
def test_neutral_json_lines_keep_unchanged_lines_crlf_blank_lines_and_a_bom(tmp_path: Path, sample: str) -> None:
    source = ROOT / "examples" / sample
    lines = source.read_bytes().splitlines()
    assert run("repair", str(source)).returncode == 0
    # the first line as a person may write it: spaces and another key order (still the same message)
    first = json.loads(lines[0])
    lines[0] = json.dumps(dict(reversed(list(first.items()))), indent=None).encode()
    original = (b"\xef\xbb\xbf\r\n" + b"\r\n".join(lines[:2]) + b"\r\n\r\n  \r\n" + b"\r\n".join(lines[2:])
                + b"\r\n\r\n")
    path = tmp_path / "s.jsonl"
    path.write_bytes(original)
    assert run("show", str(path)).stdout.startswith(f"{path} (chatmend,")  # read as the neutral format
    proc = run("repair", str(path), "--in-place")
    assert proc.returncode == 0, proc.stderr
    written = path.read_bytes()
    assert written != original  # the sample has something to repair
    assert written.startswith(b"\xef\xbb\xbf\r\n" + lines[0] + b"\r\n" + lines[1] + b"\r\n\r\n  \r\n")
    assert written.count(b"\n") == written.count(b"\r\n")  # new lines end as the file's do
    kept = [line for line in lines if line in written.split(b"\r\n")]
    canonical = run("repair", str(source)).stdout.encode().splitlines()
    # every line is either one read (byte for byte) or the canonical line of a changed message
    for line in written.removeprefix(b"\xef\xbb\xbf").split(b"\r\n"):
        assert line in lines or line in canonical or not line.strip(), line
    assert len(kept) >= len(lines) // 2
    assert chatmend.loads(written.decode("utf-8-sig")) == chatmend.loads("".join(
        line.decode() + "\n" for line in canonical))
    # repaired again: nothing to change, nothing rewritten
    again = run("repair", str(path), "--in-place")
    assert again.returncode == 0 and path.read_bytes() == written
    assert sorted(n for n in names(tmp_path) if ".bak" in n) == ["s.jsonl.bak"]
    assert (tmp_path / "s.jsonl.bak").read_bytes() == original


_SOURCE = io.BytesIO(bytes(range(256)) * 4)
_CHUNKS = st.lists(st.binary(max_size=40) | st.builds(lambda a, n: FileBytes(_SOURCE, a, a + n), st.integers(0, 900),
                                                     st.integers(0, 100)), max_size=30)


@given(_CHUNKS, st.integers(1, 50))
@examples(300)
def test_batches_hold_every_byte_in_order_and_a_large_chunk_is_not_copied(chunks: list[bytes | FileBytes],
                                                                          size: int) -> None:
    out = list(batched(iter(chunks), size))
    assert b"".join(map(as_bytes, out)) == b"".join(map(as_bytes, chunks))
    whole = [chunk for chunk in chunks if isinstance(chunk, FileBytes) or len(chunk) >= size]
    assert all(any(piece is chunk for piece in out) for chunk in whole)  # the very object, not a copy
    assert all(len(piece) < 2 * size for piece in out if not any(piece is chunk for chunk in whole))


@pytest.mark.parametrize("kernel", ["copies", "refuses", "is missing"])
def test_a_file_s_bytes_are_written_file_to_file_or_read_and_written(tmp_path: Path, kernel: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "source"
    source.write_bytes(bytes(range(256)) * 5000)  # more than a megabyte: the fallback reads it in pieces
    calls: list[int] = []
    copy = getattr(os, "copy_file_range", None)
    if kernel == "refuses":
        def refused(*args: object) -> int:
            calls.append(1)
            raise OSError(errno.EXDEV, "cross-device")
        monkeypatch.setattr(os, "copy_file_range", refused, raising=False)
    elif kernel == "is missing" or copy is None:
        monkeypatch.delattr(os, "copy_file_range", raising=False)
    with source.open("rb") as handle:
        chunks: list[Chunk] = [b"head ", FileBytes(handle, 3, 1_200_003), "\u00e9 text", FileBytes(handle, 0, 2), b""]
        atomic_write(str(tmp_path / "out"), chunks)
        expected = b"head " + source.read_bytes()[3:1_200_003] + "\u00e9 text".encode() + source.read_bytes()[:2]
    assert (tmp_path / "out").read_bytes() == expected
    assert calls == ([1, 1] if kernel == "refuses" else [])  # refused once a chunk, then read and written


def test_a_file_cut_short_since_its_bytes_were_named_is_an_error_and_nothing_is_written(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.write_bytes(b"x" * 100)
    with source.open("rb") as handle:
        with pytest.raises(chatmend.InputError, match="changed while chatmend was reading it"):
            atomic_write(str(tmp_path / "out"), [b"a", FileBytes(handle, 50, 150)])
        with pytest.raises(chatmend.InputError, match="changed while chatmend was reading it"):
            as_bytes(FileBytes(handle, 50, 150))
    assert not (tmp_path / "out").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["source"]
