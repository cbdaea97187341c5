"""Kimi: functions.NAME:IDX ids, reasoning_content, named results, KI1-KI4, and a local SDK round trip."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import openai
import pytest
from hypothesis import given
from openai.types.chat import ChatCompletion

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall, repair_history
from chatmend.exceptions import Problem
from chatmend.providers import kimi
from chatmend.providers.kimi import PROVIDER
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

EXAMPLE = Path(__file__).parents[2] / "examples" / "requests" / "kimi.json"
KIMI_EXTRA = {"assistant": {"reasoning_content"}, "tool": {"name"}}
THINKING = {"type": "enabled"}
WIRE_ID = re.compile(r"functions\.(.+):(\d+)")


def kimi_history() -> list[ChatMessage]:
    """Two replies from Kimi, each restarting its ids at 0, the second with a screenshot result."""
    return [
        ChatMessage(role="user", content="Open the dashboard and search the logs."),
        ChatMessage(
            role="assistant",
            content=(ThinkingPart(text="Search first.", provider="kimi"),),
            tool_calls=(ToolCall(id="functions.search:0", name="search", arguments={"q": "error"}),),
        ),
        ChatMessage(role="tool", tool_call_id="functions.search:0", tool_name="search", content="3 hits"),
        ChatMessage(
            role="assistant",
            content=(ThinkingPart(text="Now look.", provider="kimi"), TextPart(text="Taking a screenshot.")),
            tool_calls=(
                ToolCall(id="functions.screenshot:0", name="screenshot", arguments={}),
                ToolCall(id="functions.search:0", name="search", arguments='{"q": "warn'),
            ),
        ),
        ChatMessage(
            role="tool",
            tool_call_id="functions.screenshot:0",
            content=(TextPart(text="1280x800"), ImagePart(media_type="image/png", data=PNG)),
        ),
        ChatMessage(role="tool", tool_call_id="functions.search:0", content="timeout", is_error=True),
    ]


def test_exact_body_numbers_calls_across_the_history() -> None:
    body = kimi.to_request(kimi_history(), model="kimi-k2.5", thinking=THINKING)
    assert body == {
        "model": "kimi-k2.5",
        "messages": [
            {"role": "user", "content": "Open the dashboard and search the logs."},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "Search first.",
                "tool_calls": [
                    {
                        "id": "functions.search:0",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"q":"error"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "functions.search:0", "name": "search", "content": "3 hits"},
            {
                "role": "assistant",
                "content": "Taking a screenshot.",
                "reasoning_content": "Now look.",
                "tool_calls": [
                    {
                        "id": "functions.screenshot:1",
                        "type": "function",
                        "function": {"name": "screenshot", "arguments": "{}"},
                    },
                    {
                        "id": "functions.search:2",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"q": "warn'},
                    },
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "functions.screenshot:1",
                "name": "screenshot",
                "content": "1280x800",
            },
            {
                "role": "tool",
                "tool_call_id": "functions.search:2",
                "name": "search",
                "content": "Error: timeout",
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Images from tool result functions.screenshot:1:"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                ],
            },
        ],
        "thinking": THINKING,
    }
    assert kimi.check(body) == []


def test_foreign_history_gets_kimi_ids_and_thinking_text_only() -> None:
    history = [
        ChatMessage(role="user", content="go"),
        ChatMessage(
            role="assistant",
            content=(ThinkingPart(text="plan", signature="EqQBsig==", provider="anthropic"),),
            tool_calls=(ToolCall(id="toolu_01M8nJQQMxqpv1VaPYuJKT4j", name="read_file"),),
        ),
        ChatMessage(role="tool", tool_call_id="toolu_01M8nJQQMxqpv1VaPYuJKT4j", content="text"),
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="call_abc", name="read_file"),)),
        ChatMessage(role="tool", tool_call_id="call_abc", content="more"),
        ChatMessage(role="assistant", content=(ThinkingPart(redacted=True, data="opaque", provider="anthropic"),)),
    ]
    messages = kimi.to_request(history, model="kimi-k2.5")["messages"]
    assert [m.get("reasoning_content") for m in messages] == [None, "plan", None, "", None]
    assert [m["tool_calls"][0]["id"] for m in messages if m.get("tool_calls")] == [
        "functions.read_file:0",
        "functions.read_file:1",
    ]
    assert "EqQBsig==" not in json.dumps(messages) and "opaque" not in json.dumps(messages)


@examples(200)
@given(messy_histories())
def test_messy_histories_give_valid_kimi_bodies(history: list[ChatMessage]) -> None:
    body = sendable_body(kimi, history, model="kimi-k2.5", tools=[WEATHER_TOOL], thinking=THINKING)
    assert kimi.check(body) == []
    sdk_validate(body, extra=KIMI_EXTRA)
    names: dict[str, str] = {}
    for message in body["messages"]:
        for call in message.get("tool_calls", []):
            match = WIRE_ID.fullmatch(call["id"])
            assert match and match[1] == call["function"]["name"] and int(match[2]) == len(names)
            names[call["id"]] = call["function"]["name"]
        if message.get("tool_calls"):
            assert isinstance(message["reasoning_content"], str)
        if message["role"] == "tool":
            assert message["name"] == names[message["tool_call_id"]]
    dumped = json.dumps(body, ensure_ascii=False)
    texts, images = texts_and_images(repair_history(history).messages)
    assert all(json.dumps(t, ensure_ascii=False)[1:-1] in dumped for t in texts)
    assert all(i in dumped for i in images)
    read_texts, read_images = texts_and_images(kimi.from_request(body))
    assert all(t in "\n".join(read_texts) for t in texts) and sorted(read_images) == sorted(images)


@examples(100)
@given(messy_histories())
def test_wire_ids_are_prefix_stable(history: list[ChatMessage]) -> None:
    whole = body_or_none(kimi, history, model="m")
    full = whole["messages"] if whole else []
    for i, message in enumerate(history):
        shorter = body_or_none(kimi, history[:i], model="m")  # None: nothing to send yet
        if message.role == "assistant" and not is_placeholder(message) and shorter is not None:
            prefix = shorter["messages"]
            assert full[: len(prefix)] == prefix


# ------------------------------------------------------------------------------------------ fault injection


def valid_body() -> dict[str, Any]:
    return kimi.to_request(kimi_history()[:3], model="kimi-k2.5", thinking=THINKING)


def _drop_result(b: dict[str, Any]) -> None:
    del b["messages"][2]


def _no_reasoning(b: dict[str, Any]) -> None:
    del b["messages"][1]["reasoning_content"]


def _empty_assistant(b: dict[str, Any]) -> None:
    b["messages"].append({"role": "assistant", "content": ""})


def _tool_first(b: dict[str, Any]) -> None:
    b["messages"].insert(0, {"role": "tool", "tool_call_id": "functions.search:0", "content": "x"})


def _unknown_id(b: dict[str, Any]) -> None:
    b["messages"][2]["tool_call_id"] = "functions.search:9"


def _duplicate_result(b: dict[str, Any]) -> None:
    b["messages"].append(dict(b["messages"][2]))


def _object_arguments(b: dict[str, Any]) -> None:
    b["messages"][1]["tool_calls"][0]["function"]["arguments"] = {"q": "error"}


def _image_in_tool(b: dict[str, Any]) -> None:
    b["messages"][2]["content"] = [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]


def _forced_tool(b: dict[str, Any]) -> None:
    b["tool_choice"] = {"type": "function", "function": {"name": "search"}}


def _required_tool(b: dict[str, Any]) -> None:
    b["tool_choice"] = "required"


def _own_temperature(b: dict[str, Any]) -> None:
    b["temperature"] = 0.3


FAULTS = [
    ("KI1", "messages[1].role", _drop_result),
    ("KI2", "messages[1].reasoning_content", _no_reasoning),
    ("KI3", "messages[3].content", _empty_assistant),
    ("OC2", "messages[0].role", _tool_first),
    ("OC3", "messages[2].tool_call_id", _unknown_id),
    ("OC4", "messages[3].tool_call_id", _duplicate_result),
    ("OC6", "messages[1].tool_calls[0].function.arguments", _object_arguments),
    ("OC7", "messages[2].content[0]", _image_in_tool),
    ("KI4", "tool_choice", _forced_tool),
    ("KI4", "tool_choice", _required_tool),
    ("KI4", "temperature", _own_temperature),
]


@pytest.mark.parametrize(("code", "path", "breaks"), FAULTS, ids=[f"{c}-{f.__name__}" for c, _, f in FAULTS])
def test_each_rule_is_reported(code: str, path: str, breaks: Any) -> None:
    problems = problems_after(PROVIDER, valid_body(), breaks)
    assert (code, path) in [(p.code, p.path) for p in problems], problems


def test_kimi_wording_and_rules_that_depend_on_options() -> None:
    body = valid_body()
    _drop_result(body)
    assert kimi.check(body)[0].message.startswith("an assistant message with 'tool_calls' must be followed")
    assert kimi.check(body)[0].message.endswith("did not have response messages: functions.search:0")
    body = valid_body()
    _no_reasoning(body)
    assert kimi.check(body) == [
        Problem(
            "KI2",
            "messages[1].reasoning_content",
            "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
            "kimi",
        )
    ]
    del body["thinking"]  # KI2 applies only when thinking is on
    assert kimi.check(body) == []
    body["messages"][1]["tool_calls"][0]["id"] = "x" * 80  # no length limit is known for Kimi
    body["messages"][2]["tool_call_id"] = "x" * 80
    assert kimi.check(body) == []


def test_ki4_holds_only_with_thinking_on() -> None:
    body = valid_body()
    body.update(tool_choice="required", temperature=0.3)
    assert [(p.code, p.path) for p in kimi.check(body)] == [("KI4", "tool_choice"), ("KI4", "temperature")]
    assert "tool_choice" in kimi.check(body)[0].message and "1.0" in kimi.check(body)[1].message
    for allowed in ("auto", "none"):
        body.update(tool_choice=allowed, temperature=1.0)
        assert kimi.check(body) == []
    body.update(tool_choice=0, temperature="hot")  # not even a choice or a number: reported, not raised
    assert [p.code for p in kimi.check(body)] == ["KI4", "KI4"]
    body.update(thinking={"type": "disabled"}, tool_choice="required", temperature=0.3)
    assert kimi.check(body) == []  # thinking off: any tool_choice, and no fixed temperature is known for sure
    del body["thinking"]
    assert kimi.check(body) == []


@examples(100)
@given(broken_bodies(PROVIDER))
def test_check_never_raises(body: dict[str, Any]) -> None:
    assert all(p.provider == "kimi" for p in kimi.check(body))


# ---------------------------------------------------------------------------------------------------- read


def test_example_body_reads_and_rewrites_to_itself() -> None:
    body = json.loads(EXAMPLE.read_text())
    assert kimi.check(body) == []
    history = kimi.from_request(body)
    assert history[2].content == (
        ThinkingPart(
            text="I should run the failing tests first, and read the module under test at the same time.",
            provider="kimi",
        ),
        TextPart(text="Let me run the tests and look at the module."),
    )
    assert history[3].tool_name == "shell" and history[3].tool_call_id == "functions.shell:0"
    assert history[5].tool_calls[0].arguments == {"command": "git log -1 -p -- src/app/dates.py"}
    tools = [t["function"] for t in body["tools"]]
    rewritten = kimi.to_request(history, model=body["model"], tools=tools, thinking=body["thinking"], temperature=1.0)
    assert rewritten == body


def test_from_response_keeps_reasoning_as_kimi_thinking() -> None:
    message = {
        "role": "assistant",
        "content": "",
        "reasoning_content": "Need the weather.",
        "tool_calls": [
            {
                "id": "functions.get_weather:0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }
    expected = ChatMessage(
        role="assistant",
        content=(ThinkingPart(text="Need the weather.", provider="kimi"),),
        tool_calls=(ToolCall(id="functions.get_weather:0", name="get_weather", arguments={"city": "Paris"}),),
    )
    raw = completion("kimi-k2.5", message, 1)
    assert kimi.from_response(raw) == expected
    assert kimi.from_response(ChatCompletion.model_validate(raw)) == expected


# ---------------------------------------------------------------------------------------------------- send


def kimi_error(problem: Problem) -> dict[str, Any]:
    """Moonshot's 400 body."""
    return {"error": {"message": problem.message, "type": "invalid_request_error"}}


