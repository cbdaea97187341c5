"""`chatmend doctor`: find every saved session of every supported tool, say which would be refused, and repair
them where they lie.

With no paths, `doctor` scans the default locations of every registered tool (`transcripts.stores`: the
tools whose sessions are files register `SessionFiles`, the databases and folders register a `Store` class),
honouring their environment variables (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `OPENCODE_DB`, `XDG_DATA_HOME`...).
Given paths, it scans those: a session file, a store, or a folder (every session file and store under it).

Each session is checked as `chatmend check` checks it; with `fix=True` a broken one is repaired in place
after a backup (a file: atomically, refusing when it changed meanwhile; a store: in one write), and told how to
resume in its tool. A session in use (modified in the last minute, or its database locked by the running tool)
is reported and left alone unless `force=True`. Files are scanned in parallel by a process pool, one file (or
store) a task, so memory is bounded by the largest one, not by their number.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import IO, Any, Literal

from chatmend import ChatmendError, Repairer, RepairResult
from chatmend.files.inplace import (
    final_target,
    kept_bom,
    lock_file,
    open_elsewhere,
    refuse_hard_links,
    replace_file,
    write_repaired,
)
from chatmend.files.io import Chunk
from chatmend.files.problems import as_sent, body_problems, neutral_problems
from chatmend.files.session import RepairSummary, Streamed
from chatmend.formats import InputError, Session, read_bytes, streamed
from chatmend.providers.words import provider_words
from chatmend.transcripts.sqlite_stores import DatabaseLocked, SqliteStore, is_sqlite
from chatmend.transcripts.stores import (
    SessionFiles,
    Store,
    StoredSession,
    open_store,
    registered,
    registered_files,
)

__all__ = ["IN_USE_SECONDS", "Finding", "Target", "doctor", "scan", "targets"]

IN_USE_SECONDS = 60.0
"""A session modified this recently is taken to be in use by its tool."""

Status = Literal["ok", "broken", "fixed", "in use", "unreadable", "empty"]


@dataclass(frozen=True)
class Target:
    """One unit of work: a session file or a store, and what it is."""

    path: str
    kind: Literal["file", "store"]
    tool: str
    """The tool, as people call it ("" when a file given by path is read as whatever it holds)."""
    format: str = "auto"
    """The format to read it as (`auto`: detected)."""
    resume: Callable[[str], str] | None = None
    """The command that resumes a session file's session in its tool (None: not known)."""
    session_id: Callable[[str], str] | None = None
    """How a file's session id is found (None: its name without extension)."""


