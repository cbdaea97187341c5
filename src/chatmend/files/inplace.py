"""Replacing a session file where it lies, the one way `repair --in-place` and `doctor --fix` both do it.

Every safeguard is here: a symlink is followed to its target (the link stays a link), a file with other hard
links is refused (replacing it would split them), an advisory lock keeps two chatmend runs apart, a file another
process holds open is refused (an agent appending through its open handle would write into the replaced file
and lose every later record), the file must still hold the bytes that were read, the original is kept in a new
backup, and the temporary files a killed earlier run left beside it are swept. A torn last line (the writer died
mid-line) is left out of what is written, so the agent's next record starts on a line of its own; its bytes stay
in the backup.

Nothing here touches process-wide state: the CLI wraps these calls in its own signal handling.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterable
from typing import IO

from chatmend import strict_json as strict_json
from chatmend.files.io import Chunk, InputError, atomic_write, write_backup

__all__ = [
    "STALE_SECONDS",
    "final_target",
    "held_open",
    "holders",
    "in_place_target",
    "kept_bom",
    "lock_file",
    "open_elsewhere",
    "refuse_hard_links",
    "replace_file",
    "sweep_temporary_files",
    "torn_tail",
    "unchanged",
    "write_repaired",
]

STALE_SECONDS = 600.0
"""A temporary file of chatmend's older than this, and open in no process, is a killed run's leftover."""


def final_target(path: str) -> str:
    """`path` with its last component's symlinks followed (the directories in it need no resolving to rename
    into them), spelled relative as the user gave it."""
    for _ in range(40):
        if not os.path.islink(path):
            return path
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    raise InputError("too many levels of symbolic links")


def in_place_target(path: str) -> str:
    """The file to read and replace for `path`: a symlink's target (the link stays a link, pointing at the
    repaired file); only a regular file with no other hard links (replacing one would split them)."""
    real = final_target(path)
    try:
        st = os.stat(real)
    except OSError:
        return real  # reading it says what is wrong
    if stat.S_ISREG(st.st_mode):
        refuse_hard_links(real, st)
    elif not stat.S_ISDIR(st.st_mode):
        raise InputError("--in-place needs a regular file (this is a FIFO, socket or device); use -o OUT")
    return real


def refuse_hard_links(path: str, st: os.stat_result) -> None:
    """Refuse to replace a file that has other names: they would keep the old content."""
    if st.st_nlink > 1:
        raise InputError(f"has {st.st_nlink} hard links; replacing it would leave the other names with "
                         "the old content: write to a new file with -o OUT (then move it), or remove the other "
                         "links first")


def lock_file(handle: IO[bytes]) -> None:
    """Lock the file against other chatmend runs that write it in place (an advisory flock: agents that do not
    lock are caught by the checks for changes and for open handles instead; a no-op where flock is missing)."""
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


def holders(path: str) -> list[tuple[int, str]]:
    """The processes other than this one that hold `path` open, as (pid, command name): from `/proc/*/fd`
    where there is a /proc, else from `lsof` (none found when neither is at hand). Processes of other users
    are seen only where this one may look at them."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    if os.path.isdir("/proc/self/fd"):
        return _proc_holders(st)
    return _lsof_holders(path)


def _proc_holders(st: os.stat_result) -> list[tuple[int, str]]:
    own = os.getpid()
    found: list[tuple[int, str]] = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == own:
            continue
        folder = f"/proc/{name}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:
            continue  # gone, or another user's
        for fd in fds:
            try:
                other = os.stat(f"{folder}/{fd}")
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                found.append((int(name), _command(name)))
                break
    return found


