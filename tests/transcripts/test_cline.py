"""Cline and Roo Code tasks (`api_conversation_history.json`): read as the tool sends them (condensed and
truncated messages left out), repaired with every item repair leaves alone written back character for character,
the CLI's `check`, `show`, `convert` and `repair --in-place` on them, and what a doctor needs to find them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, repair_history
from chatmend.answer_order import keep_answer_order
from chatmend.cli import main
from chatmend.exceptions import InputError
from chatmend.formats import read, read_lines
from chatmend.transcripts import cline
from tests.strategies import examples, messy_histories, valid_histories
from tests.transcripts.helpers import normal


def _blocks(content: str | tuple[Any, ...], *, assistant: bool, roo: bool) -> list[Any] | str:
    if isinstance(content, str):
        return content
    blocks: list[Any] = []
    for part in content:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart) and roo:
            url = part.url or f"data:{part.media_type};base64,{part.data}"
            blocks.append({"type": "image", "image": url})
        elif isinstance(part, ImagePart):
            source = {"type": "base64", "media_type": part.media_type, "data": part.data} if part.data \
                else {"type": "url", "url": part.url}
            blocks.append({"type": "image", "source": source})
        elif isinstance(part, ThinkingPart) and assistant and roo:
            blocks.append({"type": "reasoning", "text": part.text})
        elif isinstance(part, ThinkingPart) and assistant and not part.redacted:
            blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature or ""})
    return blocks


def task_items(history: Sequence[ChatMessage], *, roo: bool = False) -> list[dict[str, Any]]:
    """A task's messages as Cline (Anthropic params) or Roo Code version 2 (AI SDK messages) store them."""
    items: list[dict[str, Any]] = []
    for i, m in enumerate(history):
        ts = 1_700_000_000_000 + 1000 * i
        if m.role in ("user", "system"):
            items.append({"role": "user", "content": _blocks(m.content, assistant=False, roo=roo), "ts": ts})
        elif m.role == "tool" and roo:
            text = m.content if isinstance(m.content, str) else "".join(
                p.text for p in m.content if isinstance(p, TextPart))
            items.append({"role": "tool", "content": [{
                "type": "tool-result", "toolCallId": m.tool_call_id, "toolName": m.tool_name or "tool",
                "output": {"type": "error-text" if m.is_error else "text", "value": text}}], "ts": ts})
        elif m.role == "tool":
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id,
                                     "content": _blocks(m.content, assistant=False, roo=roo)}
            if m.is_error:
                block["is_error"] = True
            items.append({"role": "user", "content": [block], "ts": ts})
        else:
            content = _blocks(m.content, assistant=True, roo=roo)
            if isinstance(content, str):
                content = [{"type": "text", "text": content}] if content else []
            for c in m.tool_calls:
                if roo:
                    content.append({"type": "tool-call", "toolCallId": c.id, "toolName": c.name,
                                    "input": c.arguments})
                else:
                    content.append({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments})
            items.append({"role": "assistant", "content": content, "ts": ts})
    return items


def document(items: list[dict[str, Any]], *, roo: bool = False, indent: int | None = None) -> str:
    value: Any = {"version": 2, "messages": items} if roo else items
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(value, ensure_ascii=False, indent=indent)


def read_doc(text: str, fmt: str = "auto") -> Any:
    return read_lines(text.splitlines(keepends=True), fmt)


def _repaired(text: str) -> str:
    _, chunks = read_doc(text).repaired(None)
    return "".join(chunks)


def _item_texts(text: str, roo: bool) -> list[str]:
    """Each item of the document's list as it stands in the text."""
    from chatmend.transcripts._document import list_text

    found = list_text(text, "messages" if roo else None)
    return [text[a:b] for a, b in found.spans]


PARALLEL: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "<task>\nfix the build\n</task>"}], "ts": 1000},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Reading both."},
        {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "toolu_02", "name": "read_file", "input": {"path": "b.py"}}], "ts": 2000},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "print(1)"},
        {"type": "text", "text": "<environment_details>\n# cwd\n</environment_details>"}], "ts": 3000},
]


