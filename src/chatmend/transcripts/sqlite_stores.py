"""What every SQLite session store shares: recognizing the database, reading it without writing, knowing when a
running tool holds its lock, and writing repairs back in one transaction after a backup copy.

A store module subclasses `SqliteStore`, names the tables that tell its database apart (`tables`), reads its
sessions through `read_connection()`, and gives each repair as `RowUpdate` / `RowInsert` changes. Every update
names the value it replaces: if the row no longer holds it (the tool wrote meanwhile), nothing is written.
"""

from __future__ import annotations

import calendar
import contextlib
import hashlib
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from chatmend import RepairResult
from chatmend import strict_json as strict_json
from chatmend.files.io import InputError, json_kind, link_unused
from chatmend.repair import IsReadOnly
from chatmend.transcripts.stores import Store, WriteBack

__all__ = [
    "BUSY_SECONDS", "MAGIC", "DatabaseLocked", "RowChange", "RowDelete", "RowInsert", "RowUpdate", "RowsAsRead",
    "SqliteStore", "checked", "is_sqlite", "sql_timestamp", "stored_json", "table_names", "zstandard_package",
    "zstd_decompressed",
]

BUSY_SECONDS = 5.0
"""How long chatmend waits for another connection's lock (a tool writing a turn) before it says the database is
locked."""

MAGIC = b"SQLite format 3\x00"
"""How every SQLite database file begins."""


def is_sqlite(path: str) -> bool:
    """True when `path` is a regular file that begins as a SQLite database does."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def sql_timestamp(text: object) -> float | None:
    """A `CURRENT_TIMESTAMP` value (UTC, `YYYY-MM-DD HH:MM:SS`) in seconds since the epoch."""
    if not isinstance(text, str):
        return None
    try:
        return float(calendar.timegm(time.strptime(text[:19], "%Y-%m-%d %H:%M:%S")))
    except ValueError:
        return None


def stored_json(raw: object, where: str, kind: type, what: str) -> Any:
    """The JSON value a stored text holds (a column's, or a store's file's), of the type `kind`; an InputError at
    `where` (the row or file and the column) for another type of value, text that is not JSON or no text."""
    if not isinstance(raw, (str, bytes)):
        raise InputError(f"{where}: expected JSON text, got {type(raw).__name__}")
    try:
        value = strict_json.loads(raw if isinstance(raw, str) else raw.decode("utf-8"))
    except ValueError as exc:
        raise InputError(f"{where}: invalid JSON ({exc}); expected {what}") from None
    if not isinstance(value, kind):
        raise InputError(f"{where}: expected {what}, got {json_kind(value)}")
    return value


def zstandard_package(what: str) -> Any:
    """The zstandard package (imported only for a store that compresses), or an InputError saying that `what`
    needs it."""
    try:
        import zstandard
    except ImportError:
        raise InputError(f"{what} is zstd-compressed; reading it needs the zstandard package (pip install "
                         "zstandard)") from None
    return zstandard


def zstd_decompressed(blob: bytes, where: str) -> bytes:
    """A zstd-compressed column's bytes, as `zstd::decode_all` reads them (a frame that does not say its size
    too); an InputError at `where` for bytes that are not zstd."""
    zstandard = zstandard_package(where)
    try:
        return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(blob))
    except zstandard.ZstdError as exc:
        raise InputError(f"{where}: not zstd-compressed ({exc})") from None


def _uri(path: str, mode: str) -> str:
    return f"file:{urllib.parse.quote(os.path.abspath(path))}?mode={mode}"


def table_names(path: str) -> set[str]:
    """The tables of the database at `path` (empty when it cannot be opened); an InputError when another
    connection keeps it locked past `BUSY_SECONDS` (a rollback-journal database being written)."""
    try:
        conn = sqlite3.connect(_uri(path, "ro"), uri=True, timeout=BUSY_SECONDS)
    except sqlite3.Error:
        return set()
    try:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error as exc:
        if str(exc) in _LOCKED and is_sqlite(path):
            raise DatabaseLocked("the database is locked by another process (a tool writing to it?); nothing "
                                 "was read or written: run again once it is done") from None
        return set()
    finally:
        conn.close()


class DatabaseLocked(InputError):
    """A SQLite database another connection keeps locked past `BUSY_SECONDS`."""


@dataclass(frozen=True)
class RowChange:
    """A change to the row whose key columns hold `key`, made only while its `column` still holds `old` (as read):
    otherwise the tool wrote to it since, and the whole write is refused."""

    table: str
    key: tuple[tuple[str, Any], ...]
    column: str
    old: Any


@dataclass(frozen=True)
class RowUpdate(RowChange):
    """Set `column` of the row from `old` to `new`."""

    new: Any


@dataclass(frozen=True)
class RowDelete(RowChange):
    """Delete the row."""


@dataclass(frozen=True)
class RowInsert:
    """A new row."""

    table: str
    values: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class RowsAsRead:
    """What a query returned when the session was read (`digest`: of its rows), checked again in the write's
    transaction: a row the tool inserted, changed or deleted since then refuses the session's repair."""

    sql: str
    params: tuple[Any, ...]
    digest: str


