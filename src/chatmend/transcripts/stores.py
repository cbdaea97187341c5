"""Session stores that are not one text file: a SQLite database (or a folder) holding many sessions, read as
neutral sessions and written back by changes the store applies itself, never as text.

A text transcript's `Session` writes itself back as chunks of text. A store's sessions cannot: what repair
changes is a few rows (a tool part's `state`, an item appended), applied in one transaction after a backup copy
while no other process writes. So a store gives each session's repair as *changes*, and the store applies
all of them at once (`Store.write_back`).

A store module registers its class with `@register`; `open_store(path)` asks each registered class whether it
`recognizes` the path. `chatmend doctor` finds the default locations of every registered store with
`default_paths`. A module that reads a format of session files declares it as `FORMAT` (a `FileFormat`: its name,
description, readers and checks, where its checks run): the format table detects and reads it from there. A tool
whose sessions are such files is registered with `register_files(SessionFiles(...))`: where they are by default
and how a session is resumed (`_locations` does it from the names each module gives).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, TypeVar

from chatmend import ChatMessage, RepairResult
from chatmend.files.io import InputError
from chatmend.files.session import Session
from chatmend.repair import IsReadOnly

__all__ = [
    "FILES", "STORES", "FileFormat", "SessionFiles", "Store", "StoredSession", "WriteBack", "any_record",
    "data_home", "existing_files", "file_formats", "home", "one", "open_store", "register", "register_files",
    "registered", "registered_files", "select", "store_modules", "store_session", "tool_locations",
]


@dataclass
class WriteBack:
    """What a session's repair changes in its store: opaque to everyone but the store that made it."""

    changes: list[Any] = field(default_factory=list)
    """The store's own changes (rows to update or insert, files to rewrite)."""
    fixes: list[str] = field(default_factory=list)
    """What the store fixed beyond the history (a tool part left `running`), for the report."""
    checks: list[Any] = field(default_factory=list)
    """What the store checks again before it writes `changes` (the session's rows as they were read)."""
    refused: str | None = None
    """Why the store left these changes unwritten (the session changed since it was read), once written back."""


@dataclass
class StoredSession:
    """One session of a store: its neutral history and how to repair it in the store."""

    id: str
    """The tool's own id of the session (what its resume command takes)."""
    title: str
    """Its title, as the tool shows it ("" when it has none)."""
    modified: float
    """When it last changed, in seconds since the epoch."""
    session: Session
    """The neutral history, located (`message msg_X part prt_Y`), with the provider whose rules apply."""
    repair: Callable[[IsReadOnly | None], tuple[RepairResult, WriteBack]]
    """The repair and what it changes in the store (nothing is written until `Store.write_back`)."""
    resume: str
    """The command that resumes it in its tool (`opencode --session ID`)."""


class Store(ABC):
    """A database or folder some tool keeps its sessions in."""

    name: ClassVar[str]
    """The format's name, as `--from` spells it."""
    tool: ClassVar[str]
    """The tool, as people call it (`opencode`)."""
    description: ClassVar[str]
    """One line for `--help`: what and where."""

    def __init__(self, path: str) -> None:
        self.path = path

    @classmethod
    @abstractmethod
    def recognizes(cls, path: str) -> bool:
        """True when `path` is this store (read only enough of it to tell)."""

    @classmethod
    def default_paths(cls, env: Mapping[str, str]) -> list[str]:
        """Where the tool keeps this store by default, honouring its environment variables (`env`: the
        process environment); paths that do not exist are left out."""
        return []

    @abstractmethod
    def sessions(self) -> list[StoredSession]:
        """Every session in the store, oldest first (an InputError, located, for what cannot be read)."""

    @abstractmethod
    def in_use(self) -> str | None:
        """Why the store is in use right now (a running tool holds its lock), or None."""

    @abstractmethod
    def write_back(self, repairs: Sequence[WriteBack], *, output: str | None = None) -> str | None:
        """Apply every repair at once: in place after a backup copy (returns the backup's name), or into a new
        copy of the store at `output` (the store itself untouched; returns None). Refuses (InputError, nothing
        written) while the store is in use or when it changed since it was read."""

    def close(self) -> None:  # noqa: B027
        """Let go of what the store holds open."""

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_S = TypeVar("_S", bound=Store)


