"""repair_history shares what it does not change, and leaves the garbage collector as it found it."""

from __future__ import annotations

import gc
import threading
import tracemalloc
from collections.abc import Callable, Iterator

import pytest

from chatmend import ChatMessage, ToolCall, repair_history
from chatmend.ids import FinalIds
from chatmend.repair import PROMOTE_FROM, paused_gc, promote_young


def valid_history(turns: int) -> list[ChatMessage]:
    history = [ChatMessage(role="system", content="be careful")]
    for turn in range(turns):
        calls = tuple(ToolCall(id=f"call_{turn}_{i}", name="shell", arguments={"n": i}) for i in range(2))
        history.append(ChatMessage(role="user", content=f"step {turn}"))
        history.append(ChatMessage(role="assistant", content="", tool_calls=calls))
        history += [ChatMessage(role="tool", tool_call_id=c.id, tool_name="shell", content="ok") for c in calls]
        history.append(ChatMessage(role="assistant", content=f"done {turn}"))
    return history


@pytest.fixture
def collector() -> Iterator[None]:
    """Whatever a test does to the collector, the next test finds it on."""
    yield
    gc.enable()


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


@pytest.mark.usefixtures("collector")
@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_comes_back_as_it_was(enabled: bool) -> None:
    gc.enable() if enabled else gc.disable()
    repair_history(valid_history(3))
    assert gc.isenabled() is enabled
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled() is enabled


@pytest.mark.usefixtures("collector")
def test_the_collector_comes_back_after_an_exception() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("boom")
    assert gc.isenabled()
    with pytest.raises(ValueError):
        repair_history([{"role": "robot"}])
    assert gc.isenabled()


@pytest.mark.usefixtures("collector")
def test_concurrent_passes_share_one_pause() -> None:
    gc.enable()
    inside = threading.Barrier(2)
    leave = threading.Event()
    seen: list[bool] = []

    def worker() -> None:
        with paused_gc():
            inside.wait()
            leave.wait()
            seen.append(gc.isenabled())

    first = threading.Thread(target=worker)
    second = threading.Thread(target=worker)
    first.start()
    second.start()
    leave.set()
    first.join()
    second.join()
    assert seen == [False, False]  # the first to leave did not turn it back on under the other
    assert gc.isenabled()
    # Many threads repairing at once: afterwards the collector is on again.
    threads = [threading.Thread(target=repair_history, args=(valid_history(50),)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gc.isenabled()


def test_final_ids_roll_back_to_a_mark() -> None:
    ids = FinalIds()
    assert [ids.allocate("a", 0, 0), ids.allocate("a", 1, 0)] == ["a", "a_1"]
    mark = ids.mark()
    assert [ids.allocate("a", 2, 0), ids.allocate("", 2, 1), ids.allocate("b", 2, 2)] == ["a_2", "call_2_1", "b"]
    ids.rollback(mark)
    assert [ids.allocate("b", 3, 0), ids.allocate("a", 3, 1), ids.allocate("", 2, 1)] == ["b", "a_2", "call_2_1"]


def young_collections_during(action: Callable[[], object]) -> int:
    """How many collections of the young generation `action` ran."""
    seen: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 0:
            seen.append(0)

    gc.callbacks.append(watch)
    try:
        action()
    finally:
        gc.callbacks.remove(watch)
    return len(seen)


@pytest.mark.usefixtures("collector")
@pytest.mark.parametrize("enabled", [True, False])
def test_a_long_pass_runs_one_young_collection_first_only_when_the_collector_was_on(enabled: bool) -> None:
    long_history = valid_history(PROMOTE_FROM // 4)
    assert len(long_history) >= PROMOTE_FROM
    gc.enable() if enabled else gc.disable()

    def in_pause() -> None:
        with paused_gc():
            promote_young()

    assert young_collections_during(in_pause) == (1 if enabled else 0)
    assert young_collections_during(promote_young) == 0  # outside a pause the collector is not ours
    with paused_gc():  # a long pass: one collection, before its output list fills
        assert young_collections_during(lambda: repair_history(long_history)) == (1 if enabled else 0)
        assert young_collections_during(lambda: repair_history(valid_history(3))) == 0  # a short one: none
    assert gc.isenabled() is enabled
