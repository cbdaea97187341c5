"""OpenAI Chat Completions: exact bodies, SDK types, check() per rule, reading, and a local SDK round trip."""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any
from unittest.mock import patch

import openai
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion

from chatmend import ChatMessage, ImagePart, NativePart, ReadError, TextPart, ThinkingPart, ToolCall, repair_history
from chatmend.providers import base
from chatmend.providers import openai_chat as oc
from chatmend.providers.base import arguments_json, arguments_text
from chatmend.providers.openai_chat import PROVIDER
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

EXAMPLE = Path(__file__).parents[2] / "examples" / "requests" / "openai_chat.json"
LONG = "toolu_01M8nJQQMxqpv1VaPYuJKT4j_and_then_some_more"


def screenshot_history() -> list[ChatMessage]:
    """A coding agent's turn: parallel calls, an image result, an error, a steer typed while tools ran."""
    return [
        ChatMessage(role="system", content="You are a coding agent."),
        ChatMessage(
            role="user",
            content=(TextPart(text="Why is login broken?"), ImagePart(url="https://example.com/bug.png")),
        ),
        ChatMessage(
            role="assistant",
            content="Let me look.",
            tool_calls=(
                ToolCall(id="call_A", name="screenshot", arguments={"url": "/login"}),
                ToolCall(id="call_B", name="read_file", arguments={"path": "login.css"}),
            ),
        ),
        ChatMessage(role="tool", tool_call_id="call_B", content="ENOENT", is_error=True),
        ChatMessage(role="user", content="hurry up"),
        ChatMessage(
            role="tool",
            tool_call_id="call_A",
            tool_name="screenshot",
            content=(TextPart(text="390x844"), ImagePart(media_type="image/png", data=PNG)),
        ),
        ChatMessage(role="assistant", content="The form is too wide."),
    ]


def test_exact_body_moves_images_after_tool_run_and_says_errors() -> None:
    body = oc.to_request(screenshot_history(), model="gpt-4.1", temperature=0)
    assert body == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Why is login broken?"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/bug.png"}},
                ],
            },
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "id": "call_A",
                        "type": "function",
                        "function": {"name": "screenshot", "arguments": '{"url":"/login"}'},
                    },
                    {
                        "id": "call_B",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path":"login.css"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_A", "content": "390x844"},
            {"role": "tool", "tool_call_id": "call_B", "content": "Error: ENOENT"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Images from tool result call_A:"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            },
            {"role": "user", "content": "hurry up"},
            {"role": "assistant", "content": "The form is too wide."},
        ],
        "temperature": 0,
    }
    assert oc.check(body) == []


