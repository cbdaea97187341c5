"""The one planner (`chatmend.planner`): the spec's rules 1 to 5 decided on stubs, with the options that change a
plan. Examples for each rule and option, and properties for the spec's guarantees on the plan itself: valid,
lossless, deterministic, idempotent, prefix-stable; `repair_history` writes exactly what the plan of its stubs says.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, TextPart, ThinkingPart, ToolCall, repair_history
from chatmend.ids import FinalIds
from chatmend.planner import (
    ANSWER,
    BLANK,
    BLANK_CALLS,
    CALL,
    CALLS,
    KEEP,
    NOTE,
    OTHER,
    REPLY,
    RESULT,
    SYNTHETIC,
    Planner,
    SpanPlan,
    Stubs,
    last_open_span,
    plan_spans,
)
from chatmend.repair import stub_history
from chatmend.results import RenamedId
from tests.strategies import examples, messy_histories

Stub = tuple[int, Any]

IDS = st.sampled_from(["a", "b", "c", "", "a_1", "call_1_0"])


@st.composite
def stub_lists(draw: st.DrawFn, max_size: int = 14) -> list[Stub]:
    """Stubs of any history: results anywhere, ids repeated or empty, blank replies, blank messages with calls."""
    calls = st.lists(IDS, min_size=1, max_size=3).map(tuple)
    stub = st.one_of(
        st.tuples(st.just(OTHER), st.none()),
        st.tuples(st.just(RESULT), IDS),
        st.tuples(st.just(RESULT), IDS),
        st.tuples(st.just(BLANK), st.none()),
        st.tuples(st.just(REPLY), st.none()),
        st.tuples(st.sampled_from([CALLS, CALLS, BLANK_CALLS]), calls),
    )
    return draw(st.lists(stub, max_size=max_size))


def plan_of(stubs: list[Stub], **options: Any) -> SpanPlan:
    return plan_spans([k for k, _ in stubs], [r for _, r in stubs], **options)


def applied(stubs: list[Stub], plan: SpanPlan) -> list[Stub]:
    """The stubs of what the plan makes: what any writer that follows it writes."""
    out: list[Stub] = []
    for step, index, argument in plan.steps:
        if step == KEEP:
            out += stubs[index:argument]
        elif step == CALL:
            kept = tuple(final for final in argument if final is not None)
            out.append((stubs[index][0], kept) if kept else (REPLY, None))  # every call stripped: a reply
        elif step == ANSWER:
            out.append((RESULT, argument))
        elif step == SYNTHETIC:
            out.append((RESULT, argument[1]))
        else:
            out.append((OTHER, None))  # a note is a user message
    return out


def sources(plan: SpanPlan) -> list[int]:
    """The input messages the plan's output takes, in output order (a synthetic result takes none)."""
    taken: list[int] = []
    for step, index, argument in plan.steps:
        if step == KEEP:
            taken += range(index, argument)
        elif step != SYNTHETIC:
            taken.append(index)
    return taken


def assert_valid(stubs: list[Stub], *, open_last: bool = False) -> None:
    """Every call answered right after it, in call order, under ids no other call uses; no blank reply; no result
    elsewhere. With `open_last`, calls of the last message with calls may lack results (the others in order)."""
    last = max((i for i, (kind, _) in enumerate(stubs) if kind >= CALLS), default=-1)
    finals: list[str] = []
    waiting: list[str] = []
    for i, (kind, ref) in enumerate(stubs):
        assert kind != BLANK
        if kind == RESULT:
            while open_last and i > last and waiting and waiting[0] != ref:
                waiting.pop(0)  # an open call of the last reply: its result has not come
            assert waiting and ref == waiting.pop(0), (ref, waiting)
            continue
        assert not waiting or (open_last and i > last), waiting
        waiting = []
        if kind >= CALLS:
            finals += ref
            waiting = list(ref)
    assert not waiting or open_last
    assert all(finals) and len(set(finals)) == len(finals)


# --- examples, one rule at a time -------------------------------------------------------------------------------


