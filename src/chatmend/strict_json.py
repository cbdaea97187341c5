"""Reading JSON text as JSON: what `json.loads` accepts beyond the standard is refused with its position.

`json.loads` reads `NaN`, `Infinity` and `1e999` (an infinite float), which no provider takes and no writer may
emit; it raises a bare ValueError on an integer longer than Python's digit limit (process state the library must
not change) and a RecursionError on deep nesting; and it turns a lone surrogate escape (`"\\ud800"`) into a string
that no UTF-8 writer can encode. Each is a `json.JSONDecodeError` here, at its line and column.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

try:  # orjson reads a record faster than `json.loads` does; not every interpreter has a wheel (PyPy)
    import orjson as _orjson
except ImportError:  # pragma: no cover - CPython installs it with chatmend
    _orjson = None  # type: ignore[assignment]


__all__ = ["FAST_DEPTH", "LONE_HALF", "NESTING", "REPLACEMENT", "LoneSurrogate", "NotFinite", "brief", "fast_loads",
           "find_lone_surrogates", "finite_loads", "loads", "lone_surrogate", "mend_text", "nesting_read",
           "suspect", "without_lone_surrogates"]

NESTING = "nested too deeply (arrays and objects more than about 900 levels deep)"


class NotFinite(ValueError):
    """A number JSON has no way to write (raised from the parser's hooks, located by `loads`)."""


def _constant(name: str) -> Any:
    raise NotFinite(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotFinite(text)
    return value


_CONSTANT = re.compile(r"(?<![\w.])(-?Infinity|NaN)(?!\w)")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""What every escape of a surrogate starts with (a quick test before `_SURROGATE`'s exact one)."""
# A \uD800-\uDFFF escape not itself escaped (an even run of backslashes before it).
_SURROGATE = re.compile(r"(?<!\\)(?:\\\\)*\\u([dD][89a-fA-F][0-9a-fA-F]{2})")
_EXPONENT = re.compile(r"\d[eE][+]?\d{3}")


def json_kind(value: object) -> str:
    """A JSON value's type, in words (what an error says it got)."""
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return {str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")


def brief(value: object) -> str:
    """A value from a file as an error message shows it: a string or a number as its repr (cut short), a list or
    an object by its kind (its repr may be megabytes, or too deep for `repr` itself)."""
    if isinstance(value, (dict, list, tuple)):
        return "<an object>" if isinstance(value, dict) else "<a list>"
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:76] + "..." + shown[-1]


def suspect(text: str) -> bool:
    """True when `text` may hold what `loads` refuses and a lenient parser (pydantic-core's) reads: NaN,
    Infinity, a huge exponent or a surrogate escape. Cheap; false positives only cost the careful path."""
    return "NaN" in text or "Infinity" in text or "\\u" in text or _EXPONENT.search(text) is not None


def lone_surrogate(text: str) -> int | None:
    """The offset of the first escape of a lone surrogate in JSON text (a pair's two halves are fine)."""
    if "\\" not in text or _SURROGATE_ESCAPE.search(text) is None:
        return None  # the common case, told by a plain search before the pattern's
    pending: int | None = None  # a high half waiting for its low half right after it
    for match in _SURROGATE.finditer(text):
        code = int(match.group(1), 16)
        start = match.end() - 6
        if code < 0xDC00:  # a high half
            if pending is not None:
                return pending
            pending = start
        elif pending is not None and start == pending + 6:
            pending = None
        else:
            return start
    return pending


def _deep_at(text: str) -> int:
    """Where nesting first goes past what the parser took (an error path only, so a plain scan)."""
    depth, in_string, escaped = 0, False, False
    deepest, where = 0, 0
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, i
        elif char in "]}":
            depth -= 1
    return where


_decoder = json.JSONDecoder(parse_constant=_constant, parse_float=_finite)
_decode = _decoder.decode
"""`json.loads` with these hooks, made once: `json.loads` builds a decoder on every call given hooks, which cost
more than parsing a tool call's few arguments."""

def _loads_bytes(line: bytes) -> Any:
    return loads(line.decode("utf-8"))


fast_loads: Callable[[bytes], Any] = _loads_bytes if _orjson is None else _orjson.loads
"""The JSON value in a line (UTF-8 bytes), read by orjson (quicker than `json.loads` on a transcript's
records; orjson itself, not a function calling it: it is called once a record), for a caller that
only needs to know whether `loads` reads it and what it reads at a few keys: it refuses (a ValueError) what
`loads` refuses (NaN, Infinity, a number too large for a float, a lone surrogate, bytes that are not UTF-8) and
more (an integer past the largest float, of 309 digits, nesting past `FAST_DEPTH` levels), but for nesting
`loads` cannot read from where it is called (`nesting_read`). Values are those of `loads` (the last of a repeated
key) but for an integer past 64 bits, a float here. Without orjson (no wheel for this interpreter), `loads`
itself."""


FAST_DEPTH = 1024
"""The deepest `fast_loads` reads: orjson's documented limit (arrays and objects 1,024 levels deep)."""
_FRAMES = 100
"""Frames a reader may stand deeper in the stack than the caller of `nesting_read` that chose it."""


def nesting_read() -> int:
    """How many levels deep `loads` reads arrays and objects when called from a little deeper than here, or
    `FAST_DEPTH` + 1 when that is deeper than `fast_loads` reads: `json.loads` recurses, so on CPython 3.11 and
    older the recursion limit less the stack in use bounds it (process state the library must not change).
    Found by reading nested arrays, a binary search of about ten short reads."""
    if _reads_nested(FAST_DEPTH + 1 + _FRAMES):
        return FAST_DEPTH + 1
    low, high = 0, FAST_DEPTH + 1 + _FRAMES  # `loads` reads `low` levels here, not `high`
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if _reads_nested(middle) else (low, middle)
    return max(low - _FRAMES, 0)


def _reads_nested(depth: int) -> bool:
    try:
        _decode("[" * depth + "]" * depth)
    except RecursionError:
        return False
    return True


def finite_loads(data: str | bytes) -> Any:
    """`json.loads(data)`, raising `NotFinite` at a number JSON has no way to write (`NaN`, `Infinity`, `1e999`),
    and nothing else beyond what `json.loads` raises (no position: for a caller that only needs to know)."""
    text = data.decode(json.detect_encoding(data), "surrogatepass") if isinstance(data, bytes) else data
    return _decode(text)


def loads(text: str, *, lone_surrogates: bool = False) -> Any:
    """`json.loads(text)`, refusing non-finite numbers, over-long integers, deep nesting and lone surrogates
    with a `json.JSONDecodeError` at the place (`lone_surrogates=True`: a lone surrogate escape is read, as
    `json.loads` reads it, for a caller that finds and mends them: `find_lone_surrogates`)."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)  # as json.loads
    try:
        value = _decode(text)
    except json.JSONDecodeError:
        raise
    except NotFinite as exc:
        match = _CONSTANT.search(text) if str(exc) in ("NaN", "Infinity", "-Infinity") else None
        pos = match.start() if match else max(text.find(str(exc)), 0)
        raise json.JSONDecodeError(f"{exc} is not a JSON number (JSON numbers are finite)", text, pos) from None
    except RecursionError:
        raise json.JSONDecodeError(NESTING, text, _deep_at(text)) from None
    except ValueError as exc:  # the int() of a number longer than sys.get_int_max_str_digits()
        limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 4300
        match = re.search(rf"\d{{{limit + 1},}}", text) if limit else None
        raise json.JSONDecodeError(f"an integer of more than {limit} digits (Python's limit for reading one)",
                                   text, match.start() if match else 0) from exc
    lone = None if lone_surrogates else lone_surrogate(text)
    if lone is not None:
        raise json.JSONDecodeError("a lone surrogate escape: not valid UTF-8 text", text, lone)
    return value


# ------------------------------------------------------------------------------------ lone surrogates

REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes: U+FFFD REPLACEMENT CHARACTER, as a UTF-8 decoder writes an undecodable byte."""
_SURROGATES = re.compile("[\ud800-\udfff]")
LONE_HALF = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
"""One half of a surrogate pair with no other half beside it (a high half then a low half, as two characters of a
Python string, is written as a pair of escapes that JSON reads back as one character, so it is not lone)."""


class LoneSurrogate:
    """A string in a JSON value that holds a lone surrogate, where `find_lone_surrogates` found it."""

    __slots__ = ("escape", "high", "path")

    def __init__(self, path: str, escape: str, high: bool) -> None:
        self.path = path
        """Where the string is, e.g. `messages[3].content[0].text` (a key holding one: its object's path, then
        `key` and the key's repr)."""
        self.escape = escape
        """The first lone half, as JSON escapes it (`\\ud83d`)."""
        self.high = high
        """True for a high (leading) half with no low half after it; False for a low half alone."""

    def __repr__(self) -> str:
        return f"LoneSurrogate({self.path!r}, {self.escape!r})"


def _child(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _lone_in(text: str) -> re.Match[str] | None:
    if text.isascii() or _SURROGATES.search(text) is None:
        return None
    return LONE_HALF.search(text)


def find_lone_surrogates(value: Any, path: str = "") -> list[LoneSurrogate]:
    """Every string (value or key) of decoded JSON that holds a lone surrogate, in document order, with its path
    (`path` names `value` itself): what no UTF-8 writer can encode and what providers refuse as invalid JSON.
    Walked with a stack, so any depth the parser read is walked."""
    if _encodes(value):
        return []
    found: list[LoneSurrogate] = []
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            match = _lone_in(item)
            if match is not None:
                half = match.group()
                found.append(LoneSurrogate(where, f"\\u{ord(half):04x}", half < "\udc00"))
        elif isinstance(item, dict):
            for key in item:
                if isinstance(key, str) and _lone_in(key) is not None:
                    half = LONE_HALF.search(key).group()  # type: ignore[union-attr]
                    found.append(LoneSurrogate(f"{where or '(top)'} key {key!r}", f"\\u{ord(half):04x}",
                                               half < "\udc00"))
            stack.extend((item[key], _child(where, key)) for key in reversed(list(item)))
        elif isinstance(item, (list, tuple)):
            stack.extend((item[k], _child(where, k)) for k in range(len(item) - 1, -1, -1))
    return found


def _encodes(value: Any) -> bool:
    """True when orjson writes `value` as UTF-8: it refuses any surrogate code point, in a value or a key, so then
    there is no lone one to look for (False: not known, the walk decides)."""
    if _orjson is None:
        return False
    try:
        _orjson.dumps(value)
    except TypeError:  # a surrogate, an integer past 64 bits, a value that is not JSON
        return False
    return True


def mend_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (the rest, pairs included, as it was)."""
    return LONE_HALF.sub(REPLACEMENT, text) if _lone_in(text) is not None else text


def without_lone_surrogates(value: Any, path: str = "") -> tuple[Any, list[str]]:
    """`value` with every lone surrogate of its strings and keys replaced by U+FFFD, and the paths of the strings
    changed (`find_lone_surrogates`' paths). Only the containers on the way to a changed string are new: every
    other list, object and string is the input's own, and a value with none comes back as the very object."""
    found = find_lone_surrogates(value, path)
    if not found:
        return value, []
    return _mended(value), [f.path for f in found]


def _mended(value: Any) -> Any:
    """The copy `without_lone_surrogates` makes (recursive only along containers that hold a lone surrogate)."""
    if isinstance(value, str):
        return mend_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = mend_text(key) if isinstance(key, str) else key
            out[new_key] = _mended(item) if find_lone_surrogates(item) else item
        return out
    if isinstance(value, (list, tuple)):
        return [_mended(item) if find_lone_surrogates(item) else item for item in value]
    return value


def copy_json(value: Any) -> Any:
    """A copy of JSON data for a body a writer returns, so that a caller editing the body never edits the (frozen)
    history it was written from."""
    if isinstance(value, dict):
        for item in value.values():
            if isinstance(item, (dict, list)):
                return copy_tree(value)  # a stack, not recursion: any depth read is copied
        return dict(value)  # atomic values (the usual arguments) need nothing more
    return copy_tree(value)


def copy_tree(value: Any, *, sort_keys: bool = False, leaf: Callable[[Any], Any] | None = None) -> Any:
    """A copy of JSON data (new dicts and lists, tuples made lists; keys sorted when asked), made with a stack
    rather than recursion, so that any depth the parser reads can be copied. With `leaf`, every value is first
    what `leaf` makes of it (an SDK object as its dict, bytes as text: Gemini's `plain`)."""
    if leaf is not None:
        value = leaf(value)
    if not isinstance(value, (dict, list, tuple)):
        return value
    top: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, top)]
    while stack:
        source, target = stack.pop()
        if isinstance(source, dict):
            for key in sorted(source) if sort_keys else source:
                item = source[key] if leaf is None else leaf(source[key])
                if isinstance(item, (dict, list, tuple)):
                    inner: Any = {} if isinstance(item, dict) else []
                    target[key] = inner
                    stack.append((item, inner))
                else:
                    target[key] = item
        else:
            for item in source if leaf is None else map(leaf, source):
                if isinstance(item, (dict, list, tuple)):
                    inner = {} if isinstance(item, dict) else []
                    target.append(inner)
                    stack.append((item, inner))
                else:
                    target.append(item)
    return top
