"""repair_history's options (#27): `wording=`, `leave_open_last=`, `on_missing=` and `mark=`, each with the
guarantees it keeps (or the one it gives up, and where)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, ToolCall, dumps, providers, repair_history
from chatmend.repair import (
    MAY_HAVE_RUN_WORDING,
    Mark,
    RepairOptions,
    Wording,
    is_placeholder,
    repair_for_writers,
    synthetic_result,
)
from tests.providers.common import body_or_none, writable
from tests.strategies import examples, messy_histories
from tests.test_repair import with_final_ids


def A(*ids: str, content: str = "") -> ChatMessage:
    return ChatMessage(role="assistant", content=content, tool_calls=tuple(ToolCall(id=i, name="search") for i in ids))


def T(call_id: str) -> ChatMessage:
    return ChatMessage(role="tool", tool_call_id=call_id, content="ok")


U = ChatMessage(role="user", content="q")


def test_wording_as_a_mapping_or_a_callable_gives_the_synthetic_text() -> None:
    history = [U, A("a"), ChatMessage(role="assistant", content="next"), U,
               ChatMessage(role="assistant", tool_calls=(ToolCall(id="b", name="shell"),))]
    by_map = repair_history(history, wording={"search": "re-run me"})
    assert by_map.messages[2].content == "re-run me"
    assert by_map.messages[-1].content == MAY_HAVE_RUN_WORDING.format(name="shell")  # not in the mapping
    by_call = repair_history(history, wording=lambda name: f"{name} stopped" if name == "shell" else None)
    assert by_call.messages[-1].content == "shell stopped"
    assert by_call.messages[2].content == MAY_HAVE_RUN_WORDING.format(name="search")
    assert by_call.messages[-1].is_error and by_call.messages[-1].tool_call_id == "b"
    with pytest.raises(TypeError, match="must be a str"):
        repair_history(history, wording=lambda name: 3)  # type: ignore[arg-type]


def test_leave_open_last_leaves_the_last_replys_missing_calls_open() -> None:
    history = [U, A("a", "b", "c"), T("c"), U, T("a")]
    result = repair_history(history, leave_open_last=True)
    assert result.messages == [U, A("a", "b", "c"), T("a"), T("c"), U]
    assert result.interrupted == []
    assert repair_history(history).interrupted == [ToolCall(id="b", name="search")]


def test_leave_open_last_answers_earlier_replies() -> None:
    history = [U, A("a"), ChatMessage(role="assistant", content="hm"), A("b")]
    result = repair_history(history, leave_open_last=True)
    assert [c.id for c in result.interrupted] == ["a"]
    assert result.messages[-1] == A("b")


@given(messy_histories())
@examples(300)
def test_options_keep_determinism_and_idempotence(history: list[ChatMessage]) -> None:
    options: list[dict[str, Any]] = [{"wording": {"search": "again"}}, {"wording": lambda n: n.upper()},
                                     {"leave_open_last": True}, {"leave_open_last": True, "wording": str.upper}]
    for opts in options:
        first = repair_history(history, **opts)
        assert dumps(first.messages) == dumps(repair_history(list(history), **opts).messages)
        again = repair_history(first.messages, **opts)
        assert again.messages == first.messages and not again.interrupted and not again.changed


@given(messy_histories())
@examples(300)
def test_wording_keeps_prefix_stability_and_changes_only_synthetic_text(history: list[ChatMessage]) -> None:
    plain = repair_history(history)
    worded = repair_history(history, wording=str.upper)
    assert len(plain.messages) == len(worded.messages)
    for a, b, origin in zip(plain.messages, worded.messages, plain.origins()):
        assert a == b if origin.kind != "synthetic" else b == replace(a, content=a.tool_name.upper()
                                                                                         if a.tool_name else "")
    for i, message in enumerate(history):
        if message.role == "assistant" and message.tool_calls:
            shorter = repair_history(history[:i], wording=str.upper).messages
            assert worded.messages[: len(shorter)] == shorter


@given(messy_histories())
@examples(300)
def test_leave_open_last_differs_from_the_default_only_in_the_last_span(history: list[ChatMessage]) -> None:
    plain = repair_history(history)
    left = repair_history(history, leave_open_last=True)
    open_calls = set(plain.interrupted_at) - set(left.interrupted_at)
    # The same output without the synthetic results of the calls left open, each message from the same origin.
    expected = [(m, o) for m, o in zip(plain.messages, plain.origins())
                if not (o.kind == "synthetic" and (o.message_index, o.call_index) in open_calls)]
    assert dumps(left.messages) == dumps(m for m, _ in expected)
    assert left.origins() == [o for _, o in expected]
    assert set(left.interrupted_at) <= set(plain.interrupted_at)
    if open_calls:
        last = max(i for i, m in enumerate(history) if m.role == "assistant" and m.tool_calls)
        assert {m for m, _ in open_calls} == {last}


# ------------------------------------------------------------------------------------ on_missing="strip"


def test_strip_removes_the_unanswered_calls_and_keeps_the_answered_ones() -> None:
    history = [U, A("a", "b", "c"), T("c"), T("a")]
    result = repair_history(history, on_missing="strip")
    assert result.messages == [U, A("a", "c"), T("a"), T("c")]
    assert result.stripped == [ToolCall(id="b", name="search")] and result.stripped_at == [(1, 1)]
    assert result.interrupted == [] and result.final_ids == ["a", "c"] and result.changed
    assert [o.message_index for o in result.origins()] == [0, 1, 3, 2]


def test_strip_drops_an_assistant_message_left_with_nothing_but_keeps_one_with_text() -> None:
    history = [U, A("a"), U, A("b", content="let me look"), U, A("c", content=" \n")]
    result = repair_history(history, on_missing="strip")
    assert result.messages == [U, U, ChatMessage(role="assistant", content="let me look"), U]
    assert result.dropped == [1, 5] and result.stripped_at == [(1, 0), (3, 0), (5, 0)]
    assert [o.message_index for o in result.origins()] == [0, 2, 3, 4]


def test_a_stripped_call_takes_no_final_id_and_keeps_its_place_in_the_call_numbering() -> None:
    # "x" is free again once its first call is stripped; an empty id is named after its place in the input.
    history = [U, A("x"), U, A("x"), T("x"), U, A("", ""), T("")]
    result = repair_history(history, on_missing="strip")
    assert result.final_ids == ["x", "call_6_0"]
    assert [c.id for m in result.messages for c in m.tool_calls] == ["x", "call_6_0"]
    assert result.stripped_at == [(1, 0), (6, 1)] and result.renamed == [(6, 0, "", "call_6_0")]
    assert result.messages[-1].tool_call_id == "call_6_0"


def test_strip_turns_orphans_into_notes_and_keeps_steers_where_the_span_holds_them() -> None:
    history = [U, A("a"), ChatMessage(role="user", content="stop"), T("zzz")]
    result = repair_history(history, on_missing="strip")
    assert [m.role for m in result.messages] == ["user", "user", "user"]
    assert result.notes == [3] and result.dropped == [1]
    assert [o.kind for o in result.origins()] == ["input", "input", "note"]


def test_with_leave_open_last_the_last_replys_calls_stay_open_instead_of_being_stripped() -> None:
    history = [U, A("a"), U, A("b", "c"), T("c")]
    result = repair_history(history, on_missing="strip", leave_open_last=True)
    assert result.messages == [U, U, A("b", "c"), T("c")]
    assert result.stripped_at == [(1, 0)] and result.interrupted == []


def test_unknown_option_values_are_refused() -> None:
    with pytest.raises(ValueError, match="on_missing"):
        repair_history([U], on_missing="drop")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="mark"):
        repair_history([U], mark="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="leave_open_last"):
        repair_history([U], leave_open_last="yes")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ mark


def test_mark_none_makes_the_synthetic_result_a_plain_one() -> None:
    history = [U, A("a")]
    assert repair_history(history).messages[-1].is_error
    assert repair_history(history, mark="field").messages == repair_history(history).messages
    plain = repair_history(history, mark="none").messages[-1]
    assert not plain.is_error and plain.content == MAY_HAVE_RUN_WORDING.format(name="search")


WIRE_ERROR_MARKS = {  # how each format writes a synthetic result under each mark: docs/rules.md §1-§5
    "anthropic": ({"is_error": True}, {"is_error": True}, {}),
    "gemini": ({"error"}, {"error"}, {"output"}),
    "openai_chat": ("Error: ", "", ""),
    "kimi": ("Error: ", "", ""),
    "mistral": ("Error: ", "", ""),
    "openai_responses": ("[error] ", "", ""),
}


@pytest.mark.parametrize("name", sorted(WIRE_ERROR_MARKS))
def test_each_format_marks_a_synthetic_result_where_it_can(name: str) -> None:
    provider = providers.get(name)
    text = MAY_HAVE_RUN_WORDING.format(name="search")
    for mark, expected in zip(("error", "field", "none"), WIRE_ERROR_MARKS[name]):
        body = provider.to_request([U, A("a")], model="test-model", mark=mark)  # type: ignore[arg-type]
        last = body[provider.list_key][-1]
        if name == "anthropic":
            block = last["content"][-1]
            assert {k: v for k, v in block.items() if k == "is_error"} == expected and block["content"] == text
        elif name == "gemini":
            response = last["parts"][-1]["functionResponse"]["response"]
            assert set(response) == expected and next(iter(response.values())) == text
        else:
            assert last.get("content", last.get("output")) == f"{expected}{text}"
        assert provider.check(body) == []
    assert provider.to_request([U, A("a")], model="m", mark="error") == provider.to_request([U, A("a")], model="m")


# ------------------------------------------------------------------------- properties, for every option

OPTION_SETS: list[dict[str, Any]] = [
    {"on_missing": "strip"},
    {"on_missing": "strip", "wording": str.upper, "mark": "none"},
    {"on_missing": "strip", "leave_open_last": True},
    {"mark": "none"},
    {"mark": "field"},
    {"wording": {"search": "again"}, "leave_open_last": True, "mark": "none"},
]


def valid_everywhere(history: list[ChatMessage], options: dict[str, Any]) -> None:
    """Every provider's body of the history repaired with `options` passes that provider's check."""
    for name in providers.names():
        provider = providers.get(name)
        body = body_or_none(provider, writable(provider, history), model="test-model", **options)
        assert body is None or provider.check(body) == [], (name, options)  # None: nothing to send (#21)


def every_call_answered_in_place(messages: list[ChatMessage]) -> bool:
    """What repair guarantees: each call's result right after it, in call order, no id used twice."""
    ids = [c.id for m in messages for c in m.tool_calls]
    if len(ids) != len(set(ids)):
        return False
    for i, message in enumerate(messages):
        following = [m.tool_call_id for m in messages[i + 1: i + 1 + len(message.tool_calls)]]
        if message.tool_calls and following != [c.id for c in message.tool_calls]:
            return False
    return sum(m.role == "tool" for m in messages) == len(ids)