def test_a_valid_list_is_one_stretch_kept_as_it_is() -> None:
    plan = plan_of([(OTHER, None), (CALLS, ("a", "b")), (RESULT, "a"), (RESULT, "b"), (REPLY, None)])
    assert plan.steps == [(KEEP, 0, 5)] and plan.unchanged and plan.final_ids == ["a", "b"]


def test_rule_1_drops_blank_replies_inside_and_outside_spans() -> None:
    plan = plan_of([(BLANK, None), (CALLS, ("a",)), (BLANK, None), (RESULT, "a"), (OTHER, None)])
    assert plan.dropped == [0, 2] and plan.steps == [(KEEP, 1, 2), (KEEP, 3, 5)] and not plan.unchanged
    # a blank reply does not end a span: the result after it still pairs
    assert not plan.notes and not plan.interrupted


def test_rule_2_a_reply_ends_the_span_and_a_result_after_it_is_a_note() -> None:
    plan = plan_of([(CALLS, ("a",)), (REPLY, None), (RESULT, "a")])
    assert plan.interrupted == ["a"] and plan.interrupted_at == [(0, 0)] and plan.notes == [2]
    assert plan.steps == [(KEEP, 0, 1), (SYNTHETIC, 0, (0, "a")), (KEEP, 1, 2), (NOTE, 2, -1)]


def test_rule_3_results_move_to_their_calls_and_repeated_ids_in_one_reply_pair_in_order() -> None:
    stubs: list[Stub] = [(CALLS, ("a", "b")), (RESULT, "b"), (OTHER, None), (RESULT, "a")]
    plan = plan_of(stubs)
    assert plan.moved == [3] and applied(stubs, plan) == [stubs[0], (RESULT, "a"), (RESULT, "b"), (OTHER, None)]
    twice: list[Stub] = [(CALLS, ("a", "a")), (RESULT, "a"), (RESULT, "a"), (RESULT, "a")]
    plan = plan_of(twice)
    assert plan.final_ids == ["a", "a_1"] and plan.notes == [3]
    assert plan.steps == [(CALL, 0, ["a", "a_1"]), (ANSWER, 1, "a"), (ANSWER, 2, "a_1"), (NOTE, 3, -1)]


def test_a_plan_reports_each_change_by_the_messages_it_touched() -> None:
    # b answered before a, a blank reply among the results, an orphan: moved, dropped, noted
    plan = plan_of([(OTHER, None), (CALLS, ("a", "b")), (RESULT, "b"), (BLANK, None), (RESULT, "a"), (RESULT, "z")])
    assert (plan.moved, plan.dropped, plan.notes) == ([4], [3], [5]) and not plan.unchanged
    assert plan.steps == [(KEEP, 0, 2), (KEEP, 4, 5), (KEEP, 2, 3), (NOTE, 5, -1)]


def test_rule_4_a_span_is_its_calls_then_one_result_each_then_the_rest_in_order() -> None:
    stubs: list[Stub] = [(CALLS, ("a", "b", "c")), (OTHER, None), (RESULT, "z"), (RESULT, "c"), (RESULT, "a")]
    plan = plan_of(stubs)
    assert applied(stubs, plan) == [stubs[0], (RESULT, "a"), (RESULT, "b"), (RESULT, "c"), (OTHER, None),
                                    (OTHER, None)]
    assert sources(plan) == [0, 4, 3, 1, 2] and plan.interrupted_at == [(0, 1)] and plan.notes == [2]


def test_rule_5_empty_ids_take_their_place_and_repeated_ones_the_smallest_free_suffix() -> None:
    stubs: list[Stub] = [(CALLS, ("", "a")), (RESULT, ""), (RESULT, "a"), (CALLS, ("a", "a_1")),
                         (RESULT, "a"), (RESULT, "a_1")]
    plan = plan_of(stubs)
    # a_1 is free when the second "a" takes it (only earlier calls count): the call written a_1 moves on
    assert plan.final_ids == ["call_0_0", "a", "a_1", "a_1_1"]
    assert plan.renamed == [RenamedId(0, 0, "", "call_0_0"), RenamedId(3, 0, "a", "a_1"),
                            RenamedId(3, 1, "a_1", "a_1_1")]
    assert applied(stubs, plan)[3:] == [(CALLS, ("a_1", "a_1_1")), (RESULT, "a_1"), (RESULT, "a_1_1")]
    taken: list[Stub] = [(CALLS, ("a", "a_1")), (RESULT, "a"), (RESULT, "a_1"), (CALLS, ("a",)), (RESULT, "a")]
    assert plan_of(taken).final_ids == ["a", "a_1", "a_2"]


