"""Gemini CLI sessions: replayed as Gemini CLI replays them, a response stored twice read as one, repaired in
place with every other line unchanged."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chatmend import ChatMessage, ToolCall
from chatmend.formats import read
from chatmend.providers.gemini.read import read_content, read_response
from tests.transcripts.helpers import lines_of, read_text

HEADER = {"sessionId": "s-1", "projectHash": "ab12", "startTime": "2026-12-01T10:00:00.000Z",
          "lastUpdated": "2026-12-01T10:00:00.000Z", "kind": "main"}


def _call(call_id: str, result: str | None, status: str = "success") -> dict[str, Any]:
    call: dict[str, Any] = {"id": call_id, "name": "run_shell_command", "args": {"command": "echo hi"},
                            "status": status, "timestamp": "2026-12-01T10:00:02.000Z"}
    if result is not None:
        call["result"] = [{"functionResponse": {"id": call_id, "name": "run_shell_command",
                                                "response": {"output": result}}}]
    return call


def _session_061() -> list[dict[str, Any]]:
    """What Gemini CLI 0.61 writes for one completed call, then a call killed while it ran: the model record
    written again with its calls, the response stored once more in a user record."""
    model: dict[str, Any] = {"id": "m1", "timestamp": "2026-12-01T10:00:01.000Z", "type": "gemini", "content": "",
                             "model": "gemini-2.5-pro"}
    return [
        HEADER,
        {"$set": {"messages": [{"id": "ctx", "timestamp": "t", "type": "user",
                                "content": [{"text": "<session_context>\nsetup\n</session_context>"}]}]}},
        {"id": "u1", "timestamp": "2026-12-01T10:00:00.500Z", "type": "user", "content": [{"text": "run it"}]},
        {"$set": {"lastUpdated": "2026-12-01T10:00:00.500Z"}},
        model,
        {**model, "toolCalls": [_call("c1", "hi")]},
        {"id": "u2", "timestamp": "2026-12-01T10:00:02.100Z", "type": "user",
         "content": [{"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "hi"}}}]},
        {"id": "m2", "timestamp": "2026-12-01T10:00:03.000Z", "type": "gemini", "content": "",
         "toolCalls": [_call("c2", None, "executing")]},
        {"$set": {"lastUpdated": "2026-12-01T10:00:03.000Z"}},
    ]


def test_a_response_stored_twice_is_one_response_and_repair_removes_the_copy() -> None:
    text = "".join(lines_of(_session_061()))
    session = read_text(text)
    assert (session.format, session.provider, session.model) == ("gemini_cli", "gemini", "gemini-2.5-pro")
    # the session context is not sent; the model record's last version stands where its first did
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        ("user", None), ("assistant", None), ("tool", "c1"), ("assistant", None)]
    assert session.where == ["line 3", "line 6", "line 6", "line 8"]
    assert session.warnings == ["line 7: a second copy of the response to c1 (Gemini CLI would send both); "
                                "repair removes it"]
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["c2"]
    assert session.fixes == ["removed 1 second copy of a stored response at line 7 (Gemini CLI would send both)"]
    written = "".join(chunks)
    out = written.split("\n")
    original = text.split("\n")
    assert out[:6] == original[:6] and out[7:] == original[8:]  # the copy is gone, m2 rewritten, the rest kept
    m2 = json.loads(out[6])
    assert m2["toolCalls"][0]["status"] == "cancelled"
    assert m2["toolCalls"][0]["result"][0]["functionResponse"]["id"] == "c2"
    before = json.loads(original[7])
    assert {k: v for k, v in m2.items() if k != "toolCalls"} == {k: v for k, v in before.items() if k != "toolCalls"}
    again = read_text(written)
    assert again.warnings == [] and [m.role for m in again.messages][-2:] == ["assistant", "tool"]
    assert not again.repaired(None)[0].changed and again.fixes == []


def test_rewind_and_set_messages_are_replayed() -> None:
    records: list[dict[str, Any]] = [
        HEADER,
        {"id": "a", "timestamp": "t", "type": "user", "content": "first"},
        {"id": "b", "timestamp": "t", "type": "gemini", "content": "reply"},
        {"id": "c", "timestamp": "t", "type": "user", "content": "second"},
        {"$rewindTo": "b"},
        {"id": "d", "timestamp": "t", "type": "user", "content": "again"},
    ]
    session = read_text("".join(lines_of(records)))
    assert [m.content for m in session.messages] == ["first", "again"]
    replaced: list[dict[str, Any]] = [
        *records, {"$set": {"messages": [{"id": "z", "type": "user", "content": "compressed"}]}},
                {"id": "y", "type": "gemini", "content": "ok"}]
    session = read_text("".join(lines_of(replaced)))
    assert [m.content for m in session.messages] == ["compressed", "ok"]
    assert session.where == ["line 7 messages[0]", "line 8"]


def test_an_older_single_json_chat(tmp_path: Path) -> None:
    chat = {"sessionId": "s-2", "projectHash": "cd", "startTime": "t", "lastUpdated": "t", "messages": [
        {"id": "u", "timestamp": "t", "type": "user", "content": "list"},
        {"id": "g", "timestamp": "t", "type": "gemini", "content": "", "toolCalls": [_call("c9", None, "scheduled")]},
    ]}
    path = tmp_path / "session-2026-12-01T10-00-s2.json"
    text = json.dumps(chat, ensure_ascii=False, indent=2)
    path.write_text(text)
    session = read(str(path))
    assert session.format == "gemini_cli" and session.where == ["messages[0]", "messages[1]"]
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["c9"]
    written = json.loads("".join(chunks))
    assert written["messages"][1]["toolCalls"][0]["result"][0]["functionResponse"]["name"] == "run_shell_command"
    assert {k: v for k, v in written.items() if k != "messages"} == {k: v for k, v in chat.items() if k != "messages"}


def test_an_orphan_response_becomes_a_note_in_its_part() -> None:
    records: list[dict[str, Any]] = [HEADER, {"id": "u", "type": "user", "content": "go"},
               {"id": "x", "type": "user", "content": [
                   {"functionResponse": {"id": "ghost", "name": "ls", "response": {"output": "a"}}}]}]
    session = read_text("".join(lines_of(records)))
    result, chunks = session.repaired(None)
    assert result.notes == [1]
    out = "".join(chunks).split("\n")
    assert out[:2] == "".join(lines_of(records)).split("\n")[:2]
    assert "ghost" in json.loads(out[2])["content"][0]["text"]


def test_parts_and_responses_read_as_the_gemini_adapter_reads_them() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    user = [{"text": "look"}, image]
    model = [{"text": "weighing it", "thought": True}, {"text": "listing"},
             {"functionCall": {"id": "c1", "name": "ls", "args": {"dir": "."}}}]
    answer = [{"functionResponse": {"id": "c1", "name": "ls", "response": {"error": "denied"}}}]
    stored = {"functionResponse": {"name": "ls", "response": {"files": ["a"]}}}
    records: list[dict[str, Any]] = [
        HEADER, {"id": "u", "type": "user", "content": user}, {"id": "m", "type": "gemini", "content": model},
        {"id": "r", "type": "user", "content": answer},
        {"id": "m2", "type": "gemini", "content": "", "toolCalls": [
            {"id": "c2", "name": "ls", "args": {}, "status": "error", "result": [stored]}]}]
    session = read_text("".join(lines_of(records)))
    # Gemini CLI sends no thought back: the adapter reads the body without it
    contents = [{"role": "user", "parts": user}, {"role": "model", "parts": model[1:]},
                {"role": "user", "parts": answer}]
    expected: list[ChatMessage] = []
    calls: Sequence[ToolCall] = ()
    for k in range(len(contents)):
        read_messages, calls = read_content(contents, k, calls)
        expected += read_messages
    assert expected[2].content == "denied" and expected[2].is_error
    assert session.messages[:3] == expected
    # a toolCalls entry's result: its id and name from the entry, an error when its status says so
    result = session.messages[-1]
    assert result == replace(read_response(stored, "result[0]"), tool_call_id="c2", is_error=True)
    assert result.content == '{"files": ["a"]}'


ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT.parent / "shared" / "real-world"


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-world is absent")
@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("*__gemini__*")) if REAL.is_dir() else [])
def test_real_gemini_cli_sessions_read_and_repair_losing_no_line(name: str) -> None:
    path = REAL / name
    session = read(str(path))
    assert session.format == "gemini_cli"
    assert any(m.tool_calls for m in session.messages)
    assert "".join(session.write(session.messages)) == path.read_text()
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == path.read_text()


def test_copies_inside_a_set_messages_list_are_removed_from_the_list() -> None:
    # After a resume Gemini CLI stores its whole history in one $set: the call's turn, a `_response` record
    # and the older copy; all three would be sent.
    response = {"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "hi"}}}
    history = [
        {"id": "u1", "type": "user", "content": [{"text": "run it"}]},
        {"id": "m1", "type": "gemini", "content": [{"functionCall": {"id": "c1", "name": "run_shell_command",
                                                                     "args": {}}}],
         "toolCalls": [_call("c1", "hi")]},
        {"id": "m1_response", "type": "user", "content": [response]},
        {"id": "u2", "type": "user", "content": [response]},
        {"id": "u3", "type": "user", "content": [{"text": "and now?"}]},
    ]
    records: list[dict[str, Any]] = [HEADER, {"$set": {"messages": history, "lastUpdated": "t"}}]
    session = read_text("".join(lines_of(records)))
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        ("user", None), ("assistant", None), ("tool", "c1"), ("user", None)]
    assert len(session.warnings) == 2
    _, chunks = session.repaired(None)
    written = "".join(chunks)
    kept = json.loads(written.split("\n")[1])["$set"]
    assert [m["id"] for m in kept["messages"]] == ["u1", "m1", "u3"] and kept["lastUpdated"] == "t"
    assert written.split("\n")[0] == json.dumps(HEADER, separators=(",", ":"))
    assert read_text(written).warnings == []


def test_repair_in_place_removes_the_copy_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chatmend.cli import main

    path = tmp_path / ".gemini" / "tmp" / "p" / "chats" / "session-2026-12-01T10-00-s1.jsonl"
    path.parent.mkdir(parents=True)
    records = _session_061()
    path.write_text("".join(lines_of(records)))
    assert main(["repair", str(path), "--in-place"]) == 0
    err = capsys.readouterr().out
    assert "removed 1 second copy of a stored response at line 7 (Gemini CLI would send both)" in err
    assert "answered 1 call as interrupted: c2 (run_shell_command)" in err
    written = path.read_text().splitlines()
    assert len(written) == len(records) - 1 and all('"u2"' not in line for line in written)
    assert main(["repair", str(path), "--in-place"]) == 0  # a repaired session repairs nothing more
    assert "nothing to repair" in capsys.readouterr().out
    assert main(["check", str(path)]) == 0


def test_parallel_calls_each_holding_the_whole_turn_keep_their_own_response() -> None:
    # After a resume Gemini CLI 0.61 stores each parallel call with every response of the turn: 4 for 2 calls.
    both = [{"functionResponse": {"id": c, "name": "run_shell_command", "response": {"output": c}}}
            for c in ("c1", "c2")]
    calls = [{**_call(c, None), "result": both} for c in ("c1", "c2")]
    history = [
        {"id": "u1", "type": "user", "content": [{"text": "two at once"}]},
        {"id": "m1", "type": "gemini", "content": [{"functionCall": {"id": c, "name": "run_shell_command",
                                                                     "args": {}}} for c in ("c1", "c2")],
         "toolCalls": calls},
        {"id": "m1_response", "type": "user", "content": both},
    ]
    records: list[dict[str, Any]] = [HEADER, {"$set": {"messages": history}}]
    session = read_text("".join(lines_of(records)))
    assert [(m.role, m.tool_call_id, m.content) for m in session.messages if m.role == "tool"] == [
        ("tool", "c1", "c1"), ("tool", "c2", "c2")]
    result, chunks = session.repaired(None)
    assert not result.changed and len(session.fixes) == 2
    kept = json.loads("".join(chunks).split("\n")[1])["$set"]["messages"]
    assert [m["id"] for m in kept] == ["u1", "m1"]
    assert [[r["functionResponse"]["id"] for r in c["result"]] for c in kept[1]["toolCalls"]] == [["c1"], ["c2"]]


def test_check_says_a_stored_copy_in_geminis_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chatmend.cli import main

    session = read_text("".join(lines_of(_session_061())))
    assert session.problems == [
        "line 7: GE1: Please ensure that the number of function response parts is equal to the number of function "
        "call parts of the function call turn. (a second response to c1, which Gemini CLI would send)"]
    path = tmp_path / "session-2026-12-01T10-00-s1.jsonl"
    path.write_text("".join(lines_of(_session_061())))
    assert main(["check", str(path)]) == 1
    assert "line 7: GE1: Please ensure that the number of function response parts" in capsys.readouterr().out
    assert main(["repair", str(path), "--in-place"]) == 0
    capsys.readouterr()
    assert main(["check", str(path)]) == 0 and read_text(path.read_text()).problems == []
