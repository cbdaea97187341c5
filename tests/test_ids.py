"""normalize_tool_id, the final-id allocator and collision-free id maps."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import normalize_tool_id
from chatmend.ids import FinalIds, all_fit, digest, shortening_id_maker, wire_ids
from tests.strategies import examples

PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")


def pattern_id_maker(max_length: int) -> Callable[[str, int], str]:
    """A reference `make` for `wire_ids` that changes characters: ids matching PATTERN that fit are kept,
    others normalized, and a retry salted (as a provider with a character rule would)."""

    def make(tool_id: str, attempt: int) -> str:
        if attempt == 0:
            return normalize_tool_id(tool_id, max_length=max_length) if tool_id else f"call_{digest('')}"
        stem = re.sub(r"[^a-zA-Z0-9_-]", "_", tool_id)[: max_length - 11] or "call"
        return f"{stem}_{digest(f'{tool_id}#{attempt}')}"

    return make


@pytest.mark.parametrize("tool_id", ["call_abc", "toolu_01M8nJQQMxqpv1VaPYuJKT4j", "a-b_c", "x" * 64])
def test_a_valid_id_comes_back_unchanged(tool_id: str) -> None:
    assert normalize_tool_id(tool_id) == tool_id


def test_other_characters_are_replaced_with_a_stable_suffix() -> None:
    out = normalize_tool_id("functions.search:0")
    assert out.startswith("functions_search_0_") and PATTERN.match(out)
    assert out == normalize_tool_id("functions.search:0")
    assert normalize_tool_id("functions.search:0") != normalize_tool_id("functions:search.0")


def test_an_overlong_id_is_shortened_with_a_hash_suffix() -> None:
    long_a, long_b = "call_" + "a" * 100, "call_" + "a" * 99 + "b"
    assert len(normalize_tool_id(long_a, max_length=40)) <= 40
    assert normalize_tool_id(long_a, max_length=40) != normalize_tool_id(long_b, max_length=40)


def test_an_empty_id_gets_a_random_call_id() -> None:
    a, b = normalize_tool_id(""), normalize_tool_id("")
    assert a.startswith("call_") and PATTERN.match(a) and a != b


def test_max_length_too_small_for_the_hash_is_refused() -> None:
    with pytest.raises(ValueError, match="max_length"):
        normalize_tool_id("a.b", max_length=5)


@examples(500)
@given(st.lists(st.text(min_size=1, max_size=80), unique=True, max_size=20), st.integers(12, 64))
def test_normalized_ids_fit_the_pattern_and_different_ids_stay_different(ids: list[str], max_length: int) -> None:
    out = [normalize_tool_id(i, max_length=max_length) for i in ids]
    assert all(PATTERN.match(o) and len(o) <= max_length for o in out)
    assert len(set(out)) == len(out)


def test_final_ids_take_the_smallest_free_k_in_linear_time() -> None:
    ids = FinalIds()
    assert [ids.allocate("a", 0, 0) for _ in range(4)] == ["a", "a_1", "a_2", "a_3"]
    assert ids.allocate("a_2", 5, 0) == "a_2_1"
    assert ids.allocate("", 7, 3) == "call_7_3"
    many = FinalIds()
    for _ in range(100_000):  # would take minutes if each search started again at k=1
        many.allocate("functions.search:0", 0, 0)
    assert "functions.search:0_99999" in many.used


@given(st.lists(st.lists(st.sampled_from(["a", "a_1", "", "b", "call_0_1"]), max_size=4), max_size=8))
def test_taking_a_messages_new_ids_then_allocating_the_rest_is_allocating_each(messages: list[list[str]]) -> None:
    taking, allocating = FinalIds(), FinalIds()
    for m, raw_ids in enumerate(messages):
        taken = taking.take(raw_ids)
        assert taken == len(raw_ids) or not raw_ids[taken] or raw_ids[taken] in taking.used  # stops there
        for c in range(taken, len(raw_ids)):
            taking.allocate(raw_ids[c], m, c)
        for c, raw in enumerate(raw_ids):
            allocating.allocate(raw, m, c)
        assert taking.in_order == allocating.in_order and taking.used == allocating.used


@given(st.lists(st.tuples(st.lists(st.sampled_from(["a", "a_1", "", "b", "a_2"]), max_size=4), st.booleans()),
                max_size=12))
def test_final_ids_stay_one_list_of_distinct_ids_through_marks_and_rollbacks(
    steps: list[tuple[list[str], bool]],
) -> None:
    """Each step allocates a reply's ids after a mark, then keeps them or rolls them back (as incremental repair
    reopens its last span): the ids given out are distinct, and the set and the ordered list agree."""
    ids, kept = FinalIds(), list[str]()
    for step, (raw_ids, keep) in enumerate(steps):
        mark = ids.mark()
        given_out = [ids.allocate(raw, step, ci) for ci, raw in enumerate(raw_ids)]
        assert len(set(given_out)) == len(given_out) and not set(given_out) & set(kept)
        if keep:
            kept += given_out
        else:
            ids.rollback(mark)
        assert ids.in_order == kept and ids.used == set(kept)
    fresh = FinalIds()  # what is kept is what a run without the rolled-back steps allocates
    replayed = [fresh.allocate(raw, step, ci) for step, (raw_ids, keep) in enumerate(steps) if keep
                for ci, raw in enumerate(raw_ids)]
    assert replayed == kept


def test_wire_ids_are_stable_and_collision_free() -> None:
    first, second = wire_ids(pattern_id_maker(12), ["functions.search:0", "ok"])
    assert PATTERN.match(first) and len(first) <= 12 and second == "ok"
    assert wire_ids(pattern_id_maker(12), ["functions.search:0"]) == [first]
    # Force collisions: every first proposal is the same, so each later call takes the next attempt.
    same = wire_ids(lambda tool_id, attempt: "same" if attempt == 0 else f"same{attempt}", ["x", "y", "z"])
    assert same == ["same", "same1", "same2"]


@given(st.lists(st.text(min_size=1, max_size=30), unique=True, max_size=12), st.integers(0, 12))
def test_wire_ids_are_unique_and_prefix_stable(ids: list[str], cut: int) -> None:
    make = pattern_id_maker(16)
    wire = wire_ids(make, ids)
    assert len(set(wire)) == len(wire) == len(ids)
    assert all(PATTERN.match(w) and len(w) <= 16 for w in wire)
    assert list(wire_ids(make, ids[:cut])) == list(wire[:cut])


def one_by_one(make: Callable[[str, int], str], ids: list[str]) -> list[str]:
    """What `wire_ids` must give: each id's proposals asked in turn until one is not taken (the definition)."""
    taken: list[str] = []
    for tool_id in ids:
        attempt = 0
        while make(tool_id, attempt) in taken:
            attempt += 1
        taken.append(make(tool_id, attempt))
    return taken