def test_a_call_killed_mid_run_is_answered_in_its_turn_and_every_other_item_is_kept() -> None:
    text = document(PARALLEL)
    session = read_doc(text)
    assert (session.format, session.provider) == ("cline", "anthropic")
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        ("user", None), ("assistant", None), ("tool", "toolu_01"), ("user", None)]
    assert session.where[1] == "line 1 [1]"
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["toolu_02"]
    out = "".join(chunks)
    before, after = _item_texts(text, False), _item_texts(out, False)
    assert after[:2] == before[:2] and len(after) == 3  # the answer joins the turn that holds the other result
    turn = json.loads(after[2])
    assert turn["ts"] == 3000 and [b.get("tool_use_id") for b in turn["content"]] == ["toolu_01", "toolu_02", None]
    assert turn["content"][1]["is_error"] is True
    assert turn["content"][2] == PARALLEL[2]["content"][1]
    assert out.startswith('[{"role":"user"') and ",{" in out  # still Cline's compact JSON.stringify
    assert not read_doc(out).repaired(None)[0].changed


def test_a_call_with_no_result_at_all_gets_a_message_a_millisecond_after_it() -> None:
    items = PARALLEL[:2]
    out = _repaired(document(items, indent=2))
    value = json.loads(out)
    assert value[:2] == items and value[2]["role"] == "user" and value[2]["ts"] == 2001
    assert [b["tool_use_id"] for b in value[2]["content"]] == ["toolu_01", "toolu_02"]
    assert out.startswith("[\n  {\n    \"role\": \"user\"")  # indented as the file is
    assert out.split("\n")[1:-1] != [] and all(not line.startswith("\t") for line in out.split("\n"))


def test_condensed_and_truncated_messages_are_not_read_and_are_kept() -> None:
    items = [
        {"role": "user", "content": "first", "ts": 1, "condenseParent": "c1"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "old", "name": "x", "input": {}}], "ts": 2,
         "condenseParent": "c1"},
        {"role": "user", "content": "summary", "ts": 3, "isSummary": True, "condenseId": "c1"},
        {"role": "assistant", "content": "[Sliding window truncation]", "ts": 4, "isTruncationMarker": True,
         "truncationId": "t1"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"}], "ts": 5,
         "truncationParent": "t1"},
        {"role": "user", "content": "go on", "ts": 6, "condenseParent": "missing"},  # its summary is gone: sent
    ]
    text = document(items, indent=2)
    session = read_doc(text)
    assert [m.content for m in session.messages] == ["summary", "[Sliding window truncation]", "go on"]
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == text  # the old call hidden by the summary is not "open"


def test_roo_version_2_history_is_repaired_in_its_own_shapes() -> None:
    items = [
        {"role": "user", "content": "list it", "ts": 10},
        {"type": "reasoning", "encrypted_content": "gAAAA", "id": "rs_1", "ts": 11},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Listing."},
            {"type": "tool-call", "toolCallId": "call_a", "toolName": "list_files", "input": {"path": "."}},
            {"type": "tool-call", "toolCallId": "call_b", "toolName": "read_file", "input": {"path": "x"}}],
         "ts": 12, "id": "resp_1"},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_a", "toolName": "list_files",
                                      "output": {"type": "text", "value": "x"}}], "ts": 13},
    ]
    text = document(items, roo=True)
    session = read_doc(text)
    assert session.format == "roo_code" and session.provider is None
    assert [(m.role, m.tool_call_id, m.tool_name) for m in session.messages] == [
        ("user", None, None), ("assistant", None, None), ("tool", "call_a", "list_files")]
    out = _repaired(text)
    value = json.loads(out)
    assert value["version"] == 2 and value["messages"][:3] == items[:3]
    tool = value["messages"][3]
    assert tool["role"] == "tool" and tool["ts"] == 13
    assert tool["content"][1] == {"type": "tool-result", "toolCallId": "call_b", "toolName": "read_file",
                                  "output": {"type": "error-text", "value": tool["content"][1]["output"]["value"]}}
    assert _item_texts(out, True)[:3] == _item_texts(text, True)[:3]


def test_roo_orphan_tool_result_becomes_a_user_note() -> None:
    items = [
        {"role": "user", "content": "hi", "ts": 1},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "nobody", "toolName": "read_file",
                                      "output": {"type": "text", "value": "data"}}], "ts": 2},
    ]
    value = json.loads(_repaired(document(items, roo=True, indent=2)))
    note = value["messages"][1]
    assert note["role"] == "user" and note["ts"] == 2 and "data" in note["content"][0]["text"]


