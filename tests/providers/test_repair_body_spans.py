"""`repair_body`'s span path (`chatmend.planner`): the spec's rules decided on stubs of the wire items give the
very body the neutral path writes, the same report, and the same neutral side (worked out only when asked)."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import providers
from chatmend.planner import OTHER, RESULT, Stubs
from chatmend.providers.anthropic import Anthropic
from chatmend.providers.assembly import _Assembly
from chatmend.providers.base import Provider
from chatmend.providers.openai_chat import OpenAIChat
from chatmend.providers.openai_chat import spans as chat_spans
from tests.strategies import examples

CHAT = OpenAIChat()


def _workloads() -> Any:
    """bench/workloads.py, whose messy bodies bench/body_repair.py times (bench/ holds scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(
        "_bench_workloads", Path(__file__).resolve().parents[2] / "bench" / "workloads.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chat_messy_body(n_messages: int, seed: int = 5) -> dict[str, Any]:
    body: dict[str, Any] = _workloads().chat_messy_body(n_messages, seed=seed)
    return body
IDS = st.sampled_from(["a", "b", "c", "", "a_1", "call_2_0"])
TEXT = st.sampled_from(["ok", "Done.", "ünïcode ✓", "Error: it broke"])


def plain_call() -> st.SearchStrategy[dict[str, Any]]:
    function = st.fixed_dictionaries({"name": st.sampled_from(["f", "read_file"]),
                                      "arguments": st.sampled_from(['{"q": 1}', "{ \"q\" : 2 }", "{}", "{\"cut"])})
    return st.fixed_dictionaries({"id": IDS, "type": st.just("function"), "function": function})


def plain_item() -> st.SearchStrategy[dict[str, Any]]:
    """Every shape the Chat stubs take: plain messages, blank replies (rule 1), a note's text parts, results with
    any id, anywhere."""
    note = st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), min_size=1, max_size=2)
    return st.one_of(
        st.fixed_dictionaries({"role": st.sampled_from(["user", "system"]), "content": TEXT}),
        st.fixed_dictionaries({"role": st.just("user"), "content": note}),
        st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(TEXT, st.none(), st.just(" "))}),
        st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(TEXT, st.none()),
                               "tool_calls": st.lists(plain_call(), min_size=1, max_size=3)}),
        st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": IDS, "content": TEXT}),
        st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": IDS, "content": TEXT}),
    )


class NeutralChat(OpenAIChat):
    """Chat with the span path off."""

    def _stubs(self, items: list[Any]) -> Stubs | None:
        return None


class NeutralAnthropic(Anthropic):
    """Anthropic with the span path off."""

    def _stubs(self, items: list[Any]) -> Stubs | None:
        return None


def neutral(adapter: Provider, body: dict[str, Any], is_read_only: Any = None) -> Any:
    return adapter._neutral_repair_body(body, body["messages"], is_read_only)


def assert_same_as_neutral(adapter: Provider, body: dict[str, Any], is_read_only: Any = None) -> None:
    before = copy.deepcopy(body)
    assert adapter._stubs(body["messages"]) is not None  # the span path is the one taken
    fast = adapter.repair_body(body, is_read_only=is_read_only)
    slow = (NeutralChat() if isinstance(adapter, OpenAIChat) else NeutralAnthropic()).repair_body(
        body, is_read_only=is_read_only)
    assert fast.body == slow.body
    again = adapter.repair_body(copy.deepcopy(body), is_read_only=is_read_only)
    assert json.dumps(fast.body) == json.dumps(again.body)  # the same bytes every time
    assert fast.report == slow.report
    assert fast.changed == slow.changed
    assert fast.result == slow.result and fast.history == slow.history and fast.item_of == slow.item_of
    assert body == before  # the input is not mutated
    inputs = {id(item) for item in body["messages"]}
    assert [id(item) in inputs for item in fast.body["messages"]] == [
        i not in fast.rewritten for i in range(len(fast.body["messages"]))]
    assert set(fast.rewritten) <= set(slow.rewritten)
    if not fast.body["messages"]:
        return  # every message was blank: nothing is left to send (`check` says EMPTY)
    assert adapter.check(fast.body) == []
    again = adapter.repair_body(fast.body)
    assert not again.changed and again.body == fast.body  # idempotent


