"""Users' own adapters: a subclass of a shipped adapter, or of `Provider`, mints its own ids, reads its own flags
and runs through the inherited verbs."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest

from chatmend import ChatMessage, RepairResult, Tool, ToolCall
from chatmend.exceptions import CheckError, Problem
from chatmend.providers import kimi, mistral, openai_chat
from chatmend.providers.anthropic import Anthropic
from chatmend.providers.base import CheckContext, HistoryInput, Provider
from chatmend.providers.gemini import Gemini
from chatmend.providers.openai_chat import IdAssigner, OpenAIChat
from chatmend.providers.openai_responses import OpenAIResponses


def history() -> list[ChatMessage]:
    """Two replies whose calls restart their ids (as Gemini's do), the second one cut off."""
    return [
        ChatMessage(role="user", content="Weather in Paris and Oslo?"),
        ChatMessage(role="assistant", content="", tool_calls=(
            ToolCall(id="call_0", name="weather.get", arguments={"city": "Paris"}),
            ToolCall(id="call_1", name="weather.get", arguments={"city": "Oslo"}))),
        ChatMessage(role="tool", tool_call_id="call_0", content="18 C"),
        ChatMessage(role="tool", tool_call_id="call_1", content="4 C"),
        ChatMessage(role="assistant", content="", tool_calls=(
            ToolCall(id="call_0", name="weather.get", arguments={"city": "Rome"}),)),
    ]


class Compatible(OpenAIChat):
    """An OpenAI-compatible service with its own rules, as a user would write it: ids by position, names as
    the service spells them, and a last message of its own."""

    name: ClassVar[str] = "compatible"

    def _wire_ids(self, final_ids: Sequence[str]) -> Sequence[str]:
        return [f"tc{position}" for position in range(len(final_ids))]

    def _wire_name(self, name: str) -> str:
        return name.replace(".", "__")

    def _finish(self, out: list[dict[str, Any]]) -> None:
        out.append({"role": "user", "content": "(end of history)"})


def test_a_subclass_of_an_adapter_uses_its_own_hooks_in_the_inherited_writer() -> None:
    body = Compatible().to_request(history(), model="m")
    messages = body["messages"]
    calls = [call for message in messages for call in message.get("tool_calls", ())]
    assert [call["id"] for call in calls] == ["tc0", "tc1", "tc2"]
    assert {call["function"]["name"] for call in calls} == {"weather__get"}
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["tc0", "tc1", "tc2"]
    assert messages[-1] == {"role": "user", "content": "(end of history)"}
    assert Compatible().check(body) == []
    # the shipped adapter is untouched by the subclass
    shipped = openai_chat.PROVIDER.to_request(history(), model="m")["messages"]
    assert [call["id"] for m in shipped for call in m.get("tool_calls", ())] == ["call_0", "call_1", "call_0_1"]


class _Named(IdAssigner):
    """A user's own id minting, in Python, over `IdAssigner`: the tool's name and a count."""

    def __init__(self) -> None:
        super().__init__([])
        self.count = 0

    def next_id(self, name: str) -> str:
        self.count += 1
        return f"{name}-{self.count}"


class Minting(OpenAIChat):
    """A subclass minting its own ids from the calls' positions and names, and marking the user's turns."""

    name: ClassVar[str] = "minting"
    ids_by_position: ClassVar[bool] = True

    def _id_assigner(self, final_ids: Sequence[str]) -> IdAssigner:
        return _Named()

    def _append_turn(self, out: list[dict[str, Any]], message: dict[str, Any]) -> None:
        if message["role"] == "user" and isinstance(message["content"], str):
            message = {**message, "content": f"[user] {message['content']}"}
        out.append(message)


def test_a_subclass_mints_ids_with_its_own_id_assigner_and_places_user_turns_with_its_own_append_turn() -> None:
    messages = Minting().to_request(history(), model="m")["messages"]
    ids = [call["id"] for m in messages for call in m.get("tool_calls", ())]
    assert ids == ["weather.get-1", "weather.get-2", "weather.get-3"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ids
    assert messages[0] == {"role": "user", "content": "[user] Weather in Paris and Oslo?"}


class Flagged(OpenAIChat):
    """A subclass that only changes class flags: the writer reads them from the subclass."""

    name: ClassVar[str] = "flagged"
    id_max_length: ClassVar[int | None] = 12
    tool_message_name: ClassVar[bool] = True


def test_a_subclass_changing_class_flags_changes_what_the_inherited_writer_does() -> None:
    messages = Flagged().to_request(history(), model="m")["messages"]
    ids = [call["id"] for m in messages for call in m.get("tool_calls", ())]
    assert len(ids) == 3 and len(set(ids)) == 3 and all(len(i) <= 12 for i in ids)
    assert ids[0] == "call_0"  # what fits stays
    results = [m for m in messages if m["role"] == "tool"]
    assert [m["name"] for m in results] == ["weather.get"] * 3
    assert [m["tool_call_id"] for m in results] == ids


@pytest.mark.parametrize("base", [OpenAIChat, type(kimi.PROVIDER), type(mistral.PROVIDER), Anthropic, Gemini,
                                  OpenAIResponses])
def test_every_shipped_adapter_can_be_subclassed(base: type[Provider]) -> None:
    class Renamed(base):  # type: ignore[valid-type,misc]
        calls_seen = 0

        def to_request(self, history: HistoryInput, **kwargs: Any) -> dict[str, Any]:
            type(self).calls_seen += 1
            body: dict[str, Any] = super().to_request(history, **kwargs)
            return body

    adapter = Renamed()
    body = adapter.to_request(history(), model="m")
    assert body == base().to_request(history(), model="m")
    assert Renamed.calls_seen == 1
    assert adapter.check(body) == []


class Echo(Provider):
    """A provider written from scratch: the inherited `to_request`, `check_or_raise` and `send` call its hooks."""

    name: ClassVar[str] = "echo"

    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        return {"model": model, "n": len(result.messages)}

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        return []

    def from_response(self, response: Any) -> ChatMessage:
        return ChatMessage(role="assistant", content=f"{response['n']} messages")

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        return [] if body["n"] else [Problem(code="EC1", path="n", message="empty history")]

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        return client(body)

    async def _create_async(self, client: Any, body: dict[str, Any]) -> Any:
        return client(body)


def test_a_provider_written_from_scratch_runs_through_the_inherited_methods() -> None:
    echo = Echo()
    reply = echo.send(lambda body: body, history(), model="m")
    assert reply == ChatMessage(role="assistant", content="6 messages")  # repaired: the cut-off call answered
    assert asyncio.run(echo.send_async(lambda body: body, history()[:2], model="m")).content == "4 messages"
    echo.check_or_raise({"n": 1})
    with pytest.raises(CheckError, match="EC1"):
        echo.check_or_raise({"n": 0})
