"""The neutral JSON Lines: `chatmend.jsonl`, read line by line with every error located.

A repaired file is written back line by line: a message repair leaves as it was keeps its line byte for byte
(its spacing and key order, its line end, CRLF too, and the blank lines after it); only the messages repair
changes or makes are written canonically, ending as the file's lines do.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from chatmend import ChatMessage, HistoryError, RepairResult, dumps, repair_history
from chatmend.files.io import InputError
from chatmend.files.session import Session
from chatmend.jsonl import dump_line, iter_loads
from chatmend.repair import IsReadOnly

__all__ = ["read", "write"]

NAME = "chatmend"


def read(lines: Iterable[str]) -> Session:
    """A Session from neutral JSON Lines; every message remembers its line."""
    numbers: list[int] = []
    raw: list[str] = []  # each message's line as read, with its line end
    after: list[str] = []  # the blank lines after it
    before: list[str] = []  # the blank lines before the first

    def tracked() -> Iterator[str]:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                numbers.append(number)
                raw.append(line)
                after.append("")
            elif raw:
                after[-1] += line
            else:
                before.append(line)
            yield line

    messages: list[ChatMessage] = []
    try:
        messages.extend(iter_loads(tracked()))
    except HistoryError as exc:
        raise history_input_error(exc, what="one JSON message a line") from None
    if not messages:
        raise InputError("empty file; expected a chat history (one JSON message a line)")
    where = [f"line {n}" for n in numbers[: len(messages)]]

    def repair(is_read_only: IsReadOnly | None) -> tuple[RepairResult, Iterator[str]]:
        result = repair_history(messages, is_read_only=is_read_only)
        return result, _kept_lines(result, messages, raw, after, "".join(before))

    return Session(format=NAME, messages=messages, where=where, write=write, repair_and_write=repair)


def _kept_lines(result: RepairResult, messages: Sequence[ChatMessage], raw: Sequence[str], after: Sequence[str],
                before: str) -> Iterator[str]:
    """The repaired history's lines: a message repair kept (the input's own object) as its line was read, with
    the blank lines after it; a changed or new one canonically, ending as the first line does."""
    first = raw[0]
    newline = "\r\n" if first.endswith("\r\n") else "\n"
    yield before
    last = len(result.messages) - 1
    for n, (message, origin) in enumerate(zip(result.messages, result.origins())):
        i = origin.message_index
        if origin.kind == "input" and message is messages[i]:
            line = raw[i]
            if n < last and not line.endswith("\n"):
                line += newline  # the file's last line had no line end, and now a line follows it
            yield line + after[i]
        else:
            yield dump_line(message) + newline


def history_input_error(exc: HistoryError, *, what: str) -> InputError:
    """A HistoryError as an InputError: line and column in the location, message and field in the text."""
    if exc.column is not None:
        return InputError(f"{exc.reason}; expected {what}", line=exc.line, column=exc.column)
    parts = []
    if exc.index is not None:
        parts.append(f"message {exc.index}")
    if exc.field:
        parts.append(f"field {exc.field!r}")
    prefix = f"{', '.join(parts)}: " if parts else ""
    return InputError(prefix + exc.reason, line=exc.line)


def write(messages: Sequence[ChatMessage]) -> Iterator[str]:
    """Canonical JSON Lines, in chunks of a thousand messages."""
    for start in range(0, len(messages), 1000):
        yield dumps(messages[start : start + 1000])