@examples(400)
@given(items=st.lists(plain_item(), min_size=1, max_size=12), read_only=st.booleans())
def test_the_span_path_writes_the_body_the_neutral_path_writes(items: list[dict[str, Any]], read_only: bool) -> None:
    body = {"model": "gpt-4.1", "messages": items, "temperature": 0}
    assert_same_as_neutral(CHAT, body, (lambda name: name == "read_file") if read_only else None)


@pytest.mark.parametrize("seed", range(3))
def test_the_messy_workload_takes_the_span_path_and_gives_the_neutral_body(seed: int) -> None:
    assert_same_as_neutral(CHAT, chat_messy_body(1500, seed=seed))


def test_a_renamed_copy_keeps_the_keys_of_the_item_in_their_order() -> None:
    call = {"type": "function", "function": {"name": "f", "arguments": "{}"}, "id": "a"}
    body: dict[str, Any] = {"model": "gpt-4.1", "messages": [
        {"tool_calls": [call, dict(call)], "content": None, "role": "assistant"},
        {"content": "1", "role": "tool", "tool_call_id": "a"}, {"content": "2", "role": "tool", "tool_call_id": "a"}]}
    items = CHAT.repair_body(body).body["messages"]
    assert [c["id"] for c in items[0]["tool_calls"]] == ["a", "a_1"] and items[2]["tool_call_id"] == "a_1"
    assert [list(item) for item in items] == [list(item) for item in body["messages"]]
    assert list(items[0]["tool_calls"][1]) == list(call)


def test_the_neutral_side_is_worked_out_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = OpenAIChat._neutral_repair_body

    def counted(self: OpenAIChat, *args: Any) -> Any:
        calls.append(1)
        return original(self, *args)

    monkeypatch.setattr(OpenAIChat, "_neutral_repair_body", counted)
    repaired = CHAT.repair_body(chat_messy_body(300))
    assert repaired.changed and repaired.report.interrupted and calls == []
    assert repaired.result.interrupted and repaired.history and repaired.item_of
    assert calls == [1]  # once, for all three


def test_ids_the_provider_would_not_take_go_the_neutral_way() -> None:
    long_id = "x" * 41  # OC5: at most 40 characters
    body = {"model": "gpt-4.1", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": long_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]}
    repaired = CHAT.repair_body(body)
    assert CHAT.check(repaired.body) == []
    wire_id = repaired.body["messages"][1]["tool_calls"][0]["id"]
    assert wire_id != long_id and len(wire_id) <= 40  # the neutral path mapped it to a wire id
    assert repaired.body["messages"][2]["tool_call_id"] == wire_id
    assert repaired.body == neutral(CHAT, body).body


CHAT_DIALECTS = ("openai_chat", "together", "deepseek", "groq", "xai", "openrouter", "vllm", "ollama", "kimi",
                 "mistral")


def without_stubs(adapter: Provider) -> Provider:
    """The adapter with the stub route off: every body goes the neutral route."""
    neutral: Provider = type(f"Neutral{type(adapter).__name__}", (type(adapter),),
                             {"_stubs": lambda self, items: None})()
    return neutral


def test_every_chat_dialect_takes_the_stub_route() -> None:
    items = [{"role": "user", "content": "hi"}]
    for name in CHAT_DIALECTS:
        repaired = providers.get(name).repair_body({"model": "m", "messages": items})
        assert repaired.from_spans and not repaired.changed, name


@examples(300)
@given(name=st.sampled_from(CHAT_DIALECTS), items=st.lists(plain_item(), min_size=1, max_size=12),
       named=st.booleans(), read_only=st.booleans())
def test_every_chat_dialect_s_stub_route_writes_the_body_its_neutral_route_writes(
        name: str, items: list[dict[str, Any]], named: bool, read_only: bool) -> None:
    adapter = providers.get(name)
    if named:  # results named after their tool, as Kimi and Mistral write them
        items = [{**item, "name": "f"} if item["role"] == "tool" else item for item in items]
    body = {"model": "m", "messages": items}
    is_read_only = (lambda tool: tool == "read_file") if read_only else None
    before = copy.deepcopy(body)
    fast = adapter.repair_body(body, is_read_only=is_read_only)
    slow = without_stubs(adapter).repair_body(copy.deepcopy(body), is_read_only=is_read_only)
    assert fast.body == slow.body and fast.report == slow.report and fast.changed == slow.changed
    assert body == before
    if fast.from_spans and fast.body["messages"]:
        assert adapter._list_problems(fast.body) == []


def test_kimi_takes_the_stub_route_for_its_own_ids_only() -> None:
    kimi = providers.get("kimi")

    def turns(call_id: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}]}]

    own = kimi.repair_body({"model": "kimi-k2", "messages": turns("functions.read:0")})
    assert own.from_spans and own.body["messages"][2] == {
        "role": "tool", "tool_call_id": "functions.read:0", "name": "read",
        "content": own.body["messages"][2]["content"]}
    other = kimi.repair_body({"model": "kimi-k2", "messages": turns("call_1")})
    assert not other.from_spans and other.body["messages"][1]["tool_calls"][0]["id"] == "functions.read:0"


