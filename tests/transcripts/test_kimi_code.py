"""Kimi Code CLI wire logs (`agents/<agent>/wire.jsonl`): replayed as Kimi Code replays them (steps of loop
events, the last compaction starting the history over), repaired with every other line kept byte for byte."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, TextPart, ThinkingPart, repair_history
from chatmend.answer_order import keep_answer_order
from chatmend.cli import main
from chatmend.exceptions import InputError
from chatmend.transcripts import kimi_code
from tests.strategies import examples, messy_histories, valid_histories
from tests.transcripts.helpers import lines_of, normal, read_text

HEADER = {"type": "metadata", "protocol_version": "1.4", "created_at": 1785612803281}


def _event(event: dict[str, Any], time: int) -> dict[str, Any]:
    return {"type": "context.append_loop_event", "event": event, "time": time}


def _user(text: str, time: int) -> dict[str, Any]:
    return {"type": "context.append_message", "message": {"role": "user", "content": [{"type": "text", "text": text}],
                                                         "toolCalls": [], "origin": {"kind": "user"}}, "time": time}


def wire_records(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """A neutral history as Kimi Code logs it: a prompt and its message for each user turn, a step of loop events
    for each reply, a tool.result event for each result."""
    records: list[dict[str, Any]] = [HEADER, {"type": "config.update", "modelAlias": "kimi-k2", "time": 1}]
    for i, m in enumerate(history):
        t = 1000 * (i + 1)
        text = m.content if isinstance(m.content, str) else "".join(
            p.text for p in m.content if isinstance(p, TextPart))
        if m.role in ("user", "system"):
            records.append({"type": "turn.prompt", "input": [{"type": "text", "text": text}], "time": t})
            records.append(_user(text, t))
        elif m.role == "tool":
            result: dict[str, Any] = {"output": text}
            if m.is_error:
                result["isError"] = True
            records.append(_event({"type": "tool.result", "parentUuid": m.tool_call_id, "toolCallId": m.tool_call_id,
                                   "result": result}, t))
        else:
            step = f"step-{i}"
            records.append(_event({"type": "step.begin", "uuid": step, "turnId": str(i), "step": 1}, t))
            records.append({"type": "llm.request", "model": "kimi-k2.7-code", "messageCount": i, "time": t})
            parts = [m.content] if isinstance(m.content, str) else list(m.content)
            for n, p in enumerate(parts):
                if isinstance(p, ThinkingPart) and not p.redacted:
                    part: dict[str, Any] = {"type": "think", "think": p.text}
                elif isinstance(p, TextPart) or (isinstance(p, str) and p):
                    part = {"type": "text", "text": p if isinstance(p, str) else p.text}
                else:
                    continue
                records.append(_event({"type": "content.part", "uuid": f"{step}-{n}", "stepUuid": step, "part": part},
                                      t))
            for c in m.tool_calls:
                records.append(_event({"type": "tool.call", "uuid": c.id, "stepUuid": step, "toolCallId": c.id,
                                       "name": c.name, "args": c.arguments}, t))
            records.append(_event({"type": "step.end", "uuid": step, "finishReason": "tool_use"}, t))
            records.append({"type": "usage.record", "usage": {"output": 1}, "time": t})
    return records


def _killed() -> list[dict[str, Any]]:
    step = "s1"
    return [
        HEADER,
        {"type": "turn.prompt", "input": [{"type": "text", "text": "list both"}], "time": 10},
        _user("list both", 10),
        _event({"type": "step.begin", "uuid": step, "turnId": "0", "step": 1}, 11),
        {"type": "llm.request", "provider": "kimi", "model": "kimi-k2.7-code", "time": 11},
        _event({"type": "content.part", "uuid": "p1", "stepUuid": step, "part": {"type": "think", "think": "two"}}, 12),
        _event({"type": "tool.call", "uuid": "Bash_0", "stepUuid": step, "toolCallId": "Bash_0", "name": "Bash",
                "args": {"command": "ls a"}}, 13),
        _event({"type": "tool.call", "uuid": "Bash_1", "stepUuid": step, "toolCallId": "Bash_1", "name": "Bash",
                "args": {"command": "ls b"}}, 14),
        _event({"type": "tool.result", "parentUuid": "Bash_0", "toolCallId": "Bash_0", "result": {"output": "x"}}, 15),
        {"type": "turn.cancel", "time": 16},
        {"type": "turn.prompt", "input": [{"type": "text", "text": "go on"}], "time": 20},
        _user("go on", 20),
    ]


def test_a_call_killed_mid_run_is_answered_after_its_steps_other_result() -> None:
    text = "".join(lines_of(_killed()))
    session = read_text(text)
    assert (session.format, session.provider, session.model) == ("kimi_code", "kimi", "kimi-k2.7-code")
    assert [(m.role, m.tool_call_id, m.tool_name) for m in session.messages] == [
        ("user", None, None), ("assistant", None, None), ("tool", "Bash_0", "Bash"), ("user", None, None)]
    assert session.where == ["line 3", "line 6", "line 9", "line 12"]
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["Bash_1"]
    out = "".join(chunks).split("\n")
    original = text.split("\n")
    assert out[:9] == original[:9] and out[10:] == original[9:]  # one line added, in its place; the rest kept
    added = json.loads(out[9])
    assert added["type"] == "context.append_loop_event" and added["time"] == 15
    assert added["event"]["type"] == "tool.result" and added["event"]["toolCallId"] == "Bash_1"
    assert added["event"]["parentUuid"] == "Bash_1" and added["event"]["result"]["isError"] is True
    assert not read_text("\n".join(out)).repaired(None)[0].changed


def test_the_last_compaction_starts_the_history_over() -> None:
    records = [
        *_killed()[:9],
        {"type": "full_compaction.begin", "source": "manual", "time": 30},
        {"type": "context.apply_compaction", "summary": "s", "contextSummary": "We listed a.", "compactedCount": 4,
         "time": 31},
        {"type": "full_compaction.complete", "time": 32},
        _user("next", 40),
    ]
    text = "".join(lines_of(records))
    session = read_text(text)
    assert [m.content for m in session.messages] == ["We listed a.", "next"]
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == text  # the open call before the compaction is not sent


def test_records_of_another_agent_and_unknown_records_are_kept() -> None:
    records = _killed()
    records.insert(3, {"type": "plan_mode.enter", "time": 10})
    records.insert(4, {**_user("sub task", 10), "agentId": "agent-1"})
    records = [{**r, "agentId": "main"} if r.get("type", "").startswith("context.") and "agentId" not in r else r
               for r in records]
    text = "".join(lines_of(records))
    session = read_text(text)
    assert [m.content for m in session.messages if m.role == "user"] == ["list both", "go on"]
    out = "".join(session.repaired(None)[1])
    added = [json.loads(line) for line in out.split("\n") if line and line + "\n" not in text]
    assert len(added) == 1 and added[0]["agentId"] == "main"


def test_an_orphan_result_becomes_a_user_message_in_its_place() -> None:
    orphan = {"type": "tool.result", "parentUuid": "gone", "toolCallId": "gone", "result": {"output": "o"}}
    records = [HEADER, _user("hi", 1), _event(orphan, 2)]
    out = "".join(read_text("".join(lines_of(records))).repaired(None)[1]).split("\n")
    note = json.loads(out[2])
    assert note["type"] == "context.append_message" and note["time"] == 2
    assert "o" in note["message"]["content"][0]["text"] and note["message"]["role"] == "user"


@examples(50)
@given(valid_histories())
def test_a_valid_wire_log_is_written_back_byte_for_byte(history: list[ChatMessage]) -> None:
    text = "".join(lines_of(wire_records(history)))
    try:
        session = read_text(text)
    except InputError as exc:
        assert "no conversation messages" in exc.message
        return
    assert session.format == "kimi_code"
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    if not result.changed:
        assert "".join(chunks) == text


@examples(80)
@given(messy_histories())
def test_a_repaired_wire_log_reads_back_as_the_repaired_history_keeping_every_other_line(
        history: list[ChatMessage]) -> None:
    records = wire_records(history)
    text = "".join(lines_of(records))
    try:
        session = read_text(text, "kimi_code")
    except InputError as exc:
        assert "no conversation messages" in exc.message
        return
    expected = keep_answer_order(session.messages, repair_history(session.messages))  # as a store repair writes
    out = "".join(session.repaired(None)[1])
    if not expected.messages:
        return
    again = read_text(out, "kimi_code")
    assert normal(again.messages) == normal(expected.messages)
    assert not keep_answer_order(again.messages, repair_history(again.messages)).changed
    kept = [line for line, r in zip(text.split("\n"), records)
            if r["type"] not in ("context.append_loop_event", "context.append_message")]
    after = iter(out.split("\n"))
    assert all(any(line == a for a in after) for line in kept)  # every record repair does not read, in order
    if not expected.changed:
        assert out == text


def test_bad_events_are_errors_at_their_line() -> None:
    records = _killed()
    records[6] = _event({"type": "tool.call", "toolCallId": "Bash_0", "name": "Bash", "args": 3}, 13)
    with pytest.raises(InputError) as caught:
        read_text("".join(lines_of(records)))
    assert caught.value.line == 7 and "event.args: expected an object" in caught.value.message
    records = _killed()
    records[2] = {"type": "context.append_message", "message": "hi", "time": 1}
    with pytest.raises(InputError) as caught:
        read_text("".join(lines_of(records)), "kimi_code")
    assert caught.value.line == 3 and "message: expected an object" in caught.value.message


def test_cli_repairs_a_session_in_place_and_a_doctor_finds_it(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "kimi-home"
    path = home / "sessions" / "wd_project_0123456789ab" / "session_5e7c" / "agents" / "main" / "wire.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(lines_of(_killed())), encoding="utf-8")
    original = path.read_bytes()
    assert kimi_code.default_locations({"HOME": str(tmp_path), "KIMI_CODE_HOME": str(home)}) == [home / "sessions"]
    assert kimi_code.default_locations({"HOME": str(tmp_path)}) == [tmp_path / ".kimi-code" / "sessions"]
    assert kimi_code.is_session_file(path) and not kimi_code.is_session_file(path.parent / "state.json")
    assert kimi_code.resume_command(path) == "kimi --session 5e7c"
    assert main(["check", str(path)]) == 1
    assert "Bash_1" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    assert main(["convert", str(path), "--to", "kimi", "--model", "kimi-k2", "-o", str(tmp_path / "body.json")]) == 0
    body = json.loads((tmp_path / "body.json").read_text())
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "tool", "user"]
    capsys.readouterr()
    assert main(["repair", "--in-place", str(path)]) == 0
    assert path.with_name("wire.jsonl.bak").read_bytes() == original
    assert main(["check", str(path)]) == 0


REAL = Path(__file__).resolve().parents[3] / "shared" / "real-world"
TOOLS_LOG = REAL / "jazzyalex__agent-sessions__Resources__Fixtures__stage0__agents__kimi__assistant_tools.jsonl"


@pytest.mark.skipif(not TOOLS_LOG.is_file(), reason="../shared/real-world is absent")
def test_a_real_wire_log_pairs_every_call_and_a_result_cut_out_is_answered_in_its_place() -> None:
    lines = TOOLS_LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    before = [line for line in lines if '"context.apply_compaction"' not in line]  # the history before it, whole
    session = read_text("".join(before), "kimi_code")
    calls = [c.id for m in session.messages for c in m.tool_calls]
    results = [m.tool_call_id or "" for m in session.messages if m.role == "tool"]
    assert len(calls) == 19 and sorted(calls) == sorted(results)
    assert not session.repaired(None)[0].changed
    cut = next(i for i, line in enumerate(before) if '"tool.result"' in line and '"Bash_2"' in line)
    killed = before[:cut] + before[cut + 1:]
    result, chunks = read_text("".join(killed), "kimi_code").repaired(None)
    assert [c.id for c in result.interrupted] == ["Bash_2"]
    out = "".join(chunks).splitlines(keepends=True)
    assert out[:cut] == killed[:cut] and out[cut + 1:] == killed[cut:]
    assert json.loads(out[cut])["event"]["toolCallId"] == "Bash_2"
