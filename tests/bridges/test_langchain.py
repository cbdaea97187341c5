"""chatmend.bridges.langchain: LangChain messages repaired, unchanged objects kept, in create_agent's loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from chatmend import ChatMessage, loads, providers, repair_history
from chatmend.bridges.langchain import SYNTHESIZED, RepairMiddleware, pre_model_hook, repair
from tests.bridges.peers import framework_peer_cases
from tests.proxy.upstream import fake_upstream
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


# ------------------------------------------------------------------------------ v1 and Responses content blocks

RESPONSES = providers.get("openai_responses")
CHAT = providers.get("openai_chat")
_BLOCK_IDS = {"tool_call": "id", "invalid_tool_call": "id", "tool_use": "id", "function_call": "call_id",
              "custom_tool_call": "call_id", "computer_call": "call_id"}


def _blocks(blocks: list[Any]) -> list[Any]:
    """Content blocks as `content_blocks=` takes them (its TypedDict union, unchecked here)."""
    return blocks


def block_calls(message: AIMessage) -> list[str]:
    """The ids an integration sends as calls: the content's call blocks, then the list entries no block has."""
    blocks = [b for b in message.content if isinstance(b, dict) and b.get("type") in _BLOCK_IDS]
    ids = [b[_BLOCK_IDS[b["type"]]] for b in blocks]
    return ids + [c["id"] for c in [*message.tool_calls, *message.invalid_tool_calls] if c["id"] not in ids]


def answered_blocks(messages: list[BaseMessage]) -> bool:
    """`answered`, with the content's call blocks as calls."""
    i = 0
    while i < len(messages):
        m = messages[i]
        i += 1
        if isinstance(m, ToolMessage):
            return False
        if isinstance(m, AIMessage):
            got = []
            while i < len(messages) and isinstance(messages[i], ToolMessage):
                got.append(messages[i].tool_call_id)  # type: ignore[attr-defined]
                i += 1
            if got != block_calls(m):
                return False
    return True


def _payload(model: str, messages: list[BaseMessage], *, responses: bool) -> dict[str, Any]:
    """The request body langchain-openai builds for these messages (no request is sent)."""
    chat = ChatOpenAI(model=model, api_key=SecretStr("k"), use_responses_api=responses)
    body: dict[str, Any] = chat._get_request_payload(messages)
    return body


def test_v1_tool_call_blocks_without_tool_calls_are_calls_and_get_their_entries() -> None:
    call = AIMessage(content=[{"type": "text", "text": "reading"},
                              {"type": "tool_call", "id": "c1", "name": "read", "args": {"p": "a"}}], id="a1")
    assert call.tool_calls == []  # content= (not content_blocks=) leaves them out
    out = repair([HumanMessage("go"), call, HumanMessage("there?")])
    assert answered_blocks(out)
    fixed = out[1]
    assert isinstance(fixed, AIMessage) and fixed.content == call.content and fixed.id == "a1"
    assert [(c["id"], c["args"]) for c in fixed.tool_calls] == [("c1", {"p": "a"})]
    assert isinstance(out[2], ToolMessage) and out[2].tool_call_id == "c1"
    # and both of langchain-openai's APIs now send the call with its answer
    assert CHAT.check(_payload("gpt-4o", out, responses=False)) == []
    assert RESPONSES.check(_payload("gpt-4o", out, responses=True)) == []
    # an answered one is only given its entry (Chat drops the call otherwise: the result is an orphan there)
    answered_ = [HumanMessage("go"), call, ToolMessage("A", tool_call_id="c1")]
    assert CHAT.check(_payload("gpt-4o", answered_, responses=False)) != []
    again = repair(answered_)
    assert again[0] is answered_[0] and again[2] is answered_[2] and again[1] is not call
    assert CHAT.check(_payload("gpt-4o", again, responses=False)) == []


def test_a_v1_history_with_its_entries_is_the_same_objects() -> None:
    history: list[BaseMessage] = [
        HumanMessage(content_blocks=_blocks([{"type": "text", "text": "go"}])),
        AIMessage(content_blocks=_blocks([
            {"type": "reasoning", "reasoning": "think"},
            {"type": "tool_call", "id": "c1", "name": "read", "args": {}},
            {"type": "server_tool_call", "id": "s1", "name": "web_search", "args": {}},
            {"type": "server_tool_result", "tool_call_id": "s1", "status": "success"}])),
        ToolMessage(content_blocks=_blocks([{"type": "text", "text": "A"}]), tool_call_id="c1"),
        AIMessage(content_blocks=_blocks([{"type": "text", "text": "done"}])),
    ]
    out = repair(history)
    assert all(a is b for a, b in zip(out, history)) and len(out) == len(history)


