"""The `chatmend` command: repair, convert, check and show saved sessions.

Exit codes: 0 ok, 1 problems found (`check`), 2 bad input or usage. Bad input names the file, the line
(and column) and what was expected, and nothing is written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from chatmend import RepairResult, __version__, repair_history
from chatmend.formats import InputError, Session, atomic_write, read

__all__ = ["main"]

OK, PROBLEMS, BAD_INPUT = 0, 1, 2


class UsageError(Exception):
    """A command line that asks for something impossible (exit 2)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return exc.code if isinstance(exc.code, int) else BAD_INPUT
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
    except InputError as exc:
        # `FILE:LINE:COL: what is wrong`, the shape editors and CI logs link to.
        sys.stderr.write(exc.located(_display(args.file)) + "\n")
        return BAD_INPUT
    except UsageError as exc:
        _error(str(exc))
        return BAD_INPUT
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): not an error of ours.
        sys.stderr.close()
        return OK
    except KeyboardInterrupt:
        _error("interrupted")
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chatmend",
        description="Make a saved tool-calling chat session valid to send again.",
    )
    parser.add_argument("--version", action="version", version=f"chatmend {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    repair = sub.add_parser("repair", help="repair a session: every call answered right after it, ids unique",
                            description="Repair a saved session and report every change.")
    repair.add_argument("file", metavar="FILE", help="the session file, or - for stdin")
    repair.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    repair.add_argument("--read-only", metavar="NAME,NAME", action="append", default=[],
                        help="tools that only read: an interrupted call to one is safe to run again")
    repair.set_defaults(run=_repair)
    return parser


def _repair(args: argparse.Namespace) -> int:
    """`chatmend repair`: the repaired history in the same format, a report of every change on stderr."""
    session = read(args.file)
    result = repair_history(session.messages, is_read_only=_read_only(args.read_only))
    _emit(session.write(result.messages), args.output)
    _print_report(_report(session, result, args.file), sys.stderr)
    return OK


def _read_only(values: Iterable[str]) -> Callable[[str], bool] | None:
    """The `--read-only` names as a predicate (None when no name was given)."""
    names = frozenset(name.strip() for value in values for name in value.split(",") if name.strip())
    if not names:
        return None
    return names.__contains__


def _emit(chunks: Iterable[str], output: str | None) -> None:
    """Write to stdout, or to a file atomically (nothing is left behind when it fails)."""
    if output is None or output == "-":
        out = sys.stdout
        for chunk in chunks:
            out.write(chunk)
        out.flush()
        return
    try:
        atomic_write(output, chunks)
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror or exc}") from None


def _report(session: Session, result: RepairResult, file: str) -> dict[str, Any]:
    """Every change repair made, located in the input (a plain dict, also the `--report json` shape)."""
    where = session.where

    def at(index: int) -> str:
        return where[index] if index < len(where) else f"messages[{index}]"

    messages = session.messages
    return {
        "file": _display(file),
        "format": session.format,
        "changed": result.changed,
        "messages": len(result.messages),
        "moved": [{"at": at(i), "tool_call_id": messages[i].tool_call_id} for i in result.moved],
        "interrupted": [{"id": c.id, "name": c.name} for c in result.interrupted],
        "notes": [{"at": at(i), "tool_call_id": messages[i].tool_call_id} for i in result.notes],
        "renamed": [{"at": at(r.message_index), "old": r.old, "new": r.new} for r in result.renamed],
        "dropped": [{"at": at(i)} for i in result.dropped],
    }


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def report_lines(report: dict[str, Any]) -> list[str]:
    """The human summary of a repair report."""
    if not report["changed"]:
        return [f"{report['file']}: nothing to repair ({_plural(report['messages'], 'message', 'messages')})"]
    lines = [f"{report['file']}: repaired ({report['format']})"]
    moved, interrupted, notes = report["moved"], report["interrupted"], report["notes"]
    renamed, dropped = report["renamed"], report["dropped"]
    if moved:
        lines.append(f"  moved {_plural(len(moved), 'result', 'results')} to just after the call: "
                     + ", ".join(f"{m['tool_call_id']} ({m['at']})" for m in moved))
    if interrupted:
        lines.append(f"  answered {_plural(len(interrupted), 'call', 'calls')} as interrupted: "
                     + ", ".join(f"{c['id']} ({c['name']})" for c in interrupted))
    if notes:
        lines.append(f"  turned {_plural(len(notes), 'orphan result', 'orphan results')} into "
                     + ("a user note: " if len(notes) == 1 else "user notes: ")
                     + ", ".join(f"{n['tool_call_id'] or '(empty id)'} ({n['at']})" for n in notes))
    if renamed:
        lines.append(f"  renamed {_plural(len(renamed), 'id', 'ids')}: "
                     + ", ".join(f"{r['old'] or '(empty)'} -> {r['new']} ({r['at']})" for r in renamed))
    if dropped:
        lines.append(f"  dropped {_plural(len(dropped), 'placeholder', 'placeholders')}: "
                     + ", ".join(d["at"] for d in dropped))
    return lines


def _print_report(report: dict[str, Any], out: TextIO) -> None:
    for line in report_lines(report):
        out.write(line + "\n")
    out.flush()


def _display(file: str) -> str:
    return "<stdin>" if file == "-" else file


def _error(text: str) -> None:
    sys.stderr.write(f"chatmend: error: {text}\n")
    sys.stderr.flush()
