"""trim_history: whole turns dropped from the oldest end, never a call split from its result."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, ToolCall, TrimResult, dumps, repair_history, trim_history
from chatmend.repair import is_placeholder
from chatmend.trim import cut_points, rough_tokens
from tests.strategies import examples, messy_histories, valid_histories


def U(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def S(text: str) -> ChatMessage:
    return ChatMessage(role="system", content=text)


def A(*calls: tuple[str, str], content: str = "") -> ChatMessage:
    return ChatMessage(role="assistant", content=content,
                       tool_calls=tuple(ToolCall(id=i, name=n) for i, n in calls))


def T(call_id: str, content: str = "ok") -> ChatMessage:
    return ChatMessage(role="tool", tool_call_id=call_id, content=content)


def one(_: ChatMessage) -> int:
    return 1


def agent_history() -> list[ChatMessage]:
    return [S("sys"), U("q1"), A(("a", "search")), T("a"), A(content="a1"),
            U("q2"), A(("b", "read")), U("steer"), T("b"), A(content="a2"),
            U("q3"), A(content="a3")]


@pytest.mark.parametrize(("options", "head", "start"), [
    # q2's turn holds 5 messages: with the system prompt and q3's turn, 8 > 6, so only q3's turn is left.
    ({"max_messages": 6}, 1, 10),
    ({"max_messages": 4, "keep_first_user": True}, 2, 10),  # the task stays pinned after the system prompt
    ({"max_messages": 7, "keep_system": False}, 0, 5),  # the system prompt goes with the first turn
], ids=["system-kept", "keep-first-user", "keep-system-false"])
def test_drops_whole_turns_from_the_oldest_end_and_keeps_the_head(options: dict[str, Any], head: int,
                                                                  start: int) -> None:
    history = agent_history()
    result = trim_history(history, **options)
    assert (result.head, result.start) == (head, start)
    assert result.kept == [*history[:head], *history[start:]]
    assert result.dropped == history[head:start]


def test_the_cut_is_the_earliest_turn_that_fits() -> None:
    history = agent_history()
    assert trim_history(history, max_messages=12).start == 1  # everything fits: nothing dropped
    assert trim_history(history, max_messages=11).start == 5
    assert trim_history(history, max_messages=8).start == 5
    assert trim_history(history, max_messages=7).start == 10
    result = trim_history(history, max_messages=8, count=one)
    assert result.kept == [history[0], *history[5:]]
    assert result.dropped == history[1:5]
    assert result.fits and result.tokens == 8


@pytest.mark.parametrize(("history", "points"), [
    (agent_history(), [1, 5, 10]),  # a steer between a call and its result is not a cut point (from index 1 on)
    ([U("q"), A(("a", "search")), T("a"), U("stop"), A(content="ok")], [0, 3]),  # one after every result is
    # a placeholder does not end the span, so a result after it still pins the steer
    ([U("q"), A(("a", "search")), A(content=" "), U("steer"), T("a"), A(content="done")], [0]),
], ids=["steer-before-result", "steer-after-results", "placeholder"])
def test_a_cut_point_is_a_user_message_no_result_of_an_open_call_follows(history: list[ChatMessage],
                                                                         points: list[int]) -> None:
    assert cut_points(history, 1 if history[0].role == "system" else 0) == points


def test_when_the_last_turn_does_not_fit_it_is_kept_anyway() -> None:
    history = agent_history()
    result = trim_history(history, max_messages=2)
    assert not result.fits
    assert result.start == 10 and result.kept == [history[0], *history[10:]]


def test_without_limits_nothing_is_dropped() -> None:
    history = agent_history()
    result = trim_history(history)
    assert result.kept == history and result.dropped == [] and result.fits


def test_the_default_counter_is_a_quarter_of_the_canonical_json_rounded_up() -> None:
    message = U("x" * 10)
    assert rough_tokens(message) == -(-len(dumps([message]).rstrip("\n")) // 4)
    history = agent_history()
    assert trim_history(history, max_tokens=10**6).tokens == sum(rough_tokens(m) for m in history)


def test_count_is_any_callable_and_a_bad_count_is_a_clear_error() -> None:
    history = agent_history()
    assert trim_history(history, max_tokens=3, count=lambda m: len(str(m.content))).fits is False
    with pytest.raises(ValueError, match="message 0"):
        trim_history(history, max_tokens=3, count=lambda m: -1)
    with pytest.raises(ValueError, match="max_tokens"):
        trim_history(history, max_tokens=-1)
    with pytest.raises(ValueError, match="headroom"):
        trim_history(history, max_tokens=1, headroom=1.0)


def test_previous_keeps_the_cut_until_the_history_no_longer_fits() -> None:
    history = agent_history()
    first = trim_history(history[:10], max_messages=6)
    assert first.start == 5
    # Two more messages: 7 from the cut, over 6, so it moves; at 8 it would have stayed.
    grown = trim_history(history, max_messages=8, previous=first)
    assert grown.start == 5 and grown.kept[: len(first.kept)] == first.kept
    moved = trim_history(history, max_messages=6, previous=first)
    assert moved.start == 10
    assert trim_history(history, max_messages=100, previous=moved.start).start == 10  # never back


def test_headroom_moves_the_cut_further_when_it_has_to_move() -> None:
    history = [U("q1"), A(content="1"), U("q2"), A(content="2"), U("q3"), A(content="3"), U("q4"), A(content="4")]
    assert trim_history(history, max_messages=6).start == 2
    assert trim_history(history, max_messages=6, headroom=0.5).start == 6
    assert trim_history(history, max_messages=8, headroom=0.5).start == 0  # fits: no move


def test_dicts_are_read_and_the_input_is_not_mutated() -> None:
    history: list[Any] = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    before = copy.deepcopy(history)
    result = trim_history(history, max_messages=1)
    assert history == before
    assert result.kept == [ChatMessage(role="user", content="q"), ChatMessage(role="assistant", content="a")]


# --- properties ----------------------------------------------------------------------------------------------

counters = st.sampled_from([rough_tokens, one, lambda m: len(m.tool_calls) + 1])
budgets = st.fixed_dictionaries({}, optional={"max_tokens": st.integers(0, 200), "max_messages": st.integers(0, 16)})
options = st.fixed_dictionaries({}, optional={"keep_system": st.booleans(), "keep_first_user": st.booleans(),
                                              "headroom": st.sampled_from([0.0, 0.25, 0.5])})
histories = st.one_of(messy_histories(max_size=16), valid_histories(max_turns=6))


def _kept_index(result: TrimResult, j: int) -> int:
    """The input index of `result.kept[j]`."""
    return j if j < result.head else j - result.head + result.start


@given(histories, budgets, options, counters)
@examples(300)
def test_kept_and_dropped_partition_the_input_in_order(history: list[ChatMessage], budget: dict[str, Any],
                                                        opts: dict[str, Any], count: Any) -> None:
    result = trim_history(history, count=count, **budget, **opts)
    assert result.kept == history[: result.head] + history[result.start :]
    assert result.dropped == history[result.head : result.start]
    assert all(a is b for a, b in zip(result.kept + result.dropped,
                                      history[: result.head] + history[result.start :]
                                      + history[result.head : result.start]))
    assert result.head <= result.start <= len(history)


@given(histories, budgets, options, counters)
@examples(300)
def test_a_trimmed_history_starts_with_a_user_message_and_splits_no_call(
    history: list[ChatMessage], budget: dict[str, Any], opts: dict[str, Any], count: Any
) -> None:
    result = trim_history(history, count=count, **budget, **opts)
    if result.dropped:
        assert history[result.start].role == "user"
    whole, kept = repair_history(history), repair_history(result.kept)
    # Repairing the kept part answers no call and makes no note that repairing the whole would not.
    assert {(_kept_index(result, m), c) for m, c in kept.interrupted_at} <= set(whole.interrupted_at)
    assert {_kept_index(result, i) for i in kept.notes} <= set(whole.notes)


@given(histories, budgets, options, counters)
@examples(300)
def test_within_budget_when_possible_and_no_more_dropped_than_needed(
    history: list[ChatMessage], budget: dict[str, Any], opts: dict[str, Any], count: Any
) -> None:
    result = trim_history(history, count=count, **budget, **opts)

    def fits(start: int) -> bool:
        kept = history[: result.head] + history[start:]
        return bool(sum(map(count, kept)) <= budget.get("max_tokens", 10**9)
                    and len(kept) <= budget.get("max_messages", 10**9))

    points = cut_points(history, result.head)
    assert result.fits == fits(result.start)
    assert result.tokens == sum(map(count, result.kept))
    assert result.start in points
    if not result.fits:
        assert result.start == points[-1]
    elif not opts.get("headroom"):
        assert all(not fits(p) for p in points if p < result.start)
    if result.fits:  # trimming again keeps it whole
        again = trim_history(result.kept, count=count, **budget, **opts)
        assert again.kept == result.kept


@given(histories, budgets, options)
@examples(200)
def test_deterministic(history: list[ChatMessage], budget: dict[str, Any], opts: dict[str, Any]) -> None:
    a = trim_history(history, **budget, **opts)
    b = trim_history(copy.deepcopy(history), **budget, **opts)
    assert dumps(a.kept) == dumps(b.kept) and (a.start, a.head, a.fits, a.tokens) == (b.start, b.head, b.fits, b.tokens)


@given(histories, st.data(), budgets, options)
@examples(300)
def test_with_previous_the_cut_never_moves_back_and_stays_while_it_fits(
    history: list[ChatMessage], data: st.DataObject, budget: dict[str, Any], opts: dict[str, Any]
) -> None:
    cut = data.draw(st.integers(0, len(history)))
    first = trim_history(history[:cut], **budget, **opts)
    then = trim_history(history, previous=first, **budget, **opts)
    points = cut_points(history, then.head)
    if any(p >= first.start for p in points):
        assert then.start >= first.start
    if first.start in points:
        if then.start == first.start:
            assert then.kept[: len(first.kept)] == first.kept
        # it only moved because it had to
        stayed = history[: then.head] + history[first.start :]
        if (sum(map(rough_tokens, stayed)) <= budget.get("max_tokens", 10**9)
                and len(stayed) <= budget.get("max_messages", 10**9)):
            assert then.start == first.start


def test_placeholders_are_not_turn_boundaries() -> None:
    history = [U("q"), A(("a", "s")), A(content=""), U("steer"), T("a")]
    assert is_placeholder(history[2])
    assert trim_history(history, max_messages=1).start == 0
