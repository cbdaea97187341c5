"""A store hands an agent transcript's turn to its provider's reader (`anthropic.read.read_turn`): a turn a body
could hold reads as the body's reader reads it, and a field the reader cannot take is located in the record."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, TextPart
from chatmend.files.io import InputError
from chatmend.providers.anthropic.read import read_message, read_turn
from tests.strategies import examples
from tests.transcripts.helpers import lines_of, read_text

_TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
_ID = st.from_regex(r"toolu_[a-z0-9]{1,6}", fullmatch=True)
_REPLY_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, _TEXT, _TEXT),
    st.builds(lambda i, n, a: {"type": "tool_use", "id": i, "name": n, "input": a}, _ID,
              st.sampled_from(["Read", "Bash"]), st.dictionaries(_TEXT, _TEXT, max_size=2)),
    st.builds(lambda d: {"type": "redacted_thinking", "data": d}, _TEXT),
    st.just({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
)
_USER_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(lambda i, c: {"type": "tool_result", "tool_use_id": i, "content": c}, _ID, _TEXT),
    st.builds(lambda i, c: {"type": "tool_result", "tool_use_id": i, "content": [{"type": "text", "text": c}],
                            "is_error": True}, _ID, _TEXT),
    st.just({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}),
)


def _plain(message: ChatMessage) -> ChatMessage:
    """The message with one plain text part (or none) as a string, as a transcript's turn reads it."""
    content = message.content
    if isinstance(content, tuple) and not content:
        return dataclasses.replace(message, content="")
    if isinstance(content, tuple) and len(content) == 1 and type(content[0]) is TextPart \
            and content[0].provider_data is None:
        return dataclasses.replace(message, content=content[0].text)
    return message


@examples(300)
@given(st.sampled_from(["user", "assistant"]), st.data())
def test_a_turn_a_body_could_hold_reads_as_the_body_s_reader_reads_it(role: str, data: st.DataObject) -> None:
    blocks: list[Any] = data.draw(st.lists(_REPLY_BLOCK if role == "assistant" else _USER_BLOCK, min_size=1,
                                           max_size=4))
    names: dict[str, str] = {}
    turn = read_turn(role, blocks, names.get)
    as_body = read_message({"role": role, "content": blocks}, {})
    assert [message for message, _ in turn] == [_plain(m) for m in as_body]
    # every block is read into exactly one message, in order
    assert [b for _, at in turn for b in at] == list(range(len(blocks)))


def test_a_transcript_s_leniencies_are_read_as_its_tool_reads_them() -> None:
    names: dict[str, str] = {}
    [(reply, at)] = read_turn("assistant", ["plain", 7, {"type": "tool_use", "id": None, "name": ""},
                                            {"type": "thinking", "thinking": None, "signature": None}], names.get)
    assert at == [0, 1, 2, 3]
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("", "tool", {})]
    assert isinstance(reply.content, tuple) and reply.content[0] == TextPart(text="plain")
    assert reply.content[1].text == "" and reply.content[1].signature is None  # type: ignore[union-attr]
    assert read_turn("user", [], names.get) == []
    [(result, _)] = read_turn("user", [{"type": "tool_result", "content": "ok"}], {"": "Read"}.get)
    assert (result.tool_call_id, result.tool_name, result.content) == ("", "Read", "ok")


@pytest.mark.parametrize(("block", "path", "expected"), [
    ({"type": "tool_use", "id": "t1", "name": "Read", "input": [1]}, "input",
     "an object (the tool's input), got a list"),
    ({"type": "tool_use", "id": 5, "name": "Read", "input": {}}, "id", "a string, got a number"),
    ({"type": "thinking", "thinking": "so", "signature": 1}, "signature", "a string, got a number"),
])
def test_a_bad_block_of_a_split_reply_is_located_in_its_own_record(block: dict[str, Any], path: str,
                                                                  expected: str) -> None:
    # a reply Claude Code wrote one block a record: the bad block is the second record's first
    prompt = {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "hi"}}
    first = {"type": "assistant", "uuid": "u2", "parentUuid": "u1",
             "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "Let me look."}]}}
    second = {"type": "assistant", "uuid": "u3", "parentUuid": "u2",
              "message": {"role": "assistant", "id": "m1", "content": [block]}}
    with pytest.raises(InputError) as info:
        read_text("".join(lines_of([prompt, first, second])), "claude_code")
    assert (info.value.line, info.value.message) == (3, f"message.content[0].{path}: expected {expected}")


def test_a_reply_s_blocks_read_after_its_results_keep_their_records() -> None:
    # results written while the reply still streamed, between its records: one reply, its blocks where they were
    def reply(uid: str, parent: str, call: str, name: str) -> dict[str, Any]:
        return {"type": "assistant", "uuid": uid, "parentUuid": parent, "message": {
            "role": "assistant", "id": "m1", "content": [{"type": "tool_use", "id": call, "name": name, "input": {}}]}}

    def result(uid: str, parent: str, call: str, text: str) -> dict[str, Any]:
        return {"type": "user", "uuid": uid, "parentUuid": parent, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": text}]}}

    records = [{"type": "user", "uuid": "u1", "parentUuid": None, "message": {"role": "user", "content": "go"}},
               reply("u2", "u1", "t1", "Read"), result("u3", "u2", "t1", "one"),
               reply("u4", "u2", "t2", "Bash"), result("u5", "u4", "t2", "two")]
    session = read_text("".join(lines_of(records)), "claude_code")
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "tool"]
    assert [(m.tool_call_id, m.tool_name) for m in session.messages[2:]] == [("t1", "Read"), ("t2", "Bash")]
    assert session.where == ["line 1", "line 2", "line 3", "line 5"]
    assert json.loads("".join(session.repaired(None)[1]).split("\n")[3])["uuid"] == "u4"
