"""chatmend.bridges.pydantic_ai: pydantic-ai's own messages repaired, unchanged objects kept, in its agent loop."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from chatmend import ChatMessage
from chatmend.bridges.pydantic_ai import SYNTHESIZED, capability, history_processor, repair
from tests.strategies import examples, messy_histories

T0 = datetime(2026, 12, 1, tzinfo=timezone.utc)


def _valid() -> list[ModelMessage]:
    return [
        ModelRequest(parts=[SystemPromptPart("Be terse."), UserPromptPart("list the files", timestamp=T0)]),
        ModelResponse(parts=[ThinkingPart("look"), ToolCallPart("shell", {"c": "ls"}, "c1"),
                             ToolCallPart("read", '{"p": "a"}', "c2")], model_name="m", timestamp=T0,
                      provider_details={"x": 1}),
        ModelRequest(parts=[ToolReturnPart("shell", "a.txt", "c1", timestamp=T0),
                            ToolReturnPart("read", "bad path", "c2", outcome="retried", timestamp=T0)]),
        ModelResponse(parts=[TextPart("done")], model_name="m", timestamp=T0),
    ]


def _part(message: ModelMessage, j: int) -> Any:
    """Part `j` of a message, untyped (pydantic-ai's part unions are wide)."""
    return message.parts[j]


def answered(messages: list[ModelMessage]) -> bool:
    """Every call answered once, in the request right after its response, and no answer without its call."""
    for i, message in enumerate(messages):
        if not isinstance(message, ModelResponse):
            continue
        calls = [p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)]
        following = messages[i + 1] if i + 1 < len(messages) else None
        answers = [p.tool_call_id for p in following.parts if isinstance(p, (ToolReturnPart, RetryPromptPart))
                   and (not isinstance(p, RetryPromptPart) or p.tool_name)] if isinstance(
            following, ModelRequest) else []
        if sorted(calls) != sorted(answers):
            return False
    return True


def test_a_valid_history_comes_back_as_the_same_objects() -> None:
    history = _valid()
    out = repair(history)
    assert out == history and all(a is b for a, b in zip(out, history))


def test_a_missing_result_is_answered_as_interrupted_and_nothing_else_changes() -> None:
    history = _valid()
    history[2] = ModelRequest(parts=[_part(history[2], 0), UserPromptPart("still there?", timestamp=T0)])
    out = repair(history, is_read_only=lambda name: name == "read")
    assert answered(out)
    assert out[0] is history[0] and out[1] is history[1] and out[3] is history[3]
    returned, added, steer = out[2].parts
    assert returned is history[2].parts[0] and steer is history[2].parts[1]
    assert isinstance(added, ToolReturnPart)
    assert (added.tool_call_id, added.tool_name, added.outcome) == ("c2", "read", "interrupted")
    assert added.metadata == {SYNTHESIZED: True} and added.timestamp == T0
    assert "safe to run it again" in str(added.content)  # a read-only tool


def test_a_retry_prompt_naming_a_call_answers_it() -> None:
    with pytest.warns(Warning, match="deprecated"):  # pydantic-ai 2.x deprecates it; saved histories hold it
        retry = RetryPromptPart("bad path", tool_name="read", tool_call_id="c2", timestamp=T0)
    history = _valid()
    history[2] = ModelRequest(parts=[_part(history[2], 0), retry])
    out = repair(history)
    assert out == history and out[2] is history[2]


def test_an_orphan_result_becomes_a_user_note_that_keeps_its_text() -> None:
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("go", timestamp=T0)]),
               ModelResponse(parts=[TextPart("ok")], timestamp=T0),
               ModelRequest(parts=[ToolReturnPart("shell", "secret output 42", "ghost", timestamp=T0)])]
    out = repair(history)
    assert answered(out)
    note = out[-1].parts[0]
    assert isinstance(note, UserPromptPart) and "secret output 42" in str(note.content)


def test_ids_repeated_across_replies_are_renamed_with_their_results() -> None:
    reply = ModelResponse(parts=[ToolCallPart("search", {"q": "a"}, "call_0")], timestamp=T0)
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("go", timestamp=T0)]), reply,
        ModelRequest(parts=[ToolReturnPart("search", "A", "call_0", timestamp=T0)]),
        ModelResponse(parts=[ToolCallPart("search", {"q": "b"}, "call_0")], timestamp=T0),
        ModelRequest(parts=[ToolReturnPart("search", "B", "call_0", timestamp=T0)]),
    ]
    out = repair(history)
    ids = [p.tool_call_id for m in out if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart)]
    assert len(set(ids)) == 2 and answered(out)
    assert out[1] is reply  # the first keeps its id
    assert _part(out[4], 0).tool_call_id == ids[1] and _part(out[4], 0).content == "B"


