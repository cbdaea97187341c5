"""The `chatmend` command: repair, convert, check and show saved sessions.

Exit codes: 0 ok, 1 problems found (`check`), 2 bad input or usage (or an output that cannot be written),
3 an internal error (a bug of chatmend's). Bad input names the file, the line (and column) and what was
expected, and nothing is written.
"""

from __future__ import annotations

import argparse
import errno
import io
import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO

from chatmend import ChatmendError, Repairer, RepairResult, UnsupportedError, __version__, repair_history
from chatmend.formats import (
    NEUTRAL,
    TRANSCRIPT_FORMATS,
    InputError,
    Session,
    adapter,
    atomic_copy,
    atomic_write,
    formats,
    neutral,
    provider_formats,
    read,
    wire_json,
)
from chatmend.repair import IsReadOnly, Origin

__all__ = ["main"]

OK, PROBLEMS, BAD_INPUT, INTERNAL = 0, 1, 2, 3


def _epilog() -> str:
    """The formats every command reads (the registered providers' among them), and the exit codes."""
    return ("formats (--from, detected from content when not given):\n"
            + "".join(f"  {name:<17} {text}\n" for name, text in formats().items())
            + "\nexit codes: 0 ok, 1 problems found (check), 2 bad input or usage (or an output that cannot be\n"
              "written), 3 internal error (a bug: please report it).\n")


