"""OpenAI Responses: exact bodies, reasoning replay, SDK types, check() per rule, reading, the SDK client."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.responses import (
    EasyInputMessageParam,
    FunctionToolParam,
    Response,
    ResponseFunctionToolCallParam,
    ResponseInputItemParam,
    ResponseOutputMessageParam,
    ResponseReasoningItemParam,
)
from openai.types.responses.response_input_item_param import FunctionCallOutput
from pydantic import ConfigDict, TypeAdapter

from chatmend import ChatMessage, ImagePart, ReadError, TextPart, ThinkingPart, ToolCall
from chatmend.exceptions import Problem
from chatmend.ids import shortening_id_maker
from chatmend.providers import openai_responses as orr
from chatmend.providers.base import arguments_json, repaired
from chatmend.providers.openai_responses import ERROR_MARK, PROVIDER
from chatmend.providers.openai_responses.wire import CALL_ID_MAX
from chatmend.repair import is_placeholder
from tests.providers.common import body_or_none, drain, problems_after, sendable_body, texts_and_images
from tests.providers.local_server import serve
from tests.strategies import IDS, NAMES, examples, messy_histories, texts

EXAMPLE = Path(__file__).parents[2] / "examples" / "requests" / "openai_responses.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
ENC = "gAAAAABo_encrypted_reasoning_blob=="
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}

# ------------------------------------------------------------------------------------------- helpers

_FORBID = ConfigDict(extra="forbid")
_ANY_ITEM: TypeAdapter[Any] = TypeAdapter(ResponseInputItemParam, config=_FORBID)
# `X | None`: pydantic takes `config` (extra="forbid") for a union, not for a bare TypedDict.
_BY_KIND: dict[str, TypeAdapter[Any]] = {
    "function_call": TypeAdapter(ResponseFunctionToolCallParam | None, config=_FORBID),
    "function_call_output": TypeAdapter(FunctionCallOutput | None, config=_FORBID),
    "reasoning": TypeAdapter(ResponseReasoningItemParam | None, config=_FORBID),
    "output_message": TypeAdapter(ResponseOutputMessageParam | None, config=_FORBID),
    "easy_message": TypeAdapter(EasyInputMessageParam | None, config=_FORBID),
}
_TOOL = TypeAdapter(FunctionToolParam | None, config=_FORBID)


def sdk_validate(body: Mapping[str, Any]) -> None:
    """Each input item against the SDK's union and against the TypedDict of its own kind, fully iterated."""
    for item in body["input"]:
        drain(_ANY_ITEM.validate_python(item))
        kind = item.get("type", "message")
        if kind == "message":
            kind = "output_message" if "id" in item else "easy_message"
        drain(_BY_KIND[kind].validate_python(item))
    for tool in body.get("tools", []):
        drain(_TOOL.validate_python(tool))


def body_strings(body: Mapping[str, Any]) -> str:
    """The body as JSON text, to look for texts and images in it."""
    return json.dumps(body, ensure_ascii=False)


