"""The neutral JSON Lines: `chatmend.jsonl`, read line by line with every error located."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from chatmend import ChatMessage, HistoryError, dumps
from chatmend.formats._io import InputError
from chatmend.formats._session import Session
from chatmend.jsonl import iter_loads

__all__ = ["read", "write"]

NAME = "chatmend"


def read(lines: Iterable[str]) -> Session:
    """A Session from neutral JSON Lines; every message remembers its line."""
    numbers: list[int] = []

    def tracked() -> Iterator[str]:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                numbers.append(number)
            yield line

    messages: list[ChatMessage] = []
    try:
        messages.extend(iter_loads(tracked()))
    except HistoryError as exc:
        raise history_input_error(exc, what="one JSON message a line") from None
    if not messages:
        raise InputError("empty file; expected a chat history (one JSON message a line)")
    where = [f"line {n}" for n in numbers[: len(messages)]]
    return Session(format=NAME, messages=messages, where=where, write=write)


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