class UsageError(Exception):
    """A command line that asks for something impossible (exit 2)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    _stand_in_for_closed_streams()
    try:
        return _main(argv)
    except Exception as exc:  # the last resort: a bug must not look like exit 1, "problems found"
        if os.environ.get("CHATMEND_TRACEBACK"):
            raise
        _error(f"{type(exc).__name__}: {exc}", kind="internal error")
        _say("chatmend: this is a bug of chatmend's: please report it (CHATMEND_TRACEBACK=1 shows where)\n")
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
        _say(printable(exc.in_file(_display(args.file))) + "\n")
        return BAD_INPUT
    except (UsageError, UnsupportedError) as exc:
        _error(str(exc))
        return BAD_INPUT
    except ChatmendError as exc:
        _error(f"{_display(args.file)}: {exc}")
        return BAD_INPUT
    except BrokenPipeError:
        # The reader of stdout went away (`| head`): not an error of ours. Point stdout at devnull so the
        # flush at exit does not fail again (the recipe of the Python docs on SIGPIPE).
        _silence_stdout()
        return OK
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except OSError as exc:
        if exc.filename is not None:
            _error(f"{exc.filename}: {exc.strerror or exc}")
            return BAD_INPUT
        # Only the standard streams fail without a file name: a full disk behind `> out`, a closed stdout.
        _silence_stdout()
        _error(f"cannot write the output: {exc.strerror or exc}")
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
        p.add_argument("file", metavar="FILE", help="the session file, or - for stdin")
        p.add_argument("--from", dest="fmt", metavar="FORMAT", default="auto", choices=readable,
                       help="the format of FILE (default: detected from its content)")
        return p

    repair = command("repair", "repair a session: every call answered right after it, ids unique",
                     "Repair a saved session, write it back in the format it was read in, and report "
                     "every change (on stderr, or on stdout when the session goes to a file).")
    where = repair.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    where.add_argument("--in-place", action="store_true",
                       help="replace FILE (atomically), keeping the original as FILE.bak")
    repair.add_argument("--to", metavar="FORMAT", choices=[*targets, *TRANSCRIPT_FORMATS],
                        help="write in this format instead of the one read")
    repair.add_argument("--model", metavar="M", help="the model named in a request body written with --to")
    _read_only_option(repair)
    repair.add_argument("--report", choices=["text", "json"], default="text",
                        help="the report of changes: for people (text) or for programs (json)")
    repair.set_defaults(run=_repair)

    convert = command("convert", "write a session as a provider's request body, or as neutral JSON Lines",
                      "Write the session as the request body for a provider (through its adapter, so "
                      "repaired and id-mapped), or as the neutral JSON Lines.")
    convert.add_argument("--to", metavar="PROVIDER", required=True, choices=targets,
                         help=f"one of: {', '.join(targets)}")
    convert.add_argument("--model", metavar="M", help="the model the body names (default: the file's own)")
    convert.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    _read_only_option(convert)
    convert.set_defaults(run=_convert)

    check = command("check", "list the problems a provider would answer with a 400",
                    "Print the problems a provider would reject the session with, one a line: "
                    "PATH: CODE: message. Exit 1 when there is any.")
    check.add_argument("--provider", metavar="PROVIDER", choices=names,
                       help="check against this provider (default: the format read decides); a shape it "
                            "shares with another provider is read as its own")
    check.add_argument("--model", metavar="M",
                       help="the model the body goes to, for rules that depend on it (default: the body's own)")
    check.add_argument("--platform", metavar="PLATFORM", choices=platforms,
                       help=f"where the body is sent, when not the provider's own API: one of {', '.join(platforms)}")
    check.set_defaults(run=_check)

    show = command("show", "print a readable timeline, marking what repair would change",
                   "Print who said what, each call with its result or its absence, and what repair "
                   "would change.")
    show.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                      help="color the output (default: when stdout is a terminal)")
    show.add_argument("--width", type=int, default=None, help="cut lines at this width (default: terminal)")
    show.set_defaults(run=_show)
    return parser


def _read_only_option(parser: argparse.ArgumentParser) -> None:
    """`--read-only`, shared by the commands that repair."""
    parser.add_argument("--read-only", metavar="NAME,NAME", action="append", default=[],
                        help="tools that only read: an interrupted call to one is safe to run again")


# --- repair ----------------------------------------------------------------------------------------------


def _repair(args: argparse.Namespace) -> int:
    """`chatmend repair`: the repaired history in the same format, a report of every change."""
    if args.in_place and args.file == "-":
        raise UsageError("--in-place needs a file, not stdin")
    session = read(args.file, args.fmt)
    is_read_only = _read_only(args.read_only)
    target = args.to or session.format
    if args.in_place and target != session.format:
        raise UsageError(f"--in-place writes {session.format} back; --to {target} needs -o OUT")
    if target == session.format:
        result, chunks = session.repaired(is_read_only)
    else:
        repairer = Repairer(is_read_only=is_read_only)
        result = repairer.repair(session.messages)
        chunks = _converted(target, session, args.model, repairer)
    report = _report(session, result, args.file)
    if session.body is not None and session.provider is not None and target == session.format:
        # Problems of the saved body that writing it through the adapter fixes (ids Mistral rejects...).
        rejected = adapter(session.provider).check(session.body)
        report["rejected"] = [{"path": p.path, "code": p.code, "message": p.message} for p in rejected]
        report["changed"] = report["changed"] or bool(rejected)
    if args.in_place:
        if report["changed"]:
            _backup(args.file)
            _write_output(chunks, args.file)
        report["written"] = args.file if report["changed"] else None
        report["backup"] = args.file + ".bak" if report["changed"] else None
    else:
        _write_output(chunks, args.output)
    to_file = args.in_place or (args.output not in (None, "-"))
    _print_report(report, args.report, sys.stdout if to_file else sys.stderr)
    return OK


def _backup(path: str) -> None:
    """Copy `path` to `path.bak`, atomically, before it is replaced."""
    backup = path + ".bak"
    try:
        atomic_copy(path, backup)
    except OSError as exc:
        raise UsageError(f"{backup}: cannot write the backup: {exc.strerror or exc}") from None


def _read_only(values: Iterable[str]) -> IsReadOnly | None:
    """The `--read-only` names as a predicate (None when no name was given)."""
    names = frozenset(name.strip() for value in values for name in value.split(",") if name.strip())
    if not names:
        return None
    return names.__contains__


def _model(to: str, session: Session, model: str | None) -> str:
    """The model for a body written for `to`: the one given, or the file's own when it belongs to `to`."""
    if model:
        return model
    target = adapter(to)
    if session.model and (session.format == to or target.serves(session.model)):
        return session.model
    if not target.model_in_body:
        return ""  # the model is not in the body (Gemini's is in the URL)
    raise UsageError(f"a request body for {to} names its model: give it with --model")