def test_exact_body_for_kimi_history_long_ids_verbatim_arguments_and_system_option() -> None:
    history = [
        ChatMessage(role="user", content="find it"),
        ChatMessage(
            role="assistant",
            content=(ThinkingPart(text="search first", signature="sig", provider="anthropic"),),
            tool_calls=(ToolCall(id="functions.search:0", name="search", arguments='{"q": "cut'),),
        ),
        ChatMessage(role="tool", tool_call_id="functions.search:0", content="3 hits"),
        ChatMessage(
            role="assistant",
            tool_calls=(
                ToolCall(id="functions.search:0", name="search"),
                ToolCall(id=LONG, name="search", arguments={"q": "é"}),
            ),
        ),
        ChatMessage(role="tool", tool_call_id="functions.search:0", content="none"),
        ChatMessage(role="tool", tool_call_id=LONG, content=""),
    ]
    body = oc.to_request(history, model="gpt-4.1", system="Be terse.", tools=[WEATHER_TOOL])
    short = body["messages"][4]["tool_calls"][1]["id"]
    assert short == "toolu_01M8nJQQMxqpv1VaPYuJKT4_" + short[-10:] and len(short) == 40
    assert body["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "find it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "functions.search:0",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"q": "cut'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "functions.search:0", "content": "3 hits"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "functions.search:0_1",
                    "type": "function",
                    "function": {"name": "search", "arguments": "{}"},
                },
                {"id": short, "type": "function", "function": {"name": "search", "arguments": '{"q":"é"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "functions.search:0_1", "content": "none"},
        {"role": "tool", "tool_call_id": short, "content": ""},
    ]
    assert body["tools"] == [{"type": "function", "function": WEATHER_TOOL}]
    sdk_validate(body)


def test_long_ids_sharing_a_stem_stay_distinct_and_stable() -> None:
    ids = [LONG + "1", LONG + "2", LONG[:29] + "_" + "x" * 10]
    history: list[ChatMessage] = [ChatMessage(role="user", content="go")]
    for tool_id in ids:
        history.append(ChatMessage(role="assistant", tool_calls=(ToolCall(id=tool_id, name="search"),)))
        history.append(ChatMessage(role="tool", tool_call_id=tool_id, content="ok"))
    body = oc.to_request(history, model="m")
    wire = [m["tool_calls"][0]["id"] for m in body["messages"] if m.get("tool_calls")]
    assert len(set(wire)) == 3 and all(len(w) <= 40 for w in wire)
    assert wire[2] == ids[2]  # a short id is kept as it is
    assert oc.to_request(history[:3], model="m")["messages"] == body["messages"][:3]


def test_thinking_only_and_image_only_assistant_messages() -> None:
    history = [
        ChatMessage(role="user", content="draw"),
        ChatMessage(role="assistant", content=(ThinkingPart(text="hmm"),)),
        ChatMessage(role="assistant", content=(ImagePart(media_type="image/png", data=PNG),)),
        ChatMessage(role="system", content=(TextPart(text="note"), ImagePart(url="https://x/y.png"))),
    ]
    body = oc.to_request(history, model="m")
    assert body["messages"] == [
        {"role": "user", "content": "draw"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Images from the assistant:"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
        {"role": "system", "content": "note"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Images from the system message:"},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            ],
        },
    ]
    assert oc.check(body) == []


@examples(200)
@given(messy_histories())
def test_messy_histories_give_valid_sdk_typed_bodies(history: list[ChatMessage]) -> None:
    # nothing to send: to_request refuses it
    body = sendable_body(oc, history, model="gpt-4.1", tools=[WEATHER_TOOL])
    assert oc.check(body) == []
    sdk_validate(body)
    dumped = json.dumps(body, ensure_ascii=False)
    assert json.dumps(oc.to_request(history, model="gpt-4.1", tools=[WEATHER_TOOL]), ensure_ascii=False) == dumped
    calls = [c for m in body["messages"] for c in m.get("tool_calls", [])]
    assert len({c["id"] for c in calls}) == len(calls)
    assert all(len(c["id"]) <= 40 and isinstance(c["function"]["arguments"], str) for c in calls)
    texts, images = texts_and_images(repair_history(history).messages)
    assert all(json.dumps(t, ensure_ascii=False)[1:-1] in dumped for t in texts)
    assert all(i in dumped for i in images)
    read_texts, read_images = texts_and_images(oc.from_request(body))
    joined = "\n".join(read_texts)
    assert all(t in joined for t in texts)
    assert sorted(read_images) == sorted(images)


# Found by a fuzz run: a whitespace-only reply inside a span is a placeholder; the span, and its call's wait for a
# result, goes on past it (the result after it answers the call).
PLACEHOLDER_IN_SPAN = [
    ChatMessage(role="system", content="ok"),
    ChatMessage(role="assistant", content="", tool_calls=(ToolCall(id="", name="search", arguments={}),)),
    ChatMessage(role="user", content=(TextPart(text="ok"),)),
    ChatMessage(role="assistant", content=" "),
    ChatMessage(role="user", content="ok"),
    ChatMessage(role="tool", content="ok", tool_call_id=""),
]


@examples(100)
@given(messy_histories())
@example(PLACEHOLDER_IN_SPAN)
def test_wire_is_prefix_stable(history: list[ChatMessage]) -> None:
    whole = body_or_none(oc, history, model="m")
    full = whole["messages"] if whole else []
    for i, message in enumerate(history):
        shorter = body_or_none(oc, history[:i], model="m")  # None: nothing to send yet
        # at every kept assistant message (a placeholder, even " ", is dropped and does not end a span)
        if message.role == "assistant" and not is_placeholder(message) and shorter is not None:
            prefix = shorter["messages"]
            assert full[: len(prefix)] == prefix


# ------------------------------------------------------------------------------------------ fault injection


def valid_body() -> dict[str, Any]:
    """A body that passes: two calls answered, then a user turn."""
    return oc.to_request(screenshot_history()[:6], model="gpt-4.1")


def _drop_result(b: dict[str, Any]) -> None:
    del b["messages"][4]


def _end_on_calls(b: dict[str, Any]) -> None:
    del b["messages"][3:]


def _tool_after_user(b: dict[str, Any]) -> None:
    b["messages"].insert(2, {"role": "tool", "tool_call_id": "call_A", "content": "early"})


def _unknown_id(b: dict[str, Any]) -> None:
    b["messages"][4]["tool_call_id"] = "call_Z"


def _duplicate_result(b: dict[str, Any]) -> None:
    b["messages"].insert(5, dict(b["messages"][4]))


def _duplicate_call_id(b: dict[str, Any]) -> None:
    b["messages"][2]["tool_calls"][1]["id"] = "call_A"


def _long_id(b: dict[str, Any]) -> None:
    b["messages"][2]["tool_calls"][0]["id"] = b["messages"][3]["tool_call_id"] = "c" * 41


def _object_arguments(b: dict[str, Any]) -> None:
    b["messages"][2]["tool_calls"][0]["function"]["arguments"] = {"url": "/login"}


def _image_in_tool(b: dict[str, Any]) -> None:
    b["messages"][3]["content"] = [
        {"type": "text", "text": "390x844"},
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
    ]


def _image_in_assistant(b: dict[str, Any]) -> None:
    b["messages"][2]["content"] = [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]


FAULTS = [
    ("OC1", "messages[2].role", _drop_result),
    ("OC1", "messages[2].role", _end_on_calls),
    ("OC2", "messages[2].role", _tool_after_user),
    ("OC3", "messages[4].tool_call_id", _unknown_id),
    ("OC4", "messages[5].tool_call_id", _duplicate_result),
    ("OC4", "messages[2].tool_calls[1].id", _duplicate_call_id),
    ("OC5", "messages[2].tool_calls[0].id", _long_id),
    ("OC6", "messages[2].tool_calls[0].function.arguments", _object_arguments),
    ("OC7", "messages[3].content[1]", _image_in_tool),
    ("OC7", "messages[2].content[0]", _image_in_assistant),
]


@pytest.mark.parametrize(("code", "path", "breaks"), FAULTS, ids=[f"{c}-{f.__name__}" for c, _, f in FAULTS])
def test_each_rule_is_reported(code: str, path: str, breaks: Any) -> None:
    problems = problems_after(PROVIDER, valid_body(), breaks)
    assert (code, path) in [(p.code, p.path) for p in problems], problems


def test_messages_are_the_providers_own_words() -> None:
    body = valid_body()
    _drop_result(body)
    _long_id(body)
    texts = {p.code: p.message for p in oc.check(body)}
    assert texts["OC1"] == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_B"
    )
    assert texts["OC5"] == (
        "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with "
        "maximum length 40, but got a string with length 41 instead."
    )


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        "x",
        {"messages": "hi"},
        {"messages": [1]},
        {"messages": [{"role": "bot"}]},
        {"messages": [{"role": "assistant", "tool_calls": {"id": "a"}}]},
        {"messages": [{"role": "assistant", "tool_calls": [{"id": 3, "function": {"name": "f"}}]}]},
        {"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}]},
        {"messages": [{"role": "user", "content": [3]}]},
        {"messages": [{"role": "user", "content": 5}]},
    ],
)
def test_malformed_bodies_are_reported_not_raised(body: Any) -> None:
    problems = oc.check(body)
    assert problems and {p.code for p in problems} == {"SHAPE"}


