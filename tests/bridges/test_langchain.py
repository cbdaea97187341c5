"""chatmend.bridges.langchain: LangChain messages repaired, unchanged objects kept, in create_agent's loop."""

from __future__ import annotations

from typing import Any, ClassVar

from hypothesis import given
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult

from chatmend import ChatMessage
from chatmend.bridges.langchain import SYNTHESIZED, RepairMiddleware, pre_model_hook, repair
from tests.strategies import examples, messy_histories


def _valid() -> list[BaseMessage]:
    return [
        SystemMessage("Be terse."),
        HumanMessage("list the files", id="h1"),
        AIMessage("", id="a1", tool_calls=[{"name": "shell", "args": {"c": "ls"}, "id": "c1", "type": "tool_call"}],
                  invalid_tool_calls=[{"name": "read", "args": "{bad", "id": "c2", "error": "bad json",
                                       "type": "invalid_tool_call"}],
                  additional_kwargs={"x": 1}, response_metadata={"model_name": "m"}),
        ToolMessage("a.txt", tool_call_id="c1", artifact={"raw": [1]}),
        ToolMessage("bad args", tool_call_id="c2", status="error"),
        AIMessage("done", id="a2"),
    ]


def answered(messages: list[BaseMessage]) -> bool:
    """Every call answered right after its message, in call order, and no result without its call."""
    i = 0
    while i < len(messages):
        m = messages[i]
        if isinstance(m, ToolMessage):
            return False  # a result no call's message leads to
        i += 1
        if isinstance(m, AIMessage):
            ids = [c["id"] for c in m.tool_calls] + [c["id"] for c in m.invalid_tool_calls]
            got = []
            while i < len(messages) and isinstance(messages[i], ToolMessage):
                got.append(messages[i].tool_call_id)  # type: ignore[attr-defined]
                i += 1
            if got != ids:
                return False
    return True


def test_a_valid_history_comes_back_as_the_same_objects() -> None:
    history = _valid()
    out = repair(history)
    assert all(a is b for a, b in zip(out, history)) and len(out) == len(history)


def test_missing_results_of_valid_and_invalid_calls_are_answered() -> None:
    history = _valid()
    del history[3:5]
    out = repair(history, is_read_only=lambda name: name == "read")
    assert answered(out)
    assert out[2] is history[2] and out[-1] is history[-1]
    added = [m for m in out if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in added] == ["c1", "c2"]
    assert all(m.status == "error" and m.response_metadata == {SYNTHESIZED: True} for m in added)
    assert "safe to run it again" in str(added[1].content)


def test_renamed_ids_keep_every_other_field() -> None:
    first = AIMessage("", tool_calls=[{"name": "s", "args": {}, "id": "call_0", "type": "tool_call"}],
                      additional_kwargs={"k": "v"})
    second = AIMessage("", tool_calls=[{"name": "s", "args": {"q": 2}, "id": "call_0", "type": "tool_call"}],
                       additional_kwargs={"k": "w"}, id="keep-me")
    history: list[BaseMessage] = [HumanMessage("go"), first, ToolMessage("A", tool_call_id="call_0"), second,
                                  ToolMessage("B", tool_call_id="call_0", artifact="art")]
    out = repair(history)
    assert answered(out) and out[1] is first
    renamed = out[3]
    assert isinstance(renamed, AIMessage) and renamed.id == "keep-me" and renamed.additional_kwargs == {"k": "w"}
    assert renamed.tool_calls[0]["id"] != "call_0" and renamed.tool_calls[0]["args"] == {"q": 2}
    result = out[4]
    assert isinstance(result, ToolMessage) and result.tool_call_id == renamed.tool_calls[0]["id"]
    assert result.artifact == "art"


def test_an_orphan_result_becomes_a_human_note() -> None:
    out = repair([HumanMessage("go"), AIMessage("ok"), ToolMessage("secret 42", tool_call_id="ghost")])
    assert isinstance(out[-1], HumanMessage) and "secret 42" in str(out[-1].content) and answered(out)


def _as_langchain(history: list[ChatMessage]) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for m in history:
        text = m.content if isinstance(m.content, str) else "".join(getattr(p, "text", "") for p in m.content)
        if m.role == "assistant":
            out.append(AIMessage(text or ".", tool_calls=[
                {"name": c.name, "args": c.arguments if isinstance(c.arguments, dict) else {}, "id": c.id,
                 "type": "tool_call"} for c in m.tool_calls]))
        elif m.role == "tool":
            out.append(ToolMessage(text, tool_call_id=m.tool_call_id or ""))
        elif m.role == "system":
            out.append(SystemMessage(text))
        else:
            out.append(HumanMessage(text or "."))
    return out


@examples(150)
@given(history=messy_histories())
def test_any_history_repairs_valid_deterministic_and_idempotent(history: list[ChatMessage]) -> None:
    messages = _as_langchain(history)
    once = repair(messages)
    assert answered(once)
    assert repair(messages) == once
    again = repair(once)
    assert all(a is b for a, b in zip(again, once)) and len(again) == len(once)


class _Recording(GenericFakeChatModel):
    seen: ClassVar[list[list[BaseMessage]]] = []

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        type(self).seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def test_the_middleware_repairs_the_model_call_not_the_state() -> None:
    _Recording.seen = []
    model = _Recording(messages=iter([AIMessage("done")]))
    agent = create_agent(model, middleware=[RepairMiddleware()])
    broken = [*_valid()[:3], HumanMessage("are you there?")]
    state = agent.invoke({"messages": broken})
    sent = _Recording.seen[-1]
    assert answered([m for m in sent if not isinstance(m, SystemMessage)])
    assert [m.tool_call_id for m in sent if isinstance(m, ToolMessage)] == ["c1", "c2"]
    stored = state["messages"]
    # the state keeps what was written (create_agent answers the invalid call itself, after the steer)
    assert not any(m.response_metadata.get(SYNTHESIZED) for m in stored)
    assert not answered([m for m in stored if not isinstance(m, SystemMessage)])
    assert stored[-1].content == "done"


def test_the_pre_model_hook_gives_the_model_repaired_messages() -> None:
    broken = _valid()[:3]
    update = pre_model_hook({"messages": broken})
    assert answered(update["llm_input_messages"]) and "messages" not in update