def test_shapes_the_stubs_do_not_take_go_the_neutral_way() -> None:
    near: list[dict[str, Any]] = [{"role": "developer", "content": "s"}, {"role": "user", "content": ""},
                 {"role": "tool", "tool_call_id": "a", "content": "ok", "name": "f"},
                 {"role": "assistant", "content": None, "tool_calls": []},
                 {"role": "user", "content": []}]
    for item in near:
        assert chat_spans.stubs([{"role": "user", "content": "hi"}, item]) is None, item


# --- Anthropic -----------------------------------------------------------------------------------------------

ANTHROPIC = Anthropic()
CACHED = {"cache_control": {"type": "ephemeral"}}


def text_block(texts: st.SearchStrategy[str] = TEXT) -> st.SearchStrategy[dict[str, Any]]:
    block = st.fixed_dictionaries({"type": st.just("text"), "text": texts})
    return st.one_of(block, block.map(lambda b: {**b, **CACHED}))


def assistant_turn() -> st.SearchStrategy[dict[str, Any]]:
    tool_use = st.fixed_dictionaries({"type": st.just("tool_use"), "id": IDS.filter(bool),
                                      "name": st.sampled_from(["f", "read_file"]),
                                      "input": st.sampled_from([{}, {"q": 1}])})
    texts = st.lists(text_block(st.sampled_from(["ok", "Let me look."])), max_size=2)
    blocks = st.tuples(texts, st.lists(tool_use, max_size=3)).map(lambda pair: [*pair[0], *pair[1]])  # calls last
    return st.fixed_dictionaries({"role": st.just("assistant"),
                                  "content": st.one_of(blocks, st.sampled_from(["Done.", " "]),
                                                       st.just([{"type": "text", "text": " "}]))})


def user_turn() -> st.SearchStrategy[dict[str, Any]]:
    result = st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": IDS.filter(bool),
         "content": st.one_of(TEXT, st.lists(text_block(), min_size=1, max_size=2))},
        optional={"is_error": st.booleans(), "cache_control": st.just(CACHED["cache_control"])})
    image = st.just({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}})
    blocks = st.lists(st.one_of(result, result, text_block(), image), min_size=1, max_size=5)
    return st.fixed_dictionaries({"role": st.just("user"), "content": st.one_of(blocks, blocks, TEXT)})


@examples(400)
@given(items=st.lists(st.one_of(user_turn(), assistant_turn()), min_size=1, max_size=10), read_only=st.booleans())
def test_the_span_path_writes_the_anthropic_body_the_neutral_path_writes(items: list[dict[str, Any]],
                                                                        read_only: bool) -> None:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": items}
    assert_same_as_neutral(ANTHROPIC, body, (lambda name: name == "read_file") if read_only else None)


@pytest.mark.parametrize("seed", range(3))
def test_the_messy_anthropic_workload_takes_the_span_path_and_gives_the_neutral_body(seed: int) -> None:
    assert_same_as_neutral(ANTHROPIC, _workloads().anthropic_messy_body(1500, seed=seed))


def test_anthropic_bodies_with_thinking_on_or_other_blocks_go_the_neutral_way() -> None:
    body = _workloads().anthropic_messy_body(40)
    thinking_on = {**body, "thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert ANTHROPIC._stub_repair(thinking_on, thinking_on["messages"], None) is None  # AT1 judges the last turn
    assert ANTHROPIC._stub_repair(body, body["messages"], None) is not None
    for turn in ({"role": "user", "content": [{"type": "document", "source": {"type": "text", "data": "d"}}]},
                 {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s", "name": "web_search",
                                                    "input": {}}]},
                 {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
                 {"role": "system", "content": "s"}, {"role": "user", "content": " "},
                 {"role": "user", "content": [{"type": "text", "text": ""}]}):
        assert ANTHROPIC._stubs([*body["messages"], turn]) is None, turn


