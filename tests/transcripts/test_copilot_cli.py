"""GitHub Copilot CLI sessions (`events.jsonl`): read as Copilot CLI resumes them (results paired with their call's
turn wherever they stand, chunks of one model call as one reply, a compaction's summary), repaired by appending the
results Copilot CLI would make up itself.

The first test runs the real Copilot CLI (`@github/copilot` at the version `bench/real_clients/driver.py` pins,
from npm; skipped without node, npm or the registry) in offline mode with its BYOK settings pointed at the bench's
fake provider on 127.0.0.1, kills it while two shell commands run, and resumes the repaired session in Copilot CLI.
The rest are hand-made, one per rule.
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

from chatmend import ChatMessage, HistoryError, TextPart
from chatmend.cli import main
from chatmend.doctor import doctor
from chatmend.exceptions import InputError
from chatmend.formats import read
from chatmend.transcripts import copilot_cli
from tests.strategies import examples, valid_histories
from tests.transcripts.helpers import read_text
from tests.transcripts.real_clients import driver, interrupted


def test_a_session_copilot_left_mid_tool_is_fixed_by_doctor_and_copilot_resumes_it(tmp_path: Path) -> None:
    client, sid, _ = interrupted("copilot", tmp_path, "parallel")
    path = client.store(sid)
    assert path is not None and copilot_cli.is_session_file(path)
    session = read(str(path))
    assert session.format == "copilot_cli"
    assert [len(m.tool_calls) for m in session.messages] == [0, 2]
    env = {"HOME": str(client.home)}
    found = list(doctor(env=env, force=True, workers=1))  # just written: "in use" without force
    assert [(f.tool, f.session, f.status) for f in found] == [("Copilot CLI", sid, "broken")]
    assert found[0].resume == f"copilot --resume {sid}"
    before = path.read_text(encoding="utf-8")
    assert [f.status for f in doctor(env=env, fix=True, force=True, workers=1)] == ["fixed"]
    assert path.read_text(encoding="utf-8").startswith(before)  # every line kept, the answers appended
    resumed = driver().resume(client, sid, "resume-repaired")
    seen = resumed["provider"]
    assert seen["valid"] and resumed["went_on"], resumed
    assert [c["result"] is not None for c in seen["resume_calls"]] == [True, True]
    # what Copilot CLI wrote on top of the repaired session checks clean and repairs to the same bytes
    text = path.read_text(encoding="utf-8")
    result, chunks = read(str(path)).repaired(None)
    assert not result.changed and "".join(chunks) == text


class Log:
    """A Copilot CLI event log, an event at a time, each chained to the one before."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.add("session.start", sessionId="s1", version=1, producer="copilot-agent")

    def add(self, kind: str, **data: Any) -> str:
        event_id = f"00000000-0000-4000-8000-{len(self.events):012d}"
        self.events.append({"type": kind, "data": data, "id": event_id,
                            "timestamp": f"2026-12-06T00:00:{len(self.events):02d}.000Z",
                            "parentId": self.events[-1]["id"] if self.events else None})
        return event_id

    def user(self, text: str) -> str:
        return self.add("user.message", content=text, transformedContent=f"<t/>\n\n{text}")

    def reply(self, *calls: str, text: str = "", **data: Any) -> str:
        requests = [{"toolCallId": c, "name": "bash", "arguments": {"command": "ls"}, "type": "function"}
                    for c in calls]
        return self.add("assistant.message", messageId=f"m{len(self.events)}", content=text, toolRequests=requests,
                        model="gpt-5", **data)

    def result(self, call: str, output: str = "ok", success: bool = True) -> str:
        if success:
            return self.add("tool.execution_complete", toolCallId=call, success=True, result={"content": output})
        return self.add("tool.execution_complete", toolCallId=call, success=False, error={"message": output})

    def text(self) -> str:
        return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in self.events)


def _appended(text: str) -> tuple[Any, list[dict[str, Any]]]:
    result, chunks = read_text(text).repaired(None)
    out = "".join(chunks)
    assert out.startswith(text)
    return result, [json.loads(line) for line in out[len(text):].splitlines()]