@examples(100)
@given(broken_bodies(PROVIDER))
def test_check_never_raises(body: dict[str, Any]) -> None:
    assert all(p.provider == "openai_chat" for p in oc.check(body))


# ---------------------------------------------------------------------------------------------------- read


def test_from_request_reads_bodies_and_message_lists() -> None:
    body = json.loads(EXAMPLE.read_text())
    history = oc.from_request(body)
    assert [m.role for m in history] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert history[2].tool_calls[0] == ToolCall(
        id="call_JCuVTkQxVB3cCmFWx52adJKZ",
        name="screenshot",
        arguments={"url": "http://localhost:3000/login", "width": 390},
    )
    assert isinstance(history[1].content, tuple) and history[1].content[1] == ImagePart(
        url="https://example.com/bug-report/login-mobile.png"
    )
    assert history[5].content[1] == ImagePart(media_type="image/png", data=PNG)
    assert oc.from_request(body["messages"]) == history
    assert oc.check(body) == []
    # The example is what to_request writes for the history it holds.
    tools = [t["function"] for t in body["tools"]]
    assert oc.to_request(history, model=body["model"], tools=tools, temperature=0.2) == body


def test_from_request_reads_developer_refusal_and_null_content() -> None:
    history = oc.from_request(
        [
            {"role": "developer", "content": [{"type": "text", "text": "rules"}]},
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "not json"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "r"}]},
        ]
    )
    # lossless (#22): a developer message is a system message that is written back as developer, a list content
    # is written back as a list, a refusal part as a refusal part
    listed = {"openai_chat": {"form": {"content": "list"}}}
    assert history[0] == ChatMessage(role="system", content=(TextPart(text="rules"),), provider_data={
        "openai_chat": {"form": {"role": "developer", "content": "list"}}})
    assert history[1].content == (TextPart(text="no", provider_data={"openai_chat": {"form": {"type": "refusal"}}}),)
    assert history[2].tool_calls[0].arguments == "not json"
    assert history[3] == ChatMessage(role="tool", tool_call_id="c1", content=(TextPart(text="r"),),
                                     provider_data=listed)


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"model": "m"}, "messages"),
        ([{"role": "robot", "content": "x"}], "messages[0].role"),
        ([{"role": "function", "content": "x"}], "messages[0].name"),
        ([{"role": "tool", "content": "x"}], "messages[0].tool_call_id"),
        ([{"role": "user", "content": [{"type": "text"}]}], "messages[0].content[0].text"),
        ([{"role": "user", "content": [{"text": "x"}]}], "messages[0].content[0]"),
        ([{"role": "assistant", "tool_calls": [{"id": "a", "function": {}}]}], "messages[0].tool_calls[0]"),
        ("messages", None),
    ],
)
def test_from_request_errors_say_where(data: Any, path: str | None) -> None:
    with pytest.raises(ReadError) as info:
        oc.from_request(data)
    assert info.value.provider == "openai_chat"
    assert info.value.path == path


