"""repair_history shares what it does not change (tests/test_no_side_effects.py: it changes no process state)."""

from __future__ import annotations

import tracemalloc

from chatmend import ChatMessage, ToolCall, repair_history
from chatmend.ids import FinalIds


def valid_history(turns: int) -> list[ChatMessage]:
    history = [ChatMessage(role="system", content="be careful")]
    for turn in range(turns):
        calls = tuple(ToolCall(id=f"call_{turn}_{i}", name="shell", arguments={"n": i}) for i in range(2))
        history.append(ChatMessage(role="user", content=f"step {turn}"))
        history.append(ChatMessage(role="assistant", content="", tool_calls=calls))
        history += [ChatMessage(role="tool", tool_call_id=c.id, tool_name="shell", content="ok") for c in calls]
        history.append(ChatMessage(role="assistant", content=f"done {turn}"))
    return history


def test_a_valid_history_comes_back_as_the_inputs_own_objects() -> None:
    history = valid_history(500)
    result = repair_history(history)
    assert len(result.messages) == len(history)
    assert all(a is b for a, b in zip(result.messages, history))
    assert result.messages is not history  # a list of its own: the caller may change it
    assert not result.changed


def test_a_valid_history_allocates_no_message() -> None:
    history = valid_history(500)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        result = repair_history(history)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = [s for s in after.compare_to(before, "filename") if s.count_diff > 0]
    assert not [s for s in grown if s.traceback[0].filename.endswith(("messages.py", "main.py"))]
    assert result.messages == history


def test_unchanged_messages_of_a_messy_history_are_shared() -> None:
    history = [ChatMessage(role="user", content="go"),
               ChatMessage(role="assistant", content="", tool_calls=(ToolCall(id="a", name="s"),)),
               ChatMessage(role="user", content="steer"),
               ChatMessage(role="tool", tool_call_id="a", content="ok")]
    out = repair_history(history).messages
    assert out == [history[0], history[1], history[3], history[2]]
    assert out[0] is history[0] and out[1] is history[1] and out[2] is history[3] and out[3] is history[2]


def test_final_ids_roll_back_to_a_mark() -> None:
    ids = FinalIds()
    assert [ids.allocate("a", 0, 0), ids.allocate("a", 1, 0)] == ["a", "a_1"]
    mark = ids.mark()
    assert [ids.allocate("a", 2, 0), ids.allocate("", 2, 1), ids.allocate("b", 2, 2)] == ["a_2", "call_2_1", "b"]
    ids.rollback(mark)
    assert ids.in_order == ["a", "a_1"] and ids.used == {"a", "a_1"}  # both views of the ids forget the same ones
    assert [ids.allocate("b", 3, 0), ids.allocate("a", 3, 1), ids.allocate("", 2, 1)] == ["b", "a_2", "call_2_1"]