def test_notes_name_the_last_call_of_their_id_when_asked() -> None:
    stubs: list[Stub] = [(CALLS, ("a",)), (RESULT, "a"), (REPLY, None), (RESULT, "a"), (RESULT, "x")]
    assert [s for s in plan_of(stubs).steps if s[0] == NOTE] == [(NOTE, 3, -1), (NOTE, 4, -1)]
    assert [s for s in plan_of(stubs, name_notes=True).steps if s[0] == NOTE] == [(NOTE, 3, 0), (NOTE, 4, -1)]


# --- examples, one option at a time -----------------------------------------------------------------------------


def test_leave_open_last_leaves_only_the_last_spans_calls_open() -> None:
    stubs: list[Stub] = [(CALLS, ("a",)), (REPLY, None), (CALLS, ("b", "c")), (RESULT, "c")]
    plan = plan_of(stubs, leave_open_last=True)
    assert plan.interrupted == ["a"] and plan.moved == []
    assert applied(stubs, plan) == [stubs[0], (RESULT, "a"), (REPLY, None), stubs[2], (RESULT, "c")]
    assert plan_of(stubs).interrupted == ["a", "b"]


def test_strip_removes_unanswered_calls_and_drops_a_message_left_blank() -> None:
    stubs: list[Stub] = [(CALLS, ("a", "b")), (RESULT, "b"), (BLANK_CALLS, ("c",)), (CALLS, ("d",)), (OTHER, None)]
    plan = plan_of(stubs, strip=True)
    assert plan.stripped_at == [(0, 0), (2, 0), (3, 0)] and plan.interrupted == [] and plan.final_ids == ["b"]
    assert plan.dropped == [2]  # said nothing but its call: dropped as rule 1 drops a blank reply
    assert applied(stubs, plan) == [(CALLS, ("b",)), (RESULT, "b"), (REPLY, None), (OTHER, None)]
    assert plan_of(stubs, strip=True, leave_open_last=True).stripped_at == [(0, 0), (2, 0)]  # the last stays open


def test_strip_gives_a_stripped_call_no_final_id() -> None:
    stubs: list[Stub] = [(CALLS, ("a", "a")), (RESULT, "a"), (CALLS, ("a",)), (RESULT, "a")]
    assert plan_of(stubs, strip=True).final_ids == ["a", "a_1"]
    assert plan_of(stubs).final_ids == ["a", "a_1", "a_2"]


def test_without_final_ids_every_call_keeps_its_id() -> None:
    stubs: list[Stub] = [(CALLS, ("a", "")), (RESULT, "a"), (CALLS, ("a",))]
    planner = Planner(assign_ids=False)
    planner.run([k for k, _ in stubs], [r for _, r in stubs])
    assert planner.plan.final_ids == [] and planner.plan.renamed == []
    assert planner.plan.interrupted == ["", "a"]  # under their own ids


def test_renames_can_go_unlisted_and_ids_can_continue_an_earlier_part() -> None:
    earlier = FinalIds()
    earlier.allocate("a", 0, 0)
    planner = Planner(ids=earlier, renames=False)
    planner.run([CALLS, RESULT], [("a",), "a"])
    assert planner.plan.final_ids == ["a", "a_1"] and planner.plan.renamed == []
    assert planner.plan.steps == [(CALL, 0, ["a_1"]), (ANSWER, 1, "a_1")]


def test_the_last_open_span_is_found_from_the_end() -> None:
    assert last_open_span([OTHER, CALLS, RESULT, BLANK, OTHER]) == 1
    assert last_open_span([CALLS, RESULT, REPLY, OTHER]) is None
    assert last_open_span([CALLS, BLANK_CALLS, RESULT]) == 1
    assert last_open_span([OTHER, CALLS], start=2) is None