def test_older_roo_and_cline_fields_are_kept_on_a_rewritten_message() -> None:
    items = [dict(PARALLEL[0]), {**PARALLEL[1], "id": "msg_1", "reasoning_content": "r"}]
    out = json.loads(_repaired(document(items)))
    assert out[1] == items[1] and out[2]["ts"] == 2001


@examples(60)
@given(valid_histories(), st.booleans(), st.sampled_from([None, 2, 4]))
def test_a_valid_task_is_written_back_character_for_character(history: list[ChatMessage], roo: bool,
                                                             indent: int | None) -> None:
    text = document(task_items(history, roo=roo), roo=roo, indent=indent)
    session = read_doc(text)
    assert session.format == ("roo_code" if roo else "cline")
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    if not result.changed:
        assert "".join(chunks) == text


@examples(80)
@given(messy_histories(), st.booleans(), st.sampled_from([None, 2]))
def test_a_repaired_task_reads_back_as_the_repaired_history_changing_only_what_repair_must(
        history: list[ChatMessage], roo: bool, indent: int | None) -> None:
    items = task_items(history, roo=roo)
    if not items:
        return
    text = document(items, roo=roo, indent=indent)
    session = read_doc(text, "roo_code" if roo else "cline")
    expected = keep_answer_order(session.messages, repair_history(session.messages))  # as a store repair writes
    _, chunks = session.repaired(None)
    out = "".join(chunks)
    if not expected.messages:
        return
    again = read_doc(out, session.format)
    assert normal(again.messages) == normal(expected.messages)
    assert not keep_answer_order(again.messages, repair_history(again.messages)).changed
    # an item that holds no call and no result, and is not a reply repair drops, is kept as it was, in order
    before = _item_texts(text, roo)
    plain = [t for t, item in zip(before, items) if item["role"] == "user" and isinstance(item["content"], str)]
    after = iter(_item_texts(out, roo))
    assert all(any(t == a for a in after) for t in plain)
    if not expected.changed:
        assert out == text


def test_bad_items_are_errors_at_their_line() -> None:
    text = '[\n  {"role": "user", "content": "hi", "ts": 1},\n  {"role": "assistant", "ts": 2,\n   "content": 5}\n]'
    with pytest.raises(InputError) as caught:
        read_doc(text, "cline")
    assert caught.value.line == 3 and "content: expected a string or a list" in caught.value.message
    bad_input = [{"role": "assistant", "ts": 1, "content": [{"type": "tool_use", "id": "a", "name": "x", "input": 3}]}]
    with pytest.raises(InputError) as caught:
        read_doc(document(bad_input), "cline")
    assert caught.value.line == 1 and "content[0].input: expected an object" in caught.value.message
    with pytest.raises(InputError, match="expected a Cline task's conversation"):
        read_doc('{"a": 1}', "cline")


def test_detection_tells_a_task_from_a_plain_anthropic_list() -> None:
    assert read_doc(document(PARALLEL)).format == "cline"
    plain = [{k: v for k, v in item.items() if k != "ts"} for item in PARALLEL]
    assert read_doc(json.dumps(plain)).format == "anthropic"
    assert read_doc(document(PARALLEL[:1], roo=True)).format == "roo_code"


def _task(root: Path, items: list[dict[str, Any]], *, roo: bool = False) -> Path:
    path = root / "tasks" / "1733000000000" / "api_conversation_history.json"
    path.parent.mkdir(parents=True)
    path.write_text(document(items, roo=roo), encoding="utf-8")
    return path


def test_cli_check_show_convert_and_repair_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _task(tmp_path, PARALLEL)
    original = path.read_bytes()
    assert main(["check", str(path)]) == 1
    assert "toolu_02" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    assert "cline" in capsys.readouterr().out
    assert main(["convert", str(path), "--to", "chatmend", "-o", str(tmp_path / "out.jsonl")]) == 0
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 4
    capsys.readouterr()
    assert main(["repair", "--in-place", str(path)]) == 0
    assert (path.parent / "api_conversation_history.json.bak").read_bytes() == original
    assert main(["check", str(path)]) == 0
    assert read(str(path)).format == "cline"
    capsys.readouterr()
    assert main(["repair", "--in-place", str(path)]) == 0  # nothing left to do: nothing written, no backup
    assert not (path.parent / "api_conversation_history.json.bak.1").exists()