def test_from_response_reads_dicts_and_sdk_objects() -> None:
    message = {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ],
    }
    raw = completion("gpt-4.1", message, 1)
    expected = ChatMessage(
        role="assistant",
        content="Checking.",
        tool_calls=(ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"}),),
    )
    assert oc.from_response(raw) == expected
    assert oc.from_response(ChatCompletion.model_validate(raw)) == expected
    with pytest.raises(ReadError):
        oc.from_response({"choices": []})
    with pytest.raises(ReadError):
        oc.from_response(42)


# ---------------------------------------------------------------------------------------------------- send


def test_tool_loop_through_the_openai_sdk_against_a_local_server() -> None:
    server = ChatServer(PROVIDER, weather_reply(lambda n: f"call_{n:024d}"))
    with (
        chat_server(server),
        openai.OpenAI(api_key="test", base_url=server.base_url, max_retries=0) as client,
    ):
        history = [ChatMessage(role="user", content="What is the weather in Paris?")]
        reply = oc.send(client, history, model="gpt-4.1", tools=[WEATHER_TOOL])
        assert reply.tool_calls == (
            ToolCall(id="call_000000000000000000000001", name="get_weather", arguments={"city": "Paris"}),
        )
        history += [
            reply,
            ChatMessage(role="tool", tool_call_id=reply.tool_calls[0].id, content='{"temp":22}'),
        ]
        final = oc.send(client, history, model="gpt-4.1", tools=[WEATHER_TOOL])
        assert final == ChatMessage(role="assistant", content="It is 22 °C and sunny in Paris.")
        assert server.received[1]["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "call_000000000000000000000001",
            "content": '{"temp":22}',
        }
        # An interrupted history is repaired before it is sent: the server sees a valid body.
        interrupted = [*history[:2], ChatMessage(role="user", content="never mind")]
        assert oc.send(client, interrupted, model="gpt-4.1").tool_calls
        assert server.statuses == [200, 200, 200]
        # The server does answer 400 for a body check() rejects, in OpenAI's words.
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(
                model="gpt-4.1",
                messages=[
                    {"role": "user", "content": "hi"},
                    {"role": "tool", "tool_call_id": "x", "content": "y"},
                ],
            )
        assert "preceeding message with 'tool_calls'" in str(info.value)


def test_send_async_with_async_openai() -> None:
    server = ChatServer(PROVIDER, weather_reply(lambda n: f"call_{n}"))

    async def run() -> ChatMessage:
        client = openai.AsyncOpenAI(api_key="test", base_url=server.base_url, max_retries=0)
        try:
            return await oc.send_async(client, [ChatMessage(role="user", content="Paris?")], model="gpt-4.1")
        finally:
            await client.close()

    with chat_server(server):
        reply = asyncio.run(run())
    assert reply.tool_calls[0].id == "call_1" and server.statuses == [200]


def test_body_is_not_shared_with_the_input() -> None:
    history = screenshot_history()
    before = copy.deepcopy([asdict(m) for m in history])
    oc.to_request(history, model="m")
    assert [asdict(m) for m in history] == before


# ------------------------------------------------------------------------------------------- arguments

_JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@examples(200)
@given(st.dictionaries(st.text(max_size=8), _JSON_SCALARS | _JSON_VALUES, max_size=4))
def test_arguments_text_is_the_bytes_of_compact_json_dumps(arguments: dict[str, Any]) -> None:
    # The reused C encoder and its pure-Python fallback both write exactly what json.dumps writes.
    expected = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    call = ToolCall(id="c", name="s", arguments=arguments)
    assert arguments_text(arguments) == arguments_json(call) == expected
    body = oc.to_request([ChatMessage(role="assistant", tool_calls=(call,))], model="m")
    assert body["messages"][0]["tool_calls"][0]["function"]["arguments"] == expected
    with patch.object(base, "_c_encoder", None):
        assert arguments_text(arguments) == expected


def test_arguments_text_writes_nested_values_and_keeps_broken_text_verbatim() -> None:
    nested = {"a": [1, {"b": None}], "c": 1.5, "d": "é\n"}
    assert arguments_text(nested) == '{"a":[1,{"b":null}],"c":1.5,"d":"é\\n"}'
    assert arguments_text({"q": "x", "n": -3, "ok": True, "none": None}) == '{"q":"x","n":-3,"ok":true,"none":null}'
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        arguments_text({"q": object()})
    assert arguments_text('{"q": "cut') == '{"q": "cut'


# Found by corrupting real bodies (tests/providers/test_matrix.py): parts of a known type with the wrong field.
@pytest.mark.parametrize(
    ("part", "path"),
    [
        ({"type": "text", "text": {}}, "messages[0].content[0].text"),
        ({"type": "refusal", "refusal": None}, "messages[0].content[0].refusal"),
        ({"type": "image_url", "image_url": []}, "messages[0].content[0].image_url"),
        ({"type": "image_url", "image_url": {"detail": "low"}}, "messages[0].content[0].image_url"),
        ({"type": "image_url", "image_url": "https://example.com/cat.png"}, "messages[0].content[0].image_url"),
    ],
)
def test_a_malformed_part_is_reported_where_it_is_and_read_as_a_located_error(part: dict[str, Any],
                                                                              path: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": [part]}]}
    assert [(p.code, p.path) for p in oc.check(body)] == [("SHAPE", path)]
    if part["type"] == "image_url" and isinstance(part["image_url"], str):
        return  # the reader takes a bare URL string (Mistral's form); OpenAI's API does not
    with pytest.raises(ReadError) as info:
        oc.from_request(body)
    assert info.value.path == path


def test_mistral_takes_an_image_url_as_a_string_openai_does_not() -> None:
    from chatmend.providers import mistral

    part = {"type": "image_url", "image_url": "https://example.com/cat.png"}
    body = {"model": "m", "messages": [{"role": "user", "content": [part]}]}
    assert mistral.check(body) == []
    assert [p.code for p in oc.check(body)] == ["SHAPE"]
    # the bare string is written back as one (#22: lossless)
    image = ImagePart(url=part["image_url"], provider_data={"mistral": {"form": {"image_url": "string"}}})
    assert mistral.from_request(body) == [ChatMessage(role="user", content=(image,))]
    assert mistral.repair_body(body).body == body


@pytest.mark.parametrize(("name", "image"), [("openai_chat", {"url": ""}), ("openrouter", {"url": "", "detail": "low"}),
                                           ("mistral", ""), ("mistral", {"url": ""})])
def test_an_empty_image_url_is_a_problem_check_reports_where_reading_fails(name: str, image: Any) -> None:
    # Found by corrupting bodies (test_matrix): `check` found nothing, yet reading refused the empty URL.
    from chatmend import providers

    provider = providers.get(name)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                       {"role": "user", "content": [{"type": "image_url", "image_url": image}]}]}
    path = "messages[1].content[0].image_url" + (".url" if isinstance(image, dict) else "")
    assert [(p.code, p.path) for p in provider.check(body)] == [("SHAPE", path)]
    assert "Invalid image URL" in provider.check(body)[0].message
    with pytest.raises(ReadError) as info:
        provider.from_request(body)
    assert info.value.path == path