@given(messy_histories())
@examples(150)
def test_every_option_is_deterministic_idempotent_and_prefix_stable_or_says_why_not(
    history: list[ChatMessage],
) -> None:
    kept_assistants = [i for i, m in enumerate(history) if m.role == "assistant" and not is_placeholder(m)]
    for opts in OPTION_SETS:
        first = repair_history(history, **opts)
        assert dumps(first.messages) == dumps(repair_history(list(history), **opts).messages)
        again = repair_history(first.messages, **opts)
        assert again.messages == first.messages and not again.changed
        assert len(first.origins()) == len(first.messages)
        if not opts.get("leave_open_last"):  # the one option that gives prefix stability up (at the last span)
            assert every_call_answered_in_place(first.messages)
            for i in kept_assistants:
                shorter = repair_history(history[:i], **opts).messages
                assert first.messages[: len(shorter)] == shorter, (opts, i)


@given(messy_histories())
@examples(100)
def test_every_option_gives_bodies_every_provider_accepts(history: list[ChatMessage]) -> None:
    for opts in OPTION_SETS:
        if not opts.get("leave_open_last"):  # open calls are not valid to send: that is the option's point
            valid_everywhere(history, opts)


@given(messy_histories())
@examples(200)
def test_strip_differs_from_answer_only_by_the_calls_it_removes(history: list[ChatMessage]) -> None:
    answered = repair_history(history)
    stripped = repair_history(history, on_missing="strip")
    # The calls stripped are exactly those answered as interrupted, as they stood in the input.
    assert stripped.stripped_at == answered.interrupted_at
    assert stripped.stripped == [history[m].tool_calls[c] for m, c in stripped.stripped_at]
    assert stripped.interrupted == [] and not any(o.kind == "synthetic" for o in stripped.origins())
    # Everything else comes in the same order from the same input messages.
    gone = {m for m, _ in stripped.stripped_at}
    kept = [o for o in answered.origins() if o.kind != "synthetic"]
    assert stripped.origins() == [o for o in kept if not (
        o.kind == "input" and o.message_index in set(stripped.dropped) - set(answered.dropped))]
    for message, origin in zip(stripped.messages, stripped.origins()):
        if origin.kind == "input" and origin.message_index in gone:
            source = history[origin.message_index]
            left = {c for m, c in stripped.stripped_at if m == origin.message_index}
            assert [c.name for c in message.tool_calls] == [
                c.name for ci, c in enumerate(source.tool_calls) if ci not in left]
    assert set(stripped.dropped) - set(answered.dropped) <= gone