@dataclass
class Finding:
    """What doctor found of one session (picklable: workers send these back)."""

    tool: str
    format: str
    path: str
    session: str
    """The session's id in its tool."""
    title: str
    modified: float
    """When it last changed, in seconds since the epoch."""
    status: Status
    problems: list[str] = field(default_factory=list)
    """What `chatmend check` says of it (or why it cannot be read), located."""
    said: list[str] = field(default_factory=list)
    """What its provider would answer, in the provider's own words (its 400's sentences), where known."""
    resume: str = ""
    """How to resume it in its tool."""
    backup: str | None = None
    """Where the original is, once fixed."""
    changes: list[str] = field(default_factory=list)
    """What the fix changed (the repair report's lines)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def targets(paths: Sequence[str] = (), *, env: Mapping[str, str] | None = None) -> list[Target]:
    """What to scan: the default locations of every registered tool (no `paths`), or the given paths."""
    found: list[Target] = []
    if not paths:
        environ = _env(env)
        for files in registered_files():
            found += [_file_target(p, files) for p in files.find(environ)]
        for cls in registered():
            found += [Target(p, "store", cls.tool) for p in cls.default_paths(environ)]
        return _unique(found)
    by_format = {f.format: f for f in registered_files()}
    for path in paths:
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file or directory")
        store = _store_target(path)
        if store is not None:
            found.append(store)
        elif os.path.isdir(path):
            found += _under(path, by_format)
        else:
            found.append(Target(path, "file", ""))
    return _unique(found)


def _unique(found: list[Target]) -> list[Target]:
    seen: set[str] = set()
    out = []
    for target in found:
        key = os.path.realpath(target.path)
        if key not in seen:
            seen.add(key)
            out.append(target)
    return out


def _store_target(path: str) -> Target | None:
    """The store at `path` as a target, or None when there is none; a database locked past the busy timeout is a
    store of a tool not known yet (scanned, it says it is in use), not an error."""
    try:
        store = open_store(path)
    except DatabaseLocked:
        return Target(path, "store", "")
    if store is None:
        return None
    store.close()
    return Target(path, "store", store.tool)


def _file_target(path: str, files: SessionFiles) -> Target:
    return Target(path, "file", files.tool, "auto" if files.detect else files.format, files.resume, files.session_id)


_SIDE_FILES = ("-wal", "-shm", "-journal")


def _under(folder: str, by_format: Mapping[str, SessionFiles]) -> list[Target]:
    """Every session file (`.jsonl`, `.json`) and store under `folder`; backups and a database's side files are
    not sessions."""
    found: list[Target] = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        kept = []
        for d in dirs:
            store = _store_target(os.path.join(root, d))
            if store is None:
                kept.append(d)
            else:
                found.append(store)
        dirs[:] = kept
        for name in sorted(names):
            path = os.path.join(root, name)
            if ".bak" in name or name.endswith(_SIDE_FILES) or name.startswith("."):
                continue
            if is_sqlite(path):
                database = _store_target(path)
                if database is not None:
                    found.append(database)
            elif name.endswith((".jsonl", ".json")):
                found.append(Target(path, "file", ""))
    return found


def scan(target: Target, *, fix: bool = False, force: bool = False, now: float | None = None) -> list[Finding]:
    """Check one target (and repair it, with `fix`); never raises for what a file holds."""
    now = time.time() if now is None else now
    if target.kind == "store":
        return _scan_store(target, fix, force, now)
    return [_scan_file(target, fix, force, now)]


def _scan_file(target: Target, fix: bool, force: bool, now: float) -> Finding:
    path = target.path
    try:
        real = final_target(path)  # a symlink's target is what is read, locked and replaced; the link stays
        st = os.stat(real)
    except (OSError, InputError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return Finding(target.tool, target.format, path, "", "", 0.0, "unreadable", [f"{path}: {reason}"])
    session_id = target.session_id(path) if target.session_id else os.path.splitext(os.path.basename(path))[0]
    finding = Finding(target.tool, target.format, path, session_id, "", st.st_mtime, "ok",
                      resume=target.resume(path) if target.resume else "")
    if st.st_size == 0:
        finding.status = "empty"  # a session its tool created and never wrote to: nothing to send, nothing broken
        return finding
    try:
        with open(real, "rb") as handle:
            busy = _locked(handle) if fix else None  # held from the read to the rename
            found = streamed(handle, target.format, digest=fix)
            if found is not None:
                return _scan_streamed(finding, found, handle, st, fix, force, now, real, busy)
            handle.seek(0)
            data = handle.read()
            if not data.strip():
                finding.status = "empty"
                return finding
            session = read_bytes(data, target.format, name=path)
            finding.format = session.format
            finding.tool = finding.tool or _tool_of(session.format)
            result = as_sent(session, Repairer().repair(session.messages))
            is_body = session.body is not None and session.provider is not None
            # a body is judged as `check` judges it, by its provider's rules (ids Mistral refuses...)
            finding.problems = body_problems(session) if is_body else neutral_problems(session, result)
            finding.said = _said(session, result)
            broken = bool(finding.problems) if is_body else result.changed
            text: str | None = None
            if not broken and (session.warnings or session.problems):
                # a store's own fix beyond the history (Gemini CLI's response stored twice), or a torn last line
                # left out: only its text says
                repaired, text, fixes = _repaired_text(session, data)
                if text.encode("utf-8") == data:
                    return finding
                finding.problems += session.problems + session.warnings
            elif not broken:
                return finding
            if _left_alone(finding, st, fix, force, now, real, busy):
                return finding
            if text is None:
                repaired, text, fixes = _repaired_text(session, data)
            backup, torn = write_repaired(text, data, lambda written: _replace(real, [written], data, st, force))
            if backup is not None:
                finding.backup, finding.status = backup, "fixed"
                finding.changes = _changes(repaired, fixes) + ([torn] if torn else [])
    except (ChatmendError, OSError, UnicodeDecodeError) as exc:
        message = exc.in_file(path) if isinstance(exc, InputError) else f"{path}: {exc}"
        finding.status = "unreadable" if finding.status == "ok" else finding.status
        finding.problems = [*finding.problems, message]
    return finding


def _repaired_text(session: Session, data: bytes) -> tuple[RepairResult, str, list[str]]:
    """The repair of a file read whole, its text, as `chatmend repair --in-place` writes it, and what it says
    beyond the repair: a provider's body is repaired in its own format (the items repair leaves alone kept as they
    were, those written anew named), any other file rewritten."""
    said: list[str] = []
    if session.repair_in_format is None:
        repaired, chunks = session.repaired(None)
    else:
        done = session.repair_in_format(None)
        repaired, chunks = done.result, done.chunks
        said = [f"wrote anew {', '.join(done.rewritten)}"] if done.rewritten else []
    text = kept_bom(data) + "".join(chunks)  # (a store's fixes fill as its text is written)
    return repaired, text, [*session.fixes, *said]


def _locked(handle: IO[bytes]) -> str | None:
    """Lock a session file about to be fixed against another chatmend run; why it is in use when another holds
    the lock."""
    try:
        lock_file(handle)
    except InputError as exc:
        return str(exc).split(";")[0]
    return None


def _left_alone(finding: Finding, st: os.stat_result, fix: bool, force: bool, now: float, path: str,
                busy: str | None) -> bool:
    """Mark a broken session so (or in use, unless `force`: its tool wrote to it in the last minute, another
    process holds it open, another chatmend run holds its lock); True when it is to be left as it is: in use, or
    not being fixed."""
    finding.status = "broken"
    if busy is not None:  # another chatmend run is writing it: never two at once, forced or not
        finding.status = "in use"
        finding.problems.append(busy)
        return True
    if force:
        return not fix
    if now - st.st_mtime >= IN_USE_SECONDS:
        busy = open_elsewhere(path)
    if busy is not None or now - st.st_mtime < IN_USE_SECONDS:
        finding.status = "in use"
        if busy is not None:
            finding.problems.append(busy)
        return True
    return not fix


def _scan_streamed(finding: Finding, found: Streamed, handle: IO[bytes], st: os.stat_result, fix: bool, force: bool,
                   now: float, path: str, busy: str | None) -> Finding:
    """`_scan_file` of a session read a part at a time (a large Claude Code transcript: memory well under its
    size), repaired in place as `chatmend repair --in-place` repairs it."""
    finding.format = found.format
    finding.tool = finding.tool or _tool_of(found.format)
    finding.problems, summary = found.findings()
    finding.said = _said_of(found.provider, summary)
    if not summary.changed or _left_alone(finding, st, fix, force, now, path, busy):
        return finding
    done = found.repair(None)
    finding.backup = _replace(path, done.chunks, handle, st, force, same=found.still_as_read)
    finding.status = "fixed"
    finding.changes = _changes(done.summary, done.summary.fixes)
    return finding


def _said(session: Session, result: RepairResult) -> list[str]:
    """The 400 the session's provider would answer, in its words, for what repair changes."""
    return _said_of(session.provider or "", RepairSummary.of(session.messages, session.where, result))