def reasoning_response(n: int = 1, *, encrypted: bool = True, call_id: str = "call_JCuVTkQxVB3cCmFWx52adJKZ",
                       text: str | None = None) -> dict[str, Any]:
    """A Responses API reply of a reasoning model: a reasoning item, then optional text, then a call."""
    reasoning: dict[str, Any] = {"id": f"rs_{n:04d}a", "type": "reasoning", "summary": [
        {"type": "summary_text", "text": "**Checking weather**\n\nThe user wants Paris."}]}
    if encrypted:
        reasoning["encrypted_content"] = f"{ENC}{n}"
    output: list[dict[str, Any]] = [reasoning]
    if text is not None:
        output.append({"id": f"msg_{n:04d}b", "type": "message", "role": "assistant", "status": "completed",
                       "phase": "commentary",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    output.append({"id": f"fc_{n:04d}c", "type": "function_call", "status": "completed", "call_id": call_id,
                   "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"})
    return response_json(output, n)


def response_json(output: list[dict[str, Any]], n: int = 1, model: str = "gpt-5.5") -> dict[str, Any]:
    """A whole Responses API reply around some output items."""
    return {
        "id": f"resp_{n:04d}", "object": "response", "created_at": 1_780_000_000 + n, "status": "completed",
        "model": model, "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "error": None, "incomplete_details": None, "instructions": None, "metadata": {},
    }


def codes(body: Mapping[str, Any]) -> set[str]:
    """The rule codes check() reports for a body."""
    return {p.code for p in PROVIDER.check(body)}


# ------------------------------------------------------------------------------------- exact bodies


def agent_history() -> list[ChatMessage]:
    """A coding agent's turn: parallel calls, an image result, an error, a steer typed while tools ran."""
    return [
        ChatMessage(role="system", content="You are a coding agent."),
        ChatMessage(role="user", content=(TextPart(text="Why is login broken?"),
                                          ImagePart(url="https://example.com/bug.png"))),
        ChatMessage(role="assistant", content="Let me look.", tool_calls=(
            ToolCall(id="call_A", name="screenshot", arguments={"url": "/login"}),
            ToolCall(id="functions.read_file:1", name="read_file", arguments='{"path": "login.c'),
        )),
        ChatMessage(role="tool", tool_call_id="functions.read_file:1", content="ENOENT", is_error=True),
        ChatMessage(role="user", content="hurry up"),
        ChatMessage(role="tool", tool_call_id="call_A", tool_name="screenshot",
                    content=(TextPart(text="390x844"), ImagePart(media_type="image/png", data=PNG))),
        ChatMessage(role="assistant", content="The form is too wide."),
        ChatMessage(role="system", content="Answer in one line."),
        ChatMessage(role="user", content="Fix it."),
    ]


def test_exact_body_orders_each_step_and_keeps_images_with_their_result() -> None:
    body = orr.to_request(agent_history(), model="gpt-4.1", tools=[WEATHER_TOOL], temperature=0,
                          store=False, max_output_tokens=300)
    assert body == {
        "model": "gpt-4.1",
        "instructions": "You are a coding agent.",
        "input": [
            {"role": "user", "content": [
                {"type": "input_text", "text": "Why is login broken?"},
                {"type": "input_image", "image_url": "https://example.com/bug.png", "detail": "auto"}]},
            {"role": "assistant", "content": "Let me look."},
            {"type": "function_call", "call_id": "call_A", "name": "screenshot",
             "arguments": "{\"url\":\"/login\"}"},
            {"type": "function_call", "call_id": "functions.read_file:1", "name": "read_file",
             "arguments": "{\"path\": \"login.c"},
            {"type": "function_call_output", "call_id": "call_A", "output": [
                {"type": "input_text", "text": "390x844"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"}]},
            {"type": "function_call_output", "call_id": "functions.read_file:1", "output": "[error] ENOENT"},
            {"role": "user", "content": "hurry up"},
            {"role": "assistant", "content": "The form is too wide."},
            {"role": "system", "content": "Answer in one line."},
            {"role": "user", "content": "Fix it."},
        ],
        "tools": [{"type": "function", "name": "get_weather", "description": "Current weather for a city.",
                   "parameters": WEATHER_TOOL["parameters"], "strict": False}],
        "temperature": 0,
        "store": False,
        "max_output_tokens": 300,
    }
    assert orr.check(body) == []
    sdk_validate(body)


def test_reasoning_is_replayed_with_its_ids_in_original_order() -> None:
    reply = orr.from_response(reasoning_response(1, text="Checking the weather."))
    history = [ChatMessage(role="user", content="Weather in Paris?"), reply,
               ChatMessage(role="tool", tool_call_id="call_JCuVTkQxVB3cCmFWx52adJKZ", content="22 °C, sunny")]
    body = orr.to_request(history, model="gpt-5.5", store=False, include=["reasoning.encrypted_content"])
    assert body == {
        "model": "gpt-5.5",
        "input": [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "reasoning", "id": "rs_0001a",
             "summary": [{"type": "summary_text", "text": "**Checking weather**\n\nThe user wants Paris."}],
             "encrypted_content": ENC + "1"},
            {"type": "message", "id": "msg_0001b", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "Checking the weather.", "annotations": []}],
             "phase": "commentary"},
            {"type": "function_call", "id": "fc_0001c", "call_id": "call_JCuVTkQxVB3cCmFWx52adJKZ",
             "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
            {"type": "function_call_output", "call_id": "call_JCuVTkQxVB3cCmFWx52adJKZ",
             "output": "22 °C, sunny"},
        ],
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    assert orr.check(body) == []
    sdk_validate(body)


def test_interleaved_reasoning_between_parallel_calls_keeps_its_order() -> None:
    output: list[dict[str, Any]] = [
        {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "E1"},
        {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "search", "arguments": "{}"},
        {"id": "rs_2", "type": "reasoning", "summary": [], "encrypted_content": "E2"},
        {"id": "fc_2", "type": "function_call", "call_id": "call_2", "name": "search", "arguments": "{}"},
    ]
    reply = orr.from_response(response_json(output))
    history = [ChatMessage(role="user", content="go"), reply,
               ChatMessage(role="tool", tool_call_id="call_1", content="a"),
               ChatMessage(role="tool", tool_call_id="call_2", content="b")]
    body = orr.to_request(history, model="o4-mini")
    assert [(i.get("type"), i.get("id")) for i in body["input"][1:5]] == [
        ("reasoning", "rs_1"), ("function_call", "fc_1"), ("reasoning", "rs_2"), ("function_call", "fc_2")]
    assert orr.check(body) == []


def test_reasoning_without_encrypted_content_sends_neither_reasoning_nor_ids() -> None:
    reply = orr.from_response(reasoning_response(2, encrypted=False, text="Looking."))
    body = orr.to_request([ChatMessage(role="user", content="hi"), reply,
                           ChatMessage(role="tool", tool_call_id=reply.tool_calls[0].id, content="ok")],
                          model="gpt-5.5")
    assert body["input"][1:] == [
        {"role": "assistant", "content": "Looking.", "phase": "commentary"},
        {"type": "function_call", "call_id": "call_JCuVTkQxVB3cCmFWx52adJKZ", "name": "get_weather",
         "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_JCuVTkQxVB3cCmFWx52adJKZ", "output": "ok"},
    ]
    assert orr.check(body) == []


def test_the_documented_neutral_shape_replays_without_a_recorded_layout() -> None:
    reply = ChatMessage(
        role="assistant",
        content=(ThinkingPart(provider="openai_responses", data="ENC", text="plan",
                              provider_data={"openai_responses": {"id": "rs_9", "summary": [
                                  {"type": "summary_text", "text": "plan"}]}}),
                 TextPart(text="On it.")),
        tool_calls=(ToolCall(id="c1", name="search", provider_data={"openai_responses": {"id": "fc_9"}}),),
        provider_data={"openai_responses": {"id": "msg_9"}},
    )
    body = orr.to_request([ChatMessage(role="user", content="q"), reply,
                           ChatMessage(role="tool", tool_call_id="c1", content="r")], model="gpt-5")
    assert [(i.get("type"), i.get("id")) for i in body["input"]] == [
        (None, None), ("reasoning", "rs_9"), ("message", "msg_9"), ("function_call", "fc_9"),
        ("function_call_output", None)]
    assert orr.check(body) == []


@pytest.mark.parametrize("broken", [
    pytest.param({"call": "call_9"}, id="call-id-as-item-id"),
    pytest.param({"call": None}, id="call-without-item-id"),
    pytest.param({"message": "item 9"}, id="message-id-with-space"),
    pytest.param({"data": None}, id="no-encrypted-content"),
])
def test_a_message_that_cannot_replay_falls_back_to_no_reasoning_and_no_ids(broken: dict[str, Any]) -> None:
    call_pd = {"openai_responses": {"id": broken.get("call", "fc_9")}} if broken.get("call", 1) else None
    reply = ChatMessage(
        role="assistant",
        content=(ThinkingPart(provider="openai_responses", data=broken.get("data", "ENC"),
                              provider_data={"openai_responses": {"id": "rs_9", "summary": []}}),
                 TextPart(text="On it.")),
        tool_calls=(ToolCall(id="c1", name="search", provider_data=call_pd),),
        provider_data={"openai_responses": {"id": broken.get("message", "msg_9")}},
    )
    body = orr.to_request([ChatMessage(role="user", content="q"), reply,
                           ChatMessage(role="tool", tool_call_id="c1", content="r")], model="gpt-5")
    assert all("id" not in item and item.get("type") != "reasoning" for item in body["input"])
    assert body["input"][1] == {"role": "assistant", "content": "On it."}
    assert orr.check(body) == []


def test_a_reply_saved_twice_replays_only_once() -> None:
    reply = orr.from_response(reasoning_response(3))
    call = reply.tool_calls[0].id
    history = [ChatMessage(role="user", content="q"),
               reply, ChatMessage(role="tool", tool_call_id=call, content="1"),
               reply, ChatMessage(role="tool", tool_call_id=call, content="2")]
    body = orr.to_request(history, model="gpt-5")
    assert [i.get("id") for i in body["input"] if "id" in i] == ["rs_0003a", "fc_0003c"]
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    assert len(set(calls)) == 2
    assert orr.check(body) == []


def test_an_edited_reply_uses_content_order_when_the_recorded_layout_no_longer_fits() -> None:
    reply = orr.from_response(reasoning_response(4, text="Checking."))
    edited = replace(reply, content=(*reply.content, TextPart(text="More.")))
    result = ChatMessage(role="tool", tool_call_id=reply.tool_calls[0].id, content="r")
    body = orr.to_request([ChatMessage(role="user", content="q"), edited, result], model="gpt-5")
    assert body["input"][2]["content"] == [
        {"type": "output_text", "text": "Checking.", "annotations": []},
        {"type": "output_text", "text": "More.", "annotations": []}]
    assert orr.check(body) == []


def test_thinking_of_other_providers_is_not_sent() -> None:
    reply = ChatMessage(role="assistant", content=(
        ThinkingPart(text="secret plan", signature="sig", provider="anthropic"),
        ThinkingPart(redacted=True, data="EmwKopaque", provider="anthropic"),
        TextPart(text="Done.")))
    body = orr.to_request([ChatMessage(role="user", content="q"), reply], model="gpt-5")
    assert body["input"] == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "Done."}]
    assert "secret plan" not in body_strings(body) and "EmwKopaque" not in body_strings(body)


def test_long_ids_fit_64_characters_and_never_collide() -> None:
    long_a, long_b = "x" * 70, "x" * 70 + "y"
    shortened = shortening_id_maker(CALL_ID_MAX)(long_a, 0)
    calls = (ToolCall(id=long_a, name="search"), ToolCall(id=long_b, name="search"),
             ToolCall(id=shortened, name="search"))
    history = [ChatMessage(role="user", content="q"), ChatMessage(role="assistant", tool_calls=calls),
               *[ChatMessage(role="tool", tool_call_id=c.id, content=c.id[-3:]) for c in calls]]
    body = orr.to_request(history, model="gpt-5")
    wire = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    assert len(set(wire)) == 3 and all(len(w) <= 64 for w in wire)
    assert wire[0] == shortened != wire[2]
    outputs = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert outputs == wire
    assert orr.check(body) == []


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@examples(200)
@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4))
def test_arguments_are_the_bytes_of_arguments_json(arguments: dict[str, Any]) -> None:
    call = ToolCall(id="c", name="s", arguments=arguments)
    body = orr.to_request([ChatMessage(role="assistant", tool_calls=(call,))], model="m")
    assert body["input"][0]["arguments"] == arguments_json(call)
    assert json.loads(body["input"][0]["arguments"]) == arguments


