"""Mistral: 9-character ids, names, role order, mistral-common validators, check() per rule, SDK loop."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mistral_common.exceptions import MistralCommonException
from mistral_common.protocol.instruct.request import ChatCompletionRequest
from mistral_common.protocol.instruct.validator import (
    MistralRequestValidatorV11,
    MistralRequestValidatorV13,
    ValidationMode,
)
from openai.types.chat import ChatCompletion

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall, repair_history
from chatmend.exceptions import Problem
from chatmend.providers import mistral
from chatmend.providers.mistral import (
    ASSISTANT_FILLER,
    PROVIDER,
    USER_FILLER,
    _first_mistral_ids,
    _mistral_id,
)
from chatmend.repair import is_placeholder
from tests.providers.chat_helpers import (
    PNG,
    WEATHER_TOOL,
    ChatServer,
    broken_bodies,
    chat_server,
    completion,
    sdk_validate,
    weather_reply,
)
from tests.providers.common import body_or_none, problems_after, sendable_body, texts_and_images
from tests.strategies import examples, messy_histories

EXAMPLE = Path(__file__).parents[2] / "examples" / "requests" / "mistral.json"
MISTRAL_EXTRA = {"tool": {"name"}}
MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
VALIDATORS = [
    MistralRequestValidatorV13(ValidationMode("serving")),
    MistralRequestValidatorV11(ValidationMode("serving")),
]


def mistral_common_validate(body: dict[str, Any]) -> None:
    """The body through mistral-common's own request model and its V13 and V11 serving validators."""
    request = ChatCompletionRequest.from_openai(
        messages=body["messages"],
        tools=body.get("tools"),
        model=body["model"],
        **{k: v for k, v in body.items() if k not in ("messages", "tools", "model")},
    )
    for validator in VALIDATORS:
        validator.validate_request(request)


def foreign_history() -> list[ChatMessage]:
    """From elsewhere: a greeting first, odd ids and names, a steer, an image result, a late system."""
    return [
        ChatMessage(role="assistant", content="Hi! Where to?"),
        ChatMessage(role="user", content="Lyon. Check trains and show the map."),
        ChatMessage(
            role="assistant",
            content=(ThinkingPart(text="two tools", signature="s", provider="anthropic"),),
            tool_calls=(
                ToolCall(id="toolu_01M8nJQQMxqpv1VaPYuJKT4j", name="trip.search", arguments={"to": "Lyon"}),
                ToolCall(id="functions.search:0", name="map", arguments={"city": "Lyon"}),
            ),
        ),
        ChatMessage(role="tool", tool_call_id="toolu_01M8nJQQMxqpv1VaPYuJKT4j", content="TGV 6603 08:04"),
        ChatMessage(role="user", content="only mornings"),
        ChatMessage(
            role="tool",
            tool_call_id="functions.search:0",
            content=(ImagePart(media_type="image/png", data=PNG),),
        ),
        ChatMessage(role="system", content="Prices in euros."),
        ChatMessage(role="assistant", content="TGV 6603 leaves at 08:04."),
    ]


def test_exact_body_with_fillers_ids_and_names() -> None:
    tools = [{"name": "trip.search", "parameters": {"type": "object"}}]
    body = mistral.to_request(foreign_history(), model="mistral-large-latest", tools=tools, temperature=0.3)
    assert body == {
        "model": "mistral-large-latest",
        "messages": [
            {"role": "user", "content": USER_FILLER},  # MI10: never start with an assistant message
            {"role": "assistant", "content": "Hi! Where to?"},
            {"role": "user", "content": "Lyon. Check trains and show the map."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "s5RwBvJC9",
                        "type": "function",
                        "function": {"name": "trip_search_25a96f92f9", "arguments": '{"to":"Lyon"}'},
                    },
                    {
                        "id": "9bw0gtkFf",
                        "type": "function",
                        "function": {"name": "map", "arguments": '{"city":"Lyon"}'},
                    },
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "s5RwBvJC9",
                "name": "trip_search_25a96f92f9",
                "content": "TGV 6603 08:04",
            },
            {
                "role": "tool",
                "tool_call_id": "9bw0gtkFf",
                "name": "map",
                "content": "(image result: see the next message)",
            },
            {"role": "assistant", "content": ASSISTANT_FILLER},  # MI5: no user right after tool
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Images from tool result 9bw0gtkFf:"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            },
            {"role": "user", "content": "only mornings"},
            {"role": "user", "content": "Prices in euros."},  # MI5: a later system message, as user text
            {"role": "assistant", "content": "TGV 6603 leaves at 08:04."},
            {"role": "user", "content": USER_FILLER},  # MI6: never end on an assistant message
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "trip_search_25a96f92f9", "parameters": {"type": "object"}},
            }
        ],
        "temperature": 0.3,
    }
    assert mistral.check(body) == []
    mistral_common_validate(body)
    sdk_validate(body, extra=MISTRAL_EXTRA)


