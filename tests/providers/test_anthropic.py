"""Anthropic Messages adapter: exact bodies, SDK request types, every check rule, and the real SDK client."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic.types import MessageParam, TextBlockParam, ToolParam
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall
from chatmend.exceptions import ReadError, UnsupportedError
from chatmend.messages import Part
from chatmend.providers import anthropic as adapter
from chatmend.providers.base import sanitizing_id_maker
from chatmend.repair import MAY_HAVE_RUN_WORDING, is_placeholder
from tests.providers.common import body_or_none, drain, problems_after, sendable_body
from tests.providers.local_server import serve
from tests.strategies import PNG, examples, messy_histories

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "requests" / "anthropic.json"
MODEL = "claude-sonnet-5"
SDK_MODEL = "claude-local-test"
"""Sent through the SDK: a name it cannot list as deprecated (its warning would fail the test run)."""
THINKING = {"type": "enabled", "budget_tokens": 2000}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def user(content: Any) -> ChatMessage:
    return ChatMessage(role="user", content=content)


def assistant(content: Any = "", *calls: ToolCall) -> ChatMessage:
    return ChatMessage(role="assistant", content=content, tool_calls=calls)


def tool(call_id: str, content: Any, *, name: str | None = None, error: bool = False) -> ChatMessage:
    return ChatMessage(role="tool", tool_call_id=call_id, tool_name=name, content=content, is_error=error)


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def signed(text: str, signature: str) -> ThinkingPart:
    return ThinkingPart(text=text, signature=signature, provider="anthropic")


def body_of(history: list[ChatMessage], **options: Any) -> dict[str, Any]:
    """to_request with the test model; also asserts the body is what check() accepts."""
    body = adapter.to_request(history, model=MODEL, **options)
    assert adapter.check(body) == []
    sdk_validate(body)
    return body


# ------------------------------------------------------------------------------------------ SDK types

_MESSAGE = TypeAdapter(MessageParam)
_SYSTEM = TypeAdapter(list[TextBlockParam])
_TOOL = TypeAdapter(ToolParam)


def sdk_validate(body: Mapping[str, Any]) -> None:
    """Each message, the system blocks and each tool against the anthropic SDK's request TypedDicts."""
    for message in body["messages"]:
        drain(_MESSAGE.validate_python(message))
    if "system" in body:
        drain(_SYSTEM.validate_python(body["system"]))
    for item in body.get("tools", []):
        drain(_TOOL.validate_python(item))


def test_sdk_validation_really_checks_lazy_lists() -> None:
    source = {"type": "base64", "media_type": "image/bmp", "data": "AAAA"}
    bad = {"role": "user", "content": [{"type": "image", "source": source}]}
    _MESSAGE.validate_python(bad)  # lazily accepted...
    with pytest.raises(ValueError):
        drain(_MESSAGE.validate_python(bad))  # ...and rejected once iterated


# ----------------------------------------------------------------------------------------- exact bodies

def test_ctrl_c_mid_tools() -> None:
    history = [
        ChatMessage(role="system", content="You are Claude, working in the user's terminal."),
        user("Why is the docker build so slow?"),
        assistant("Let me look at the Dockerfile and time the build.",
                  call("toolu_01XFDUDYJgAACzvnptvVoYEL", "read_file", path="Dockerfile"),
                  call("toolu_01Ld6Mgj1x3Qm4KgxJu9hY2b", "bash", command="time docker build .")),
        tool("toolu_01XFDUDYJgAACzvnptvVoYEL", "FROM python:3.12\nCOPY . /app\n"),
        user("don't run the build, it takes ages. just read the file"),
    ]
    assert body_of(history) == {
        "model": MODEL,
        "max_tokens": 4096,
        "system": [{"type": "text", "text": "You are Claude, working in the user's terminal."}],
        "messages": [
            {"role": "user", "content": "Why is the docker build so slow?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look at the Dockerfile and time the build."},
                {"type": "tool_use", "id": "toolu_01XFDUDYJgAACzvnptvVoYEL", "name": "read_file",
                 "input": {"path": "Dockerfile"}},
                {"type": "tool_use", "id": "toolu_01Ld6Mgj1x3Qm4KgxJu9hY2b", "name": "bash",
                 "input": {"command": "time docker build ."}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01XFDUDYJgAACzvnptvVoYEL",
                 "content": "FROM python:3.12\nCOPY . /app\n"},
                {"type": "tool_result", "tool_use_id": "toolu_01Ld6Mgj1x3Qm4KgxJu9hY2b",
                 "content": MAY_HAVE_RUN_WORDING.format(name="bash"), "is_error": True},
            ]},
            {"role": "user", "content": "don't run the build, it takes ages. just read the file"},
        ],
    }


