"""Tool names as Converse takes them (BR12: 1-64 characters of `[a-zA-Z0-9_-]`, in `toolSpec.name` and
`toolUse.name`).

A name that fits is sent as it is. Another (an MCP tool's `server.tool`, a name with spaces, a name of 65
characters or more) is sent as `ids.normalize_tool_id` makes an id fit: every other character as `_`, cut, and a
digest of the whole name after it (`weather.get` -> `weather_get_<10 hex>`). The mapped name depends only on the
name, so a longer history maps its earlier calls alike; two names never map to one (a clash with another name of
the request, which takes a search for it, is met with a salted digest). The body carries only the mapped names:
reading it back gives them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chatmend.ids import digest
from chatmend.providers.bedrock.wire import TOOL_NAME

__all__ = ["wire_names"]

_MAX_LENGTH = 64
_DIGEST = 10
_OTHER = re.compile(r"[^a-zA-Z0-9_-]")


def _mapped(name: str, attempt: int) -> str:
    """The name's characters outside BR12's as `_`, cut to leave room for `_` and a digest of the name."""
    stem = _OTHER.sub("_", name)[: _MAX_LENGTH - _DIGEST - 1]
    return f"{stem}_{digest(name if not attempt else f'{name}#{attempt}', _DIGEST)}"


def wire_names(names: Iterable[str]) -> dict[str, str]:
    """Each distinct name of one request to the name Converse is sent: all different, all fitting BR12."""
    distinct = list(dict.fromkeys(names))
    out = {name: name for name in distinct if TOOL_NAME.fullmatch(name)}
    taken = set(out)
    for name in distinct:
        if name in out:
            continue
        attempt = 0
        mapped = _mapped(name, attempt)
        while mapped in taken:
            attempt += 1
            mapped = _mapped(name, attempt)
        out[name] = mapped
        taken.add(mapped)
    return out