# --- properties -------------------------------------------------------------------------------------------------

OPTIONS: list[dict[str, Any]] = [{}, {"strip": True}, {"leave_open_last": True},
                                 {"strip": True, "leave_open_last": True}, {"name_notes": True}]


@examples(300)
@given(stubs=stub_lists(), options=st.sampled_from(OPTIONS))
def test_a_plan_is_valid_lossless_and_deterministic(stubs: list[Stub], options: dict[str, Any]) -> None:
    plan = plan_of(stubs, **options)
    assert plan == plan_of(list(stubs), **options)  # the same steps and report every time
    out = applied(stubs, plan)
    assert_valid(out, open_last=options.get("leave_open_last", False))
    # every message is in the output exactly once, unless dropped by rule 1
    taken = sources(plan)
    assert sorted(taken) == sorted(set(range(len(stubs))) - set(plan.dropped))
    assert all(stubs[i][0] in (BLANK, BLANK_CALLS) for i in plan.dropped)
    assert len(out) == len(taken) + len(plan.interrupted)
    assert [s for s in plan.steps if s[0] == SYNTHETIC] == [
        (SYNTHETIC, m, (c, final)) for (m, c), final in zip(plan.interrupted_at, plan.interrupted)]
    # a stripped call is exactly one that repair answers as interrupted without `strip`
    if options.get("strip"):
        answered = plan_of(stubs, leave_open_last=options.get("leave_open_last", False))
        assert plan.stripped_at == answered.interrupted_at and not plan.interrupted
    else:
        assert plan.stripped_at == []


@examples(300)
@given(stubs=stub_lists(), options=st.sampled_from(OPTIONS))
def test_planning_a_planned_list_changes_nothing(stubs: list[Stub], options: dict[str, Any]) -> None:
    out = applied(stubs, plan_of(stubs, **options))
    again = plan_of(out, **options)
    assert again.unchanged and applied(out, again) == out
    assert not (again.interrupted or again.moved or again.notes or again.renamed or again.dropped
                or again.stripped_at)


@examples(300)
@given(stubs=stub_lists(), strip=st.booleans())
def test_a_shorter_list_plans_the_start_of_a_longer_ones_output(stubs: list[Stub], strip: bool) -> None:
    out = applied(stubs, plan_of(stubs, strip=strip))
    for i, (kind, _) in enumerate(stubs):
        if kind >= REPLY:  # a span of the longer list ends there
            shorter = applied(stubs[:i], plan_of(stubs[:i], strip=strip))
            assert out[: len(shorter)] == shorter, i


@examples(300)
@given(stubs=stub_lists(), more=stub_lists(max_size=6), options=st.sampled_from(OPTIONS[:4]))
def test_a_planner_rolled_back_to_its_last_open_span_goes_on_as_a_fresh_one(
        stubs: list[Stub], more: list[Stub], options: dict[str, Any]) -> None:
    kinds, refs = [k for k, _ in stubs], [r for _, r in stubs]
    planner = Planner(**options)
    last = last_open_span(kinds)
    mark = None
    if last is not None:
        planner.run(kinds, refs, 0, last)
        mark = planner.mark()
    planner.run(kinds, refs, last or 0)
    assert applied(stubs, planner.plan) == applied(stubs, plan_of(stubs, **options))
    kinds += [k for k, _ in more]
    refs += [r for _, r in more]
    if mark is not None:
        planner.rollback(mark)
    planner.run(kinds, refs, len(stubs) if last is None else last)
    fresh = plan_of(stubs + more, **options)
    assert applied(stubs + more, planner.plan) == applied(stubs + more, fresh)
    assert {k: v for k, v in vars(planner.plan).items() if k != "steps"} == {
        k: v for k, v in vars(fresh).items() if k != "steps"}