@examples(300)
@given(items=st.lists(st.one_of(user_turn(), assistant_turn()), min_size=1, max_size=10))
def test_the_anthropic_stubs_say_where_each_message_begins_in_its_turn(items: list[dict[str, Any]]) -> None:
    stubs = ANTHROPIC._stubs(items)
    if stubs is None:
        return  # a blank text or turn the writer leaves out: the neutral path's
    assert stubs.starts is not None and stubs.offsets is not None
    assert len(stubs.offsets) == len(stubs.kinds) == stubs.starts[-1]
    for r, item in enumerate(items):
        messages = range(stubs.starts[r], stubs.starts[r + 1])
        if item["role"] == "assistant":
            assert len(messages) == 1 and stubs.offsets[messages[0]] == 0  # a turn is one message
            continue
        content = item["content"] if isinstance(item["content"], list) else [item["content"]]
        bounds = [stubs.offsets[m] for m in messages] + [len(content)]
        assert bounds[0] == 0 and bounds == sorted(set(bounds))  # each message a run of blocks, in order, all
        for m, begin, end in zip(messages, bounds, bounds[1:]):
            blocks = content[begin:end]
            if stubs.kinds[m] == RESULT:
                assert len(blocks) == 1 and blocks[0]["tool_use_id"] == stubs.refs[m]
            else:
                assert stubs.kinds[m] == OTHER and not any(
                    isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)


@given(sizes=st.lists(st.integers(1, 4), min_size=1, max_size=12), lookups=st.lists(st.integers(0, 60), max_size=30))
def test_the_assembly_finds_the_turn_of_a_message_looked_up_in_any_order(sizes: list[int],
                                                                         lookups: list[int]) -> None:
    starts = [sum(sizes[:r]) for r in range(len(sizes) + 1)]  # turn r holds sizes[r] messages
    stubs = Stubs(items=True)
    for size in sizes:
        for at in range(size):
            stubs.add(OTHER, None, at)
    assert stubs.end().starts == starts
    assembly = _Assembly(ANTHROPIC, [], stubs, None)
    for m in (m for m in lookups if m <= starts[-1]):
        assert assembly.item_of(m) == max(r for r, start in enumerate(starts) if start <= m)


def test_the_anthropic_stubs_take_cache_breakpoints_and_error_flags_and_nothing_else_new() -> None:
    cached = {"cache_control": {"type": "ephemeral"}}
    call = {"type": "tool_use", "id": "a", "name": "f", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "a", "content": "ok"}
    steer = {"type": "text", "text": "go", **cached}
    taken: list[list[dict[str, Any]]] = [
        [{"role": "assistant", "content": [{"type": "text", "text": "hi", **cached}, {**call, **cached}]},
         {"role": "user", "content": [{**result, "is_error": True, **cached}, steer]}],
        [{"role": "assistant", "content": [call]},
         {"role": "user", "content": [{**result, "content": [{"type": "text", "text": "ok", **cached}]}]}],
    ]
    for items in taken:
        assert ANTHROPIC._stubs(items) is not None, items
    refused: list[list[dict[str, Any]]] = [
        [{"role": "assistant", "content": [{"type": "text", "text": " "}, call]}],  # AN9: the blank block goes
        [{"role": "assistant", "content": [{**call, "extra": 1}]}],
        [{"role": "assistant", "content": [{**call, "id": 7}]}],
        [{"role": "assistant", "content": [{**call, "name": ""}]}],
        [{"role": "user", "content": [{**result, "tool_use_id": None}]}],
        [{"role": "user", "content": [{**result, "content": " "}]}],
        [{"role": "user", "content": [{**result, "is_error": "yes"}]}],
        [{"role": "user", "content": [{**result, "content": [{"type": "image", "source": {}}]}]}],
        [{"role": "user", "content": [{"type": "text", "text": "hi", "citations": []}]}],
        [{"role": "user", "content": [{"type": "image", "source": "x"}]}],
    ]
    for items in refused:
        assert ANTHROPIC._stubs(items) is None, items
