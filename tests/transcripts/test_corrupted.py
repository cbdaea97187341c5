"""Saved sessions edited or cut by hand: any value in any field is read, or is an InputError saying where; never a
crash. What reads also repairs and writes back."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage
from chatmend.formats import InputError
from chatmend.jsonl import message_to_dict
from tests.strategies import corrupt, examples, messy_histories
from tests.transcripts.helpers import claude_code_records, codex_records, lines_of, read_text

RECORDS: dict[str, Callable[[Sequence[ChatMessage]], list[dict[str, Any]]]] = {
    "chatmend": lambda history: [message_to_dict(m) for m in history],
    "claude_code": claude_code_records,
    "codex": codex_records,
}


@pytest.mark.parametrize("fmt", sorted(RECORDS))
@examples(100)
@given(history=messy_histories(), data=st.data())
def test_a_corrupted_session_is_read_or_a_located_input_error(fmt: str, history: list[ChatMessage],
                                                               data: st.DataObject) -> None:
    records = RECORDS[fmt](history)
    if not records:
        return
    corrupt(data, list(records))
    text = "".join(lines_of(records))
    try:
        session = read_text(text, fmt)
    except InputError as error:
        assert error.message
        assert error.line is None or 1 <= error.line <= len(records)
        return
    result, chunks = session.repaired(None)
    out = "".join(chunks)
    assert not result.messages or out
    for line in out.split("\n")[:-1]:  # (not splitlines: a line may hold U+0085, which it also splits on)
        json.loads(line)  # every line written back is JSON


# Found by the property above: each crashed with a TypeError or pydantic's ValidationError before.
def test_a_codex_item_type_that_is_not_a_string_is_a_located_error() -> None:
    text = ('{"timestamp":"t0","type":"session_meta","payload":{"id":"s"}}\n'
            '{"timestamp":"t1","type":"response_item","payload":{"type":[],"role":"assistant","content":[]}}\n')
    with pytest.raises(InputError) as info:
        read_text(text, "codex")
    assert info.value.line == 2
    assert info.value.message == "payload.type: expected a string (the item's type), got a list"


def test_a_codex_item_without_a_type_is_kept_unread() -> None:
    lines = ['{"timestamp":"t0","type":"session_meta","payload":{"id":"s"}}\n',
             '{"timestamp":"t1","type":"response_item","payload":{"role":"user","content":"?"}}\n',
             '{"timestamp":"t2","type":"response_item","payload":{"type":"message","role":"user","content":"hi"}}\n']
    session = read_text("".join(lines), "codex")
    assert [m.content for m in session.messages] == ["hi"]
    assert "".join(session.repaired(None)[1]) == "".join(lines)


# A field the reader cannot take is named by its path in the record, with what was expected and what was found.
def _claude_code_reply(*blocks: dict[str, Any]) -> str:
    record = {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": "s",
              "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "Let me look."},
                                                                       *blocks]}}
    first = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
             "message": {"role": "user", "content": "hi"}}
    return "".join(lines_of([first, record]))


@pytest.mark.parametrize(("value", "got"), [(True, "a boolean"), ([1, 2], "a list"), (3, "a number")])
def test_a_claude_code_call_input_that_is_not_an_object_names_its_field(value: object, got: str) -> None:
    text = _claude_code_reply({"type": "tool_use", "id": "toolu_1", "name": "search", "input": value})
    with pytest.raises(InputError) as info:
        read_text(text, "claude_code")
    assert info.value.line == 2
    assert info.value.message == f"message.content[1].input: expected an object (the tool's input), got {got}"


def test_a_claude_code_thinking_signature_that_is_not_a_string_names_its_field() -> None:
    text = _claude_code_reply({"type": "thinking", "thinking": "hm", "signature": {"sig": 1}})
    with pytest.raises(InputError) as info:
        read_text(text, "claude_code")
    assert (info.value.line, info.value.message) == (
        2, "message.content[1].signature: expected a string, got an object")


@pytest.mark.parametrize(("block", "path", "got"), [
    ({"type": "tool_use", "id": ["toolu_1"], "name": "search", "input": {}}, "id", "a list"),
    ({"type": "tool_use", "id": "toolu_1", "name": {"n": 1}, "input": {}}, "name", "an object"),
    ({"type": "thinking", "thinking": ["hm"], "signature": "sig"}, "thinking", "a list"),
    ({"type": "redacted_thinking", "data": 7}, "data", "a number"),
])
def test_a_claude_code_text_field_of_another_type_names_its_field(block: dict[str, Any], path: str,
                                                                   got: str) -> None:
    # read as text (`str()`), `["toolu_1"]` would have become the id "['toolu_1']", sent to the provider
    with pytest.raises(InputError) as info:
        read_text(_claude_code_reply(block), "claude_code")
    assert (info.value.line, info.value.message) == (2, f"message.content[1].{path}: expected a string, got {got}")


def test_a_claude_code_result_id_of_another_type_names_its_field() -> None:
    result = {"type": "user", "uuid": "u3", "parentUuid": "u2", "sessionId": "s", "message": {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": 1, "content": "ok"}]}}
    text = _claude_code_reply({"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}})
    with pytest.raises(InputError) as info:
        read_text(text + "".join(lines_of([result])), "claude_code")
    assert (info.value.line, info.value.message) == (
        3, "message.content[0].tool_use_id: expected a string, got a number")


_TEXT = "a string"
_ARGUMENTS = "a string (the call's JSON arguments) or an object"


@pytest.mark.parametrize(("item", "path", "expected"), [
    ({"type": "function_call", "name": "shell", "call_id": 5, "arguments": "{}"}, "payload.call_id", _TEXT),
    ({"type": "function_call", "name": ["shell"], "call_id": "c1", "arguments": "{}"}, "payload.name", _TEXT),
    ({"type": "local_shell_call", "id": {"i": 1}, "action": {}}, "payload.id", _TEXT),
    ({"type": "function_call_output", "call_id": [], "output": "ok"}, "payload.call_id", _TEXT),
    ({"type": "function_call", "name": "shell", "call_id": "c1", "arguments": 5}, "payload.arguments", _ARGUMENTS),
    ({"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1", "input": [1]}, "payload.input", _ARGUMENTS),
    ({"type": "local_shell_call", "call_id": "c1", "action": True}, "payload.action", _ARGUMENTS),
])
def test_a_codex_field_of_another_type_names_its_field(item: dict[str, Any], path: str, expected: str) -> None:
    text = ('{"timestamp":"t0","type":"session_meta","payload":{"id":"s"}}\n'
            + json.dumps({"timestamp": "t1", "type": "response_item", "payload": item}) + "\n")
    with pytest.raises(InputError) as info:
        read_text(text, "codex")
    assert info.value.line == 2
    assert info.value.message.startswith(f"{path}: expected {expected}, got ")


def test_an_older_codex_rollout_names_the_field_without_an_envelope() -> None:
    lines = lines_of([{"id": "s", "timestamp": "t0"},
                      {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": [1]},
                      {"type": ["message"], "role": "user", "content": "kept unread"},
                      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello?"}]}])
    with pytest.raises(InputError) as info:
        read_text("".join(lines), "codex")
    assert (info.value.line, info.value.message) == (
        2, "arguments: expected a string (the call's JSON arguments) or an object, got a list")
    # a bare record whose type is not a string is not an item: it stays in the file, unread
    session = read_text("".join([lines[0], lines[2], lines[3]]), "codex")
    assert [m.content for m in session.messages] == ["hello?"]
    assert "".join(session.repaired(None)[1]) == "".join([lines[0], lines[2], lines[3]])


def test_a_claude_code_parent_that_is_not_a_string_is_relinked_not_a_crash() -> None:
    records: list[dict[str, Any]] = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": "s",
         "message": {"role": "assistant", "id": "m1", "content": [
             {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}]}},
        {"type": "user", "uuid": "u3", "parentUuid": [], "sessionId": "s",
         "message": {"role": "user", "content": "and?"}},
    ]
    session = read_text("".join(lines_of(records)), "claude_code")
    _, chunks = session.repaired(None)
    written = [json.loads(line) for line in "".join(chunks).split("\n")[:-1]]
    chained = [r for r in written if isinstance(r.get("uuid"), str)]
    assert all(isinstance(r["parentUuid"], str) for r in chained[1:])  # the list became a real link