def test_responses_blocks_with_empty_tool_calls_are_answered_in_their_own_types() -> None:
    reply = AIMessage(content=[
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": '{"p": "a"}'},
        {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_2", "name": "apply_patch", "input": "*** x"},
        {"type": "computer_call", "id": "cu_1", "call_id": "call_3", "action": {"type": "screenshot"},
         "pending_safety_checks": [], "status": "completed"},
    ], response_metadata={"model_provider": "openai"}, additional_kwargs={"k": 1})
    history: list[BaseMessage] = [HumanMessage("fix it"), reply, HumanMessage("are you there?")]
    before = _payload("computer-use-preview", history, responses=True)
    assert RESPONSES.check(before) != []
    out = repair(history, is_read_only={"read"}.__contains__)
    assert answered_blocks(out) and out[1] is reply and out[-1] is history[-1]
    added = [m for m in out if isinstance(m, ToolMessage)]
    assert all(m.response_metadata == {SYNTHESIZED: True} and m.status == "error" for m in added)
    assert "safe to run it again" in str(added[0].content)
    sent = _payload("computer-use-preview", out, responses=True)
    assert RESPONSES.check(sent) == []
    kinds = {i["call_id"]: i["type"] for i in sent["input"] if str(i.get("type", "")).endswith("_output")}
    assert kinds == {"call_1": "function_call_output", "call_2": "custom_tool_call_output",
                     "call_3": "computer_call_output"}


def test_a_block_and_its_entry_are_one_call_renamed_together() -> None:
    def reply(args: dict[str, Any]) -> AIMessage:
        return AIMessage(content_blocks=_blocks([{"type": "tool_call", "id": "call_0", "name": "s", "args": args}]))

    first, second = reply({"q": 1}), reply({"q": 2})
    history: list[BaseMessage] = [HumanMessage("go"), first, ToolMessage("A", tool_call_id="call_0"), second,
                                  ToolMessage([{"type": "text", "text": "B"}], tool_call_id="call_0")]
    out = repair(history)
    assert out[1] is first and answered_blocks(out)
    renamed = out[3]
    assert isinstance(renamed, AIMessage)
    block = renamed.content[0]
    assert isinstance(block, dict) and block["id"] != "call_0" and block["args"] == {"q": 2}
    assert [c["id"] for c in renamed.tool_calls] == [block["id"]]
    assert isinstance(out[4], ToolMessage) and out[4].tool_call_id == block["id"] and out[4].content == [
        {"type": "text", "text": "B"}]
    assert RESPONSES.check(_payload("gpt-4o", out, responses=True)) == []


def test_an_id_less_v1_block_and_its_entry_are_one_call() -> None:
    reply = AIMessage(content_blocks=_blocks([{"type": "tool_call", "id": None, "name": "read", "args": {}}]))
    assert [c["id"] for c in reply.tool_calls] == [None]
    out = repair([HumanMessage("go"), reply])
    fixed = out[1]
    assert isinstance(fixed, AIMessage) and len(out) == 3 and isinstance(out[2], ToolMessage)
    block = fixed.content[0]
    assert isinstance(block, dict) and block["id"] and [c["id"] for c in fixed.tool_calls] == [block["id"]]
    assert out[2].tool_call_id == block["id"]
    assert CHAT.check(_payload("gpt-4o", out, responses=False)) == []


def test_a_renamed_responses_output_kept_as_a_block_is_renamed_inside() -> None:
    def reply() -> AIMessage:
        return AIMessage(content=[{"type": "custom_tool_call", "call_id": "call_0", "name": "p", "input": "x"}])

    def result(text: str) -> ToolMessage:
        return ToolMessage([{"type": "non_standard", "value": {"type": "custom_tool_call_output",
                                                               "call_id": "call_0", "output": text}}],
                           tool_call_id="call_0")

    history: list[BaseMessage] = [HumanMessage("go"), reply(), result("A"), reply(), result("B")]
    out = repair(history)
    assert answered_blocks(out) and out[2] is history[2]
    new = out[3].content[0]
    assert isinstance(new, dict) and new["call_id"] != "call_0"
    assert out[4].content[0]["value"]["call_id"] == new["call_id"]  # type: ignore[index]
    assert RESPONSES.check(_payload("gpt-4o", out, responses=True)) == []


PAIRING = {"OR1", "OR2", "OR10", "OR11"}  # docs/rules.md: a call without output, an output without call, ...
_STYLES = ["lists", "v1", "v1-blocks-only", "responses"]


def _styled(history: list[ChatMessage], styles: list[str]) -> list[BaseMessage]:
    """The history as LangChain messages, each assistant's calls in one of the ways they are kept."""
    out = _as_langchain(history)
    styles_ = iter(styles)
    for i, m in enumerate(out):
        if not isinstance(m, AIMessage) or not m.tool_calls:
            continue
        style = next(styles_, "lists")
        text = [{"type": "text", "text": m.content}] if m.content else []
        if style == "v1":
            out[i] = AIMessage(content_blocks=_blocks([*text, *({**c, "type": "tool_call"} for c in m.tool_calls)]))
        elif style == "v1-blocks-only":
            out[i] = AIMessage(content=[*text, *({**c, "type": "tool_call"} for c in m.tool_calls)])
        elif style == "responses":
            out[i] = AIMessage(content=[*text, *({"type": "function_call", "call_id": c["id"], "name": c["name"],
                                                  "arguments": json.dumps(c["args"])} for c in m.tool_calls)])
    return out


@examples(150)
@given(history=messy_histories(), styles=st.lists(st.sampled_from(_STYLES), max_size=8))
def test_any_history_in_any_block_style_repairs_valid_and_idempotent(history: list[ChatMessage],
                                                                     styles: list[str]) -> None:
    messages = _styled(history, styles)
    once = repair(messages)
    assert answered_blocks(once)
    assert repair(messages) == once
    again = repair(once)
    assert all(a is b for a, b in zip(again, once)) and len(again) == len(once)
    body = _payload("gpt-4o", [m for m in once if not isinstance(m, SystemMessage)], responses=True)
    # pairing as Responses reads langchain-openai's body (ids keep their length: the bridge applies no provider's rules)
    assert [p for p in RESPONSES.check(body) if p.code in PAIRING] == []


def test_the_middleware_makes_a_responses_history_valid_at_the_server() -> None:
    reply = AIMessage(content=[
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{}"},
        {"type": "tool_call", "id": "call_2", "name": "grep", "args": {"q": "x"}}])
    history: list[BaseMessage] = [HumanMessage("go"), reply, HumanMessage("are you there?")]

    def run(middleware: list[Any]) -> list[Any]:
        with fake_upstream() as upstream, openai.DefaultHttpxClient() as http:
            model = ChatOpenAI(model="gpt-4o", base_url=upstream.url + "/v1", api_key=SecretStr("k"),
                               use_responses_api=True, max_retries=0, http_client=http)
            state = create_agent(model, middleware=middleware).invoke({"messages": history})
            assert state["messages"][:3] == history  # the stored state is what was written
        return [s for s in upstream.seen if s.provider == "openai_responses"]

    sent = run([RepairMiddleware()])
    assert sent and all(s.problems == [] for s in sent)
    outputs = [i["call_id"] for i in sent[0].json()["input"] if i.get("type") == "function_call_output"]
    assert outputs == ["call_1", "call_2"]
    without = run([])
    assert without and without[0].problems != []


SEEDS = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.jsonl"))


def _skeleton(messages: list[Any]) -> list[tuple[str, tuple[str, ...]]]:
    """Each message's role and the call ids it makes or answers: what the repair rules decide."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for m in messages:
        if isinstance(m, ChatMessage):
            ids = tuple(c.id for c in m.tool_calls) if m.role == "assistant" else (
                (m.tool_call_id or "",) if m.role == "tool" else ())
            out.append((m.role, ids))
        elif isinstance(m, AIMessage):
            out.append(("assistant", tuple(block_calls(m))))
        elif isinstance(m, ToolMessage):
            out.append(("tool", (m.tool_call_id,)))
        else:
            out.append(({"human": "user"}.get(m.type, m.type), ()))
    return out


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
@pytest.mark.parametrize("style", _STYLES)
def test_the_seed_examples_repair_as_repair_history_does(seed: Path, style: str) -> None:
    history = loads(seed.read_text())
    expected = repair_history(history).messages
    out = repair(_styled(history, [style] * len(history)))
    assert _skeleton(out) == _skeleton(list(expected)) and answered_blocks(out)


PEERS = framework_peer_cases()


@pytest.mark.skipif(not PEERS, reason="../shared/real-world/peer-cases.json is absent")
@pytest.mark.parametrize(("name", "history"), PEERS, ids=[name for name, _ in PEERS])
def test_the_peers_cases_repair_as_repair_history_does(name: str, history: list[Any]) -> None:
    expected = repair_history(history).messages
    out = repair(_as_langchain(history))
    assert _skeleton(out) == _skeleton(list(expected)) and answered_blocks(out)
