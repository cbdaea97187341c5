"""A fuzz run of the command line over mutated example files (issue #21): no traceback, no lost byte.

    python bench/fuzz_cli.py                         # 10,000 mutated files, a worker a core
    python bench/fuzz_cli.py --count 200 --seed 7    # fewer, another sequence (each file is a function of both)
    python bench/fuzz_cli.py --save crashes/         # also write each failing input there, to replay it

The seeds are the shipped examples (examples/ and examples/sessions/, examples/requests/) and a small body of
every registered provider's format, written by its own `to_request`. Each mutated file is one to three
mutations of a seed: bytes flipped, cut short, lines duplicated, dropped or swapped, CRLF line ends, a BOM,
blank lines, a NUL or a control byte; or, in its JSON, a field deleted, a value of another type, a huge or
non-finite number, deep nesting, control characters or an empty string, an id copied from another, an item
duplicated or dropped. Every command runs on each: repair (stdout), repair -o, repair --in-place on a copy,
check, show, convert to the neutral form and to every provider, trim. Each run must:

- exit 0, 1 or 2 (3 is chatmend's internal error, anything else a crash), in under a minute;
- print no traceback and no `internal error` on stderr;
- for `-o` and `--in-place`, leave no half-written file: the target is the original bytes or a complete output
  that chatmend reads back in the format written, no temporary file is left, and the backup holds the
  original bytes (there is one exactly when the file was rewritten);
- for `convert` (exit 0), print one JSON document (or neutral JSON Lines) that chatmend reads back.

The commands run in-process (`chatmend.cli.main(argv)`) in a worker process a core, each file in its own
temporary directory; a worker that dies (a segfault, the memory killer) is reported with the file it was on.
Exit 0 when nothing failed, 1 otherwise; the summary lists each kind of failure with its first case.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60
"""Seconds one command may take before it counts as hung."""


# --- the seeds -------------------------------------------------------------------------------------------


def seeds() -> list[tuple[str, bytes]]:
    """(name, bytes) of every shipped example and of a small body in every provider's format."""
    from chatmend import providers
    from chatmend.formats import read

    found: list[tuple[str, bytes]] = []
    for folder in ("examples", "examples/sessions", "examples/requests"):
        for path in sorted((ROOT / folder).iterdir()):
            if path.is_file():
                found.append((f"{folder}/{path.name}", path.read_bytes()))
    history = read(str(ROOT / "examples" / "ctrl_c_during_tools.jsonl")).messages
    for name in providers.names():
        provider = providers.get(name)
        with contextlib.suppress(Exception):  # a provider that cannot carry this history has other seeds
            body = provider.to_request(history, model="m")
            found.append((f"generated/{name}.json", json.dumps(body, indent=2, ensure_ascii=False).encode()))
            found.append((f"generated/{name}.compact.json", json.dumps(body).encode() + b"\n"))
    return found


# --- mutations -------------------------------------------------------------------------------------------

_RAW = {
    "@@HUGE@@": "9" * 5000, "@@BIG@@": "123456789012345678901234567890", "@@NAN@@": "NaN", "@@INF@@": "-Infinity",
    "@@EXP@@": "1e999", "@@NEG0@@": "-0.0", "@@DEEP@@": "[" * 3000 + "]" * 3000, "@@DEEPARGS@@": '{"a":' * 700 + "1"
    + "}" * 700,
}
"""Sentinels for JSON text `json.dumps` cannot write (numbers too long for int, NaN, nesting too deep)."""
_CONTROL = ["\x1b]0;owned\x07", "\x1b[2J", "\r", "\x00", "\u2028", "\x85", "\ud800", "\t\n", "\u202e", "\ufeff"]


