"""repair_history against its specification (docs/rules.md): every bullet and decision."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, ImagePart, RepairResult, TextPart, ThinkingPart, ToolCall, dumps, repair_history
from chatmend.messages import coerce_message
from chatmend.repair import Origin, is_placeholder, repair_for_writers
from tests.strategies import examples, messy_histories, valid_histories

PNG = "iVBORw0KGgo="
MAY_HAVE_RUN = (
    "Interrupted: the call to {} was cut off before it returned a result. "
    "The tool may have partly run: check its effects before running it again."
)
READ_ONLY = (
    "Interrupted: the call to {} was cut off before it returned a result. "
    "The tool only reads, so it is safe to run it again."
)


def U(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def S(text: str) -> ChatMessage:
    return ChatMessage(role="system", content=text)


def A(*calls: tuple[str, str] | ToolCall, content: Any = "") -> ChatMessage:
    tool_calls = tuple(c if isinstance(c, ToolCall) else ToolCall(id=c[0], name=c[1]) for c in calls)
    return ChatMessage(role="assistant", content=content, tool_calls=tool_calls)


def T(call_id: str, content: Any = "ok", *, name: str | None = None, is_error: bool = False) -> ChatMessage:
    return ChatMessage(role="tool", tool_call_id=call_id, tool_name=name, content=content, is_error=is_error)


def interrupted(call_id: str, name: str, *, read_only: bool = False) -> ChatMessage:
    text = (READ_ONLY if read_only else MAY_HAVE_RUN).format(name)
    return ChatMessage(role="tool", tool_call_id=call_id, tool_name=name, is_error=True, content=text)


def note(header: str, text: str = "", *others: Any) -> ChatMessage:
    body = f"{header} Its output follows.\n{text}" if text or others else f"{header} It had no output."
    return ChatMessage(role="user", content=(TextPart(text=body), *others))


def repaired(history: Sequence[Any], **kwargs: Any) -> list[ChatMessage]:
    return repair_history(history, **kwargs).messages


# Part 1: results move to just after the calls, in call order; the rest of the span keeps its order.


def test_results_move_after_calls_in_call_order_and_steer_keeps_its_place_after_them() -> None:
    history = [
        U("fix the bug"),
        A(("c1", "search"), ("c2", "read_file")),
        U("also check the docs"),  # a steer typed while the tools ran
        T("c2", "file text"),
        S("be brief"),
        T("c1", "3 hits"),
        A(content="Done."),
    ]
    result = repair_history(history)
    assert result.messages == [
        U("fix the bug"),
        A(("c1", "search"), ("c2", "read_file")),
        T("c1", "3 hits"),
        T("c2", "file text"),
        U("also check the docs"),
        S("be brief"),
        A(content="Done."),
    ]
    assert result.interrupted == []
    assert result.moved == [3, 5]


def test_results_already_in_place_are_not_reported_as_moved() -> None:
    history = [U("go"), A(("c1", "a"), ("c2", "b")), T("c1"), T("c2"), U("next")]
    result = repair_history(history)
    assert result.messages == history
    assert not result.changed


# Part 1: a call with no result in its span gets one under the same id, saying it was interrupted.


def test_call_without_result_is_answered_as_interrupted_under_its_id() -> None:
    history = [U("go"), A(("c1", "shell"), ("c2", "search")), T("c2", "hits")]
    result = repair_history(history)
    assert result.messages == [
        U("go"),
        A(("c1", "shell"), ("c2", "search")),
        interrupted("c1", "shell"),
        T("c2", "hits"),
    ]
    assert result.interrupted == [ToolCall(id="c1", name="shell")]


def test_is_read_only_picks_the_wording() -> None:
    history = [U("go"), A(("c1", "search"), ("c2", "write_file"))]
    result = repair_history(history, is_read_only=lambda name: name == "search")
    assert result.messages[2:] == [
        interrupted("c1", "search", read_only=True),
        interrupted("c2", "write_file", read_only=False),
    ]


def test_without_is_read_only_every_tool_may_have_partly_run() -> None:
    result = repair_history([A(("c1", "search"))])
    assert result.messages[1] == interrupted("c1", "search")
    assert "may have partly run" in str(result.messages[1].content)


def test_exact_wordings_of_the_synthetic_result() -> None:
    msgs = repaired([A(("c1", "grep"))], is_read_only=lambda name: True)
    assert msgs[1].content == (
        "Interrupted: the call to grep was cut off before it returned a result. "
        "The tool only reads, so it is safe to run it again."
    )


def test_an_exception_from_is_read_only_propagates() -> None:
    def boom(name: str) -> bool:
        raise RuntimeError(f"no policy for {name}")

    with pytest.raises(RuntimeError, match="no policy for search"):
        repair_history([A(("c1", "search"))], is_read_only=boom)


def test_is_read_only_is_not_asked_when_nothing_is_interrupted() -> None:
    asked: list[str] = []

    def read_only(name: str) -> bool:
        asked.append(name)
        return True

    repair_history([A(("c1", "search")), T("c1")], is_read_only=read_only)
    assert asked == []


def test_interrupted_lists_calls_under_final_ids_in_history_order() -> None:
    history = [A(("x", "a"), ("", "b")), U("stop"), A(("x", "c"))]
    result = repair_history(history)
    assert result.interrupted == [
        ToolCall(id="x", name="a"),
        ToolCall(id="call_0_1", name="b"),
        ToolCall(id="x_1", name="c"),
    ]


# Part 1: a result whose call is not in its span becomes a user note, images kept.


def test_result_for_a_call_of_an_earlier_span_becomes_a_note_even_if_that_call_exists() -> None:
    # Paired against the span only: chat and Messages both require the result right after its call.
    history = [A(("c1", "search")), T("c1", "first"), A(("c2", "read")), T("c2"), T("c1", "late", name="search")]
    result = repair_history(history)
    assert result.messages == [
        A(("c1", "search")),
        T("c1", "first"),
        A(("c2", "read")),
        T("c2"),
        note("A tool result arrived with no matching tool call (tool: search, id: c1, error: no).", "late"),
    ]
    assert result.notes == [4]


def test_orphan_screenshot_keeps_its_images_unchanged_after_the_text() -> None:
    shot = ImagePart(media_type="image/png", data=PNG)
    orphan = T("gone", (TextPart(text="screenshot"), shot, TextPart(text="(1 of 1)")), name="screenshot",
               is_error=True)
    result = repair_history([U("look"), orphan])
    header = "A tool result arrived with no matching tool call (tool: screenshot, id: gone, error: yes)."
    assert result.messages == [U("look"), note(header, "screenshot\n(1 of 1)", shot)]


def test_orphan_note_without_tool_name_or_output() -> None:
    result = repair_history([T("", "")])
    assert result.messages == [note("A tool result arrived with no matching tool call (id: (empty), error: no).")]


def test_tool_message_outside_any_span_is_a_note_where_it_stood() -> None:
    history = [U("a"), T("c9", "x"), A(content="hello"), T("c1", "y"), U("b")]
    msgs = repaired(history)
    assert [m.role for m in msgs] == ["user", "user", "assistant", "user", "user"]
    assert msgs[1].content[0].text.endswith("x")  # type: ignore[union-attr]
    assert msgs[3].content[0].text.endswith("y")  # type: ignore[union-attr]


def test_a_second_result_for_an_answered_call_becomes_a_note() -> None:
    history = [A(("c1", "search")), T("c1", "one"), T("c1", "two")]
    msgs = repaired(history)
    assert msgs[:2] == [A(("c1", "search")), T("c1", "one")]
    assert msgs[2] == note("A tool result arrived with no matching tool call (id: c1, error: no).", "two")


# Part 1: a repeated id becomes {id}_{k}, the smallest free k, call and result together.


def test_kimi_ids_restarting_every_reply_become_unique() -> None:
    history = [
        U("q"),
        A(("functions.search:0", "search")),
        T("functions.search:0", "r1"),
        A(("functions.search:0", "search")),
        T("functions.search:0", "r2"),
        A(("functions.search:0", "search")),
        T("functions.search:0", "r3"),
    ]
    result = repair_history(history)
    assert result.messages == [
        U("q"),
        A(("functions.search:0", "search")),
        T("functions.search:0", "r1"),
        A(("functions.search:0_1", "search")),
        T("functions.search:0_1", "r2"),
        A(("functions.search:0_2", "search")),
        T("functions.search:0_2", "r3"),
    ]
    assert [(r.message_index, r.call_index, r.old, r.new) for r in result.renamed] == [
        (3, 0, "functions.search:0", "functions.search:0_1"),
        (5, 0, "functions.search:0", "functions.search:0_2"),
    ]


def test_for_writers_renamed_calls_keep_their_messages_and_final_ids_say_the_new_ids() -> None:
    history = [
        U("q"),
        A(("functions.search:0", "search"), ("functions.search:1", "search")),
        T("functions.search:1", "r2"),  # completion order: moved, not copied
        T("functions.search:0", "r1"),
        A(("functions.search:0", "search")),
        T("functions.search:0", "r3"),
        A(("functions.search:0", "search")),
    ]
    result = repair_for_writers(history)
    assert result.final_ids == ["functions.search:0", "functions.search:1", "functions.search:0_1",
                                "functions.search:0_2"]
    # The input's own objects, in repaired order; only the interrupted result is new.
    assert [m is h for m, h in zip(result.messages, [history[i] for i in (0, 1, 3, 2, 4, 5, 6)])] == [True] * 7
    assert result.messages[7] == interrupted("functions.search:0_2", "search")
    expected = repair_history(history)
    assert (result.interrupted, result.moved, result.renamed) == (expected.interrupted, expected.moved,
                                                                  expected.renamed)


def test_smallest_free_k_skips_ids_earlier_calls_use() -> None:
    history = [A(("a", "t"), ("a_1", "t")), T("a"), T("a_1"), A(("a", "t"), ("a_1", "t")), T("a"), T("a_1")]
    msgs = repaired(history)
    assert [c.id for c in msgs[3].tool_calls] == ["a_2", "a_1_1"]
    assert [m.tool_call_id for m in msgs[4:]] == ["a_2", "a_1_1"]


def test_renamed_id_collides_with_a_later_original_id() -> None:
    # The second "a" becomes "a_1"; a later call really named "a_1" is then itself a repeat.
    history = [A(("a", "t")), T("a"), A(("a", "t")), T("a"), A(("a_1", "t")), T("a_1")]
    msgs = repaired(history)
    assert [m.tool_calls[0].id for m in msgs if m.tool_calls] == ["a", "a_1", "a_1_1"]
    assert msgs[5] == T("a_1_1")


def test_gemini_call_0_repeated_within_one_reply_takes_results_in_order() -> None:
    history = [A(("call_0", "f"), ("call_0", "g")), T("call_0", "for f"), T("call_0", "for g")]
    msgs = repaired(history)
    assert msgs == [A(("call_0", "f"), ("call_0_1", "g")), T("call_0", "for f"), T("call_0_1", "for g")]


def test_a_renamed_result_keeps_its_other_fields() -> None:
    shot = ImagePart(media_type="image/png", data=PNG)
    history = [A(("x", "a")), T("x"), A(("x", "b")), T("x", (TextPart(text="t"), shot), name="other", is_error=True)]
    msgs = repaired(history)
    assert msgs[3] == T("x_1", (TextPart(text="t"), shot), name="other", is_error=True)


def test_one_repeated_id_many_times_is_numbered_in_order() -> None:
    history: list[ChatMessage] = []
    for i in range(50):
        history += [A(("functions.search:0", "search")), T("functions.search:0", str(i))]
    msgs = repaired(history)
    ids = [m.tool_calls[0].id for m in msgs if m.tool_calls]
    assert ids == ["functions.search:0"] + [f"functions.search:0_{k}" for k in range(1, 50)]


# Part 1: an empty id becomes call_{message}_{call}, never the random fallback.


def test_empty_id_becomes_call_m_c_with_the_input_index() -> None:
    history = [U("go"), A(content="  "), A(("", "search"), ("", "read")), T(""), T("")]
    result = repair_history(history)
    # m counts the input list, placeholder included.
    assert result.messages == [U("go"), A(("call_2_0", "search"), ("call_2_1", "read")), T("call_2_0"), T("call_2_1")]


def test_empty_id_that_collides_gets_a_k() -> None:
    history = [A(("call_1_0", "a")), A(("", "b"))]
    msgs = repaired(history)
    assert msgs[2].tool_calls[0].id == "call_1_0_1"
    assert msgs[3].tool_call_id == "call_1_0_1"


# Part 1 / decision 1: whitespace-only assistant messages with no calls are dropped first.


def test_placeholder_saved_before_the_tools_ran_orphans_nothing() -> None:
    history = [U("go"), A(("c1", "search")), A(content=""), T("c1", "hits"), A(content="Found it.")]
    result = repair_history(history)
    assert result.messages == [U("go"), A(("c1", "search")), T("c1", "hits"), A(content="Found it.")]
    assert result.dropped == [2]
    assert result.notes == [] and result.interrupted == []


@pytest.mark.parametrize("content", ["", " ", "\n\t ", (), (TextPart(text=" "), TextPart(text=""))])
def test_whitespace_only_contents_are_placeholders(content: Any) -> None:
    assert is_placeholder(A(content=content))
    assert repaired([U("x"), A(content=content)]) == [U("x")]


@pytest.mark.parametrize(
    "content",
    [
        "ok",
        (TextPart(text=" "), ThinkingPart(text="")),
        (ThinkingPart(redacted=True, data="opaque"),),
        (ImagePart(media_type="image/png", data=PNG),),
    ],
)
def test_thinking_image_or_text_make_an_assistant_message_non_empty(content: Any) -> None:
    assert not is_placeholder(A(content=content))
    assert repaired([A(content=content)]) == [A(content=content)]


def test_an_assistant_message_with_calls_is_never_a_placeholder() -> None:
    assert not is_placeholder(A(("c", "t"), content=" "))


# Decision 2: spans end before the next kept assistant message; outside messages keep their order.


def test_span_ends_at_next_kept_assistant_message_so_later_results_are_notes() -> None:
    history = [A(("c1", "t")), A(content="thinking aloud"), T("c1", "late")]
    msgs = repaired(history)
    assert msgs[:3] == [A(("c1", "t")), interrupted("c1", "t"), A(content="thinking aloud")]
    assert msgs[3].role == "user"


def test_messages_outside_spans_keep_their_order() -> None:
    history = [S("sys"), U("a"), A(content="b"), U("c"), S("d")]
    assert repaired(history) == history


# Decision 4: span output order.


def test_span_output_is_calls_results_then_steers_system_and_notes_in_original_order() -> None:
    history = [A(("c1", "a"), ("c2", "b")), T("zz", "orphan"), S("sys"), T("c2"), U("steer"), T("c1")]
    msgs = repaired(history)
    assert [m.role for m in msgs] == ["assistant", "tool", "tool", "user", "system", "user"]
    assert [m.tool_call_id for m in msgs[1:3]] == ["c1", "c2"]
    assert msgs[3].content[0].text.endswith("orphan")  # type: ignore[union-attr]
    assert msgs[5] == U("steer")


# Decision 9: bad input and verbatim arguments.


@pytest.mark.parametrize(
    ("item", "field", "fragment"),
    [
        ("hello", None, "expected a message"),
        ({"role": "robot", "content": "x"}, "role", "unknown role 'robot'"),
        ({"content": "x"}, "role", "missing 'role'"),
        ({"role": "assistant", "tool_calls": [{"id": "c1", "arguments": {}}]}, "tool_calls.0.name", "missing"),
        ({"role": "assistant", "tool_calls": [{"id": "c1", "name": ""}]}, "tool_calls.0.name", "at least 1"),
        ({"role": "tool", "content": "x"}, None, "tool_call_id"),
        ({"role": "user", "content": 42}, "content", "content is a string or a list"),
        ({"role": "user", "content": [{"type": "video"}]}, "content.0", "content is a string or a list"),
        ({"role": "user", "content": [{"type": "text"}]}, "content.0.text", "missing"),
    ],
)
def test_bad_input_names_the_message_index_and_field(item: Any, field: str | None, fragment: str) -> None:
    with pytest.raises(ValueError, match="message 1") as info:
        repair_history([{"role": "user", "content": "fine"}, item])
    assert fragment in str(info.value)
    assert info.value.index == 1  # type: ignore[attr-defined]
    if field is not None:
        assert info.value.field == field  # type: ignore[attr-defined]


def test_a_tool_call_without_a_name_is_bad_input() -> None:
    with pytest.raises(ValueError, match=r"message 0, field 'tool_calls\.0\.name'"):
        repair_history([{"role": "assistant", "tool_calls": [{"id": "a"}]}])


def test_cut_off_arguments_are_kept_verbatim_as_data() -> None:
    history = [{"role": "assistant", "tool_calls": [{"id": "a", "name": "write", "arguments": '{"path": "x.py", "te'}]}]
    msgs = repaired(history)
    assert msgs[0].tool_calls[0].arguments == '{"path": "x.py", "te'


def test_dict_input_is_accepted_and_equal_to_model_input() -> None:
    dicts = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "s", "arguments": {"q": "x"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "3 hits"},
    ]
    models = [coerce_message(d) for d in dicts]
    assert repaired(dicts) == repaired(models) == models


# Provenance: where each output message came from.


def test_every_output_message_says_where_it_came_from() -> None:
    history = [U("go"), A(("a", "s"), ("b", "s")), U("steer"), T("b"), A(content=" "), T("x"), A(content="done"),
               A(("a", "s")), T("a")]
    result = repair_history(history)
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "tool", "user", "user", "assistant",
                                                 "assistant", "tool"]
    assert result.origins() == [
        Origin("input", 0), Origin("input", 1),
        Origin("synthetic", 1, 0),  # the call a, interrupted
        Origin("input", 3), Origin("input", 2),  # b's result moved before the steer
        Origin("note", 5),  # the placeholder (4) is dropped, x answers nothing in the span
        Origin("input", 6), Origin("input", 7), Origin("input", 8),  # the second a, renamed a_1 with its result
    ]
    assert result.interrupted_at == [(1, 0)] and [c.id for c in result.interrupted] == ["a"]
    assert result.messages[7].tool_calls[0].id == result.messages[8].tool_call_id == "a_1"


# Decision 8: guarantees, as properties over messy histories.

# 1,000 examples each in CI; more under the fuzz profile (CHATMEND_HYPOTHESIS_PROFILE=fuzz).
PROPERTY = examples(1000)


def check_not_mutated(history: list[ChatMessage]) -> None:
    """The input is never mutated."""
    before, dumped = copy.deepcopy(history), dumps(history)
    repair_history(history)
    assert history == before
    assert dumps(history) == dumped


def check_idempotent(once: list[ChatMessage]) -> None:
    """Repairing the output returns equal messages and an empty interrupted."""
    twice = repair_history(once)
    assert twice.messages == once
    assert twice.interrupted == []
    assert not twice.changed
    assert twice.origins() == [Origin("input", i) for i in range(len(once))]


def check_prefix_stable(history: list[ChatMessage], full: RepairResult) -> None:
    """For every kept assistant message at i, repair(input[:i]) is a prefix of repair(input), origins too."""
    origins = full.origins()
    for i, message in enumerate(history):
        if message.role == "assistant" and not is_placeholder(message):
            prefix = repair_history(history[:i])
            assert full.messages[: len(prefix.messages)] == prefix.messages, f"prefix {i}"
            assert origins[: len(prefix.messages)] == prefix.origins(), f"prefix {i}"


def check_valid(msgs: list[ChatMessage]) -> None:
    """Every call has exactly one result right after it, and no two calls share an id."""
    seen: set[str] = set()
    for i, message in enumerate(msgs):
        if message.role == "assistant":
            assert not is_placeholder(message)
            ids = [c.id for c in message.tool_calls]
            assert all(ids)
            assert not seen & set(ids) and len(set(ids)) == len(ids)
            seen.update(ids)
            following = msgs[i + 1 : i + 1 + len(ids)]
            assert [m.role for m in following] == ["tool"] * len(ids)
            assert [m.tool_call_id for m in following] == ids
    # No other tool message anywhere: each one answers a call of the run right before it.
    assert sum(m.role == "tool" for m in msgs) == sum(len(m.tool_calls) for m in msgs)


def check_nothing_lost(history: list[ChatMessage], msgs: list[ChatMessage]) -> None:
    """Every text and image that a user, a tool or the system said is in the output."""
    out = json.dumps([asdict(m) for m in msgs], ensure_ascii=False)
    for message in history:
        if message.role == "assistant":
            continue
        content = message.content
        texts = [content] if isinstance(content, str) else [p.text for p in content if isinstance(p, TextPart)]
        for text in texts:
            assert json.dumps(text, ensure_ascii=False)[1:-1] in out
        if not isinstance(content, str):
            for part in content:
                if isinstance(part, ImagePart):
                    assert json.dumps(part.data or part.url)[1:-1] in out


def check_interrupted(result: RepairResult) -> None:
    """`interrupted` lists exactly the calls that got a synthetic result, under their final ids, in order."""
    synthetic = [m.tool_call_id for m in result.messages if m.role == "tool" and m.is_error
                 and isinstance(m.content, str) and m.content.startswith("Interrupted: the call to ")]
    assert [c.id for c in result.interrupted] == synthetic


def _texts(message: ChatMessage) -> list[str]:
    content = message.content
    return [content] if isinstance(content, str) else [p.text for p in content if isinstance(p, TextPart)]


def check_origins(history: list[ChatMessage], result: RepairResult) -> None:
    """Each output message's origin is right; every input message not dropped appears once (itself, copied
    under final ids, or as a note)."""
    origins = result.origins()
    assert len(origins) == len(result.messages)
    final: dict[tuple[int, int], str] = {}  # the final id of each call output so far, by its input position
    placed: list[int] = []
    for message, origin in zip(result.messages, origins):
        source = history[origin.message_index]
        if origin.kind == "input":
            placed.append(origin.message_index)
            assert origin.call_index is None
            assert message is source or message != source  # unchanged messages are the input's own objects
            if message.role == "assistant":
                assert len(message.tool_calls) == len(source.tool_calls)
                assert replace(message, tool_calls=source.tool_calls) == source
                for ci, (call, original) in enumerate(zip(message.tool_calls, source.tool_calls)):
                    assert replace(call, id=original.id) == original
                    final[(origin.message_index, ci)] = call.id
            elif message.role == "tool":
                assert replace(message, tool_call_id=source.tool_call_id) == source
            else:
                assert message is source
        elif origin.kind == "synthetic":
            assert origin.call_index is not None
            call = source.tool_calls[origin.call_index]
            assert message.tool_call_id == final[(origin.message_index, origin.call_index)]
            assert message.tool_name == call.name and message.role == "tool"
        else:
            placed.append(origin.message_index)
            assert source.role == "tool" and message.role == "user" and origin.call_index is None
            note_text = _texts(message)[0]
            assert all(text in note_text for text in _texts(source))
    assert sorted(placed) == sorted(set(range(len(history))) - set(result.dropped))  # each at most once
    synthetic = [(o.message_index, o.call_index) for o in origins if o.kind == "synthetic"]
    assert synthetic == result.interrupted_at and len(result.interrupted_at) == len(result.interrupted)
    assert [o.message_index for o in origins if o.kind == "note"] == result.notes


def check_final_ids(result: RepairResult) -> None:
    """`final_ids` lists the id of every call of the output, in order (all different, by rule 5)."""
    assert result.final_ids == [c.id for m in result.messages for c in m.tool_calls]


@PROPERTY
@given(messy_histories())
def test_decision_8_guarantees_on_messy_histories(history: list[ChatMessage]) -> None:
    # One generated history checks every guarantee (each a function above, each 1,000 examples).
    result = repair_history(history)
    check_not_mutated(history)
    check_valid(result.messages)
    check_idempotent(result.messages)
    check_prefix_stable(history, result)
    check_nothing_lost(history, result.messages)
    check_interrupted(result)
    check_final_ids(result)
    check_origins(history, result)


@PROPERTY
@given(valid_histories())
def test_a_valid_history_comes_back_equal_and_shared(history: list[ChatMessage]) -> None:
    result = repair_history(history)
    assert result.messages == history
    assert all(a is b for a, b in zip(result.messages, history))
    assert not result.changed
    assert result.origins() == [Origin("input", i) for i in range(len(history))]
    assert result.origin_runs == [0, 0]  # one run: recording the origins of a valid history costs nothing


# Decision 8: deterministic bytes in every process.

_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from chatmend import repair_history, dumps
from tests.strategies import messy_histories
from hypothesis import given, settings, HealthCheck
out = []
@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(messy_histories())
def run(h):
    out.append(dumps(repair_history(h).messages))
run()
sys.stdout.write("\\x00".join(out))
"""


