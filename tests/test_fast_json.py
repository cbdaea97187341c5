"""`strict_json.fast_loads` (orjson) reads what the strict `strict_json.loads` reads, as it reads it, and refuses what
it refuses, but for nesting deeper than `loads` reads from where it is called, which `nesting_read` tells, and for
an integer past 64 bits, which it reads as a float."""

from __future__ import annotations

import importlib.util
import json
import sys
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chatmend import strict_json
from tests.strategies import examples

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8")),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)

_TRICKS = [b"1e999", b"-1e999", b"1E+400", b"9" * 320 + b".5", b"9" * 215 + b"e99", b"NaN", b"-Infinity",
           b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud83d\\ude00"', b'"\x01"', b'"\t"', b"01", b"1.", b".5", b"+1",
           b"[1,]", b'{"a":1,}', b"\xff", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"7" * 4301, b"-" + b"7" * 4300, b"1e-999",
           b"[" * 250 + b"]" * 250, b'"\\x"', b"tru", b'{"a":1,"a":2,"b":3,"a":4}', b"\x0c", b" ", b"\r", b"0x10",
           b"1.7976931348623157e308", b"1.7976931348623159e308", b"4.9e-324", b"2.4e-324", b"-0", b"-0.0e-0"]


def _outcome(read: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "read", read(data)
    except (ValueError, RecursionError):
        return "refused", None


def _strict(data: bytes) -> Any:
    return strict_json.loads(data.decode("utf-8"))


def _same(a: Any, b: Any) -> bool:
    """Equal JSON values, a dict's key order included (a float NaN never comes out of either)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def _close(fast: Any, strict: Any) -> bool:
    """`_same`, but for an integer past 64 bits (or of some 300 digits), which `fast_loads` reads as the float
    nearest to it."""
    if isinstance(strict, int) and not isinstance(strict, bool) and not -(2**63) <= strict < 2**64:
        return type(fast) is float and fast == float(strict)
    if isinstance(strict, dict):
        return isinstance(fast, dict) and list(fast) == list(strict) and all(_close(fast[k], strict[k]) for k in fast)
    if isinstance(strict, list):
        return isinstance(fast, list) and len(fast) == len(strict) and all(map(_close, fast, strict))
    return _same(fast, strict)


@given(_values, st.booleans(), st.data())
@examples(500)
def test_what_fast_loads_reads_the_strict_reader_reads_the_same(value: Any, ascii: bool, data: st.DataObject) -> None:
    text = json.dumps(value, ensure_ascii=ascii).encode("utf-8")
    mutated = text
    for _ in range(data.draw(st.integers(0, 3))):  # tokens the two parsers may disagree on, anywhere
        at = data.draw(st.integers(0, len(mutated)))
        cut = data.draw(st.integers(0, 3))
        mutated = mutated[:at] + data.draw(st.sampled_from(_TRICKS) | st.binary(max_size=3)) + mutated[at + cut:]
    for case in (text, mutated):
        fast, strict = _outcome(strict_json.fast_loads, case), _outcome(_strict, case)
        if fast[0] == "read":  # what it reads the strict reader reads, to the value
            assert strict[0] == "read" and _close(fast[1], strict[1]), case
        if case is text:  # what a writer writes, at the depths records have, is read quickly and the same
            assert fast[0] == "read" and _same(fast[1], strict[1])


@pytest.mark.parametrize("text", [
    b'{"a":NaN}', b'{"a":Infinity}', b'{"a":-Infinity}', b'{"a":"\\ud800"}', b'{"a":"\\udc00 x"}', b'{"\\ud800":1}',
    b'{"a":"\\ud800\\u0041"}', b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}', b'{"a":"x\ty"}', b'{"a":"x\x00y"}',
    b'{"a":' + b"7" * 4301 + b"}", b'{"a":1} x', b'{"a":1} {"b":2}', b'{"a":01}', b'{"a":[1,]}', b"\xef\xbb\xbf{}",
    b'{"a":1e999}', b'{"a":-1e400}', b'{"a":1E+400}', b'{"a":1.5e309}', b'{"a":' + b"9" * 320 + b".5}",
    b'{"a":' + b"9" * 215 + b"e99}", b'{"a":1.7976931348623159e308}', b'{"a":"\\x"}', b'{"a":tru}', b"\x0c{}"])
def test_what_the_strict_reader_refuses_fast_loads_refuses(text: bytes) -> None:
    with pytest.raises(ValueError):
        strict_json.fast_loads(text)
    with pytest.raises(ValueError):
        _strict(text)


@pytest.mark.parametrize("text", [
    b'{"uuid":"5b0e3c1e-7f0a-4c47-8e12-0c6f8e123d11","sessionId":"ab8e1234"}',
    b'{"a":1e30,"b":1.5e-300,"c":1234567890123456789,"d":"version 2.1.332","e":1e99,"f":1.7976931348623157e308}',
    b'{"timestamp":"2026-12-01T10:00:00.000Z","usage":{"input_tokens":18000}}\r',
    b'{"a":1,"b":2,"a":3}', b'{"a":"\\ud83d\\ude00 \xe2\x80\xa8 \\u0000"}', b'  {"a":[]}  '])
def test_ordinary_records_read_the_same(text: bytes) -> None:
    assert _same(strict_json.fast_loads(text), _strict(text))


@pytest.mark.parametrize("number", [2**64, 2**64 + 1, -(2**63) - 1, 10**300])
def test_an_integer_past_64_bits_reads_as_the_float_nearest_it(number: int) -> None:
    text = b'{"a":%d}' % number
    assert _strict(text) == {"a": number}
    fast = strict_json.fast_loads(text)["a"]
    assert type(fast) is float and fast == float(number)


def test_fast_loads_reads_nesting_to_its_documented_depth() -> None:
    deepest = strict_json.FAST_DEPTH
    assert strict_json.fast_loads(b"[" * deepest + b"]" * deepest) is not None
    with pytest.raises(ValueError):
        strict_json.fast_loads(b"[" * (deepest + 1) + b"]" * (deepest + 1))


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _at_depth(frames: int, run: Any) -> Any:
    return _at_depth(frames - 1, run) if frames else run()


@pytest.mark.parametrize("frames", [0, 200, 600])
def test_nesting_read_is_what_loads_reads_a_reader_deeper(frames: int) -> None:
    if sys.version_info >= (3, 12):
        pytest.skip("json.loads no longer recurses against the recursion limit")
    deepest = _at_depth(frames, strict_json.nesting_read)
    assert 0 <= deepest <= strict_json.FAST_DEPTH  # at CPython's default limit, less than orjson reads
    assert _at_depth(frames + 90, lambda: strict_json.loads(_nested(deepest)))  # read by a reader deeper down
    with pytest.raises(json.JSONDecodeError, match="nested too deeply"):
        _at_depth(frames, lambda: strict_json.loads(_nested(deepest + 200)))
    assert deepest < _at_depth(max(frames - 100, 0), strict_json.nesting_read) or frames == 0


@example(5000)
@given(st.integers(1200, 20_000))
@examples(3)
def test_a_process_that_raised_the_recursion_limit_reads_as_deep_as_fast_loads(limit: int) -> None:
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        assert strict_json.nesting_read() == strict_json.FAST_DEPTH + 1
        assert strict_json.loads(_nested(strict_json.FAST_DEPTH))
    finally:
        sys.setrecursionlimit(before)


def test_without_orjson_fast_loads_is_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)  # as on an interpreter orjson has no wheel for: no import
    spec = importlib.util.spec_from_file_location("chatmend_json_without_orjson", strict_json.__file__)
    assert spec is not None and spec.loader is not None
    alone = importlib.util.module_from_spec(spec)  # a copy of the module, imported again; the real one untouched
    spec.loader.exec_module(alone)
    assert alone.fast_loads is not sys.modules["chatmend.strict_json"].fast_loads
    assert alone.fast_loads(b'{"a":' + b"1" * 30 + b"}") == {"a": int("1" * 30)}  # exact: `loads` read it
    with pytest.raises(json.JSONDecodeError, match="lone surrogate"):
        alone.fast_loads(b'{"a":"\\ud800"}')
