"""Claude Code records keep only what reading looks at (`claude_code.kept`): reading, checking and repairing a
transcript give exactly what a reading that keeps every line's whole JSON gives, and a repaired record written
anew keeps the fields reading dropped (`toolUseResult`, `usage`, file snapshots)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage
from chatmend.exceptions import InputError
from chatmend.files.session import Session
from chatmend.transcripts import claude_code
from chatmend.transcripts._records import parse_records
from tests.strategies import examples, messy_histories
from tests.transcripts.helpers import REAL, claude_code_records, lines_of, real_claude_transcripts, split_lines


def _whole(lines: list[str]) -> Session:
    """The reading that keeps every record's whole JSON, as chatmend read transcripts before `kept`."""
    warnings: list[str] = []
    records = parse_records(lines, what="one Claude Code transcript record a line", warnings=warnings)
    return claude_code.ClaudeCode(records).session(warnings)


def _outcome(read: Callable[[list[str]], Session], lines: list[str]) -> tuple[Any, ...]:
    """All that check and repair report of a transcript, and the repaired file's text (or the error that
    refuses it)."""
    try:
        session = read(lines)
    except InputError as exc:
        return ("refused", str(exc))
    result, chunks = session.repaired(None)
    text = "".join(chunks)
    return (session.messages, session.where, session.problems, session.warnings, session.model,
            result.messages, result.changed, text, session.fixes)


def _assert_same(lines: list[str]) -> None:
    assert _outcome(claude_code.read, lines) == _outcome(_whole, lines)


def _with_bulk(records: list[dict[str, Any]], data: st.DataObject) -> list[dict[str, Any]]:
    """The records as Claude Code writes them: a result's `toolUseResult`, a reply's `usage`, and some results
    hanging off their own call's record (parallel calls) rather than the record before."""
    out: list[dict[str, Any]] = []
    last_use: str | None = None
    for record in records:
        record = json.loads(json.dumps(record))
        message = record.get("message")
        if record.get("type") == "assistant":
            message["usage"] = {"input_tokens": 4, "output_tokens": data.draw(st.integers(0, 9))}
            if any(b.get("type") == "tool_use" for b in message["content"] if isinstance(b, dict)):
                last_use = record["uuid"]
        elif record.get("type") == "user" and isinstance(message.get("content"), list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in message["content"]):
            record["toolUseResult"] = {"stdout": data.draw(st.text(max_size=20)), "interrupted": False}
            if last_use is not None and data.draw(st.booleans()):
                record["parentUuid"] = last_use
        out.append(record)
    return out


@examples(60)
@given(messy_histories(), st.data())
def test_reading_what_is_kept_checks_and_repairs_as_reading_everything(history: list[ChatMessage],
                                                                       data: st.DataObject) -> None:
    _assert_same(lines_of(_with_bulk(claude_code_records(history), data)))


def test_a_record_written_anew_keeps_the_fields_reading_dropped() -> None:
    records: list[dict[str, Any]] = [
        {"parentUuid": None, "isSidechain": False, "type": "user", "uuid": "u1", "sessionId": "s",
         "message": {"role": "user", "content": "go"}, "timestamp": "2026-12-01T10:00:00.000Z"},
        {"parentUuid": "u1", "isSidechain": False, "type": "assistant", "uuid": "a1", "sessionId": "s",
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 4},
                     "content": [{"type": "tool_use", "id": "", "name": "Bash", "input": {}}]},
         "timestamp": "2026-12-01T10:00:01.000Z"},
        {"parentUuid": "a1", "isSidechain": False, "type": "user", "uuid": "r1", "sessionId": "s",
         "toolUseResult": {"stdout": "ok"}, "timestamp": "2026-12-01T10:00:02.000Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "", "content": "ok"}]}},
    ]
    lines = lines_of(records)
    session = claude_code.read(lines)
    _, chunks = session.repaired(None)
    written = [json.loads(line) for line in split_lines("".join(chunks))]
    assert written[1]["message"]["usage"] == {"input_tokens": 4}  # the call renamed (R5), its usage kept
    assert written[1]["message"]["content"][0]["id"] != ""
    assert written[2]["toolUseResult"] == {"stdout": "ok"}
    assert written[2]["message"]["content"][0]["tool_use_id"] == written[1]["message"]["content"][0]["id"]
    _assert_same(lines)



def _deeper(frames: int, run: Callable[[], Any]) -> Any:
    return _deeper(frames - 1, run) if frames else run()


def test_a_record_too_deep_to_read_again_where_it_is_written_is_an_input_error_at_its_line() -> None:
    # json.loads reads as deep as the stack left allows: a line read at first may not be when written anew
    depth = next(d for d in range(2000, 0, -10) if _reads("[" * d + "]" * d))  # as deep as it reads from here
    records: list[dict[str, Any]] = [
        {"parentUuid": None, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}},
        {"parentUuid": "u1", "type": "assistant", "uuid": "a1", "extra": "deep",
         "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "tool_use", "id": "", "name": "Bash",
                                                                        "input": {}}]}}]
    lines = [line.replace('"deep"', "[" * (depth - 40) + "]" * (depth - 40)) for line in lines_of(records)]
    session = claude_code.read(lines)  # read with room to spare
    with pytest.raises(InputError, match="nested too deeply") as caught:
        _deeper(300, lambda: "".join(session.repaired(None)[1]))
    assert caught.value.line == 2


def _reads(text: str) -> bool:
    try:
        json.loads(text)
    except RecursionError:
        return False
    return True


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-world is absent")
@pytest.mark.parametrize("name", real_claude_transcripts())
def test_real_transcripts_read_as_reading_everything(name: str) -> None:
    _assert_same((REAL / name).read_text(encoding="utf-8").splitlines(keepends=True))
