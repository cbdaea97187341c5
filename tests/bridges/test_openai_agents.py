"""chatmend.bridges.openai_agents: session items repaired, storage untouched, in the Agents SDK's own run loop."""

from __future__ import annotations

import asyncio
from typing import Any

from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, SQLiteSession
from openai import AsyncOpenAI

from chatmend import providers
from chatmend.bridges.openai_agents import RepairedSession, call_model_input_filter, repair_items
from tests.proxy.upstream import Upstream, fake_upstream

RESPONSES = providers.get("openai_responses")

BROKEN: list[Any] = [
    {"role": "user", "content": "fix the bug"},
    {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": '{"path": "a.py"}'},
    {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"},
    {"role": "user", "content": "are you there?"},
]


def _valid(items: list[Any]) -> bool:
    return RESPONSES.check({"model": "gpt-4o", "input": items}) == []


def test_missing_outputs_are_answered_in_their_own_types() -> None:
    out = repair_items(BROKEN)
    assert _valid(out) and not _valid(BROKEN)
    outputs = {i["call_id"]: i["type"] for i in out if i.get("type", "").endswith("_output")}
    assert outputs == {"call_1": "function_call_output", "call_2": "custom_tool_call_output"}
    assert out[0] is BROKEN[0] and out[-1] is BROKEN[-1]


def test_a_valid_history_is_the_same_items() -> None:
    valid = repair_items(BROKEN)
    again = repair_items(valid)
    assert again == valid and all(a is b for a, b in zip(again, valid))
    assert repair_items([]) == []


def test_the_session_gives_repaired_items_and_stores_what_was_written() -> None:
    async def main() -> tuple[list[Any], list[Any]]:
        stored = SQLiteSession("s-1")  # in memory
        session = RepairedSession(stored, is_read_only=lambda name: name == "read_file")
        await session.add_items(BROKEN)
        return await session.get_items(), await stored.get_items()

    repaired, stored = asyncio.run(main())
    assert _valid(repaired) and stored == BROKEN
    read = next(i for i in repaired if i.get("call_id") == "call_1" and i["type"] == "function_call_output")
    assert "safe to run it again" in str(read["output"])


def _agent(client: AsyncOpenAI) -> Agent[Any]:
    return Agent(name="a", instructions="Be terse.", model=OpenAIResponsesModel(model="gpt-4o", openai_client=client))


def _client(upstream: Upstream) -> AsyncOpenAI:
    """Closed by the test (`async with`): an open one leaves its socket to the collector (a ResourceWarning)."""
    return AsyncOpenAI(base_url=upstream.url + "/v1", api_key="k", max_retries=0)


def test_the_run_loop_sends_a_valid_history_with_the_session() -> None:
    async def main(upstream: Upstream) -> str:
        session = RepairedSession(SQLiteSession("s-2"))
        await session.add_items(BROKEN)
        async with _client(upstream) as client:
            result = await Runner.run(_agent(client), "continue", session=session,
                                      run_config=RunConfig(tracing_disabled=True))  # no trace export: no network
        return str(result.final_output)

    with fake_upstream() as upstream:
        assert asyncio.run(main(upstream)) == "done"
    sent = [s for s in upstream.seen if s.provider == "openai_responses"]
    assert sent and all(s.problems == [] for s in sent)
    assert any(i.get("type") == "custom_tool_call_output" for i in sent[0].json()["input"])


def test_the_input_filter_repairs_every_model_call() -> None:
    async def main(upstream: Upstream) -> None:
        config = RunConfig(call_model_input_filter=call_model_input_filter, tracing_disabled=True)
        async with _client(upstream) as client:
            await Runner.run(_agent(client), BROKEN, run_config=config)

    with fake_upstream() as upstream:
        asyncio.run(main(upstream))
    sent = [s for s in upstream.seen if s.provider == "openai_responses"]
    assert sent and all(s.problems == [] for s in sent)