def test_system_prompt_placement() -> None:
    history = [ChatMessage(role="system", content="A"), ChatMessage(role="user", content="q"),
               ChatMessage(role="system", content="B")]
    plain = orr.to_request(history, model="m")
    assert plain["instructions"] == "A"
    assert plain["input"] == [{"role": "user", "content": "q"}, {"role": "system", "content": "B"}]
    option = orr.to_request(history, model="m", system="S")
    assert option["instructions"] == "S"
    assert option["input"][0] == {"role": "system", "content": "A"}
    pictured = [ChatMessage(role="system", content=(TextPart(text="A"), ImagePart(url="https://e.x/l.png")))]
    body = orr.to_request(pictured, model="m")
    assert "instructions" not in body and body["input"][0]["role"] == "system"
    assert orr.check(body) == []


def test_assistant_images_move_to_a_user_message() -> None:
    reply = ChatMessage(role="assistant", content=(TextPart(text="Here:"), ImagePart(url="https://e.x/a.png")),
                        tool_calls=(ToolCall(id="c", name="search"),))
    body = orr.to_request([ChatMessage(role="user", content="q"), reply,
                           ChatMessage(role="tool", tool_call_id="c", content="r")], model="m")
    assert body["input"][1:3] == [
        {"role": "assistant", "content": "Here:"},
        {"role": "user",
         "content": [{"type": "input_image", "image_url": "https://e.x/a.png", "detail": "auto"}]}]
    assert orr.check(body) == []


