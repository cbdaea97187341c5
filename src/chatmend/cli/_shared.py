"""What the commands that read a session share: opening a store, and the model of a body written."""

from __future__ import annotations

import argparse

from chatmend.cli._text import UsageError
from chatmend.formats import Session, adapter
from chatmend.transcripts.stores import Store, open_store


def store_of(args: argparse.Namespace) -> Store | None:
    """The session store FILE is (a SQLite database, a folder of sessions), or None for a session file."""
    store = None if args.file == "-" else open_store(args.file, args.fmt)
    if store is None and args.session is not None:
        raise UsageError("--session picks a session of a store (an opencode database...); FILE holds one session")
    return store


def model_for(to: str, session: Session, model: str | None) -> str:
    """The model for a body written for `to`: the one given, or the file's own when it belongs to `to`."""
    if model:
        return model
    target = adapter(to)
    if session.model and (session.format == to or target.serves(session.model)):
        return session.model
    if not target.model_in_body:
        return ""  # the model is not in the body (Gemini's is in the URL)
    raise UsageError(f"a request body for {to} names its model: give it with --model")