def test_steer_typed_during_tools_goes_after_the_results() -> None:
    history = [
        user("Find the config."),
        assistant("", call("toolu_a", "search", q="config"), call("toolu_b", "search", q="settings")),
        user("only look in src/"),
        tool("toolu_b", "src/settings.py"),
        tool("toolu_a", "src/config.py"),
    ]
    assert body_of(history)["messages"] == [
        {"role": "user", "content": "Find the config."},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_a", "name": "search", "input": {"q": "config"}},
            {"type": "tool_use", "id": "toolu_b", "name": "search", "input": {"q": "settings"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "src/config.py"},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "src/settings.py"},
        ]},
        {"role": "user", "content": "only look in src/"},
    ]


def test_kimi_ids_repeating_every_reply() -> None:
    history = [
        user("search twice"),
        assistant("", call("functions.search:0", "search", q="a")),
        tool("functions.search:0", "A"),
        assistant("", call("functions.search:0", "search", q="b"),
                  call("functions.read_file:1", "read_file")),
        tool("functions.search:0", "B"),
        tool("functions.read_file:1", "file"),
    ]
    messages = body_of(history)["messages"]
    assert [b["id"] for m in messages if m["role"] == "assistant" for b in m["content"]] == [
        "functions_search_0",  # AN5: `.` and `:` become `_`
        "functions_search_0_1",  # the repeat became functions.search:0_1 in repair
        "functions_read_file_1",
    ]
    assert [b["tool_use_id"] for b in messages[4]["content"]] == ["functions_search_0_1", "functions_read_file_1"]


def test_ids_that_would_collide_after_replacement_stay_distinct() -> None:
    history = [user("go"), assistant("", call("a.b", "search"), call("a_b", "search"), call("a:b", "search")),
               tool("a.b", "1"), tool("a_b", "2"), tool("a:b", "3")]
    messages = body_of(history)["messages"]
    ids = [b["id"] for b in messages[1]["content"]]
    assert ids == ["a_b", "a_b_759eb6bcd5", "a_b_c3bd00e7e8"]  # first seen keeps the plain form
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ids


def test_ids_longer_than_64_are_shortened_without_collisions() -> None:
    long_a, long_b = "x" * 70, "x" * 70 + "y"
    history = [user("go"), assistant("", call(long_a, "search"), call(long_b, "search")),
               tool(long_a, "1"), tool(long_b, "2")]
    ids = [b["id"] for b in body_of(history)["messages"][1]["content"]]
    assert len(set(ids)) == 2 and all(len(i) <= 64 for i in ids)


def test_thinking_and_tool_loop() -> None:
    reply = adapter.from_response({
        "id": "msg_01", "type": "message", "role": "assistant", "model": MODEL,
        "content": [
            {"type": "thinking", "thinking": "Paris weather: call the tool.", "signature": "EqQBsig=="},
            {"type": "redacted_thinking", "data": "EmwKopaque"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_w", "name": "get_weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 9},
    })
    history = [user("Weather in Paris?"), reply, tool("toolu_w", '{"temperature": 22}')]
    body = body_of(history, tools=[WEATHER_TOOL], thinking={"type": "enabled", "budget_tokens": 8000})
    assert body["max_tokens"] == 8000 + 4096  # max_tokens must exceed the thinking budget
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert body["tools"] == [{"name": "get_weather", "description": "Current weather for a city.",
                              "input_schema": WEATHER_TOOL["parameters"]}]
    assert body["messages"][1] == {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Paris weather: call the tool.", "signature": "EqQBsig=="},
        {"type": "redacted_thinking", "data": "EmwKopaque"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_w", "name": "get_weather", "input": {"city": "Paris"}},
    ]}
    assert body["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_w", "content": '{"temperature": 22}'}]}


