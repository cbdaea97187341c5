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
from typing import Any

from pydantic_core import from_json

__all__ = ["NESTING", "NotFinite", "brief", "finite_loads", "loads", "lone_surrogate", "may_overflow", "quick_loads",
           "suspect"]

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

def quick_loads(line: bytes) -> Any:
    """The JSON value in `line` (UTF-8 bytes), read by pydantic-core's parser (about half the time of `json.loads`
    on a transcript's records), for a caller that only needs to know whether `loads` would read it the same: it
    refuses what `loads` refuses (a ValueError: NaN, Infinity, an integer of more than 4,300 digits, a lone
    surrogate, bytes that are not UTF-8) and more (nesting past 200 levels), but for one thing: a number too large
    for a float reads as infinite. Text where `may_overflow` is false holds no such number. Values are those of
    `loads`, the last of a repeated key included (pydantic-core 2.33 and later: the pydantic floor)."""
    if 0 < sys.get_int_max_str_digits() < 4300:
        raise ValueError("the process limits integers below pydantic-core's 4,300 digits")  # `loads` refuses more
    return from_json(line, allow_inf_nan=False, cache_strings="keys")


_NUMBER_SHAPE = bytes(
    ord("0") if byte in b"0123456789+" else ord("e") if byte in b"eE" else ord("d") if byte in b",}] \t\r\n"
    else ord("x") for byte in range(256))
"""Bytes as `may_overflow` sees them: a digit (or a `+`, so that `e+400` reads as an exponent of four digits) is
`0`, an exponent's `e`, a byte that may end a number `d`, any other `x`."""
_EXPONENT_END = re.compile(rb"0*(?:d|\Z)")
_LONG_DIGITS = b"0" * 200


def may_overflow(data: bytes) -> bool:
    """False when JSON text (UTF-8 bytes) surely holds no number too large for a float: one needs an exponent of
    three digits or more right after a digit and ending the number, or some 200 digits in a row (a 2-digit exponent
    takes 210 to pass 1.8e308). True for such text, and rarely for other text (a `1e+100,` in a string)."""
    shape = data.translate(_NUMBER_SHAPE)  # one pass in C, then searches for one pattern instead of many
    at = shape.find(b"0e000")
    while at >= 0:
        if _EXPONENT_END.match(shape, at + 5):
            return True
        at = shape.find(b"0e000", at + 1)  # a hex id's `8e123` goes on with a letter, a `-` or a quote
    return _LONG_DIGITS in shape


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