def test_errors_are_said_in_the_output_and_read_back() -> None:
    history = [ChatMessage(role="user", content="q"),
               ChatMessage(role="assistant", tool_calls=tuple(ToolCall(id=i, name="s") for i in "abc")),
               ChatMessage(role="tool", tool_call_id="a", content="boom", is_error=True),
               ChatMessage(role="tool", tool_call_id="b", is_error=True,
                           content=(TextPart(text="bad"), ImagePart(media_type="image/png", data=PNG))),
               ChatMessage(role="tool", tool_call_id="c", content="", is_error=True)]
    body = orr.to_request(history, model="m")
    outputs = [i["output"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert outputs[0] == f"{ERROR_MARK} boom"
    assert outputs[1][0] == {"type": "input_text", "text": ERROR_MARK}
    assert outputs[2] == ERROR_MARK
    back = orr.from_request(body)
    assert [(m.is_error, m.content, m.tool_name) for m in back if m.role == "tool"] == [
        (True, "boom", "s"), (True, (TextPart(text="bad"), ImagePart(media_type="image/png", data=PNG)), "s"),
        (True, "", "s")]


# ----------------------------------------------------------------------------------------- reading


def test_from_response_reads_dict_and_sdk_object_alike() -> None:
    data = reasoning_response(5, text="Checking.")
    from_dict = orr.from_response(data)
    from_sdk = orr.from_response(Response.model_validate(data))
    assert from_dict == from_sdk
    assert isinstance(from_dict.content, tuple)
    thinking, text = from_dict.content
    assert isinstance(thinking, ThinkingPart) and isinstance(text, TextPart)
    assert thinking.provider == "openai_responses" and thinking.data == ENC + "5"
    assert thinking.text == "**Checking weather**\n\nThe user wants Paris." and not thinking.redacted
    assert thinking.provider_data == {"openai_responses": {"id": "rs_0005a", "summary": [
        {"type": "summary_text", "text": "**Checking weather**\n\nThe user wants Paris."}]}}
    assert from_dict.tool_calls == (ToolCall(id="call_JCuVTkQxVB3cCmFWx52adJKZ", name="get_weather",
                                             arguments={"city": "Paris"},
                                             provider_data={"openai_responses": {"id": "fc_0005c"}}),)
    mine = (from_dict.provider_data or {})["openai_responses"]
    assert mine["id"] == "msg_0005b" and mine["phase"] == "commentary"
    assert [e["type"] for e in mine["items"]] == ["reasoning", "message", "function_call"]


def test_from_response_of_a_plain_answer_is_a_string_message() -> None:
    data = response_json([{"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": "Hi!", "annotations": []}]},
                          {"id": "ws_1", "type": "web_search_call", "status": "completed",
                           "action": {"type": "search", "query": "x"}}], model="gpt-4.1")
    reply = orr.from_response(data)
    assert reply.content == "Hi!" and reply.tool_calls == ()
    assert reply.provider_data == {"openai_responses": {"id": "msg_1"}}


def test_from_response_rejects_a_reply_without_output() -> None:
    with pytest.raises(ReadError, match="output"):
        orr.from_response({"error": {"message": "boom"}})
    with pytest.raises(ReadError):
        orr.from_response(42)


def test_from_request_reads_bodies_lists_and_strings() -> None:
    assert orr.from_request({"model": "m", "input": "hello", "instructions": "be nice"}) == [
        ChatMessage(role="system", content="be nice"), ChatMessage(role="user", content="hello")]
    items = [{"role": "developer", "content": "rules"},
             {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
             {"role": "assistant", "content": [{"type": "output_text", "text": "a", "annotations": []},
                                               {"type": "refusal", "refusal": "no"}]},
             {"type": "function_call", "call_id": "c", "name": "s", "arguments": "not json"},
             {"type": "function_call_output", "call_id": "c", "output": "r"}]
    read = orr.from_request(items)
    # what the neutral model does not name (the developer role, `type`, the refusal) rides in provider_data
    assert [replace(m, provider_data=None) for m in read] == [
        ChatMessage(role="system", content="rules"), ChatMessage(role="user", content=(TextPart(text="q"),)),
        ChatMessage(role="assistant", content=(TextPart(text="a"), TextPart(text="no")),
                    tool_calls=(ToolCall(id="c", name="s", arguments="not json"),)),
        ChatMessage(role="tool", tool_call_id="c", tool_name="s", content="r")]
    assert orr.to_request(read, model="m", system="s")["input"] == items


def test_from_request_takes_a_null_input_as_none() -> None:
    # The API takes `"input": null` as no input (instructions alone); check() agrees, so reading must too.
    body = {"model": "m", "instructions": "be nice", "input": None}
    assert orr.check(body) == []
    assert orr.from_request(body) == [ChatMessage(role="system", content="be nice")]


def test_from_request_keeps_consecutive_plain_assistant_messages_apart() -> None:
    items = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
             {"role": "assistant", "content": "b"}, {"type": "function_call", "call_id": "c", "name": "s",
                                                     "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c", "output": "r"},
             {"role": "assistant", "content": "after"}]
    roles = [(m.role, m.content, len(m.tool_calls)) for m in orr.from_request(items)]
    assert roles == [("user", "q", 0), ("assistant", "a", 0), ("assistant", "b", 1), ("tool", "r", 0),
                     ("assistant", "after", 0)]


