"""Qwen Code sessions: read as Qwen Code resumes them (the `parentUuid` chain from the last record, fragments of
one `uuid` together, a compression's stored history), each Content through the Gemini adapter, repaired record by
record with the chain relinked.

The first test runs the real Qwen Code (`@qwen-code/qwen-code` at the version `bench/real_clients/driver.py` pins,
from npm; skipped without node, npm or the registry) against the bench's fake provider on 127.0.0.1, kills it while
its shell command runs, and resumes the repaired session in Qwen Code. The rest are hand-made, one per rule.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from chatmend import ChatMessage, TextPart
from chatmend.cli import main
from chatmend.doctor import doctor
from chatmend.exceptions import InputError
from chatmend.formats import read
from chatmend.transcripts import qwen_code
from tests.strategies import examples, valid_histories
from tests.transcripts.helpers import read_text
from tests.transcripts.real_clients import driver, interrupted


def test_a_session_qwen_left_mid_tool_is_fixed_by_doctor_and_qwen_resumes_it(tmp_path: Path) -> None:
    client, sid, _ = interrupted("qwen", tmp_path)
    path = client.store(sid)
    assert path is not None and qwen_code.is_session_file(path)
    session = read(str(path))
    assert session.format == "qwen_code" and session.provider == "openai_chat"
    assert [m.role for m in session.messages] == ["user", "assistant"]
    env = {"HOME": str(client.home)}
    found = list(doctor(env=env, force=True, workers=1))  # just written: "in use" without force
    assert [(f.tool, f.session, f.status) for f in found] == [("Qwen Code", sid, "broken")]
    assert found[0].resume == f"qwen --resume {sid}"
    assert [f.status for f in doctor(env=env, fix=True, force=True, workers=1)] == ["fixed"]
    resumed = driver().resume(client, sid, "resume-repaired")
    seen = resumed["provider"]
    assert seen["valid"] and resumed["went_on"], resumed
    assert [c["result"] is not None for c in seen["resume_calls"]] == [True]
    # what Qwen Code wrote on top of the repaired session checks clean and repairs to the same bytes
    text = path.read_text(encoding="utf-8")
    result, chunks = read(str(path)).repaired(None)
    assert not result.changed and "".join(chunks) == text


class Writer:
    """A Qwen Code session file, a record at a time, each record's parent the one before it."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def add(self, kind: str, parent: str | bool | None = True, **fields: Any) -> str:
        uid = f"00000000-0000-4000-8000-{len(self.records):012d}"
        if parent is True:
            parent = self.records[-1]["uuid"] if self.records else None
        self.records.append({"uuid": uid, "parentUuid": parent, "sessionId": "s1",
                             "timestamp": f"2026-12-06T00:00:{len(self.records):02d}.000Z", "type": kind,
                             "cwd": "/w", "version": "0.24.4", **fields})
        return uid

    def user(self, text: str, **fields: Any) -> str:
        return self.add("user", message={"role": "user", "parts": [{"text": text}]}, **fields)

    def reply(self, *calls: str, text: str = "", **fields: Any) -> str:
        parts: list[Any] = [{"text": text}] if text else []
        parts += [{"functionCall": {"id": c, "name": "run_shell_command", "args": {"command": "ls"}}} for c in calls]
        return self.add("assistant", message={"role": "model", "parts": parts}, model="qwen3-coder", **fields)

    def result(self, call: str, output: str = "ok", **fields: Any) -> str:
        part = {"functionResponse": {"id": call, "name": "run_shell_command", "response": {"output": output}}}
        return self.add("tool_result", message={"role": "user", "parts": [part]}, **fields)

    def system(self, subtype: str, **payload: Any) -> str:
        return self.add("system", subtype=subtype, systemPayload=payload)

    def text(self) -> str:
        return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in self.records)


def _repaired(text: str) -> tuple[Any, list[dict[str, Any]]]:
    result, chunks = read_text(text).repaired(None)
    return result, [json.loads(line) for line in "".join(chunks).splitlines()]