def _digest(rows: Iterable[Sequence[Any]]) -> str:
    hashed = hashlib.sha256()
    for row in rows:
        hashed.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
    return hashed.hexdigest()


def checked(repair: Callable[[IsReadOnly | None], tuple[RepairResult, WriteBack]], checks: Sequence[RowsAsRead],
            ) -> Callable[[IsReadOnly | None], tuple[RepairResult, WriteBack]]:
    """A session's repair whose changes are applied only while the session's rows are still `checks` says."""

    def repair_checked(is_read_only: IsReadOnly | None) -> tuple[RepairResult, WriteBack]:
        result, write_back = repair(is_read_only)
        write_back.checks = [*checks, *write_back.checks]
        return result, write_back

    return repair_checked


_LOCKED = ("database is locked", "database table is locked", "database schema is locked")


class SqliteStore(Store):
    """A session store that is one SQLite database (WAL or not)."""

    tables: ClassVar[frozenset[str]]
    """Tables only this tool's database has all of."""
    holder: ClassVar[str] = "another process"
    """Who holds the lock when it is held (`a running opencode`), for the message that refuses."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._read: sqlite3.Connection | None = None

    @classmethod
    def recognizes(cls, path: str) -> bool:
        return os.path.isfile(path) and is_sqlite(path) and cls.tables <= table_names(path)

    def read_connection(self) -> sqlite3.Connection:
        """A read-only connection (a WAL database's last writes included), opened once."""
        if self._read is None:
            try:
                self._read = sqlite3.connect(_uri(self.path, "ro"), uri=True, timeout=BUSY_SECONDS)
            except sqlite3.Error as exc:
                raise InputError(f"cannot open the database: {exc}") from None
        return self._read

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a read-only query; a database that cannot be read is an InputError."""
        try:
            return self.read_connection().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise InputError(f"cannot read the database: {exc}") from None

    def query_as_read(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[tuple[Any, ...]], RowsAsRead]:
        """`query`'s rows, and what they were (checked again before a repair of them is written)."""
        rows = self.query(sql, params)
        return rows, RowsAsRead(sql, tuple(params), _digest(rows))

    def close(self) -> None:
        if self._read is not None:
            self._read.close()
            self._read = None

    def modified(self) -> float:
        """When the database last changed: its file's or its write-ahead log's modification time."""
        times = [os.stat(p).st_mtime for p in (self.path, self.path + "-wal") if os.path.exists(p)]
        return max(times, default=0.0)

    def in_use(self) -> str | None:
        try:
            conn = sqlite3.connect(_uri(self.path, "rw"), uri=True, timeout=0, isolation_level=None)
        except sqlite3.Error as exc:
            return f"cannot be opened for writing: {exc}"
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
        except sqlite3.OperationalError as exc:
            if str(exc) in _LOCKED:
                return self._locked_message()
            return f"cannot be written: {exc}"
        finally:
            conn.close()
        return None

    def _locked_message(self) -> str:
        return f"the database is locked by {self.holder}"

    def write_back(self, repairs: Sequence[WriteBack], *, output: str | None = None,
                   partial: bool = False) -> str | None:
        """Every repair in one `BEGIN IMMEDIATE` transaction (waiting up to `BUSY_SECONDS` for another writer),
        after a backup copy taken under that lock. Each session's rows are read again first: a session the tool
        wrote to since it was read refuses all (an InputError, nothing written), or with `partial` is left out
        (its `WriteBack.refused` says why) while the others are written."""
        if output is not None:
            self._write_copy([c for r in repairs for c in r.changes], output)
            return None
        if not any(r.changes for r in repairs):
            return None
        try:
            conn = sqlite3.connect(_uri(self.path, "rw"), uri=True, timeout=BUSY_SECONDS, isolation_level=None)
        except sqlite3.Error as exc:
            raise InputError(f"cannot open the database for writing: {exc}") from None
        backup: str | None = None
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")  # the write lock: no other writer until COMMIT
            except sqlite3.OperationalError as exc:
                raise self._refusal(exc) from None
            kept = []
            for repair in repairs:
                changed = _changed_since_read(conn, repair.checks)
                if changed is None:
                    kept.append(repair)
                elif not partial:
                    raise InputError(changed)
                else:
                    repair.refused = changed
            if not any(r.changes for r in kept):
                conn.execute("ROLLBACK")
                return None
            # The copy is read by another connection (a connection that writes cannot be a backup's source);
            # with the write lock held here, no other process commits between the copy and this transaction.
            backup = _backup(self.read_connection(), self.path)
            _apply(conn, [c for r in kept for c in r.changes])
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup)
            if isinstance(exc, sqlite3.OperationalError):
                raise self._refusal(exc) from None  # a lock taken meanwhile, a full disk: said in the store's words
            raise
        finally:
            conn.close()
        return backup

    def _refusal(self, exc: sqlite3.OperationalError) -> InputError:
        if str(exc) in _LOCKED:
            return InputError(f"{self._locked_message()}; nothing was written: quit it, then run again")
        return InputError(f"cannot write the database: {exc}; nothing was written")

    def _write_copy(self, changes: Sequence[Any], output: str) -> None:
        """The database with the changes, as a new self-contained file at `output` (replaced atomically)."""
        folder = os.path.dirname(os.path.abspath(output))
        tmp = os.path.join(folder, f".{os.path.basename(output)}.chatmend-{os.getpid()}.tmp")
        try:
            _copy_database(self.read_connection(), tmp)
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                _apply(conn, changes)
                conn.execute("COMMIT")
            finally:
                conn.close()
            os.replace(tmp, output)
        except sqlite3.Error as exc:
            raise InputError(f"cannot write the copy {output}: {exc}") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _copy_database(source: sqlite3.Connection, path: str) -> None:
    """A consistent copy of the database `source` reads, as one file (rollback journal, no -wal beside it)."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    target = sqlite3.connect(path)
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
    finally:
        target.close()


def _backup(conn: sqlite3.Connection, path: str) -> str:
    """A copy of the database as `path.bak` (or `.bak.1`, `.bak.2`...: an existing backup is never replaced, as a
    file's), read through `conn`, with the database file's mode. Returns its name."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.chatmend-backup-{os.getpid()}.tmp")
    try:
        _copy_database(conn, tmp)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        return link_unused(tmp, f"{path}.bak")
    except (sqlite3.Error, OSError) as exc:
        raise InputError(f"{path}.bak: cannot write the backup: {exc}; nothing was written") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


