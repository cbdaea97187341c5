"""Reading input files line by line with located errors, and writing output files atomically.

Bad input must name the file, the line (and column) and what was expected, and nothing may be written
then; a write that fails half-way must leave the original file intact.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import secrets
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import IO, NamedTuple

from chatmend.exceptions import InputError
from chatmend.strict_json import json_kind

__all__ = [
    "MAX_JSON_SIZE", "Chunk", "FileBytes", "InputError", "Progress", "as_bytes", "atomic_write", "bounded_lines",
    "changed_while_read", "decoded_lines", "first_line", "joined", "json_kind", "link_unused", "open_input", "read_all",
    "write_all", "write_backup", "write_chunk", "write_into",
]

MAX_JSON_SIZE = 64 * 2**20
"""The default bound on one line of JSON Lines, or on a whole JSON document (64 MiB: well over any provider's
request limit), so that a stream with no line end (`/dev/zero`, a binary file) is refused, not held whole."""
_PIECE = 2**20
"""How much of a long line is read at a time (each piece checked for NUL as it arrives)."""


class Progress:
    """Bytes read so far, shown on stderr at most a few times a second, and only when it is a terminal."""

    def __init__(self, name: str, total: int | None, *, enabled: bool | None = None) -> None:
        self.name = name
        self.total = total
        self.done = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = time.monotonic()
        self._shown = False

    def add(self, count: int) -> None:
        """Count `count` more bytes read and redraw when due."""
        self.done += count
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.25:
            return
        self._last = now
        self._shown = True
        mb = self.done / 1e6
        if self.total:
            sys.stderr.write(f"\rreading {self.name}: {mb:.0f} MB ({100 * self.done // self.total}%)")
        else:
            sys.stderr.write(f"\rreading {self.name}: {mb:.0f} MB")
        sys.stderr.flush()

    def close(self) -> None:
        """Erase the progress line, if one was drawn."""
        if self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


@contextlib.contextmanager
def open_input(path: str) -> Iterator[tuple[IO[bytes], int | None]]:
    """The file (or stdin for `-`) opened for binary reading, with its size when known."""
    if path == "-":
        if sys.stdin is None:  # the shell closed it (`<&-`): Python leaves sys.stdin None
            raise InputError("stdin is closed; expected a session on stdin (or give a file)")
        yield sys.stdin.buffer, None
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except IsADirectoryError:
        raise InputError("is a directory, expected a file") from None
    except FileNotFoundError:
        raise InputError("no such file") from None
    except PermissionError:
        raise InputError("permission denied") from None
    try:
        try:
            size: int | None = os.fstat(handle.fileno()).st_size
        except OSError:
            size = None
        yield handle, size
    finally:
        handle.close()


def bounded_lines(handle: IO[bytes], limit: int = MAX_JSON_SIZE) -> Iterator[bytes]:
    """The lines of `handle`, each at most `limit` bytes before its line end, or an InputError at the line;
    a NUL byte (never in JSON text: binary data, UTF-16) is an InputError as soon as it is read. Memory stays
    within about `limit`, whatever the input."""
    cap = limit + 2  # the most a line may take with its line end (`\r\n`)
    chunk = min(cap, _PIECE)
    number = offset = 0
    while True:
        piece = handle.readline(chunk)
        if not piece:
            return
        number += 1
        _refuse_nul(piece, number, 0, offset)
        parts, size = [piece], len(piece)
        while not piece.endswith(b"\n") and len(piece) == chunk and size < cap:  # a long line: read on
            piece = handle.readline(min(chunk, cap - size))
            if not piece:
                break
            _refuse_nul(piece, number, size, offset)
            parts.append(piece)
            size += len(piece)
        line = parts[0] if len(parts) == 1 else b"".join(parts)
        if size > limit and len(line.rstrip(b"\n").removesuffix(b"\r")) > limit:
            raise InputError(f"a line longer than {_bytes(limit)}, the limit (no line end: binary data?); "
                             "expected JSON text (a larger limit: --max-json-size)", line=number)
        offset += size
        yield line


def read_all(handle: IO[bytes], limit: int = MAX_JSON_SIZE) -> bytes:
    """Every byte of `handle` (what `repair --in-place` backs up), refused as `bounded_lines` refuses them: a NUL
    byte as soon as it is read, a line past `limit` once it is (so a stream with no line end is not held whole)."""
    parts: list[bytes] = []
    number, offset, line_start = 1, 0, 0  # the current line's number, and where it starts in the input
    while True:
        try:
            chunk = handle.read(_PIECE)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}") from None
        if not chunk:
            return b"".join(parts)
        nul = chunk.find(b"\0")
        if nul >= 0:
            before = chunk.rfind(b"\n", 0, nul)
            start = offset + before + 1 if before >= 0 else line_start
            _refuse_nul(chunk[nul:], number + chunk.count(b"\n", 0, nul), offset + nul - start, start)
        last = chunk.rfind(b"\n")
        if last >= 0:
            number += chunk.count(b"\n")
            line_start = offset + last + 1
        offset += len(chunk)
        if offset - line_start > limit + 2:
            raise InputError(f"a line longer than {_bytes(limit)}, the limit (no line end: binary data?); "
                             "expected JSON text (a larger limit: --max-json-size)", line=number)
        parts.append(chunk)


def _refuse_nul(piece: bytes, number: int, column: int, offset: int) -> None:
    """An InputError at the first NUL byte of `piece` (which starts `column` bytes into line `number`, the line
    `offset` bytes into the input)."""
    at = piece.find(b"\0")
    if at >= 0:
        raise InputError(f"a NUL byte (byte {offset + column + at} of the input): binary data or UTF-16 text; "
                         "expected UTF-8 JSON text", line=number, column=column + at + 1)


def _bytes(count: int) -> str:
    """A size in words: `64 MiB`, `1000 bytes`."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count} bytes"