def test_fillers_only_where_mistral_needs_them() -> None:
    greeting = [ChatMessage(role="system", content="s"), ChatMessage(role="assistant", content="hi")]
    body = mistral.to_request([*greeting, ChatMessage(role="user", content="u")], model="m")
    assert [m["role"] for m in body["messages"]] == ["system", "assistant", "user"]  # system then assistant is fine
    body = mistral.to_request(greeting, model="m", system="o")
    assert body["messages"] == [
        {"role": "system", "content": "o"},
        {"role": "system", "content": "s"},
        {"role": "user", "content": USER_FILLER},  # what closes the body [o, s] (MI6) stays when it grows
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": USER_FILLER},  # MI6
    ]
    assert mistral.to_request(greeting[:1], model="m", system="o")["messages"] == body["messages"][:3]
    assert mistral.to_request([], model="m", system="o")["messages"] == [{"role": "system", "content": "o"}]
    for b in (body, mistral.to_request(greeting[:1], model="m", system="o")):
        assert mistral.check(b) == []
        mistral_common_validate(b)


def test_ids_keep_mistral_ids_and_resolve_collisions_in_first_seen_order() -> None:
    digest_of_a = "s5RwBvJC9"  # the wire id "toolu_01M8nJQQMxqpv1VaPYuJKT4j" gets
    history: list[ChatMessage] = [ChatMessage(role="user", content="go")]
    for tool_id in ["toolu_01M8nJQQMxqpv1VaPYuJKT4j", digest_of_a, "D681PevKs"]:
        history.append(ChatMessage(role="assistant", tool_calls=(ToolCall(id=tool_id, name="search"),)))
        history.append(ChatMessage(role="tool", tool_call_id=tool_id, content="ok"))
    body = mistral.to_request(history, model="m")
    wire = [m["tool_calls"][0]["id"] for m in body["messages"] if m.get("tool_calls")]
    assert wire[0] == digest_of_a and wire[2] == "D681PevKs"  # a valid Mistral id stays as it is
    assert wire[1] != digest_of_a and MISTRAL_ID.fullmatch(wire[1])  # taken: the next salt is used
    assert mistral.to_request(history, model="m") == body
    mistral_common_validate(body)


@given(st.lists(st.one_of(st.text(max_size=12), st.text(alphabet="aZ09", min_size=9, max_size=9),
                          st.sampled_from(["\ud800", "functions.search:0", "call_0", "a.b|c/d"])), max_size=12))
def test_first_ids_made_at_once_are_each_ids_first_proposal(ids: list[str]) -> None:
    assert _first_mistral_ids(ids) == [_mistral_id(tool_id, 0) for tool_id in ids]


