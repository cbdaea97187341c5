"""`chatmend check` and `chatmend repair` of a large Claude Code transcript against `json.loads` of its lines
(issue #24: at most 2.0x each), and their peak memory against the file's size (at most 1.0x).

    python bench/transcripts.py                   # a 150 MB transcript, generated into a temporary folder
    python bench/transcripts.py --mb 20 --rounds 3
    python bench/transcripts.py --lean            # more, smaller records: each result once, no envelope

The transcript is generated (never committed): a Claude Code session of one linear chain, each turn a prompt,
a reply written one block a line (text, then one to three tool_use records under one message.id, with Claude
Code's envelope, usage and request id), its results of one to four and a half kilobytes each, as Claude Code
writes them twice (in the tool_result and in `toolUseResult`: a Read's file numbered with `→`, a Bash command's
output, a Grep's file list), file-history snapshots: about 2 kB a record, as the 144 MB, 70,000-record session
the issue measured. One turn in fifty was killed with its calls unanswered, one in forty answers its parallel calls
off their own tool_use lines (the tree Claude Code writes), so `repair` has work to do across the whole file.

Time: in one process, `chatmend check FILE` and `chatmend repair FILE -o OUT` (the CLI's own `main`, its output to
/dev/null), twice: first with CPython's collector and recursion limit at their defaults (a library caller's
process), then with both as the `chatmend` program sets them for itself (`gc.freeze()` and higher thresholds; a
recursion limit of 2,000, so that json reads as deep as orjson and the first pass needs no guard against nesting:
the program owns its process, the library never touches it), which is what a user who runs the command gets;
and, as the baseline,
`json.loads` of each line of the file (its lines read beforehand), in interleaved rounds on the process's CPU
clock; the figure is the median per-round ratio, with the share of the command's time spent in CPython's cyclic
collector (observed by a `gc.callbacks` hook). Memory: each command in a fresh process, run as the program runs it,
its peak resident size (`VmHWM`, Linux) less what that process held once it had imported chatmend, against the
file's size.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend.cli import _tune_process
from timing import median

_WORDS = ("the", "cart", "total", "test", "returns", "user", "order", "price", "fixture", "function", "value",
          "error", "case", "module", "line", "import", "config", "check", "build", "run")


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


_FILE_WORDS = ("def", "return", "self", "import", "order", "total", "price", "if", "for", "in", "None", "user",
               "cart", "item", "value", "raise", "ValueError", "(", ")", ":", "=", "[", "]", "\"ok\"", "0", "1")


def _source(rng: random.Random, size: int) -> list[str]:
    """The lines of a source file of about `size` characters (code-like words, indented, some quoted)."""
    lines: list[str] = []
    length = 0
    while length < size:
        line = "    " * rng.randint(0, 3) + " ".join(rng.choice(_FILE_WORDS) for _ in range(rng.randint(0, 12)))
        lines.append(line)
        length += len(line) + 1
    return lines


def _read_result(rng: random.Random, path: str, size: int) -> tuple[str, dict[str, Any]]:
    """A Read call's result as Claude Code writes it: the file numbered as `cat -n` prints it (`→` after each
    number) in the tool_result, and the file again in the record's `toolUseResult`."""
    lines = _source(rng, size)
    numbered = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, start=1))
    file = {"filePath": path, "content": "\n".join(lines), "numLines": len(lines), "startLine": 1,
            "totalLines": len(lines)}
    return numbered, {"type": "text", "file": file}


