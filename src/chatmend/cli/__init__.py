"""The `chatmend` command: repair, convert, check and show saved sessions.

Exit codes: 0 ok, 1 problems found (`check`), 2 bad input or usage (or an output that cannot be written),
3 an internal error (a bug of chatmend's). Bad input names the file, the line (and column) and what was
expected, and nothing is written.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import dataclasses
import errno
import gc
import io
import itertools
import json
import logging
import os
import re
import shutil
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any

from chatmend import ChatmendError, Problem, Repairer, RepairResult, UnsupportedError, __version__
from chatmend.cli._output import (
    batched,
    in_place_target,
    lock_file,
    regular_file_out,
    replace_in_place,
    signals_remove_temporary_files,
    write_output,
)
from chatmend.cli._report import plural, print_report, repair_report, report_lines, some, summary_report
from chatmend.cli._text import UsageError, display, printable
from chatmend.cli._timeline import one_line, timeline
from chatmend.formats import (
    NEUTRAL,
    TRANSCRIPT_FORMATS,
    InputError,
    Session,
    adapter,
    formats,
    neutral,
    provider_formats,
    read,
    read_bytes,
    read_lines,
    store_formats,
    streamed,
    wire_json,
)
from chatmend.formats._io import MAX_JSON_SIZE, open_input, read_all
from chatmend.formats._problems import neutral_problems
from chatmend.formats._session import Streamed
from chatmend.providers.base import Dropped
from chatmend.repair import IsReadOnly
from chatmend.transcripts._stores import Store, StoredSession, one, open_store, select
from chatmend.trim import trim_history

__all__ = ["main"]

OK, PROBLEMS, BAD_INPUT, INTERNAL = 0, 1, 2, 3


def _epilog() -> str:
    """The formats every command reads (the registered providers' among them), and the exit codes."""
    return ("formats (--from, detected from content when not given):\n"
            + "".join(f"  {name:<17} {text}\n" for name, text in formats().items())
            + "\nexit codes: 0 ok, 1 problems found (check), 2 bad input or usage (or an output that cannot be\n"
              "written), 3 internal error (a bug: please report it).\n")


def _tune_collector() -> None:
    """The program owns its process (the library never touches the collector): what is imported is never walked
    again (`gc.freeze`), and the collector runs less often while a large file loads, since reading and repairing
    make no reference cycles."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 10)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code. Run as the program (no `argv`), it tunes the collector."""
    if argv is None:
        _tune_collector()
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
        _say(printable(exc.in_file(display(args.file))) + "\n")
        return BAD_INPUT
    except UsageError as exc:
        _error(str(exc))
        return BAD_INPUT
    except UnsupportedError as exc:
        _error(f"{display(args.file)}: {exc}")
        return BAD_INPUT
    except ChatmendError as exc:
        _error(f"{display(args.file)}: {exc}")
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
    repair.add_argument("--to", metavar="FORMAT", choices=[*targets, *TRANSCRIPT_FORMATS],
                        help="write in this format instead of the one read")
    repair.add_argument("--model", metavar="M", help="the model named in a request body written with --to")
    _read_only_option(repair)
    _drop_unsupported_option(repair)
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
    _drop_unsupported_option(convert)
    convert.set_defaults(run=_convert)

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
    check.set_defaults(run=_check)

    show = command("show", "print a readable timeline, marking what repair would change",
                   "Print who said what, each call with its result or its absence, and what repair "
                   "would change.")
    show.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                      help="color the output (default: when stdout is a terminal)")
    show.add_argument("--width", type=int, default=None, help="cut lines at this width (default: terminal)")
    show.set_defaults(run=_show)

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
    trim.set_defaults(run=_trim)
    _proxy_command(sub, epilog)
    _doctor_command(sub, epilog)
    return parser