def _said_of(provider: str, summary: RepairSummary) -> list[str]:
    """`_said` of a repair summed up."""
    unanswered = [*summary.interrupted_as_read, *(call_id or "" for _, call_id in summary.moved)]
    return provider_words(provider, unanswered=unanswered, orphans=[call_id or "" for _, call_id in summary.notes],
                          duplicates=[old for _, old, _ in summary.renamed if old])


def _tool_of(fmt: str) -> str:
    for files in registered_files():
        if files.format == fmt:
            return files.tool
    return fmt


def _replace(path: str, chunks: Iterable[Chunk], data: bytes | IO[bytes], st: os.stat_result, force: bool, *,
             same: Callable[[], bool] | None = None) -> str:
    """`path` (a symlink's target) replaced as `repair --in-place` replaces it (`files.inplace.replace_file`:
    hard links refused, a backup, refused when it changed since it was read or another process holds it open
    unless `force`, a killed run's temporary files swept)."""
    refuse_hard_links(path, os.stat(path))
    backup = replace_file(path, chunks, data, st, force=force, same=same)
    assert backup is not None  # no `wanted`: the file is always replaced
    return backup


def _changes(result: Any, fixes: Sequence[str]) -> list[str]:
    out = []
    if result.interrupted:
        out.append(f"answered {len(result.interrupted)} interrupted "
                   f"{'call' if len(result.interrupted) == 1 else 'calls'}")
    for name in ("moved", "notes", "renamed", "dropped"):
        if getattr(result, name):
            out.append(f"{name}: {len(getattr(result, name))}")
    return out + list(fixes)