def _bash_result(rng: random.Random, size: int) -> tuple[str, dict[str, Any]]:
    """A Bash call's result: its output in the tool_result and again as `toolUseResult.stdout`."""
    output = "\n".join(_text(rng, rng.randint(20, 120)) for _ in range(max(1, size // 70)))
    return output, {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}


def _grep_result(rng: random.Random, size: int) -> tuple[str, dict[str, Any]]:
    """A Grep call's result: the files it found, listed in the tool_result and in `toolUseResult.filenames`."""
    names = [f"/home/dev/shop/src/{_text(rng, 8).replace(' ', '_')}/mod{k}.py" for k in range(max(1, size // 50))]
    listed = f"Found {len(names)} files\n" + "\n".join(names)
    return listed, {"mode": "files_with_matches", "filenames": names, "numFiles": len(names)}


def generate(path: Path, megabytes: float, seed: int = 24) -> int:
    """Write a transcript of about `megabytes` MB to `path` as Claude Code 2.x writes one; its size in bytes.

    Its records are those of a real session: a reply one block a line with Claude Code's envelope, its usage and
    request id; each result twice, in the tool_result and in `toolUseResult` (a Read's file numbered with `→`,
    a Bash command's output, a Grep's file list), as the tool writes them. About 2 kB a record, as the session
    the issue measured (144 MB, 70,000 records)."""
    return _generate(path, megabytes, seed, as_written=True)


def generate_small(path: Path, megabytes: float, seed: int = 24) -> int:
    """The same session with each result only once and no envelope beyond the links (about 1.7 kB a record:
    more records a megabyte, so more of the time is what is done a record)."""
    return _generate(path, megabytes, seed, as_written=False)


def _generate(path: Path, megabytes: float, seed: int, *, as_written: bool) -> int:
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    parent: str | None = None
    serial = 0
    written = 0
    second = 0
    with path.open("w", encoding="utf-8") as out:

        def record(kind: str, message: dict[str, Any], link: str | None = None, **extra: Any) -> str:
            nonlocal parent, serial, written, second
            serial += 1
            second += 1
            uid = f"{serial:08x}-5b0e-4c47-9a57-0c6f8f0c2d11"
            data = {"parentUuid": parent if link is None else link, "isSidechain": False, "userType": "external",
                    "cwd": "/home/dev/shop", "sessionId": "7d1c8e52-3f0b-4c8e-9a1d-2b6f4e0c9a17",
                    "version": "2.1.332", "gitBranch": "main", "type": kind, "message": message, "uuid": uid,
                    "timestamp": f"2026-12-01T{second // 3600 % 24:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
                                 ".000Z", **extra}
            line = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
            if link is None:
                parent = uid
            return uid

        turn = 0
        while written < target:
            turn += 1
            record("user", {"role": "user", "content": _text(rng, rng.randint(40, 400))})
            message_id = f"msg_{turn:012d}"
            if as_written:
                usage: dict[str, Any] = {
                    "input_tokens": 4, "cache_creation_input_tokens": 300 + turn % 900,
                    "cache_read_input_tokens": 18000 + turn,
                    "cache_creation": {"ephemeral_5m_input_tokens": 300 + turn % 900, "ephemeral_1h_input_tokens": 0},
                    "output_tokens": 300, "service_tier": "standard"}
                envelope = {"requestId": f"req_011CV{turn:019d}"}
            else:
                usage, envelope = {"input_tokens": 4, "cache_read_input_tokens": 18000 + turn, "output_tokens": 300}, {}
            assistant = {"model": "claude-sonnet-4-5-20250929", "id": message_id, "type": "message",
                         "role": "assistant", "stop_reason": "tool_use", "stop_sequence": None, "usage": usage}
            record("assistant", {**assistant, "content": [{"type": "text", "text": _text(rng, 200)}]}, **envelope)
            calls = [(f"toolu_01{turn:010d}{k:04d}", rng.choice(("Read", "Bash", "Grep")))
                     for k in range(rng.choice((1, 1, 2, 3)))]
            uses = []
            paths = {}
            for call, name in calls:
                paths[call] = f"/home/dev/shop/src/mod{rng.randint(1, 90)}.py"
                tool_input = {"file_path": paths[call]} if name == "Read" else \
                    {"command": f"pytest -q tests/test_mod{rng.randint(1, 90)}.py"} if name == "Bash" else \
                    {"pattern": _text(rng, 12), "path": "/home/dev/shop"}
                block = {"type": "tool_use", "id": call, "name": name, "input": tool_input}
                uses.append(record("assistant", {**assistant, "content": [block]}, **envelope))
            if turn % 50 == 0:
                record("user", {"role": "user", "content": "[Request interrupted by user for tool use]"})
                continue  # killed: its calls have no results
            tree = turn % 40 == 0  # each result off its own call's line (Claude Code's parallel results)
            last = parent
            for (call, name), use in zip(calls, uses):
                size = rng.randint(1500, 6000) if not as_written else rng.randint(1000, 4500)
                if not as_written:
                    content, repeated = _text(rng, size), {"type": "text", "file": {"numLines": 80}}
                elif name == "Read":
                    content, repeated = _read_result(rng, paths[call], size)
                elif name == "Bash":
                    content, repeated = _bash_result(rng, size)
                else:
                    content, repeated = _grep_result(rng, size // 4)
                result = {"type": "tool_result", "tool_use_id": call, "content": content}
                uid = record("user", {"role": "user", "content": [result]}, link=use if tree else None,
                             toolUseResult=repeated)
                last = uid
            parent = last
            if turn % 3 == 0:
                out.write(json.dumps({"type": "file-history-snapshot", "messageId": parent,
                                      "snapshot": {"trackedFileBackups": {}}}) + "\n")
    return path.stat().st_size


def _cpu() -> float:
    return time.process_time()


def _quiet(argv: list[str]) -> None:
    from chatmend.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(argv)


class _Collections:
    """CPU time spent in CPython's cyclic collector while active (a `gc.callbacks` hook that only observes)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.active = False
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if not self.active:
            return
        if phase == "start":
            self._start = _cpu()
        else:
            self.seconds += _cpu() - self._start


def timed(path: Path, out: Path, rounds: int) -> dict[str, tuple[float, float]]:
    """Median per-round ratios of check and repair to json.loads of each line, and the median share of each
    command's time spent in the cyclic collector."""
    lines = path.read_text(encoding="utf-8").splitlines()
    ratios: dict[str, list[float]] = {"check": [], "repair": []}
    shares: dict[str, list[float]] = {"check": [], "repair": []}
    collections = _Collections()
    gc.callbacks.append(collections)
    try:
        for _ in range(rounds):
            start = _cpu()
            for line in lines:
                json.loads(line)
            base = _cpu() - start
            for name, argv in (("check", ["check", str(path)]),
                               ("repair", ["repair", str(path), "-o", str(out)])):
                out.unlink(missing_ok=True)  # a new file, as `repair -o NEW` writes: not the freeing of the last
                collections.seconds, collections.active = 0.0, True
                start = _cpu()
                _quiet(argv)
                spent = _cpu() - start
                collections.active = False
                ratios[name].append(spent / base)
                shares[name].append(collections.seconds / spent)
    finally:
        gc.callbacks.remove(collections)
    return {name: (median(ratios[name]), median(shares[name])) for name in ratios}


_PEAK = """
import contextlib, io, sys
from chatmend.cli import main
command = sys.argv[1:]
sys.argv = ["chatmend", *command]  # main() reads them, and tunes its collector as the program does

def high_water():
    # VmHWM: this process's peak resident size in kB (ru_maxrss would carry over a large parent's across exec)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

before = high_water()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    main()
print(before, high_water())
"""


def peak(argv: list[str]) -> int:
    """Peak resident bytes a command added over what its process held once it had imported chatmend."""
    done = subprocess.run([sys.executable, "-c", _PEAK, *argv], check=True, capture_output=True, text=True)
    before, after = map(int, done.stdout.split())
    return (after - before) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=150.0, help="the transcript's size in MB (default 150)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds (default 3)")
    parser.add_argument("--lean", action="store_true",
                        help="each result only once and no envelope beyond the links (more, smaller records)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path, out = Path(folder) / "session.jsonl", Path(folder) / "out.jsonl"
        size = (generate_small if args.lean else generate)(path, args.mb)
        count = sum(1 for _ in path.open(encoding="utf-8"))
        print(f"transcript: {size / 1e6:.1f} MB, {count} records (python {sys.version.split()[0]})")
        for argv in (["check", str(path)], ["repair", str(path), "-o", str(out)]):
            _quiet(argv)  # warm-up: the providers and formats a command imports on first use
        at_defaults = timed(path, out, args.rounds)
        _tune_process()  # from here on this process's collector and recursion limit are the program's
        as_program = timed(path, out, args.rounds)
        for name in ("check", "repair"):
            argv = [name, str(path)] if name == "check" else [name, str(path), "-o", os.devnull]
            grown = peak(argv)
            (ratio, share), (default_ratio, default_share) = as_program[name], at_defaults[name]
            print(f"{name:7} time {ratio:.2f}x json.loads of its lines as the program runs it (target 2.0; "
                  f"{share:.0%} of it in the cyclic collector; at the library's defaults {default_ratio:.2f}x, "
                  f"{default_share:.0%})   peak memory {grown / size:.2f}x the file's size (target 1.0; "
                  f"{grown / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
