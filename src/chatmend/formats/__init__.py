"""The file formats the command line reads and writes, detected from content.

`read(path, fmt)` returns a `Session`: the neutral messages, where each one came from, the provider whose
rules apply, and a writer that puts a (repaired) history back in the same format, keeping what chatmend
does not read untouched.
"""

from __future__ import annotations

from chatmend.formats._base import FORMATS, TRANSCRIPT_FORMATS, detect, read, read_lines
from chatmend.formats._io import InputError, Progress, atomic_copy, atomic_write
from chatmend.formats._providers import PROVIDER_FORMATS, adapter, wire_json
from chatmend.formats._session import Session

__all__ = [
    "FORMATS", "PROVIDER_FORMATS", "TRANSCRIPT_FORMATS", "InputError", "Progress", "Session", "adapter",
    "atomic_copy", "atomic_write", "detect", "read", "read_lines", "wire_json",
]
