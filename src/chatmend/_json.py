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
from collections.abc import Callable
from typing import Any

try:  # orjson reads a record in a third of the time of `json.loads`; not every interpreter has a wheel (PyPy)
    import orjson as _orjson
except ImportError:  # pragma: no cover - CPython installs it with chatmend
    _orjson = None  # type: ignore[assignment]


__all__ = ["FAST_DEPTH", "NESTING", "NotFinite", "brief", "fast_loads", "finite_loads", "loads", "lone_surrogate",
           "nesting_read", "suspect"]

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
        return None  # the common case, cheaply (a plain search for `\\u` costs a third of parsing the text)
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
"""The JSON value in a line (UTF-8 bytes), read by orjson (about a third of the time of `json.loads` on a
transcript's records; orjson itself, not a function calling it: it is called once a record), for a caller that
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


def loads(text: str) -> Any:
    """`json.loads(text)`, refusing non-finite numbers, over-long integers, deep nesting and lone surrogates
    with a `json.JSONDecodeError` at the place."""
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
    lone = lone_surrogate(text)
    if lone is not None:
        raise json.JSONDecodeError("a lone surrogate escape: not valid UTF-8 text", text, lone)
    return value


def copy_json(value: Any) -> Any:
    """A copy of JSON data for a body a writer returns, so that a caller editing the body never edits the (frozen)
    history it was written from."""
    if isinstance(value, dict) and not any(isinstance(v, (dict, list)) for v in value.values()):
        return dict(value)  # atomic values (the usual arguments) need nothing more
    return copy_tree(value)  # a stack, not recursion: any depth read is copied


def copy_tree(value: Any, *, sort_keys: bool = False) -> Any:
    """A copy of JSON data (new dicts and lists, tuples made lists; keys sorted when asked), made with a stack
    rather than recursion, so that any depth the parser reads can be copied."""
    if not isinstance(value, (dict, list, tuple)):
        return value
    top: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, top)]
    while stack:
        source, target = stack.pop()
        if isinstance(source, dict):
            for key in sorted(source) if sort_keys else source:
                item = source[key]
                if isinstance(item, (dict, list, tuple)):
                    inner: Any = {} if isinstance(item, dict) else []
                    target[key] = inner
                    stack.append((item, inner))
                else:
                    target[key] = item
        else:
            for item in source:
                if isinstance(item, (dict, list, tuple)):
                    inner = {} if isinstance(item, dict) else []
                    target.append(inner)
                    stack.append((item, inner))
                else:
                    target.append(item)
    return top
