"""`chatmend repair` and `chatmend convert`: one repair a command, written where asked."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

from chatmend import ChatmendError, Problem, Repairer, RepairResult, UnsupportedError
from chatmend.cli._output import (
    batched,
    in_place_target,
    is_stdout,
    refuse_held_open,
    regular_file_out,
    replace_in_place,
    signals_remove_temporary_files,
    write_output,
)
from chatmend.cli._report import listed, print_report, repair_report, report_lines, summary_report
from chatmend.cli._shared import model_for, store_of
from chatmend.cli._text import OK, UsageError, display, printable, say
from chatmend.exceptions import problems_gone
from chatmend.files.bodies import wire_json
from chatmend.files.inplace import kept_bom, lock_file, write_repaired
from chatmend.files.io import open_input, read_all
from chatmend.files.session import Streamed
from chatmend.formats import (
    NEUTRAL,
    TRANSCRIPT_FORMATS,
    Session,
    adapter,
    neutral,
    read,
    read_bytes,
    read_lines,
    streamed,
)
from chatmend.providers.base import Dropped
from chatmend.repair import IsReadOnly
from chatmend.transcripts.stores import Store, one, select

_MESSAGE_AT = re.compile(r"^messages\[(\d+)\]")


def run_repair(args: argparse.Namespace) -> int:
    """`chatmend repair`: the repaired history in the same format, a report of every change."""
    if args.in_place and args.file == "-":
        raise UsageError("--in-place needs a file, not stdin")
    store = store_of(args)
    if store is not None:
        with store:
            return _repair_store(args, store)
    source = in_place_target(args.file) if args.in_place else args.file
    with open_input(source) as (handle, _):
        if args.in_place:
            lock_file(handle)  # held from the read to the rename
            refuse_held_open(source, _forced(args))
        if args.file != "-":
            found = streamed(handle, args.fmt, max_size=args.max_json_size, digest=args.in_place)
            if found is not None and args.to in (None, found.format):
                return _repair_streamed(args, found, handle, source)
            if handle.seekable():
                handle.seek(0)  # read whole below, from its first byte
        st = os.fstat(handle.fileno()) if args.file != "-" else None
        data = read_all(handle, args.max_json_size)
        session = read_bytes(data, args.fmt, name=display(args.file), max_size=args.max_json_size)
        is_read_only = read_only(args.read_only)
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
            result, chunks, drops = _repaired_for(target, session, args.model, args)
            reported = session
        bom = kept_bom(data) if target == session.format else ""
        if bom:
            chunks = itertools.chain([bom], chunks)
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
            report["unsupported"] = _unsupported(drops)
            report["changed"] = report["changed"] or bool(drops)
        if session.body is not None and session.provider is not None and target == session.format:
            # Problems of the saved body that writing it through the adapter fixes (ids Mistral rejects...),
            # and only those: what the written body still has (an invalid tool name) is not "fixed".
            fixed = _fixed(session, text)
            report["rejected"] = [{"path": p.path, "code": p.code, "message": p.message} for p in fixed]
            report["changed"] = report["changed"] or bool(fixed)
        if args.in_place:
            assert st is not None
            backup, torn = write_repaired(text, data, lambda written: replace_in_place(
                source, [written], data, st, args.file, force=_forced(args)), changed=report["changed"])
            report["written"] = source if backup is not None else None
            report["backup"] = backup
            if torn is not None:
                report["changed"] = True
                report.setdefault("store", []).append(torn)
        elif not as_rendered:
            write_output([text], args.output)
    to_file = args.in_place or not is_stdout(args.output)
    print_report(report, args.report, sys.stdout if to_file else sys.stderr)
    return OK


def _repair_streamed(args: argparse.Namespace, found: Streamed, handle: IO[bytes], source: str) -> int:
    """`chatmend repair` of a large transcript, repaired and written a part at a time (`source`, the file read
    through `handle`, replaced with `--in-place` as `repair` replaces it: a backup, nothing when nothing changed)."""
    done = found.repair(read_only(args.read_only))
    if args.in_place:
        st = os.fstat(handle.fileno())
        backup = replace_in_place(source, batched(done.chunks), handle, st, args.file, force=_forced(args),
                                  wanted=lambda: done.summary.changed, same=found.still_as_read)
    else:
        write_output(batched(done.chunks), args.output)  # stdout only once all is rendered, a file atomically
    report = summary_report(done.summary, args.file, found.format, fixes=done.summary.fixes)
    if args.in_place:
        report["written"] = source if backup is not None else None
        report["backup"] = backup
    to_file = args.in_place or not is_stdout(args.output)
    print_report(report, args.report, sys.stdout if to_file else sys.stderr)
    return OK


def _repair_store(args: argparse.Namespace, store: Store) -> int:
    """`chatmend repair` of a store: every session (or `--session`'s) repaired in the store, in one write after a
    backup copy (`--in-place`), or into a repaired copy (`-o OUT`); `--to` writes one session's text."""
    is_read_only = read_only(args.read_only)
    if args.to not in (None, store.name):
        chosen = one(store, args.session)
        result, chunks, drops = _repaired_for(args.to, chosen.session, args.model, args)
        text = "".join(chunks)
        report = repair_report(chosen.session, result, f"{args.file} session {chosen.id}")
        if drops is not None:
            report["unsupported"] = _unsupported(drops)
        write_output([text], args.output)
        print_report(report, args.report, sys.stderr if is_stdout(args.output) else sys.stdout)
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


def _forced(args: argparse.Namespace) -> bool:
    """`--force`: write in place even while another process holds the file open."""
    return bool(getattr(args, "force", False))


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
    return problems_gone(before, check(written.body) if written.body is not None else [])


def read_only(values: Iterable[str]) -> IsReadOnly | None:
    """The `--read-only` names as a predicate (None when no name was given)."""
    names = frozenset(name.strip() for value in values for name in value.split(",") if name.strip())
    if not names:
        return None
    return names.__contains__


def converted(to: str, session: Session, model: str | None, repairer: Repairer,
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
            body = adapter(to).to_request(session.messages, model=model_for(to, session, model), repairer=repairer,
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


def _repaired_for(to: str, session: Session, model: str | None, args: argparse.Namespace,
                  ) -> tuple[RepairResult, Iterator[str], list[Dropped] | None]:
    """The session repaired (`--read-only`'s tools safe to run again) and written for `to` (`converted`), and the
    list `--drop-unsupported` collects what is left out in as it is written (None without it: an error)."""
    repairer = Repairer(is_read_only=read_only(args.read_only))
    drops: list[Dropped] | None = [] if getattr(args, "drop_unsupported", False) else None
    result = repairer.repair(session.messages)  # the report's, and the body's: the writer finds it done
    return result, converted(to, session, model, repairer, drops), drops


def _unsupported(drops: list[Dropped]) -> list[dict[str, str]]:
    """What was left out of a body, for the report."""
    return [{"provider": d.provider, "type": d.type, "at": d.path} for d in drops]


def drop_lines(drops: list[Dropped], to: str) -> list[str]:
    """The report's lines on what was left out of a body written for `to`."""
    return listed(drops, "left out", ("part", "parts"), f" {to} cannot carry",
                  lambda d: f"{d.provider}'s {d.type!r} ({d.path})")


def run_convert(args: argparse.Namespace) -> int:
    """`chatmend convert`: the provider's request body (repaired, id-mapped) or neutral JSON Lines."""
    session = read_one(args)
    if args.to == NEUTRAL:
        write_output(neutral.write(session.messages), args.output)  # as read: `repair` is the command that changes one
        return OK
    result, written, drops = _repaired_for(args.to, session, model_for(args.to, session, args.model), args)
    chunks = list(written)  # rendered: drops are known after
    write_output(chunks, args.output)
    if result.changed:
        report = repair_report(session, result, args.file)
        lines = report_lines(report)
        lines[0] = f"{report['file']}: repaired on the way to {args.to} ({session.format})"
        print_report_lines(lines + [printable(line) for line in drop_lines(drops or [], args.to)])
    elif drops:
        print_report_lines([printable(line) for line in [
            f"{display(args.file)}: converted to {args.to} ({session.format})", *drop_lines(drops, args.to)]])
    return OK


def read_one(args: argparse.Namespace) -> Session:
    """The one session FILE holds, or, in a store, the `--session` one (or its only one)."""
    store = store_of(args)
    if store is None:
        return read(args.file, args.fmt, max_size=args.max_json_size)
    with store:
        return one(store, args.session).session


def print_report_lines(lines: list[str]) -> None:
    """Lines of a report on stderr (stdout holds the body)."""
    say("".join(line + "\n" for line in lines))