def _doctor_command(sub: Any, epilog: str) -> None:
    """`chatmend doctor`: its options."""
    doctor = sub.add_parser(
        "doctor", help="find every saved session of every agent tool that would be refused, and fix them",
        description=textwrap.fill(
            "With no PATH, scan the default locations of every supported tool (Claude Code, honouring "
            "CLAUDE_CONFIG_DIR; Codex, CODEX_HOME, archived sessions too; Gemini CLI; opencode, OPENCODE_DB and "
            "XDG_DATA_HOME; and every other registered store), or the PATHs given (files, stores, folders), and "
            "print a table: tool, session, last modified, status and the problems found. --fix repairs every "
            "broken session in place after a backup and says how to resume it. A session in use (modified in "
            "the last minute, or its database locked) is reported and left alone unless --force. "
            "Exit 1 when a session is still broken (or cannot be read).", 100),
        epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    doctor.add_argument("paths", metavar="PATH", nargs="*", help="session files, stores or folders to scan "
                                                                  "(default: every tool's own locations)")
    doctor.add_argument("--fix", action="store_true", help="repair every broken session in place, after a backup")
    doctor.add_argument("--force", action="store_true",
                        help="also fix sessions in use (modified in the last minute, or a locked database)")
    doctor.add_argument("--json", action="store_true", help="one JSON object a session, for programs")
    doctor.add_argument("--workers", type=int, metavar="N", help="processes scanning in parallel (default: CPUs)")
    doctor.set_defaults(run=_doctor, file="chatmend doctor")


def _doctor(args: argparse.Namespace) -> int:
    """`chatmend doctor`: the table (or JSON lines) of every session found; the work is `chatmend.doctor`'s."""
    from chatmend.doctor import Finding, doctor

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers needs a number >= 1")
    bar = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int) -> None:
        if bar:
            _say(f"\rchatmend doctor: {done}/{total} checked")

    findings: list[Finding] = []
    for finding in doctor(args.paths, fix=args.fix, force=args.force, workers=args.workers, progress=progress):
        if args.json:
            sys.stdout.write(json.dumps(finding.to_json(), ensure_ascii=False) + "\n")
        findings.append(finding)
    if bar:
        _say("\r\x1b[K")
    if not args.json:
        _doctor_table(findings, args.fix)
    sys.stdout.flush()
    return PROBLEMS if any(f.status in ("broken", "in use", "unreadable") for f in findings) else OK


def _doctor_table(findings: Sequence[Any], fixing: bool) -> None:
    """The findings as a table, then how to resume what was fixed."""
    import time

    if not findings:
        sys.stdout.write("no sessions found\n")
        return
    rows = [("TOOL", "SESSION", "MODIFIED", "STATUS", "PROBLEMS")]
    for f in findings:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(f.modified)) if f.modified else "-"
        said = f.said or f.problems  # the provider's words where known, else what `check` says
        problem = one_line(said[0], 200) if said else ""
        if len(said) > 1:
            problem += f" (+{len(said) - 1} more)"
        rows.append((f.tool or f.format, one_line(f.session or f.path, 48), when, f.status, problem))
    widths = [max(len(printable(r[k])) for r in rows) for k in range(4)]
    for row in rows:
        cells = [printable(c).ljust(w) for c, w in zip(row, widths)]
        sys.stdout.write("  ".join([*cells, printable(row[4])]).rstrip() + "\n")
    counts = Counter(f.status for f in findings)
    sys.stdout.write("\n" + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + "\n")
    for f in findings:
        if f.status == "fixed":
            sys.stdout.write(printable(f"fixed {f.path} ({', '.join(f.changes)}; the original is in {f.backup}); "
                                       f"resume: {f.resume}") + "\n")
    broken = counts.get("broken", 0)
    if broken and not fixing:
        sys.stdout.write(f"`chatmend doctor --fix` repairs the {plural(broken, 'broken session', 'broken sessions')}"
                         " (after a backup)\n")
    if counts.get("in use"):
        sys.stdout.write("sessions in use are left alone: quit their tool, or give --force\n")