def test_same_bytes_under_different_hash_seeds() -> None:
    root = str(Path(__file__).resolve().parent.parent)
    outputs = []
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", _SCRIPT.format(root=root)], env=env, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outputs.append(proc.stdout)
    assert outputs[0] and outputs[0] == outputs[1] == outputs[2]


def with_final_ids(result: RepairResult) -> list[ChatMessage]:
    """What a writer reads from `repair_for_writers`: the k-th call has the k-th final id, and the tool
    messages after an assistant message answer its calls in order."""
    finals = iter(result.final_ids)
    waiting: list[str] = []
    out = []
    for message in result.messages:
        if message.tool_calls:
            calls = tuple(replace(c, id=next(finals)) for c in message.tool_calls)
            waiting = [c.id for c in calls]
            message = replace(message, tool_calls=calls)
        elif message.role == "tool":
            message = replace(message, tool_call_id=waiting.pop(0))
        out.append(message)
    assert next(finals, None) is None
    return out


@PROPERTY
@given(messy_histories())
def test_for_writers_is_repair_history_with_ids_taken_from_final_ids(history: list[ChatMessage]) -> None:
    expected = repair_history(history)
    got = repair_for_writers(history)
    assert with_final_ids(got) == expected.messages
    assert dumps(with_final_ids(got)) == dumps(expected.messages)
    report = ("interrupted", "dropped", "moved", "notes", "renamed", "final_ids", "interrupted_at", "origin_runs")
    assert [getattr(got, name) for name in report] == [getattr(expected, name) for name in report]
    quiet = repair_for_writers(history, renames=False)  # what the writers call: the same, renames not listed
    assert quiet.renamed == []
    assert (quiet.messages, quiet.interrupted, quiet.dropped, quiet.moved, quiet.notes, quiet.final_ids) == (
        got.messages, got.interrupted, got.dropped, got.moved, got.notes, got.final_ids)


@PROPERTY
@given(messy_histories())
def test_for_writers_without_final_ids_leaves_rule_5_out_and_nothing_else(history: list[ChatMessage]) -> None:
    full = repair_for_writers(history)
    bare = repair_for_writers(history, assign_ids=False)  # for a writer that mints ids by position (Kimi)
    assert bare.final_ids == [] and bare.renamed == []
    assert (bare.dropped, bare.moved, bare.notes, bare.interrupted_at, bare.origin_runs) == (
        full.dropped, full.moved, full.notes, full.interrupted_at, full.origin_runs)
    assert len(bare.messages) == len(full.messages)
    for mine, theirs in zip(bare.messages, full.messages):
        # The same messages; a synthetic result carries its call's original id instead of the final one.
        assert mine is theirs or replace(mine, tool_call_id=theirs.tool_call_id) == theirs
    assert len(bare.interrupted) == len(full.interrupted)
    assert [replace(c, id=f.id) for c, f in zip(bare.interrupted, full.interrupted)] == full.interrupted
