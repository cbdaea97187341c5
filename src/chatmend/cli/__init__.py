"""The `chatmend` command: repair, convert, check and show saved sessions.

This module parses the command line and owns the process (exit codes, closed streams, the collector); each
command runs in its own module (`_repair` with `convert`, `_check`, `_show` with `trim`, `_doctor`, `_proxy`).

Exit codes: 0 ok, 1 problems found (`check`), 2 bad input or usage (or an output that cannot be written),
3 an internal error (a bug of chatmend's). Bad input names the file, the line (and column) and what was
expected, and nothing is written.
"""

from __future__ import annotations

import argparse
import errno
import gc
import io
import os
import re
import sys
import textwrap
from collections.abc import Callable, Sequence

from chatmend import ChatmendError, UnsupportedError, __version__
from chatmend.cli._check import run_check
from chatmend.cli._completion import SHELLS, script
from chatmend.cli._doctor import doctor_command
from chatmend.cli._proxy import proxy_command
from chatmend.cli._repair import run_convert, run_repair
from chatmend.cli._shared import BAD_INPUT, INTERNAL, OK, error, say
from chatmend.cli._show import run_show, run_trim
from chatmend.cli._text import UsageError, display, printable
from chatmend.files.io import MAX_JSON_SIZE
from chatmend.formats import NEUTRAL, TRANSCRIPT_FORMATS, InputError, adapter, formats, provider_formats

__all__ = ["main"]


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def _epilog() -> str:
    """Where the formats are listed (`chatmend formats`, once), and the exit codes."""
    return ("formats: detected from content (--from overrides); `chatmend formats` lists them\n"
            "exit codes: 0 ok, 1 problems found, 2 bad input or usage, 3 internal error (a bug: please report it)\n"
            "docs: docs/ in the repository (the rules of every CODE: docs/rules.md)\n")


def _run_formats(args: argparse.Namespace) -> int:
    """`chatmend formats`: every format the commands read, the registered providers' among them."""
    sys.stdout.write("formats (--from; detected from content when not given):\n"
                     + "".join(f"  {name:<17} {text}\n" for name, text in formats().items()))
    return OK


def _run_completion(args: argparse.Namespace) -> int:
    """`chatmend completion SHELL`: the completion script on stdout."""
    sys.stdout.write(script(args.shell, _parser()))
    return OK