def home(env: Mapping[str, str]) -> str:
    """The user's home folder: `$HOME` of the environment `env`, else the process's."""
    return env.get("HOME") or os.path.expanduser("~")


def data_home(env: Mapping[str, str]) -> str:
    """Where tools of the XDG layout keep their data: `$XDG_DATA_HOME`, else `~/.local/share`."""
    return env.get("XDG_DATA_HOME") or os.path.join(home(env), ".local", "share")


def tool_locations(env: Mapping[str, str] | None, variable: str, dotdir: str, folder: str) -> list[Path]:
    """Where an agent tool keeps its sessions: `folder` in its own folder, `$variable` when set, else `~/<dotdir>`
    (`env`: the process environment when None; its `$HOME` first)."""
    env = os.environ if env is None else env
    chosen = env.get(variable, "").strip()
    root = Path(chosen) if chosen else Path(home(env)) / dotdir
    return [root / folder]


def existing_files(paths: Iterable[str]) -> list[str]:
    """The paths that are files: a store's default locations that are there."""
    return [p for p in paths if os.path.isfile(p)]

@dataclass(frozen=True)
class SessionFiles:
    """A tool whose sessions are files, one a session, that `chatmend.formats.read` reads."""

    format: str
    """The readers' format name (`claude_code`)."""
    tool: str
    """The tool, as people call it (`Claude Code`)."""
    find: Callable[[Mapping[str, str]], list[str]]
    """The session files under the tool's default locations, given the process environment (its variables
    honoured: `CLAUDE_CONFIG_DIR`, `CODEX_HOME`...)."""
    session_id: Callable[[str], str]
    """A session file's id, as the tool's resume command takes it."""
    resume: Callable[[str], str]
    """The command that resumes a session file's session in its tool (`claude --resume ID`); picklable (a
    module-level function, or a `functools.partial` of one), as doctor's workers get it."""
    detect: bool = False
    """True when the tool's files come in more than one format (Roo Code's: Cline's, then its version 2): each is
    read as what it holds, not as `format`."""


@dataclass(frozen=True)
class FileFormat:
    """A format of session files (`--from NAME`), declared as `FORMAT` by the module that reads it: all the format
    table knows of it. JSON Lines when it has `read_lines`, else one JSON document."""

    name: str
    """The format's name, as `--from` spells it (the module's own name)."""
    description: str
    """One line for `--help`: what and where."""
    order: int
    """Where its checks run among the other formats' (lower first): the first whose check holds names the file."""
    read_lines: Callable[[Iterable[str]], Session] | None = None
    """The reader of its JSON Lines; None for a format that is one JSON document."""
    read_document: Callable[[Any, str], Session] | None = None
    """The reader of one JSON document of it (the parsed value, and the text written back when nothing changes)."""
    holds_records: Callable[[Sequence[Mapping[str, Any]]], bool] | None = None
    """True when JSON Lines whose first records (objects) are these are of this format."""
    holds_document: Callable[[object], bool] | None = None
    """True when a JSON document is of this format."""

    @property
    def document(self) -> bool:
        """True for a format that is one JSON document (read whole, written back spliced), even on one line."""
        return self.read_lines is None


def any_record(is_record: Callable[[Mapping[str, Any]], bool]) -> Callable[[Sequence[Mapping[str, Any]]], bool]:
    """A `FileFormat.holds_records` for a format some record of which only it has (`is_record` tells one)."""
    return lambda records: any(is_record(r) for r in records)


def file_formats() -> dict[str, FileFormat]:
    """Every format of session files the store modules declare, by name, in the order their checks run."""
    declared = [m.FORMAT for m in store_modules() if isinstance(getattr(m, "FORMAT", None), FileFormat)]
    return {f.name: f for f in sorted(declared, key=lambda f: f.order)}