def joined(lines: Iterable[str], limit: int = MAX_JSON_SIZE) -> str:
    """The lines of one JSON document as one text, or an InputError once they pass `limit` bytes (UTF-8)."""
    parts: list[str] = []
    size = 0
    for line in lines:
        size += len(line) if line.isascii() else len(line.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise InputError(f"a JSON document larger than {_bytes(limit)}, the limit; expected a request body "
                             "or a list of messages (a larger limit: --max-json-size)")
        parts.append(line)
    return "".join(parts)


def first_line(path: str | os.PathLike[str], limit: int) -> bytes | None:
    """A file's first line, at most `limit` bytes of it (what a store's detection reads); None when it cannot be
    read."""
    try:
        with open(path, "rb") as handle:
            return handle.readline(limit)
    except OSError:
        return None


def decoded_lines(raw: Iterable[bytes], progress: Progress | None = None) -> Iterator[str]:
    """Each line as text; bytes that are not UTF-8 raise an InputError with line and column."""
    for number, line in enumerate(raw, start=1):
        if progress is not None:
            progress.add(len(line))
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"not UTF-8 text (byte 0x{line[exc.start]:02x}); expected a UTF-8 encoded file",
                line=number, column=exc.start + 1,
            ) from None
        if number == 1 and text.startswith("\ufeff"):
            text = text[1:]  # a BOM some editors add
        yield text


class FileBytes(NamedTuple):
    """A chunk of output that is bytes [start, stop) of an open file (what a repair leaves as it is): a file
    written is given them by the kernel's own copy where it has one (`os.copy_file_range`: no read into memory and
    write back out), anything else reads them."""

    handle: IO[bytes]
    start: int
    stop: int

    def read(self) -> bytes:
        """The bytes (an InputError when the file no longer holds them all: it was cut short meanwhile)."""
        self.handle.seek(self.start)
        data = self.handle.read(self.stop - self.start)
        if len(data) != self.stop - self.start:
            raise changed_while_read()
        return data


Chunk = str | bytes | FileBytes
"""A piece of a command's output: text (written in UTF-8), bytes, or bytes of a file (`FileBytes`)."""


def changed_while_read() -> InputError:
    """The error of a file whose bytes changed between a first pass over it and reading (or copying) it again."""
    return InputError("changed while chatmend was reading it (an agent still writing to it?); nothing was written: "
                      "run again once it is no longer in use")


def as_bytes(chunk: Chunk) -> bytes:
    """A chunk of output as written: text in UTF-8, bytes as they are (a file's own bytes, copied undecoded)."""
    if isinstance(chunk, bytes):
        return chunk
    return chunk.encode("utf-8") if isinstance(chunk, str) else chunk.read()


def write_chunk(fd: int, chunk: Chunk) -> None:
    """Write a chunk of output to `fd` whole (`write_all`); a file's bytes are copied file to file."""
    if isinstance(chunk, FileBytes):
        _copy_file_bytes(chunk, fd)
    else:
        write_all(fd, as_bytes(chunk))


_NO_KERNEL_COPY = frozenset(getattr(errno, name) for name in (
    "EXDEV", "ENOSYS", "EINVAL", "EOPNOTSUPP", "ENOTSUP", "EBADF", "EPERM", "ETXTBSY") if hasattr(errno, name))
"""What `copy_file_range` answers for a pair of files it cannot copy between (across file systems on older
kernels, a pipe or device, a file system without it): the bytes are then read and written."""