@examples(200)
@given(history=messy_histories(), options=st.sampled_from(OPTIONS[:4]))
def test_repair_history_writes_what_the_plan_of_its_stubs_says(history: list[ChatMessage],
                                                                options: dict[str, Any]) -> None:
    kinds, refs = stub_history(history)
    plan = plan_spans(kinds, refs, **options)
    result = repair_history(history, leave_open_last=options.get("leave_open_last", False),
                            on_missing="strip" if options.get("strip") else "answer")
    assert list(zip(*stub_history(result.messages))) == applied(list(zip(kinds, refs)), plan)
    assert result.final_ids == plan.final_ids and [c.id for c in result.interrupted] == plan.interrupted
    assert (result.dropped, result.moved, result.notes, result.renamed, result.interrupted_at,
            result.stripped_at) == (plan.dropped, plan.moved, plan.notes, plan.renamed, plan.interrupted_at,
                                    plan.stripped_at)


def test_the_neutral_stubs_say_each_messages_kind_and_ids() -> None:
    call = ToolCall(id="a", name="f")
    history = [ChatMessage(role="system", content="s"), ChatMessage(role="user", content="u"),
               ChatMessage(role="assistant", content=" ", tool_calls=(call, ToolCall(id="", name="g"))),
               ChatMessage(role="assistant", content="x", tool_calls=(call,)),
               ChatMessage(role="tool", tool_call_id="a", content="ok"),
               ChatMessage(role="assistant", content="\n"), ChatMessage(role="assistant", content="done")]
    assert stub_history(history) == ([OTHER, OTHER, BLANK_CALLS, CALLS, RESULT, BLANK, REPLY],
                                     [None, None, ("a", ""), ("a",), "a", None, None])
    # parts: blank only when every part is text of whitespace (rule 1); a thinking part says something
    parts = [ChatMessage(role="assistant", content=(TextPart(text=" "), TextPart(text=""))),
             ChatMessage(role="assistant", content=(ThinkingPart(text="hm"),)),
             ChatMessage(role="assistant", content=(TextPart(text="\t"),), tool_calls=(call,))]
    assert stub_history(parts)[0] == [BLANK, REPLY, BLANK_CALLS]


@pytest.mark.parametrize("strip", [False, True])
def test_a_call_step_lists_a_final_id_for_each_call_and_none_for_a_stripped_one(strip: bool) -> None:
    plan = plan_of([(CALLS, ("a", "a", "b")), (RESULT, "a"), (RESULT, "a")], strip=strip)
    assert plan.steps[0] == (CALL, 0, ["a", "a_1", None] if strip else ["a", "a_1", "b"])


@given(items=st.lists(st.one_of(st.lists(st.sampled_from([OTHER, RESULT]), min_size=1, max_size=4),
                                st.integers(1, 3)), max_size=12))
def test_the_stubs_say_which_messages_each_item_holds_and_where_each_message_begins(
        items: list[list[int] | int]) -> None:
    # an item: the kinds of its messages (one block each), or the number of items one turn of calls spans
    stubs = Stubs(items=True)
    starts: list[int] = []
    offsets: list[int] = []
    refs: list[Any] = []
    for item in items:
        if isinstance(item, int):  # a turn of calls, one call an item (Responses')
            ids = [f"call_{len(starts)}_{k}" for k in range(item)]
            stubs.add(CALLS, ids[:1])
            for call_id in ids[1:]:
                stubs.join(call_id)
            starts += [len(offsets)] * item
            offsets.append(0)
            refs.append(ids)
            continue
        starts.append(len(offsets))
        for at, kind in enumerate(item):
            stubs.add(kind, "a" if kind == RESULT else None, at)
            offsets.append(at)
            refs.append("a" if kind == RESULT else None)
    assert stubs.end().starts == [*starts, len(offsets)]
    assert stubs.offsets == offsets and stubs.refs == refs and len(stubs.kinds) == len(refs)


def test_stubs_of_a_list_whose_items_are_its_messages_say_no_places() -> None:
    stubs = Stubs()
    stubs.add(OTHER)
    stubs.add(CALLS, ("a",))
    stubs.add(RESULT, "a")
    assert stubs.end().starts is None and stubs.kinds == [OTHER, CALLS, RESULT] and stubs.refs == [None, ("a",), "a"]
