"""The neutral model: immutable values, validated by keyword or from the JSON shape."""

from __future__ import annotations

import pydantic
import pytest

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, Tool, ToolCall
from chatmend.messages import evolve, from_template, replace_field


def test_messages_are_immutable() -> None:
    message = ChatMessage(role="user", content="hi")
    with pytest.raises(pydantic.ValidationError):
        message.content = "changed"  # type: ignore[misc]


def test_lists_become_tuples_so_nothing_inside_can_change() -> None:
    message = ChatMessage.model_validate({"role": "user", "content": [{"type": "text", "text": "a"}]})
    assert message.content == (TextPart(text="a"),)


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
def test_fields_must_fit_the_role(fields: dict[str, object], fragment: str) -> None:
    with pytest.raises(pydantic.ValidationError, match=fragment):
        ChatMessage.model_validate(fields)


def test_an_image_needs_exactly_one_source_and_inline_data_needs_a_media_type() -> None:
    with pytest.raises(pydantic.ValidationError, match="exactly one"):
        ImagePart(media_type="image/png", data="AA", url="https://x")
    with pytest.raises(pydantic.ValidationError, match="media_type"):
        ImagePart(data="AA")
    assert ImagePart(url="https://x/a.png").url == "https://x/a.png"


def test_thinking_keeps_signature_and_opaque_data_byte_for_byte() -> None:
    part = ThinkingPart(text="  let me think\n", signature="EqQB+/==", provider="anthropic")
    back = ThinkingPart.model_validate(part.model_dump())
    assert back == part and back.text == "  let me think\n" and back.signature == "EqQB+/=="
    redacted = ThinkingPart(redacted=True, data="EmwK...", provider="anthropic")
    assert ThinkingPart.model_validate(redacted.model_dump()) == redacted


def test_evolve_and_replace_field_copy_without_touching_the_original() -> None:
    message = ChatMessage(role="tool", tool_call_id="a", content="x")
    other = replace_field(message, "tool_call_id", "b")
    assert (message.tool_call_id, other.tool_call_id) == ("a", "b")
    assert other == ChatMessage(role="tool", tool_call_id="b", content="x")
    assert evolve(message, content="y", is_error=True) == ChatMessage(
        role="tool", tool_call_id="a", content="y", is_error=True)
    assert "tool_call_id" in other.model_dump(exclude_unset=True)


def test_from_template_is_the_validated_message_with_the_templates_fields_set() -> None:
    template = ChatMessage(role="tool", tool_call_id="", tool_name="", is_error=True, content="")
    made = from_template(template, {"tool_call_id": "c1", "tool_name": "search", "content": "cut off"})
    expected = ChatMessage(role="tool", tool_call_id="c1", tool_name="search", is_error=True, content="cut off")
    assert made == expected
    assert made.model_dump(exclude_unset=True) == expected.model_dump(exclude_unset=True)
    assert template.tool_call_id == "" and made.__pydantic_fields_set__ is template.__pydantic_fields_set__


def test_tool_has_an_object_schema_by_default() -> None:
    assert Tool(name="search").parameters == {"type": "object", "properties": {}}


def test_field_docs_reach_the_json_schema() -> None:
    schema = ChatMessage.model_json_schema()
    assert "the id of the call this result answers" in schema["properties"]["tool_call_id"]["description"]