@pytest.mark.parametrize("bad", [
    {"input": [{"role": "tool", "content": "x"}]},
    {"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]},
    {"input": [5]},
    {"input": 5},
    {"instructions": 3, "input": []},
])
def test_from_request_names_what_it_cannot_read(bad: dict[str, Any]) -> None:
    with pytest.raises(ReadError) as info:
        orr.from_request(bad)
    assert info.value.provider == "openai_responses"


# ---------------------------------------------------------------------------------------- checking


def good_body() -> dict[str, Any]:
    """A valid replayed tool loop to break in one way per rule."""
    reply = orr.from_response(reasoning_response(7, text="Checking."))
    history = [ChatMessage(role="user", content=(TextPart(text="Weather?"), ImagePart(url="https://e.x/m.png"))),
               reply, ChatMessage(role="tool", tool_call_id=reply.tool_calls[0].id, content="22 °C"),
               ChatMessage(role="user", content="thanks")]
    body = orr.to_request(history, model="gpt-5.5", store=False)
    assert [i.get("type", i.get("role")) for i in body["input"]] == [
        "user", "reasoning", "message", "function_call", "function_call_output", "user"]
    return body


def _set(index: int, **changes: Any) -> Callable[[dict[str, Any]], None]:
    def apply(body: dict[str, Any]) -> None:
        for key, value in changes.items():
            if value is _DELETE:
                del body["input"][index][key]
            else:
                body["input"][index][key] = value
    return apply


_DELETE = object()


def _insert(index: int, item: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda body: body["input"].insert(index, item)


def _remove(*indices: int) -> Callable[[dict[str, Any]], None]:
    def apply(body: dict[str, Any]) -> None:
        for i in sorted(indices, reverse=True):
            del body["input"][i]
    return apply


def _strip_ids_keep_model(body: dict[str, Any]) -> None:
    del body["input"][1]  # the reasoning item goes, its message and call keep their ids


FAULTS: list[tuple[str, Callable[[dict[str, Any]], object]]] = [
    ("OR0", _set(3, arguments={"city": "Paris"})),
    ("OR0", _set(0, role="tool")),
    ("OR0", _set(2, content=[{"type": "input_text", "text": "x"}])),
    ("OR0", _set(2, content=[{"type": "input_image", "image_url": "https://e.x/a.png", "detail": "auto"}])),
    ("OR0", _set(0, content=[{"type": "output_text", "text": "x", "annotations": []}])),
    ("OR0", _set(3, call_id="")),
    ("OR0", _set(1, summary=_DELETE)),
    ("OR0", _set(4, output={"text": "22"})),
    ("OR1", _remove(4)),
    ("OR2", _set(4, call_id="call_other")),
    ("OR3", lambda b: (_set(3, call_id="c" * 65)(b), _set(4, call_id="c" * 65)(b))),
    ("OR4", _set(3, id="call_JCuVTkQxVB3cCmFWx52adJKZ")),
    ("OR4", _set(1, id="reasoning_1")),
    ("OR5", _set(3, id="fc_bad id")),
    ("OR5", _set(2, id="")),
    ("OR6", _insert(3, {"type": "message", "id": "msg_0007b", "role": "assistant", "status": "completed",
                        "content": []})),
    ("OR7", _remove(2, 3, 4)),
    ("OR7", _set(2, id=_DELETE, status=_DELETE, type=_DELETE)),
    ("OR9", _set(1, encrypted_content=_DELETE)),
    ("OR9", _insert(0, {"type": "item_reference", "id": "msg_old"})),
    ("OR10", _insert(5, {"type": "function_call_output", "call_id": "call_JCuVTkQxVB3cCmFWx52adJKZ",
                         "output": "again"})),
    ("OR10", _insert(4, {"type": "function_call", "call_id": "call_JCuVTkQxVB3cCmFWx52adJKZ", "name": "x",
                         "arguments": "{}"})),
    ("OR11", _insert(4, {"role": "user", "content": "while the tool ran"})),
]


@pytest.mark.parametrize(("code", "fault"), FAULTS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(FAULTS)])
def test_each_rule_is_reported_with_its_code(code: str, fault: Callable[[dict[str, Any]], None]) -> None:
    problems = problems_after(orr.PROVIDER, good_body(), fault)
    assert code in {p.code for p in problems}, problems


def test_problem_wording_fills_the_variable_parts() -> None:
    body = good_body()
    body["input"][3]["call_id"] = body["input"][4]["call_id"] = "c" * 70
    body["input"][3]["arguments"] = {"city": "Paris"}
    assert set(map(str, orr.check(body))) == {
        "input[3].call_id: OR3: Invalid 'input[3].call_id': string too long. Expected a string with maximum "
        "length 64, but got a string with length 70 instead.",
        "input[4].call_id: OR3: Invalid 'input[4].call_id': string too long. Expected a string with maximum "
        "length 64, but got a string with length 70 instead.",
        "input[3].arguments: OR0: Invalid type for 'input[3].arguments': expected a string, but got an "
        "object instead.",
    }
    body = good_body()
    del body["input"][4]
    message = "No tool output found for function call call_JCuVTkQxVB3cCmFWx52adJKZ."
    assert orr.check(body) == [Problem(code="OR1", path="input[3]", message=message,
                                       provider="openai_responses")]


def test_item_ids_without_reasoning_are_not_a_problem_for_any_model() -> None:
    """OR8 depends on what the server recorded with the item: gpt-5 bodies whose `fc_` items came without
    reasoning were accepted with 200 (pydantic-ai cassettes, #43), and repair could not add the reasoning."""
    body = {"model": "gpt-4.1", "input": [
        {"role": "user", "content": "q"},
        {"type": "function_call", "id": "fc_1", "call_id": "c", "name": "s", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "r"}]}
    assert orr.check(body) == []
    for reasoning in ({"model": "gpt-5"}, {"model": "o3", "reasoning": {"effort": "low"}}):
        assert orr.check({**body, **reasoning}) == []
        assert not orr.PROVIDER.repair_body({**body, **reasoning}).changed
    stripped = good_body()
    _strip_ids_keep_model(stripped)
    assert "OR8" not in codes(stripped)


def test_previous_response_id_lets_outputs_answer_calls_of_the_chain() -> None:
    body = {"model": "gpt-5", "previous_response_id": "resp_1",
            "input": [{"type": "function_call_output", "call_id": "c", "output": "r"}]}
    assert orr.check(body) == []
    assert codes({k: v for k, v in body.items() if k != "previous_response_id"}) == {"OR2"}


@pytest.mark.parametrize("body", [
    None, [], "text", 5, {}, {"input": 5}, {"model": "m", "input": [1, None, {"type": 3}, {"role": None}]},
    {"model": "m", "input": [{"type": "reasoning"}]}, {"model": "m", "tools": [5, {"type": "function"}]},
    {"model": "m", "input": [{"type": "function_call", "call_id": ["x"], "id": 3}]},
    {"model": "m", "input": [{"role": "user", "content": [None, {"type": "input_image"}]}]},
    {"model": "m", "instructions": ["x"], "input": "ok"},
])
def test_check_reports_malformed_bodies_and_never_raises(body: Any) -> None:
    problems = orr.check(body)
    assert problems and all(p.code.startswith("OR") and p.message for p in problems)


# ------------------------------------------------------------------------------------- properties


@st.composite
def responses_replies(draw: st.DrawFn) -> ChatMessage:
    """An assistant message read from a generated reply: reasoning (maybe encrypted), text, calls."""
    output: list[dict[str, Any]] = []
    ids = st.sampled_from(["1", "2", "3"])  # repeats across replies: the writer must not send an id twice
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["reasoning", "message", "function_call"]))
        n = draw(ids)
        if kind == "reasoning":
            item: dict[str, Any] = {"type": "reasoning", "id": f"rs_{n}", "summary": draw(st.sampled_from(
                [[], [{"type": "summary_text", "text": "plan"}]]))}
            if draw(st.integers(0, 4)):
                item["encrypted_content"] = f"ENC{n}"
        elif kind == "message":
            item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": draw(texts), "annotations": []}]}
            if draw(st.booleans()):
                item["phase"] = draw(st.sampled_from(["commentary", "final_answer"]))
        else:
            item = {"type": "function_call", "call_id": draw(IDS), "name": draw(NAMES),
                    "arguments": draw(st.sampled_from(['{"q":"x"}', "{}", "not json"]))}
            item_id = draw(st.sampled_from([f"fc_{n}", None, "call_bad"]))
            if item_id is not None:
                item["id"] = item_id
        output.append(item)
    return orr.from_response(response_json(output))


