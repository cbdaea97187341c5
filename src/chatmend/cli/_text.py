"""What every command shares: its exit codes, its words on stderr, the usage error, and text made safe for a
terminal."""

from __future__ import annotations

import sys

__all__ = ["BAD_INPUT", "INTERNAL", "OK", "PROBLEMS", "UsageError", "display", "error", "printable", "say"]

OK, PROBLEMS, BAD_INPUT, INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that asks for something impossible (exit 2)."""


# C0 controls (tab and newline among them: a line printed is one line), DEL and C1 controls.
_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)]}


def printable(text: str) -> str:
    """Text for a person's terminal: every control character escaped (`\\x1b`), so that ids, names and content
    from a file cannot set the title, clear the screen or fake lines of a report."""
    return text.translate(_CONTROLS) if not text.isprintable() else text


def display(file: str) -> str:
    """The name of the input in messages (`<stdin>` for `-`)."""
    return "<stdin>" if file == "-" else file


def error(text: str, *, kind: str = "error") -> None:
    """A usage or write error on stderr."""
    say(f"chatmend: {kind}: {printable(text)}\n")


def say(text: str) -> None:
    """Text on stderr, for a person; nothing when stderr itself cannot be written (the exit code still says)."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