def _scan_store(target: Target, fix: bool, force: bool, now: float) -> list[Finding]:
    try:
        store = open_store(target.path)
    except DatabaseLocked as exc:
        return [Finding(target.tool, "", target.path, "", "", 0.0, "in use", [str(exc).split(";")[0]])]
    except (ChatmendError, OSError) as exc:
        return [Finding(target.tool, "", target.path, "", "", 0.0, "unreadable", [f"{target.path}: {exc}"])]
    if store is None:
        return [Finding(target.tool, "", target.path, "", "", 0.0, "unreadable",
                        [f"{target.path}: no longer a session store"])]
    with store:
        return _store_findings(store, fix, force, now)


def _store_findings(store: Store, fix: bool, force: bool, now: float) -> list[Finding]:
    try:
        sessions = store.sessions()
    except (ChatmendError, OSError) as exc:
        message = exc.in_file(store.path) if isinstance(exc, InputError) else f"{store.path}: {exc}"
        return [Finding(store.tool, store.name, store.path, "", "", 0.0, "unreadable", [message])]
    busy = store.in_use()
    findings: list[Finding] = []
    repairs = []
    fixing: list[tuple[Finding, StoredSession]] = []
    for stored in sessions:
        finding = Finding(store.tool, store.name, store.path, stored.id, stored.title, stored.modified, "ok",
                          resume=stored.resume)
        findings.append(finding)
        try:
            result, write_back = stored.repair(None)
        except ChatmendError as exc:
            finding.status, finding.problems = "broken", [f"{store.path}: session {stored.id}: {exc}"]
            continue
        finding.problems = neutral_problems(stored.session, result)
        finding.said = _said(stored.session, result)
        if not result.changed:
            continue
        finding.status = "broken"
        if (busy or now - stored.modified < IN_USE_SECONDS) and not force:
            finding.status = "in use"
            if busy:
                finding.problems.append(busy)
            continue
        if fix and write_back.changes:
            repairs.append(write_back)
            fixing.append((finding, stored))
            finding.changes = _changes(result, write_back.fixes)
    if repairs:
        try:
            # a database writes every session it can: one the tool wrote to since it was read is left in use
            backup = store.write_back(repairs, partial=True) if isinstance(store, SqliteStore) else \
                store.write_back(repairs)
        except (ChatmendError, OSError) as exc:
            locked = isinstance(exc, InputError) and "locked" in str(exc)
            for finding, _ in fixing:
                finding.problems.append(str(exc).split(";")[0] if locked else f"not fixed: {exc}")
                finding.changes = []
                finding.status = "in use" if locked else finding.status
        else:
            for (finding, _), write_back in zip(fixing, repairs):
                if write_back.refused is not None:
                    finding.status, finding.changes = "in use", []
                    finding.problems.append(write_back.refused.split(";")[0])
                else:
                    finding.status, finding.backup = "fixed", backup
    return findings


def doctor(paths: Sequence[str] = (), *, fix: bool = False, force: bool = False, workers: int | None = None,
           env: Mapping[str, str] | None = None,
           progress: Callable[[int, int], None] | None = None) -> Iterator[Finding]:
    """Every session found (see `targets`), checked (and with `fix`, repaired), in the order of `targets`.

    `workers`: processes scanning in parallel (default: the CPUs; 1 scans here, with no pool). `progress` is
    called with (done, total) as each target is done.
    """
    found = targets(paths, env=env)
    now = time.time()
    count = workers if workers is not None else (os.cpu_count() or 1)
    if count <= 1 or len(found) <= 1:
        for n, target in enumerate(found, start=1):
            yield from scan(target, fix=fix, force=force, now=now)
            if progress is not None:
                progress(n, len(found))
        return
    context = _pool_context()
    with concurrent.futures.ProcessPoolExecutor(max_workers=count, mp_context=context) as pool:
        chunks = [found[i:i + _CHUNK] for i in range(0, len(found), _CHUNK)]
        results = pool.map(_scan_many, chunks, [fix] * len(chunks), [force] * len(chunks), [now] * len(chunks))
        done = 0
        try:
            for chunk, findings in zip(chunks, results):
                yield from findings
                done += len(chunk)
                if progress is not None:
                    progress(done, len(found))
        finally:
            with contextlib.suppress(Exception):
                pool.shutdown(cancel_futures=True)


def _pool_context() -> Any:
    """Fork when this process runs no other thread (workers start at once, chatmend already imported); else
    spawn (forking a process that runs threads can deadlock), and where there is no fork."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


_CHUNK = 16
"""Targets a worker takes at once (fewer round trips; memory stays that of one file at a time)."""


def _scan_many(chunk: list[Target], fix: bool, force: bool, now: float) -> list[Finding]:
    return [f for target in chunk for f in scan(target, fix=fix, force=force, now=now)]
