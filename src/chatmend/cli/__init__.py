"""The `chatmend` command: repair, convert, check and show saved sessions.

This module runs the program and owns the process (exit codes, closed streams, the collector); `_parser` is the
grammar, and each command runs in its own module (`_repair` with `convert`, `_check`, `_show` with `trim` and
`formats`, `_doctor`, `_proxy`), imported when that command runs.

Exit codes: 0 ok, 1 problems found (`check`), 2 bad input or usage (or an output that cannot be written),
3 an internal error (a bug of chatmend's). Bad input names the file, the line (and column) and what was
expected, and nothing is written.
"""

from __future__ import annotations

import argparse
import errno
import gc
import importlib
import io
import os
import sys
from collections.abc import Callable, Sequence

from chatmend.cli._parser import command_line
from chatmend.cli._text import BAD_INPUT, INTERNAL, OK, UsageError, display, error, printable, say
from chatmend.exceptions import ChatmendError, InputError, UnsupportedError

__all__ = ["main"]


def _tune_collector() -> None:
    """The program owns its process (the library never touches the collector): what is imported is never walked
    again (`gc.freeze`), and the collector runs less often while a large file loads, since reading and repairing
    make no reference cycles."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 10)


_RECURSION_LIMIT = 2000
"""The program's recursion limit (CPython's default is 1,000; the library never changes it): `json.loads` reads
records as deep as orjson does (1,024 levels) with frames to spare, so a large transcript's first pass has no
nesting to guard against (`strict_json.nesting_read`, which costs time on every record otherwise)."""


def _tune_process() -> None:
    """What the program sets in the process it owns: the collector (`_tune_collector`) and the recursion limit,
    raised to `_RECURSION_LIMIT` (never lowered)."""
    _tune_collector()
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Run as the program (no `argv`), it tunes its process."""
    _stand_in_for_closed_streams()
    try:
        return _main(argv, tune=argv is None)
    except Exception as exc:  # the last resort: a bug must not look like exit 1, "problems found"
        if os.environ.get("CHATMEND_TRACEBACK"):
            raise
        error(f"{type(exc).__name__}: {exc}", kind="internal error")
        say("chatmend: this is a bug of chatmend's: please report it (CHATMEND_TRACEBACK=1 shows where)\n")
        return INTERNAL


def _main(argv: Sequence[str] | None, *, tune: bool) -> int:
    """`main` but for the last-resort handler; `tune`: tune the process (`_tune_process`) for the command."""
    parser = command_line()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return exc.code if isinstance(exc.code, int) else BAD_INPUT
    module, name = args.run
    command: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(f"chatmend.cli.{module}"), name)
    if tune:
        _tune_process()  # once the command's modules are imported: `gc.freeze` keeps them out of every collection
    try:
        return command(args)
    except InputError as exc:
        # `FILE:LINE:COL: what is wrong`, the shape editors and CI logs link to.
        say(printable(exc.in_file(display(args.file))) + "\n")
        return BAD_INPUT
    except UsageError as exc:
        error(str(exc))
        return BAD_INPUT
    except UnsupportedError as exc:
        error(f"{display(args.file)}: {exc}")
        return BAD_INPUT
    except ChatmendError as exc:
        error(f"{display(args.file)}: {exc}")
        return BAD_INPUT
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): not an error of ours. Point stdout at devnull so the
        # flush at exit does not fail again (the recipe of the Python docs on SIGPIPE).
        _silence_stdout()
        return OK
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except OSError as exc:
        if exc.filename is not None:
            error(f"{exc.filename}: {exc.strerror or exc}")
            return BAD_INPUT
        # Only the standard streams fail without a file name: a full disk behind `> out`, a closed stdout.
        _silence_stdout()
        error(f"cannot write the output: {exc.strerror or exc}")
        return BAD_INPUT


class _ClosedStream(io.TextIOBase):
    """What the command reads or writes in place of a standard stream the shell closed (`>&-`, `<&-`):
    Python leaves `sys.stdout` None then, and a write must be an error, not an AttributeError."""

    def __init__(self, name: str) -> None:
        self._name = name

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, f"{self._name} is closed")

    def isatty(self) -> bool:
        return False


def _stand_in_for_closed_streams() -> None:
    """Stand-ins for closed standard streams (stdin is `open_input`'s to refuse)."""
    if sys.stdout is None:
        sys.stdout = _ClosedStream("stdout")
    if sys.stderr is None:
        sys.stderr = _ClosedStream("stderr")


def _silence_stdout() -> None:
    """Point the real stdout at devnull: what it still buffers is lost anyway, and the flush at exit must not
    fail a second time (and turn the exit code into 120)."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return  # not a real file (a test's capture, a closed stream)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
