"""kimi-cli context files (`~/.kimi/sessions/<hash>/<id>/context.jsonl`): every message line read in order as
kimi-cli restores them, its own `_usage` / `_checkpoint` / `_system_prompt` lines kept, repaired with every
other line byte for byte."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, TextPart, ThinkingPart, repair_history
from chatmend.answer_order import keep_answer_order
from chatmend.cli import main
from chatmend.exceptions import InputError
from chatmend.transcripts import kimi_cli
from tests.strategies import examples, messy_histories, valid_histories
from tests.transcripts.helpers import lines_of, normal, read_text


def context_records(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """A neutral history as kimi-cli writes its context: a system prompt line, then one kosong Message a line,
    with a `_checkpoint` before each user turn and a `_usage` after each reply."""
    records: list[dict[str, Any]] = [{"role": "_system_prompt", "content": "You are Kimi CLI."}]
    checkpoint = 0
    for m in history:
        text = m.content if isinstance(m.content, str) else "".join(
            p.text for p in m.content if isinstance(p, TextPart))
        if m.role in ("user", "system"):
            records.append({"role": "_checkpoint", "id": checkpoint})
            checkpoint += 1
            records.append({"role": "user", "content": [{"type": "text", "text": text}]})
        elif m.role == "tool":
            records.append({"role": "tool", "content": [{"type": "text", "text": text}],
                            "tool_call_id": m.tool_call_id})
        else:
            parts: list[dict[str, Any]] = []
            for p in (m.content,) if isinstance(m.content, str) else m.content:
                if isinstance(p, ThinkingPart) and not p.redacted:
                    parts.append({"type": "think", "think": p.text})
                elif isinstance(p, TextPart) or (isinstance(p, str) and p):
                    parts.append({"type": "text", "text": p if isinstance(p, str) else p.text})
            record: dict[str, Any] = {"role": "assistant", "content": parts}
            if m.tool_calls:
                record["tool_calls"] = [{"type": "function", "id": c.id, "function": {
                    "name": c.name, "arguments": c.arguments if isinstance(c.arguments, str)
                    else json.dumps(c.arguments)}} for c in m.tool_calls]
            records.append(record)
            records.append({"role": "_usage", "token_count": 100 * len(records)})
    return records


def _killed() -> list[dict[str, Any]]:
    return [
        {"role": "_system_prompt", "content": "You are Kimi CLI."},
        {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": "count the files"},
        {"role": "assistant", "content": [{"type": "think", "think": "two dirs"}, {"type": "text", "text": "On it."}],
         "tool_calls": [
             {"type": "function", "id": "Shell:0", "function": {"name": "Shell", "arguments": '{"c":"ls a"}'}},
             {"type": "function", "id": "Shell:1", "function": {"name": "Shell", "arguments": '{"c":"ls b"}'}}]},
        {"role": "tool", "content": [{"type": "text", "text": "3"}], "tool_call_id": "Shell:0"},
        {"role": "_usage", "token_count": 2048},
        {"role": "_checkpoint", "id": 1},
        {"role": "user", "content": [{"type": "text", "text": "and?"}]},
    ]


def test_a_call_killed_mid_run_is_answered_after_the_other_result() -> None:
    text = "".join(lines_of(_killed()))
    session = read_text(text)
    assert (session.format, session.provider) == ("kimi_cli", "kimi")
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        ("user", None), ("assistant", None), ("tool", "Shell:0"), ("user", None)]
    assert isinstance(session.messages[1].content, tuple) and isinstance(session.messages[1].content[0], ThinkingPart)
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["Shell:1"]
    out = "".join(chunks).split("\n")
    original = text.split("\n")
    assert out[:5] == original[:5] and out[6:] == original[5:]
    added = json.loads(out[5])
    assert added["role"] == "tool" and added["tool_call_id"] == "Shell:1" and added["content"][0]["type"] == "text"
    assert not read_text("\n".join(out)).repaired(None)[0].changed


def test_repeated_ids_are_renamed_in_the_call_and_its_result_only() -> None:
    records = _killed()[:5]
    records += [{"role": "tool", "content": "4", "tool_call_id": "Shell:1"},
                {"role": "user", "content": "again"}, {**records[3]},
                {"role": "tool", "content": "5", "tool_call_id": "Shell:0"},
                {"role": "tool", "content": "6", "tool_call_id": "Shell:1"}]
    text = "".join(lines_of(records))
    result, chunks = read_text(text).repaired(None)
    assert result.renamed
    out = [json.loads(line) for line in "".join(chunks).split("\n") if line]
    second = out[7]
    assert [c["id"] for c in second["tool_calls"]] != ["Shell:0", "Shell:1"]
    assert second["content"] == records[7]["content"]  # the reply's other fields as they were
    assert [r["tool_call_id"] for r in out[8:]] == [c["id"] for c in second["tool_calls"]]


@examples(50)
@given(valid_histories())
def test_a_valid_context_is_written_back_byte_for_byte(history: list[ChatMessage]) -> None:
    text = "".join(lines_of(context_records(history)))
    try:
        session = read_text(text)
    except InputError as exc:
        assert "no conversation messages" in exc.message
        return
    assert session.format == "kimi_cli"
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    if not result.changed:
        assert "".join(chunks) == text


@examples(80)
@given(messy_histories())
def test_a_repaired_context_reads_back_as_the_repaired_history_keeping_kimis_own_lines(
        history: list[ChatMessage]) -> None:
    records = context_records(history)
    text = "".join(lines_of(records))
    try:
        session = read_text(text, "kimi_cli")
    except InputError as exc:
        assert "no conversation messages" in exc.message
        return
    expected = keep_answer_order(session.messages, repair_history(session.messages))  # as a store repair writes
    out = "".join(session.repaired(None)[1])
    if not expected.messages:
        return
    again = read_text(out, "kimi_cli")
    # a kosong tool message has no error flag (nor has the Kimi API's): the synthetic result's text says it
    unflagged = [replace(m, is_error=False) for m in expected.messages]
    assert normal(again.messages) == normal(unflagged)
    assert not keep_answer_order(again.messages, repair_history(again.messages)).changed
    own = [line for line, r in zip(text.split("\n"), records) if r["role"].startswith("_")]
    after = iter(out.split("\n"))
    assert all(any(line == a for a in after) for line in own)  # kimi-cli's own lines, in order
    if not expected.changed:
        assert out == text


def test_bad_lines_are_errors_at_their_line() -> None:
    records = _killed()
    records[3] = {"role": "assistant", "content": "x", "tool_calls": [{"id": "a", "function": {"name": "f",
                                                                                               "arguments": 3}}]}
    with pytest.raises(InputError) as caught:
        read_text("".join(lines_of(records)))
    assert caught.value.line == 4 and "tool_calls[0].function.arguments: expected a string" in caught.value.message
    records[3] = {"role": "robot", "content": "x"}
    with pytest.raises(InputError) as caught:
        read_text("".join(lines_of(records)))
    assert caught.value.line == 4 and "role: expected 'user', 'assistant', 'tool'" in caught.value.message


def test_cli_repairs_a_session_in_place_and_a_doctor_finds_it(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / ".kimi" / "sessions" / "0f3e9a" / "2b7c-41" / "context.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(lines_of(_killed())), encoding="utf-8")
    original = path.read_bytes()
    assert kimi_cli.default_locations({"HOME": str(tmp_path)}) == [tmp_path / ".kimi" / "sessions"]
    assert kimi_cli.default_locations({"HOME": "/h", "KIMI_SHARE_DIR": "/s"}) == [Path("/s/sessions")]
    assert kimi_cli.is_session_file(path) and kimi_cli.is_session_file(path.parent.parent / "9a8b.jsonl")
    assert not kimi_cli.is_session_file(path.with_name("wire.jsonl"))
    assert kimi_cli.resume_command(path) == "kimi --session 2b7c-41"
    assert main(["check", str(path)]) == 1
    assert "Shell:1" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    capsys.readouterr()
    assert main(["repair", "--in-place", str(path)]) == 0
    assert path.with_name("context.jsonl.bak").read_bytes() == original
    assert main(["check", str(path)]) == 0
