"""`chatmend show`'s timeline: each message on a line, marked with what repair would change."""

from __future__ import annotations

import json
from typing import Any

from chatmend import RepairResult, repair_history
from chatmend.cli._report import plural, repair_report, report_lines
from chatmend.cli._text import printable
from chatmend.files.problems import as_sent
from chatmend.formats import Session
from chatmend.repair import Origin

__all__ = ["one_line", "timeline"]


_COLORS = {
    "system": "35", "user": "32", "assistant": "36", "tool": "34", "mark": "33", "bad": "31", "dim": "2",
}


def _paint(text: str, key: str, color: bool) -> str:
    """Text (its control characters escaped) in an ANSI color, or as it is when colors are off."""
    text = printable(text)
    return f"\x1b[{_COLORS[key]}m{text}\x1b[0m" if color else text


def one_line(text: str, width: int) -> str:
    """Text on one line, cut to `width` with an ellipsis."""
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: max(width - 1, 1)] + "…"


def _summary(content: str | tuple[Any, ...]) -> str:
    """A content as short text: images and thinking as brackets."""
    if isinstance(content, str):
        return content
    bits = []
    for part in content:
        kind = getattr(part, "type", "")
        if kind == "text":
            bits.append(part.text)
        elif kind == "image":
            bits.append(f"[image {part.media_type or part.url}]")
        elif kind == "thinking":
            bits.append("[thinking]" if part.redacted or not part.text else f"[thinking: {part.text}]")
    return " ".join(bits)


def _answers(result: RepairResult) -> dict[tuple[int, int], Origin]:
    """For each call, by its (message index, call index) in the input, the origin of the result repair gives it:
    an input message that answers it, or a synthetic one (in the output, each call's result follows it)."""
    origins = result.origins()
    answers: dict[tuple[int, int], Origin] = {}
    for k, (message, origin) in enumerate(zip(result.messages, origins)):
        for ci in range(len(message.tool_calls)):
            answers[(origin.message_index, ci)] = origins[k + 1 + ci]
    return answers


def timeline(session: Session, name: str, *, color: bool, width: int) -> list[str]:
    """The lines of `chatmend show`."""
    messages = session.messages
    neutral = repair_history(messages)
    answers = _answers(neutral)  # each call's result, found in the neutral repair's call order
    result = as_sent(session, neutral)  # what repair changes where the session lives
    renamed = {(r.message_index, r.call_index): r.new for r in result.renamed}
    moved, notes, dropped = set(result.moved), set(result.notes), set(result.dropped)
    label_width = max((len(w) for w in session.where), default=4)
    out = [_paint(f"{name} ({session.format}, {plural(len(messages), 'message', 'messages')})",
                  "dim", color)]
    for i, message in enumerate(messages):
        where = session.where[i] if i < len(session.where) else f"message {i}"
        head = f"{where:<{label_width}}  {message.role:<9}  "
        body = _summary(message.content)
        if message.role == "tool":
            name = f"{message.tool_name} " if message.tool_name else ""
            body = f"{name}[{message.tool_call_id}]{' error' if message.is_error else ''}: {body}"
        out.append(_paint(head, message.role, color) + one_line(body, max(width - len(head), 20)))
        indent = " " * (label_width + 2)
        if i in dropped:
            out.append(indent + _paint("^ placeholder: repair drops it", "mark", color))
        if i in moved:
            out.append(indent + _paint("^ not right after its call: repair moves it there", "mark", color))
        if i in notes:
            note = "^ no call in its span: repair turns it into a user note"
            out.append(indent + _paint(note, "mark", color))
        for ci, call in enumerate(message.tool_calls):
            args = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments,
                                                                                     ensure_ascii=False)
            text = f"-> {call.name} [{call.id or '(empty id)'}] {args}"
            out.append(indent + one_line(text, max(width - len(indent), 20)))
            if (i, ci) in renamed:
                out.append(indent + "   " + _paint(f"id used before: repair renames it {renamed[(i, ci)]}",
                                                   "mark", color))
            answer = answers[(i, ci)]
            if answer.kind == "input":
                index = answer.message_index
                at = session.where[index] if index < len(session.where) else f"message {index}"
                out.append(indent + "   " + _paint(f"<- result at {at}", "dim", color))
            else:
                missing = "no result: repair answers it as interrupted"
                out.append(indent + "   " + _paint(missing, "bad", color))
    lines = report_lines(repair_report(session, result, name))
    out.append("")
    changed = result.changed or bool(session.problems)
    out.append(_paint("repair would change nothing" if not changed else "repair would change:",
                      "dim" if not changed else "mark", color))
    if result.changed:
        out.extend(lines[1:])
    out.extend(f"  {printable(problem)}" for problem in session.problems)
    return out
