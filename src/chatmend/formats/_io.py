"""Reading input files line by line with located errors, and writing output files atomically.

Bad input must name the file, the line (and column) and what was expected, and nothing may be written
then; a write that fails half-way must leave the original file intact.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import IO

from chatmend.exceptions import InputError

__all__ = ["InputError", "Progress", "atomic_copy", "atomic_write", "decoded_lines", "json_kind", "open_input"]


def json_kind(value: object) -> str:
    """A JSON value's type, in words (what an InputError says it got)."""
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return {str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


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


def atomic_write(path: str, chunks: Iterable[str], *, like: str | None = None) -> None:
    """Write `chunks` to `path` through a temporary file in the same directory, fsync, then rename.

    Until the rename the old file is untouched; any failure removes the temporary file. The new file
    takes the permission bits of `like` (or of the file it replaces); a file that did not exist gets what
    `open` would give it (0o666 less the umask), not a temporary file's private 0o600.
    """
    source = like if like is not None else path
    try:
        mode: int | None = os.stat(source).st_mode & 0o7777
    except OSError:
        mode = None  # a new file: the temporary one is created as open would create it, umask applied
    fd, tmp = _temporary_beside(path, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


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


def atomic_copy(source: str, target: str) -> None:
    """Copy a file byte for byte (permission bits and times too) through a temporary file and a rename."""
    fd, tmp = _temporary_beside(target, 0o600)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        shutil.copystat(source, tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