def test_image_tool_result_stays_inside_the_result() -> None:
    history = [
        user([TextPart(text="What does the page look like?"), ImagePart(url="https://example.com/a.png")]),
        assistant("", call("toolu_s", "screenshot")),
        tool("toolu_s", (TextPart(text="390x844"), ImagePart(media_type="image/png", data=PNG),
                         ImagePart(url=f"data:image/jpg;base64,{PNG}")), error=True),
    ]
    messages = body_of(history)["messages"]
    assert messages[0]["content"][1] == {"type": "image", "source": {"type": "url",
                                                                     "url": "https://example.com/a.png"}}
    assert messages[2] == {"role": "user", "content": [{
        "type": "tool_result", "tool_use_id": "toolu_s", "is_error": True, "content": [
            {"type": "text", "text": "390x844"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": PNG}},
        ]}]}


def test_system_option_leading_system_and_later_system() -> None:
    history = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="system", content=(TextPart(text="Use tools."), TextPart(text="  "))),
        user("hi"),
        ChatMessage(role="system", content="The user is on mobile."),
        assistant("Hello."),
    ]
    body = body_of(history, system="You are a helper.")
    assert body["system"] == [{"type": "text", "text": "You are a helper."},
                              {"type": "text", "text": "Be brief."}, {"type": "text", "text": "Use tools."}]
    assert body["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "<system>\nThe user is on mobile.\n</system>"},
        {"role": "assistant", "content": "Hello."},
    ]
    back = adapter.from_request(body)
    assert [m.role for m in back] == ["system", "system", "system", "user", "system", "assistant"]
    assert back[4].content == "The user is on mobile."


def test_system_message_with_an_image_goes_in_place() -> None:
    history = [ChatMessage(role="system", content=(TextPart(text="Logo:"), ImagePart(url="https://x/l.png"))),
               user("hi")]
    body = body_of(history)
    assert "system" not in body
    assert body["messages"][0] == {"role": "user", "content": [
        {"type": "text", "text": "<system>\nLogo:\n</system>"},
        {"type": "image", "source": {"type": "url", "url": "https://x/l.png"}}]}


