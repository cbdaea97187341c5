"""`Provider.repair_body`: a body repaired in its own format, every item repair leaves alone kept as it was."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, FilePart, NativePart, TextPart, dumps, loads, providers
from chatmend.exceptions import ReadError, UnsupportedError
from chatmend.providers.base import Dropped
from tests.providers.common import writable
from tests.strategies import examples, valid_histories

ALL = providers.names()


def _body(name: str, history: list[ChatMessage]) -> dict[str, Any]:
    provider = providers.get(name)
    return provider.to_request(writable(provider, history), model="m-1")  # (DeepSeek takes no images)


@pytest.mark.parametrize("name", ALL)
@examples(40)
@given(history=valid_histories())
def test_a_valid_body_comes_back_equal(name: str, history: list[ChatMessage]) -> None:
    provider = providers.get(name)
    body = _body(name, history)
    before = copy.deepcopy(body)
    repaired = provider.repair_body(body)
    assert repaired.body == before
    assert body == before  # the input is not mutated
    assert not repaired.changed


@pytest.mark.parametrize("name", ALL)
@examples(40)
@given(history=valid_histories(), data=st.data())
def test_a_repaired_body_passes_check_and_repairs_to_itself(
        name: str, history: list[ChatMessage], data: st.DataObject) -> None:
    provider = providers.get(name)
    body = _body(name, history)
    items = body[provider.list_key]
    # items cut out anywhere: results lost, calls lost (orphan results), turns lost
    keep = data.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
    broken = {**body, provider.list_key: [item for item, k in zip(items, keep) if k]}
    first = provider.repair_body(broken)
    assert provider.check(first.body) == [] or not broken[provider.list_key]
    second = provider.repair_body(first.body)
    assert second.body == first.body
    assert not second.changed


@examples(60)
@given(history=valid_histories(), data=st.data())
def test_removing_one_result_gives_a_body_whose_only_change_is_its_insertion(
        history: list[ChatMessage], data: st.DataObject) -> None:
    chat = providers.get("openai_chat")
    body = _body("openai_chat", history)
    items = body["messages"]
    results = [i for i, item in enumerate(items) if item["role"] == "tool"]
    if not results:
        return
    gone = data.draw(st.sampled_from(results))
    broken = {**body, "messages": items[:gone] + items[gone + 1:]}
    repaired = chat.repair_body(broken)
    out = repaired.body["messages"]
    assert len(out) == len(items)
    assert repaired.rewritten == [gone]
    assert out[gone]["tool_call_id"] == items[gone]["tool_call_id"]
    kept = out[:gone] + out[gone + 1:]
    assert all(a is b for a, b in zip(kept, broken["messages"]))  # the very same objects, untouched
    assert chat.check(repaired.body) == []


def test_top_level_fields_stay_as_they_were() -> None:
    chat = providers.get("openai_chat")
    body = {"model": "gpt-4o", "temperature": 0.2, "x_unknown": {"a": [1]}, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{ "x" : 1 }'}}]},
    ]}
    repaired = chat.repair_body(body)
    assert {k: v for k, v in repaired.body.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"}
    assert repaired.body["messages"][:2] == body["messages"]
    assert repaired.body["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{ "x" : 1 }'
    assert [m["role"] for m in repaired.body["messages"]] == ["user", "assistant", "tool"]


def test_a_renamed_call_rewrites_its_message_and_the_results_it_renames() -> None:
    chat = providers.get("openai_chat")
    call = {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    body = {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{**call, "id": "same"}, {**call, "id": "same"}]},
        {"role": "tool", "tool_call_id": "same", "content": "one"},
        {"role": "tool", "tool_call_id": "same", "content": "two"},
        {"role": "user", "content": "thanks"},
    ]}
    repaired = chat.repair_body(body)
    out = repaired.body["messages"]
    assert out[0] is body["messages"][0] and out[-1] is body["messages"][-1]
    # the results are written with their renamed call; the first, the same as the input's, is the input's own
    assert repaired.rewritten == [1, 3]
    assert out[2] is body["messages"][2] and out[3]["tool_call_id"] == "same_1"
    assert chat.check(repaired.body) == []


@pytest.mark.parametrize("name", ALL)
def test_a_body_without_its_list_is_a_located_read_error(name: str) -> None:
    provider = providers.get(name)
    with pytest.raises(ReadError, match=provider.list_key):
        provider.repair_body({"model": "m"})


NATIVE = NativePart(provider="anthropic", data={"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                                                "input": {"query": "x"}})


def test_a_native_part_of_another_wire_format_is_refused_by_name_and_path() -> None:
    history = [ChatMessage(role="user", content="q"),
               ChatMessage(role="assistant", content=(TextPart(text="a"), NATIVE))]
    with pytest.raises(UnsupportedError) as caught:
        providers.get("openai_chat").to_request(history, model="gpt-4o")
    assert caught.value.path == "messages[1].content[1]"
    assert caught.value.feature == "server_tool_use"


def test_a_dropped_part_is_reported_and_left_out() -> None:
    history = [ChatMessage(role="user", content=(TextPart(text="q"), NATIVE)),
               ChatMessage(role="assistant", content=(NATIVE, TextPart(text="a")))]
    drops: list[Dropped] = []
    body = providers.get("gemini").to_request(history, model="gemini-2.5-pro", on_unsupported=drops.append)
    assert drops == [Dropped("anthropic", "server_tool_use", "messages[0].content[1]"),
                     Dropped("anthropic", "server_tool_use", "messages[1].content[0]")]
    assert "srvtoolu_1" not in json.dumps(body)
    assert providers.get("gemini").check(body) == []


@pytest.mark.parametrize("name", [n for n in ALL if "file" not in providers.get(n).writes_parts])
def test_a_part_the_writer_cannot_write_is_unsupported_not_lost(name: str) -> None:
    part = FilePart(media_type="application/pdf", data="JVBERi0=")
    with pytest.raises(UnsupportedError) as caught:
        providers.get(name).to_request([ChatMessage(role="user", content=(part,))], model="m-1")
    assert caught.value.path == "messages[0].content[0]"


def test_native_and_file_parts_round_trip_the_neutral_jsonl() -> None:
    history = [ChatMessage(role="user", content=(FilePart(url="https://x/doc.pdf", filename="doc.pdf"), NATIVE,
                                                 TextPart(text="t", provider_data={"anthropic": {"cache_control": {
                                                     "type": "ephemeral"}}})))]
    assert loads(dumps(history)) == history


@pytest.mark.parametrize("name", ALL)
@examples(60)
@given(history=valid_histories(), data=st.data())
def test_a_body_whose_repair_answers_a_call_or_notes_a_result_is_one_check_refuses(
        name: str, history: list[ChatMessage], data: st.DataObject) -> None:
    """`repair_body` asks `check` whether the input was valid as it is only when its repair did neither (`_refused`):
    a call left without its result, or a result without its call, is a problem `check` finds in the list."""
    provider = providers.get(name)
    body = _body(name, history)
    items = body[provider.list_key]
    keep = data.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
    broken = {**body, provider.list_key: [item for item, k in zip(items, keep) if k]}
    repaired = provider.repair_body(broken)
    if provider._refused(broken, repaired):
        assert provider._list_problems(broken) != []
        assert repaired.changed
    else:
        assert repaired.changed == bool(provider._list_problems(broken)) or not repaired.report.changed


def test_a_list_holding_one_dict_object_twice_keeps_both() -> None:
    # the neutral route kept an item once when the item before it in the output was the same object
    hello = {"role": "user", "content": "hi"}
    items = [hello, {"role": "assistant", "content": ""}, hello, {"role": "assistant", "content": " "},
             {"role": "tool", "tool_call_id": "c", "content": "r"}]
    repaired = providers.get("openai_chat").repair_body({"model": "m", "messages": items})
    assert [m["content"] for m in repaired.body["messages"]][:2] == ["hi", "hi"]
    assert repaired.body["messages"][0] is hello and repaired.body["messages"][1] is hello


@examples(30)
@given(history=valid_histories(), data=st.data())
def test_a_body_repairs_as_its_json_copy_when_it_holds_one_item_object_twice(
        history: list[ChatMessage], data: st.DataObject) -> None:
    # bodies built in Python may share a dict (a system prompt, a canned reply); JSON never does
    for name in ALL:
        provider = providers.get(name)
        items = list(_body(name, history)[provider.list_key])
        keep = data.draw(st.lists(st.booleans(), min_size=len(items), max_size=len(items)))
        items = [item for item, k in zip(items, keep) if k]
        if not items:
            continue
        twice = items[data.draw(st.integers(0, len(items) - 1))]
        items.insert(data.draw(st.integers(0, len(items))), twice)
        shared = {"model": "m-1", provider.list_key: items}
        copied = json.loads(json.dumps(shared))

        def repaired(body: dict[str, Any], provider: Any = provider) -> Any:
            try:
                return provider.repair_body(body).body
            except (ReadError, UnsupportedError) as exc:
                return str(exc)

        assert repaired(shared) == repaired(copied), name