_CHANGED = ("changed while chatmend was repairing it (the tool wrote to it since it was read); nothing was "
            "written: run again once it is no longer in use")


def _changed_since_read(conn: sqlite3.Connection, checks: Iterable[Any]) -> str | None:
    """Why a session's changes may not be written (its rows are no longer those read), or None."""
    for check in checks:
        if isinstance(check, RowsAsRead) and _digest(conn.execute(check.sql, check.params)) != check.digest:
            return _CHANGED
    return None


def _apply(conn: sqlite3.Connection, changes: Iterable[Any]) -> None:
    """Each change, in the open transaction; an update whose row no longer holds what was read refuses all."""
    for change in changes:
        if isinstance(change, RowChange):
            where = " AND ".join([*(f'"{k}" = ?' for k, _ in change.key), f'"{change.column}" IS ?'])
            as_read = [*(v for _, v in change.key), change.old]
            if isinstance(change, RowUpdate):
                cursor = conn.execute(f'UPDATE "{change.table}" SET "{change.column}" = ? WHERE {where}',
                                      [change.new, *as_read])
            else:
                cursor = conn.execute(f'DELETE FROM "{change.table}" WHERE {where}', as_read)
            if cursor.rowcount != 1:
                raise InputError("changed while chatmend was repairing it (the tool still writing to it?); "
                                 "nothing was written: run again once it is no longer in use")
        elif isinstance(change, RowInsert):
            columns = ", ".join(f'"{k}"' for k, _ in change.values)
            marks = ", ".join("?" for _ in change.values)
            conn.execute(f'INSERT INTO "{change.table}" ({columns}) VALUES ({marks})', [v for _, v in change.values])
        else:
            raise TypeError(f"not a change of a SQLite store: {change!r}")