@examples(200)
@given(messy_histories(), st.sampled_from([None, "Be brief."]))
def test_messy_histories_pass_mistral_common_and_check(history: list[ChatMessage], system: str | None) -> None:
    # an empty list no validator accepts (nor the API): to_request refuses it
    body = sendable_body(mistral, history, model="mistral-large-latest", tools=[WEATHER_TOOL], system=system)
    assert mistral.check(body) == []
    mistral_common_validate(body)
    sdk_validate(body, extra=MISTRAL_EXTRA)
    messages = body["messages"]
    calls = [c for m in messages for c in m.get("tool_calls", [])]
    assert all(MISTRAL_ID.fullmatch(c["id"]) for c in calls) and len({c["id"] for c in calls}) == len(calls)
    assert not messages or messages[-1]["role"] in ("user", "tool") or messages == [messages[0]]
    for before, after in itertools.pairwise(messages):
        assert (before["role"], after["role"]) != ("tool", "user")
    dumped = json.dumps(body, ensure_ascii=False)
    texts, images = texts_and_images(repair_history(history).messages)
    assert all(json.dumps(t, ensure_ascii=False)[1:-1] in dumped for t in texts)
    assert all(i in dumped for i in images)
    read_texts, read_images = texts_and_images(mistral.from_request(body))
    assert all(t in "\n".join(read_texts) for t in texts) and sorted(read_images) == sorted(images)


@examples(100)
@given(messy_histories(), st.sampled_from([None, "Be brief."]))
def test_wire_is_prefix_stable(history: list[ChatMessage], system: str | None) -> None:
    whole = body_or_none(mistral, history, model="m", system=system)
    full = whole["messages"] if whole else []
    for i, message in enumerate(history):
        shorter = body_or_none(mistral, history[:i], model="m", system=system)
        if message.role == "assistant" and not is_placeholder(message) and shorter is not None:
            prefix = shorter["messages"]
            assert full[: len(prefix)] == prefix


def test_rewriting_what_was_read_changes_nothing() -> None:
    body = mistral.to_request(foreign_history(), model="m")
    again = mistral.to_request(mistral.from_request(body), model="m")
    assert again == body


# ------------------------------------------------------------------------------------------ fault injection


def valid_body() -> dict[str, Any]:
    """system, user, assistant with two calls, their two results, a user turn after the filler."""
    history = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", content="weather in Paris and Rome"),
        ChatMessage(
            role="assistant",
            tool_calls=(
                ToolCall(id="aaaaaaaa1", name="get_weather", arguments={"city": "Paris"}),
                ToolCall(id="aaaaaaaa2", name="get_weather", arguments={"city": "Rome"}),
            ),
        ),
        ChatMessage(role="tool", tool_call_id="aaaaaaaa1", content="22C"),
        ChatMessage(role="tool", tool_call_id="aaaaaaaa2", content="25C"),
        ChatMessage(role="user", content="thanks"),
    ]
    return mistral.to_request(history, model="mistral-large-latest", tools=[WEATHER_TOOL])


def _msgs(b: dict[str, Any]) -> list[dict[str, Any]]:
    return b["messages"]  # type: ignore[no-any-return]


