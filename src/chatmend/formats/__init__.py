"""The file formats the command line reads and writes, detected from content.

`read(path, fmt)` returns a `Session`: the neutral messages, where each one came from, the provider whose
rules apply, and a writer that puts a (repaired) history back in the same format, keeping what chatmend
does not read untouched.
"""

from __future__ import annotations

from chatmend.formats._base import FORMATS, Session, detect, read
from chatmend.formats._io import InputError, Progress, atomic_write

__all__ = ["FORMATS", "InputError", "Progress", "Session", "atomic_write", "detect", "read"]
