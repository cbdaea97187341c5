"""OpenAI Responses' whole input vocabulary (#22): every item type of the SDK's `ResponseInputItemParam` union
reads, pairs where it is a client call, and is written back as it was; one test per row of the README's table."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.responses import ResponseInputItemParam
from pydantic import ConfigDict, TypeAdapter

from chatmend import ChatMessage, FilePart, ImagePart, NativePart, TextPart, ThinkingPart, ToolCall
from chatmend.providers import openai_responses as orr
from chatmend.providers.openai_responses import PROVIDER
from chatmend.providers.openai_responses.read import call_item_type
from chatmend.providers.openai_responses.wire import CALL_OUTPUTS, answered_id, is_client_output
from chatmend.providers.openai_responses.write import BLANK_PNG
from tests.providers.common import drain
from tests.strategies import examples

REAL = Path(__file__).resolve().parents[3] / "shared" / "real-world"
PNG_URL = ("data:image/png;base64,"
           "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
_ITEM: TypeAdapter[Any] = TypeAdapter(ResponseInputItemParam | None, config=ConfigDict(extra="forbid"))


def sdk_valid(items: list[Any]) -> None:
    """Every item validates against the SDK's input item union (no unknown fields)."""
    for item in items:
        drain(_ITEM.validate_python(item))


Snippet = Callable[[int], list[dict[str, Any]]]
"""Items of one row, their ids made unique by `n` (so snippets combine into one valid body)."""


@dataclass(frozen=True)
class Row:
    """A row of the README's vocabulary table: the items that show it, and how chatmend reads the first one."""

    type: str
    treatment: str  # call / result / hosted / native / message / content / thinking
    items: Snippet
    sdk: bool = True  # in the SDK's union (an unknown type is not)


def _user(n: int) -> dict[str, Any]:
    return {"role": "user", "content": f"go {n}"}


def _pair(call: dict[str, Any], output: dict[str, Any]) -> list[dict[str, Any]]:
    return [call, output]