FAULTS: list[tuple[str, str, Any, bool]] = [
    # code, path, how to break the body, whether mistral-common's validators reject it too
    (
        "MI1",
        "messages[2].tool_calls[0].id",
        lambda b: _msgs(b)[2]["tool_calls"][0].update(id="call_1"),
        False,
    ),
    ("MI1", "messages[3].tool_call_id", lambda b: _msgs(b)[3].update(tool_call_id="functions.x:0"), True),
    ("MI2", "messages[3].tool_call_id", lambda b: _msgs(b)[3].pop("tool_call_id"), False),
    ("MI2", "messages[2].tool_calls[0].id", lambda b: _msgs(b)[2]["tool_calls"][0].update(id=""), True),
    ("MI3", "messages[2].tool_calls", lambda b: _msgs(b).pop(4), True),
    ("MI3", "messages[2].tool_calls", lambda b: _msgs(b).__delitem__(slice(4, None)), True),
    ("MI4", "messages[4].tool_call_id", lambda b: _msgs(b)[4].update(tool_call_id="aaaaaaaa1"), True),
    ("MI4", "messages[4].tool_call_id", lambda b: _msgs(b)[4].update(tool_call_id="zzzzzzzz9"), True),
    (
        "MI4",
        "messages[2].tool_calls[1].id",
        lambda b: _msgs(b)[2]["tool_calls"][1].update(id="aaaaaaaa1"),
        True,
    ),
    ("MI5", "messages[5].role", lambda b: _msgs(b).pop(5), False),
    ("MI5", "messages[2].role", lambda b: _msgs(b).insert(2, dict(_msgs(b)[3])), True),
    ("MI5", "messages[6].role", lambda b: _msgs(b).insert(6, {"role": "system", "content": "late"}), True),
    ("MI6", "messages[7].role", lambda b: _msgs(b).append({"role": "assistant", "content": "bye"}), True),
    # mistral-common's from_openai does not read `prefix`, so its validator cannot see this one
    ("MI7", "messages[5].prefix", lambda b: _msgs(b)[5].update(prefix=True), False),
    (
        "MI9",
        "messages[2].tool_calls[0].function.name",
        lambda b: _msgs(b)[2]["tool_calls"][0]["function"].update(name="get.weather"),
        True,
    ),
    ("MI9", "messages[3].name", lambda b: _msgs(b)[3].update(name="get weather"), True),
    ("MI9", "tools[0].function.name", lambda b: b["tools"][0]["function"].update(name="a" * 65), True),
    ("MI10", "messages[0].role", lambda b: b.update(messages=[{"role": "assistant", "content": "hi"}]), True),
    ("MI10", "messages[0].role", lambda b: _msgs(b).__delitem__(slice(0, 2)), True),
    (
        "MI11",
        "messages[3].content[0]",
        lambda b: _msgs(b)[3].update(content=[{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]),
        True,
    ),
    ("MI12", "messages[0].content", lambda b: _msgs(b)[0].update(content=None), True),
]


@pytest.mark.parametrize(
    ("code", "path", "breaks", "common"), FAULTS, ids=[f"{f[0]}-{i}" for i, f in enumerate(FAULTS)]
)
def test_each_rule_is_reported(code: str, path: str, breaks: Any, common: bool) -> None:
    body = valid_body()
    mistral_common_validate(body)
    problems = problems_after(PROVIDER, body, breaks)
    assert (code, path) in [(p.code, p.path) for p in problems], problems
    if common:  # the reference validator agrees that the body is bad
        with pytest.raises((MistralCommonException, ValueError)):
            mistral_common_validate(body)


def test_messages_are_mistral_common_s_own_words() -> None:
    body = valid_body()
    _msgs(body).pop(5)
    _msgs(body)[3]["tool_call_id"] = "bad"
    problems = {p.code: p for p in mistral.check(body)}
    assert problems["MI5"] == Problem("MI5", "messages[5].role", "Unexpected role 'user' after role 'tool'", "mistral")
    assert problems["MI1"].message == "Tool call id was bad but must be a-z, A-Z, 0-9, with a length of 9."
    assert problems["MI4"].message == "Unexpected tool call id bad in tool results"
    with pytest.raises(MistralCommonException, match="Unexpected tool call id bad in tool results"):
        mistral_common_validate(body)


@pytest.mark.parametrize("body", [None, {"messages": {}}, {"messages": [{"role": "developer", "content": "x"}]}])
def test_malformed_bodies_are_reported_not_raised(body: Any) -> None:
    assert {p.code for p in mistral.check(body)} == {"SHAPE"}


@examples(100)
@given(broken_bodies(PROVIDER))
def test_check_never_raises(body: dict[str, Any]) -> None:
    assert all(p.provider == "mistral" for p in mistral.check(body))


# ---------------------------------------------------------------------------------------------------- read


def test_example_body_reads_and_rewrites_to_itself() -> None:
    body = json.loads(EXAMPLE.read_text())
    assert mistral.check(body) == []
    mistral_common_validate(body)
    history = mistral.from_request(body)
    assert history[2].tool_calls[1] == ToolCall(
        id="KqVz3nT8m", name="get_weather", arguments={"city": "Lyon", "date": "2026-12-01"}
    )
    assert history[3].tool_name == "search_trains"
    tools = [t["function"] for t in body["tools"]]
    assert mistral.to_request(history, model=body["model"], tools=tools, temperature=0.3) == body


def test_from_response_reads_thinking_chunks_and_mistral_image_strings() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "Paris first."}]},
            {"type": "text", "text": "Checking."},
        ],
        "tool_calls": [
            {
                "id": "D681PevKs",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    }
    expected = ChatMessage(
        role="assistant",
        content=(ThinkingPart(text="Paris first.", provider="mistral"), TextPart(text="Checking.")),
        tool_calls=(ToolCall(id="D681PevKs", name="get_weather", arguments={"city": "Paris"}),),
    )
    raw = completion("magistral-medium-latest", message, 1)
    assert mistral.from_response(raw) == expected
    assert mistral.from_response(ChatCompletion.model_construct(**raw)) == expected
    read = mistral.from_request([{"role": "user", "content": [{"type": "image_url", "image_url": "https://x/y.png"}]}])
    # the bare string is Mistral's own form, written back as it came (#22)
    assert read[0].content == (ImagePart(url="https://x/y.png", provider_data={"mistral": {"form": {
        "image_url": "string"}}}),)


# ---------------------------------------------------------------------------------------------------- send


def mistral_error(problem: Problem) -> dict[str, Any]:
    """La Plateforme's 400 body."""
    return {
        "object": "error",
        "message": problem.message,
        "type": "invalid_request_message_order",
        "param": None,
        "code": "3230",
    }


def test_tool_loop_through_the_openai_sdk_with_base_url() -> None:
    server = ChatServer(PROVIDER, weather_reply(lambda n: f"Wx{n:07d}"), mistral_error)
    with chat_server(server), openai.OpenAI(api_key="m", base_url=server.base_url, max_retries=0) as client:
        history = [ChatMessage(role="user", content="Weather in Paris?")]
        reply = mistral.send(client, history, model="mistral-large-latest", tools=[WEATHER_TOOL])
        assert reply.tool_calls == (ToolCall(id="Wx0000001", name="get_weather", arguments={"city": "Paris"}),)
        history += [
            reply,
            ChatMessage(role="tool", tool_call_id="Wx0000001", tool_name="get_weather", content="22C"),
            ChatMessage(role="user", content="in Celsius please"),  # user right after tool: a filler goes between
        ]
        again = mistral.send(client, history, model="mistral-large-latest", tools=[WEATHER_TOOL])
        history += [again, ChatMessage(role="tool", tool_call_id=again.tool_calls[0].id, content="22C")]
        final = mistral.send(client, history, model="mistral-large-latest", tools=[WEATHER_TOOL])
        assert final.content == "It is 22 °C and sunny in Paris."
        assert [m["role"] for m in server.received[2]["messages"]] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant",
            "tool",
        ]
        assert server.statuses == [200, 200, 200]
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(
                model="mistral-large-latest",
                messages=[*server.received[1]["messages"][:3], {"role": "user", "content": "x"}],
            )
        assert "Unexpected role 'user' after role 'tool'" in str(info.value)


