"""`chatmend trim` and `chatmend show`."""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys

from chatmend import Repairer
from chatmend.cli._output import write_output
from chatmend.cli._repair import converted, read_one
from chatmend.cli._report import plural
from chatmend.cli._shared import store_of
from chatmend.cli._text import OK, PROBLEMS, UsageError, display
from chatmend.cli._timeline import timeline
from chatmend.formats import NEUTRAL, TRANSCRIPT_FORMATS, formats, neutral, read, store_formats
from chatmend.transcripts.stores import select
from chatmend.trim import trim_history


def run_trim(args: argparse.Namespace) -> int:
    """`chatmend trim`: the session without its oldest turns, in the format read; exit 1 when it cannot fit."""
    if args.max_tokens is None and args.max_messages is None:
        raise UsageError("trim needs a budget: --max-tokens N and/or --max-messages N")
    session = read_one(args)
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
        chunks = converted(target, trimmed, args.model, Repairer())
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


def run_show(args: argparse.Namespace) -> int:
    """`chatmend show`: a readable timeline, marking what repair would change (each session of a store)."""
    store = store_of(args)
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


def run_formats(args: argparse.Namespace) -> int:
    """`chatmend formats`: every format the commands read, the registered providers' among them."""
    sys.stdout.write("formats (--from; detected from content when not given):\n"
                     + "".join(f"  {name:<17} {text}\n" for name, text in formats().items()))
    return OK