def _converted(to: str, session: Session, model: str | None, repairer: Repairer) -> Iterator[str]:
    """The session repaired by `repairer` (which has repaired it: asking again is free) as neutral JSON Lines or
    a new request body for `to`."""
    if to == NEUTRAL:
        return neutral.write(repairer.repair(session.messages).messages)
    if to in TRANSCRIPT_FORMATS:
        raise UsageError(f"cannot write a {to} transcript from {session.format}; "
                         "choose chatmend or a provider")

    def write() -> Iterator[str]:
        body = adapter(to).to_request(session.messages, model=_model(to, session, model), repairer=repairer)
        yield wire_json(body, indent=True)

    return write()


def _write_output(chunks: Iterable[str], output: str | None) -> None:
    """Write to stdout (only once all is rendered) or to a file atomically: nothing is left when it fails."""
    if output is None or output == "-":
        text = list(chunks)  # render first: an error half-way must not leave half a history on stdout
        out = sys.stdout
        for chunk in text:
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
        return where[index] if index < len(where) else f"message {index}"

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
    """`1 call`, `2 calls`."""
    return f"{count} {one if count == 1 else many}"


_SHOWN = 8
"""How many items of one kind the text report names (`--report json` lists them all)."""


def _some(items: Iterable[str]) -> str:
    """The first few items, and how many more there are."""
    names = list(items)
    shown = ", ".join(names[:_SHOWN])
    return shown if len(names) <= _SHOWN else f"{shown} and {len(names) - _SHOWN} more"


def report_lines(report: dict[str, Any]) -> list[str]:
    """The human summary of a repair report, control characters escaped."""
    return [printable(line) for line in _report_lines(report)]


def _report_lines(report: dict[str, Any]) -> list[str]:
    if not report["changed"]:
        return [f"{report['file']}: nothing to repair ({_plural(report['messages'], 'message', 'messages')})"]
    lines = [f"{report['file']}: repaired ({report['format']})"]
    moved, interrupted, notes = report["moved"], report["interrupted"], report["notes"]
    renamed, dropped = report["renamed"], report["dropped"]
    if moved:
        lines.append(f"  moved {_plural(len(moved), 'result', 'results')} to just after the call: "
                     + _some(f"{m['tool_call_id']} ({m['at']})" for m in moved))
    if interrupted:
        lines.append(f"  answered {_plural(len(interrupted), 'call', 'calls')} as interrupted: "
                     + _some(f"{c['id']} ({c['name']})" for c in interrupted))
    if notes:
        lines.append(f"  turned {_plural(len(notes), 'orphan result', 'orphan results')} into "
                     + ("a user note: " if len(notes) == 1 else "user notes: ")
                     + _some(f"{n['tool_call_id'] or '(empty id)'} ({n['at']})" for n in notes))
    if renamed:
        lines.append(f"  renamed {_plural(len(renamed), 'id', 'ids')}: "
                     + _some(f"{r['old'] or '(empty)'} -> {r['new']} ({r['at']})" for r in renamed))
    if dropped:
        lines.append(f"  dropped {_plural(len(dropped), 'placeholder', 'placeholders')}: "
                     + _some(d["at"] for d in dropped))
    rejected = report.get("rejected") or []
    if rejected:
        lines.append(f"  fixed {_plural(len(rejected), 'problem', 'problems')} {report['format']} "
                     "would reject: " + _some(f"{p['code']} at {p['path']}" for p in rejected))
    if report.get("backup"):
        lines.append(f"  wrote {report['written']} (the original is in {report['backup']})")
    return lines


def _print_report(report: dict[str, Any], style: str, out: TextIO) -> None:
    """The report as text lines or one JSON object."""
    if style == "json":
        out.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        for line in report_lines(report):
            out.write(line + "\n")
    out.flush()


