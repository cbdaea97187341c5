"""repair_history's options (#27): `wording=` and `leave_open_last=`, each with the guarantees it keeps."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, ToolCall, dumps, repair_history
from chatmend.repair import MAY_HAVE_RUN_WORDING
from tests.strategies import examples, messy_histories


def A(*ids: str) -> ChatMessage:
    return ChatMessage(role="assistant", tool_calls=tuple(ToolCall(id=i, name="search") for i in ids))


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
        assert a == b if origin.kind != "synthetic" else b == a.model_copy(update={"content": a.tool_name.upper()
                                                                                         if a.tool_name else ""})
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