def _nodes(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in a JSON tree, depth-first, iteratively."""
    found: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            found.append((node, key))
            if isinstance(child, (dict, list)):
                stack.append(child)
    return found


def _strings(value: Any) -> list[str]:
    return [c[k] for c, k in _nodes(value) if isinstance(c[k], str)]


def _other_value(rng: random.Random, old: Any, tree: Any) -> Any:
    """A value of another JSON type (or one of the sentinels)."""
    choices: list[Any] = [None, True, 0, -1, 3.5, "", "x", [], {}, [old], {"type": old}, "@@HUGE@@", "@@BIG@@",
                          "@@NAN@@", "@@INF@@", "@@EXP@@", "@@NEG0@@", "@@DEEP@@", "@@DEEPARGS@@"]
    strings = _strings(tree)
    if strings:
        choices.append(rng.choice(strings))  # a value from elsewhere: an id used twice, a role as content
    return rng.choice(choices)


def _mutate_tree(rng: random.Random, tree: Any) -> str | None:
    """One change in a JSON tree, in place; the name of the change, or None when the tree has no place."""
    nodes = _nodes(tree)
    if not nodes:
        return None
    container, key = rng.choice(nodes)
    kind = rng.choice(["delete", "type", "type", "number", "deep", "control", "empty", "same-as", "dup", "long"])
    old = container[key]
    if kind == "delete":
        del container[key]
    elif kind == "type":
        container[key] = _other_value(rng, old, tree)
    elif kind == "number":
        container[key] = rng.choice(["@@HUGE@@", "@@BIG@@", "@@NAN@@", "@@INF@@", "@@EXP@@", 2**63, -(2**64), 1e308])
    elif kind == "deep":
        container[key] = rng.choice(["@@DEEP@@", "@@DEEPARGS@@"])
    elif kind == "control":
        text = old if isinstance(old, str) else str(old)
        cut = rng.randrange(len(text) + 1)
        container[key] = text[:cut] + rng.choice(_CONTROL) + text[cut:]
    elif kind == "empty":
        container[key] = "" if not isinstance(old, (list, dict)) else type(old)()
    elif kind == "same-as":
        strings = _strings(tree)
        container[key] = rng.choice(strings) if strings else ""
    elif kind == "dup" and isinstance(old, list) and old:
        old.insert(rng.randrange(len(old) + 1), rng.choice(old))
    elif kind == "dup" and isinstance(container, list):
        container.insert(key, old)
    elif kind == "long":
        container[key] = "L" * rng.choice([70, 1000, 70000])
    else:
        del container[key]
        kind = "delete"
    return kind


def _dumps(value: Any, indent: int | None, ascii: bool) -> str:
    """JSON text with the sentinels replaced by what they stand for (`ascii`: non-ASCII escaped, so both
    spellings of a control character are tried)."""
    text = json.dumps(value, indent=indent, ensure_ascii=ascii)
    for sentinel, raw in _RAW.items():
        text = text.replace(f'"{sentinel}"', raw)
    return text


def _mutate_json(rng: random.Random, data: bytes) -> tuple[bytes, str] | None:
    """A change inside the file's JSON (its document, or one line of its JSON Lines), or None when it has none."""
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        doc = None
    if doc is not None:
        kind = _mutate_tree(rng, doc)
        if kind is None:
            return None
        ascii = rng.random() < 0.3
        return _dumps(doc, 2 if "\n" in text.strip() else None, ascii).encode("utf-8", "surrogatepass"), f"json:{kind}"
    lines = text.split("\n")
    candidates = [i for i, line in enumerate(lines) if line.strip().startswith("{")]
    rng.shuffle(candidates)
    for i in candidates[:5]:
        try:
            record = json.loads(lines[i])
        except (ValueError, RecursionError):
            continue
        kind = _mutate_tree(rng, record)
        if kind is None:
            continue
        lines[i] = _dumps(record, None, rng.random() < 0.3)
        return "\n".join(lines).encode("utf-8", "surrogatepass"), f"line:{kind}"
    return None


def _mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A change to the bytes themselves."""
    kind = rng.choice(["flip", "truncate", "dup-line", "drop-line", "swap-lines", "crlf", "bom", "blank", "nul",
                       "control-byte"])
    if not data:
        return b"{", "flip"
    lines = data.split(b"\n")
    if kind == "flip":
        out = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out), kind
    if kind == "truncate":
        return data[: rng.randrange(len(data))], kind
    if kind == "dup-line" and lines:
        i = rng.randrange(len(lines))
        lines[i:i] = [lines[i]] * rng.randint(1, 3)
    elif kind == "drop-line" and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif kind == "swap-lines" and len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "crlf":
        return data.replace(b"\n", b"\r\n"), kind
    elif kind == "bom":
        return b"\xef\xbb\xbf" + data, kind
    elif kind == "blank":
        i = rng.randrange(len(lines) + 1)
        lines[i:i] = [rng.choice([b"", b"  ", b"\r", b"\t"])] * rng.randint(1, 3)
    elif kind in ("nul", "control-byte"):
        at = rng.randrange(len(data) + 1)
        byte = b"\x00" if kind == "nul" else bytes([rng.choice([1, 7, 8, 0x1B, 0x7F, 0x0B, 0x0C])])
        return data[:at] + byte + data[at:], kind
    return b"\n".join(lines), kind


def mutated(seed: int, index: int, sources: list[tuple[str, bytes]]) -> tuple[str, list[str], bytes]:
    """File `index` of run `seed`: (its seed's name, the mutations, its bytes), always the same for both."""
    rng = random.Random(f"{seed}:{index}")
    name, data = sources[rng.randrange(len(sources))]
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        change = _mutate_json(rng, data) if rng.random() < 0.65 else None
        data, kind = change if change is not None else _mutate_bytes(rng, data)
        done.append(kind)
    return name, done, data


# --- running the commands --------------------------------------------------------------------------------


class _Hung(BaseException):
    """A command ran past TIMEOUT (a BaseException: main's last-resort handler lets it by)."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _Hung()


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """`chatmend.cli.main(argv)` in this process: (exit code, stdout, stderr)."""
    from chatmend.cli import main

    out, err = io.StringIO(), io.StringIO()
    signal.alarm(TIMEOUT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # a stopping signal would end the process; none is sent here
                code = exc.code if isinstance(exc.code, int) else 99
    except _Hung:
        return -1, out.getvalue(), err.getvalue() + f"\n(hung: more than {TIMEOUT} s)"
    finally:
        signal.alarm(0)
    return code, out.getvalue(), err.getvalue()


def commands(targets: list[str]) -> list[tuple[str, list[str]]]:
    """(label, argv with {IN}, {OUT} and {COPY} to fill) of every command run on each file."""
    return [
        ("repair", ["repair", "{IN}"]),
        ("repair -o", ["repair", "{IN}", "-o", "{OUT}"]),
        ("repair --in-place", ["repair", "--in-place", "{COPY}"]),
        ("check", ["check", "{IN}"]),
        ("show", ["show", "{IN}", "--color", "always"]),
        *((f"convert --to {t}", ["convert", "{IN}", "--to", t, "--model", "m"]) for t in targets),
        ("trim", ["trim", "{IN}", "--max-messages", "3"]),
    ]


def _readable(path: str, fmt: str) -> str | None:
    """None when chatmend reads `path` as `fmt`; else why not."""
    from chatmend import ChatmendError
    from chatmend.formats import read

    try:
        read(path, fmt)
    except ChatmendError as exc:
        return f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        return f"crash reading it back: {type(exc).__name__}: {exc}"
    return None


def _format_of(path: str) -> str | None:
    from chatmend import ChatmendError
    from chatmend.formats import read

    try:
        return read(path).format
    except ChatmendError:
        return None
    except Exception:
        return None  # the commands' own runs report it


def check_file(data: bytes, targets: list[str]) -> tuple[list[tuple[str, str]], Counter[int]]:
    """Run every command on `data`; the failures (kind, detail) and the count of each exit code."""
    failures: list[tuple[str, str]] = []
    codes: Counter[int] = Counter()
    with tempfile.TemporaryDirectory(prefix="chatmend-fuzz-") as tmp:
        source = os.path.join(tmp, "session")
        Path(source).write_bytes(data)
        fmt = _format_of(source)
        for label, template in commands(targets):
            out, copy = os.path.join(tmp, "out"), os.path.join(tmp, "copy")
            if "{COPY}" in template:
                shutil.copyfile(source, copy)
            argv = [a.replace("{IN}", source).replace("{OUT}", out).replace("{COPY}", copy) for a in template]
            code, stdout, stderr = run_cli(argv)
            codes[code] += 1

            def fail(kind: str, detail: str, label: str = label) -> None:
                failures.append((f"{label}: {kind}", detail[-2000:]))

            if code == 3:
                fail("internal error", stderr)
            elif code not in (0, 1, 2):
                fail(f"exit {code}", stderr)
            elif "Traceback" in stderr or "internal error" in stderr:
                fail("traceback", stderr)
            names = set(os.listdir(tmp)) - {"session"}
            if label == "repair -o":
                expected = {"out"} if code == 0 else set()
                if names != expected:
                    fail("files left", f"{sorted(names)} (exit {code}): {stderr}")
                elif code == 0 and fmt is not None:
                    why = _readable(out, fmt)
                    if why:
                        fail("output not readable", why)
            elif label == "repair --in-place":
                backups = sorted(n for n in names if n.startswith("copy.bak"))
                others = names - {"copy", *backups}
                now = Path(copy).read_bytes()
                if others:
                    fail("files left", f"{sorted(others)} (exit {code})")
                if code != 0 and (now != data or backups):
                    fail("changed on failure", f"exit {code}, backups {backups}: {stderr}")
                if code == 0 and backups:
                    if Path(tmp, backups[0]).read_bytes() != data:
                        fail("backup differs", backups[0])
                    why = _readable(copy, fmt) if fmt is not None else None
                    if why:
                        fail("output not readable", why)
                    if len(backups) != 1:
                        fail("backups", str(backups))
                if code == 0 and not backups and now != data:
                    fail("rewritten without a backup", stderr)
            elif names:
                fail("files left", f"{sorted(names)} (exit {code})")
            if label.startswith("convert") and code == 0:
                why = _reads_back(stdout, label.rsplit(" ", 1)[1], tmp)
                if why:
                    fail("output not readable", why)
            for name in set(os.listdir(tmp)) - {"session"}:
                os.unlink(os.path.join(tmp, name))
    return failures, codes


def _reads_back(text: str, target: str, tmp: str) -> str | None:
    """None when the text `convert --to target` printed is JSON chatmend reads as `target`."""
    path = os.path.join(tmp, "converted")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    try:
        return _readable(path, target)
    finally:
        os.unlink(path)


# --- workers and the summary -----------------------------------------------------------------------------


def _worker(seed: int, indices: range, queue: Any, targets: list[str]) -> None:
    signal.signal(signal.SIGALRM, _on_alarm)
    sources = seeds()
    for index in indices:
        queue.put(("start", index))
        name, changes, data = mutated(seed, index, sources)
        started = time.monotonic()
        failures, codes = check_file(data, targets)
        queue.put(("done", index, name, changes, failures, dict(codes), time.monotonic() - started))
    queue.put(("end",))


def run(count: int, seed: int, workers: int, save: str | None = None, out: Any = sys.stdout) -> int:
    """Fuzz `count` files of run `seed` on `workers` processes; print the summary; the number of failures."""
    from chatmend import providers

    targets = ["chatmend", *providers.names()]
    per_file = len(commands(targets))
    started = time.monotonic()
    context: Any = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    queue = context.Queue()
    procs = [context.Process(target=_worker, args=(seed, range(k, count, workers), queue, targets), daemon=True)
             for k in range(workers)]
    for proc in procs:
        proc.start()
    running = {k: None for k in range(workers)}  # the file each worker is on
    owner = {index: index % workers for index in range(count)}
    failures: list[tuple[int, str, list[str], str, str]] = []
    codes: Counter[int] = Counter()
    slowest = (0.0, -1)
    files = ended = 0
    sources = seeds()
    while ended < workers:
        try:
            message = queue.get(timeout=5)
        except Exception:
            for k, proc in enumerate(procs):
                if not proc.is_alive() and running.get(k, "gone") != "gone" and proc.exitcode != 0:
                    index = running[k]
                    if index is not None:
                        name, changes, _ = mutated(seed, index, sources)
                        failures.append((index, name, changes, f"worker died (exit {proc.exitcode})", ""))
                    running[k] = "gone"  # type: ignore[assignment]
                    ended += 1
            continue
        if message[0] == "start":
            running[owner[message[1]]] = message[1]
        elif message[0] == "done":
            _, index, name, changes, found, counted, took = message
            files += 1
            if files % 1000 == 0:
                print(f"fuzz_cli: {files} files, {len(failures)} failures so far", file=sys.stderr, flush=True)
            running[owner[index]] = None
            codes.update({int(k): v for k, v in counted.items()})
            slowest = max(slowest, (took, index))
            failures.extend((index, name, changes, kind, detail) for kind, detail in found)
        else:
            ended += 1
    for proc in procs:
        proc.join(timeout=5)
    elapsed = time.monotonic() - started
    runs = sum(codes.values())
    print(f"fuzz_cli: {files} mutated files (seed {seed}), {runs} runs ({per_file} commands each) in "
          f"{elapsed:.0f} s on {workers} workers", file=out)
    print("exit codes: " + ", ".join(f"{code}: {n}" for code, n in sorted(codes.items())), file=out)
    print(f"slowest file: {slowest[0]:.1f} s (file {slowest[1]})", file=out)
    if not failures:
        print("no failures: no traceback, no exit outside 0/1/2, no file lost or half-written", file=out)
        return 0
    groups: dict[tuple[str, str], list[tuple[int, str, list[str], str, str]]] = {}
    for failure in failures:  # by what failed and its first line, whatever the command
        kind, detail = failure[3].split(": ", 1)[-1], failure[4].strip()
        groups.setdefault((kind, detail.splitlines()[0][:200] if detail else ""), []).append(failure)
    print(f"{len(failures)} failures in {len({f[0] for f in failures})} files, {len(groups)} kinds:", file=out)
    for (kind, _), group in sorted(groups.items(), key=lambda item: -len(item[1])):
        index, name, changes, _, detail = group[0]
        labels = sorted({f[3].rsplit(": ", 1)[0] for f in group})
        print(f"  {len(group)} x {kind} ({', '.join(labels)}); first: file {index} ({name}, {'+'.join(changes)}):"
              f"\n      {detail.strip()[-600:]}", file=out)
    if save:
        os.makedirs(save, exist_ok=True)
        for index in sorted({f[0] for f in failures}):
            _, _, data = mutated(seed, index, sources)
            Path(save, f"fuzz-{seed}-{index}").write_bytes(data)
        print(f"failing inputs written to {save}/fuzz-{seed}-N", file=out)
    return len(failures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=10_000, help="how many mutated files (default 10,000)")
    parser.add_argument("--seed", type=int, default=0, help="which sequence of mutations (default 0)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: a core each)")
    parser.add_argument("--save", metavar="DIR", help="write each failing input to DIR")
    args = parser.parse_args(argv)
    return 1 if run(args.count, args.seed, max(args.workers, 1), args.save) else 0


if __name__ == "__main__":
    raise SystemExit(main())