# --- convert ---------------------------------------------------------------------------------------------


def _convert(args: argparse.Namespace) -> int:
    """`chatmend convert`: the provider's request body (repaired, id-mapped) or neutral JSON Lines."""
    session = read(args.file, args.fmt)
    if args.to == NEUTRAL:
        _write_output(neutral.write(session.messages), args.output)  # as read: `repair` is the command that changes one
        return OK
    model = _model(args.to, session, args.model)
    repairer = Repairer(is_read_only=_read_only(args.read_only))
    result = repairer.repair(session.messages)  # the report's, and the body's: to_request finds it done
    body = adapter(args.to).to_request(session.messages, model=model, repairer=repairer)
    _write_output(iter([wire_json(body, indent=True)]), args.output)
    if result.changed:
        report = _report(session, result, args.file)
        lines = report_lines(report)
        lines[0] = f"{report['file']}: repaired on the way to {args.to} ({session.format})"
        _print_report_lines(lines)
    return OK


def _print_report_lines(lines: list[str]) -> None:
    """Lines of a report on stderr (stdout holds the body)."""
    _say("".join(line + "\n" for line in lines))


# --- check -----------------------------------------------------------------------------------------------


def _check(args: argparse.Namespace) -> int:
    """`chatmend check`: `PATH: CODE: message` for each problem; exit 1 when there is any."""
    session = read(args.file, args.fmt, prefer=args.provider)
    provider = args.provider or session.provider
    if args.platform is not None and (provider is None or args.platform not in adapter(provider).platforms):
        raise UsageError(f"--platform {args.platform} is not a platform of {provider or 'the neutral rules'}")
    context = {"model": args.model, "platform": args.platform}
    lines: list[str] = []
    if provider is not None and provider == session.provider and session.body is not None:
        lines = [f"{p.path}: {p.code}: {p.message}{_item_line(session, p.path)}"
                 for p in adapter(provider).check(session.body, **context)]
    else:
        repairer = Repairer()
        lines = neutral_problems(session, repairer.repair(session.messages))
        if provider is not None:
            # the platform's writing rules too (Gemini on Vertex sends no call ids)
            options = {"platform": args.platform} if args.platform else {}
            try:
                model = _model(provider, session, args.model or "unknown-model")
                body = adapter(provider).to_request(session.messages, model=model, repairer=repairer, **options)
            except UnsupportedError as exc:
                lines.append(f"{exc.path or 'messages'}: UNSUPPORTED: {exc.reason}")
            else:
                lines += [f"{p.path}: {p.code}: {p.message}" for p in adapter(provider).check(body, **context)]
    for line in lines:
        sys.stdout.write(printable(line) + "\n")
    sys.stdout.flush()
    rules = provider or "the neutral rules"
    if lines:
        _say(f"{_display(args.file)}: {_plural(len(lines), 'problem', 'problems')} ({rules}); "
             "`chatmend repair` fixes what repair can\n")
        return PROBLEMS
    _say(f"{_display(args.file)}: no problems ({rules})\n")
    return OK


_ITEM = re.compile(r"^[a-z]+\[(\d+)\]")


def _item_line(session: Session, path: str) -> str:
    """` (line N)` for a problem in JSON Lines of a body's list, naming the line of its item."""
    match = _ITEM.match(path)
    if not match or not session.item_lines or int(match.group(1)) >= len(session.item_lines):
        return ""
    return f" (line {session.item_lines[int(match.group(1))]})"