def _copy_file_bytes(chunk: FileBytes, fd: int) -> None:
    """`chunk`'s bytes appended to `fd`: by `os.copy_file_range` where the system has it and takes these files,
    else read and written a megabyte at a time; an InputError when the source holds fewer than `chunk` names."""
    offset, left = chunk.start, chunk.stop - chunk.start
    copy = getattr(os, "copy_file_range", None)
    source = chunk.handle.fileno() if copy is not None else -1
    while left:
        copied = 0
        if copy is not None:
            try:
                copied = copy(source, fd, left, offset)
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                copy = None
                continue
        else:
            piece = FileBytes(chunk.handle, offset, offset + min(left, _PIECE)).read()
            write_all(fd, piece)
            copied = len(piece)
        if copied <= 0:
            raise changed_while_read()  # the file ends before the bytes it had when it was first read
        offset += copied
        left -= copied


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd`, or raise OSError: `os.write` may write fewer bytes than it was given
    (a pipe, a nearly full disk), and a text layer without a buffer would drop the rest."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "the write made no progress")
        view = view[written:]


def atomic_write(
    path: str,
    chunks: Iterable[Chunk],
    *,
    like: str | os.stat_result | None = None,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write `chunks` to `path` through a temporary file in the same directory, fsync, then rename.

    Until the rename the old file is untouched; any failure removes the temporary file. The new file
    takes the permission bits of `like` (a path or its stat; default: the file it replaces), and its owner and
    group where the process may give them (root); a file that did not exist gets what `open` would give it
    (0o666 less the umask), not a temporary file's private 0o600. `before_replace` runs once the temporary file
    is complete, just before the rename: raising there leaves `path` as it was.
    """
    try:
        st: os.stat_result | None = like if isinstance(like, os.stat_result) else os.stat(like or path)
    except OSError:
        st = None  # a new file: the temporary one is created as open would create it, umask applied
    tmp = _written_beside(path, chunks, st)
    with _removed_on_failure(tmp):
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    _sync_directory(path)


@contextlib.contextmanager
def _removed_on_failure(tmp: str) -> Iterator[None]:
    """The temporary file `tmp` removed when what is done with it fails (anything, an interrupt too)."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _written_beside(path: str, chunks: Iterable[Chunk], st: os.stat_result | None) -> str:
    """A new file in `path`'s directory holding `chunks`, synced to disk, with `st`'s owner, group and mode (none:
    what `open` would give a new file); removed again on any failure. Returns its name."""
    fd, tmp = _temporary_beside(path, 0o600 if st is not None else 0o666)
    with _removed_on_failure(tmp):
        try:
            for chunk in chunks:
                write_chunk(fd, chunk)
            if st is not None:
                _same_owner(fd, st)
            os.fsync(fd)
        finally:
            os.close(fd)
        if st is not None:
            os.chmod(tmp, st.st_mode & 0o7777)  # after chown, which clears set-id bits
    return tmp


def _same_owner(fd: int, st: os.stat_result) -> None:
    """Give the open file `st`'s owner and group when it may (root may; others keep their own group if they can)."""
    if (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()) or not hasattr(os, "fchown"):
        return
    try:
        os.fchown(fd, st.st_uid, st.st_gid)
    except OSError:
        with contextlib.suppress(OSError):
            os.fchown(fd, -1, st.st_gid)  # not root: at least the group, when the user is in it


def _sync_directory(path: str) -> None:
    """fsync the directory holding `path`, so a rename into it survives a crash (where directories open)."""
    with contextlib.suppress(OSError):
        dir_fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_into(path: str, chunks: Iterable[Chunk]) -> None:
    """Write `chunks` straight into `path`, a FIFO or a device: no temporary file, no rename (which would put a
    regular file in its place)."""
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_BINARY", 0))
    try:
        for chunk in chunks:
            write_chunk(fd, chunk)
    finally:
        os.close(fd)


def write_backup(path: str, data: bytes | IO[bytes], st: os.stat_result) -> str:
    """`data` (the bytes read from `path`, whose stat is `st`, or the file they are read from: copied from its
    start) as a new `path.bak`, or `path.bak.1`, `.bak.2`...: an existing backup is never overwritten. Returns the
    backup's name. Mode, owner and times are `st`'s."""
    if not isinstance(data, bytes):
        data.seek(0)
    tmp = _written_beside(path, [data] if isinstance(data, bytes) else iter(partial(data.read, _PIECE), b""), st)
    try:
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        backup = link_unused(tmp, path + ".bak")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _sync_directory(path)
    return backup


def link_unused(tmp: str, base: str) -> str:
    """Hard-link `tmp` under `base`, or `base.1`, `base.2`... the first name no file has (link never replaces)."""
    for n in itertools.count():
        name = base if n == 0 else f"{base}.{n}"
        try:
            os.link(tmp, name)
            return name
        except FileExistsError:
            continue
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise
            if not os.path.lexists(name):  # a file system without hard links: a rename, checked first
                os.rename(tmp, name)
                return name
    raise AssertionError("unreachable")


_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK}
"""What `link` fails with where the file system has no hard links (FAT, some network mounts)."""


def _temporary_beside(path: str, mode: int) -> tuple[int, str]:
    """A new file in `path`'s directory under a name no file has, open for writing, created with `mode` less
    the umask (what `tempfile.mkstemp` does, which always creates 0o600)."""
    directory, name = os.path.split(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
