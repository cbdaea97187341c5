"""`keep_answer_order`: where a history lives (a store, a body), results written in the order their tools finished
are neither a problem nor a change; everything else repair does stays."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, ToolCall, repair_history
from chatmend.answer_order import keep_answer_order, reordered_only
from tests.strategies import examples, messy_histories


def _call(call_id: str) -> ToolCall:
    return ToolCall(id=call_id, name="search", arguments={})


def _result(call_id: str, text: str = "ok") -> ChatMessage:
    return ChatMessage(role="tool", tool_call_id=call_id, tool_name="search", content=text)


def _reply(*ids: str) -> ChatMessage:
    return ChatMessage(role="assistant", content="", tool_calls=tuple(_call(i) for i in ids))


PROMPT = ChatMessage(role="user", content="go")


def test_results_in_the_order_the_tools_finished_are_no_change() -> None:
    history = [PROMPT, _reply("a", "b", "c"), _result("c"), _result("a"), _result("b")]
    result = repair_history(history)
    assert result.moved  # the neutral rule puts them in call order
    assert reordered_only(history, result) == set(result.moved)
    kept = keep_answer_order(history, result)
    assert not kept.changed and kept.messages == history
    assert [o.message_index for o in kept.origins()] == [0, 1, 2, 3, 4]


def test_a_missing_result_is_added_after_the_results_kept_in_their_order() -> None:
    history = [PROMPT, _reply("a", "b", "c"), _result("c"), _result("a")]
    kept = keep_answer_order(history, repair_history(history))
    assert [m.tool_call_id for m in kept.messages[2:]] == ["c", "a", "b"]
    assert [c.id for c in kept.interrupted] == ["b"] and kept.moved == []
    assert [o.kind for o in kept.origins()] == ["input", "input", "input", "input", "synthetic"]


def test_a_result_after_a_prompt_is_still_moved() -> None:
    history = [PROMPT, _reply("a", "b"), _result("b"), ChatMessage(role="user", content="hurry"), _result("a")]
    result = repair_history(history)
    kept = keep_answer_order(history, result)
    assert kept.moved == [4]  # needed: Anthropic and Chat want it in the turn right after the calls
    assert [m.role for m in kept.messages] == ["user", "assistant", "tool", "tool", "user"]
    assert reordered_only(history, result) == set()


def test_a_turn_with_nothing_moved_in_it_stays_as_repair_wrote_it() -> None:
    first = [PROMPT, _reply("a", "b"), _result("b")]  # b kept, a synthetic: repair's own order
    history = [*first, _reply("c", "d"), _result("d"), _result("c")]
    kept = keep_answer_order(history, repair_history(history))
    assert [m.tool_call_id for m in kept.messages[2:4]] == ["a", "b"]
    assert [m.tool_call_id for m in kept.messages[5:]] == ["d", "c"]
    alone = keep_answer_order(first, repair_history(first))
    assert alone.messages == kept.messages[:4]  # decided turn by turn: a part repairs as the whole does


def _answered_in_their_turn(messages: list[ChatMessage]) -> bool:
    """Every reply's calls are answered, once each, by the run of results right after it (any order)."""
    for i, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            end = i + 1
            while end < len(messages) and messages[end].role == "tool":
                end += 1
            if Counter(m.tool_call_id for m in messages[i + 1:end]) != Counter(c.id for c in message.tool_calls):
                return False
    return True


@examples(200)
@given(messy_histories())
def test_keeping_the_answer_order_keeps_every_message_valid_and_is_idempotent(history: list[ChatMessage]) -> None:
    result = repair_history(history)
    kept = keep_answer_order(history, result)
    assert Counter(map(id, kept.messages)) == Counter(map(id, result.messages))  # the same messages
    assert _answered_in_their_turn(kept.messages)
    assert set(kept.moved) <= set(result.moved)
    assert kept.interrupted == result.interrupted and kept.notes == result.notes
    assert [o for o in kept.origins() if o.kind != "input"] == [o for o in result.origins() if o.kind != "input"]
    again = keep_answer_order(kept.messages, repair_history(kept.messages))
    assert not again.changed and again.messages == kept.messages


@examples(200)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_a_history_valid_but_for_the_order_of_its_results_is_left_as_it_is(calls: list[int], rng: object) -> None:
    history: list[ChatMessage] = [PROMPT]
    for turn, count in enumerate(calls):
        ids = [f"t{turn}c{c}" for c in range(count)]
        results = [_result(i) for i in ids]
        rng.shuffle(results)  # type: ignore[attr-defined]
        history += [_reply(*ids), *results]
    kept = keep_answer_order(history, repair_history(history))
    assert not kept.changed and kept.messages == history