def test_send_maps_normalized_tool_names_back() -> None:
    tool = {**WEATHER_TOOL, "name": "weather.get"}

    def reply(body: dict[str, Any], n: int) -> dict[str, Any]:
        name = body["tools"][0]["function"]["name"]
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "Wx0000001", "type": "function", "function": {"name": name, "arguments": "{}"}}],
        }

    server = ChatServer(PROVIDER, reply, mistral_error)
    with chat_server(server), openai.OpenAI(api_key="m", base_url=server.base_url, max_retries=0) as client:
        got = mistral.send(client, [ChatMessage(role="user", content="hi")], model="m", tools=[tool])
    assert server.received[0]["tools"][0]["function"]["name"].startswith("weather_get_")  # MI9 on the wire
    assert got.tool_calls[0].name == "weather.get"


def test_send_async() -> None:
    server = ChatServer(PROVIDER, weather_reply(lambda n: f"As{n:07d}"), mistral_error)

    async def run() -> ChatMessage:
        client = openai.AsyncOpenAI(api_key="m", base_url=server.base_url, max_retries=0)
        try:
            return await mistral.send_async(client, [ChatMessage(role="user", content="Paris?")], model="m")
        finally:
            await client.close()

    with chat_server(server):
        reply = asyncio.run(run())
    assert reply.tool_calls[0].id == "As0000001" and server.statuses == [200]
