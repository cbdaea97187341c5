"""`chatmend check`: a file, a folder or a store, reported in the provider's words."""

from __future__ import annotations

import argparse
import os
import sys

from chatmend import ChatmendError, Repairer, UnsupportedError
from chatmend.cli._report import plural
from chatmend.cli._shared import model_for, store_of
from chatmend.cli._text import BAD_INPUT, OK, PROBLEMS, UsageError, display, printable, say
from chatmend.files.io import open_input
from chatmend.files.problems import body_problems, neutral_problems
from chatmend.formats import InputError, Session, adapter, read, streamed
from chatmend.transcripts.stores import Store, StoredSession, open_store, select

RULES_PAGE = "docs/rules.md"
"""The page of the repository (and of the docs site, `rules/`) where every rule id has its heading."""


def rule_anchor(code: str) -> str:
    """Where rule `code` is explained: its heading on the rules page (`docs/rules.md#an6`)."""
    return f"{RULES_PAGE}#{code.lower()}"


def run_check(args: argparse.Namespace) -> int:
    """`chatmend check`: `PATH: CODE: message` for each problem; exit 1 when there is any. Given a directory,
    every file under it (`FILE: PATH: CODE: message`). With `--format json`, one JSON document (`_check_json`)."""
    if getattr(args, "output_format", "text") == "json":
        from chatmend.cli._check_json import run_check_json

        return run_check_json(args)
    store = store_of(args)
    if store is None and os.path.isdir(args.file):
        return _check_dir(args)
    if store is not None:
        with store:
            lines, rules = store_problem_lines(store, args)
    else:
        lines, rules, session = _checked(args.file, args)
    for line in lines:
        sys.stdout.write(printable(line) + "\n")
    sys.stdout.flush()
    if lines:
        say(f"{printable(display(args.file))}: {plural(len(lines), 'problem', 'problems')} ({rules}); "
            f"{_promise(session, args, len(lines)) if store is None else '`chatmend repair` fixes what repair can'}\n")
        return PROBLEMS
    say(f"{printable(display(args.file))}: no problems ({rules})\n")
    return OK


def _promise(session: Session | None, args: argparse.Namespace, count: int) -> str:
    """What `check` says `repair` does about the problems of a file (`session`, as read whole; None for one
    checked a part at a time): only what `repair` fixes (#43). A provider's body is asked of its adapter
    (`repair_fixes`); other sessions are repaired by the neutral rules they are checked by."""
    if session is None or session.body is None or session.provider is None \
            or (args.provider or session.provider) != session.provider:
        return "`chatmend repair` fixes what repair can"
    fixed = len(adapter(session.provider).repair_fixes(session.body))
    if not fixed:
        return "`chatmend repair` cannot fix them"
    return "`chatmend repair` fixes them" if fixed >= count else f"`chatmend repair` fixes {fixed} of them"


def store_problem_lines(store: Store, args: argparse.Namespace, sessions: list[StoredSession] | None = None,
                 ) -> tuple[list[str], str]:
    """The problem lines of every session of a store (or `--session`'s), each prefixed `session ID: `."""
    lines: list[str] = []
    rules: set[str] = set()
    for stored in sessions if sessions is not None else select(store, args.session):
        found, by = _session_lines(stored.session, args)
        lines += [f"session {stored.id}: {line}" for line in found]
        rules.add(by)
    return lines, ", ".join(sorted(rules))


def file_problem_lines(path: str, args: argparse.Namespace) -> tuple[list[str], str]:
    """The problem lines of one file, and the rules they are by (a provider, or the neutral rules)."""
    lines, rules, _ = _checked(path, args)
    return lines, rules


def _checked(path: str, args: argparse.Namespace) -> tuple[list[str], str, Session | None]:
    """`file_problem_lines`, and the session when it was read whole (None for a store, or a transcript checked a part
    at a time)."""
    store = None if path == "-" else open_store(path, args.fmt)
    if store is not None:
        with store:
            return (*store_problem_lines(store, args), None)
    if path != "-" and args.model is None and args.platform is None:
        with open_input(path) as (handle, _):
            found = streamed(handle, args.fmt, args.provider, max_size=args.max_json_size)
            if found is not None and args.provider in (None, found.provider):
                lines = found.check()
                if lines is not None:
                    return lines, found.provider, None  # a large transcript, checked a part at a time
    session = read(path, args.fmt, prefer=args.provider, max_size=args.max_json_size)
    return (*_session_lines(session, args), session)


def _session_lines(session: Session, args: argparse.Namespace) -> tuple[list[str], str]:
    """The problem lines of one session, and the rules they are by."""
    provider = args.provider or session.provider
    if args.platform is not None and (provider is None or args.platform not in adapter(provider).platforms):
        raise UsageError(f"--platform {args.platform} is not a platform of {provider or 'the neutral rules'}")
    context = {"model": args.model, "platform": args.platform}
    lines: list[str] = []
    if provider is not None and provider == session.provider and session.body is not None:
        lines = body_problems(session, **context)
    else:
        repairer = Repairer()
        lines = neutral_problems(session, repairer.repair(session.messages))
        if provider is not None:
            # the platform's writing rules too (Gemini on Vertex sends no call ids)
            options = {"platform": args.platform} if args.platform else {}
            try:
                model = model_for(provider, session, args.model or "unknown-model")
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


def files_to_check(folder: str) -> list[str]:
    """The files `check DIR` checks: every file under it but a database's side files (a UsageError for none)."""
    paths = [p for p in _files_under(folder) if not _beside_a_store(p)]
    if not paths:
        raise UsageError(f"{folder}: no files to check")
    return paths


def check_file(path: str, args: argparse.Namespace) -> tuple[list[str], UsageError | ChatmendError | None]:
    """A file of a directory checked as `check FILE` checks it: its problem lines, or the error that keeps it from
    being read (the directory's other files are still checked)."""
    try:
        return file_problem_lines(path, args)[0], None
    except (UsageError, ChatmendError) as exc:
        return [], exc


def _check_dir(args: argparse.Namespace) -> int:
    """`chatmend check DIR`: each file as `check FILE` checks it, its lines prefixed with its path; a summary on
    stderr. Exit 2 when a file cannot be read (the rest are still checked), else 1 when any has a problem."""
    paths = files_to_check(args.file)
    problems = with_problems = unreadable = 0
    for path in paths:
        lines, error = check_file(path, args)
        if error is not None:
            say(printable(error.in_file(path) if isinstance(error, InputError) else f"{path}: {error}") + "\n")
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
    say(printable(summary) + "\n")
    return BAD_INPUT if unreadable else PROBLEMS if problems else OK


def _beside_a_store(path: str) -> bool:
    """True for a SQLite database's own side file (`opencode.db-wal`, `-shm`, `-journal`): part of the store."""
    base, dash, suffix = path.rpartition("-")
    return bool(dash) and suffix in ("wal", "shm", "journal") and open_store(base) is not None