@pytest.mark.parametrize("kind", ["", 5])
def test_a_call_whose_type_is_empty_or_not_a_string_is_a_problem_and_a_located_read_error(kind: Any) -> None:
    # Found by corrupting bodies (test_matrix): an empty type was read as a call named "" (a pydantic error).
    call = {"id": "call_1", "type": kind, "function": {"name": "search", "arguments": "{}"}}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                       {"role": "assistant", "tool_calls": [call]},
                                       {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]}
    assert ("SHAPE", "messages[1].tool_calls[0].type") in [(p.code, p.path) for p in oc.check(body)]
    with pytest.raises(ReadError) as info:
        oc.from_request(body)
    assert info.value.path == "messages[1].tool_calls[0].type"


def test_a_call_with_an_empty_name_is_a_located_error_not_a_crash() -> None:
    # Found by corrupting replies (test_matrix): the neutral model requires a name; pydantic's own error leaked.
    call = {"id": "call_1", "type": "function", "function": {"name": "", "arguments": "{}"}}
    with pytest.raises(ReadError) as info:
        oc.from_response(completion("m", {"role": "assistant", "content": None, "tool_calls": [call]}, 1))
    assert info.value.path == "choices[0].message.tool_calls[0]"
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                       {"role": "assistant", "tool_calls": [call]}]}
    assert [(p.code, p.path) for p in oc.check(body)] == [("SHAPE", "messages[1].tool_calls[0]")]
    with pytest.raises(ReadError) as info:
        oc.from_request(body)
    assert info.value.path == "messages[1].tool_calls[0]"