def test_an_unanswered_call_gets_a_tool_result_record_the_next_record_hangs_off() -> None:
    w = Writer()
    w.user("go")
    call = w.reply("c1", "c2")
    w.result("c1")
    telemetry = w.system("ui_telemetry", uiEvent={})
    w.user("next")
    text = w.text()
    session = read_text(text)
    assert session.format == "qwen_code" and [m.role for m in session.messages] == ["user", "assistant", "tool",
                                                                                      "user"]
    session = read_text(text)
    result, chunks = session.repaired(None)
    out = [json.loads(line) for line in "".join(chunks).splitlines()]
    assert [c.id for c in result.interrupted] == ["c2"]
    assert session.fixes == ["relinked 1 record (a new parentUuid, so Qwen Code's chain passes what repair added): "
                             "line 4"]
    added = out[3]
    assert added["type"] == "tool_result" and added["parentUuid"] == w.records[2]["uuid"]
    assert added["uuid"] not in text and added["sessionId"] == "s1" and added["timestamp"] == w.records[1]["timestamp"]
    assert added["message"] == {"role": "user", "parts": [{"functionResponse": {
        "id": "c2", "name": "run_shell_command", "response": {"error": result.messages[3].content}}}]}
    assert out[4] == {**w.records[3], "parentUuid": added["uuid"]} and out[4]["uuid"] == telemetry
    written = [json.dumps(r, separators=(",", ":")) for r in out]
    assert written[:3] == text.splitlines()[:3] and written[5:] == text.splitlines()[4:]
    assert call == w.records[1]["uuid"]
    assert not read_text("\n".join(written) + "\n").repaired(None)[0].changed


def test_a_result_whose_call_is_gone_becomes_a_text_part_in_its_record() -> None:
    w = Writer()
    w.user("go")
    w.reply("c1")
    w.result("c1")
    w.result("ghost", "stale")
    w.reply(text="done")
    result, out = _repaired(w.text())
    assert result.notes and len(out) == len(w.records)
    assert out[3]["uuid"] == w.records[3]["uuid"] and "ghost" in out[3]["message"]["parts"][0]["text"]
    assert out[:3] == w.records[:3] and out[4:] == w.records[4:]


def test_a_repeated_call_id_is_renamed_in_its_call_and_its_result() -> None:
    w = Writer()
    w.user("go")
    w.reply("c1")
    w.result("c1")
    w.user("again")
    w.reply("c1")
    w.result("c1", "second")
    result, out = _repaired(w.text())
    assert result.renamed
    new_id = out[4]["message"]["parts"][0]["functionCall"]["id"]
    assert new_id != "c1" and out[5]["message"]["parts"][0]["functionResponse"]["id"] == new_id
    assert out[:4] == w.records[:4]


def test_only_the_chain_from_the_last_record_is_read_and_artifacts_are_not_its_leaf() -> None:
    w = Writer()
    w.user("go")
    answer = w.reply(text="hi")
    w.user("list c")
    w.reply("c9")  # rewound while c9 ran: a dead branch Qwen Code does not walk
    w.add("user", parent=answer, message={"role": "user", "parts": [{"text": "something else"}]})
    w.reply(text="sure")
    w.add("system", parent=None, subtype="session_artifact_snapshot", systemPayload={})
    session = read_text(w.text())
    assert [m.content for m in session.messages] == ["go", "hi", "something else", "sure"]
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == w.text()


def test_fragments_of_one_uuid_are_one_reply_and_a_mid_turn_message_joins_the_user_turn() -> None:
    w = Writer()
    w.user("go")
    first = w.reply(text="let me look")
    w.records.append({**w.records[-1], "message": {"role": "model", "parts": [
        {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {}}}]}})
    w.result("c1")
    w.user("also this", subtype="mid_turn_user_message")
    session = read_text(w.text())
    assert [(m.role, [c.id for c in m.tool_calls]) for m in session.messages] == [
        ("user", []), ("assistant", ["c1"]), ("tool", []), ("user", [])]
    assert session.messages[1].content == "let me look" and w.records[2]["uuid"] == first
    assert not session.repaired(None)[0].changed


