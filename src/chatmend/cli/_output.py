"""Writing what a command produces without losing data: stdout whole or not at all, files atomically (a symlink
stays a link, a file with other hard links is refused), `--in-place` with a backup and a check that the file did
not change meanwhile, and stopping signals that unwind a write instead of leaving its temporary file. The
signal handlers are process-wide: this is the program's, never the library's."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import IO, AnyStr

from chatmend.cli._text import UsageError
from chatmend.formats import InputError, atomic_write, write_all, write_backup, write_into
from chatmend.formats._io import Chunk, FileBytes, as_bytes

__all__ = ["batched", "in_place_target", "lock_file", "regular_file_out", "replace_in_place",
           "signals_remove_temporary_files", "write_output"]


def regular_file_out(output: str | None) -> bool:
    """True when `-o` names a regular file or one not there yet (written atomically), not stdout or a FIFO."""
    if output in (None, "-"):
        return False
    try:
        return stat.S_ISREG(os.stat(_final_target(output)).st_mode)
    except OSError:
        return True


def batched(chunks: Iterable[AnyStr | FileBytes], size: int = 1 << 20) -> Iterator[AnyStr | FileBytes]:
    """The chunks (all text or all bytes) joined into pieces of about `size` characters or bytes (one write
    each, not one a record); a chunk of `size` or more, or a file's bytes (`FileBytes`, copied file to file), goes
    out as it is."""
    batch: list[AnyStr] = []
    length = 0
    for chunk in chunks:
        if isinstance(chunk, FileBytes) or len(chunk) >= size:
            if batch:
                yield batch[0][:0].join(batch)
                batch, length = [], 0
            yield chunk
            continue
        batch.append(chunk)
        length += len(chunk)
        if length >= size:
            yield chunk[:0].join(batch)
            batch, length = [], 0
    if batch:
        yield batch[0][:0].join(batch)


def _before_replace() -> None:
    """Runs once a new file is complete, just before it is renamed into place: nothing. A test hook: tests put
    here what happens in that window (an agent appending to the file, a SIGTERM)."""


def in_place_target(path: str) -> str:
    """The file `--in-place` reads and replaces: a symlink's target (the link stays a link, pointing at the
    repaired file); only a regular file with no other hard links (replacing one would split them)."""
    real = _final_target(path)
    try:
        st = os.stat(real)
    except OSError:
        return real  # reading it says what is wrong
    if stat.S_ISREG(st.st_mode):
        _refuse_hard_links(real, st)
    elif not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{path}: --in-place needs a regular file (this is a FIFO, socket or device); "
                         "use -o OUT")
    return real


def _final_target(path: str) -> str:
    """`path` with its last component's symlinks followed (the directories in it need no resolving to rename
    into them), spelled relative as the user gave it."""
    for _ in range(40):
        if not os.path.islink(path):
            return path
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    raise UsageError(f"{path}: too many levels of symbolic links")


def _refuse_hard_links(path: str, st: os.stat_result) -> None:
    """Refuse to replace a file that has other names: they would keep the old content."""
    if st.st_nlink > 1:
        raise UsageError(f"{path}: has {st.st_nlink} hard links; replacing it would leave the other names with "
                         "the old content: write to a new file with -o OUT (then move it), or remove the other "
                         "links first")


def lock_file(handle: IO[bytes]) -> None:
    """Lock the file against other `chatmend --in-place` runs (an advisory flock: agents that do not lock are
    caught by the check for changes instead; a no-op where flock is missing)."""
    try:
        import fcntl
    except ImportError:
        return  # Windows: no flock; the check for changes still refuses a file changed meanwhile
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise InputError("locked by another process (another chatmend --in-place?); nothing was written: "
                         "run again when it is done") from None
    except OSError:
        pass  # a file system without locks (some network mounts): the check for changes remains


def replace_in_place(path: str, chunks: Iterable[Chunk], data: bytes | IO[bytes],
                     st: os.stat_result, shown: str, *, wanted: Callable[[], bool] | None = None,
                     same: Callable[[], bool] | None = None) -> str | None:
    """Replace `path` (read as `data`, the bytes or the file they are read from, whose stat was `st`) with the
    text of `chunks`, the original kept in a new backup; refuse when the file changed since it was read (`same`:
    whether the file read again still holds the bytes first read). Returns the backup's name, or None when
    `wanted()`, asked once the text is written, says it is the file as it was (nothing replaced, no backup)."""
    backup: list[str] = []

    def commit() -> None:
        if wanted is not None and not wanted():
            raise _NothingToReplace
        _before_replace()
        _unchanged(path, st, same)
        try:
            backup.append(write_backup(path, data, st))
        except OSError as exc:
            raise UsageError(f"{path}.bak: cannot write the backup: {exc.strerror or exc}") from None
        try:
            _unchanged(path, st)  # again: writing the backup took time
        except InputError:
            os.unlink(backup[0])
            raise

    with signals_remove_temporary_files():
        try:
            atomic_write(path, chunks, like=st, before_replace=commit)
        except _NothingToReplace:
            return None  # the temporary file is gone, the file untouched
        except OSError as exc:
            raise UsageError(f"{shown}: cannot write: {exc.strerror or exc}") from None
    return backup[0]


class _NothingToReplace(Exception):
    """The text written is the file as it was: `replace_in_place` leaves it."""


def _unchanged(path: str, st: os.stat_result, same: Callable[[], bool] | None = None) -> None:
    """Refuse (exit 2, nothing written) when `path` is no longer the file read: another inode, size or mtime, or
    (`same`, for a file read again as it is written) other bytes."""
    try:
        now = os.stat(path)
    except OSError:
        now = None
    if now is None or (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != (
            st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) or (same is not None and not same()):
        raise InputError("changed while chatmend was repairing it (an agent still writing to it?); nothing was "
                         "written: run again once it is no longer in use")


_STOPPING = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
"""The catchable signals whose default is to end the process: each would leave the temporary file behind."""


class _Signalled(BaseException):
    """A stopping signal arrived during a write (a BaseException, so every `except Exception` lets it by)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def signals_remove_temporary_files() -> Iterator[None]:
    """During a write, a stopping signal unwinds it (the writers remove their temporary files on the way), then
    ends the process by that signal. Only signals left at their default are caught (`nohup`'s ignored SIGHUP
    stays ignored), only in the main thread, and the handlers are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise _Signalled(signum)

    previous = {}
    for name in _STOPPING:
        signum = getattr(signal, name, None)
        if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
            previous[signum] = signal.signal(signum, stop)
    try:
        yield
    except _Signalled as exc:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        previous = {}
        os.kill(os.getpid(), exc.signum)  # its default again: the process ends as the sender meant
        raise SystemExit(128 + exc.signum) from None  # where a signal's default does not end it
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def write_output(chunks: Iterable[Chunk], output: str | None) -> None:
    """Write to stdout (only once all is rendered), into a FIFO or device as it is, or to a file atomically
    (nothing is left when it fails); a write that cannot be completed is an error, never a short file."""
    if output is None or output == "-":
        # Render first: an error half-way must not leave half a history on stdout.
        _write_stdout(b"".join(map(as_bytes, chunks)))
        return
    target = _final_target(output)  # a symlink stays a link; its target gets the output
    try:
        st: os.stat_result | None = os.stat(target)
    except OSError:
        st = None
    try:
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{output}: is a directory")
        if st is not None and not stat.S_ISREG(st.st_mode):
            write_into(target, chunks)  # a rename would put a regular file in place of the FIFO or device
            return
        if st is not None:
            _refuse_hard_links(output, st)
        with signals_remove_temporary_files():
            atomic_write(target, chunks, before_replace=_before_replace)
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror or exc}") from None


def _write_stdout(data: bytes) -> None:
    """`data` (UTF-8 text) on stdout, every byte of it, or a UsageError naming stdout (a full disk, a closed pipe)."""
    out = sys.stdout
    try:
        out.flush()
        fd = out.fileno()
    except (OSError, ValueError):
        fd = None  # not a file (a test's capture): its own write says when it fails
    try:
        if fd is None:
            out.write(data.decode("utf-8"))
            out.flush()
        else:
            write_all(fd, data)  # the text layer unbuffered (PYTHONUNBUFFERED) drops short writes
    except OSError as exc:
        raise UsageError(f"<stdout>: cannot write: {exc.strerror or exc}") from None