@given(messy_histories())
@examples(150)
def test_mark_changes_only_the_error_flag_of_synthetic_results(history: list[ChatMessage]) -> None:
    marked = repair_history(history)
    plain = repair_history(history, mark="none")
    assert plain.origins() == marked.origins()
    for a, b, origin in zip(marked.messages, plain.messages, marked.origins()):
        assert b == (replace(a, is_error=False) if origin.kind == "synthetic" else a)
    for name in providers.names():
        provider = providers.get(name)
        sendable = writable(provider, history)  # (DeepSeek takes no images)
        field = body_or_none(provider, sendable, model="test-model", mark="field")  # None: nothing to send
        like: Mark = "error" if provider.error_field else "none"
        assert field == body_or_none(provider, sendable, model="test-model", mark=like)


@given(messy_histories())
@examples(200)
def test_the_writers_repair_with_options_is_repair_history_with_them(history: list[ChatMessage]) -> None:
    for opts in OPTION_SETS:
        if opts.get("leave_open_last"):
            continue  # open calls: `to_request` writes no body (tests/test_incremental.py)
        expected = repair_history(history, **opts)
        for assign_ids in (True, False):
            got = repair_for_writers(history, options=RepairOptions(**opts), assign_ids=assign_ids)
            assert (got.stripped, got.stripped_at, got.dropped, got.origin_runs, got.interrupted_at) == (
                expected.stripped, expected.stripped_at, expected.dropped, expected.origin_runs,
                expected.interrupted_at)
            if assign_ids:
                assert with_final_ids(got) == expected.messages and got.final_ids == expected.final_ids


def test_a_body_repair_writes_the_synthetic_result_repair_history_writes_with_the_same_options() -> None:
    history = [U, A("a"), ChatMessage(role="assistant", content="next")]
    options: list[tuple[Wording | None, Mark]] = [(None, "error"), ({"search": "re-run"}, "none"),
                                                  (lambda name: None, "error")]
    for wording, mark in options:
        written = repair_history(history, wording=wording, mark=mark).messages[2]
        assert written == synthetic_result("a", "search", read_only=False, wording=wording, is_error=mark == "error")