def neutral_problems(session: Session, result: RepairResult) -> list[str]:
    """What repair would change (`result`, the session's repair), as problems: each would make any provider
    answer with a 400."""
    messages = session.messages
    found: list[tuple[int, int, str]] = []

    def line(index: int) -> str:
        where = session.where[index] if index < len(session.where) else ""
        return f" ({where})" if where.startswith("line ") else ""

    for i in result.dropped:
        found.append((i, -1, f"messages[{i}]: R1: a whitespace-only assistant message without calls "
                             f"(a placeholder) ends the span of the calls before it{line(i)}"))
    for i in result.moved:
        found.append((i, -1, f"messages[{i}]: R4: the result for call {messages[i].tool_call_id} is not "
                             f"right after its call, in call order{line(i)}"))
    for i in result.notes:
        orphan = messages[i].tool_call_id or "(empty id)"
        found.append((i, -1, f"messages[{i}]: R3: a tool result for {orphan} has no call in its span"
                             f"{line(i)}"))
    for r in result.renamed:
        why = "is empty" if not r.old else "is already used by an earlier call"
        found.append((r.message_index, r.call_index,
                      f"messages[{r.message_index}].tool_calls[{r.call_index}]: R5: the call id "
                      f"{r.old!r} {why}{line(r.message_index)}"))
    for call, (mi, ci) in zip(result.interrupted, result.interrupted_at):
        found.append((mi, ci, f"messages[{mi}].tool_calls[{ci}]: R6: the call {call.id} ({call.name}) has no "
                              f"result{line(mi)}"))
    return [text for _, _, text in sorted(found)]


# --- show ------------------------------------------------------------------------------------------------

_COLORS = {
    "system": "35", "user": "32", "assistant": "36", "tool": "34", "mark": "33", "bad": "31", "dim": "2",
}


def _show(args: argparse.Namespace) -> int:
    """`chatmend show`: a readable timeline, marking what repair would change."""
    session = read(args.file, args.fmt)
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty()
                                       and os.environ.get("NO_COLOR") is None)
    width = args.width or (shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100)
    for text in timeline(session, _display(args.file), color=color, width=max(width, 40)):
        sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return OK


def _paint(text: str, key: str, color: bool) -> str:
    """Text (its control characters escaped) in an ANSI color, or as it is when colors are off."""
    text = printable(text)
    return f"\x1b[{_COLORS[key]}m{text}\x1b[0m" if color else text


# C0 controls (tab and newline among them: a line printed is one line), DEL and C1 controls.
_CONTROLS = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)]}


def printable(text: str) -> str:
    """Text for a person's terminal: every control character escaped (`\\x1b`), so that ids, names and content
    from a file cannot set the title, clear the screen or fake lines of a report."""
    return text.translate(_CONTROLS) if not text.isprintable() else text


def _one_line(text: str, width: int) -> str:
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
    result = repair_history(messages)
    renamed = {(r.message_index, r.call_index): r.new for r in result.renamed}
    moved, notes, dropped = set(result.moved), set(result.notes), set(result.dropped)
    answers = _answers(result)
    label_width = max((len(w) for w in session.where), default=4)
    out = [_paint(f"{name} ({session.format}, {_plural(len(messages), 'message', 'messages')})",
                  "dim", color)]
    for i, message in enumerate(messages):
        where = session.where[i] if i < len(session.where) else f"message {i}"
        head = f"{where:<{label_width}}  {message.role:<9}  "
        body = _summary(message.content)
        if message.role == "tool":
            name = f"{message.tool_name} " if message.tool_name else ""
            body = f"{name}[{message.tool_call_id}]{' error' if message.is_error else ''}: {body}"
        out.append(_paint(head, message.role, color) + _one_line(body, max(width - len(head), 20)))
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
            out.append(indent + _one_line(text, max(width - len(indent), 20)))
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
    lines = report_lines(_report(session, result, name))
    out.append("")
    out.append(_paint("repair would change nothing" if not result.changed else "repair would change:",
                      "dim" if not result.changed else "mark", color))
    if result.changed:
        out.extend(lines[1:])
    return out


def _display(file: str) -> str:
    """The name of the input in messages (`<stdin>` for `-`)."""
    return "<stdin>" if file == "-" else file


def _error(text: str, *, kind: str = "error") -> None:
    """A usage or write error on stderr."""
    _say(f"chatmend: {kind}: {printable(text)}\n")


def _say(text: str) -> None:
    """Text on stderr, for a person; nothing when stderr itself cannot be written (the exit code still says)."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