@st.composite
def histories(draw: st.DrawFn) -> list[ChatMessage]:
    """Messy histories with Responses replies (and some of their results) mixed in."""
    history = draw(messy_histories())
    for _ in range(draw(st.integers(0, 3))):
        reply = draw(responses_replies())
        at = draw(st.integers(0, len(history)))
        results = [ChatMessage(role="tool", tool_call_id=c.id, content=draw(texts))
                   for c in reply.tool_calls if draw(st.booleans())]
        history[at:at] = [reply, *results]
    return history


@examples(200)
@given(histories())
def test_generated_bodies_pass_check_and_the_sdk_types(history: list[ChatMessage]) -> None:
    body = sendable_body(orr, history, model="gpt-5.5", tools=[WEATHER_TOOL], store=False)
    assert orr.check(body) == []
    sdk_validate(body)
    assert json.loads(json.dumps(body)) == body
    assert orr.to_request(history, model="gpt-5.5", tools=[WEATHER_TOOL], store=False) == body
    for item in body["input"]:
        if item.get("type") == "reasoning":
            assert item["encrypted_content"]
        for key in ("call_id", "id"):
            assert len(item.get(key, "")) <= 64


@examples(200)
@given(histories())
def test_reading_a_written_body_keeps_every_text_and_image(history: list[ChatMessage]) -> None:
    body = orr.to_request(history, model="m")
    back = orr.from_request(body)
    want_texts, want_images = texts_and_images(repaired(history).messages)
    got_texts, got_images = texts_and_images(back)
    assert sorted(want_images) == sorted(got_images)
    for text in want_texts:
        assert text in got_texts or any(text in t for t in got_texts), text
    written = body_strings(body)
    assert all(json.dumps(t, ensure_ascii=False)[1:-1] in written for t in want_texts)
    # What was read writes back to the same items (the reader keeps all that the writer needs).
    instructions = body.get("instructions")
    read = back[1:] if instructions is not None else back
    again = orr.to_request(read, model="m", system=instructions or "")
    assert again["input"] == body["input"]