@pytest.mark.parametrize(("call", "path", "code", "reason"), [
    ({"id": 5, "type": "function", "function": {"name": "f", "arguments": "{}"}},
     "messages[1].tool_calls[0].id", "SHAPE", "'id' must be a string, got int"),
    ({"id": "c1", "type": "function", "function": {"name": "f", "arguments": [1, 2]}},
     "messages[1].tool_calls[0].function.arguments", "OC6", "'arguments' must be JSON text (or an object), got list"),
])
def test_a_call_id_or_arguments_of_another_type_is_reported_and_a_located_read_error(
        call: dict[str, Any], path: str, code: str, reason: str) -> None:
    # read leniently, the id 5 became "" and the arguments [1, 2] became {}: both lost
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"},
                                       {"role": "assistant", "content": None, "tool_calls": [call]}]}
    assert (code, path) in [(p.code, p.path) for p in oc.check(body)]
    with pytest.raises(ReadError) as info:
        oc.from_request(body)
    assert (info.value.path, info.value.reason) == (path, reason)


def _user_parts(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": list(parts)}]}


def test_an_empty_part_type_is_its_invalid_value_400() -> None:
    # OpenAI answers `Invalid value: 'image'. Supported values are: ...` with param `messages[0].content[1].type`
    # (docs/rules.md evidence in the adapter: one list for every role, audio and file included).
    body = _user_parts({"type": "text", "text": "hi"}, {"type": ""})
    problems = oc.check(body)
    assert [(p.code, p.path) for p in problems] == [("SHAPE", "messages[0].content[1].type")]
    assert problems[0].message == ("Invalid value: ''. Supported values are: 'text', 'image_url', "
                                   "'input_audio', 'refusal', 'audio', and 'file'.")


@pytest.mark.parametrize("kind", ["foo", "thinking", "input_text", "video_url"])
def test_a_part_type_not_known_here_passes_check_and_is_kept_verbatim(kind: str) -> None:
    # #22: providers add part types every month; one chatmend does not know is theirs to judge, and is kept
    part = {"type": kind, kind: {"x": [1]}}
    body = _user_parts({"type": "text", "text": "hi"}, part)
    assert oc.check(body) == []
    assert oc.from_request(body)[0].content[1] == NativePart(provider="openai_chat", data=part)
    assert oc.repair_body(body).body == body


def test_kimi_reports_only_an_empty_part_type_and_mistral_its_chunk_types() -> None:
    from chatmend.providers import kimi, mistral

    # Kimi's list of part types (and its words for others) is not known: only an empty type is reported.
    assert kimi.check(_user_parts({"type": "video_url", "video_url": {"url": "ms://f"}})) == []
    assert [(p.code, p.path, p.message) for p in kimi.check(_user_parts({"type": ""}))] == [
        ("SHAPE", "messages[0].content[0].type", "unknown content part type ''")]
    # mistral-common's converter: `ValueError: 'foo' is not a valid ChunkTypes`; its own chunk types pass.
    assert [(p.code, p.path, p.message) for p in mistral.check(_user_parts({"type": "foo"}))] == [
        ("SHAPE", "messages[0].content[0].type", "'foo' is not a valid ChunkTypes")]
    audio = {"type": "input_audio", "input_audio": "UklG"}
    assert mistral.check(_user_parts({"type": "text", "text": "hi"}, audio)) == []
    # ... and read, kept verbatim (#22: nothing is refused)
    assert mistral.from_request(_user_parts({"type": "foo"}))[0].content == (
        NativePart(provider="mistral", data={"type": "foo"}),)
