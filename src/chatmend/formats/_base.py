"""The Session every reader returns, the format registry, and detection from content."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from chatmend import ChatMessage
from chatmend.formats import neutral
from chatmend.formats._io import InputError, Progress, decoded_lines, open_input

__all__ = ["FORMATS", "Session", "detect", "read"]

Writer = Callable[[Sequence[ChatMessage]], Iterator[str]]


@dataclass
class Session:
    """A history read from a file, and how to write one back in the same format."""

    format: str
    """The format's name, as `--from` spells it."""
    messages: list[ChatMessage]
    """The neutral history."""
    where: list[str]
    """For each message, where it was read from (`line 4`, `messages[3]`), for reports."""
    write: Writer
    """The text of a history in this format, in chunks (keeps what the reader did not use)."""
    provider: str | None = None
    """The provider whose rules `check` applies with no `--provider` (None: the neutral rules)."""


FORMATS: dict[str, str] = {
    "chatmend": "the neutral JSON Lines, one message a line",
}
"""Every format `--from` accepts, with a one-line description."""


def detect(lines: Sequence[str]) -> str:
    """The format of a file from its first lines; an InputError when unsure."""
    del lines
    return "chatmend"


def read(path: str, fmt: str = "auto", *, progress: bool | None = None) -> Session:
    """Read `path` (`-` for stdin) as `fmt` (or detect it); raise InputError on bad input."""
    if fmt != "auto" and fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; expected one of: auto, {', '.join(FORMATS)}")
    with open_input(path) as (handle, size):
        meter = Progress(path, size, enabled=progress)
        try:
            return neutral.read(decoded_lines(handle, meter))
        finally:
            meter.close()
