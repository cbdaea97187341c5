"""Shared by the OpenAI-Chat-shaped adapter tests: SDK type validation and a local chat completions server."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from pydantic import ConfigDict, TypeAdapter

from chatmend.exceptions import Problem
from chatmend.providers.base import Provider
from tests.providers.common import drain, sendable_body
from tests.providers.local_server import serve
from tests.strategies import messy_histories

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}

# extra="forbid": a field the SDK's request types do not know (a stray `name` on a tool message) fails.
_MESSAGE = TypeAdapter(ChatCompletionMessageParam, config=ConfigDict(extra="forbid"))
_TOOLS = TypeAdapter(list[ChatCompletionToolParam], config=ConfigDict(extra="forbid"))


def sdk_validate(body: Mapping[str, Any], *, extra: Mapping[str, set[str]] | None = None) -> None:
    """Each message (and tool) of a body against the openai SDK's request TypedDicts, fully iterated.

    `extra` names, per role, fields the provider adds beyond OpenAI's types (Kimi's `reasoning_content`);
    they are taken out before validation.
    """
    for message in body["messages"]:
        allowed = (extra or {}).get(message["role"], set())
        drain(_MESSAGE.validate_python({k: v for k, v in message.items() if k not in allowed}))
    drain(_TOOLS.validate_python(body.get("tools", [])))


def openai_error(problem: Problem) -> dict[str, Any]:
    """OpenAI's 400 body."""
    return {
        "error": {
            "message": problem.message,
            "type": "invalid_request_error",
            "param": problem.path,
            "code": None,
        }
    }


def completion(model: str, message: dict[str, Any], n: int) -> dict[str, Any]:
    """A chat.completion reply around one assistant message."""
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1_780_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def weather_reply(call_id: Callable[[int], str]) -> Callable[[dict[str, Any], int], dict[str, Any]]:
    """A scripted model: asks for the weather after a user message, answers in text after tool results."""

    def reply(body: dict[str, Any], n: int) -> dict[str, Any]:
        if body["messages"][-1]["role"] == "tool":
            return {"role": "assistant", "content": "It is 22 °C and sunny in Paris."}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id(n),
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        }

    return reply


@dataclass
class ChatServer:
    """A local chat completions endpoint: the provider's 400 when `check()` finds problems, else a reply."""

    provider: Provider
    reply: Callable[[dict[str, Any], int], dict[str, Any]]
    error: Callable[[Problem], dict[str, Any]] = openai_error
    received: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    base_url: str = ""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and JSON the provider would answer `body` with."""
        self.received.append(body)
        problems = self.provider.check(body)
        if problems:
            return 400, self.error(problems[0])
        message = self.reply(body, len(self.received))
        return 200, completion(body["model"], message, len(self.received))


@contextmanager
def chat_server(server: ChatServer) -> Iterator[ChatServer]:
    """Serve `server` on 127.0.0.1 (a free port) in a thread for the duration of the block."""

    def route(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": "not found"}}
        return server.answer(body)

    with serve(route, server.statuses) as root:
        server.base_url = f"{root}/v1"
        yield server


JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1, 3),
    st.text(max_size=4),
    st.just([]),
    st.just({}),
    st.sampled_from(["tool", "assistant", "user", "system", "image_url", "text"]),
    st.just([{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]),
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_places(v, (*path, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_places(v, (*path, i)))
    return out


@st.composite
def broken_bodies(draw: st.DrawFn, provider: Provider) -> dict[str, Any]:
    """A body the provider wrote, then damaged in one to three places (a value replaced or removed)."""
    # A deep copy: the body shares the tool's parameters (and the history's objects) with their owners.
    body = copy.deepcopy(sendable_body(provider, draw(messy_histories(max_size=8)), model="m", tools=[WEATHER_TOOL]))
    for _ in range(draw(st.integers(1, 3))):
        places = [p for p in _places(body) if p]
        if not places:
            break
        *parents, last = draw(st.sampled_from(places))
        holder: Any = body
        for key in parents:
            holder = holder[key]
        if draw(st.booleans()):
            # A copy: `st.just` gives the same object every time, so junk placed into junk would make a cycle, and
            # junk damaged in one example would carry the damage into the next ones.
            holder[last] = copy.deepcopy(draw(JUNK))
        else:
            del holder[last]
    return body
