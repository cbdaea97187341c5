"""chatmend.bridges.llama_index: LlamaIndex messages repaired, unchanged objects kept, in FunctionAgent's loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock, ThinkingBlock, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from openai.types.chat import ChatCompletionMessageToolCall

from chatmend import ChatMessage as Neutral
from chatmend import loads, providers, repair_history
from chatmend.bridges.llama_index import SYNTHESIZED, RepairedMemory, repair
from tests.bridges.peers import framework_peer_cases
from tests.strategies import examples, messy_histories

# FunctionAgent is a pydantic model and a workflow: the workflow reads its steps with inspect.getmembers, which
# touches every attribute pydantic deprecates (LlamaIndex's, not the bridge's)
pytestmark = [pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20"),
              pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")]

CHAT = providers.get("openai_chat")


def _call(call_id: str, name: str = "read", **kwargs: Any) -> ToolCallBlock:
    return ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=kwargs)


def _result(call_id: str, text: str, **kwargs: Any) -> ChatMessage:
    return ChatMessage(role="tool", content=text, additional_kwargs={"tool_call_id": call_id, **kwargs})


def _valid() -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content="Be terse."),
        ChatMessage(role="user", blocks=[TextBlock(text="look"), ImageBlock(url="https://example.com/a.png")]),
        ChatMessage(role="assistant", blocks=[ThinkingBlock(content="hm", additional_information={"sig": "s"}),
                                              TextBlock(text="reading"), _call("c1", p="a"), _call("c2", p="b")],
                    additional_kwargs={"x": 1}),
        _result("c1", "A", name="read"),
        _result("c2", "B"),
        ChatMessage(role="assistant", content="done"),
    ]


def calls_of(message: ChatMessage) -> list[str]:
    """The ids llama-index-llms-openai sends as calls: the ToolCallBlocks, or the `tool_calls` entries."""
    ids = [b.tool_call_id or "" for b in message.blocks if isinstance(b, ToolCallBlock)]
    if ids:
        return ids
    return [(e["call_id"] if "call_id" in e else e["id"]) if isinstance(e, dict) else e.id
            for e in message.additional_kwargs.get("tool_calls", [])]


def answered(messages: list[ChatMessage]) -> bool:
    """Every call answered right after its message, in call order, and no result without its call."""
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        if m.role == "tool":
            return False
        if m.role == "assistant":
            got = []
            while i < len(messages) and messages[i].role == "tool":
                got.append(messages[i].additional_kwargs["tool_call_id"])
                i += 1
            if got != calls_of(m):
                return False
    return True


def chat_body(messages: list[ChatMessage]) -> dict[str, Any]:
    """The Chat Completions body llama-index-llms-openai sends for these messages (its `to_openai_message_dict`:
    ToolCallBlocks, else `additional_kwargs["tool_calls"]`; a tool message's `tool_call_id`). The integration
    itself needs openai<3, which the test install cannot have beside the Agents SDK."""
    out: list[dict[str, Any]] = []
    for m in messages:
        text = "\n".join(b.text for b in m.blocks if isinstance(b, TextBlock))
        item: dict[str, Any] = {"role": m.role.value, "content": text}
        blocks = [b for b in m.blocks if isinstance(b, ToolCallBlock)]
        if blocks:
            item["tool_calls"] = [{"id": b.tool_call_id, "type": "function", "function": {
                "name": b.tool_name, "arguments": json.dumps(b.tool_kwargs)}} for b in blocks]
        elif "tool_calls" in m.additional_kwargs:
            listed = m.additional_kwargs["tool_calls"]
            item["tool_calls"] = [e if isinstance(e, dict) else e.model_dump() for e in listed]
        if "tool_call_id" in m.additional_kwargs:
            item["tool_call_id"] = m.additional_kwargs["tool_call_id"]
        out.append(item)
    return {"model": "gpt-4o", "messages": out}


PAIRING = {"OC1", "OC2", "OC3", "OC4"}  # docs/rules.md: calls answered, results after their call


def test_a_valid_history_comes_back_as_the_same_objects() -> None:
    history = _valid()
    out = repair(history)
    assert out == history and all(a is b for a, b in zip(out, history)) and len(out) == len(history)


def test_missing_results_are_answered_after_their_calls() -> None:
    history = [*_valid()[:3], ChatMessage(role="user", content="are you there?")]
    out = repair(history, is_read_only={"read"}.__contains__)
    assert answered(out) and out[2] is history[2] and out[-1] is history[-1]
    added = out[3:5]
    assert [m.additional_kwargs["tool_call_id"] for m in added] == ["c1", "c2"]
    assert all(m.role == "tool" and m.additional_kwargs[SYNTHESIZED] is True for m in added)
    assert "safe to run it again" in str(added[0].content)
    assert [p for p in CHAT.check(chat_body(history)) if p.code in PAIRING] != []
    assert [p for p in CHAT.check(chat_body(out)) if p.code in PAIRING] == []


def test_legacy_tool_calls_in_additional_kwargs_are_calls() -> None:
    sdk = ChatCompletionMessageToolCall(id="c1", type="function", function={"name": "read", "arguments": "{}"})
    as_dict = {"id": "c2", "type": "function", "function": {"name": "grep", "arguments": '{"q": 1}'}}
    anthropic = {"id": "c3", "name": "ls", "input": {}, "type": "tool_use"}
    reply = ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [sdk, as_dict, anthropic]})
    out = repair([ChatMessage(role="user", content="go"), reply, _result("c2", "B")])
    assert out[1] is reply and answered(out)
    assert [m.additional_kwargs["tool_call_id"] for m in out[2:]] == ["c1", "c2", "c3"]
    assert out[3].content == "B"


def test_a_block_and_its_entry_are_one_call_renamed_together() -> None:
    def reply(args: dict[str, Any]) -> ChatMessage:  # as llama-index-llms-openai reads a reply: both forms
        entry = ChatCompletionMessageToolCall(id="call_0", type="function",
                                              function={"name": "s", "arguments": json.dumps(args)})
        return ChatMessage(role="assistant", blocks=[_call("call_0", "s", **args)],
                           additional_kwargs={"tool_calls": [entry]})

    first, second = reply({"q": 1}), reply({"q": 2})
    history = [ChatMessage(role="user", content="go"), first, _result("call_0", "A"), second,
               _result("call_0", "B", name="s")]
    out = repair(history)
    assert out[1] is first and out[2] is history[2] and answered(out)
    renamed = out[3]
    block = renamed.blocks[0]
    assert isinstance(block, ToolCallBlock) and block.tool_call_id != "call_0" and block.tool_kwargs == {"q": 2}
    assert renamed.additional_kwargs["tool_calls"][0].id == block.tool_call_id
    assert out[4].additional_kwargs == {"tool_call_id": block.tool_call_id, "name": "s"} and out[4].content == "B"
    assert isinstance(second.blocks[0], ToolCallBlock) and second.blocks[0].tool_call_id == "call_0"  # unchanged


def test_a_responses_call_id_is_renamed_where_it_is() -> None:
    def reply() -> ChatMessage:
        return ChatMessage(role="assistant", additional_kwargs={"tool_calls": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_0", "name": "s", "arguments": "{}"}]})

    history = [ChatMessage(role="user", content="go"), reply(), _result("call_0", "A"), reply(),
               ChatMessage(role="tool", content="B", additional_kwargs={"call_id": "call_0"})]
    out = repair(history)
    entry = out[3].additional_kwargs["tool_calls"][0]
    assert entry["call_id"] != "call_0" and entry["id"] == "fc_1"
    assert out[4].additional_kwargs == {"call_id": entry["call_id"]}


def test_an_orphan_result_becomes_a_user_note() -> None:
    out = repair([ChatMessage(role="user", content="go"), ChatMessage(role="assistant", content="ok"),
                  _result("ghost", "secret 42")])
    assert out[-1].role == "user" and "secret 42" in str(out[-1].content) and answered(out)


_STYLES = ["blocks", "sdk", "dicts", "both"]


def _as_llama(history: list[Neutral], styles: list[str]) -> list[ChatMessage]:
    styles_ = iter(styles)
    out: list[ChatMessage] = []
    for m in history:
        text = m.content if isinstance(m.content, str) else "".join(getattr(p, "text", "") for p in m.content)
        if m.role == "assistant" and m.tool_calls:
            style = next(styles_, "blocks")
            args = [c.arguments if isinstance(c.arguments, dict) else {} for c in m.tool_calls]
            blocks: list[Any] = [TextBlock(text=text)] if text else []
            entries = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(a)}}
                       for c, a in zip(m.tool_calls, args)]
            if style in ("blocks", "both"):
                blocks += [_call(c.id, c.name, **a) for c, a in zip(m.tool_calls, args)]
            kwargs: dict[str, Any] = {}
            if style in ("sdk", "both"):
                kwargs["tool_calls"] = [ChatCompletionMessageToolCall.model_validate(e) for e in entries]
            elif style == "dicts":
                kwargs["tool_calls"] = entries
            out.append(ChatMessage(role="assistant", blocks=blocks, additional_kwargs=kwargs))
        elif m.role == "tool":
            out.append(_result(m.tool_call_id or "", text))
        else:
            out.append(ChatMessage(role=m.role, content=text or "."))
    return out


@examples(150)
@given(history=messy_histories(), styles=st.lists(st.sampled_from(_STYLES), max_size=8))
def test_any_history_repairs_valid_deterministic_and_idempotent(history: list[Neutral], styles: list[str]) -> None:
    messages = _as_llama(history, styles)
    once = repair(messages)
    assert answered(once)
    assert repair(messages) == once
    again = repair(once)
    assert all(a is b for a, b in zip(again, once)) and len(again) == len(once)
    assert [p for p in CHAT.check(chat_body(once)) if p.code in PAIRING] == []


def _read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


def _run(memory: Any, user: str) -> list[list[ChatMessage]]:
    """FunctionAgent's loop over `memory`, its model LlamaIndex's own mock: it calls `_read` once, then answers;
    returns every history the model was given."""
    seen: list[list[ChatMessage]] = []

    def model(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        seen.append(list(messages))
        if len(seen) == 1:
            return ChatMessage(role="assistant", blocks=[_call("run_1", "_read", path="b.txt")])
        return ChatMessage(role="assistant", content="done")

    agent = FunctionAgent(llm=MockFunctionCallingLLM(response_generator=model), tools=[_read])

    async def main() -> None:
        assert str(await agent.run(user, memory=memory)) == "done"

    asyncio.run(main())
    return seen


def test_the_memory_gives_the_agent_loop_a_valid_history_and_stores_what_was_written() -> None:
    broken = _valid()[:4]  # c2 never answered: the process died while it ran
    stored = ChatMemoryBuffer.from_defaults()
    stored.set(list(broken))  # the store keeps the list it is given, and appends to it
    seen = _run(RepairedMemory(memory=stored, is_read_only={"read"}.__contains__), "go on")
    assert len(seen) == 2 and all(answered([m for m in s if m.role != "system"]) for s in seen)
    assert all([p for p in CHAT.check(chat_body(s)) if p.code in PAIRING] == [] for s in seen)
    assert [m.additional_kwargs.get("tool_call_id") for m in seen[1] if m.role == "tool"] == ["c1", "c2", "run_1"]
    kept = stored.get_all()
    assert kept[:4] == broken and not any(m.additional_kwargs.get(SYNTHESIZED) for m in kept)
    assert kept[-1].content == "done"


def test_without_it_the_agent_loop_sends_the_broken_history() -> None:
    stored = ChatMemoryBuffer.from_defaults()
    stored.set(_valid()[:4])
    seen = _run(stored, "go on")
    assert not answered([m for m in seen[0] if m.role != "system"])


def test_a_token_limit_that_leaves_a_result_alone_leaves_no_orphan() -> None:
    # ChatMemoryBuffer keeps calls with their results when it trims, but a last message longer than the limit is
    # returned alone: here a tool result, without its call
    history = [ChatMessage(role="user", content="go"), ChatMessage(role="assistant", blocks=[_call("c1")]),
               _result("c1", "A " * 400)]
    stored = ChatMemoryBuffer.from_defaults(token_limit=50)
    stored.set(history)
    assert [m.role for m in stored.get()] == ["tool"]
    got = RepairedMemory(memory=stored).get()
    assert [m.role for m in got] == ["user"] and "A A" in str(got[0].content) and answered(got)
    assert stored.get_all() == history


SEEDS = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.jsonl"))


def _skeleton(messages: list[Any]) -> list[tuple[str, tuple[str, ...]]]:
    """Each message's role and the call ids it makes or answers: what the repair rules decide."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for m in messages:
        if isinstance(m, Neutral):
            ids = tuple(c.id for c in m.tool_calls) if m.role == "assistant" else (
                (m.tool_call_id or "",) if m.role == "tool" else ())
            out.append((m.role, ids))
        elif m.role == "assistant":
            out.append(("assistant", tuple(calls_of(m))))
        elif m.role == "tool":
            out.append(("tool", (m.additional_kwargs["tool_call_id"],)))
        else:
            out.append((m.role.value, ()))
    return out


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
@pytest.mark.parametrize("style", _STYLES)
def test_the_seed_examples_repair_as_repair_history_does(seed: Path, style: str) -> None:
    history = loads(seed.read_text())
    expected = repair_history(history).messages
    out = repair(_as_llama(history, [style] * len(history)))
    assert _skeleton(out) == _skeleton(list(expected)) and answered(out)


def test_from_defaults_wraps_a_memory_and_passes_writes_through() -> None:
    # over a ChatMemoryBuffer: LlamaIndex's default `Memory` opens an SQLite connection that it never closes
    memory = RepairedMemory.from_defaults(memory=ChatMemoryBuffer.from_defaults(), is_read_only={"read"}.__contains__)
    memory.put(ChatMessage(role="user", content="go"))
    memory.put_messages([ChatMessage(role="assistant", blocks=[_call("c1")])])
    got = memory.get()
    assert [m.role for m in got] == ["user", "assistant", "tool"] and "safe to run it again" in str(got[2].content)
    assert [m.role for m in memory.get_all()] == ["user", "assistant"]
    memory.set([ChatMessage(role="user", content="again")])
    assert [m.content for m in memory.get()] == ["again"]
    memory.reset()
    assert memory.get() == [] and memory.get_all() == []


PEERS = framework_peer_cases()


@pytest.mark.skipif(not PEERS, reason="../shared/real-world/peer-cases.json is absent")
@pytest.mark.parametrize(("name", "history"), PEERS, ids=[name for name, _ in PEERS])
def test_the_peers_cases_repair_as_repair_history_does(name: str, history: list[Any]) -> None:
    expected = repair_history(history).messages
    out = repair(_as_llama(history, []))
    assert _skeleton(out) == _skeleton(list(expected)) and answered(out)
