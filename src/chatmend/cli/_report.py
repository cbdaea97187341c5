"""The repair report: every change located in the input, as the `--report json` dict and as text lines."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from chatmend import RepairResult
from chatmend.cli._text import display, printable
from chatmend.files.session import RepairSummary
from chatmend.formats import Session

__all__ = ["listed", "plural", "print_report", "repair_report", "report_lines", "some", "summary_report"]


def repair_report(session: Session, result: RepairResult, file: str) -> dict[str, Any]:
    """Every change repair made, located in the input (a plain dict, also the `--report json` shape)."""
    summary = RepairSummary.of(session.messages, session.where, result)
    return summary_report(summary, file, session.format, fixes=session.fixes, warnings=session.warnings)


def summary_report(summary: RepairSummary, file: str, format: str, *, fixes: Sequence[str] = (),
                   warnings: Sequence[str] = ()) -> dict[str, Any]:
    """`repair_report` of a repair summed up part by part."""
    return {
        "file": display(file),
        "format": format,
        "changed": summary.changed,
        "messages": summary.messages,
        "moved": [{"at": at, "tool_call_id": call_id} for at, call_id in summary.moved],
        "interrupted": [{"id": call_id, "name": name} for call_id, name in summary.interrupted],
        "notes": [{"at": at, "tool_call_id": call_id} for at, call_id in summary.notes],
        "renamed": [{"at": at, "old": old, "new": new} for at, old, new in summary.renamed],
        "dropped": [{"at": at} for at in summary.dropped],
        **({"store": list(fixes)} if fixes else {}),
        **({"warnings": list(warnings)} if warnings else {}),
    } | ({"changed": True} if fixes else {})


def plural(count: int, one: str, many: str) -> str:
    """`1 call`, `2 calls`."""
    return f"{count} {one if count == 1 else many}"


_SHOWN = 8
"""How many items of one kind the text report names (`--report json` lists them all)."""


def some(items: Iterable[str]) -> str:
    """The first few items, and how many more there are."""
    names = list(items)
    shown = ", ".join(names[:_SHOWN])
    return shown if len(names) <= _SHOWN else f"{shown} and {len(names) - _SHOWN} more"


def report_lines(report: dict[str, Any]) -> list[str]:
    """The human summary of a repair report, control characters escaped."""
    return [printable(line) for line in _report_lines(report)]


def _report_lines(report: dict[str, Any]) -> list[str]:
    warnings = [f"  warning: {w}" for w in report.get("warnings", [])]  # what the reader kept unread
    if not report["changed"]:
        return [f"{report['file']}: nothing to repair ({plural(report['messages'], 'message', 'messages')})",
                *warnings]
    lines = [f"{report['file']}: repaired ({report['format']})"]
    notes = report["notes"]
    lines += listed(report["moved"], "moved", ("result", "results"), " to just after the call",
                     lambda m: f"{m['tool_call_id']} ({m['at']})")
    lines += listed(report["interrupted"], "answered", ("call", "calls"), " as interrupted",
                     lambda c: f"{c['id']} ({c['name']})")
    lines += listed(notes, "turned", ("orphan result", "orphan results"),
                     " into a user note" if len(notes) == 1 else " into user notes",
                     lambda n: f"{n['tool_call_id'] or '(empty id)'} ({n['at']})")
    lines += listed(report["renamed"], "renamed", ("id", "ids"), "",
                     lambda r: f"{r['old'] or '(empty)'} -> {r['new']} ({r['at']})")
    lines += listed(report["dropped"], "dropped", ("placeholder", "placeholders"), "", lambda d: d["at"])
    lines += listed(report.get("rewritten") or [], "wrote", ("item", "items"), " anew (every other one as it was)",
                     str)
    lines += listed(report.get("unsupported") or [], "left out", ("part", "parts"), " the target cannot carry",
                     lambda u: f"{u['provider']}'s {u['type']!r} ({u['at']})")
    lines.extend(f"  {fix}" for fix in report.get("store", []))  # what the session store's writer fixed
    lines += listed(report.get("rejected") or [], "fixed", ("problem", "problems"),
                     f" {report['format']} would reject", lambda p: f"{p['code']} at {p['path']}")
    lines.extend(warnings)
    if report.get("backup"):
        lines.append(f"  wrote {report['written']} (the original is in {report['backup']})")
    return lines


def listed(items: Sequence[Any], done: str, kind: tuple[str, str], then: str, each: Callable[[Any], str]) -> list[str]:
    """The line of one kind of change (`  moved 2 results to just after the call: A (line 3), ...`), or none."""
    if not items:
        return []
    return [f"  {done} {plural(len(items), *kind)}{then}: " + some(each(item) for item in items)]


def print_report(report: dict[str, Any], style: str, out: TextIO) -> None:
    """The report as text lines or one JSON object."""
    if style == "json":
        out.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        for line in report_lines(report):
            out.write(line + "\n")
    out.flush()
