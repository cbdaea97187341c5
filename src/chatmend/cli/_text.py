"""What every command's messages share: the usage error, and text made safe for a terminal."""

from __future__ import annotations

__all__ = ["UsageError", "display", "printable"]


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
