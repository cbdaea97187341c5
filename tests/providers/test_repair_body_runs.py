"""`plan_rewrite`: results lost around a kept one make one run, so the writer sees the call before every result."""

from __future__ import annotations

import pytest

from chatmend import ChatMessage, TextPart, ToolCall, providers


def _history() -> list[ChatMessage]:
    def result(call_id: str) -> ChatMessage:
        return ChatMessage(role="tool", content=(TextPart(text="ok"),), tool_call_id=call_id)

    calls = tuple(ToolCall(id=f"id{k}", name="search") for k in (1, 2, 3))
    return [ChatMessage(role="user", content="go"), ChatMessage(role="assistant", tool_calls=calls),
            result("id1"), result("id2"), result("id3"), ChatMessage(role="user", content="thanks")]


@pytest.mark.parametrize("name", providers.names())
def test_the_results_before_and_after_a_kept_result_are_written_with_their_call(name: str) -> None:
    provider = providers.get(name)
    body = provider.to_request(_history(), model="m-1")
    items = body[provider.list_key]
    # keep the calls and the middle result only (for formats of one item per message): id1 and id3 are lost
    kept = [items[1], items[3]] if len(items) == 6 else items
    repaired = provider.repair_body({**body, provider.list_key: kept})
    assert provider.check(repaired.body) == []
    assert provider.repair_body(repaired.body).body == repaired.body