FILES: list[SessionFiles] = []
"""Every registered tool whose sessions are files."""


def register_files(files: SessionFiles) -> SessionFiles:
    """Add a tool whose sessions are files to the registry `chatmend doctor` scans (one entry per format and tool:
    pi's format is also OpenClaw's)."""
    FILES[:] = [f for f in FILES if (f.format, f.tool) != (files.format, files.tool)] + [files]
    return files


def registered_files() -> list[SessionFiles]:
    """The registered tools whose sessions are files (the built-in ones first: `_locations` registers them)."""
    importlib.import_module("chatmend.transcripts._locations")
    return list(FILES)


STORES: list[type[Store]] = []
"""Every registered store class, in the order registered."""


def register(cls: type[_S]) -> type[_S]:
    """Add a store class to the registry (a class decorator): `open_store` and `chatmend doctor` then know it."""
    if cls not in STORES:
        STORES.append(cls)
    return cls


def store_modules() -> list[ModuleType]:
    """Every store module of `chatmend.transcripts`, imported (a store class registers itself on import, a file
    format is the module's `FORMAT`): a new store joins by being there, with no list to edit. A store module names
    its format (`NAME`); the helpers the stores share (this module, `sqlite_stores`, the private ones) name none."""
    import chatmend.transcripts as package

    imported = [importlib.import_module(f"{package.__name__}.{module.name}")
                for module in pkgutil.iter_modules(package.__path__) if not module.name.startswith("_")]
    return [module for module in imported if hasattr(module, "NAME")]


def registered() -> list[type[Store]]:
    """The registered store classes (the built-in ones imported first)."""
    store_modules()
    return list(STORES)


def open_store(path: str, fmt: str = "auto") -> Store | None:
    """The store at `path`, or None when no registered store recognizes it (`fmt`: a store's name, or `auto`).

    A directory or a file that is not a store is None; a file a store recognizes but cannot read is an
    InputError.
    """
    if path == "-" or not os.path.exists(path):
        return None
    for cls in registered():
        if fmt in ("auto", cls.name) and cls.recognizes(path):
            return cls(path)
    if any(fmt == cls.name for cls in STORES):
        raise InputError(f"not a session store of format {fmt!r} (a database or folder of sessions)")
    return None


def store_session(format: str, provider: str, messages: list[ChatMessage], where: list[str],
                  model: str | None = None, warnings: Sequence[str] = ()) -> Session:
    """The neutral Session of a stored session: it is written back only by its store (`repair --in-place` or
    `-o COPY`); as text, with `--to chatmend` or a provider."""

    def write(history: Sequence[ChatMessage]) -> Iterator[str]:
        raise InputError(f"a session of a {format} store is written back into its store (repair --in-place, "
                         "or -o COPY for a repaired copy); use --to chatmend or a provider for text")

    return Session(format=format, messages=messages, where=where, write=write, provider=provider, model=model,
                   warnings=list(warnings))


def select(store: Store, wanted: str | None) -> list[StoredSession]:
    """The store's sessions, or only the one whose id is `wanted` (an InputError naming the ids there are)."""
    sessions = store.sessions()
    if not sessions:
        raise InputError(f"no sessions in this {store.name} store")
    if wanted is None:
        return sessions
    chosen = [s for s in sessions if s.id == wanted]
    if not chosen:
        ids = ", ".join(s.id for s in sessions[-8:])
        raise InputError(f"no session {wanted!r} here; expected one of: {ids}"
                         + (f" (and {len(sessions) - 8} older)" if len(sessions) > 8 else ""))
    return chosen


def one(store: Store, wanted: str | None) -> StoredSession:
    """The one session a command that writes a single history works on: `wanted`, or the store's only one."""
    sessions = select(store, wanted)
    if len(sessions) > 1:
        ids = ", ".join(s.id for s in sessions[-8:])
        raise InputError(f"{len(sessions)} sessions in this {store.name} store; say which with --session ID "
                         f"(the latest: {ids})")
    return sessions[0]