@given(st.lists(st.text(alphabet="abc", min_size=1, max_size=4), unique=True, max_size=15), st.integers(1, 3))
def test_wire_ids_give_what_asking_one_by_one_gives(ids: list[str], keep: int) -> None:
    def make(tool_id: str, attempt: int) -> str:  # first proposals collide often (the first `keep` characters)
        return tool_id[:keep] if attempt == 0 else f"{tool_id[:keep]}{attempt}"

    expected = one_by_one(make, ids)
    assert list(wire_ids(make, ids)) == expected
    assert list(wire_ids(make, ids, first=lambda all_ids: [make(i, 0) for i in all_ids])) == expected


SAFE_RUN = re.compile(r"[a-zA-Z0-9_-]*")


def test_all_fit_checks_every_id_for_length_and_characters() -> None:
    assert all_fit([], 40)
    assert all_fit(["call_1", "x" * 40], 40)
    assert not all_fit(["call_1", "x" * 41], 40)
    assert not all_fit(["call_1", ""], 40)  # an empty id is never a wire id
    assert all_fit(["functions.search:0"], 40) and not all_fit(["functions.search:0"], 40, SAFE_RUN)
    assert not all_fit(["ok", "a\nb"], 40, SAFE_RUN)  # a separator inside an id cannot hide a character


@given(st.lists(st.text(alphabet="ab_.", min_size=0, max_size=16), unique=True, max_size=12), st.integers(12, 16))
def test_ids_that_all_fit_are_their_own_wire_ids(ids: list[str], max_length: int) -> None:
    make = pattern_id_maker(max_length)  # keeps an id that fits (`make(id, 0) == id`), as wire_ids requires
    shortcut = wire_ids(make, ids, max_length, SAFE_RUN)
    assert list(shortcut) == list(wire_ids(make, ids))  # what the proposals give, for less
    if all_fit(ids, max_length, SAFE_RUN):
        assert shortcut is ids


@given(st.lists(st.text(max_size=80), unique=True, max_size=12), st.integers(12, 70))
def test_shortening_ids_fit_keep_what_fits_and_never_collide(ids: list[str], max_length: int) -> None:
    make = shortening_id_maker(max_length)
    wire = list(wire_ids(make, ids))
    assert len(set(wire)) == len(ids)
    assert all(0 < len(w) <= max_length for w in wire)
    assert all(w == i for i, w in zip(ids, wire) if 0 < len(i) <= max_length)  # only what does not fit changes
    assert list(wire_ids(make, ids, max_length)) == wire  # the all-fit shortcut agrees with the proposals


def test_a_shortened_id_keeps_its_start_and_a_retry_changes_the_digest() -> None:
    make = shortening_id_maker(40)
    long_id = "x" * 45
    first, retry = make(long_id, 0), make(long_id, 1)
    assert first == "x" * 29 + "_" + digest(long_id) and len(first) == 40
    assert retry != first and retry.startswith("x" * 29 + "_") and len(retry) == 40
    assert make("", 0) == "_" + digest("")  # an empty id is never a wire id
    with pytest.raises(ValueError, match="at least 12"):
        shortening_id_maker(11)