def test_no_blank_text_is_ever_sent() -> None:
    history = [
        user("  "),
        user((TextPart(text=""), TextPart(text="real"), TextPart(text="\n"))),
        assistant(" \n", call("toolu_1", "search")),
        tool("toolu_1", "   "),
        tool("toolu_x", "orphan"),
        user(""),
    ]
    messages = body_of(history)["messages"]
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": "real"}]}
    assert messages[1]["content"] == [{"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}]
    assert messages[2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1"}]
    assert messages[3]["content"][0]["text"].startswith("A tool result arrived with no matching tool call")
    assert len(messages) == 4


def test_text_before_tool_use_never_after() -> None:
    history = [user("go"), assistant((TextPart(text="first"), TextPart(text="second")), call("toolu_1", "a")),
               tool("toolu_1", "ok")]
    kinds = [b["type"] for b in body_of(history)["messages"][1]["content"]]
    assert kinds == ["text", "text", "tool_use"]  # AN4


def test_arguments_that_are_not_an_object() -> None:
    history = [user("go"), assistant("", ToolCall(id="toolu_1", name="search", arguments='{"q": "cut')),
               tool("toolu_1", "x")]
    body = body_of(history)
    assert body["messages"][1]["content"][0]["input"] == {"_raw_arguments": '{"q": "cut'}
    assert adapter.from_request(body)[1].tool_calls[0].arguments == '{"q": "cut'


def test_foreign_thinking_goes_as_tagged_text_never_signed() -> None:
    history = [
        user("go"),
        assistant((ThinkingPart(text="gemini thoughts", signature="g-sig", provider="gemini"),
                   ThinkingPart(text="unknown origin", signature="sig"),
                   TextPart(text="answer"))),
    ]
    body = body_of(history)
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "<thinking>\ngemini thoughts\n</thinking>"},
        {"type": "text", "text": "<thinking>\nunknown origin\n</thinking>"},
        {"type": "text", "text": "answer"},
    ]
    back = adapter.from_request(body)[1].content
    assert back[0] == ThinkingPart(text="gemini thoughts") and back[2] == TextPart(text="answer")


def test_thinking_is_hoisted_first_and_never_last() -> None:
    history = [
        user("go"),
        assistant((TextPart(text="a"), signed("t1", "s1"), TextPart(text="b"), signed("t2", "s2"))),
        user("more"),
    ]
    content = body_of(history, thinking=THINKING)["messages"][1]["content"]
    assert [b["type"] for b in content] == ["thinking", "thinking", "text", "text"]  # AT2
    history[1] = assistant((signed("t1", "s1"), TextPart(text="a"), signed("t2", "s2")))
    content = body_of(history, thinking=THINKING)["messages"][1]["content"]
    assert [b.get("thinking", b.get("text")) for b in content] == ["t1", "a"]  # AT7: no trailing thinking


def test_thinking_only_message_merging_into_a_text_turn() -> None:
    history = [user("go"), assistant("plain"), assistant((signed("t", "s"), TextPart(text="more"))),
               user("ok")]
    messages = body_of(history, thinking=THINKING)["messages"]
    # AT2: the merged turn opens with text, so the later thinking cannot be sent.
    assert messages[2] == {"role": "assistant", "content": [{"type": "text", "text": "more"}]}


def test_thinking_off_strips_thinking_from_a_final_assistant_turn() -> None:
    history = [user("go"), assistant((signed("t", "s"), TextPart(text="done")))]
    assert body_of(history)["messages"][1]["content"] == [{"type": "text", "text": "done"}]  # AT6
    history.append(user("thanks"))
    assert body_of(history)["messages"][1]["content"][0]["type"] == "thinking"


def test_thinking_enabled_without_thinking_in_the_tool_loop_is_turned_off() -> None:
    history = [user("go"), assistant("from another model", call("toolu_1", "search")), tool("toolu_1", "x")]
    assert "thinking" not in body_of(history, thinking=THINKING)  # AT1
    history += [assistant("done"), user("again")]
    assert body_of(history, thinking=THINKING)["thinking"] == THINKING


def test_assistant_images_follow_in_a_user_message() -> None:
    image = ImagePart(media_type="image/png", data=PNG)
    history = [user("draw"), assistant((TextPart(text="here"), image), call("toolu_1", "save")),
               tool("toolu_1", "saved"), user("nice")]
    messages = body_of(history)["messages"]
    assert messages[2]["content"][0]["type"] == "tool_result"
    assert messages[3] == {"role": "user", "content": [
        {"type": "text", "text": "Images from the assistant:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}


def test_options_pass_through_and_max_tokens() -> None:
    body = body_of([user("hi")], max_tokens=100, temperature=0.2, tool_choice={"type": "auto"})
    assert body == {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
                    "temperature": 0.2, "tool_choice": {"type": "auto"}}


def test_what_cannot_be_sent_is_a_named_error() -> None:
    with pytest.raises(UnsupportedError, match="media type"):
        adapter.to_request([user((ImagePart(media_type="image/bmp", data="AAAA"),))], model=MODEL)
    with pytest.raises(UnsupportedError, match="tool name"):
        adapter.to_request([user("hi")], model=MODEL, tools=[{"name": "bad.name"}])
    with pytest.raises(UnsupportedError, match="unique"):
        adapter.to_request([user("hi")], model=MODEL, tools=[WEATHER_TOOL, WEATHER_TOOL])


# ------------------------------------------------------------------------------------------ properties

def _texts(blocks: str | list[dict[str, Any]]) -> Iterator[str]:
    """Every text of a message content, tool results' included."""
    if isinstance(blocks, str):
        yield blocks
        return
    for block in blocks:
        if block["type"] == "text":
            yield block["text"]
        elif block["type"] == "tool_result" and "content" in block:
            yield from _texts(block["content"])


@examples(200)
@given(messy_histories(), st.booleans())
def test_messy_histories_are_valid_and_stable(history: list[ChatMessage], thinking: bool) -> None:
    options: dict[str, Any] = {"thinking": THINKING} if thinking else {}
    # system text only: no messages, which to_request refuses (as the API does)
    body = sendable_body(adapter, history, model=MODEL, **options)
    assert adapter.check(body) == []
    sdk_validate(body)
    assert json.loads(json.dumps(body)) == body
    for message in body["messages"]:  # AN9: no empty message, no blank text block anywhere
        assert message["content"]
        assert all(text.strip() for text in _texts(message["content"]))
        for block in message["content"] if isinstance(message["content"], list) else []:
            wire_id = block.get("id", block.get("tool_use_id", "x"))
            assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", wire_id), wire_id  # AN5, at most 64
    # Reading the body back and writing it again gives the same messages (a fixpoint).
    again = adapter.to_request(adapter.from_request(body), model=MODEL, **options)
    assert again["messages"] == body["messages"]
    for i, message in enumerate(history):
        if message.role == "assistant" and not is_placeholder(message):
            prefix = body_or_none(adapter, history[:i], model=MODEL, **options)
            shorter = prefix["messages"] if prefix else []
            assert body["messages"][: len(shorter)] == shorter


_thinking = st.one_of(
    st.builds(signed, st.sampled_from(["", "plan", "  "]), st.sampled_from(["s1", "s2"])),
    st.just(ThinkingPart(redacted=True, data="opaque", provider="anthropic")),
    st.just(ThinkingPart(text="foreign", signature="x", provider="gemini")),
    st.just(ThinkingPart(text="", signature="x", provider="anthropic")),
)
_parts = st.one_of(_thinking, st.builds(TextPart, text=st.sampled_from(["a", " ", "b"])),
                   st.just(ImagePart(media_type="image/png", data=PNG)))


@st.composite
def thinking_histories(draw: st.DrawFn) -> list[ChatMessage]:
    """Assistant turns that split, merge and mix thinking in every order, with system and image detours."""
    history: list[ChatMessage] = []
    for n in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["user", "assistant", "assistant", "calls", "system", "blank"]))
        if kind == "user":
            history.append(user(draw(st.sampled_from(["go", "more"]))))
        elif kind == "blank":
            history.append(user(" "))
        elif kind == "system":
            system: list[str | tuple[Part, ...]] = ["rule", (TextPart(text="see"), ImagePart(url="https://x/y.png"))]
            history.append(ChatMessage(role="system", content=draw(st.sampled_from(system))))
        else:
            parts = tuple(draw(st.lists(_parts, max_size=4)))
            calls = (call(f"c{n}", "search"),) if kind == "calls" else ()
            message = assistant(parts, *calls)
            if not is_placeholder(message):
                history.append(message)
                history.extend(tool(c.id, "r") for c in calls if draw(st.booleans()))
    return history


@examples(300)
@given(thinking_histories(), st.booleans())
def test_thinking_rules_hold_on_merged_turns(history: list[ChatMessage], thinking: bool) -> None:
    options: dict[str, Any] = {"thinking": THINKING} if thinking else {}
    # system text only: no messages, which to_request refuses (as the API does)
    body = sendable_body(adapter, history, model=MODEL, **options)
    assert adapter.check(body) == []
    sdk_validate(body)
    again = adapter.to_request(adapter.from_request(body), model=MODEL, **options)
    assert again["messages"] == body["messages"]
    for i, message in enumerate(history):
        if message.role == "assistant":
            prefix = body_or_none(adapter, history[:i], model=MODEL, **options)
            shorter = prefix["messages"] if prefix else []
            assert body["messages"][: len(shorter)] == shorter


# ------------------------------------------------------------------------------------------ reading

def test_example_request_reads_and_writes_back_identically() -> None:
    body = json.loads(EXAMPLE.read_text())
    assert adapter.check(body) == []
    sdk_validate(body)
    history = adapter.from_request(body)
    assert [m.role for m in history] == ["system", "user", "assistant", "tool", "tool", "user", "assistant",
                                         "tool"]
    assert history[3].tool_name == "screenshot" and isinstance(history[3].content[1], ImagePart)
    assert history[4].is_error
    thinking = history[6].content[1]
    assert isinstance(thinking, ThinkingPart) and thinking.redacted and thinking.provider == "anthropic"
    tools = [{"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}
             for t in body["tools"]]
    assert adapter.to_request(history, model=body["model"], max_tokens=body["max_tokens"],
                              thinking=body["thinking"], tools=tools) == body


def test_from_request_takes_a_message_list_and_string_system() -> None:
    messages = [{"role": "user", "content": "hi"}]
    body = {"model": MODEL, "max_tokens": 10, "system": "Be brief.", "messages": messages}
    assert adapter.from_request(body) == [ChatMessage(role="system", content="Be brief."), user("hi")]
    assert adapter.from_request(messages) == [user("hi")]


@pytest.mark.parametrize("data", [
    {"messages": "nope"},
    [{"role": "robot", "content": "x"}],
    [{"role": "user", "content": [{"type": "document", "source": {}}]}],
    [{"role": "user", "content": [{"type": "tool_result"}]}],
    [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "input": {}}]}],
    "text",
])
def test_from_request_errors_are_located(data: Any) -> None:
    with pytest.raises(ReadError, match="anthropic"):
        adapter.from_request(data)


