"""Claude Code transcripts: read the conversation, write repaired records back, keep the rest as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given

from chatmend import ChatMessage, ImagePart, TextPart, ToolCall, repair_history
from chatmend.answer_order import keep_answer_order
from tests.strategies import PNG, examples, messy_histories
from tests.transcripts.helpers import PLACEHOLDER_BEFORE_RESULT, claude_code_records, lines_of, normal, read_text

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sessions" / "claude_code.jsonl"


def _repair_text(text: str) -> tuple[list[str], list[ChatMessage]]:
    session = read_text(text)
    result, chunks = session.repaired(None)
    return "".join(chunks).split("\n")[:-1], result.messages


def test_reads_split_assistant_records_as_one_reply() -> None:
    session = read_text(SAMPLE.read_text())
    assert session.format == "claude_code"
    assert session.provider == "anthropic"
    assert session.model == "claude-sonnet-4-5-20250929"
    assistant = session.messages[1]
    assert assistant.content == "I'll read the cart code and run its tests."
    assert [c.id for c in assistant.tool_calls] == [
        "toolu_01Q8b5FhJz1CkNw3sXyD2eRt",
        "toolu_01VwP4sLm8GzR2tXq9nB6cYe",
    ]
    assert session.messages[2].tool_name == "Read"
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "user", "user"]
    assert session.where == ["line 2", "line 3", "line 6", "line 7", "line 9"]


def test_interrupted_call_gets_a_record_and_the_rest_is_untouched() -> None:
    original = SAMPLE.read_text().split("\n")[:-1]
    out, _ = _repair_text(SAMPLE.read_text())
    assert len(out) == len(original) + 1
    new = json.loads(out[6])
    assert new["type"] == "user"
    assert new["message"]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01VwP4sLm8GzR2tXq9nB6cYe",
            "is_error": True,
            "content": "Interrupted: the call to Bash was cut off before it returned a result. "
            "The tool may have partly run: check its effects before running it again.",
        }
    ]
    assert new["sessionId"] == "7d1c8e52-3f0b-4c8e-9a1d-2b6f4e0c9a17"
    assert new["parentUuid"] == "4abe5d6c-9b8f-4cae-9a7f-5d2c6b1e0f94"
    # Every original line is kept byte for byte, except the one whose parent is now the new record.
    assert out[:6] == original[:6]
    assert out[8:] == original[7:]
    relinked = json.loads(out[7])
    assert relinked["parentUuid"] == new["uuid"]
    assert {**relinked, "parentUuid": json.loads(original[6])["parentUuid"]} == json.loads(original[6])


def _chain(lines: list[str]) -> list[str]:
    """The uuids from the last chained record back to the root, by parentUuid."""
    records = [json.loads(line) for line in lines]
    by_uuid = {r["uuid"]: r for r in records if "uuid" in r}
    chained = [r for r in records if "uuid" in r]
    walk, node = [], chained[-1]
    while node is not None:
        walk.append(node["uuid"])
        node = by_uuid.get(node.get("parentUuid"))
    return walk[::-1]


def test_moved_result_keeps_the_chain_walkable() -> None:
    history = [
        ChatMessage(role="user", content="go"),
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="t1", name="a"), ToolCall(id="t2", name="b"))),
        ChatMessage(role="tool", tool_call_id="t1", content="one"),
        ChatMessage(role="user", content="steer"),
        ChatMessage(role="tool", tool_call_id="t2", content="two"),
        ChatMessage(role="assistant", content="done"),
    ]
    out, messages = _repair_text("".join(lines_of(claude_code_records(history))))
    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool", "user", "assistant"]
    again = read_text("\n".join(out) + "\n")
    assert normal(again.messages) == normal(messages)
    conversation = [json.loads(x)["uuid"] for x in out if '"uuid"' in x]
    assert _chain(out) == conversation  # walking back from the leaf visits every record, in order


def test_orphan_screenshot_becomes_a_note_in_its_own_record() -> None:
    history = [
        ChatMessage(role="user", content="look"),
        ChatMessage(
            role="tool",
            tool_call_id="gone",
            tool_name="screenshot",
            content=(TextPart(text="page"), ImagePart(media_type="image/png", data=PNG)),
        ),
    ]
    out, _ = _repair_text("".join(lines_of(claude_code_records(history))))
    note = json.loads(out[3])["message"]["content"]
    assert note[0]["type"] == "text"
    assert note[0]["text"].startswith("A tool result arrived with no matching tool call (id: gone")
    assert note[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}


def test_repeated_ids_are_renamed_in_call_and_result() -> None:
    history = [
        ChatMessage(role="user", content="go"),
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="toolu_1", name="a"),)),
        ChatMessage(role="tool", tool_call_id="toolu_1", content="one"),
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="toolu_1", name="a"),)),
        ChatMessage(role="tool", tool_call_id="toolu_1", content="two"),
    ]
    out, _ = _repair_text("".join(lines_of(claude_code_records(history))))
    blocks = [
        b
        for x in out
        for b in (json.loads(x).get("message") or {}).get("content") or []
        if isinstance(b, dict)
    ]
    assert [
        b.get("id") or b.get("tool_use_id") for b in blocks if b["type"] in ("tool_use", "tool_result")
    ] == ["toolu_1", "toolu_1", "toolu_1_1", "toolu_1_1"]


def test_a_line_that_is_not_a_record_is_kept_and_warned_about() -> None:
    # Claude Code skips such a line (a stray value, a crash's half-written last line): so does chatmend.
    first = '{"type":"user","uuid":"a","sessionId":"s","message":{"role":"user","content":"x"}}'
    call = ('{"type":"assistant","uuid":"b","parentUuid":"a","sessionId":"s","message":{"id":"m","role":"assistant",'
            '"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}')
    text = f'{first}\n[1]\n{call}\n{{"type":"user","uuid":"c","parentUuid":"b","mess'
    session = read_text(text, "claude_code")
    assert len(session.warnings) == 2 and session.warnings[0] == "line 2: not a record (a list); kept as it is"
    assert session.warnings[1].startswith("line 4: a torn last line (")
    assert [m.role for m in session.messages] == ["user", "assistant"]
    result, chunks = session.repaired(None)
    out = "".join(chunks).split("\n")
    assert [c.id for c in result.interrupted] == ["toolu_1"]
    lines = text.split("\n")
    assert out[:3] == lines[:3] and out[4:] == [""]  # the stray value kept verbatim, in place
    assert json.loads(out[3])["message"]["content"][0]["tool_use_id"] == "toolu_1"
    assert "".join(session.write(session.messages)) == text + "\n"  # unrepaired, every line as read


@examples(60)
@given(messy_histories())
@example(PLACEHOLDER_BEFORE_RESULT)
def test_repaired_transcript_reads_back_as_the_repaired_history(history: list[ChatMessage]) -> None:
    records = claude_code_records(history)
    if not any(r.get("type") in ("user", "assistant") for r in records):
        return
    text = "".join(lines_of(records))
    session = read_text(text, "claude_code")
    expected = keep_answer_order(session.messages, repair_history(session.messages)).messages
    out, messages = _repair_text(text)
    assert messages == expected
    if not expected:
        return
    again = read_text("\n".join(out) + "\n", "claude_code")
    assert normal(again.messages) == normal(expected)
    assert not keep_answer_order(again.messages, repair_history(again.messages)).changed
    kept = set(text.split("\n")[:-1])
    untouched = [r for r in records if r.get("type") in ("summary", "file-history-snapshot")]
    assert all(json.dumps(r, ensure_ascii=False, separators=(",", ":")) in out for r in untouched)
    assert sum(line in kept for line in out) >= len(untouched)
    if repair_history(session.messages).changed:  # the chain Claude Code resumes passes every record, in order
        chain = [str(r["uuid"]) for r in _live_chain(out)]
        assert chain == [json.loads(x)["uuid"] for x in out if x and json.loads(x).get("type") in ("user", "assistant")]


def test_a_compaction_boundary_keeps_its_null_parent() -> None:
    records = claude_code_records([
        ChatMessage(role="user", content="before"),
        ChatMessage(role="assistant", content="ok"),
    ])
    records.append({"type": "system", "subtype": "compact_boundary", "parentUuid": None,
                    "logicalParentUuid": records[-1]["uuid"], "uuid": "boundary", "isSidechain": False})
    after = claude_code_records([
        ChatMessage(role="user", content="after"),
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="toolu_9", name="Bash"),)),
        ChatMessage(role="user", content="[Request interrupted by user for tool use]"),
    ])[1:]
    for r in after:
        if "uuid" in r:
            r["uuid"] = "b" + r["uuid"]
            r["parentUuid"] = "b" + r["parentUuid"] if r["parentUuid"] else "boundary"
    out, _ = _repair_text("".join(lines_of(records + after)))
    data = [json.loads(x) for x in out]
    boundary = next(d for d in data if d.get("uuid") == "boundary")
    assert boundary["parentUuid"] is None
    assert _chain(out)[0] == "boundary"
    assert any(d.get("message", {}).get("content", [{}])[0].get("type") == "tool_result" for d in data
               if isinstance(d.get("message", {}).get("content"), list))


def test_a_placeholder_reply_does_not_forget_the_calls_waiting_for_results() -> None:
    records = claude_code_records(PLACEHOLDER_BEFORE_RESULT)
    session = read_text("".join(lines_of(records)), "claude_code")
    result = session.messages[-1]
    assert (result.role, result.tool_name) == ("tool", "search")  # the call before the placeholder's tool
    assert repair_history(session.messages).messages[-1].tool_name == "search"


def _cc(uid: str, parent: str | None, kind: str, content: object, stamp: str, **extra: object) -> dict[str, object]:
    message: dict[str, object] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = extra.pop("message_id", f"msg_{uid}")
    return {"parentUuid": parent, "isSidechain": False, "type": kind, "message": message, "uuid": uid,
            "timestamp": f"2026-12-01T10:00:{stamp}.000Z", "sessionId": "s", "version": "2.1.1", **extra}


def _use(call_id: str) -> list[dict[str, object]]:
    return [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": "sleep 60"}}]


def _result(call_id: str) -> list[dict[str, object]]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": "ok"}]


def _live_chain(lines: list[str]) -> list[dict[str, object]]:
    """The records Claude Code resumes: from the last main-chain user or assistant record back by parentUuid."""
    records = [json.loads(line) for line in lines if line]
    by_uuid = {r["uuid"]: r for r in records if "uuid" in r}
    node: dict[str, object] | None = [r for r in records if r.get("type") in ("user", "assistant")][-1]
    walk = []
    while node is not None:
        walk.append(node)
        node = by_uuid.get(node.get("parentUuid"))
    return walk[::-1]


def test_parallel_calls_all_resume_after_repair() -> None:
    # Three parallel calls, one answered (its result hangs off its own tool_use line), the session killed.
    records = [
        _cc("u1", None, "user", "run three", "00"),
        _cc("a1", "u1", "assistant", _use("toolu_1"), "01", message_id="msg_1"),
        _cc("a2", "a1", "assistant", _use("toolu_2"), "02", message_id="msg_1"),
        _cc("a3", "a2", "assistant", _use("toolu_3"), "03", message_id="msg_1"),
        _cc("r1", "a1", "user", _result("toolu_1"), "09"),
    ]
    text = "".join(lines_of(records))
    session = read_text(text)
    assert [len(m.tool_calls) for m in session.messages if m.role == "assistant"] == [3]
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["toolu_2", "toolu_3"]
    out = "".join(chunks).split("\n")[:-1]
    chain = _live_chain(out)
    blocks = [b for r in chain for b in r["message"]["content"] if isinstance(b, dict)]  # type: ignore[index]
    assert [(b["type"], b.get("id") or b.get("tool_use_id")) for b in blocks] == [
        ("tool_use", "toolu_1"), ("tool_use", "toolu_2"), ("tool_use", "toolu_3"),
        ("tool_result", "toolu_1"), ("tool_result", "toolu_2"), ("tool_result", "toolu_3")]
    stamps = [str(r["timestamp"]) for r in chain]
    assert stamps == sorted(stamps)  # an inserted result is later than the line before it (2.1.1 drops it else)
    assert stamps[-2:] == ["2026-12-01T10:00:09.001Z", "2026-12-01T10:00:09.002Z"]
    assert out[:4] == text.split("\n")[:4]  # the calls' lines are untouched
    assert not read_text("\n".join(out) + "\n").repaired(None)[0].changed


def test_a_healthy_tree_is_left_as_claude_code_wrote_it() -> None:
    records = [
        _cc("u1", None, "user", "two", "00"),
        _cc("a1", "u1", "assistant", _use("toolu_1"), "01", message_id="m"),
        _cc("a2", "a1", "assistant", _use("toolu_2"), "02", message_id="m"),
        _cc("r1", "a1", "user", _result("toolu_1"), "03"),
        _cc("r2", "a2", "user", _result("toolu_2"), "04"),
        _cc("a3", "r2", "assistant", [{"type": "text", "text": "done"}], "05"),
    ]
    text = "".join(lines_of(records))
    session = read_text(text)
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == text


def test_the_chain_from_the_leaf_not_file_order_across_a_compaction() -> None:
    # An abandoned branch and what came before the compaction are not sent: a result whose call is behind the
    # boundary is an orphan in what Claude Code resumes.
    boundary: dict[str, object] = {"parentUuid": None, "logicalParentUuid": "a1", "isSidechain": False,
                "type": "system",
                "subtype": "compact_boundary", "uuid": "cb", "timestamp": "2026-12-01T10:00:05.000Z",
                "sessionId": "s", "compactMetadata": {"trigger": "auto"}, "someNewField": 1}
    records: list[dict[str, Any]] = [
        _cc("u1", None, "user", "start", "00"),
        _cc("a1", "u1", "assistant", _use("toolu_old"), "01"),
        _cc("x1", "u1", "user", "an abandoned edit", "02"),
        boundary,
        _cc("s1", "cb", "user", "summary of before", "06", isCompactSummary=True),
        _cc("r1", "s1", "user", _result("toolu_old"), "07"),
        {"type": "mode", "mode": "normal", "sessionId": "s"},
        _cc("u2", "r1", "user", "go on", "08"),
    ]
    text = "".join(lines_of(records))
    session = read_text(text)
    assert next(m.content for m in session.messages if m.role == "user") == "summary of before"
    assert session.where[0] == "line 5"
    result, chunks = session.repaired(None)
    assert result.notes == [1] and not result.interrupted  # toolu_old (behind the boundary) is not resumed
    out = "".join(chunks).split("\n")
    original = text.split("\n")
    assert out[:5] == original[:5] and out[6:] == original[6:]  # before the boundary, the mode record: kept
    note = json.loads(out[5])
    assert note["uuid"] == "r1" and note["message"]["content"][0]["type"] == "text"


def test_the_repair_report_names_a_line_that_is_not_a_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chatmend.cli import main

    path = tmp_path / "session.jsonl"
    good = _cc("u1", None, "user", "hi", "00")
    path.write_text("".join(lines_of([good])) + '{"type":"user","uui')
    assert main(["repair", str(path), "--in-place"]) == 0
    out = capsys.readouterr().out
    assert "  warning: line 2: a torn last line (19 bytes: its writer stopped mid-line), invalid JSON" in out
    # left out of the file (the agent's next record then starts a line of its own), kept in the backup
    assert f"  line 2: a torn last line (19 bytes) left out; kept in {path}.bak" in out
    assert path.read_text() == "".join(lines_of([good]))
