"""The bytes the proxy forwards for a repaired body read back as exactly the body repair made, whether orjson or
json writes them (orjson when installed: numbers json.loads reads but orjson cannot write, NaN, Infinity, 1e999,
integers beyond 64 bits, go to json)."""

from __future__ import annotations

import json
import math
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import providers
from chatmend.proxy import _app, repair_request
from tests.strategies import examples

# JSON values as a client may send them: text (escapes, non-ASCII, control characters), integers past 64 bits,
# floats of any size (infinite ones are written by json.dumps as `Infinity`, which json.loads reads)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def chat_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A Chat body of tool rounds, some calls unanswered, with any text and any extra top-level fields."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": draw(st.text(max_size=10))}]
    for k in range(draw(st.integers(1, 8))):
        messages.append({"role": "user", "content": draw(st.text(min_size=1, max_size=10))})
        call_id = f"call_{k}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [{
            "id": call_id, "type": "function",
            "function": {"name": "read_file", "arguments": draw(st.text(max_size=10))}}]})
        if draw(st.booleans()):
            messages.append({"role": "tool", "tool_call_id": call_id, "content": draw(st.text(max_size=10))})
    extra = draw(st.dictionaries(st.sampled_from(["metadata", "temperature", "seed", "user"]), VALUES, max_size=3))
    return {"model": "gpt-4o", **extra, "messages": messages}


def _text(body: dict[str, Any], ascii_only: bool, spaced: bool) -> bytes:
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps(body, ensure_ascii=ascii_only, separators=separators).encode()


@examples(150)
@given(chat_bodies(), st.booleans(), st.booleans(), st.booleans())
def test_a_repaired_body_reads_back_as_the_body_repair_made(body: dict[str, Any], ascii_only: bool, spaced: bool,
                                                             with_orjson: bool) -> None:
    raw = _text(body, ascii_only, spaced)
    with mock.patch.object(_app, "_orjson", orjson if with_orjson else None):
        forwarded = repair_request("openai_chat", raw)
    expected = providers.get("openai_chat").repair_body(json.loads(raw))
    assert forwarded.changed == expected.changed
    if expected.changed:
        assert json.loads(forwarded.body) == expected.body
    else:
        assert forwarded.body is raw


@examples(300)
@given(VALUES)
def test_encoded_text_reads_back_as_the_value(value: Any) -> None:
    finite = not any(isinstance(v, float) and not math.isfinite(v) for v in _leaves(value))
    expected = json.loads(json.dumps(value, ensure_ascii=False).encode())
    assert json.loads(_app._encoded(value, finite)) == expected


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for inner in value.values() for leaf in _leaves(inner)]
    if isinstance(value, list):
        return [leaf for inner in value for leaf in _leaves(inner)]
    return [value]


BROKEN = [{"role": "user", "content": "go"},
          {"role": "assistant", "content": None, "tool_calls": [
              {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
          {"role": "user", "content": "and?"}]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "1" + "0" * 400 + ".0"])
def test_a_number_orjson_cannot_write_is_written_by_json(literal: str) -> None:
    raw = ('{"model":"gpt-4o","temperature":' + literal + ',"messages":' + json.dumps(BROKEN) + "}").encode()
    forwarded = repair_request("openai_chat", raw)
    assert forwarded.changed and forwarded.interrupted == ["call_1"]
    temperature = json.loads(forwarded.body)["temperature"]
    assert not math.isfinite(temperature) and (math.isnan(temperature) or temperature == float(literal))


def test_an_integer_beyond_64_bits_stays_an_integer() -> None:
    raw = json.dumps({"model": "gpt-4o", "seed": 2**70, "messages": BROKEN}).encode()
    forwarded = repair_request("openai_chat", raw)
    assert forwarded.changed and json.loads(forwarded.body)["seed"] == 2**70


def test_orjson_writes_a_repaired_body_as_json_would() -> None:
    """The proxy extra installs orjson; with it, the bytes are json.dumps's compact, unescaped text itself."""
    body = {"model": "gpt-4o", "messages": [*BROKEN[:2], {"role": "user", "content": "é \u2028 \x1f </"}]}
    forwarded = repair_request("openai_chat", json.dumps(body).encode())
    repaired = providers.get("openai_chat").repair_body(body).body
    written = json.dumps(repaired, ensure_ascii=False, separators=(",", ":")).encode()
    assert forwarded.body == written and orjson.dumps(repaired) == written