def _command(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip() or "?"
    except OSError:
        return "?"


def _lsof_holders(path: str) -> list[tuple[int, str]]:
    lsof = shutil.which("lsof")
    if lsof is None:
        return []
    try:
        out = subprocess.run([lsof, "-F", "pc", "--", path], capture_output=True, text=True, timeout=30,
                             check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found: list[tuple[int, str]] = []
    pid = None
    for line in out.splitlines():
        if line.startswith("p") and line[1:].isdigit():
            pid = int(line[1:])
        elif line.startswith("c") and pid is not None and pid != os.getpid():
            found.append((pid, line[1:]))
            pid = None
    return found


def open_elsewhere(path: str) -> str | None:
    """Which other processes hold `path` open (`open in another process (pid 4242, codex)`), or None."""
    found = holders(path)
    if not found:
        return None
    named = ", ".join(f"pid {pid} ({command})" for pid, command in found[:4])
    if len(found) > 4:
        named += f" and {len(found) - 4} more"
    return f"open in another process ({named})"


def held_open(path: str) -> InputError | None:
    """The refusal for a file other processes hold open (naming them), or None when none does."""
    held = open_elsewhere(path)
    if held is None:
        return None
    return InputError(f"{held}: an agent writing through its open file would lose every later record into the "
                      "replaced file; nothing was written: quit it, then run again (or give --force)")


_TEMPORARY = re.compile(r"\A\.(?P<name>.+)\.[0-9a-f]{12}\.tmp\Z", re.DOTALL)


def sweep_temporary_files(path: str, *, now: float | None = None) -> list[str]:
    """Remove the temporary files a killed earlier run left beside `path` (`.NAME.<12 hex>.tmp`, what
    `atomic_write` and `write_backup` create): only those older than `STALE_SECONDS` and open in no process.
    Returns the names removed."""
    folder, name = os.path.split(os.path.abspath(path))
    now = time.time() if now is None else now
    removed: list[str] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for entry in names:
        match = _TEMPORARY.match(entry)
        if match is None or match.group("name") != name:
            continue
        leftover = os.path.join(folder, entry)
        try:
            st = os.lstat(leftover)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < STALE_SECONDS or holders(leftover):
            continue
        with contextlib.suppress(OSError):
            os.unlink(leftover)
            removed.append(leftover)
    return removed


def torn_tail(data: bytes) -> bytes:
    """The bytes of a torn last line of JSON Lines (`data`: the whole file): what follows the last line end
    when it is not a JSON object while the line before it is one (a writer that died mid-line); else b""."""
    cut = data.rfind(b"\n")
    if cut < 0:
        return b""
    tail = data[cut + 1:]
    if not tail.strip() or _is_object(tail):
        return b""
    before = data.rfind(b"\n", 0, cut)
    previous = data[before + 1:cut]
    return tail if _is_object(previous) else b""


def kept_bom(data: bytes) -> str:
    """The byte order mark the file read as `data` begins with, as text ("" for none): the reader drops it, the
    file written back keeps it."""
    return "\ufeff" if data.startswith(codecs.BOM_UTF8) else ""


def write_repaired(text: str, data: bytes, replace: Callable[[bytes], str | None], *,
                   changed: bool = True) -> tuple[str | None, str | None]:
    """Replace the file read as `data` with `text`, its repair, through `replace` (given the bytes to write, it
    returns the backup's name), without the torn last line `data` ends with: left out, so that the agent's next
    record starts a line of its own, its bytes kept in the backup. Nothing is written when that is `data` itself,
    nor when the repair changed nothing (`changed`) and no torn line is left out. Returns the backup's name (None:
    nothing written) and what is said of the torn line left out (None: none)."""
    written = text.encode("utf-8")
    tail = torn_tail(data)
    if tail and written.endswith(tail):
        written = written[:-len(tail)]
    if written == data or not (changed or tail):
        return None, None
    backup = replace(written)
    if not tail or backup is None:
        return backup, None
    last = data.count(b"\n") + 1
    return backup, f"line {last}: a torn last line ({len(tail)} bytes) left out; kept in {backup}"


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(strict_json.loads(line.decode("utf-8").removeprefix("\ufeff")), dict)
    except (ValueError, RecursionError):
        return False


class _NothingToReplace(Exception):
    """The text written is the file as it was: `replace_file` leaves it."""


def unchanged(path: str, st: os.stat_result, same: Callable[[], bool] | None = None) -> None:
    """Refuse (InputError, nothing written) when `path` is no longer the file read: another inode, size or
    mtime, or (`same`, for a file read again as it is written) other bytes."""
    try:
        now = os.stat(path)
    except OSError:
        now = None
    if now is None or (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != (
            st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) or (same is not None and not same()):
        raise InputError("changed while chatmend was repairing it (an agent still writing to it?); nothing was "
                         "written: run again once it is no longer in use")


def replace_file(path: str, chunks: Iterable[Chunk], data: bytes | IO[bytes], st: os.stat_result, *,
                 force: bool = False, wanted: Callable[[], bool] | None = None,
                 same: Callable[[], bool] | None = None, before: Callable[[], None] | None = None) -> str | None:
    """Replace `path` (the in-place target, read as `data`, the bytes or the file they are read from, whose stat
    was `st`, under `lock_file`) with `chunks`, the original kept in a new backup. Refused (InputError, nothing
    written) when the file changed since it was read (`same`: whether the file read again still holds the bytes
    first read) or, unless `force`, when another process holds it open. Returns the backup's name, or None when
    `wanted()`, asked once the text is written, says it is the file as it was (nothing replaced, no backup).
    `before` runs just before the checks that precede the rename (a test hook)."""
    sweep_temporary_files(path)
    backup: list[str] = []

    def commit() -> None:
        if wanted is not None and not wanted():
            raise _NothingToReplace
        if before is not None:
            before()
        unchanged(path, st, same)
        if not force:
            refusal = held_open(path)
            if refusal is not None:
                raise refusal
        try:
            backup.append(write_backup(path, data, st))
        except OSError as exc:
            raise InputError(f"{path}.bak: cannot write the backup: {exc.strerror or exc}; nothing was "
                             "written") from None
        try:
            unchanged(path, st)  # again: writing the backup took time
        except InputError:
            os.unlink(backup[0])
            raise

    try:
        atomic_write(path, chunks, like=st, before_replace=commit)
    except _NothingToReplace:
        return None  # the temporary file is gone, the file untouched
    return backup[0]
