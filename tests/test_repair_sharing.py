"""repair_history shares what it does not change, and leaves the garbage collector as it found it."""

from __future__ import annotations

import gc
import threading
import tracemalloc
from collections.abc import Callable, Iterator

import pytest

from chatmend import ChatMessage, ToolCall, repair_history
from chatmend import repair as repair_module
from chatmend.ids import FinalIds
from chatmend.repair import PROMOTE_FROM, promote_young, young_collections_only


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
    """Whatever a test does to the collector, the next test finds it on, with the thresholds it had."""
    thresholds = gc.get_threshold()
    yield
    gc.enable()
    gc.set_threshold(*thresholds)


def only_young() -> bool:
    """True when the collector runs young collections and never an older generation's."""
    young, middle, old = gc.get_threshold()
    return gc.isenabled() and young > 0 and middle >= 2**31 - 1 and old >= 2**31 - 1


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
    gc.set_threshold(500, 7, 9)
    seen: list[bool] = []

    def is_read_only(name: str) -> bool:  # called inside the pass, for an interrupted call
        seen.append(only_young())
        return False

    repair_history(valid_history(3), is_read_only=is_read_only)
    assert seen == [] and gc.isenabled() is enabled and gc.get_threshold() == (500, 7, 9)
    repair_history([ChatMessage(role="assistant", content="", tool_calls=(ToolCall(id="a", name="s"),))],
                   is_read_only=is_read_only)
    assert seen == [enabled]  # a collector that was off stays off
    with young_collections_only():
        assert only_young() is enabled
        with young_collections_only():
            assert only_young() is enabled
        assert only_young() is enabled  # the outer pass still holds
    assert gc.isenabled() is enabled and gc.get_threshold() == (500, 7, 9)


@pytest.mark.usefixtures("collector")
def test_a_collector_set_never_to_collect_is_left_alone() -> None:
    gc.enable()
    gc.set_threshold(0)  # threshold0 = 0: no automatic collection at all
    before = gc.get_threshold()
    with young_collections_only():
        assert gc.get_threshold() == before
    assert gc.get_threshold() == before and gc.isenabled()


@pytest.mark.usefixtures("collector")
def test_a_collector_without_generations_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(repair_module, "_get_threshold", None)  # as where gc has no get_threshold (not CPython)
    gc.enable()
    before = gc.get_threshold()
    with young_collections_only():
        assert gc.get_threshold() == before and gc.isenabled()
    assert repair_history(valid_history(3)).messages == valid_history(3)
    assert gc.get_threshold() == before and gc.isenabled()


@pytest.mark.usefixtures("collector")
def test_young_collections_run_during_a_pass_and_older_ones_do_not() -> None:
    gc.enable()
    seen: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(watch)
    try:
        with young_collections_only():
            kept = [[i] for i in range(200_000)]  # many container allocations: many young collections
    finally:
        gc.callbacks.remove(watch)
    assert len(kept) == 200_000
    assert seen and set(seen) == {0}


@pytest.mark.usefixtures("collector")
def test_the_collector_comes_back_after_an_exception() -> None:
    gc.enable()
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), young_collections_only():
        raise RuntimeError("boom")
    assert gc.isenabled() and gc.get_threshold() == before
    with pytest.raises(ValueError):
        repair_history([{"role": "robot"}])
    assert gc.isenabled() and gc.get_threshold() == before


@pytest.mark.usefixtures("collector")
def test_concurrent_passes_share_one_setting() -> None:
    gc.enable()
    before = gc.get_threshold()
    inside = threading.Barrier(2)
    leave = threading.Event()
    seen: list[bool] = []

    def worker() -> None:
        with young_collections_only():
            inside.wait()
            leave.wait()
            seen.append(only_young())

    first = threading.Thread(target=worker)
    second = threading.Thread(target=worker)
    first.start()
    second.start()
    leave.set()
    first.join()
    second.join()
    assert seen == [True, True]  # the first to leave did not restore the thresholds under the other
    assert gc.get_threshold() == before
    # Many threads repairing at once: afterwards the collector is as it was.
    threads = [threading.Thread(target=repair_history, args=(valid_history(50),)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gc.isenabled() and gc.get_threshold() == before


def test_final_ids_roll_back_to_a_mark() -> None:
    ids = FinalIds()
    assert [ids.allocate("a", 0, 0), ids.allocate("a", 1, 0)] == ["a", "a_1"]
    mark = ids.mark()
    assert [ids.allocate("a", 2, 0), ids.allocate("", 2, 1), ids.allocate("b", 2, 2)] == ["a_2", "call_2_1", "b"]
    ids.rollback(mark)
    assert ids.in_order == ["a", "a_1"] and ids.used == {"a", "a_1"}  # both views of the ids forget the same ones
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

    def in_pass() -> None:
        with young_collections_only():
            promote_young()

    assert young_collections_during(in_pass) == (1 if enabled else 0)
    assert young_collections_during(promote_young) == 0  # outside a pass the collector is not ours
    with young_collections_only():  # a valid long history allocates nothing: one collection, before the list fills
        assert young_collections_during(lambda: repair_history(long_history)) == (1 if enabled else 0)
        assert young_collections_during(lambda: repair_history(valid_history(3))) == 0  # a short one: none
    assert gc.isenabled() is enabled
