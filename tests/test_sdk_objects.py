"""Histories of the official SDKs' own objects (#27): read by their provider wherever a history is taken.

The objects are the SDKs' real classes, built here (no network): an `anthropic.types.Message`, OpenAI's
`ChatCompletionMessage` and Responses output items, google-genai's `types.Content`.
"""

from __future__ import annotations

from typing import Any

import anthropic.types as anthropic_types
import pytest
from google.genai import types as genai_types
from hypothesis import given
from openai.types.chat import ChatCompletionMessage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

from chatmend import ChatMessage, Repairer, TextPart, providers, repair_history
from chatmend.exceptions import HistoryError
from chatmend.jsonl import dump_line
from tests.providers.common import body_or_none
from tests.strategies import examples, messy_histories

USER = {"role": "user", "content": "find the report"}


def anthropic_reply() -> anthropic_types.Message:
    return anthropic_types.Message(
        id="msg_01", type="message", role="assistant", model="claude-sonnet-4-5", stop_reason="tool_use",
        stop_sequence=None, usage=anthropic_types.Usage(input_tokens=12, output_tokens=30),
        content=[anthropic_types.TextBlock(type="text", text="Searching."),
                 anthropic_types.ToolUseBlock(type="tool_use", id="toolu_01", name="search", input={"q": "report"}),
                 anthropic_types.ToolUseBlock(type="tool_use", id="toolu_02", name="read_file", input={"path": "a"})])


