"""`chatmend doctor`: every agent's sessions found, checked and fixed where they lie."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from chatmend.cli._output import signals_remove_temporary_files
from chatmend.cli._report import plural
from chatmend.cli._text import OK, PROBLEMS, UsageError, printable, say
from chatmend.cli._timeline import one_line


def run_doctor(args: argparse.Namespace) -> int:
    """`chatmend doctor`: the table (or JSON lines) of every session found; the work is `chatmend.doctor`'s."""
    from chatmend.doctor import Finding, doctor

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers needs a number >= 1")
    bar = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int) -> None:
        if bar:
            say(f"\rchatmend doctor: {done}/{total} checked")

    findings: list[Finding] = []
    with signals_remove_temporary_files():  # a stopping signal during a fix leaves no temporary file
        for finding in doctor(args.paths, fix=args.fix, force=args.force, workers=args.workers, progress=progress):
            if args.json:
                sys.stdout.write(json.dumps(finding.to_json(), ensure_ascii=False) + "\n")
            findings.append(finding)
    if bar:
        say("\r\x1b[K")
    if not args.json:
        _doctor_table(findings, args.fix)
    sys.stdout.flush()
    return PROBLEMS if any(f.status in ("broken", "in use", "unreadable") for f in findings) else OK


def _doctor_table(findings: Sequence[Any], fixing: bool) -> None:
    """The findings as a table, then how to resume what was fixed."""
    import time

    if not findings:
        sys.stdout.write("no sessions found\n")
        return
    rows = [("TOOL", "SESSION", "MODIFIED", "STATUS", "PROBLEMS")]
    for f in findings:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(f.modified)) if f.modified else "-"
        said = f.said or f.problems  # the provider's words where known, else what `check` says
        problem = one_line(said[0], 200) if said else ""
        if len(said) > 1:
            problem += f" (+{len(said) - 1} more)"
        rows.append((f.tool or f.format, one_line(f.session or f.path, 48), when, f.status, problem))
    widths = [max(len(printable(r[k])) for r in rows) for k in range(4)]
    for row in rows:
        cells = [printable(c).ljust(w) for c, w in zip(row, widths)]
        sys.stdout.write("  ".join([*cells, printable(row[4])]).rstrip() + "\n")
    counts = Counter(f.status for f in findings)
    sys.stdout.write("\n" + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + "\n")
    for f in findings:
        if f.status == "fixed":
            resume = f"; resume: {f.resume}" if f.resume else ""  # a body is sent again by its program
            sys.stdout.write(printable(f"fixed {f.path} ({', '.join(f.changes)}; the original is in {f.backup})"
                                       f"{resume}") + "\n")
    broken = counts.get("broken", 0)
    if broken and not fixing:
        sys.stdout.write(f"`chatmend doctor --fix` repairs the {plural(broken, 'broken session', 'broken sessions')}"
                         " (after a backup)\n")
    if counts.get("in use"):
        sys.stdout.write("sessions in use are left alone: quit their tool, or give --force\n")
    if counts.get("empty"):
        sys.stdout.write("empty session files hold nothing to send: skipped\n")
