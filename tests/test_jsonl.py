"""Canonical JSON Lines: fixed key order, no spaces, UTF-8, defaults left out, located errors."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, HistoryError, ImagePart, TextPart, ThinkingPart, ToolCall, dumps, loads
from chatmend.jsonl import message_to_dict
from chatmend.messages import coerce_message
from tests.strategies import examples, messy_histories


def test_the_documented_lines_round_trip_byte_for_byte() -> None:
    text = (
        '{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"search","arguments":{"q":"x"}}]}\n'
        '{"role":"tool","tool_call_id":"c1","tool_name":"search","content":"3 hits"}\n'
        '{"role":"user","content":[{"type":"text","text":"this one"},'
        '{"type":"image","media_type":"image/png","data":"iVBOR..."}]}\n'
    )
    history = loads(text)
    assert history == [
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="c1", name="search", arguments={"q": "x"}),)),
        ChatMessage(role="tool", tool_call_id="c1", tool_name="search", content="3 hits"),
        ChatMessage(role="user", content=(TextPart(text="this one"),
                                          ImagePart(media_type="image/png", data="iVBOR..."))),
    ]
    assert dumps(history) == text


def test_defaults_are_left_out_and_non_ascii_is_kept() -> None:
    line = dumps([ChatMessage(role="user", content="héllo 中文 🙂")])
    assert line == '{"role":"user","content":"héllo 中文 🙂"}\n'


def test_error_results_and_thinking_write_their_fields_in_fixed_order() -> None:
    history = [
        ChatMessage(role="assistant", content=(
            ThinkingPart(text="hmm", signature="sig", provider="anthropic"),
            ThinkingPart(redacted=True, data="opaque", provider="anthropic"),
        ), tool_calls=(ToolCall(id="a", name="t", arguments="{cut"),)),
        ChatMessage(role="tool", tool_call_id="a", content="boom", is_error=True),
    ]
    assert dumps(history) == (
        '{"role":"assistant","content":[{"type":"thinking","text":"hmm","signature":"sig","provider":"anthropic"},'
        '{"type":"thinking","redacted":true,"data":"opaque","provider":"anthropic"}],'
        '"tool_calls":[{"id":"a","name":"t","arguments":"{cut"}]}\n'
        '{"role":"tool","tool_call_id":"a","is_error":true,"content":"boom"}\n'
    )


def test_equal_histories_give_equal_bytes_whatever_the_key_order_of_arguments() -> None:
    args_a, args_b = {"x": 1, "y": {"b": 2, "a": 1}}, {"y": {"a": 1, "b": 2}, "x": 1}
    a = ChatMessage(role="assistant", tool_calls=(ToolCall(id="a", name="t", arguments=args_a),))
    b = ChatMessage(role="assistant", tool_calls=(ToolCall(id="a", name="t", arguments=args_b),))
    assert a == b
    assert dumps([a]) == dumps([b])


def test_a_line_separator_inside_a_string_is_escaped_so_lines_stay_lines() -> None:
    history = [ChatMessage(role="user", content="a\u2028b\u0085c\x1cd\u2029")]
    text = dumps(history)
    assert text == '{"role":"user","content":"a\\u2028b\\u0085c\\u001cd\\u2029"}\n'
    assert len(text.splitlines()) == 1
    assert loads(text) == history


def test_blank_lines_and_crlf_are_accepted() -> None:
    text = '\n{"role":"user","content":"a"}\r\n\n{"role":"user","content":"b"}\r\n'
    assert [m.content for m in loads(text)] == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"role":"user","content":"a"}\n{"role":"user",\n',
            "line 2 column 16, message 1: invalid JSON: Expecting property name",
        ),
        ('{"role":"user","content":"a"}\n\n[1,2]\n', "line 3, message 1: expected a message"),
        ('{"role":"wizard"}\n', "line 1, message 0, field 'role': unknown role 'wizard'"),
        ('{"role":"tool","content":"x"}\n', "line 1, message 0: a tool message needs 'tool_call_id'"),
        ('{"role":"user","content":"x","colour":1}\n', "line 1, message 0, field 'colour': unknown field"),
    ],
)
def test_a_bad_line_is_reported_with_its_number_and_what_is_wrong(text: str, expected: str) -> None:
    with pytest.raises(HistoryError) as info:
        loads(text)
    assert str(info.value).startswith(expected)
    assert info.value.line == int(expected.split()[1].rstrip(","))
    if "invalid JSON" in expected:
        assert info.value.column == 16


def test_message_to_dict_is_the_json_shape() -> None:
    message = ChatMessage(role="user", content=(ImagePart(url="https://x/y.png"),))
    assert message_to_dict(message) == {"role": "user", "content": [{"type": "image", "url": "https://x/y.png"}]}
    assert coerce_message(message_to_dict(message)) == message


@examples(300)
@given(messy_histories())
def test_loads_inverts_dumps_and_dumps_is_one_line_per_message(history: list[ChatMessage]) -> None:
    text = dumps(history)
    assert loads(text) == history
    assert text.count("\n") == len(history)
    lines = text.splitlines()  # what any line-based reader does: no message spans two lines
    assert len(lines) == len(history)
    for line in lines:
        json.loads(line)
    assert dumps(loads(text)) == text


# Lines are parsed and validated in one step by pydantic-core; anything it refuses goes through json.loads and
# validation, which also words the errors. Either way a line must read as json.loads then validation reads it.
EDGE_LINES = [
    '{"role":"user","content":"first","content":"second"}',  # a repeated key: the last one wins
    '{"role":"assistant","tool_calls":[{"id":"a","name":"t","arguments":{"z":-0.0,"w":"NaN \\ud83d\\ude00"}}]}',
    '{"role":"assistant","tool_calls":[{"id":"a","name":"t","arguments":{"n":123456789012345678901234567890}}]}',
    '{"role":"assistant","tool_calls":[{"id":"a","name":"t","arguments":{"f":5e-324,"g":1.0000000000000000001}}]}',
    '{"role":"assistant","tool_calls":[{"id":"a","name":"t","arguments":"{\\"q\\": 1}"}]}',  # JSON text: parsed
    '{"role":"tool","tool_call_id":"x","is_error":1,"content":[{"type":"text","text":"\\u2028 é 😀"}]}',
]


# What json.loads reads and JSON is not (#21): refused at its line and column, whichever parser saw it first.
REFUSED_LINES = [
    ('{"role":"user","content":"\\ud800 a lone surrogate"}', "column 27", "a lone surrogate escape"),
    ('{"role":"user","content":"\\udc00"}', "column 27", "a lone surrogate escape"),
    ('{"role":"assistant","tool_calls":[{"id":"a","name":"t","arguments":{"x":NaN}}]}', "column 73",
     "NaN is not a JSON number"),
    ('{"role":"assistant","tool_calls":[{"id":"a","name":"t","arguments":{"y":-Infinity}}]}', "column 73",
     "-Infinity is not a JSON number"),
    ('{"role":"assistant","tool_calls":[{"id":"a","name":"t","arguments":{"y":1e999}}]}', "column 73",
     "1e999 is not a JSON number"),
    ('{"role":"user","content":"x","provider_data":{"p":' + "7" * 4301 + "}}", "column 51",
     "an integer of more than 4300 digits"),
]


@pytest.mark.parametrize(("line", "where", "why"), REFUSED_LINES)
def test_what_json_is_not_is_refused_where_it_is(line: str, where: str, why: str) -> None:
    with pytest.raises(HistoryError, match=f"line 1 {where}, message 0: invalid JSON: {re.escape(why)}"):
        loads(line)


def read_the_slow_way(line: str) -> ChatMessage:
    return coerce_message(json.loads(line))


@pytest.mark.parametrize("line", EDGE_LINES)
def test_a_line_reads_as_json_loads_then_validation_reads_it(line: str) -> None:
    (got,) = loads(line)
    expected = read_the_slow_way(line)
    assert repr(got) == repr(expected)  # repr: NaN is not equal to itself


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@examples(300)
@given(arguments=st.dictionaries(st.text(max_size=8), json_values, max_size=4), ascii_only=st.booleans())
def test_any_json_arguments_read_the_same_both_ways(arguments: dict[str, object], ascii_only: bool) -> None:
    line = json.dumps({"role": "assistant", "tool_calls": [{"id": "a", "name": "t", "arguments": arguments}]},
                      ensure_ascii=ascii_only)
    (got,) = loads(line)
    assert repr(got) == repr(read_the_slow_way(line))