def _proxy_command(sub: Any, epilog: str) -> None:
    """`chatmend proxy`: its options (the defaults are `ProxyConfig`'s, read when the command runs)."""
    proxy = sub.add_parser(
        "proxy", help="repair every request in flight: point a client's base URL at it",
        description=textwrap.fill(
            "Serve an HTTP proxy that repairs the history of every Anthropic Messages, OpenAI Chat and Responses "
            "and Gemini request, and of every Bedrock Converse request, in its own format and forwards it to the "
            "upstream API, streaming the answer back as it comes. Point ANTHROPIC_BASE_URL at http://HOST:PORT, "
            "OPENAI_BASE_URL at http://HOST:PORT/v1, AWS_ENDPOINT_URL_BEDROCK_RUNTIME at http://HOST:PORT. "
            "Needs pip install 'chatmend[proxy]'.", 100),
        epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    proxy.add_argument("--host", help="the address to listen on (default 127.0.0.1: this machine only)")
    proxy.add_argument("--port", type=int, help="the port to listen on (default 8787)")
    proxy.add_argument("--upstream", metavar="NAME=URL", action="append", default=[],
                       help="where a route family goes: anthropic, openai (a base ending in /v1, as the OpenAI "
                            "SDK's base_url), gemini or bedrock (a bedrock-runtime endpoint); default: the "
                            "providers' own APIs (Bedrock's in us-east-1)")
    proxy.add_argument("--chat-provider", metavar="PROVIDER",
                       help="the adapter for /v1/chat/completions when the openai upstream is an OpenAI-compatible "
                            "service (kimi, mistral, ...)")
    proxy.add_argument("--config", metavar="FILE", help="a JSON file of settings (options given here win)")
    proxy.add_argument("--dry-run", action="store_true", help="log what repair would change, forward the original")
    proxy.add_argument("--max-body-bytes", type=int, metavar="N", help="answer 413 above this (default 32 MiB)")
    proxy.add_argument("--log-json", action="store_true", help="one JSON object a log line")
    proxy.add_argument("--workers", type=int, metavar="N", help="worker processes (default 1; the proxy is "
                                                                "stateless)")
    proxy.add_argument("--sign-bedrock", action="store_true",
                       help="sign each Bedrock request again (SigV4) with this process's AWS credentials, so a "
                            "SigV4-signed request can be repaired and sent on to the upstream's host; without it "
                            "a signed request is forwarded as it came, unrepaired")
    proxy.add_argument("--grace-seconds", type=float, metavar="S",
                       help="on SIGTERM, how long in-flight streams may take to finish (default 30)")
    proxy.set_defaults(run=_proxy, file=None)


def _proxy(args: argparse.Namespace) -> int:
    """Serve the proxy until SIGINT or SIGTERM; the command line owns the process and its logging."""
    try:
        from chatmend.proxy import ProxyConfig, load_config, parse_upstreams, serve
        from chatmend.proxy._config import validated
    except ImportError as exc:
        raise UsageError(f"the proxy needs its dependencies: pip install 'chatmend[proxy]' ({exc})") from None
    try:
        config = load_config(args.config) if args.config else ProxyConfig()
        changes: dict[str, Any] = {"upstreams": parse_upstreams(args.upstream, config.upstreams)}
        for name in ("host", "port", "chat_provider", "max_body_bytes", "workers", "grace_seconds"):
            if getattr(args, name) is not None:
                changes[name] = getattr(args, name)
        changes["dry_run"] = config.dry_run or args.dry_run
        changes["log_json"] = config.log_json or args.log_json
        changes["sign_bedrock"] = config.sign_bedrock or args.sign_bedrock
        config = validated(dataclasses.replace(config, **changes), "chatmend proxy")
        if config.sign_bedrock:
            from chatmend.proxy._sigv4 import load_signer

            load_signer()  # no credentials: a usage error now, not a traceback when the app starts
    except (InputError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    routes = ", ".join(f"{name} -> {url}" for name, url in config.upstreams.items())
    _say(f"chatmend proxy: listening on http://{config.host}:{config.port} ({routes})\n")
    serve(config)
    return OK
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


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


# --- repair ----------------------------------------------------------------------------------------------


def _repair(args: argparse.Namespace) -> int:
    """`chatmend repair`: the repaired history in the same format, a report of every change."""
    if args.in_place and args.file == "-":
        raise UsageError("--in-place needs a file, not stdin")
    store = _open_store(args)
    if store is not None:
        with store:
            return _repair_store(args, store)
    source = in_place_target(args.file) if args.in_place else args.file
    if args.file != "-":
        with open_input(source) as (handle, _):
            if args.in_place:
                lock_file(handle)  # held from the read to the rename; let go before a whole reading locks again
            found = streamed(handle, args.fmt, max_size=args.max_json_size, digest=args.in_place)
            if found is not None and args.to in (None, found.format):
                return _repair_streamed(args, found, handle, source)
    with contextlib.ExitStack() as held:  # the --in-place lock, held from the read to the rename
        handle, _ = held.enter_context(open_input(source))
        if args.in_place:
            lock_file(handle)
        st = os.fstat(handle.fileno()) if args.file != "-" else None
        data = read_all(handle, args.max_json_size)
        session = read_bytes(data, args.fmt, name=display(args.file), max_size=args.max_json_size)
        is_read_only = _read_only(args.read_only)
        target = args.to or session.format
        if args.in_place and target != session.format:
            raise UsageError(f"--in-place writes {session.format} back; --to {target} needs -o OUT")
        rewritten: list[str] | None = None  # where the items written anew stand, for a repair in the body's format
        drops: list[Dropped] | None = None  # what --drop-unsupported left out of a body written with --to
        if target == session.format and session.repair_in_format is not None:
            done = session.repair_in_format(is_read_only)  # a provider's body: only what repair must change
            result, chunks, rewritten = done.result, done.chunks, done.rewritten
            reported = dataclasses.replace(session, messages=done.messages, where=done.where)
        elif target == session.format:
            result, chunks = session.repaired(is_read_only)
            reported = session
        else:
            repairer = Repairer(is_read_only=is_read_only)
            result = repairer.repair(session.messages)
            drops = _dropping(args)
            chunks = _converted(target, session, args.model, repairer, drops)
            reported = session
        if target == session.format and data.startswith(codecs.BOM_UTF8):
            chunks = itertools.chain(["\ufeff"], chunks)  # the reader drops a BOM; the file written back keeps it
        if not args.in_place:
            data = b""  # only --in-place compares with what was read: the bytes are not held while writing
        # Render first (an error half-way must not leave half a history anywhere), except into a file: the
        # atomic write leaves nothing when an error stops it, and the text is not held whole beside the history.
        as_rendered = regular_file_out(args.output) and session.body is None
        text = "" if as_rendered else "".join(chunks)
        if as_rendered:
            write_output(batched(chunks), args.output)  # before the report: a store's fixes fill as it writes
        report = repair_report(reported, result, args.file)
        if rewritten is not None:
            report["rewritten"] = rewritten
            report["changed"] = report["changed"] or bool(rewritten)
        if drops is not None:
            report["unsupported"] = [{"provider": d.provider, "type": d.type, "at": d.path} for d in drops]
            report["changed"] = report["changed"] or bool(drops)
        if session.body is not None and session.provider is not None and target == session.format:
            # Problems of the saved body that writing it through the adapter fixes (ids Mistral rejects...),
            # and only those: what the written body still has (an invalid tool name) is not "fixed".
            fixed = _fixed(session, text)
            report["rejected"] = [{"path": p.path, "code": p.code, "message": p.message} for p in fixed]
            report["changed"] = report["changed"] or bool(fixed)
        if args.in_place:
            assert st is not None
            rewrite = report["changed"] and text.encode("utf-8") != data  # a repair that changes nothing writes nothing
            backup = replace_in_place(source, [text], data, st, args.file) if rewrite else None
            report["written"] = source if rewrite else None
            report["backup"] = backup
        elif not as_rendered:
            write_output([text], args.output)
    to_file = args.in_place or (args.output not in (None, "-"))
    print_report(report, args.report, sys.stdout if to_file else sys.stderr)
    return OK


def _repair_streamed(args: argparse.Namespace, found: Streamed, handle: IO[bytes], source: str) -> int:
    """`chatmend repair` of a large transcript, repaired and written a part at a time (`source`, the file read
    through `handle`, replaced with `--in-place` as `repair` replaces it: a backup, nothing when nothing changed)."""
    done = found.repair(_read_only(args.read_only))
    if args.in_place:
        st = os.fstat(handle.fileno())
        backup = replace_in_place(source, batched(done.chunks), handle, st, args.file,
                                  wanted=lambda: done.summary.changed, same=found.still_as_read)
    else:
        write_output(batched(done.chunks), args.output)  # stdout only once all is rendered, a file atomically
    report = summary_report(done.summary, args.file, found.format)
    if args.in_place:
        report["written"] = source if backup is not None else None
        report["backup"] = backup
    to_file = args.in_place or args.output not in (None, "-")
    print_report(report, args.report, sys.stdout if to_file else sys.stderr)
    return OK


def _open_store(args: argparse.Namespace) -> Store | None:
    """The session store FILE is (a SQLite database, a folder of sessions), or None for a session file."""
    store = None if args.file == "-" else open_store(args.file, args.fmt)
    if store is None and args.session is not None:
        raise UsageError("--session picks a session of a store (an opencode database...); FILE holds one session")
    return store


def _repair_store(args: argparse.Namespace, store: Store) -> int:
    """`chatmend repair` of a store: every session (or `--session`'s) repaired in the store, in one write after a
    backup copy (`--in-place`), or into a repaired copy (`-o OUT`); `--to` writes one session's text."""
    is_read_only = _read_only(args.read_only)
    if args.to not in (None, store.name):
        chosen = one(store, args.session)
        repairer = Repairer(is_read_only=is_read_only)
        result = repairer.repair(chosen.session.messages)
        drops = _dropping(args)
        text = "".join(_converted(args.to, chosen.session, args.model, repairer, drops))
        report = repair_report(chosen.session, result, f"{args.file} session {chosen.id}")
        if drops is not None:
            report["unsupported"] = [{"provider": d.provider, "type": d.type, "at": d.path} for d in drops]
        write_output([text], args.output)
        print_report(report, args.report, sys.stdout if args.output not in (None, "-") else sys.stderr)
        return OK
    if not args.in_place and args.output in (None, "-"):
        raise UsageError(f"{args.file}: a session store ({store.name}) is repaired in place (--in-place, after a "
                         "backup copy) or into a repaired copy (-o OUT); --to FORMAT writes one session as text")
    reports: list[dict[str, Any]] = []
    repairs = []
    for stored in select(store, args.session):
        result, write_back = stored.repair(is_read_only)
        shown = dataclasses.replace(stored.session, fixes=write_back.fixes)
        report = repair_report(shown, result, f"{args.file} session {stored.id}")
        report |= {"session": stored.id, "resume": stored.resume}
        reports.append(report)
        if write_back.changes:
            repairs.append(write_back)
    backup = None
    if args.in_place:
        if repairs:
            with signals_remove_temporary_files():
                backup = store.write_back(repairs)
    else:
        store.write_back(repairs, output=args.output)
    written = args.file if args.in_place and repairs else args.output if not args.in_place else None
    if args.report == "json":
        sys.stdout.write(json.dumps({"file": args.file, "format": store.name, "changed": bool(repairs),
                                     "written": written, "backup": backup, "sessions": reports},
                                    ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return OK
    lines = [line for report in reports for line in report_lines(report)]
    if backup:
        lines.append(printable(f"wrote {args.file} (the original is in {backup})"))
    elif written and not args.in_place:
        lines.append(printable(f"wrote the repaired copy {written}"))
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()
    return OK


def _fixed(session: Session, text: str) -> list[Problem]:
    """The saved body's problems that the body written (`text`) no longer has, counted by code."""
    assert session.body is not None and session.provider is not None
    check = adapter(session.provider).check
    before = check(session.body)
    if not before:
        return []
    lines = text.split("\n")
    try:
        written = read_lines([line + "\n" for line in lines[:-1]] + [lines[-1]], session.format,
                             max_size=sys.maxsize)  # our own output: the input's limit does not apply
    except ChatmendError:
        return before  # cannot happen: the writer writes what its reader reads
    remaining = Counter(p.code for p in (check(written.body) if written.body is not None else []))
    fixed = []
    for problem in before:
        if remaining[problem.code]:
            remaining[problem.code] -= 1
        else:
            fixed.append(problem)
    return fixed


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


def _converted(to: str, session: Session, model: str | None, repairer: Repairer,
               drops: list[Dropped] | None = None) -> Iterator[str]:
    """The session repaired by `repairer` (which has repaired it: asking again is free) as neutral JSON Lines or
    a new request body for `to`. What `to` cannot carry is an UnsupportedError naming it and where it was read,
    or, given a `drops` list, left out and listed there (`--drop-unsupported`)."""
    if to == NEUTRAL:
        return neutral.write(repairer.repair(session.messages).messages)
    if to in TRANSCRIPT_FORMATS:
        raise UsageError(f"cannot write a {to} transcript from {session.format}; "
                         "choose chatmend or a provider")

    def write() -> Iterator[str]:
        found: list[Dropped] = []
        try:
            body = adapter(to).to_request(session.messages, model=_model(to, session, model), repairer=repairer,
                                          on_unsupported=found.append if drops is not None else None)
        except UnsupportedError as exc:
            at = _read_at(session, repairer.repair(session.messages), exc.path)
            raise UnsupportedError(f"{exc.reason}{f' (read from {at})' if at else ''}", provider=exc.provider,
                                   path=exc.path, feature=exc.feature) from None
        if drops is not None:
            result = repairer.repair(session.messages)
            drops.extend(dataclasses.replace(d, path=_read_at(session, result, d.path) or d.path) for d in found)
        yield wire_json(body, indent=True)

    return write()


_MESSAGE_AT = re.compile(r"^messages\[(\d+)\]")


def _read_at(session: Session, result: RepairResult, path: str | None) -> str | None:
    """Where the repaired history's `messages[i]...` was read from in the file (`line 3`, `messages[2]`), or None
    when it is no message read (a synthetic result) or the path names none."""
    match = _MESSAGE_AT.match(path or "")
    if match is None or int(match.group(1)) >= len(result.messages):
        return None
    origin = result.origins()[int(match.group(1))]
    if origin.kind == "synthetic" or origin.message_index >= len(session.where):
        return None
    return session.where[origin.message_index]


def _dropping(args: argparse.Namespace) -> list[Dropped] | None:
    """The list `--drop-unsupported` collects what is left out in (None without it: what cannot go is an error)."""
    return [] if getattr(args, "drop_unsupported", False) else None


def _drop_lines(drops: list[Dropped], to: str) -> list[str]:
    """The report's lines on what was left out of a body written for `to`."""
    if not drops:
        return []
    return [f"  left out {plural(len(drops), 'part', 'parts')} {to} cannot carry: "
            + some(f"{d.provider}'s {d.type!r} ({d.path})" for d in drops)]


# --- convert ---------------------------------------------------------------------------------------------


def _convert(args: argparse.Namespace) -> int:
    """`chatmend convert`: the provider's request body (repaired, id-mapped) or neutral JSON Lines."""
    session = _read_one(args)
    if args.to == NEUTRAL:
        write_output(neutral.write(session.messages), args.output)  # as read: `repair` is the command that changes one
        return OK
    model = _model(args.to, session, args.model)
    repairer = Repairer(is_read_only=_read_only(args.read_only))
    result = repairer.repair(session.messages)  # the report's, and the body's: to_request finds it done
    drops = _dropping(args)
    chunks = list(_converted(args.to, session, model, repairer, drops))  # rendered: drops are known after
    write_output(chunks, args.output)
    if result.changed:
        report = repair_report(session, result, args.file)
        lines = report_lines(report)
        lines[0] = f"{report['file']}: repaired on the way to {args.to} ({session.format})"
        _print_report_lines(lines + [printable(line) for line in _drop_lines(drops or [], args.to)])
    elif drops:
        _print_report_lines([printable(line) for line in [
            f"{display(args.file)}: converted to {args.to} ({session.format})", *_drop_lines(drops, args.to)]])
    return OK


def _read_one(args: argparse.Namespace) -> Session:
    """The one session FILE holds, or, in a store, the `--session` one (or its only one)."""
    store = _open_store(args)
    if store is None:
        return read(args.file, args.fmt, max_size=args.max_json_size)
    with store:
        return one(store, args.session).session


def _print_report_lines(lines: list[str]) -> None:
    """Lines of a report on stderr (stdout holds the body)."""
    _say("".join(line + "\n" for line in lines))


# --- check -----------------------------------------------------------------------------------------------


def _check(args: argparse.Namespace) -> int:
    """`chatmend check`: `PATH: CODE: message` for each problem; exit 1 when there is any. Given a directory,
    every file under it (`FILE: PATH: CODE: message`)."""
    store = _open_store(args)
    if store is None and os.path.isdir(args.file):
        return _check_dir(args)
    if store is not None:
        with store:
            lines, rules = _check_store(store, args)
    else:
        lines, rules = _check_lines(args.file, args)
    for line in lines:
        sys.stdout.write(printable(line) + "\n")
    sys.stdout.flush()
    if lines:
        _say(f"{display(args.file)}: {plural(len(lines), 'problem', 'problems')} ({rules}); "
             "`chatmend repair` fixes what repair can\n")
        return PROBLEMS
    _say(f"{display(args.file)}: no problems ({rules})\n")
    return OK


def _check_store(store: Store, args: argparse.Namespace, sessions: list[StoredSession] | None = None,
                 ) -> tuple[list[str], str]:
    """The problem lines of every session of a store (or `--session`'s), each prefixed `session ID: `."""
    lines: list[str] = []
    rules: set[str] = set()
    for stored in sessions if sessions is not None else select(store, args.session):
        found, by = _session_lines(stored.session, args)
        lines += [f"session {stored.id}: {line}" for line in found]
        rules.add(by)
    return lines, ", ".join(sorted(rules))


def _check_lines(path: str, args: argparse.Namespace) -> tuple[list[str], str]:
    """The problem lines of one file, and the rules they are by (a provider, or the neutral rules)."""
    store = None if path == "-" else open_store(path, args.fmt)
    if store is not None:
        with store:
            return _check_store(store, args)
    if path != "-" and args.model is None and args.platform is None:
        with open_input(path) as (handle, _):
            found = streamed(handle, args.fmt, args.provider, max_size=args.max_json_size)
            if found is not None and args.provider in (None, found.provider):
                lines = found.check()
                if lines is not None:
                    return lines, found.provider  # a large transcript, checked a part at a time
    return _session_lines(read(path, args.fmt, prefer=args.provider, max_size=args.max_json_size), args)


def _session_lines(session: Session, args: argparse.Namespace) -> tuple[list[str], str]:
    """The problem lines of one session, and the rules they are by."""
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
        lines += session.problems  # the store's own (item ids), located by line
    return lines, provider or "the neutral rules"


def _files_under(folder: str) -> list[str]:
    """Every file under `folder`, recursively, in sorted order of their paths (hidden ones too)."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        found.extend(os.path.join(root, name) for name in sorted(files))
    return sorted(found, key=lambda path: os.path.relpath(path, folder).split(os.sep))


def _check_dir(args: argparse.Namespace) -> int:
    """`chatmend check DIR`: each file as `check FILE` checks it, its lines prefixed with its path; a summary on
    stderr. Exit 2 when a file cannot be read (the rest are still checked), else 1 when any has a problem."""
    paths = [p for p in _files_under(args.file) if not _beside_a_store(p)]
    if not paths:
        raise UsageError(f"{args.file}: no files to check")
    problems = with_problems = unreadable = 0
    for path in paths:
        try:
            lines, _ = _check_lines(path, args)
        except InputError as exc:
            _say(printable(exc.in_file(path)) + "\n")
            unreadable += 1
            continue
        except (UsageError, UnsupportedError, ChatmendError) as exc:
            _say(printable(f"{path}: {exc}") + "\n")
            unreadable += 1
            continue
        for line in lines:
            sys.stdout.write(printable(f"{path}: {line}") + "\n")
        problems += len(lines)
        with_problems += bool(lines)
    sys.stdout.flush()
    summary = (f"{args.file}: {plural(len(paths), 'file', 'files')} checked, "
               f"{plural(problems, 'problem', 'problems')} in {plural(with_problems, 'file', 'files')}")
    if unreadable:
        summary += f", {unreadable} could not be read"
    _say(printable(summary) + "\n")
    return BAD_INPUT if unreadable else PROBLEMS if problems else OK


def _beside_a_store(path: str) -> bool:
    """True for a SQLite database's own side file (`opencode.db-wal`, `-shm`, `-journal`): part of the store."""
    base, dash, suffix = path.rpartition("-")
    return bool(dash) and suffix in ("wal", "shm", "journal") and open_store(base) is not None


_ITEM = re.compile(r"^[a-z]+\[(\d+)\]")


def _item_line(session: Session, path: str) -> str:
    """` (line N)` for a problem in JSON Lines of a body's list, naming the line of its item."""
    match = _ITEM.match(path)
    if not match or not session.item_lines or int(match.group(1)) >= len(session.item_lines):
        return ""
    return f" (line {session.item_lines[int(match.group(1))]})"


# --- trim ------------------------------------------------------------------------------------------------


def _count(text: str) -> int:
    """A `--max-*` value: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def _trim(args: argparse.Namespace) -> int:
    """`chatmend trim`: the session without its oldest turns, in the format read; exit 1 when it cannot fit."""
    if args.max_tokens is None and args.max_messages is None:
        raise UsageError("trim needs a budget: --max-tokens N and/or --max-messages N")
    session = _read_one(args)
    target = args.to or session.format
    if target in TRANSCRIPT_FORMATS or target in store_formats():
        # A transcript is written back record by record from its own history only: a shorter one has no records.
        raise UsageError(f"cannot write a trimmed {target} transcript; use --to chatmend or a provider")
    result = trim_history(session.messages, max_tokens=args.max_tokens, max_messages=args.max_messages,
                          keep_first_user=args.keep_first_user)
    if target == session.format:
        chunks = session.write(result.kept)  # a provider body is written through its adapter (so repaired)
    elif target == NEUTRAL:
        chunks = neutral.write(result.kept)  # as kept: `repair` is the command that changes one
    else:
        trimmed = dataclasses.replace(session, messages=result.kept)
        chunks = _converted(target, trimmed, args.model, Repairer())
    write_output(chunks, args.output)
    where = session.where
    first = where[result.start] if result.dropped and result.start < len(where) else None
    line = (f"{display(args.file)}: kept {plural(len(result.kept), 'message', 'messages')} of "
            f"{len(session.messages)}, about {result.tokens} tokens")
    line += f"; dropped {len(result.dropped)} from the oldest end (kept from {first} on)" if first else \
        "; dropped nothing"
    out = sys.stdout if args.output not in (None, "-") else sys.stderr
    out.write(line + "\n")
    if not result.fits:
        sys.stderr.write(f"{display(args.file)}: the last turn alone is over the budget (kept anyway)\n")
    out.flush()
    sys.stderr.flush()
    return OK if result.fits else PROBLEMS


# --- show ------------------------------------------------------------------------------------------------


def _show(args: argparse.Namespace) -> int:
    """`chatmend show`: a readable timeline, marking what repair would change (each session of a store)."""
    store = _open_store(args)
    if store is None:
        shown = [(read(args.file, args.fmt, max_size=args.max_json_size), display(args.file))]
    else:
        with store:
            shown = [(s.session, f"{args.file} session {s.id}") for s in select(store, args.session)]
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty()
                                       and os.environ.get("NO_COLOR") is None)
    width = args.width or (shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100)
    for n, (session, name) in enumerate(shown):
        for text in ([""] if n else []) + timeline(session, name, color=color, width=max(width, 40)):
            sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return OK


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