def test_an_image_media_type_that_is_not_a_string_is_reported_and_a_located_read_error() -> None:
    # read as text, ["image/png"] would have been the media type "['image/png']"
    image = {"type": "image", "source": {"type": "base64", "media_type": ["image/png"], "data": "AAAA"}}
    body = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": [image]}]}
    path = "messages[0].content[0].source.media_type"
    assert path in [p.path for p in adapter.check(body)]
    with pytest.raises(ReadError) as info:
        adapter.from_request(body)
    assert info.value.path == path and "'media_type' must be a string, got list" in str(info.value)


def test_an_empty_image_url_is_reported_where_reading_refuses_it() -> None:
    # check found nothing while reading refused it (the corrupted-body property of test_matrix, widened)
    image = {"type": "image", "source": {"type": "url", "url": ""}}
    body = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": [image]}]}
    assert [(p.code, p.path) for p in adapter.check(body)] == [("SHAPE", "messages[0].content[0].source.url")]
    with pytest.raises(ReadError) as info:
        adapter.from_request(body)
    assert info.value.path == "messages[0].content[0]" and "'url' is empty" in str(info.value)


@pytest.mark.parametrize(("body", "path"), [
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": [{"type": "image", "source": {}}]}]},
     "messages[1].content[0].source"),
    ({"system": [{"type": "text", "text": "a"}, 5], "messages": []}, "system[1]"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "a"}, 5]}]}]},
     "messages[1].content[0].content[1]"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "text", "text": "a"}, "foo"]}]}, "messages[1].content[1]"),
    ({"messages": [{"role": "system", "content": [{"type": "text", "text": "a"}, None]}]},
     "messages[0].content[1]"),
])
def test_a_read_error_inside_a_message_says_which_message_and_block(body: dict[str, Any], path: str) -> None:
    # (a block's own path replaced the message's before: `content[0].source`, in which message?)
    with pytest.raises(ReadError) as info:
        adapter.from_request(body)
    assert info.value.path == path
    assert str(info.value).startswith(f"anthropic: {path}: ")