def test_a_compression_replaces_what_came_before_and_its_stored_history_is_not_rewritten() -> None:
    w = Writer()
    w.user("old")
    w.reply(text="old answer")
    w.system("chat_compression", compressedHistory=[
        {"role": "user", "parts": [{"text": "summary"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "k1", "name": "run_shell_command", "args": {}}}]}])
    w.user("go on")
    session = read_text(w.text())
    assert [m.content for m in session.messages][:1] == ["summary"] and len(session.messages) == 3
    result, out = _repaired(w.text())  # the call it keeps is answered by a record after it
    assert [c.id for c in result.interrupted] == ["k1"] and out[:3] == w.records[:3]
    assert out[3]["parentUuid"] == w.records[2]["uuid"] and out[4]["parentUuid"] == out[3]["uuid"]
    w.records[2]["systemPayload"]["compressedHistory"][1] = {"role": "user", "parts": [
        {"functionResponse": {"id": "ghost", "name": "x", "response": {"output": "stale"}}}]}
    with pytest.raises(InputError, match="chat_compression"):  # an orphan inside it: a note would rewrite it
        "".join(read_text(w.text()).repaired(None)[1])


def test_the_auth_type_names_the_provider_and_records_are_told_from_claude_code() -> None:
    w = Writer()
    w.system("session_model", modelId="claude-sonnet-4-5", authType="anthropic")
    w.user("go")
    session = read_text(w.text())
    assert (session.provider, session.model) == ("anthropic", "claude-sonnet-4-5")
    claude = {"uuid": "u", "parentUuid": None, "sessionId": "s", "type": "user",
              "message": {"role": "user", "content": "hi"}}
    assert not qwen_code.is_record(claude) and qwen_code.is_record(w.records[1])


def test_what_qwen_cannot_read_is_said_where_it_is() -> None:
    w = Writer()
    w.user("go")
    w.add("assistant", message={"role": "model", "parts": "not a list"})
    with pytest.raises(InputError, match=r"2: message\.parts: expected a list of parts"):
        read_text(w.text())
    w = Writer()
    w.user("go")
    w.add("assistant", message={"role": "model", "parts": [{"functionCall": {"id": 7, "name": "x"}}]})
    with pytest.raises(InputError, match=r"2: message\.parts\[0\]"):
        read_text(w.text())


def test_the_default_locations_and_the_resume_command(tmp_path: Path) -> None:
    assert qwen_code.default_locations({"HOME": str(tmp_path)}) == [tmp_path / ".qwen" / "projects"]
    assert qwen_code.default_locations({"HOME": "/x", "QWEN_HOME": str(tmp_path)}) == [tmp_path / "projects"]
    chats = tmp_path / ".qwen" / "projects" / "-w" / "chats"
    chats.mkdir(parents=True)
    w = Writer()
    w.user("go")
    path = chats / "s1.jsonl"
    path.write_text(w.text(), encoding="utf-8")
    (chats / "other.json").write_text("{}", encoding="utf-8")
    assert qwen_code.is_session_file(path) and not qwen_code.is_session_file(chats / "other.json")
    assert qwen_code.resume_command(path) == "qwen --resume s1"


def qwen_records(history: list[ChatMessage]) -> Writer:
    """A neutral history as Qwen Code writes it: a record a message, each a Gemini Content."""
    w = Writer()
    for m in history:
        text = m.content if isinstance(m.content, str) else "".join(
            p.text for p in m.content if isinstance(p, TextPart))
        if m.role == "assistant":
            parts: list[Any] = [{"text": text}] if text else []
            parts += [{"functionCall": {"id": c.id, "name": c.name,
                                        "args": c.arguments if isinstance(c.arguments, dict) else {}}}
                      for c in m.tool_calls]
            w.add("assistant", message={"role": "model", "parts": parts})
        elif m.role == "tool":
            w.add("tool_result", message={"role": "user", "parts": [{"functionResponse": {
                "id": m.tool_call_id, "name": m.tool_name or "tool", "response": {"output": text}}}]})
        else:
            w.add("user", message={"role": "user", "parts": [{"text": text or "."}]})
    return w