@examples(200)
@given(histories())
def test_the_wire_is_prefix_stable(history: list[ChatMessage]) -> None:
    full = sendable_body(orr, history, model="m")["input"]
    for i, message in enumerate(history):
        if message.role == "assistant" and not is_placeholder(message):
            prefix = body_or_none(orr, history[:i], model="m")  # None: that prefix has nothing to send
            assert prefix is None or full[:len(prefix["input"])] == prefix["input"]


# --------------------------------------------------------------------------------- example request


def test_the_shipped_example_reads_checks_and_writes_back_unchanged() -> None:
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    assert orr.check(example) == []
    sdk_validate(example)
    history = orr.from_request(example)
    assert history[0] == ChatMessage(role="system", content=example["instructions"])
    replies = [m for m in history if m.role == "assistant"]
    assert any(isinstance(p, ThinkingPart) and p.data for m in replies for p in m.content)
    assert any(m.is_error for m in history if m.role == "tool")
    assert any(isinstance(p, ImagePart) for m in history if m.role == "tool" for p in m.content
               if not isinstance(m.content, str))
    tools = [{"name": t["name"], "description": t["description"], "parameters": t["parameters"]}
             for t in example["tools"]]
    options = {k: v for k, v in example.items() if k not in ("model", "instructions", "input", "tools")}
    again = orr.to_request(history[1:], model=example["model"], system=example["instructions"], tools=tools,
                           **options)
    assert again == example


# ------------------------------------------------------------------------- the SDK, on a local server