def _reply_json(content: list[dict[str, Any]], n: int = 1) -> dict[str, Any]:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return {"id": f"msg_{n:02d}", "type": "message", "role": "assistant", "model": MODEL, "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def test_from_response_dict_and_sdk_object() -> None:
    data = _reply_json([
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
    ])
    expected = ChatMessage(role="assistant", content=(
        ThinkingPart(text="hmm", signature="sig", provider="anthropic"),
        ThinkingPart(redacted=True, data="opaque", provider="anthropic"),
        TextPart(text="Let me look."),
    ), tool_calls=(ToolCall(id="toolu_1", name="read_file", arguments={"path": "a.py"}),))
    assert adapter.from_response(data) == expected
    assert adapter.from_response(anthropic.types.Message.model_validate(data)) == expected


def test_from_response_errors() -> None:
    with pytest.raises(ReadError, match="error"):
        adapter.from_response({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
    with pytest.raises(ReadError, match="content"):
        adapter.from_response({"type": "message"})
    with pytest.raises(ReadError):
        adapter.from_response(42)


# ------------------------------------------------------------------------------------------ fault injection

def _valid_body() -> dict[str, Any]:
    body: dict[str, Any] = json.loads(EXAMPLE.read_text())
    return body


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(body: dict[str, Any]) -> None:
        *keys, last = path.split(".")
        node: Any = body
        for key in keys:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value
    return apply


def _insert(index: int, message: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda body: body["messages"].insert(index, message)


def _drop_result(body: dict[str, Any]) -> None:
    del body["messages"][2]["content"][1]


def _turn_between_call_and_result(body: dict[str, Any]) -> None:
    body["messages"][2:2] = [{"role": "user", "content": "wait"}, {"role": "assistant", "content": "ok"}]


def _text_first_in_results(body: dict[str, Any]) -> None:
    body["messages"][2]["content"].insert(0, {"type": "text", "text": "before"})


def _text_after_tool_use(body: dict[str, Any]) -> None:
    body["messages"][1]["content"].append({"type": "text", "text": "after"})


def _duplicate_result(body: dict[str, Any]) -> None:
    body["messages"][2]["content"].append(copy.deepcopy(body["messages"][2]["content"][1]))


def _thinking_last(body: dict[str, Any]) -> None:
    body["messages"].append({"role": "assistant", "content": [
        {"type": "text", "text": "x"}, {"type": "thinking", "thinking": "t", "signature": "s"}]})


def _no_thinking_in_loop(body: dict[str, Any]) -> None:
    del body["messages"][4]["content"][0:2]


def _final_thinking_without_thinking_on(body: dict[str, Any]) -> None:
    del body["thinking"]
    body["messages"].append({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "x"}]})


FAULTS: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("AN1", _drop_result),
    ("AN1", lambda body: body["messages"].pop()),  # the last call left without its result
    ("AN2", _insert(0, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nope"}]})),
    ("AN2", _turn_between_call_and_result),
    ("AN3", _text_first_in_results),
    ("AN4", _text_after_tool_use),
    ("AN5", _set("messages.1.content.2.id", "functions.search:0")),
    ("AN6", _set("messages.1.content.3.id", "toolu_01JCuVTkQxVB3cCmFWx52adJ")),  # twice in one turn
    ("AN7", _duplicate_result),
    ("AN8", _set("tools.0.name", "take.screenshot")),
    ("AN8", _set("tools.1.name", "screenshot")),
    ("AN9", _set("messages.3.content", "")),
    ("AN9", _set("messages.3.content", "  \n")),
    ("AN9", _set("messages.0.content.0.text", "")),
    ("AN9", _set("messages.2.content.0.content.0.text", " ")),
    ("AN9", _set("system.0.text", "")),
    ("AT1", _no_thinking_in_loop),
    ("AT2", _set("messages.1.content", [
        {"type": "text", "text": "x"}, {"type": "thinking", "thinking": "t", "signature": "s"},
        {"type": "tool_use", "id": "toolu_01JCuVTkQxVB3cCmFWx52adJ", "name": "screenshot", "input": {}},
        {"type": "tool_use", "id": "toolu_019aQ2mZk1LrT7bX4pW0sYdE", "name": "read_file", "input": {}}])),
    ("AT2", _insert(1, {"role": "assistant", "content": "merged before the thinking"})),
    ("AT4", _set("messages.1.content.0", {"type": "thinking", "thinking": "no signature"})),
    ("AT6", _final_thinking_without_thinking_on),
    ("AT7", _thinking_last),
    ("SHAPE", _set("messages.1.content.2.input", '{"url": "x"}')),  # input must be an object
    ("SHAPE", _set("messages.1.content.1", {"type": "image", "source": {"type": "url", "url": "https://x"}})),
    ("SHAPE", _set("messages.2.content.0.content.1.source.media_type", "image/bmp")),
    ("SHAPE", _set("messages.0.content.1.source", {"type": "path", "path": "/tmp/a.png"})),
    ("SHAPE", _set("system", [{"type": "image", "source": {"type": "url", "url": "https://x"}}])),
    ("SHAPE", _set("messages.2.content.0.content.1", {"type": "tool_use", "id": "a", "name": "b"})),
    ("SHAPE", _set("messages.0.role", "tool")),
    ("SHAPE", _set("max_tokens", "many")),
    ("SHAPE", _set("messages", {"role": "user"})),
    ("SHAPE", _set("messages.3", "not a message")),
]


@pytest.mark.parametrize(("code", "fault"), FAULTS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(FAULTS)])
def test_each_rule_is_reported_with_its_code(code: str, fault: Callable[[dict[str, Any]], None]) -> None:
    problems = problems_after(adapter.PROVIDER, _valid_body(), fault)
    assert code in {p.code for p in problems}, problems


def test_problem_wording_and_paths() -> None:
    body = _valid_body()
    _drop_result(body)
    (problem,) = adapter.check(body)
    assert problem.path == "messages[2]"
    assert problem.message == (
        "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_019aQ2mZk1LrT7bX4pW0sYdE. Each `tool_use` block must have a corresponding `tool_result` "
        "block in the next message.")
    body = _valid_body()
    _set("messages.1.content.2.id", "a.b")(body)
    assert any(p.path == "messages[1].content[2].id" and p.message.endswith(
        "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'") for p in adapter.check(body))


@pytest.mark.parametrize("body", [
    None, [], "x", {"messages": None}, {"messages": [None, 3, {"role": "user"}]},
    {"model": 1, "max_tokens": 1, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": 3, "content": 5}]}]},
    {"model": "m", "max_tokens": 1, "tools": "x", "system": 3, "messages": []},
])
def test_check_never_raises(body: Any) -> None:
    assert adapter.check(body)


# ------------------------------------------------------------------------------------------ the real client

class MessagesServer:
    """A local /v1/messages: Anthropic's 400 JSON when `check()` finds problems, else a scripted Message."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.base_url = ""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.received.append(body)
        problems = adapter.check(body)
        if problems:
            return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": problems[0].message},
                         "request_id": "req_local"}
        last = body["messages"][-1]["content"]
        if isinstance(last, list) and last and last[0]["type"] == "tool_result":
            return 200, _reply_json([{"type": "text", "text": "It is 22 °C and sunny in Paris."}],
                                    len(self.received))
        n = len(self.received)
        return 200, _reply_json([
            {"type": "thinking", "thinking": "Need the weather tool.", "signature": f"sig{n}"},
            {"type": "tool_use", "id": f"toolu_0{len(self.received)}", "name": "get_weather",
             "input": {"city": "Paris"}},
        ], len(self.received))


@contextmanager
def messages_server() -> Iterator[MessagesServer]:
    """Serve a MessagesServer on 127.0.0.1 (a free port) in a thread for the duration of the block."""
    server = MessagesServer()

    def route(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path.rstrip("/").endswith("/v1/messages"):
            return server.answer(body)
        return 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}

    with serve(route, server.statuses) as root:
        server.base_url = root
        yield server


def _run_tool(message: ChatMessage) -> list[ChatMessage]:
    return [tool(c.id, '{"temperature": 22, "sky": "sunny"}', name=c.name) for c in message.tool_calls]


def test_sdk_client_full_tool_loop() -> None:
    with messages_server() as server, anthropic.Anthropic(api_key="test", base_url=server.base_url,
                                                          max_retries=0) as client:
        history = [user("What's the weather in Paris?")]
        options: dict[str, Any] = {"model": SDK_MODEL, "tools": [WEATHER_TOOL], "system": "Be brief.",
                                   "thinking": {"type": "enabled", "budget_tokens": 1024}}
        reply = adapter.send(client, history, **options)
        assert reply.tool_calls[0].name == "get_weather"
        assert reply.content == (ThinkingPart(text="Need the weather tool.", signature="sig1",
                                              provider="anthropic"),)
        history += [reply, *_run_tool(reply)]
        final = adapter.send(client, history, **options)
        assert final.content == (TextPart(text="It is 22 °C and sunny in Paris."),)
        assert server.statuses == [200, 200]
        sent = server.received[1]
        assert sent["thinking"] == options["thinking"]  # AT1: the loop's thinking went back
        assert sent["messages"][1]["content"][0] == {"type": "thinking", "thinking": "Need the weather tool.",
                                                     "signature": "sig1"}
        # A Ctrl-C mid-loop: no result; the user types on. The adapter answers the call as interrupted.
        history += [user("And in Lyon?")]
        reply = adapter.send(client, history, **options)
        history += [reply, user("never mind")]
        adapter.send(client, history, **options)
        assert server.statuses == [200, 200, 200, 200]
        # The server's 400 reaches the SDK as BadRequestError with Anthropic's wording.
        broken = adapter.to_request(history, **options)
        del broken["messages"][-2]
        with pytest.raises(anthropic.BadRequestError, match="`tool_use` ids were found without"):
            client.messages.create(**broken)


def test_sdk_async_client_send() -> None:
    async def main(base_url: str) -> ChatMessage:
        async with anthropic.AsyncAnthropic(api_key="test", base_url=base_url, max_retries=0) as client:
            history = [user("Weather?")]
            reply = await adapter.send_async(client, history, model=SDK_MODEL, tools=[WEATHER_TOOL])
            history += [reply, *_run_tool(reply)]
            return await adapter.send_async(client, history, model=SDK_MODEL, tools=[WEATHER_TOOL])

    with messages_server() as server:
        final = asyncio.run(main(server.base_url))
    assert final.content == (TextPart(text="It is 22 °C and sunny in Paris."),)
    assert server.statuses == [200, 200]
    # Thinking off: the reply's thinking is kept mid-loop (the tool loop needs it) and the body passes.
    assert server.received[1]["messages"][1]["content"][0]["type"] == "thinking"


def test_registry_and_module_aliases() -> None:
    from chatmend import providers

    assert providers.get("anthropic") is adapter.PROVIDER
    assert adapter.check == adapter.PROVIDER.check
    assert (adapter.PROVIDER.id_max_length, adapter.PROVIDER.id_alphabet) == (64, "a-zA-Z0-9_-")  # AN5


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a JSON value."""
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


_BODY_PATHS = [p for p in _paths(json.loads(EXAMPLE.read_text())) if p]
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                  max_size=3), max_leaves=6)


@examples(300)
@given(st.lists(st.tuples(st.sampled_from(_BODY_PATHS), _JSON), min_size=1, max_size=3))
def test_check_never_raises_on_any_corruption(edits: list[tuple[tuple[Any, ...], Any]]) -> None:
    body = _valid_body()
    for path, value in edits:
        node: Any = body
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    problems = adapter.check(body)
    assert all(p.code and p.message for p in problems)


@examples(200)
@given(st.text(max_size=80), st.integers(0, 3))
def test_wire_ids_replace_each_character_outside_the_pattern(tool_id: str, attempt: int) -> None:
    # AN5: the byte-table fast path for ASCII ids agrees with the pattern, character by character.
    sanitized = re.sub(r"[^a-zA-Z0-9_-]", "_", tool_id)
    wire = sanitizing_id_maker(64, adapter.PROVIDER.id_alphabet or "")(tool_id, attempt)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", wire)
    if attempt == 0:
        assert wire == (sanitized[:64] or "call")
    else:
        assert wire.startswith((sanitized[:53] or "call") + "_")


def test_results_without_content_and_with_errors_keep_their_keys_in_order() -> None:
    history = [user("go"), assistant("", call("a", "f"), call("b", "g"), call("c", "h")),
               tool("a", " "), tool("b", "boom", error=True), tool("c", (ImagePart(media_type="image/png", data=PNG),))]
    blocks = body_of(history)["messages"][2]["content"]
    assert [list(b) for b in blocks] == [["type", "tool_use_id"], ["type", "tool_use_id", "content", "is_error"],
                                         ["type", "tool_use_id", "content"]]
    assert blocks[1]["content"] == "boom" and blocks[2]["content"][0]["type"] == "image"