@examples(50)
@given(valid_histories())
def test_a_healthy_generated_session_checks_clean_and_repairs_to_the_same_bytes(history: list[ChatMessage]) -> None:
    text = qwen_records(history).text()
    session = read_text(text)
    assert session.format == "qwen_code"
    assert [m.tool_call_id for m in session.messages if m.role == "tool"] == [
        m.tool_call_id for m in history if m.role == "tool"]
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == text


@examples(50)
@given(valid_histories(), st.data())
def test_a_session_cut_mid_tool_gets_every_call_answered_and_keeps_every_line(history: list[ChatMessage],
                                                                               data: st.DataObject) -> None:
    w = qwen_records(history)
    results = [k for k, r in enumerate(w.records) if r["type"] == "tool_result"]
    assume(results)
    gone = set(data.draw(st.lists(st.sampled_from(results), min_size=1, unique=True)))
    w.records = [r for k, r in enumerate(w.records) if k not in gone]
    for k in range(1, len(w.records)):
        w.records[k] = {**w.records[k], "parentUuid": w.records[k - 1]["uuid"]}  # the chain the tool wrote
    text = w.text()
    result, chunks = read_text(text).repaired(None)
    assert len(result.interrupted) == len(gone)
    out = "".join(chunks)
    repaired = read_text(out)
    assert not repaired.repaired(None)[0].changed
    kept = {json.loads(line)["uuid"]: json.loads(line) for line in out.splitlines()}
    for record in w.records:  # every record is still there, only its parent may be new
        assert {**kept[record["uuid"]], "parentUuid": record["parentUuid"]} == record


def test_check_show_and_repair_in_place_on_the_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "qwen_code_session.jsonl"
    path = tmp_path / "s.jsonl"
    path.write_bytes(sample.read_bytes())
    assert main(["check", str(path)]) == 1
    assert "call_a3 (run_shell_command) has no result (line 5)" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    assert "repair answers it as interrupted" in capsys.readouterr().out
    assert main(["repair", str(path), "--in-place"]) == 0
    assert "answered 1 call as interrupted: call_a3" in capsys.readouterr().out
    assert main(["check", str(path)]) == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[:5] == sample.read_text(encoding="utf-8").splitlines()[:5] and len(lines) == 7


def test_doctor_finds_and_fixes_a_session_in_a_fake_home(tmp_path: Path) -> None:
    w = Writer()
    w.user("go")
    w.reply("c1")
    chats = tmp_path / ".qwen" / "projects" / "-w" / "chats"
    chats.mkdir(parents=True)
    path = chats / "s1.jsonl"
    path.write_text(w.text(), encoding="utf-8")
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    env = {"HOME": str(tmp_path)}
    found = list(doctor(env=env, workers=1))
    assert [(f.tool, f.format, f.session, f.status) for f in found] == [("Qwen Code", "qwen_code", "s1", "broken")]
    assert found[0].resume == "qwen --resume s1"
    assert [f.status for f in doctor(env=env, fix=True, workers=1)] == ["fixed"]
    assert [f.status for f in doctor(env=env, workers=1, force=True)] == ["ok"]
    assert path.read_text(encoding="utf-8").startswith(w.text())


def test_a_slash_command_answered_locally_is_taken_back_out_of_what_is_sent() -> None:
    w = Writer()
    w.user("go")
    w.reply(text="hi")
    w.user("/stats")
    local = {"phase": "result", "rawCommand": "/stats", "outputHistoryItems": [{"type": "assistant", "text": "…"}]}
    w.system("slash_command", **local)
    w.user("next")
    session = read_text(w.text())
    assert [m.content for m in session.messages] == ["go", "hi", "next"]
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == w.text()
    w.records[3]["systemPayload"]["sentToModel"] = True  # sent to the model: it stays
    assert [m.content for m in read_text(w.text()).messages] == ["go", "hi", "/stats", "next"]
