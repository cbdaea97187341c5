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
from chatmend.files import inplace
from chatmend.files.io import Chunk, FileBytes, InputError, as_bytes, atomic_write, write_all, write_into

__all__ = ["batched", "in_place_target", "is_stdout", "refuse_held_open", "regular_file_out",
           "replace_in_place", "signals_remove_temporary_files", "write_output"]


def regular_file_out(output: str | None) -> bool:
    """True when `-o` names a regular file or one not there yet (written atomically), not stdout or a FIFO."""
    if output in (None, "-") or is_stdout(output):
        return False
    try:
        return stat.S_ISREG(os.stat(_final_target(output)).st_mode)
    except OSError:
        return True


def is_stdout(output: str | None) -> bool:
    """True when `-o` names stdout: `-`, or the very file stdout is (`/dev/stdout`, `/proc/self/fd/1`, or the
    log a `>> log` appends to), which is then written as it is, through fd 1: never renamed over nor cut short."""
    if output in (None, "-"):
        return True
    try:
        named = os.stat(output)
        out = os.fstat(1)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (out.st_dev, out.st_ino)


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


@contextlib.contextmanager
def _refused_as_usage(path: str) -> Iterator[None]:
    """The file layer's refusal of `path` (an InputError) as the command's usage error, naming it."""
    try:
        yield
    except InputError as exc:
        raise UsageError(f"{path}: {exc}") from None


def in_place_target(path: str) -> str:
    """The file `--in-place` reads and replaces: a symlink's target (the link stays a link, pointing at the
    repaired file); only a regular file with no other hard links (replacing one would split them)."""
    with _refused_as_usage(path):
        return inplace.in_place_target(path)


def _final_target(path: str) -> str:
    """`path` with its last component's symlinks followed, spelled relative as the user gave it."""
    with _refused_as_usage(path):
        return inplace.final_target(path)


def refuse_held_open(path: str, force: bool) -> None:
    """Refuse (exit 2, nothing written) a file another process holds open, naming it, unless `force`."""
    if not force:
        refusal = inplace.held_open(path)
        if refusal is not None:
            raise refusal


def replace_in_place(path: str, chunks: Iterable[Chunk], data: bytes | IO[bytes],
                     st: os.stat_result, shown: str, *, wanted: Callable[[], bool] | None = None,
                     same: Callable[[], bool] | None = None, force: bool = False) -> str | None:
    """`files.inplace.replace_file` (every safeguard of a write in place) with the CLI's signal handling:
    a stopping signal removes the temporary file. Returns the backup's name, or None when nothing was
    replaced."""
    with signals_remove_temporary_files():
        try:
            return inplace.replace_file(path, chunks, data, st, force=force, wanted=wanted, same=same,
                                        before=lambda: _before_replace())
        except OSError as exc:
            raise UsageError(f"{shown}: cannot write: {exc.strerror or exc}") from None


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
    if output is None or is_stdout(output):
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
            with _refused_as_usage(output):  # other names of the file would keep the old content
                inplace.refuse_hard_links(output, st)
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
