"""`_json.quick_loads` (pydantic-core's parser) reads what the strict `_json.loads` reads, as it reads it, and
refuses what it refuses, but for a number too large for a float, which `may_overflow` always finds."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chatmend import _json as strict_json
from tests.strategies import examples

_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8")),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)

_TRICKS = [b"1e999", b"-1e999", b"1E+400", b"9" * 320 + b".5", b"9" * 215 + b"e99", b"NaN", b"-Infinity",
           b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud83d\\ude00"', b'"\x01"', b'"\t"', b"01", b"1.", b".5", b"+1",
           b"[1,]", b'{"a":1,}', b"\xff", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"7" * 4301, b"-" + b"7" * 4300, b"1e-999",
           b"[" * 250 + b"]" * 250, b'"\\x"', b"tru", b'{"a":1,"a":2,"b":3,"a":4}', b"\x0c", b" ", b"\r", b"0x10"]


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


@given(_values, st.booleans(), st.data())
@examples(500)
def test_what_quick_loads_reads_the_strict_reader_reads_the_same(value: Any, ascii: bool, data: st.DataObject) -> None:
    text = json.dumps(value, ensure_ascii=ascii).encode("utf-8")
    mutated = text
    for _ in range(data.draw(st.integers(0, 3))):  # tokens the two parsers may disagree on, anywhere
        at = data.draw(st.integers(0, len(mutated)))
        cut = data.draw(st.integers(0, 3))
        mutated = mutated[:at] + data.draw(st.sampled_from(_TRICKS) | st.binary(max_size=3)) + mutated[at + cut:]
    for case in (text, mutated):
        quick, strict = _outcome(strict_json.quick_loads, case), _outcome(_strict, case)
        if quick[0] == "read" and not strict_json.may_overflow(case):
            assert strict[0] == "read" and _same(quick[1], strict[1]), case
        if case is text:  # what a writer writes, at the depths records have, is read quickly too
            assert quick[0] == "read" and _same(quick[1], strict[1])


@pytest.mark.parametrize("number", [b"1e999", b"-1e999", b"1E+400", b"1e0400", b"1.5e309", b"9" * 320 + b".5",
                                    b"9" * 215 + b"e99", b"9" * 400 + b"e-50", b"1e99999999"])
def test_a_number_too_large_for_a_float_is_found(number: bytes) -> None:
    for text in (b'{"a":' + number + b"}", b'{"a":[' + number + b"]}", b'{"a": ' + number + b" ,\"b\":1}"):
        assert strict_json.may_overflow(text)
        assert math.isinf(strict_json.quick_loads(text)["a"] if b"[" not in text[:7] else
                          strict_json.quick_loads(text)["a"][0])  # what may_overflow is there for
        with pytest.raises(json.JSONDecodeError, match="not a JSON number"):
            _strict(text)


@pytest.mark.parametrize("text", [
    b'{"uuid":"5b0e3c1e-7f0a-4c47-8e12-0c6f8e123d11","sessionId":"ab8e1234"}',  # hex ids: e and digits in strings
    b'{"a":1e30,"b":1.5e-300,"c":12345678901234567890,"d":"version 2.1.332","e":1e99}',
    b'{"timestamp":"2026-12-01T10:00:00.000Z","usage":{"input_tokens":18000}}'])
def test_ordinary_records_need_no_strict_reading(text: bytes) -> None:
    assert not strict_json.may_overflow(text)
    assert _same(strict_json.quick_loads(text), _strict(text))


@pytest.mark.parametrize("text", [
    b'{"a":NaN}', b'{"a":Infinity}', b'{"a":"\\ud800"}', b'{"a":"\\udc00 x"}', b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}',
    b'{"a":"x\ty"}', b'{"a":' + b"7" * 4301 + b"}", b'{"a":1} x', b'{"a":01}', b'{"a":[1,]}', b"\xef\xbb\xbf{}"])
def test_what_the_strict_reader_refuses_quick_loads_refuses(text: bytes) -> None:
    with pytest.raises(ValueError):
        strict_json.quick_loads(text)
    with pytest.raises(ValueError):
        _strict(text)


@example(1000)
@given(st.integers(640, 4299))
@examples(5)
def test_a_process_that_lowered_the_integer_limit_gets_the_strict_reader(limit: int) -> None:
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        with pytest.raises(ValueError):  # pydantic-core would read the integers `loads` now refuses
            strict_json.quick_loads(b'{"a":1}')
    finally:
        sys.set_int_max_str_digits(before)
    assert strict_json.quick_loads(b'{"a":1}') == {"a": 1}
