"""The command line's format table: every format it reads and writes, detected from content, each handed to its
reader (a store of `chatmend.transcripts`, a provider's body, the neutral JSON Lines).

`read(path, fmt)` returns a `Session`: the neutral messages, where each one came from, the provider whose
rules apply, and a writer that puts a (repaired) history back in the same format, keeping what chatmend
does not read untouched. The table stands above the stores; `Session` and `InputError`, which it re-exports, are
the file layer's (`chatmend.files`), below them.
"""

from __future__ import annotations

from chatmend.files.bodies import adapter, provider_formats
from chatmend.files.io import InputError
from chatmend.files.session import Session
from chatmend.formats._base import (
    TRANSCRIPT_FORMATS,
    detect,
    formats,
    read,
    read_bytes,
    read_lines,
    store_formats,
    streamed,
)
from chatmend.formats._detect import NEUTRAL

__all__ = [
    "NEUTRAL", "TRANSCRIPT_FORMATS", "InputError", "Session", "adapter", "detect", "formats", "provider_formats",
    "read", "read_bytes", "read_lines", "store_formats", "streamed",
]