def test_an_unanswered_call_is_answered_by_an_event_appended_to_the_log() -> None:
    log = Log()
    log.user("go")
    log.reply("c1", "c2")
    log.add("tool.execution_start", toolCallId="c1", toolName="bash")
    log.result("c1")
    last = log.add("session.shutdown")
    session = read_text(log.text())
    assert session.format == "copilot_cli" and session.model == "gpt-5"
    assert [m.role for m in session.messages] == ["user", "assistant", "tool"]
    assert session.messages[0].content == "<t/>\n\ngo"  # what the model is sent
    result, added = _appended(log.text())
    assert [c.id for c in result.interrupted] == ["c2"]
    assert added == [{"type": "tool.execution_complete", "data": {
        "toolCallId": "c2", "success": False, "error": {"message": result.messages[3].content, "code": "interrupted"}},
        "id": added[0]["id"], "timestamp": log.events[-1]["timestamp"], "parentId": last}]
    assert added[0]["id"] not in log.text()
    repaired = read_text(log.text() + json.dumps(added[0]) + "\n")
    assert not repaired.repaired(None)[0].changed


def test_results_pair_with_their_calls_turn_wherever_they_stand() -> None:
    log = Log()
    log.user("go")
    log.reply("c1", "c2")
    log.result("c2", "second")
    log.add("session.resume", eventCount=4)
    log.user("next")  # a turn interleaved before the last result, as a resume leaves it
    log.reply(text="working")
    log.result("c1", "first", success=False)  # Copilot CLI's own answer on resume comes after it all
    session = read_text(log.text())
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        ("user", None), ("assistant", None), ("tool", "c1"), ("tool", "c2"), ("user", None), ("assistant", None)]
    assert session.messages[2].is_error and session.where[2] == "line 8"
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == log.text()


def test_the_chunks_of_one_model_call_are_one_reply_and_an_empty_reply_is_not_sent() -> None:
    log = Log()
    log.user("go")
    log.reply(text="Let me look. ", apiCallId="a1", chunkIndex=0, chunkCount=2)
    log.reply("c1", apiCallId="a1", chunkIndex=1, chunkCount=2)
    log.result("c1")
    log.reply(text=" ", reasoningText="thinking")
    log.reply(text="done")
    session = read_text(log.text())
    assert [(m.role, m.content, [c.id for c in m.tool_calls]) for m in session.messages] == [
        ("user", "<t/>\n\ngo", []), ("assistant", "Let me look. ", ["c1"]), ("tool", "ok", []),
        ("assistant", "done", [])]


def test_a_compaction_replaces_what_came_before_and_sub_agents_are_not_read() -> None:
    log = Log()
    log.user("old")
    log.reply("c0")  # cut off, but compacted away: not sent
    log.add("session.compaction_complete", success=True, summaryContent="we listed files")
    log.user("go on")
    log.add("assistant.message", messageId="x", content="", toolRequests=[
        {"toolCallId": "sub1", "name": "bash", "arguments": {}}], parentToolCallId="task1")
    log.events[-1]["agentId"] = "agent-1"
    session = read_text(log.text())
    assert [m.role for m in session.messages] == ["user", "user"]
    assert "we listed files" in str(session.messages[0].content)
    assert not session.repaired(None)[0].changed


def test_a_repair_that_is_not_an_appended_answer_is_refused_and_nothing_is_written() -> None:
    log = Log()
    log.user("go")
    log.result("ghost", "stale")
    with pytest.raises(HistoryError, match="cannot be written into a Copilot CLI session"):
        read_text(log.text()).repaired(None)


def test_a_torn_last_line_is_left_out_before_the_appended_answers() -> None:
    log = Log()
    log.user("go")
    log.reply("c1")
    text = log.text() + '{"type":"tool.execution_start","data":{"toolC'
    session = read_text(text)
    assert any("torn" in w for w in session.warnings)
    result, chunks = session.repaired(None)
    out = "".join(chunks)
    assert result.interrupted and out.startswith(log.text()) and "toolC\n" not in out and out.endswith("\n")
    assert any("torn last line" in f for f in session.fixes)


def test_what_copilot_cannot_read_is_said_where_it_is() -> None:
    log = Log()
    log.user("go")
    log.add("assistant.message", messageId="m", content="", toolRequests=[{"toolCallId": ["x"], "name": "bash"}])
    with pytest.raises(InputError, match=r"3: data\.toolRequests\[0\]\.toolCallId: expected a string"):
        read_text(log.text())


def test_the_default_locations_and_the_resume_command(tmp_path: Path) -> None:
    assert copilot_cli.default_locations({"HOME": str(tmp_path)}) == [tmp_path / ".copilot" / "session-state"]
    assert copilot_cli.default_locations({"HOME": "/x", "COPILOT_HOME": str(tmp_path)}) == [
        tmp_path / "session-state"]
    folder = tmp_path / ".copilot" / "session-state" / "abc"
    folder.mkdir(parents=True)
    log = Log()
    log.user("go")
    (folder / "events.jsonl").write_text(log.text(), encoding="utf-8")
    (folder / "workspace.yaml").write_text("id: abc\n", encoding="utf-8")
    assert copilot_cli.is_session_file(folder / "events.jsonl")
    assert not copilot_cli.is_session_file(folder / "workspace.yaml")
    assert copilot_cli.resume_command(folder / "events.jsonl") == "copilot --resume abc"