def _tune_collector() -> None:
    """The program owns its process (the library never touches the collector): what is imported is never walked
    again (`gc.freeze`), and the collector runs less often while a large file loads, since reading and repairing
    make no reference cycles."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 10)


_RECURSION_LIMIT = 2000
"""The program's recursion limit (CPython's default is 1,000; the library never changes it): `json.loads` reads
records as deep as orjson does (1,024 levels) with frames to spare, so a large transcript's first pass has no
nesting to guard against (`_json.nesting_read`: a tenth of `json.loads`' time on 3.11 otherwise)."""


def _tune_process() -> None:
    """What the program sets in the process it owns: the collector (`_tune_collector`) and the recursion limit,
    raised to `_RECURSION_LIMIT` (never lowered)."""
    _tune_collector()
    if sys.getrecursionlimit() < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Run as the program (no `argv`), it tunes its process."""
    if argv is None:
        _tune_process()
    _stand_in_for_closed_streams()
    try:
        return _main(argv)
    except Exception as exc:  # the last resort: a bug must not look like exit 1, "problems found"
        if os.environ.get("CHATMEND_TRACEBACK"):
            raise
        error(f"{type(exc).__name__}: {exc}", kind="internal error")
        say("chatmend: this is a bug of chatmend's: please report it (CHATMEND_TRACEBACK=1 shows where)\n")
        return INTERNAL


def _main(argv: Sequence[str] | None) -> int:
    """`main` but for the last-resort handler."""
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


def _parser() -> argparse.ArgumentParser:
    """The argument parser: one subcommand a verb, each with its own help."""
    epilog = _epilog()
    parser = argparse.ArgumentParser(
        prog="chatmend",
        description="Make a saved tool-calling chat session valid to send again.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"chatmend {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    readable = ["auto", *formats()]
    names = list(provider_formats())
    targets = [NEUTRAL, *names]
    platforms = sorted({p for name in names for p in adapter(name).platforms})

    def command(name: str, help: str, description: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=textwrap.fill(description, 100), epilog=epilog,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("file", metavar="FILE", help="the session file, or - for stdin"
                       + (" (or a directory: every file under it)" if name == "check" else ""))
        p.add_argument("--from", dest="fmt", metavar="FORMAT", default="auto", choices=readable,
                       help="the format of FILE (default: detected from its content)")
        p.add_argument("--max-json-size", metavar="SIZE", type=_size, default=MAX_JSON_SIZE,
                       help="the largest line of JSON Lines, or whole JSON document, read, in bytes or with K, M, "
                            "G (default: 64M; input with no line end, or a NUL byte, is refused, not read whole)")
        p.add_argument("--session", metavar="ID",
                       help="in a store of many sessions (an opencode database...), only this one")
        return p

    repair = command("repair", "repair a session: every call answered right after it, ids unique",
                     "Repair a saved session, write it back in the format it was read in, and report "
                     "every change (on stderr, or on stdout when the session goes to a file).")
    where = repair.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    where.add_argument("--in-place", action="store_true",
                       help="replace FILE (atomically), keeping the original as FILE.bak (or FILE.bak.N)")
    repair.add_argument("--force", action="store_true",
                        help="with --in-place: replace FILE even while another process (an agent) holds it open")
    repair.add_argument("--to", metavar="FORMAT", choices=[*targets, *TRANSCRIPT_FORMATS],
                        help="write in this format instead of the one read")
    repair.add_argument("--model", metavar="M", help="the model named in a request body written with --to")
    _read_only_option(repair)
    _drop_unsupported_option(repair)
    repair.add_argument("--report", choices=["text", "json"], default="text",
                        help="the report of changes: for people (text) or for programs (json)")
    repair.set_defaults(run=run_repair)

    convert = command("convert", "write a session as a provider's request body, or as neutral JSON Lines",
                      "Write the session as the request body for a provider (through its adapter, so "
                      "repaired and id-mapped), or as the neutral JSON Lines.")
    convert.add_argument("--to", metavar="PROVIDER", required=True, choices=targets,
                         help=f"one of: {', '.join(targets)}")
    convert.add_argument("--model", metavar="M", help="the model the body names (default: the file's own)")
    convert.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    _read_only_option(convert)
    _drop_unsupported_option(convert)
    convert.set_defaults(run=run_convert)

    check = command("check", "list the problems a provider would answer with a 400",
                    "Print the problems a provider would reject the session with, one a line: "
                    "PATH: CODE: message. Exit 1 when there is any. Given a directory, checks every file "
                    "under it (FILE: PATH: CODE: message), and exits 2 when one cannot be read.")
    check.add_argument("--provider", metavar="PROVIDER", choices=names,
                       help="check against this provider (default: the format read decides); a shape it "
                            "shares with another provider is read as its own")
    check.add_argument("--model", metavar="M",
                       help="the model the body goes to, for rules that depend on it (default: the body's own)")
    check.add_argument("--platform", metavar="PLATFORM", choices=platforms,
                       help=f"where the body is sent, when not the provider's own API: one of {', '.join(platforms)}")
    check.add_argument("--format", dest="output_format", choices=["text", "json"], default="text",
                       help="text: PATH: CODE: message a line; json: one document of every problem (file, path, "
                            "code, message, line, docs: its rule on docs/rules.md)")
    check.set_defaults(run=run_check)

    show = command("show", "print a readable timeline, marking what repair would change",
                   "Print who said what, each call with its result or its absence, and what repair "
                   "would change.")
    show.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                      help="color the output (default: when stdout is a terminal)")
    show.add_argument("--width", type=int, default=None, help="cut lines at this width (default: terminal)")
    show.set_defaults(run=run_show)

    trim = command("trim", "drop whole turns from the oldest end until the session fits a budget",
                   "Drop whole turns from the oldest end (never a call without its result; the system messages "
                   "at the top stay) until the session fits, and write it in the format read (or --to). Tokens "
                   "are counted roughly: a quarter of the characters of each message's neutral JSON line. "
                   "Exit 1 when not even the last turn fits (it is written anyway).")
    trim.add_argument("--max-tokens", type=_count, metavar="N", help="at most N tokens (rough count)")
    trim.add_argument("--max-messages", type=_count, metavar="N", help="at most N messages")
    trim.add_argument("--keep-first-user", action="store_true",
                      help="keep the first user message (the task) too")
    trim.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    trim.add_argument("--to", metavar="FORMAT", choices=targets,
                      help="write in this format instead of the one read (transcripts: chatmend or a provider)")
    trim.add_argument("--model", metavar="M", help="the model named in a request body written with --to")
    trim.set_defaults(run=run_trim)
    proxy_command(sub, epilog)
    doctor_command(sub, epilog)
    listing = sub.add_parser("formats", help="list the formats every command reads", description="List the formats "
                             "every command reads (--from), the registered providers' among them.")
    listing.set_defaults(run=_run_formats, file="-")
    completion = sub.add_parser("completion", help="print a shell completion script",
                                description="Print a completion script for bash, zsh or fish: "
                                            'eval "$(chatmend completion bash)" in ~/.bashrc (zsh: the same with zsh '
                                            "in ~/.zshrc), or chatmend completion fish > "
                                            "~/.config/fish/completions/chatmend.fish.")
    completion.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")
    completion.set_defaults(run=_run_completion, file="-")
    return parser


def _size(text: str) -> int:
    """A `--max-json-size` value: bytes, or a whole number of K, M or G (KiB, MiB, GiB)."""
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(?:i?B)?\s*", text, flags=re.IGNORECASE)
    if not match or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"expected a size such as 64M, 1G or 100000 (bytes), got {text!r}")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def _read_only_option(parser: argparse.ArgumentParser) -> None:
    """`--read-only`, shared by the commands that repair."""
    parser.add_argument("--read-only", metavar="NAME,NAME", action="append", default=[],
                        help="tools that only read: an interrupted call to one is safe to run again")


def _drop_unsupported_option(parser: argparse.ArgumentParser) -> None:
    """`--drop-unsupported`, shared by the commands that write for another provider."""
    parser.add_argument("--drop-unsupported", action="store_true",
                        help="leave out what the target provider cannot carry (another provider's native blocks, "
                             "a file where it takes none) and list each in the report; without it, that is an "
                             "error naming the part and where it was read (exit 2)")


def _count(text: str) -> int:
    """A `--max-*` value: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value
