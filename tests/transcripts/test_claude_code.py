"""Claude Code transcripts: read the conversation, write repaired records back, keep the rest as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given

from chatmend import ChatMessage, ImagePart, TextPart, repair_history
from chatmend.formats import InputError
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
        ChatMessage(role="assistant", tool_calls=[{"id": "t1", "name": "a"}, {"id": "t2", "name": "b"}]),
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
        ChatMessage(role="assistant", tool_calls=[{"id": "toolu_1", "name": "a"}]),
        ChatMessage(role="tool", tool_call_id="toolu_1", content="one"),
        ChatMessage(role="assistant", tool_calls=[{"id": "toolu_1", "name": "a"}]),
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
    assert session.warnings[1].startswith("line 4: not a record (invalid JSON: ")
    assert [m.role for m in session.messages] == ["user", "assistant"]
    result, chunks = session.repaired(None)
    out = "".join(chunks).split("\n")
    assert [c.id for c in result.interrupted] == ["toolu_1"]
    lines = text.split("\n")
    assert out[:3] == lines[:3] and out[4:] == [lines[3], ""]  # kept verbatim, in place
    assert json.loads(out[3])["message"]["content"][0]["tool_use_id"] == "toolu_1"
    assert "".join(session.write(session.messages)) == text + "\n"


@examples(60)
@given(messy_histories())
@example(PLACEHOLDER_BEFORE_RESULT)
def test_repaired_transcript_reads_back_as_the_repaired_history(history: list[ChatMessage]) -> None:
    records = claude_code_records(history)
    if not any(r.get("type") in ("user", "assistant") for r in records):
        return
    text = "".join(lines_of(records))
    session = read_text(text, "claude_code")
    expected = repair_history(session.messages).messages
    out, messages = _repair_text(text)
    assert messages == expected
    if not expected:
        return
    again = read_text("\n".join(out) + "\n", "claude_code")
    assert normal(again.messages) == normal(expected)
    assert not repair_history(again.messages).changed
    kept = set(text.split("\n")[:-1])
    untouched = [r for r in records if r.get("type") in ("summary", "file-history-snapshot")]
    assert all(json.dumps(r, ensure_ascii=False, separators=(",", ":")) in out for r in untouched)
    assert sum(line in kept for line in out) >= len(untouched)


def test_a_compaction_boundary_keeps_its_null_parent() -> None:
    records = claude_code_records([
        ChatMessage(role="user", content="before"),
        ChatMessage(role="assistant", content="ok"),
    ])
    records.append({"type": "system", "subtype": "compact_boundary", "parentUuid": None,
                    "logicalParentUuid": records[-1]["uuid"], "uuid": "boundary", "isSidechain": False})
    after = claude_code_records([
        ChatMessage(role="user", content="after"),
        ChatMessage(role="assistant", tool_calls=[{"id": "toolu_9", "name": "Bash"}]),
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