def kimi_reply(body: dict[str, Any], n: int) -> dict[str, Any]:
    """Kimi's replies carry their reasoning and restart call ids at 0."""
    message = weather_reply(lambda _n: "functions.get_weather:0")(body, n)
    return {**message, "reasoning_content": f"Step {n}."}


def test_tool_loop_through_the_openai_sdk_with_base_url() -> None:
    server = ChatServer(PROVIDER, kimi_reply, kimi_error)
    with chat_server(server), openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0) as client:
        history = [ChatMessage(role="user", content="Weather in Paris?")]
        kwargs: dict[str, Any] = {"model": "kimi-k2.5", "tools": [WEATHER_TOOL], "thinking": THINKING}
        reply = kimi.send(client, history, **kwargs)
        assert reply.content == (ThinkingPart(text="Step 1.", provider="kimi"),)
        history += [reply, ChatMessage(role="tool", tool_call_id=reply.tool_calls[0].id, content="22C")]
        final = kimi.send(client, history, **kwargs)
        assert final.content == (
            ThinkingPart(text="Step 2.", provider="kimi"),
            TextPart(text="It is 22 °C and sunny in Paris."),
        )
        sent = server.received[1]
        assert sent["thinking"] == THINKING  # an option the SDK does not name still reaches the body
        assert sent["messages"][1]["reasoning_content"] == "Step 1."
        assert sent["messages"][2] == {
            "role": "tool",
            "tool_call_id": "functions.get_weather:0",
            "name": "get_weather",
            "content": "22C",
        }
        # A second round: Kimi restarts at :0 again, the wire numbers it :1.
        history += [final, ChatMessage(role="user", content="And tomorrow?")]
        again = kimi.send(client, history, **kwargs)
        history += [again, ChatMessage(role="tool", tool_call_id=again.tool_calls[0].id, content="18C")]
        kimi.send(client, history, **kwargs)
        assert server.received[3]["messages"][-1]["tool_call_id"] == "functions.get_weather:1"
        assert server.statuses == [200, 200, 200, 200]
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(
                model="kimi-k2.5",
                messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}],
            )
        assert "with role 'assistant' must not be empty" in str(info.value)


def test_send_async() -> None:
    server = ChatServer(PROVIDER, kimi_reply, kimi_error)

    async def run() -> ChatMessage:
        client = openai.AsyncOpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        try:
            return await kimi.send_async(
                client, [ChatMessage(role="user", content="Paris?")], model="kimi-k2.5", thinking=THINKING
            )
        finally:
            await client.close()

    with chat_server(server):
        reply = asyncio.run(run())
    assert reply.tool_calls[0].id == "functions.get_weather:0"
    assert server.received[0]["thinking"] == THINKING and server.statuses == [200]