def copilot_log(history: list[ChatMessage]) -> Log:
    """A neutral history as Copilot CLI logs it: an event a message, each result after its call's reply."""
    log = Log()
    for m in history:
        text = m.content if isinstance(m.content, str) else "".join(
            p.text for p in m.content if isinstance(p, TextPart))
        if m.role == "assistant":
            log.add("assistant.message", messageId=f"m{len(log.events)}", content=text or ("." if not m.tool_calls
                                                                                         else ""),
                    toolRequests=[{"toolCallId": c.id, "name": c.name, "arguments": c.arguments}
                                  for c in m.tool_calls])
        elif m.role == "tool":
            log.result(m.tool_call_id or "", text, success=not m.is_error)
        else:
            log.add("user.message", content=text)
    return log


@examples(50)
@given(valid_histories())
def test_a_healthy_generated_log_checks_clean_and_repairs_to_the_same_bytes(history: list[ChatMessage]) -> None:
    text = copilot_log(history).text()
    session = read_text(text)
    assert session.format == "copilot_cli"
    assert [m.tool_call_id for m in session.messages if m.role == "tool"] == [
        m.tool_call_id for m in history if m.role == "tool"]
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == text


@examples(50)
@given(valid_histories(), st.data())
def test_a_log_cut_mid_tool_gets_every_call_answered_at_its_end(history: list[ChatMessage],
                                                                data: st.DataObject) -> None:
    log = copilot_log(history)
    results = [k for k, e in enumerate(log.events) if e["type"] == "tool.execution_complete"]
    assume(results)
    gone = set(data.draw(st.lists(st.sampled_from(results), min_size=1, unique=True)))
    log.events = [e for k, e in enumerate(log.events) if k not in gone]
    result, added = _appended(log.text())
    assert len(result.interrupted) == len(gone) == len(added)
    assert [e["parentId"] for e in added] == [log.events[-1]["id"], *(e["id"] for e in added[:-1])]
    assert not read_text(log.text() + "".join(json.dumps(e) + "\n" for e in added)).repaired(None)[0].changed


def test_check_show_and_repair_in_place_on_the_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "copilot_cli_events.jsonl"
    path = tmp_path / "events.jsonl"
    path.write_bytes(sample.read_bytes())
    assert main(["check", str(path)]) == 1
    assert "toolu_03 (bash) has no result (line 9)" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    assert "repair answers it as interrupted" in capsys.readouterr().out
    assert main(["repair", str(path), "--in-place"]) == 0
    assert "appended 1 tool.execution_complete event" in capsys.readouterr().out
    assert main(["check", str(path)]) == 0
    assert path.read_bytes().startswith(sample.read_bytes())


def test_the_api_endpoint_of_the_last_model_call_names_the_provider() -> None:
    log = Log()
    log.user("go")
    assert read_text(log.text()).provider == "openai_chat"
    log.add("session.usage_record", usage={"model": "claude-sonnet-4.5", "apiEndpoint": "/v1/messages"})
    log.reply(text="hi")
    assert read_text(log.text()).provider == "anthropic"
    log.add("session.usage_record", usage={"model": "gpt-5", "apiEndpoint": "/responses"})
    assert read_text(log.text()).provider == "openai_responses"


def test_doctor_finds_and_fixes_a_session_in_a_fake_home(tmp_path: Path) -> None:
    log = Log()
    log.user("go")
    log.reply("c1")
    folder = tmp_path / ".copilot" / "session-state" / "abc"
    folder.mkdir(parents=True)
    path = folder / "events.jsonl"
    path.write_text(log.text(), encoding="utf-8")
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    env = {"HOME": str(tmp_path)}
    found = list(doctor(env=env, workers=1))
    assert [(f.tool, f.format, f.session, f.status) for f in found] == [("Copilot CLI", "copilot_cli", "abc", "broken")]
    assert [f.status for f in doctor(env=env, fix=True, workers=1)] == ["fixed"]
    assert [f.status for f in doctor(env=env, workers=1, force=True)] == ["ok"]
    assert path.read_text(encoding="utf-8").startswith(log.text())