@dataclass
class ResponsesServer:
    """A local `/v1/responses`: OpenAI's 400 when check() finds problems, else a scripted reasoning model."""

    received: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    base_url: str = ""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and JSON the API would answer `body` with."""
        self.received.append(body)
        n = len(self.received)
        problems = PROVIDER.check(body)
        if problems:
            p = problems[0]
            return 400, {"error": {"message": p.message, "type": "invalid_request_error", "param": p.path,
                                   "code": None}}
        last = body["input"][-1] if isinstance(body["input"], list) and body["input"] else {}
        if last.get("type") == "function_call_output":
            return 200, response_json([
                {"id": f"rs_{n}", "type": "reasoning", "summary": [], "encrypted_content": f"ENC{n}"},
                {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "completed",
                 "phase": "final_answer",
                 "content": [{"type": "output_text", "text": "It is 22 °C and sunny in Paris.",
                              "annotations": []}]},
            ], n)
        return 200, reasoning_response(n, call_id=f"call_{n}")


@contextmanager
def responses_server() -> Iterator[ResponsesServer]:
    """Serve a ResponsesServer on 127.0.0.1 (a free port) in a thread for the duration of the block."""
    server = ResponsesServer()

    def route(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return server.answer(body) if path.endswith("/responses") else (404, {"error": {"message": "not found"}})

    with serve(route, server.statuses) as root:
        server.base_url = f"{root}/v1"
        yield server


def test_sdk_client_runs_a_full_tool_loop_with_reasoning_replay() -> None:
    with responses_server() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        history: list[ChatMessage] = [ChatMessage(role="user", content="Weather in Paris?")]
        options = {"model": "gpt-5.5", "tools": [WEATHER_TOOL], "store": False,
                   "include": ["reasoning.encrypted_content"], "system": "Be brief."}
        reply = orr.send(client, history, **options)
        call = reply.tool_calls[0]
        assert call.name == "get_weather" and call.arguments == {"city": "Paris"}
        history += [reply, ChatMessage(role="tool", tool_call_id=call.id, content="22 °C, sunny")]
        final = orr.send(client, history, **options)
        assert final.content[-1] == TextPart(text="It is 22 °C and sunny in Paris.")
        history.append(final)
        history.append(ChatMessage(role="user", content="And tomorrow?"))
        orr.send(client, history, **options)
    assert server.statuses == [200, 200, 200]
    second = server.received[1]
    assert second["instructions"] == "Be brief." and second["include"] == ["reasoning.encrypted_content"]
    assert [(i.get("type"), i.get("id")) for i in second["input"]] == [
        (None, None), ("reasoning", "rs_0001a"), ("function_call", "fc_0001c"),
        ("function_call_output", None)]
    assert second["input"][1]["encrypted_content"] == ENC + "1"
    assert second["input"][2]["call_id"] == second["input"][3]["call_id"] == "call_1"
    third = server.received[2]["input"]
    assert third[:4] == second["input"]
    assert [(i.get("type"), i.get("id")) for i in third[4:]] == [("reasoning", "rs_2"), ("message", "msg_2"),
                                                                 (None, None)]
    assert third[5]["phase"] == "final_answer"


def test_sdk_client_gets_the_400_that_check_predicts() -> None:
    body = good_body()
    body["input"][3]["id"] = body["input"][3]["call_id"]
    with responses_server() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        with pytest.raises(openai.BadRequestError) as info:
            client.responses.create(**body)
    assert "Expected an ID that begins with 'fc'." in str(info.value)
    assert server.statuses == [400]


def test_send_async_with_the_async_client() -> None:
    async def run(base_url: str) -> ChatMessage:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0)
        try:
            history = [ChatMessage(role="user", content="Weather?")]
            return await orr.send_async(client, history, model="gpt-5.5", tools=[WEATHER_TOOL])
        finally:
            await client.close()

    with responses_server() as server:
        reply = asyncio.run(run(server.base_url))
    assert reply.tool_calls[0].id == "call_1"
    assert isinstance(reply.content[0], ThinkingPart) and reply.content[0].data == ENC + "1"
    assert copy.deepcopy(server.received[0]["tools"][0])["strict"] is False


def test_a_replayed_message_after_its_calls_reads_back_as_one_turn() -> None:
    # The recorded layout puts the message item after the function_call: reading it as a second assistant
    # message would leave the call's output after the text, and writing again would orphan it.
    reasoning = ThinkingPart(text="", redacted=True, data="ENC1", provider="openai_responses",
                             provider_data={"openai_responses": {"id": "rs_1", "summary": []}})
    call = ToolCall(id="c1", name="search", arguments={"q": "x"}, provider_data={"openai_responses": {"id": "fc_1"}})
    layout = [{"type": "reasoning", "id": "rs_1"}, {"type": "function_call", "id": "fc_1"},
              {"type": "message", "id": "msg_1", "parts": 1}]
    history = [
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", content=(reasoning, TextPart(text="ok")), tool_calls=(call,),
                    provider_data={"openai_responses": {"id": "msg_1", "items": layout}}),
        ChatMessage(role="tool", tool_call_id="c1", content="hit"),
    ]
    body = orr.to_request(history, model="m")
    assert [item.get("type", "message") for item in body["input"]] == [
        "message", "reasoning", "function_call", "message", "function_call_output"]
    back = orr.from_request(body)
    assert [m.role for m in back] == ["user", "assistant", "tool"]
    assert orr.to_request(back, model="m")["input"] == body["input"]


@pytest.mark.parametrize(("image", "path", "reason"), [
    ({"type": "input_image", "image_url": 5}, "input[1].output[0].image_url", "'image_url' must be a string, got int"),
])
def test_an_image_without_a_readable_url_is_a_read_error_that_says_which(image: dict[str, Any], path: str,
                                                                        reason: str) -> None:
    # an image_url of the wrong type was reported as an image given by file_id
    body = {"input": [{"role": "user", "content": "hi"},
                      {"type": "function_call_output", "call_id": "c", "output": [image]}]}
    with pytest.raises(ReadError) as info:
        orr.from_request(body)
    assert (info.value.path, info.value.reason, info.value.provider) == (path, reason, "openai_responses")


def test_a_value_the_neutral_model_rejects_is_a_read_error_naming_the_provider() -> None:
    # an empty image url: the model's rejection became a ReadError that named no provider
    with pytest.raises(ReadError) as info:
        orr.from_request({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": ""}]}]})
    assert (info.value.provider, info.value.path) == ("openai_responses", "input[0].content[0].image_url")
    assert str(info.value).startswith("openai_responses: input[0].content[0].image_url: ")


def test_a_renamed_call_whose_item_id_was_sent_before_is_written_plain_in_its_run_and_the_rest_kept() -> None:
    """OR6: a run's writer knows the item ids the list sends before it, so the renamed call goes without its item
    id there, and the list needs no writing anew: the words after it are the input's own object, though moved."""
    call = {"type": "function_call", "id": "fc_b", "call_id": "b", "name": "search", "arguments": "{}"}
    items: list[Any] = [
        {"role": "user", "content": "hi"}, call, {"type": "function_call_output", "call_id": "b", "output": "ok"},
        {"role": "user", "content": "more"}, dict(call), {"role": "user", "content": "again"},
    ]
    repaired = PROVIDER.repair_body({"model": "gpt-5", "input": items})
    out = repaired.body["input"]
    assert out[4] == {"type": "function_call", "call_id": "b_1", "name": "search", "arguments": "{}"}
    assert out[5]["type"] == "function_call_output" and out[5]["call_id"] == "b_1"
    assert repaired.rewritten == [4, 5]
    assert all(out[k] is items[k] for k in range(4)) and out[6] is items[5]
    assert PROVIDER.check(repaired.body) == []


def test_the_writer_counts_every_item_id_it_writes_whichever_shape_writes_it() -> None:
    """OR6: a computer call's own item id, written by the plain shape, and a hosted tool's, are counted as sent, so a
    later turn holding reasoning and one of them goes in the plain shape, its reasoning left out."""
    from chatmend.providers.base import IdAssigner
    from chatmend.providers.openai_responses.write import Writer

    computer = {"type": "computer_call", "id": "cu_1", "call_id": "a", "status": "completed",
                "action": {"type": "screenshot"}, "pending_safety_checks": []}
    web = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    items = [web, computer, {"role": "user", "content": "more"}, reasoning, {**computer, "call_id": "b"}]
    messages = orr.from_request(items)
    assert messages[0].provider_data is None  # (the plain shape writes that turn as it was)
    writer = Writer(IdAssigner([c.id for m in messages for c in m.tool_calls]))
    writer.write(messages[:1])
    assert writer.items == [web, computer] and writer.item_ids == {"cu_1", "ws_1"}
    writer.write(messages[1:])
    assert [item.get("type", "message") for item in writer.items[2:]] == ["message", "computer_call"]
