"""Codex rollouts: every item type Codex records, the item ids the Responses API checks, archived sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ImagePart, TextPart
from chatmend.cli import main
from chatmend.exceptions import InputError
from chatmend.ids import normalize_tool_id
from chatmend.providers.openai_responses.read import Reader
from tests.strategies import examples
from tests.transcripts.helpers import lines_of, read_text

Record = dict[str, Any]


def _rollout(*items: Record) -> list[Record]:
    """A 0.171 rollout: session meta, turn context, the items (each with an ordinal)."""
    records: list[Record] = [
        {"timestamp": "2026-12-01T10:00:00.000Z", "ordinal": 0, "type": "session_meta",
         "payload": {"id": "019e", "cli_version": "0.171.0"}},
        {"timestamp": "2026-12-01T10:00:00.100Z", "ordinal": 1, "type": "turn_context",
         "payload": {"model": "gpt-5.5", "cwd": "/w"}},
        {"timestamp": "2026-12-01T10:00:01.000Z", "ordinal": 2, "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}},
    ]
    for n, item in enumerate(items, start=3):
        records.append({"timestamp": f"2026-12-01T10:00:{n:02d}.000Z", "ordinal": n, "type": "response_item",
                        "payload": item})
    return records


def _repair(records: list[Record]) -> tuple[str, str, Any, Any]:
    text = "".join(lines_of(records))
    session = read_text(text, "codex")
    result, chunks = session.repaired(None)
    return text, "".join(chunks), result, session


def _added(text: str, out: str) -> list[Record]:
    assert out.startswith(text)  # appended: every earlier line keeps its byte offset
    return [json.loads(line) for line in out[len(text):].splitlines()]


def test_a_client_tool_search_is_answered_with_a_tool_search_output() -> None:
    call = {"type": "tool_search_call", "call_id": "call_ts", "execution": "client",
            "arguments": {"query": "calendar"}, "status": "completed"}
    text, out, result, session = _repair(_rollout(call))
    assert session.messages[-1].tool_calls[0].name == "tool_search"
    assert session.messages[-1].tool_calls[0].arguments == {"query": "calendar"}
    assert [c.id for c in result.interrupted] == ["call_ts"]
    [added] = _added(text, out)
    assert added["ordinal"] == 4
    assert added["payload"] == {"type": "tool_search_output", "call_id": "call_ts", "execution": "client",
                                "tools": []}
    again = read_text(out, "codex")
    assert not again.repaired(None)[0].changed


def test_a_client_tool_search_output_reads_its_tools() -> None:
    call = {"type": "tool_search_call", "call_id": "call_ts", "execution": "client", "arguments": {"query": "x"}}
    found = {"type": "tool_search_output", "call_id": "call_ts", "execution": "client",
             "tools": [{"type": "function", "name": "cal_add"}]}
    _, _out, result, session = _repair(_rollout(call, found))
    assert json.loads(str(session.messages[-1].content)) == {"tools": [{"type": "function", "name": "cal_add"}]}
    assert not result.changed


def test_server_side_items_are_kept_unread_and_need_no_output() -> None:
    items: list[Record] = [
        {"type": "tool_search_call", "call_id": "ts_srv", "execution": "server", "arguments": {"query": "x"}},
        {"type": "tool_search_output", "call_id": "ts_srv", "execution": "server", "tools": []},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
        {"type": "ghost_snapshot", "ghost_commit": {"id": "abc", "parent": None}},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "found it"}]},
    ]
    text, out, result, session = _repair(_rollout(*items))
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert not result.changed and out == text and not session.problems


def test_an_interrupted_local_shell_call_gets_a_function_call_output() -> None:
    call = {"type": "local_shell_call", "call_id": "call_ls", "status": "in_progress",
            "action": {"type": "exec", "command": ["sleep", "60"]}}
    text, out, _result, session = _repair(_rollout(call))
    assert session.messages[-1].tool_calls[0].arguments == {"type": "exec", "command": ["sleep", "60"]}
    [added] = _added(text, out)
    assert added["payload"]["type"] == "function_call_output" and added["payload"]["call_id"] == "call_ls"


def test_a_list_shaped_custom_tool_output_answers_its_call() -> None:
    call = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch",
            "input": "*** Begin Patch\n*** End Patch"}
    output = {"type": "custom_tool_call_output", "call_id": "call_p",
              "output": [{"type": "input_text", "text": "Success."}]}
    text, out, result, session = _repair(_rollout(call, output))
    assert session.messages[-1].content == "Success."
    assert not result.changed and out == text and not session.problems


@pytest.mark.parametrize(("item", "prefix"), [
    ({"type": "custom_tool_call", "id": "fc_1", "call_id": "call_p", "name": "apply_patch", "input": "x"}, "ctc"),
    ({"type": "function_call", "id": "ctc_1", "call_id": "call_p", "name": "exec_command", "arguments": "{}"}, "fc"),
    ({"type": "message", "id": "item_1", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
     "msg"),
])
def test_an_item_id_of_the_wrong_prefix_is_a_problem_and_repair_leaves_it_out(
        item: Record, prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = _rollout(item)
    if item["type"] != "message":
        records += _rollout({"type": f"{item['type']}_output", "call_id": "call_p", "output": "ok"})[3:]
        records[-1]["ordinal"] = 4
    path = tmp_path / "rollout-2026-12-01T10-00-00-019e.jsonl"
    path.write_text("".join(lines_of(records)))
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"line 4: payload.id: OR4: Invalid 'id': '{item['id']}'. Expected an ID that begins with '{prefix}'." \
        in out
    assert main(["repair", str(path), "--in-place"]) == 0
    report = capsys.readouterr().out
    assert f"line 4: item id '{item['id']}' of a {item['type']} left out (it must begin with '{prefix}')" in report
    lines = path.read_text().splitlines()
    fixed = json.loads(lines[3])
    assert "id" not in fixed["payload"] and {**fixed["payload"], "id": item["id"]} == item
    assert lines[:3] == [json.dumps(r, separators=(",", ":")) for r in records[:3]]  # the rest as it was
    assert main(["check", str(path)]) == 0


def test_a_call_id_longer_than_64_is_shortened_in_call_and_output_and_in_what_repair_adds() -> None:
    long_done, long_open = "call_" + "d" * 70, "call_" + "o" * 70
    items = [
        {"type": "function_call", "call_id": long_done, "name": "exec_command", "arguments": "{}"},
        {"type": "function_call", "call_id": long_open, "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": long_done, "output": "ok"},
    ]
    _text, out, _result, session = _repair(_rollout(*items))
    assert [p.split(": ")[:3] for p in session.problems] == [["line 4", "payload.call_id", "OR3"],
                                                             ["line 5", "payload.call_id", "OR3"],
                                                             ["line 6", "payload.call_id", "OR3"]]
    assert "Expected a string with maximum length 64, but got a string with length 75 instead." in \
        session.problems[0]
    lines = [json.loads(line) for line in out.splitlines()]
    short_done, short_open = normalize_tool_id(long_done), normalize_tool_id(long_open)
    assert [r["payload"].get("call_id") for r in lines[3:]] == [short_done, short_open, short_done, short_open]
    assert all(len(r["payload"]["call_id"]) <= 64 for r in lines[3:])
    assert session.fixes == [f"line {n}: call_id of 75 characters shortened to 64" for n in (4, 5, 6)]
    again = read_text(out, "codex")
    assert not again.problems and not again.repaired(None)[0].changed


@examples(30)
@given(st.lists(st.text(alphabet="abc_-", min_size=1, max_size=90), min_size=1, max_size=4, unique=True))
def test_fitting_ids_keeps_every_call_answered_by_its_own_output(call_ids: list[str]) -> None:
    items = [{"type": "function_call", "call_id": c, "name": "f", "arguments": "{}"} for c in call_ids]
    items += [{"type": "function_call_output", "call_id": c, "output": c} for c in call_ids[::2]]
    _, out, _result, _ = _repair(_rollout(*items))
    again = read_text(out, "codex")
    assert not again.problems and not again.repaired(None)[0].changed
    outputs = {m.tool_call_id: m.content for m in again.messages if m.role == "tool"}
    calls = [c.id for m in again.messages for c in m.tool_calls]
    assert len(set(calls)) == len(call_ids)
    # each answered call still holds its own output (the output's text is its original id)
    assert [outputs[c] for c in calls[::2]] == call_ids[::2]


def test_a_rollout_in_archived_sessions_repairs_in_place(tmp_path: Path) -> None:
    folder = tmp_path / ".codex" / "archived_sessions"
    folder.mkdir(parents=True)
    path = folder / "rollout-2026-12-01T10-00-00-019e.jsonl"
    records = _rollout({"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{}"})
    text = "".join(lines_of(records))
    path.write_text(text)
    assert main(["repair", str(path), "--in-place"]) == 0
    assert path.read_text().startswith(text) and "call_1" in path.read_text().splitlines()[-1]
    assert path.with_name(path.name + ".bak").read_text() == text


def test_ids_before_a_compaction_are_not_sent_so_not_a_problem() -> None:
    records = _rollout({"type": "function_call", "id": "ctc_9", "call_id": "call_" + "x" * 70, "name": "f",
                        "arguments": "{}"})
    records.append({"timestamp": "2026-12-01T10:00:09.000Z", "ordinal": 4, "type": "compacted",
                    "payload": {"message": "", "replacement_history": [
                        {"type": "message", "id": "m_1", "role": "user",
                         "content": [{"type": "input_text", "text": "summary"}]}]}})
    text, out, result, session = _repair(records)
    assert session.problems == ["line 5: payload.replacement_history[0].id: OR4: Invalid 'id': 'm_1'. Expected an "
                                "ID that begins with 'msg'."]
    assert not result.interrupted  # the call before the compaction is not sent: nothing to answer
    lines = out.splitlines()
    assert lines[:4] == text.splitlines()[:4]  # its line is kept as it is
    assert "id" not in json.loads(lines[4])["payload"]["replacement_history"][0]
    assert not read_text(out, "codex").problems


_PARTS = [{"type": "input_text", "text": "look"},
          {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
          {"type": "input_image", "image_url": "https://example.com/shot.png", "detail": "high"}]


def _as_the_adapter_reads(content: list[Record]) -> Any:
    """The content of a user message of these parts as the Responses adapter reads it."""
    reader = Reader()
    reader.read({"type": "message", "role": "user", "content": content}, "input[0]")
    return reader.messages[0].content


def test_a_message_and_an_output_read_their_parts_as_the_responses_adapter_does() -> None:
    call = {"type": "function_call", "call_id": "call_v", "name": "view_image", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_v", "output": _PARTS}
    user = {"type": "message", "role": "user", "content": _PARTS}
    session = read_text("".join(lines_of(_rollout(call, output, user))), "codex")
    expected = (TextPart(text="look"), ImagePart(media_type="image/png", data="iVBORw0KGgo="),
                ImagePart(url="https://example.com/shot.png"))
    assert _as_the_adapter_reads(_PARTS) == expected
    assert session.messages[-2].content == expected and session.messages[-1].content == expected


def test_parts_codex_does_not_write_read_as_the_adapter_reads_them_not_dropped() -> None:
    parts = [{"type": "refusal", "refusal": "no"}, {"type": "input_file", "file_id": "file_1"}]
    user = {"type": "message", "role": "user", "content": parts}
    session = read_text("".join(lines_of(_rollout(user))), "codex")
    assert session.messages[-1].content == _as_the_adapter_reads(parts)
    assert [type(p).__name__ for p in session.messages[-1].content] == ["TextPart", "FilePart"]


@pytest.mark.parametrize(("item", "path"), [
    ({"type": "message", "role": "user", "content": [{"type": "input_text", "text": 5}]}, "payload.content[0]"),
    ({"type": "message", "role": "assistant", "content": ["hi"]}, "payload.content[0]"),
    ({"type": "function_call_output", "call_id": "call_x", "output": 5}, "payload.output"),
    ({"type": "function_call_output", "call_id": "call_x", "output": {"content": [7], "success": False}},
     "payload.output.content[0]"),
])
def test_a_malformed_part_is_an_error_at_its_line_and_path(item: Record, path: str) -> None:
    with pytest.raises(InputError) as caught:
        read_text("".join(lines_of(_rollout(item))), "codex")
    assert caught.value.line == 4 and f"{path}: " in caught.value.message


def test_a_malformed_part_in_a_compaction_names_its_place_in_the_replacement_history() -> None:
    records = _rollout()
    records.append({"timestamp": "2026-12-01T10:00:09.000Z", "ordinal": 3, "type": "compacted", "payload": {
        "message": "", "replacement_history": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text"}]}]}})
    with pytest.raises(InputError) as caught:
        read_text("".join(lines_of(records)), "codex")
    assert caught.value.line == 4
    assert "payload.replacement_history[1].content[0]: " in caught.value.message