def test_where_cline_keeps_its_tasks(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    locations = cline.default_locations(env)
    assert tmp_path / "cfg" / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "tasks" in locations
    assert locations[-1] == tmp_path / ".cline" / "data" / "tasks"
    assert cline.default_locations({**env, "CLINE_DIR": "/x"})[-1] == Path("/x/data/tasks")
    assert cline.default_locations({**env, "CLINE_DIR": "/x", "CLINE_DATA_DIR": "/d"})[-1] == Path("/d/tasks")
    assert cline.default_locations({"HOME": str(tmp_path), "APPDATA": "C:/Users/me/AppData/Roaming"})[0] == Path(
        "C:/Users/me/AppData/Roaming/Code/User/globalStorage/saoudrizwan.claude-dev/tasks")
    path = _task(tmp_path / ".cline" / "data", PARALLEL)
    assert cline.is_session_file(path) and not cline.is_session_file(path.parent / "ui_messages.json")
    assert cline.is_session_file(tmp_path / "tasks" / "9" / "context" / "api_conversation_history.json")
    assert cline.resume_command(path) == "cline task open 1733000000000"
    vscode = tmp_path / "globalStorage" / "saoudrizwan.claude-dev" / "tasks" / "17" / "api_conversation_history.json"
    assert "history" in cline.resume_command(vscode)


def test_where_roo_code_keeps_its_tasks(tmp_path: Path) -> None:
    from chatmend.transcripts import roo_code

    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert roo_code.default_locations(env)[0] == (
        tmp_path / "cfg" / "Code" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline" / "tasks")
    path = tmp_path / "tasks" / "abc" / "context" / "api_conversation_history.json"
    assert roo_code.is_session_file(path) and roo_code.resume_command(path).startswith("open task abc ")
    path.parent.mkdir(parents=True)
    path.write_text(document(PARALLEL[:1], roo=True), encoding="utf-8")
    assert roo_code.read(path).format == "roo_code"


def test_a_file_with_crlf_line_ends_gets_new_items_with_crlf_too() -> None:
    text = document(PARALLEL[:2], indent=2).replace("\n", "\r\n")
    out = _repaired(text)
    assert out.startswith(text[:-1].rsplit("\r\n", 1)[0])  # every line before the end as it was
    assert "\n" not in out.replace("\r\n", "")
    assert json.loads(out)[2]["content"][1]["tool_use_id"] == "toolu_02"


def test_roo_orphan_beside_a_valid_result_becomes_a_user_message_of_its_own() -> None:
    items = [
        {"role": "user", "content": "go", "ts": 1},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "f", "input": {}}],
         "ts": 2},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "zzz", "toolName": "f", "output": {"type": "text", "value": "lost"}},
            {"type": "tool-result", "toolCallId": "a", "toolName": "f", "output": {"type": "text", "value": "ok"}}],
         "ts": 3},
    ]
    value = json.loads(_repaired(document(items, roo=True)))
    tool, note = value["messages"][2:]
    assert tool["role"] == "tool" and [p["toolCallId"] for p in tool["content"]] == ["a"]  # only results in it
    assert note["role"] == "user" and note["ts"] == 3 and "lost" in note["content"][0]["text"]


def test_a_chat_list_with_timestamps_is_not_taken_for_a_task() -> None:
    chat = [{"role": "user", "content": "hi", "ts": 1},
            {"role": "assistant", "content": None, "ts": 2, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
    assert cline.holds_session(chat) is None
    assert cline.holds_session(PARALLEL) == "cline" and cline.holds_session({"version": 2, "messages": []}) is None


def test_an_item_that_is_not_a_message_is_an_error_at_its_place() -> None:
    with pytest.raises(InputError) as caught:
        read_doc('{"version": 2, "messages": [{"role": "user", "content": "hi"},\n 7]}', "roo_code")
    assert caught.value.line == 2 and caught.value.message.startswith("messages[1]: expected a Roo Code message")