ANTHROPIC_WIRE = [
    USER,
    {"role": "assistant", "content": [
        {"type": "text", "text": "Searching."},
        {"type": "tool_use", "id": "toolu_01", "name": "search", "input": {"q": "report"}},
        {"type": "tool_use", "id": "toolu_02", "name": "read_file", "input": {"path": "a"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_02", "content": "text of a"}]},
]


def openai_reply() -> ChatCompletionMessage:
    return ChatCompletionMessage.model_validate({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q":"report"}'}}]})


OPENAI_WIRE = [
    USER,
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q":"report"}'}}]},
]


def gemini_turns() -> list[genai_types.Content]:
    return [
        genai_types.Content(role="user", parts=[genai_types.Part(text="find the report")]),
        genai_types.Content(role="model", parts=[
            genai_types.Part(function_call=genai_types.FunctionCall(id="c0", name="search", args={"q": "report"}),
                             thought_signature=b"\x01sig")]),
        genai_types.Content(role="user", parts=[genai_types.Part(
            function_response=genai_types.FunctionResponse(id="c0", name="search", response={"output": "2 hits"}))]),
    ]


GEMINI_WIRE = [
    {"role": "user", "parts": [{"text": "find the report"}]},
    {"role": "model", "parts": [{"functionCall": {"id": "c0", "name": "search", "args": {"q": "report"}},
                                 "thoughtSignature": "AXNpZw=="}]},
    {"role": "user", "parts": [{"functionResponse": {"id": "c0", "name": "search", "response": {"output": "2 hits"}}}]},
]


def responses_output() -> list[Any]:
    return [
        ResponseOutputMessage.model_validate({"id": "msg_1", "type": "message", "role": "assistant",
                                              "status": "completed", "content": [
                                                  {"type": "output_text", "text": "Searching.", "annotations": []}]}),
        ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="call_1", name="search",
                                 arguments='{"q":"report"}', status="completed"),
    ]


RESPONSES_WIRE = [
    USER,
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Searching.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "search", "arguments": '{"q":"report"}',
     "status": "completed"},
]


def sdk_histories() -> dict[str, tuple[list[Any], list[Any]]]:
    """Per provider: a history holding SDK objects, and the same history as the wire dicts the API documents."""
    return {
        "anthropic": ([USER, anthropic_reply(), ANTHROPIC_WIRE[2]], ANTHROPIC_WIRE),
        "openai_chat": ([USER, openai_reply()], OPENAI_WIRE),
        "gemini": (gemini_turns(), GEMINI_WIRE),
        "openai_responses": ([USER, *responses_output()], RESPONSES_WIRE),
    }


@pytest.mark.parametrize("name", sorted(sdk_histories()))
def test_from_request_reads_sdk_objects_as_the_wire_dicts_they_stand_for(name: str) -> None:
    with_objects, wire = sdk_histories()[name]
    provider = providers.get(name)
    read = provider.from_request(with_objects)
    assert read == provider.from_request(wire)
    assert any(m.tool_calls for m in read)
    assert provider.from_request({provider.list_key: with_objects}) == provider.from_request({provider.list_key: wire})


@pytest.mark.parametrize("name", sorted(sdk_histories()))
def test_repair_history_a_repairer_and_to_request_take_sdk_objects(name: str) -> None:
    with_objects, wire = sdk_histories()[name]
    neutral = providers.get(name).from_request(wire)
    expected = repair_history(neutral)
    got = repair_history(with_objects)
    assert got.messages == expected.messages and got.interrupted == expected.interrupted
    assert Repairer().repair(with_objects).messages == expected.messages
    for target in providers.names():  # any provider writes them, not only their own
        writer = providers.get(target)
        assert writer.to_request(with_objects, model="m") == writer.to_request(neutral, model="m")
        assert writer.to_request(with_objects, model="m", repairer=Repairer()) == writer.to_request(neutral, model="m")


def test_anthropic_message_is_its_assistant_turn_and_its_reply_metadata_is_not_history() -> None:
    read = providers.get("anthropic").from_request([USER, anthropic_reply()])
    assert [m.role for m in read] == ["user", "assistant"]
    assert [c.id for c in read[1].tool_calls] == ["toolu_01", "toolu_02"]
    assert "msg_01" not in dump_line(read[1]) and "claude-sonnet" not in dump_line(read[1])


def test_a_message_param_dict_may_hold_the_sdk_content_blocks() -> None:
    # The SDK's own idiom: messages.append({"role": "assistant", "content": response.content})
    history = [USER, {"role": "assistant", "content": anthropic_reply().content}, ANTHROPIC_WIRE[2]]
    assert providers.get("anthropic").from_request(history) == providers.get("anthropic").from_request(ANTHROPIC_WIRE)


def test_a_growing_sdk_history_repairs_incrementally_as_repair_history_does() -> None:
    repairer = Repairer(on_missing="strip")
    history: list[Any] = [USER, openai_reply()]
    assert repairer.repair(history).messages == [ChatMessage(role="user", content=USER["content"])]
    history.append({"role": "tool", "tool_call_id": "call_1", "content": "2 hits"})
    result = repairer.repair(history)
    assert result.messages == repair_history(history, on_missing="strip").messages
    assert [m.role for m in result.messages] == ["user", "assistant", "tool"] and not result.stripped


def test_objects_of_two_sdks_or_of_none_are_a_located_history_error() -> None:
    with pytest.raises(HistoryError, match="OpenAI Chat's SDK in a history of Anthropic") as mixed:
        repair_history([USER, anthropic_reply(), openai_reply()])
    assert mixed.value.index == 2

    class Foreign:
        def model_dump(self, **_: Any) -> dict[str, Any]:
            return {}

    with pytest.raises(HistoryError, match="no known SDK's message class") as unknown:
        repair_history([USER, Foreign()])
    assert unknown.value.index == 1


@given(messy_histories())
@examples(100)
def test_every_body_read_back_through_the_sdk_classes_is_the_same_history(history: list[ChatMessage]) -> None:
    # Gemini's contents as `types.Content`, OpenAI Chat's and Anthropic's replies as their response classes.
    gemini = providers.get("gemini")
    contents = gemini.to_request(history, model="m")["contents"]
    assert gemini.from_request([genai_types.Content.model_validate(c) for c in contents]) == \
        gemini.from_request(contents)
    chat = providers.get("openai_chat")
    body = body_or_none(chat, history, model="m")
    if body is None:
        return  # nothing to send (a history of system text only): no Chat or Anthropic body (#21)
    messages = body["messages"]
    as_sdk = [ChatCompletionMessage.model_validate(m) if m["role"] == "assistant" else m for m in messages]
    assert chat.from_request(as_sdk) == chat.from_request(messages)
    claude = providers.get("anthropic")
    claude_body = body_or_none(claude, history, model="m")
    if claude_body is None:
        return  # system text only: Anthropic's goes in `system`, leaving no messages (#21)
    turns = claude_body["messages"]
    replies = [anthropic_types.Message.model_validate(
        {"id": "msg", "type": "message", "role": "assistant", "model": "m", "content": t["content"],
         "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}})
        if t["role"] == "assistant" and isinstance(t["content"], list) else t for t in turns]
    assert claude.from_request(replies) == claude.from_request(turns)


def test_repair_history_takes_the_anthropic_idiom_of_sdk_blocks_in_a_dict() -> None:
    history = [USER, {"role": "assistant", "content": anthropic_reply().content}, ANTHROPIC_WIRE[2]]
    result = repair_history(history)
    assert result.messages == repair_history(providers.get("anthropic").from_request(ANTHROPIC_WIRE)).messages
    assert [c.id for c in result.interrupted] == ["toolu_01"]


def test_chatmend_models_in_a_neutral_history_are_not_taken_for_sdk_objects() -> None:
    history = [{"role": "user", "content": [TextPart(text="hi")]}, ChatMessage(role="assistant", content="yes")]
    assert [m.role for m in repair_history(history).messages] == ["user", "assistant"]
