"""Repairer: every call gives what repair_history gives, whatever the sequence of histories it is shown."""

from __future__ import annotations

import copy
import pickle
import tracemalloc
from dataclasses import asdict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, ToolCall, dumps, loads, providers, repair_history
from chatmend.exceptions import HistoryError, UnsupportedError
from chatmend.incremental import Repairer
from chatmend.repair import HistoryRepair, Origin, RepairResult
from chatmend.results import NOTE_SOURCE
from tests.providers.common import writable
from tests.strategies import examples, messy_histories

PROPERTY = examples(200)


def U(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def A(*ids: str, content: str = "") -> ChatMessage:
    return ChatMessage(role="assistant", content=content, tool_calls=tuple(ToolCall(id=i, name="search") for i in ids))


def T(call_id: str, content: str = "ok") -> ChatMessage:
    return ChatMessage(role="tool", tool_call_id=call_id, content=content)


def fields(result: RepairResult) -> tuple[Any, ...]:
    return (result.messages, result.interrupted, result.dropped, result.moved, result.notes, result.renamed,
            result.final_ids, result.interrupted_at, result.origin_runs, result.origins(), result.stripped,
            result.stripped_at)


def assert_same(repairer: Repairer, history: list[ChatMessage], **kwargs: Any) -> RepairResult:
    got = repairer.repair(history)
    expected = repair_history(history, **kwargs)
    assert fields(got) == fields(expected)
    assert dumps(got.messages) == dumps(expected.messages)
    return got


# One step of what a caller may do to its history between two repairs.
steps = st.one_of(
    st.tuples(st.just("append"), messy_histories(max_size=6)),
    st.tuples(st.just("append_one"), messy_histories(max_size=1)),
    st.tuples(st.just("truncate"), st.integers(0, 40)),
    st.tuples(st.just("edit"), st.integers(0, 40), messy_histories(max_size=1)),
    st.tuples(st.just("replace"), messy_histories()),
    st.tuples(st.just("same"), st.none()),
)


def apply(history: list[ChatMessage], step: tuple[Any, ...]) -> list[ChatMessage]:
    """The caller's next history: sometimes its list changed in place, sometimes a new one."""
    kind = step[0]
    if kind in ("append", "append_one"):
        history.extend(step[1])  # in place: the Repairer must have kept its own copy
        return history
    if kind == "truncate":
        return history[: step[1]]
    if kind == "edit" and history and step[2]:
        history = list(history)
        history[step[1] % len(history)] = step[2][0]
        return history
    if kind == "replace":
        return list(step[1])
    return history


@PROPERTY
@given(messy_histories(), st.lists(steps, max_size=8), st.booleans())
def test_any_sequence_of_appends_and_edits_gives_what_repair_history_gives(
    start: list[ChatMessage], sequence: list[tuple[Any, ...]], read_only: bool
) -> None:
    is_read_only = (lambda name: name.startswith("read")) if read_only else None
    repairer = Repairer(is_read_only=is_read_only)
    history = list(start)
    assert_same(repairer, history, is_read_only=is_read_only)
    for step in sequence:
        history = apply(history, step)
        assert_same(repairer, history, is_read_only=is_read_only)


@PROPERTY
@given(messy_histories(max_size=30))
def test_a_session_growing_one_message_at_a_time(full: list[ChatMessage]) -> None:
    repairer = Repairer()
    history: list[ChatMessage] = []
    for message in full:
        history.append(message)
        assert_same(repairer, history)


def test_only_the_last_span_is_redone() -> None:
    # is_read_only is asked once per interrupted call of each span closed: a reused prefix asks nothing.
    asked: list[str] = []

    def is_read_only(name: str) -> bool:
        asked.append(name)
        return False

    history = [U("go")]
    for turn in range(50):
        history += [A(f"c{turn}"), U("steer"), A(content=f"done {turn}")]  # every call interrupted
    repairer = Repairer(is_read_only=is_read_only)
    repairer.repair(history)
    assert len(asked) == 50
    asked.clear()
    history += [A("x", "y"), T("y")]
    result = repairer.repair(history)
    assert len(asked) == 1  # x, in the new span
    history.append(T("x"))
    result = repairer.repair(history)
    assert len(asked) == 1  # the last span was reopened and x got its result: nobody asked again
    assert result.messages[-2:] == [T("x"), T("y")]
    assert fields(result) == fields(repair_history(history))


def test_an_equal_prefix_counts_as_the_same_and_keeps_the_objects_seen_first() -> None:
    history = [U("go"), A("a"), T("a"), A("a"), A(content="done")]
    repairer = Repairer()
    first = repairer.repair(history)
    copy = [*loads(dumps(history)), U("more")]
    assert copy[0] is not history[0]
    second = repairer.repair(copy)
    assert fields(second) == fields(repair_history(copy))
    assert second.messages[0] is first.messages[0]


def test_what_the_caller_does_with_a_result_does_not_reach_the_repairer() -> None:
    history = [U("go"), A("a", "a"), T("a")]
    repairer = Repairer()
    result = repairer.repair(history)
    result.messages.append(U("mine"))
    result.interrupted.clear()
    result.renamed.clear()
    history.append(T("a"))
    assert_same(repairer, history)


def test_bad_input_in_the_new_messages_names_its_index_and_leaves_the_repairer_usable() -> None:
    history: list[Any] = [U("go"), A("a"), T("a")]
    repairer = Repairer()
    repairer.repair(history)
    with pytest.raises(HistoryError) as info:
        repairer.repair([*history, {"role": "robot"}])
    assert info.value.index == 3
    assert_same(repairer, [*history, U("next")])


def test_an_exception_from_is_read_only_propagates_and_the_next_call_starts_over() -> None:
    fail = [True]

    def is_read_only(name: str) -> bool:
        if fail[0]:
            raise RuntimeError("boom")
        return True

    repairer = Repairer(is_read_only=is_read_only)
    history = [U("go"), A("a"), A(content="done"), A("b")]
    with pytest.raises(RuntimeError):
        repairer.repair(history)
    fail[0] = False
    assert_same(repairer, history, is_read_only=is_read_only)


def test_dict_messages_and_tuples_are_accepted() -> None:
    history = (asdict(U("go")), asdict(A("a")), asdict(T("a")))
    repairer = Repairer()
    assert repairer.repair(history).messages == repair_history(history).messages
    assert repairer.repair((*history, asdict(U("x")))).messages == repair_history([*history, U("x")]).messages


def test_not_a_list_is_bad_input() -> None:
    with pytest.raises(HistoryError):
        Repairer().repair("hello")


def test_the_same_history_again_runs_no_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[int] = []
    run = HistoryRepair.run

    def counted(self: HistoryRepair, *args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return run(self, *args, **kwargs)

    monkeypatch.setattr(HistoryRepair, "run", counted)
    history = [U("go"), A("a", "b"), T("b")]  # the last span is open: a's result may still come
    repairer = Repairer()
    first = repairer.repair(history)
    again = repairer.repair(list(history))
    assert len(runs) == 1
    assert fields(again) == fields(first) == fields(repair_history(history))
    again.messages.clear()  # the caller's copy: the repairer keeps its own
    history.append(T("a"))
    runs.clear()
    repairer.repair(history)
    assert len(runs) == 1  # something new: the last span reopened
    assert_same(repairer, history)


def test_reset_starts_over() -> None:
    repairer = Repairer()
    repairer.repair([U("go"), A("a")])
    repairer.reset()
    assert_same(repairer, [U("other")])


def kimi_session() -> list[ChatMessage]:
    """Two replies restarting their ids, the second still waiting for a result: renames, an open span."""
    calls = (ToolCall(id="functions.read:0", name="read"), ToolCall(id="functions.read:1", name="read"))
    return [ChatMessage(role="user", content="q"), ChatMessage(role="assistant", tool_calls=calls),
            ChatMessage(role="tool", tool_call_id="functions.read:0", content="a"),
            ChatMessage(role="tool", tool_call_id="functions.read:1", content="b"),
            ChatMessage(role="assistant", tool_calls=calls[:1]),
            ChatMessage(role="tool", tool_call_id="functions.read:0", content="c")]


@pytest.mark.parametrize("clone", [lambda x: pickle.loads(pickle.dumps(x)), copy.deepcopy, copy.copy],
                         ids=["pickle", "deepcopy", "copy"])
def test_results_and_a_repairer_pickle_and_copy(clone: Any) -> None:
    """What users keep between turns survives pickling and copying."""
    history = kimi_session()
    result = repair_history(history)
    assert result.renamed and clone(result) == result
    assert clone(result.renamed[0]) == result.renamed[0]
    repairer = Repairer()
    repairer.repair(history)
    kept = clone(repairer)  # a session saved mid-way goes on exactly as the original
    longer = [*history, ChatMessage(role="assistant", content="done")]
    assert kept.repair(longer) == repairer.repair(longer) == repair_history(longer)


# ------------------------------------------------------------------------------- repair options (#27)

OPTION_SETS: list[dict[str, Any]] = [
    {"on_missing": "strip"},
    {"on_missing": "strip", "leave_open_last": True},
    {"leave_open_last": True, "wording": {"search": "again"}},
    {"mark": "none", "wording": str.upper},
    {"mark": "field"},
]


@PROPERTY
@given(messy_histories(), st.lists(steps, max_size=6), st.sampled_from(OPTION_SETS))
def test_a_repairer_with_options_gives_what_repair_history_gives_with_them(
    start: list[ChatMessage], sequence: list[tuple[Any, ...]], options: dict[str, Any]
) -> None:
    repairer = Repairer(**options)
    history = list(start)
    assert_same(repairer, history, **options)
    for step in sequence:
        history = apply(history, step)
        assert_same(repairer, history, **options)


@PROPERTY
@given(messy_histories(max_size=20), st.sampled_from(OPTION_SETS), st.sampled_from(providers.names()))
def test_to_request_with_options_is_the_same_body_by_a_repairer_or_without(
    full: list[ChatMessage], options: dict[str, Any], name: str
) -> None:
    provider = providers.get(name)
    full = writable(provider, full)  # (DeepSeek takes no images)
    repairer = Repairer(**options)
    for end in range(len(full) + 1):
        history = full[:end]
        try:
            fresh = provider.to_request(history, model="test-model", **options)
        except UnsupportedError as error:  # leave_open_last left calls open: no body, by a repairer neither
            if error.feature == "empty history":  # nothing to send (#21): by a repairer neither
                with pytest.raises(UnsupportedError):
                    provider.to_request(history, model="test-model", repairer=repairer)
                continue
            assert options.get("leave_open_last") and "left calls open" in str(error)
            assert repair_history(history, **options).messages != repair_history(history).messages
            with pytest.raises(UnsupportedError, match="left calls open"):
                provider.to_request(history, model="test-model", repairer=repairer)
            continue
        assert provider.to_request(history, model="test-model", repairer=repairer) == fresh
        assert provider.to_request(history, model="test-model", repairer=repairer, **options) == fresh


def test_a_repairer_refuses_options_other_than_its_own() -> None:
    history = [U("go"), A("a")]
    repairer = Repairer(on_missing="strip")
    provider = providers.get("openai_chat")
    assert repairer.options.on_missing == "strip"
    for other in ({"on_missing": "answer", "mark": "none"}, {"mark": "none"}, {"leave_open_last": True}):
        with pytest.raises(ValueError, match="give the repair options to the Repairer"):
            provider.to_request(history, model="m", repairer=repairer, **other)
    # its results were not mixed: the next one is still made under its own options
    assert repairer.repair(history).messages == [U("go")]


def test_to_request_refuses_the_calls_leave_open_last_left_open_and_writes_once_they_are_answered() -> None:
    provider = providers.get("openai_chat")
    history = [U("go"), A("a", "b"), T("b")]
    with pytest.raises(UnsupportedError, match=r"left calls open \(search \(a\)\)"):
        provider.to_request(history, model="m", leave_open_last=True)
    history.append(T("a", "found"))
    body = provider.to_request(history, model="m", leave_open_last=True)
    assert body == provider.to_request(history, model="m") and provider.check(body) == []
    assert [m.get("tool_call_id") for m in body["messages"]] == [None, None, "a", "b"]
# --- #21 item 16: one Repairer shared by threads ---------------------------------------------------------


def _growing(seed: int, turns: int) -> list[list[ChatMessage]]:
    """Successive versions of one growing history with repeated and missing results (thread `seed`'s own)."""
    history: list[ChatMessage] = [U(f"task {seed}")]
    versions = []
    for turn in range(turns):
        ids = [f"c{seed}_{turn}_{k}" for k in range(1 + (seed + turn) % 3)]
        history = [*history, A(*ids, content=f"t{seed}.{turn}")]
        versions.append(history)
        history = [*history, *(T(i, f"r{seed}") for i in ids[: 1 + turn % len(ids)])]
        if turn % 4 == seed % 4:
            history = [*history, A(ids[0])]  # an id used again: repair renames it
        versions.append(history)
    return versions


def test_a_repairer_shared_by_four_threads_gives_each_its_own_repair() -> None:
    import sys
    import threading

    shared = Repairer()
    histories = {seed: _growing(seed, 40) for seed in range(4)}
    expected = {seed: [fields(repair_history(h)) for h in versions] for seed, versions in histories.items()}
    wrong: list[tuple[int, int]] = []
    start = threading.Barrier(4)

    def hammer(seed: int) -> None:
        start.wait()
        for _ in range(3):
            for k, history in enumerate(histories[seed]):
                try:
                    if fields(shared.repair(history)) != expected[seed][k]:
                        wrong.append((seed, k))
                except Exception:  # an unsafe Repairer also breaks mid-pass
                    wrong.append((seed, -k))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, so an unsafe Repairer is caught
    try:
        threads = [threading.Thread(target=hammer, args=(seed,)) for seed in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []
    assert fields(shared.repair(histories[2][-1])) == expected[2][-1]


def test_a_repairer_called_from_its_own_is_read_only_is_an_error_not_a_deadlock() -> None:
    repairer: Repairer

    def is_read_only(name: str) -> bool:
        repairer.repair([U("again")])
        return True

    repairer = Repairer(is_read_only=is_read_only)
    with pytest.raises(RuntimeError, match="from inside its own call"):
        repairer.repair([U("x"), A("c1"), U("y")])
    assert fields(repairer.repair([U("x")])) == fields(repair_history([U("x")]))  # usable after


# ------------------------------------------------------------------ results kept while the Repairer goes on (#20)


@PROPERTY
@given(messy_histories(), st.lists(steps, max_size=8), st.sampled_from([{}, *OPTION_SETS]), st.booleans())
def test_a_result_never_changes_when_later_steps_run(
    start: list[ChatMessage], sequence: list[tuple[Any, ...]], options: dict[str, Any], read_messages_at_once: bool
) -> None:
    """Each result is read only once every step has run (most of them rolled back the span the history ended in):
    it is still the repair of its own history. With `read_messages_at_once`, its messages are read when it is
    returned and the other fields at the end."""
    repairer = Repairer(**options)
    history = list(start)
    kept: list[tuple[RepairResult, tuple[Any, ...]]] = []
    for step in [("same", None), *sequence]:
        history = apply(history, step)
        result = repairer.repair(history)
        if read_messages_at_once:
            assert result.messages == repair_history(history, **options).messages
        kept.append((result, fields(repair_history(list(history), **options))))
    for result, expected in kept:
        assert fields(result) == expected


def test_a_result_kept_while_the_next_step_reopens_its_last_span_stays_as_it_was() -> None:
    history = [U("go"), A("a"), T("a"), A("x", "y"), T("y")]  # x has no result yet: answered as interrupted
    repairer = Repairer()
    first = repairer.repair(history)
    history.append(T("x", "found"))  # the next step rolls the pass back to the span of x and y, and re-does it
    second = repairer.repair(history)
    history += [A("x"), T("x"), A(content="done")]  # and the one after goes on past it (x again: renamed)
    third = repairer.repair(history)
    # `first` is read only now: what it holds is what it held when it was returned
    assert [m.tool_call_id for m in first.messages] == [None, None, "a", None, "x", "y"]
    assert first.messages[4].is_error and first.interrupted == [ToolCall(id="x", name="search")]
    assert first.interrupted_at == [(3, 0)] and first.moved == [] and first.final_ids == ["a", "x", "y"]
    assert fields(first) == fields(repair_history(history[:5]))
    assert second.messages[4] == T("x", "found") and second.interrupted == [] and second.moved == [5]
    assert fields(second) == fields(repair_history(history[:6]))
    assert third.final_ids == ["a", "x", "y", "x_1"] and [r.new for r in third.renamed] == ["x_1"]
    assert fields(third) == fields(repair_history(history))


def test_a_result_kept_while_the_next_step_fills_the_run_it_ended_with_stays_as_it_was() -> None:
    history = [U("go"), A(content=" ")]  # a placeholder dropped at the end: the last run holds no message yet
    repairer = Repairer()
    first = repairer.repair(history)
    history.append(T("a", "late"))  # the next output message is a note: the next step marks that run as one
    second = repairer.repair(history)
    assert first.origin_runs == [0, 0, 1, 2] and first.origins() == [Origin("input", 0)]
    assert second.origin_runs == [0, 0, 1, NOTE_SOURCE, 2, 3]
    assert fields(first) == fields(repair_history(history[:2]))
    assert fields(second) == fields(repair_history(history))


def test_results_of_the_same_history_are_lists_of_their_own() -> None:
    history = [U("go"), A("a", "a"), T("a")]  # an open span, a renamed call
    repairer = Repairer()
    first, again = repairer.repair(history), repairer.repair(history)  # the second runs no pass
    expected = fields(repair_history(history))
    first.messages.append(U("mine"))
    first.final_ids.clear()
    first.renamed.clear()
    first.origin_runs.append(7)
    assert fields(again) == expected
    history.append(T("a"))
    assert_same(repairer, history)
    assert fields(again) == expected


def test_a_step_on_a_long_history_does_not_copy_it() -> None:
    """What a step allocates does not grow with the history (a copy of the output list alone: 8 bytes a message);
    reading a field of its result makes that field's list."""
    history = [U("go")]
    for turn in range(5_000):
        history += [A(f"c{turn}", f"d{turn}"), T(f"d{turn}"), U("steer")]  # every call to c interrupted
    repairer = Repairer()
    repairer.repair(history)
    history += [A("x", "y"), T("y")]
    tracemalloc.start()
    try:
        result = repairer.repair(history)
        _, step_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        messages = result.messages
        _, read_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(messages) > 20_000 and read_peak > 8 * 20_000
    assert step_peak < 8 * 2_000
    assert fields(result) == fields(repair_history(history))


@pytest.mark.parametrize("clone", [lambda x: pickle.loads(pickle.dumps(x)), copy.deepcopy, copy.copy],
                         ids=["pickle", "deepcopy", "copy"])
def test_a_result_of_a_repairer_pickles_and_copies_as_the_repair_it_is(clone: Any) -> None:
    history = kimi_session()
    repairer = Repairer()
    result = repairer.repair(history)
    cloned = clone(result)  # before any of its fields was read
    repairer.repair([*history, T("functions.read:0")])
    expected = repair_history(history)
    assert type(cloned) is RepairResult and fields(cloned) == fields(expected) and cloned == result == expected
    assert vars(cloned).keys() == vars(expected).keys()  # a plain result: nothing shared with the Repairer
    assert repr(result) == repr(expected)


def test_a_shallow_copy_of_a_repairer_goes_on_by_itself() -> None:
    history = [U("go"), A("a", "b"), T("b")]
    original = Repairer()
    original.repair(history)
    other = copy.copy(original)
    theirs = [*history, T("a"), A("a"), A("c")]
    kept = other.repair(theirs)
    mine = [*theirs, A("a"), T("a")]  # extends what the other saw: the original must not resume from there
    assert fields(original.repair(mine)) == fields(repair_history(mine))
    assert fields(kept) == fields(repair_history(theirs))
    assert fields(other.repair([*history, U("x")])) == fields(repair_history([*history, U("x")]))
