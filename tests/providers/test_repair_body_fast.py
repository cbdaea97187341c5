"""`repair_body`'s stub route gives what the neutral route gives on Chat lists: a body repaired on stubs equals the
body repaired without them."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatmend.exceptions import ChatmendError
from chatmend.planner import Stubs
from chatmend.providers.openai_chat import OpenAIChat
from tests.strategies import examples

IDS = st.sampled_from(["a", "b", "c", "", "x" * 41, "call_1"])
TEXT = st.sampled_from(["", " ", "ok", "Done.", "ünïcode ✓"])
ARGUMENTS = st.one_of(
    st.sampled_from(['{"q": 1}', "{ \"q\" : [1, 2] }", "{}", "[1]", "3", "", "{\"cut", "NaN", "{\"a\": NaN}",
                     '{"s": "\\ud800"}']),
    st.dictionaries(st.sampled_from(["q", "n"]), st.integers(), max_size=2),  # arguments as an object: not plain
)


def call() -> st.SearchStrategy[dict[str, Any]]:
    function = st.fixed_dictionaries({"name": st.sampled_from(["f", "g", ""]), "arguments": ARGUMENTS})
    plain = st.fixed_dictionaries({"id": IDS, "type": st.just("function"), "function": function})
    return st.one_of(plain, plain, plain.map(lambda c: {**c, "extra": 1}),
                     plain.map(lambda c: {k: v for k, v in c.items() if k != "id"}))


def content() -> st.SearchStrategy[Any]:
    parts = st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=2)
    return st.one_of(TEXT, TEXT, st.none(), parts)


def wire_message() -> st.SearchStrategy[dict[str, Any]]:
    """Chat wire messages of the plain shapes and of near ones (another key, a null, a list)."""
    user = st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "developer"]), "content": content()})
    assistant = st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": content()},
        optional={"tool_calls": st.one_of(st.lists(call(), max_size=3), st.none())})
    tool = st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": IDS, "content": content()},
                                 optional={"name": st.just("f")})
    base = st.one_of(user, assistant, assistant, tool, tool)
    return st.one_of(base, base, base, base.map(lambda m: {**m, "name": "n"}))


def plain_message() -> st.SearchStrategy[dict[str, Any]]:
    """Chat wire messages of the plain shapes only (what agents save most), ids from a small pool."""
    ids = st.sampled_from(["a", "b", "c"])
    plain_call = st.fixed_dictionaries({"id": ids, "type": st.just("function"), "function": st.fixed_dictionaries(
        {"name": st.just("f"), "arguments": st.sampled_from(['{"q": 1}', "{}", "x"])})})
    return st.one_of(
        st.fixed_dictionaries({"role": st.sampled_from(["user", "system"]), "content": TEXT}),
        st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(TEXT, st.none())}),
        st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(TEXT, st.none()),
                               "tool_calls": st.lists(plain_call, min_size=1, max_size=3)}),
        st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": ids, "content": TEXT}))


LISTS = st.one_of(st.lists(wire_message(), max_size=8), st.lists(plain_message(), max_size=8))


class SlowChat(OpenAIChat):
    """Chat with the stub route off: every body goes the neutral route."""

    def _stubs(self, items: list[Any]) -> Stubs | None:
        return None


FAST, SLOW = OpenAIChat(), SlowChat()


@examples(300)
@given(items=LISTS)
def test_repair_body_with_the_fast_path_equals_it_without(items: list[dict[str, Any]]) -> None:
    body = {"model": "gpt-4.1", "messages": items, "temperature": 0}
    before = copy.deepcopy(body)
    try:
        slow = SLOW.repair_body(body)
    except ChatmendError as exc:
        try:
            FAST.repair_body(body)
        except ChatmendError as fast_exc:
            assert str(fast_exc) == str(exc)
            return
        raise AssertionError("the fast path read what the slow path refused") from None
    fast = FAST.repair_body(body)
    assert fast.body == slow.body
    assert fast.result == slow.result
    assert fast.history == slow.history and fast.item_of == slow.item_of
    assert fast.report == slow.report
    assert body == before
    # what either path does not list as written anew is the input's own objects; the span path (`_spans`) keeps a
    # moved or kept result as it was, where the slow path writes its run anew, so it lists at most what that lists
    for repaired in (fast, slow):
        inputs = {id(item) for item in items}
        assert [id(item) in inputs for item in repaired.body["messages"]] == [
            i not in repaired.rewritten for i in range(len(repaired.body["messages"]))]
    assert set(fast.rewritten) <= set(slow.rewritten)


def test_dialects_with_rules_of_their_own_check_the_list_the_stubs_assemble() -> None:
    from chatmend import providers

    for name in ("kimi", "mistral", "groq", "xai", "deepseek", "ollama", "openrouter", "vllm"):
        assert not providers.get(name).plain_lists_valid


# --- the runs of rewritten items (regressions found by bench/body_repair.py's messy bodies) ----------------------


def _call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{\"k\": 1}"}}


def test_a_kept_result_between_two_new_ones_of_one_call_is_written_with_them() -> None:
    # three calls, only the second answered: the synthetic results of the first and third stand on both sides of
    # the kept one (this raised IndexError in Chat's writer: the second run was written without its call)
    calls = {"role": "assistant", "content": None, "tool_calls": [_call("a"), _call("b"), _call("c")]}
    answered = {"role": "tool", "tool_call_id": "b", "content": "ok"}
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "go"}, calls, answered]}
    for adapter in (FAST, SLOW):
        repaired = adapter.repair_body(body)
        items = repaired.body["messages"]
        assert [m.get("tool_call_id") for m in items[2:]] == ["a", "b", "c"]
        assert items[2]["content"].startswith("Error: Interrupted") and items[3] == answered
        assert items[0] is body["messages"][0] and items[1] is calls  # what precedes is kept
        # the stub route keeps the answered result as it was; the neutral one writes the run around it anew
        assert repaired.rewritten == ([2, 4] if adapter is FAST else [2, 3, 4])
        assert adapter.check(repaired.body) == []


def test_a_result_moved_back_to_its_call_keeps_every_item_in_the_new_order() -> None:
    calls = {"role": "assistant", "content": "x", "tool_calls": [_call("a")]}
    steer = {"role": "user", "content": "also the docs"}
    result = {"role": "tool", "tool_call_id": "a", "content": "ok"}
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "go"}, calls, steer, result]}
    repaired = FAST.repair_body(body)
    assert repaired.body["messages"] == [body["messages"][0], calls, result, steer]
    assert all(a is b for a, b in zip(repaired.body["messages"], [body["messages"][0], calls, result, steer]))
    assert repaired.rewritten == [] and repaired.changed
    assert FAST.check(repaired.body) == []
