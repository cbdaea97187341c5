"""Claude Code transcripts read as Claude Code itself resumes them: the chain from the leaf, cut at the last
compaction boundary, without what it retracts or never counted, each block once, subagents as sessions, and the
2.1.3xx records kept as they are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, repair_history
from chatmend.answer_order import keep_answer_order
from chatmend.cli import main
from chatmend.formats import read
from tests.strategies import examples, messy_histories
from tests.transcripts.helpers import claude_code_records, lines_of, normal, read_text

Record = dict[str, Any]


def _cc(uid: str, parent: str | None, kind: str, content: object, second: int, **extra: Any) -> Record:
    message: Record = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = extra.pop("message_id", f"msg_{uid}")
    return {"parentUuid": parent, "isSidechain": False, "type": kind, "message": message, "uuid": uid,
            "timestamp": f"2026-12-01T10:00:{second:02d}.000Z", "sessionId": "s", "version": "2.1.332", **extra}


def _use(call_id: str, name: str = "Bash") -> list[Record]:
    return [{"type": "tool_use", "id": call_id, "name": name, "input": {"command": "sleep 60"}}]


def _result(call_id: str) -> list[Record]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]


def _boundary(uid: str, second: int, logical: str | None) -> Record:
    return {"parentUuid": None, "logicalParentUuid": logical, "isSidechain": False, "type": "system",
            "subtype": "compact_boundary", "uuid": uid, "timestamp": f"2026-12-01T10:00:{second:02d}.000Z",
            "sessionId": "s", "compactMetadata": {"trigger": "auto", "preTokens": 180000}}


def _text(records: list[Record]) -> str:
    return "".join(lines_of(records))


def _repair(text: str) -> tuple[str, Any]:
    session = read_text(text, "claude_code")
    result, chunks = session.repaired(None)
    return "".join(chunks), result


def _sent(text: str, *, sidechain: bool = False) -> list[tuple[str, list[Record]]]:
    """What Claude Code sends on resume, worked out here independently of chatmend: the chain from the last user
    or assistant record back by parentUuid, from the last compaction boundary on, retracted and superseded
    records left out, each block of one reply once, consecutive same-role messages merged as the API does."""
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    mine = [r for r in records if isinstance(r.get("uuid"), str) and bool(r.get("isSidechain")) is sidechain]
    boundary = max((i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"), default=0)
    by_uuid = {r["uuid"]: r for r in mine if records.index(r) >= boundary}
    node: Record | None = [r for r in mine if r["type"] in ("user", "assistant")][-1]
    chain: list[Record] = []
    while node is not None and node not in chain:
        chain.append(node)
        node = by_uuid.get(node.get("parentUuid"))
    chain.reverse()
    gone = {u for r in chain for key in ("retractedMessageUuids", "supersedesUuids") for u in r.get(key) or []}
    messages: list[tuple[str, list[Record]]] = []
    seen: set[str] = set()
    for r in chain:
        if r["type"] not in ("user", "assistant") or r["uuid"] in gone or (r.get("isVirtual") and
                                                                             r.get("isAbortedMidStream")):
            continue
        content = r["message"]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if r["type"] == "assistant":
            fresh = [b for b in blocks if json.dumps([r["message"]["id"], b]) not in seen]
            seen.update(json.dumps([r["message"]["id"], b]) for b in blocks)
            blocks = fresh
        if messages and messages[-1][0] == r["type"]:
            messages[-1][1].extend(blocks)
        else:
            messages.append((r["type"], list(blocks)))
    return messages


def _pairing_problems(messages: list[tuple[str, list[Record]]]) -> list[str]:
    """The Anthropic pairing rule over what is sent: each tool_use answered in the next message, each tool_result
    answering a tool_use of the message before."""
    problems = []
    for i, (role, blocks) in enumerate(messages):
        if role == "assistant":
            uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            after = messages[i + 1][1] if i + 1 < len(messages) else []
            answered = {b.get("tool_use_id") for b in after if b.get("type") == "tool_result"}
            problems += [f"tool_use {u} without tool_result" for u in uses if u not in answered]
        else:
            before = messages[i - 1][1] if i else []
            ids = {b.get("id") for b in before if b.get("type") == "tool_use"}
            problems += [f"tool_result {b['tool_use_id']} without tool_use" for b in blocks
                         if b.get("type") == "tool_result" and b["tool_use_id"] not in ids]
    return problems


def _calls(messages: list[tuple[str, list[Record]]]) -> list[str]:
    return [b["id"] for _, blocks in messages for b in blocks if b.get("type") == "tool_use"]


# --- compaction -------------------------------------------------------------------------------------------------


def test_a_result_linked_behind_the_boundary_is_an_orphan_in_what_is_resumed() -> None:
    # The result's parentUuid names the call's record, before the boundary: Claude Code sends nothing from
    # before the boundary, so that result answers nothing. Read in line order it looked paired.
    records = [
        _cc("u1", None, "user", "start", 0),
        _cc("a1", "u1", "assistant", _use("toolu_old"), 1),
        _boundary("cb", 5, "a1"),
        _cc("s1", "cb", "user", "summary of before", 6, isCompactSummary=True),
        _cc("r1", "a1", "user", _result("toolu_old"), 7),
        _cc("u2", "r1", "user", "go on", 8),
    ]
    text = _text(records)
    assert _pairing_problems(_sent(text)) == ["tool_result toolu_old without tool_use"]
    session = read_text(text, "claude_code")
    assert [m.role for m in session.messages] == ["user", "tool", "user"]
    assert session.where[0] == "line 4"
    out, result = _repair(text)
    assert result.notes == [1] and not result.interrupted
    sent = _sent(out)
    assert _pairing_problems(sent) == []
    assert next(b.get("text") for b in sent[0][1]) == "summary of before"  # the chain passes the summary
    lines = out.splitlines()
    assert lines[:3] == text.splitlines()[:3]  # before the boundary and the boundary itself: untouched
    assert json.loads(lines[2])["parentUuid"] is None
    assert not read_text(out, "claude_code").repaired(None)[0].changed


def test_a_call_behind_the_boundary_is_not_resumed_and_needs_no_result() -> None:
    records = [
        _cc("u1", None, "user", "start", 0),
        _cc("a1", "u1", "assistant", _use("toolu_old"), 1),
        _boundary("cb", 5, "a1"),
        _cc("s1", "cb", "user", "summary", 6, isCompactSummary=True),
        _cc("a2", "s1", "assistant", [{"type": "text", "text": "back"}], 7),
    ]
    text = _text(records)
    session = read_text(text, "claude_code")
    assert [m.role for m in session.messages] == ["user", "assistant"]
    out, result = _repair(text)
    assert not result.changed and out == text


# --- what Claude Code leaves out --------------------------------------------------------------------------------


def test_retracted_messages_are_not_resumed() -> None:
    records = [
        _cc("u1", None, "user", "go", 0),
        _cc("a1", "u1", "assistant", _use("toolu_1"), 1),
        {"parentUuid": "a1", "isSidechain": False, "type": "system", "subtype": "model_refusal_fallback",
         "uuid": "f1", "retractedMessageUuids": ["a1"], "content": "retried with another model",
         "timestamp": "2026-12-01T10:00:02.000Z", "sessionId": "s"},
        _cc("a2", "f1", "assistant", [{"type": "text", "text": "answered by the fallback"}], 3),
    ]
    text = _text(records)
    session = read_text(text, "claude_code")
    assert [(m.role, m.content) for m in session.messages] == [("user", "go"),
                                                               ("assistant", "answered by the fallback")]
    out, result = _repair(text)
    assert not result.changed and out == text


def test_a_retracted_system_record_stays() -> None:
    records = [
        _cc("u1", None, "user", "go", 0, retractedMessageUuids=["x1"]),
        {"parentUuid": "u1", "isSidechain": False, "type": "system", "subtype": "informational", "uuid": "x1",
         "content": "note", "sessionId": "s"},
        _cc("a1", "x1", "assistant", _use("toolu_1"), 2),
    ]
    out, result = _repair(_text(records))
    assert [c.id for c in result.interrupted] == ["toolu_1"]
    assert [json.loads(line).get("parentUuid") for line in out.splitlines()][:3] == [None, "u1", "x1"]


def test_superseded_replies_are_not_resumed() -> None:
    records = [
        _cc("u1", None, "user", "go", 0),
        _cc("a1", "u1", "assistant", _use("toolu_refused"), 1),
        _cc("a2", "a1", "assistant", [{"type": "text", "text": "the fallback's reply"}], 2, supersedesUuids=["a1"]),
    ]
    text = _text(records)
    session = read_text(text, "claude_code")
    assert [m.tool_calls for m in session.messages if m.role == "assistant"] == [()]
    out, result = _repair(text)
    assert not result.changed and out == text


def test_a_virtual_stream_aborted_midway_is_not_resumed_but_a_saved_one_is() -> None:
    virtual = [
        _cc("u1", None, "user", "go", 0),
        _cc("a1", "u1", "assistant", _use("toolu_half"), 1, isVirtual=True, isAbortedMidStream=True),
        _cc("u2", "a1", "user", "[Request interrupted by user]", 2),
    ]
    session = read_text(_text(virtual), "claude_code")
    assert [m.role for m in session.messages] == ["user", "user"]
    saved = [dict(r) for r in virtual]
    del saved[1]["isVirtual"]
    _, result = _repair(_text(saved))
    assert [c.id for c in result.interrupted] == ["toolu_half"]


# --- queue operations and 2.1.3xx records -----------------------------------------------------------------------


def test_queue_operations_keep_their_place_and_do_not_split_a_call_from_its_result() -> None:
    records = [
        _cc("u1", None, "user", "two calls", 0),
        _cc("a1", "u1", "assistant", _use("toolu_1"), 1, message_id="m"),
        {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-12-01T10:00:01.500Z",
         "sessionId": "s", "content": "also check the docs"},
        _cc("a2", "a1", "assistant", _use("toolu_2"), 2, message_id="m"),
        _cc("r1", "a1", "user", _result("toolu_1"), 3),
        {"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-12-01T10:00:04.000Z",
         "sessionId": "s"},
        _cc("q1", "r1", "user", "also check the docs", 5),
    ]
    text = _text(records)
    out, result = _repair(text)
    assert [c.id for c in result.interrupted] == ["toolu_2"]
    lines = out.splitlines()
    queued = [line for line in lines if '"queue-operation"' in line]
    assert queued == [line for line in text.splitlines() if '"queue-operation"' in line]
    assert lines.index(queued[0]) == 2  # still between the two call records
    sent = _sent(out)
    assert _pairing_problems(sent) == [] and _calls(sent) == ["toolu_1", "toolu_2"]
    assert sent[-1][1][-1] == {"type": "text", "text": "also check the docs"}  # after both results


def test_2_1_3xx_records_and_fields_are_kept_as_they_are() -> None:
    attachment = {"parentUuid": "a1", "isSidechain": False, "type": "attachment", "uuid": "t1",
                  "attachment": {"type": "todo_reminder", "content": []}, "timestamp": "2026-12-01T10:00:01.200Z",
                  "sessionId": "s"}
    others: list[Record] = [
        {"type": "api-request", "requestRef": "req_1", "sessionId": "s", "uuid": "x-api"},
        {"type": "api-request-blob", "requestRef": "req_1", "blob": "eJzLSM3JyQcABiwCFQ=="},
        {"type": "api-request-shape", "requestRef": "req_1", "shape": {"messages": 3}},
        {"type": "tools-used", "tools": ["Bash"], "sessionId": "s"},
        {"type": "cost-state", "costUSD": 0.12, "sessionId": "s"},
        {"type": "mode", "mode": "acceptEdits", "sessionId": "s"},
    ]
    records = [
        _cc("u1", None, "user", "go", 0),
        _cc("a1", "u1", "assistant", _use("toolu_1"), 1, apiBlockIndex=0, requestRef="req_1"),
        attachment,
        *others,
        _cc("a2", "t1", "assistant", _use("toolu_2"), 2, apiBlockIndex=1, message_id="msg_a1"),
        _cc("r1", "a1", "user", [{**_result("toolu_1")[0], "is_error": True}], 3, toolDenialKind="user_rejected",
            sourceToolAssistantUUID="a1", toolUseResult="denied"),
    ]
    text = _text(records)
    session = read_text(text, "claude_code")
    assert [len(m.tool_calls) for m in session.messages if m.role == "assistant"] == [2]
    out, result = _repair(text)
    assert [c.id for c in result.interrupted] == ["toolu_2"]
    original = text.splitlines()
    lines = out.splitlines()
    for kept in original[3:9]:  # the 2.1.3xx records: byte for byte, in their place
        assert kept in lines
    assert json.loads(lines[1]) == records[1]  # the call's fields (apiBlockIndex, requestRef) kept
    denied = next(json.loads(x) for x in lines if json.loads(x).get("uuid") == "r1")
    assert {k: denied[k] for k in ("toolDenialKind", "sourceToolAssistantUUID", "toolUseResult")} == {
        "toolDenialKind": "user_rejected", "sourceToolAssistantUUID": "a1", "toolUseResult": "denied"}
    added = next(json.loads(x) for x in lines if "Interrupted" in x)
    assert added["sourceToolAssistantUUID"] == "a2"  # the file names the call's record on results: so does repair
    sent = _sent(out)
    assert _pairing_problems(sent) == [] and _calls(sent) == ["toolu_1", "toolu_2"]
    chain = [json.loads(x)["uuid"] for x in lines if isinstance(json.loads(x).get("parentUuid"), str)]
    assert "t1" in chain  # the attachment stays on the chain Claude Code follows


# --- one reply written one block a line, blocks written again ---------------------------------------------------


def test_a_block_written_twice_under_one_message_id_is_one_call() -> None:
    records = [
        _cc("u1", None, "user", "go", 0),
        _cc("a1", "u1", "assistant", _use("toolu_1"), 1, message_id="m"),
        _cc("a1b", "a1", "assistant", _use("toolu_1"), 1, message_id="m"),
        _cc("r1", "a1b", "user", _result("toolu_1"), 2),
    ]
    text = _text(records)
    session = read_text(text, "claude_code")
    assert [[c.id for c in m.tool_calls] for m in session.messages if m.role == "assistant"] == [["toolu_1"]]
    out, result = _repair(text)
    assert not result.changed and out == text


def test_the_same_api_block_index_is_the_same_block_even_when_its_text_grew() -> None:
    records = [
        _cc("u1", None, "user", "go", 0),
        _cc("a1", "u1", "assistant", [{"type": "text", "text": "Let me"}], 1, message_id="m", apiBlockIndex=0),
        _cc("a1b", "a1", "assistant", [{"type": "text", "text": "Let me look."}], 1, message_id="m",
            apiBlockIndex=0),
        _cc("a2", "a1b", "assistant", _use("toolu_1"), 2, message_id="m", apiBlockIndex=1),
    ]
    text = _text(records)
    session = read_text(text, "claude_code")
    assert [(m.content, len(m.tool_calls)) for m in session.messages if m.role == "assistant"] == [("Let me", 1)]
    out, result = _repair(text)
    assert [c.id for c in result.interrupted] == ["toolu_1"]
    lines = out.splitlines()
    assert lines[:4] == text.splitlines()[:4]
    assert "toolu_1" in lines[4] and "Interrupted" in lines[4]  # the result after the whole reply


def test_a_repeat_of_a_renamed_call_is_renamed_with_it() -> None:
    records = [
        _cc("u1", None, "user", "go", 0),
        _cc("a1", "u1", "assistant", _use("toolu_1"), 1, message_id="m"),
        _cc("a1b", "a1", "assistant", _use("toolu_1"), 1, message_id="m"),
        _cc("r1", "a1b", "user", _result("toolu_1"), 2),
        _cc("a2", "r1", "assistant", _use("toolu_1"), 3, message_id="n"),  # the id again, in another reply
        _cc("r2", "a2", "user", _result("toolu_1"), 4),
    ]
    out, result = _repair(_text(records))
    assert result.renamed
    again = read_text(out, "claude_code")
    assert [len(m.tool_calls) for m in again.messages if m.role == "assistant"] == [1, 1]
    assert not again.repaired(None)[0].changed
    sent = _sent(out)
    assert _pairing_problems(sent) == [] and len(set(_calls(sent))) == 2


@examples(40)
@given(messy_histories(), st.data())
def test_writing_a_reply_record_again_changes_nothing_read_or_repaired(history: list[ChatMessage],
                                                                       data: st.DataObject) -> None:
    records = claude_code_records(history)
    replies = [i for i, r in enumerate(records) if r.get("type") == "assistant"]
    if not replies:
        return
    i = data.draw(st.sampled_from(replies))
    repeat = {**records[i], "uuid": f"{records[i]['uuid']}-again", "parentUuid": records[i]["uuid"]}
    for r in records[i + 1:]:
        if r.get("parentUuid") == records[i]["uuid"]:
            r["parentUuid"] = repeat["uuid"]
    doubled = [*records[:i + 1], repeat, *records[i + 1:]]
    plain, twice = read_text(_text(records), "claude_code"), read_text(_text(doubled), "claude_code")
    assert twice.messages == plain.messages
    out, result = _repair(_text(doubled))
    assert result.messages == keep_answer_order(plain.messages, repair_history(plain.messages)).messages
    if not result.messages:
        return  # a lone placeholder, dropped: no conversation left to read back
    assert normal(read_text(out, "claude_code").messages) == normal(result.messages)


# --- subagents ----------------------------------------------------------------------------------------------------


def _subagent(records: list[Record]) -> list[Record]:
    return [{**r, "isSidechain": True, "agentId": "a7f3"} if "uuid" in r else r for r in records]


def test_a_subagent_transcript_is_a_session_repaired_on_its_own_chain() -> None:
    records = _subagent([
        _cc("u1", None, "user", "find the config", 0),
        _cc("a1", "u1", "assistant", _use("toolu_1", "Grep"), 1, message_id="m"),
        _cc("a2", "a1", "assistant", _use("toolu_2", "Read"), 2, message_id="m"),
        _cc("r1", "a1", "user", _result("toolu_1"), 3),
    ])
    text = _text(records)
    session = read_text(text, "claude_code")
    assert [m.role for m in session.messages] == ["user", "assistant", "tool"]
    out, result = _repair(text)
    assert [c.id for c in result.interrupted] == ["toolu_2"]
    added = next(json.loads(x) for x in out.splitlines() if "Interrupted" in x)
    assert (added["isSidechain"], added["agentId"]) == (True, "a7f3")
    sent = _sent(out, sidechain=True)
    assert _pairing_problems(sent) == [] and _calls(sent) == ["toolu_1", "toolu_2"]


def test_subagent_files_of_2_0_and_2_1_read_as_sessions_and_repair_in_place(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-work-app"
    main_records = [_cc("u1", None, "user", "delegate", 0),
                    _cc("a1", "u1", "assistant", [{"type": "text", "text": "done"}], 9)]
    agent = _subagent([_cc("u1", None, "user", "look", 1), _cc("a1", "u1", "assistant", _use("toolu_9"), 2)])
    (project / "sess" / "subagents").mkdir(parents=True)
    (project / "sess.jsonl").write_text(_text(main_records))
    beside = project / "agent-a7f3.jsonl"  # 2.0
    nested = project / "sess" / "subagents" / "agent-a7f3.jsonl"  # 2.1
    for path in (beside, nested):
        path.write_text(_text(agent))
        assert read(str(path)).format == "claude_code"
        assert main(["repair", str(path), "--in-place"]) == 0
        assert "toolu_9" in path.read_text().splitlines()[-1]
        assert path.with_name(path.name + ".bak").read_text() == _text(agent)