ROWS = [
    Row("message (easy input)", "message", lambda n: [
        {"role": "user", "content": f"hi {n}"}, {"role": "assistant", "content": "hello", "phase": "commentary"}]),
    Row("message (input)", "message", lambda n: [{"type": "message", "role": "developer", "status": "completed",
                                                  "content": [{"type": "input_text", "text": "rules"}]}]),
    Row("message (output)", "message", lambda n: [_user(n), {
        "type": "message", "id": f"msg_o{n}", "role": "assistant", "status": "completed", "phase": "final_answer",
        "content": [{"type": "output_text", "text": "Paris.", "logprobs": [], "annotations": [
            {"type": "url_citation", "url": "https://e.x/p", "title": "P", "start_index": 0, "end_index": 5}]}]}]),
    Row("refusal", "content", lambda n: [_user(n), {"role": "assistant", "type": "message", "id": f"msg_r{n}",
                                                    "status": "completed",
                                                    "content": [{"type": "refusal", "refusal": "I can't."}]}]),
    Row("input_text", "content", lambda n: [{"role": "user", "content": [{"type": "input_text", "text": "t"}]}]),
    Row("output_text", "content", lambda n: [_user(n), {
        "type": "message", "id": f"msg_t{n}", "role": "assistant", "status": "incomplete", "content": [
        {"type": "output_text", "text": "a", "annotations": [{"type": "file_citation", "file_id": "file-1",
                                                              "filename": "f.txt", "index": 0}]}]}]),
    Row("an unknown part type", "native", lambda n: [{"role": "user", "content": [
        {"type": "input_hologram", "beam": 1}]}], sdk=False),
    Row("input_image", "content", lambda n: [{"role": "user", "content": [
        {"type": "input_image", "image_url": PNG_URL, "detail": "low"}]}]),
    Row("input_image (file_id)", "native", lambda n: [{"role": "user", "content": [
        {"type": "input_image", "file_id": "file-img1", "detail": "auto"}]}]),
    Row("input_file", "content", lambda n: [{"role": "user", "content": [
        {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0="},
        {"type": "input_file", "file_id": "file-abc"},
        {"type": "input_file", "file_url": "https://e.x/b.pdf"}]}]),
    Row("reasoning", "thinking", lambda n: [_user(n), {
        "type": "reasoning", "id": f"rs_{n}", "status": "completed", "encrypted_content": "gAAAA-enc",
        "summary": [{"type": "summary_text", "text": "thinking"}],
        "content": [{"type": "reasoning_text", "text": "r"}]},
        {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "ok", "annotations": []}]}]),
    Row("function_call", "call", lambda n: [_user(n), *_pair(
        {"type": "function_call", "call_id": f"call_f{n}", "name": "get_weather", "arguments": '{ "city": "Paris" }',
         "status": "completed", "namespace": "tools"},
        {"type": "function_call_output", "call_id": f"call_f{n}", "status": "completed", "output": "22 C"})]),
    Row("function_call_output", "result", lambda n: [_user(n), *_pair(
        {"type": "function_call", "call_id": f"call_o{n}", "name": "shot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": f"call_o{n}", "output": [
            {"type": "input_text", "text": "see"}, {"type": "input_image", "image_url": PNG_URL, "detail": "auto"},
            {"type": "input_file", "file_id": "file-log"}]})]),
    Row("custom_tool_call", "call", lambda n: [_user(n), *_pair(
        {"type": "custom_tool_call", "call_id": f"call_c{n}", "name": "apply_diff", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": f"call_c{n}", "output": "applied"})]),
    Row("custom_tool_call_output", "result", lambda n: [_user(n), *_pair(
        {"type": "custom_tool_call", "call_id": f"call_co{n}", "name": "grammar", "input": "SELECT 1"},
        {"type": "custom_tool_call_output", "call_id": f"call_co{n}",
         "output": [{"type": "input_text", "text": "1"}]})]),
    Row("local_shell_call", "call", lambda n: [_user(n), *_pair(
        {"type": "local_shell_call", "id": f"lsh_{n}", "call_id": f"call_l{n}", "status": "completed",
         "action": {"type": "exec", "command": ["ls", "-la"], "env": {}}},
        {"type": "local_shell_call_output", "id": f"call_l{n}", "output": '{"stdout": "a.txt"}'})]),
    Row("local_shell_call_output", "result", lambda n: [_user(n), *_pair(
        {"type": "local_shell_call", "id": f"lsh_o{n}", "call_id": f"call_lo{n}", "status": "completed",
         "action": {"type": "exec", "command": ["pwd"], "env": {"A": "1"}, "timeout_ms": 1000}},
        {"type": "local_shell_call_output", "id": f"call_lo{n}", "output": "/tmp", "status": "completed"})]),
    Row("shell_call", "call", lambda n: [_user(n), *_pair(
        {"type": "shell_call", "call_id": f"call_s{n}", "action": {"commands": ["echo hi"], "timeout_ms": 500}},
        {"type": "shell_call_output", "call_id": f"call_s{n}", "max_output_length": 100, "output": [
            {"stdout": "hi\n", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]})]),
    Row("shell_call_output", "result", lambda n: [_user(n), *_pair(
        {"type": "shell_call", "call_id": f"call_so{n}", "status": "completed", "action": {"commands": ["sleep 9"]}},
        {"type": "shell_call_output", "call_id": f"call_so{n}", "output": [
            {"stdout": "", "stderr": "killed", "outcome": {"type": "timeout"}}]})]),
    Row("apply_patch_call", "call", lambda n: [_user(n), *_pair(
        {"type": "apply_patch_call", "call_id": f"call_a{n}", "status": "completed",
         "operation": {"type": "update_file", "path": "a.py", "diff": "@@ -1 +1 @@\n-a\n+b\n"}},
        {"type": "apply_patch_call_output", "call_id": f"call_a{n}", "status": "completed", "output": "done"})]),
    Row("apply_patch_call_output", "result", lambda n: [_user(n), *_pair(
        {"type": "apply_patch_call", "call_id": f"call_ao{n}", "status": "completed",
         "operation": {"type": "delete_file", "path": "b.py"}},
        {"type": "apply_patch_call_output", "call_id": f"call_ao{n}", "status": "failed"})]),
    Row("computer_call", "call", lambda n: [_user(n), *_pair(
        {"type": "computer_call", "id": f"cu_{n}", "call_id": f"call_u{n}", "status": "completed",
         "pending_safety_checks": [], "action": {"type": "click", "button": "left", "x": 1, "y": 2}},
        {"type": "computer_call_output", "call_id": f"call_u{n}", "acknowledged_safety_checks": [],
         "output": {"type": "computer_screenshot", "image_url": PNG_URL}})]),
    Row("computer_call_output", "result", lambda n: [_user(n), *_pair(
        {"type": "computer_call", "id": f"cu_o{n}", "call_id": f"call_uo{n}", "status": "completed",
         "pending_safety_checks": [], "action": {"type": "screenshot"}},
        {"type": "computer_call_output", "call_id": f"call_uo{n}",
         "output": {"type": "computer_screenshot", "file_id": "file-shot"}})]),
    Row("tool_search_call (client)", "call", lambda n: [_user(n), *_pair(
        {"type": "tool_search_call", "call_id": f"call_t{n}", "execution": "client", "arguments": {"query": "db"}},
        {"type": "tool_search_output", "call_id": f"call_t{n}", "execution": "client", "status": "completed",
         "tools": [{"type": "function", "name": "query_db", "parameters": {"type": "object"}, "strict": False}]})]),
    Row("tool_search_output (client)", "result", lambda n: [_user(n), *_pair(
        {"type": "tool_search_call", "call_id": f"call_to{n}", "execution": "client", "arguments": {}},
        {"type": "tool_search_output", "call_id": f"call_to{n}", "execution": "client", "tools": []})]),
    Row("tool_search_call (server)", "hosted", lambda n: [_user(n), {
        "type": "tool_search_call", "id": f"ts_{n}", "execution": "server", "arguments": {"q": "x"},
        "status": "completed"}, {"type": "tool_search_output", "id": f"tso_{n}", "execution": "server", "tools": []}]),
    Row("file_search_call", "hosted", lambda n: [_user(n), {
        "type": "file_search_call", "id": f"fs_{n}", "queries": ["q"], "status": "completed", "results": None}]),
    Row("web_search_call", "hosted", lambda n: [_user(n), {
        "type": "web_search_call", "id": f"ws_{n}", "status": "completed",
        "action": {"type": "search", "query": "weather", "sources": [{"type": "url", "url": "https://e.x"}]}}]),
    Row("code_interpreter_call", "hosted", lambda n: [_user(n), {
        "type": "code_interpreter_call", "id": f"ci_{n}", "code": "print(1)", "container_id": "cntr_1",
        "status": "completed", "outputs": [{"type": "logs", "logs": "1"}]}]),
    Row("image_generation_call", "hosted", lambda n: [_user(n), {
        "type": "image_generation_call", "id": f"ig_{n}", "status": "completed", "result": "iVBORw0KGgo="}]),
    Row("mcp_list_tools", "hosted", lambda n: [_user(n), {
        "type": "mcp_list_tools", "id": f"mcpl_{n}", "server_label": "deepwiki",
        "tools": [{"name": "ask", "input_schema": {"type": "object"}}]}]),
    Row("mcp_call", "hosted", lambda n: [_user(n), {
        "type": "mcp_call", "id": f"mcp_{n}", "server_label": "deepwiki", "name": "ask", "arguments": "{}",
        "output": "answer", "status": "completed"}]),
    Row("mcp_approval_request", "hosted", lambda n: [_user(n), {
        "type": "mcp_approval_request", "id": f"mcpr_{n}", "server_label": "s", "name": "rm", "arguments": "{}"}]),
    Row("mcp_approval_response", "native", lambda n: [{
        "type": "mcp_approval_response", "approval_request_id": f"mcpr_{n}", "approve": True, "reason": "ok"}]),
    Row("compaction", "hosted", lambda n: [_user(n), {"type": "compaction", "id": f"cmp_{n}",
                                                      "encrypted_content": "gAAAA-compact"}]),
    Row("compaction_trigger", "native", lambda n: [_user(n), {"type": "compaction_trigger"}]),
    Row("item_reference", "native", lambda n: [_user(n), {"type": "item_reference", "id": f"msg_ref{n}"}]),
    Row("additional_tools", "native", lambda n: [{
        "type": "additional_tools", "role": "developer", "tools": [
            {"type": "function", "name": "later", "parameters": {"type": "object"}, "strict": False}]}]),
    Row("configuration_update", "native", lambda n: [{"type": "configuration_update",
                                                      "reasoning": {"effort": "low"}}]),
    Row("program", "hosted", lambda n: [_user(n), {
        "type": "program", "id": f"prog_{n}", "call_id": f"call_p{n}", "code": "await f()", "fingerprint": "fp"}]),
    Row("program_output", "hosted", lambda n: [_user(n), {
        "type": "program", "id": f"prog_o{n}", "call_id": f"call_po{n}", "code": "1", "fingerprint": "fp"}, {
        "type": "program_output", "id": f"progo_{n}", "call_id": f"call_po{n}", "result": "1", "status": "completed"}]),
    Row("a type added later", "hosted", lambda n: [_user(n), {"type": "hologram_call", "id": f"h_{n}",
                                                              "beam": [1, 2]}], sdk=False),
]
BY_TYPE = {row.type: row for row in ROWS}
README = Path(__file__).resolve().parents[2] / "docs" / "providers.md"  # the vocabulary tables


def test_every_row_of_the_readme_table_has_its_test_and_every_test_its_row() -> None:
    section = README.read_text(encoding="utf-8").split("## OpenAI Responses", 1)[1].split("\n## ", 1)[0]
    cells = [line.split("|")[1].strip().replace("`", "") for line in section.splitlines()
             if line.startswith("| ") and "[docs](" in line]
    assert sorted(cells) == sorted(BY_TYPE) and len(cells) >= 34


def _sdk_items(items: list[Any]) -> list[Any]:
    """The items of the types the SDK knows (not the made-up ones of the rows for types added later)."""
    return [i for i in items if "hologram" not in json.dumps(i)]


def _rewritten(items: list[Any]) -> list[Any]:
    """The items read into neutral messages and written anew (a system prompt given, so that a leading
    developer message stays an item)."""
    return list(orr.to_request(orr.from_request(items), model="gpt-4.1", system="s")["input"])


def _body(items: list[Any]) -> dict[str, Any]:
    return {"model": "gpt-4.1", "store": True, "input": items}


def _main_item(row: Row, items: list[dict[str, Any]]) -> dict[str, Any]:
    """The item the row is about (the call of a pair, the one after the user's message)."""
    if row.treatment == "result":
        return items[-1]
    return items[1] if len(items) > 1 and items[0] is not None and items[0].get("role") == "user" else items[0]


def _read_as(row: Row, items: list[dict[str, Any]]) -> None:
    """Assert the treatment the README gives the row."""
    history = orr.from_request(items)
    bare = [replace(m, provider_data=None) for m in history]
    main = _main_item(row, items)
    if row.treatment == "call":
        (call,) = [c for m in history for c in m.tool_calls]
        assert call_item_type(call) == main["type"] and call.id == main["call_id"]
        assert [m.role for m in history][-1] == "tool"
    elif row.treatment == "result":
        tool = history[-1]
        assert tool.role == "tool" and tool.tool_call_id == answered_id(main)
    elif row.treatment in ("hosted", "native"):
        natives = [p for m in history if not isinstance(m.content, str) for p in m.content if isinstance(p, NativePart)]
        expected = main if "content" not in main else main["content"][0]
        native = next(p for p in natives if p.data == expected)
        owner = next(m for m in history if not isinstance(m.content, str) and native in m.content)
        assert owner.role == ("assistant" if row.treatment == "hosted" else "user")
    elif row.treatment == "thinking":
        assert isinstance(history[1].content[0], ThinkingPart) and history[1].content[0].data == "gAAAA-enc"
    elif row.type == "input_file":
        assert [type(p) for p in bare[0].content] == [FilePart, FilePart, FilePart]
        assert bare[0].content[0] == FilePart(data="JVBERi0=", media_type="application/pdf", filename="a.pdf")
    elif row.type == "input_image":
        assert bare[0].content == (ImagePart(media_type="image/png", data=PNG_URL.split(",", 1)[1]),)
    else:
        assert all(isinstance(m, ChatMessage) and m.role in ("user", "system", "assistant") for m in bare)
        assert any(isinstance(m.content, str) or any(isinstance(p, TextPart) for p in m.content) for m in bare)


@pytest.mark.parametrize("row", ROWS, ids=[r.type for r in ROWS])
def test_each_vocabulary_row_reads_checks_and_comes_back_as_it_was(row: Row) -> None:
    items = row.items(0)
    if row.sdk:
        sdk_valid(items)
    body = _body(items)
    before = copy.deepcopy(body)
    assert PROVIDER.check(body) == []
    _read_as(row, items)
    repaired = PROVIDER.repair_body(body)
    assert repaired.body == before and not repaired.changed
    assert all(a is b for a, b in zip(repaired.body["input"], items))
    # written anew from the neutral history, the items are the same (what the model does not name rides along)
    assert _rewritten(items) == before["input"]
    assert body == before


CALL_ROWS = [r for r in ROWS if r.treatment == "call"]


@pytest.mark.parametrize("row", CALL_ROWS, ids=[r.type for r in CALL_ROWS])
def test_a_call_without_its_output_gets_a_synthetic_output_of_its_own_type(row: Row) -> None:
    items = row.items(0)
    call = items[1]
    broken = _body(items[:-1])
    assert {p.code for p in PROVIDER.check(broken)} == {"OR1"}
    repaired = PROVIDER.repair_body(broken)
    out = repaired.body["input"]
    assert repaired.rewritten == [2] and out[0] is items[0] and out[1] is call
    synthetic = out[2]
    assert synthetic["type"] == CALL_OUTPUTS[call["type"]] and answered_id(synthetic) == call["call_id"]
    sdk_valid(out)
    assert PROVIDER.check(repaired.body) == []
    if call["type"] == "computer_call":
        assert synthetic["output"] == {"type": "computer_screenshot", "image_url": BLANK_PNG}


def test_a_synthetic_result_says_the_call_was_interrupted_in_each_output_type() -> None:
    for row in CALL_ROWS:
        if row.type in ("computer_call", "tool_search_call (client)"):
            continue  # a screenshot, a tool list: no room for words
        out = PROVIDER.repair_body(_body(row.items(0)[:-1])).body["input"][2]
        assert "Interrupted" in json.dumps(out), row.type


def test_a_reasoning_item_stays_before_its_item_when_repair_rewrites_the_turn() -> None:
    # two calls with one call_id: repair renames the second, so the turn (reasoning, message, calls) is written anew
    items = [_user(0),
             {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
             {"type": "function_call", "id": "fc_1", "call_id": "dup", "name": "a", "arguments": "{}"},
             {"type": "function_call", "id": "fc_2", "call_id": "dup", "name": "b", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "dup", "output": "A"}]
    repaired = PROVIDER.repair_body(_body(items))
    out = repaired.body["input"]
    kinds = [i.get("type", "message") for i in out]
    assert kinds[kinds.index("reasoning") + 1] == "function_call"
    assert out[kinds.index("reasoning")]["encrypted_content"] == "enc"
    assert PROVIDER.check(repaired.body) == []


def test_a_reasoning_item_is_never_left_without_the_item_after_it() -> None:
    # the reasoning's message was lost: a reasoning item alone is an OR7 problem, and repair leaves no such item
    items = [_user(0), {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
             {"role": "user", "content": "and?"}]
    body = _body(items)
    assert "OR7" in {p.code for p in PROVIDER.check(body)}
    repaired = PROVIDER.repair_body(body)
    assert PROVIDER.check(repaired.body) == []
    out = repaired.body["input"]
    for k, item in enumerate(out):
        if item.get("type") == "reasoning":
            assert k + 1 < len(out) and out[k + 1].get("role", "assistant") == "assistant"


def test_an_output_answering_a_referenced_call_is_kept_as_it_is() -> None:
    items = [{"type": "item_reference", "id": "fc_stored"},
             {"type": "function_call_output", "call_id": "call_stored", "output": "done"}]
    body = _body(items)
    assert PROVIDER.check(body) == []
    repaired = PROVIDER.repair_body(body)
    assert not repaired.changed and repaired.body["input"] == items


def test_the_wrong_output_type_is_a_problem() -> None:
    items = BY_TYPE["custom_tool_call"].items(0)
    wrong = [*items[:-1], {"type": "function_call_output", "call_id": items[1]["call_id"], "output": "x"}]
    assert "OR2" in {p.code for p in PROVIDER.check(_body(wrong))}


def test_other_call_types_map_to_plain_calls_across_providers() -> None:
    history = orr.from_request(BY_TYPE["custom_tool_call"].items(0) + BY_TYPE["local_shell_call"].items(1))
    chat = __import__("chatmend.providers", fromlist=["get"]).get("openai_chat")
    body = chat.to_request(history, model="gpt-4o")
    calls = [c["function"] for m in body["messages"] for c in m.get("tool_calls", [])]
    assert calls[0] == {"name": "apply_diff", "arguments": '{"input":"*** Begin Patch"}'}
    assert calls[1]["name"] == "local_shell" and json.loads(calls[1]["arguments"])["action"]["command"] == ["ls", "-la"]
    assert chat.check(body) == []


def test_a_native_item_to_another_provider_is_unsupported_by_name() -> None:
    from chatmend.exceptions import UnsupportedError
    history = orr.from_request(BY_TYPE["web_search_call"].items(0))
    with pytest.raises(UnsupportedError) as caught:
        __import__("chatmend.providers", fromlist=["get"]).get("anthropic").to_request(history, model="claude-x")
    assert caught.value.feature == "web_search_call"


# ----------------------------------------------------------------------------------- generated bodies

# rows that combine into one valid body in any order: no compaction_trigger (it must be last), no reasoning
# (whose message ids would make every other turn need reasoning too, OR8); reasoning gets its own property
_COMBINING = [r for r in ROWS if r.type not in ("compaction_trigger", "reasoning")]


@st.composite
def vocabulary_bodies(draw: st.DrawFn) -> dict[str, Any]:
    rows = draw(st.lists(st.sampled_from(_COMBINING), min_size=1, max_size=8))
    items = [item for n, row in enumerate(rows) for item in row.items(n)]
    if draw(st.booleans()):
        items.append({"type": "compaction_trigger"})
    return _body(items)


@examples(60)
@given(body=vocabulary_bodies())
def test_a_generated_body_of_the_vocabulary_is_valid_and_comes_back_equal(body: dict[str, Any]) -> None:
    sdk_valid(_sdk_items(body["input"]))
    before = copy.deepcopy(body)
    assert PROVIDER.check(body) == []
    repaired = PROVIDER.repair_body(body)
    assert repaired.body == before and not repaired.changed
    assert _rewritten(body["input"]) == before["input"]


@examples(60)
@given(body=vocabulary_bodies(), data=st.data())
def test_removing_one_output_gives_a_body_whose_only_change_is_its_insertion(
        body: dict[str, Any], data: st.DataObject) -> None:
    items = body["input"]
    outputs = [k for k, item in enumerate(items) if k > 0 and is_client_output(item, item.get("type"))
               and item.get("type") == CALL_OUTPUTS.get(items[k - 1].get("type", ""))
               and answered_id(item) == items[k - 1].get("call_id")]
    if not outputs:
        return
    gone = data.draw(st.sampled_from(outputs))
    broken = {**body, "input": items[:gone] + items[gone + 1:]}
    repaired = PROVIDER.repair_body(broken)
    out = repaired.body["input"]
    assert len(out) == len(items) and repaired.rewritten == [gone]
    assert out[gone]["type"] == items[gone]["type"] and answered_id(out[gone]) == answered_id(items[gone])
    assert all(a is b for a, b in zip(out[:gone] + out[gone + 1:], broken["input"]))
    sdk_valid(_sdk_items(out))
    assert PROVIDER.check(repaired.body) == []


@examples(40)
@given(n=st.integers(1, 4), data=st.data())
def test_reasoning_turns_round_trip_and_stay_before_their_items(n: int, data: st.DataObject) -> None:
    items: list[dict[str, Any]] = []
    for k in range(n):
        items.append(_user(k))
        items.append({"type": "reasoning", "id": f"rs_{k}", "summary": [], "encrypted_content": f"e{k}"})
        if data.draw(st.booleans()):
            items.append({"type": "web_search_call", "id": f"ws_{k}", "status": "completed",
                          "action": {"type": "search", "query": "q"}})
        items.append({"type": "function_call", "id": f"fc_{k}", "call_id": f"c{k}", "name": "f", "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"c{k}", "output": "r"})
    body = {"model": "gpt-5", "input": items}
    sdk_valid(items)
    assert PROVIDER.check(body) == []
    assert PROVIDER.repair_body(body).body == body
    gone = data.draw(st.sampled_from([k for k, i in enumerate(items) if i.get("type") == "function_call_output"]))
    repaired = PROVIDER.repair_body({**body, "input": items[:gone] + items[gone + 1:]})
    assert repaired.rewritten == [gone] and PROVIDER.check(repaired.body) == []


# ----------------------------------------------------------------------------------------- real bodies


_PAIRING = {"OR1", "OR2", "OR10", "OR11"}


def _cassette_bodies() -> Iterator[tuple[str, dict[str, Any], bool]]:
    yaml = pytest.importorskip("yaml")
    for path in sorted(REAL.glob("pydantic__pydantic-ai__*.yaml")):
        for k, interaction in enumerate(yaml.safe_load(path.read_text())["interactions"]):
            request = interaction["request"]
            body = request.get("parsed_body")
            accepted = interaction.get("response", {}).get("status", {}).get("code", 200) < 400
            if request.get("uri", "").endswith("/responses") and isinstance(body, dict) and "input" in body:
                yield f"{path.name}#{k}", body, accepted


def _codex_inputs() -> Iterator[tuple[str, list[Any]]]:
    for path in sorted(REAL.glob("*codex*.jsonl")) + sorted(REAL.glob("*rollout*.jsonl")):
        items = []
        for line in path.read_text().splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("type") == "response_item" and isinstance(record.get("payload"), dict):
                items.append(record["payload"])
        if items:
            yield path.name, items


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-world is absent")
def test_real_responses_bodies_read_and_come_back_equal() -> None:
    seen = 0
    for name, body, accepted in _cassette_bodies():
        orr.from_request(body)
        before = copy.deepcopy(body)
        repaired = PROVIDER.repair_body(body)
        problems = {p.code for p in PROVIDER.check(body)}
        if not problems and accepted:  # a body the API took comes back as it was
            assert repaired.body == before and not repaired.changed, name
        # what repair cannot mend (ids without reasoning, OR8) stays; what it mends is gone, and nothing is new
        assert {p.code for p in PROVIDER.check(repaired.body)} <= problems - _PAIRING, name
        seen += 1
    assert seen >= 5


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-world is absent")
def test_codex_rollout_items_read_and_repair_in_their_own_format() -> None:
    seen = 0
    for name, items in _codex_inputs():
        body = {"model": "gpt-5-codex", "input": items}
        history = orr.from_request(body)
        assert history, name
        repaired = PROVIDER.repair_body(body)
        # rollouts record reasoning items without their ids (OR0, OR7): kept as they are; the pairs are mended
        problems = {p.code for p in PROVIDER.check(body)}
        assert {p.code for p in PROVIDER.check(repaired.body)} <= problems - _PAIRING, name
        if not problems & _PAIRING:
            assert not repaired.rewritten, name
        seen += 1
    assert seen >= 3


def test_a_tool_call_read_keeps_arguments_text_byte_for_byte() -> None:
    items = BY_TYPE["function_call"].items(0)
    history = orr.from_request(items)
    call: ToolCall = history[1].tool_calls[0]
    assert call.arguments == {"city": "Paris"}
    assert orr.to_request(history, model="m")["input"][1]["arguments"] == '{ "city": "Paris" }'


def test_an_input_side_item_built_by_hand_is_written_as_the_item() -> None:
    ref = {"type": "item_reference", "id": "msg_old"}
    history = [ChatMessage(role="user", content=(NativePart(provider="openai_responses", data=ref),)),
               ChatMessage(role="user", content=(NativePart(provider="openai_responses", data={
                   "type": "input_image", "file_id": "file-1", "detail": "auto"}),))]
    items = orr.to_request(history, model="gpt-4.1")["input"]
    assert items == [ref, {"role": "user", "content": [{"type": "input_image", "file_id": "file-1", "detail": "auto"}]}]
    sdk_valid(items)