def _as_pydantic_ai(history: list[ChatMessage]) -> list[ModelMessage]:
    """A neutral history in pydantic-ai's types: a response per assistant message, a request per run of others."""
    out: list[ModelMessage] = []
    parts: list[Any] = []
    for m in history:
        text = m.content if isinstance(m.content, str) else "".join(getattr(p, "text", "") for p in m.content)
        if m.role == "assistant":
            if parts:
                out.append(ModelRequest(parts=parts))
                parts = []
            calls = [ToolCallPart(c.name, c.arguments, c.id) for c in m.tool_calls]
            out.append(ModelResponse(parts=[TextPart(text or "."), *calls], timestamp=T0))
        elif m.role == "tool":
            parts.append(ToolReturnPart(m.tool_name or "t", text, m.tool_call_id or "", timestamp=T0))
        elif m.role == "system":
            parts.append(SystemPromptPart(text))
        else:
            parts.append(UserPromptPart(text or ".", timestamp=T0))
    if parts:
        out.append(ModelRequest(parts=parts))
    return out


@examples(150)
@given(history=messy_histories())
def test_any_history_repairs_valid_deterministic_and_idempotent(history: list[ChatMessage]) -> None:
    messages = _as_pydantic_ai(history)
    once = repair(messages)
    assert answered(once)
    assert repair(messages) == once
    again = repair(once)
    assert again == once and all(a is b for a, b in zip(again, once))


def test_the_history_processor_is_repair() -> None:
    broken = _valid()[:2]
    assert history_processor(broken) == repair(broken) != broken


def _sent_by_agent(history: list[ModelMessage], prompt: str | None, **tools: Any) -> list[list[ModelMessage]]:
    """The histories pydantic-ai's agent loop sends its model, running `history` with `capability()`."""
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), capabilities=[capability(is_read_only=lambda name: name == "read")])
    for name, tool in tools.items():
        agent.tool_plain(name=name)(tool)
    # asyncio.run, not run_sync: run_sync leaves its event loop open (a ResourceWarning when it is collected)
    result = asyncio.run(agent.run(prompt, message_history=history))
    assert result.output == "done"
    return seen


def _results(sent: list[ModelMessage]) -> dict[str, ToolReturnPart]:
    return {p.tool_call_id: p for m in sent for p in m.parts if isinstance(p, ToolReturnPart)}


def test_the_capability_repairs_a_run_s_history_before_pydantic_ai_does() -> None:
    """pydantic-ai repairs the history a run is given before any history processor sees it: it drops an orphan
    result and answers a missing one in its own words. The capability's repair must come first."""
    history = _valid()
    history[2] = ModelRequest(parts=[_part(history[2], 0),  # c2's result is missing
                                     ToolReturnPart("shell", "orphan output 42", "ghost", timestamp=T0)])
    sent = _sent_by_agent(history, "continue")[-1]
    assert answered(sent)
    c2 = _results(sent)["c2"]
    assert c2.metadata == {SYNTHESIZED: True} and c2.outcome == "interrupted"  # not pydantic-ai's own return
    assert "safe to run it again" in str(c2.content)  # is_read_only reaches the loop's repair
    notes = [p for m in sent for p in m.parts if isinstance(p, UserPromptPart) and "orphan output 42" in str(p.content)]
    assert len(notes) == 1  # the orphan's text is kept, as a note
    assert "ghost" not in _results(sent)


def test_the_capability_answers_a_reply_left_open_mid_history() -> None:
    history = [*_valid()[:2], ModelRequest(parts=[UserPromptPart("are you there?", timestamp=T0)]),
               ModelResponse(parts=[TextPart("yes")], timestamp=T0)]
    sent = _sent_by_agent(history, "continue")[-1]
    assert answered(sent)
    results = _results(sent)
    assert sorted(results) == ["c1", "c2"] and all(r.metadata == {SYNTHESIZED: True} for r in results.values())


def test_a_run_given_no_prompt_still_runs_the_last_reply_s_calls() -> None:
    """pydantic-ai runs the open calls of a history's last reply when the run has no new prompt: the capability
    leaves them for it, and repairs what comes before."""
    history = [*_valid()[:2], ModelRequest(parts=[ToolReturnPart("shell", "a.txt", "c1", timestamp=T0)]),  # no c2
               ModelResponse(parts=[ToolCallPart("read", {"p": "b"}, "c3")], timestamp=T0)]
    ran: list[str] = []

    def read(p: str) -> str:
        ran.append(p)
        return f"contents of {p}"

    sent = _sent_by_agent(history, None, read=read)[-1]
    assert answered(sent) and ran == ["b"]
    results = _results(sent)
    assert results["c3"].content == "contents of b" and not results["c3"].metadata  # run, not synthesized
    assert results["c2"].metadata == {SYNTHESIZED: True}


def test_the_capability_with_a_valid_history_sends_it_unchanged() -> None:
    history = _valid()
    sent = _sent_by_agent(history, "more")[-1]
    assert sent[:len(history)] == history


@examples(300)
@given(history=messy_histories())
def test_the_fast_validity_check_never_skips_a_repair(history: list[ChatMessage]) -> None:
    from chatmend.bridges.pydantic_ai import _already_valid, _to_neutral
    from chatmend.repair import repair_history

    for open_last in (False, True):
        for messages in (_as_pydantic_ai(history), repair(_as_pydantic_ai(history), leave_open_last=open_last)):
            if _already_valid(messages, leave_open_last=open_last):
                assert not repair_history(_to_neutral(messages)[0], leave_open_last=open_last).changed
    assert _already_valid(repair(_as_pydantic_ai(history)))  # a repaired history takes the fast path next time
