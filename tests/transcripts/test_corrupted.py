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
    assert info.value.line == 2 and "expected one Codex session record a line" in info.value.message


def test_a_claude_code_call_input_that_is_not_an_object_is_a_located_error() -> None:
    record = {"type": "assistant", "uuid": "u1", "parentUuid": None, "sessionId": "s",
              "message": {"role": "assistant", "id": "m1", "content": [
                  {"type": "tool_use", "id": "toolu_1", "name": "search", "input": True}]}}
    with pytest.raises(InputError) as info:
        read_text("".join(lines_of([record])), "claude_code")
    assert info.value.line == 1 and info.value.message.startswith("arguments: ")


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
