"""The neutral model: immutable values, validated by keyword or from the JSON shape."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, HistoryError, ImagePart, TextPart, ThinkingPart, Tool, ToolCall
from chatmend.messages import coerce_message, replace_unchecked, type_adapter
from tests.strategies import examples, messy_histories


def test_messages_are_immutable() -> None:
    message = ChatMessage(role="user", content="hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.content = "changed"  # type: ignore[misc]


def test_lists_become_tuples_so_nothing_inside_can_change() -> None:
    message = coerce_message({"role": "user", "content": [{"type": "text", "text": "a"}]})
    assert message.content == (TextPart(text="a"),)
    built = ChatMessage(role="assistant", content=[TextPart(text="a")],  # type: ignore[arg-type]
                        tool_calls=[ToolCall(id="c", name="t")])  # type: ignore[arg-type]
    assert built.content == (TextPart(text="a"),) and built.tool_calls == (ToolCall(id="c", name="t"),)


def test_arguments_given_as_json_text_are_parsed_and_other_text_is_kept_verbatim() -> None:
    assert ToolCall(id="a", name="t", arguments='{"q": 1}').arguments == {"q": 1}
    assert ToolCall(id="a", name="t", arguments='{"q": 1').arguments == '{"q": 1'
    assert ToolCall(id="a", name="t", arguments="[1, 2]").arguments == "[1, 2]"


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"role": "user", "tool_calls": [{"id": "a", "name": "t"}]}, "only assistant messages carry 'tool_calls'"),
        ({"role": "user", "tool_call_id": "a"}, "only tool messages carry 'tool_call_id'"),
        ({"role": "assistant", "is_error": True}, "only tool messages carry 'is_error'"),
        ({"role": "tool", "content": "x"}, "needs 'tool_call_id'"),
    ],
)
def test_fields_must_fit_the_role(fields: dict[str, Any], fragment: str) -> None:
    with pytest.raises(HistoryError, match=fragment):
        coerce_message(fields)
    with pytest.raises(HistoryError, match=fragment):
        ChatMessage(**fields)


def test_an_image_needs_exactly_one_source_and_inline_data_needs_a_media_type() -> None:
    with pytest.raises(HistoryError, match="exactly one"):
        ImagePart(media_type="image/png", data="AA", url="https://x")
    with pytest.raises(HistoryError, match="media_type"):
        ImagePart(data="AA")
    assert ImagePart(url="https://x/a.png").url == "https://x/a.png"


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: ToolCall(id="a", name=5), "name"),  # type: ignore[arg-type]
        (lambda: ToolCall(id="a", name=""), "name"),
        (lambda: ToolCall(id=None, name="t"), "id"),  # type: ignore[arg-type]
        (lambda: ToolCall(id="a", name="t", arguments=[1]), "arguments"),  # type: ignore[arg-type]
        (lambda: TextPart(text=None), "text"),  # type: ignore[arg-type]
        (lambda: ChatMessage(role="robot"), "role"),  # type: ignore[arg-type]
        (lambda: ChatMessage(role="user", content=42), "content"),  # type: ignore[arg-type]
        (lambda: ChatMessage(role="user", content=("a",)), "content.0"),  # type: ignore[arg-type]
        (lambda: ChatMessage(role="tool", tool_call_id=3), "tool_call_id"),  # type: ignore[arg-type]
        (lambda: ChatMessage(role="user", provider_data=[]), "provider_data"),  # type: ignore[arg-type]
        (lambda: Tool(name="t", parameters="{}"), "parameters"),  # type: ignore[arg-type]
    ],
)
def test_a_value_that_does_not_fit_its_field_is_a_history_error_naming_it(build: Any, field: str) -> None:
    with pytest.raises(HistoryError) as info:
        build()
    assert info.value.field == field


def test_calls_and_parts_given_as_mappings_of_the_json_shape_are_built() -> None:
    message = ChatMessage(role="assistant", content=[{"type": "text", "text": "x"}],  # type: ignore[arg-type]
                          tool_calls=[{"id": "t1", "name": "a", "arguments": '{"q": 1}'}])  # type: ignore[arg-type]
    assert message.content == (TextPart(text="x"),)
    assert message.tool_calls == (ToolCall(id="t1", name="a", arguments={"q": 1}),)
    with pytest.raises(HistoryError) as info:
        ChatMessage(role="assistant", tool_calls=[{"id": "t1", "colour": 1}])  # type: ignore[arg-type]
    assert info.value.field == "tool_calls.0" and "colour" in info.value.reason


def test_thinking_keeps_signature_and_opaque_data_byte_for_byte() -> None:
    adapter = type_adapter(ThinkingPart)
    part = ThinkingPart(text="  let me think\n", signature="EqQB+/==", provider="anthropic")
    back = adapter.validate_python(adapter.dump_python(part, mode="json"))
    assert back == part and back.text == "  let me think\n" and back.signature == "EqQB+/=="
    redacted = ThinkingPart(redacted=True, data="EmwK...", provider="anthropic")
    assert adapter.validate_json(adapter.dump_json(redacted)) == redacted


def test_replace_copies_without_touching_the_original_and_checks_the_copy() -> None:
    message = ChatMessage(role="tool", tool_call_id="a", content="x")
    other = dataclasses.replace(message, tool_call_id="b")
    assert (message.tool_call_id, other.tool_call_id) == ("a", "b")
    assert other == ChatMessage(role="tool", tool_call_id="b", content="x")
    with pytest.raises(HistoryError, match="needs 'tool_call_id'"):
        dataclasses.replace(message, tool_call_id=None)


def test_the_json_shape_validates_by_the_part_tag_and_dumps_back() -> None:
    data = {"role": "assistant", "content": [{"type": "thinking", "text": "t"}, {"type": "text", "text": "a"}],
            "tool_calls": [{"id": "c", "name": "t", "arguments": '{"q": 1}'}]}
    message = coerce_message(data)
    assert message.content == (ThinkingPart(text="t"), TextPart(text="a"))
    assert message.tool_calls == (ToolCall(id="c", name="t", arguments={"q": 1}),)
    assert type_adapter(ChatMessage).validate_python(type_adapter(ChatMessage).dump_python(message)) == message


def test_tool_has_an_object_schema_by_default() -> None:
    assert Tool(name="search").parameters == {"type": "object", "properties": {}}


def test_field_docs_reach_the_json_schema() -> None:
    schema = type_adapter(ChatMessage).json_schema()
    assert "the id of the call this result answers" in schema["properties"]["tool_call_id"]["description"]


def test_replace_unchecked_copies_the_fields_it_is_given_and_keeps_the_rest() -> None:
    call = ToolCall(id="a", name="t", arguments={"q": 1}, provider_data={"x": {"y": 1}})
    copy = replace_unchecked(call, id="b")
    assert copy == ToolCall(id="b", name="t", arguments={"q": 1}, provider_data={"x": {"y": 1}})
    assert call.id == "a" and copy.arguments is call.arguments
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.id = "c"  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field 'ids'"):
        replace_unchecked(call, ids="b")


@examples(200)
@given(history=messy_histories())
def test_every_message_goes_through_the_json_shape_and_its_fields_unchanged(history: list[ChatMessage]) -> None:
    adapter = type_adapter(ChatMessage)
    for message in history:
        assert coerce_message(adapter.dump_python(message, mode="json")) == message
        assert adapter.validate_json(adapter.dump_json(message)) == message
        assert ChatMessage(**{f.name: getattr(message, f.name) for f in dataclasses.fields(message)}) == message
        assert replace_unchecked(message) == message and replace_unchecked(message) is not message
