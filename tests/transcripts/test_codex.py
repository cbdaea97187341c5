"""Codex CLI session files: read the conversation, write repaired items back, keep the rest byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given

from chatmend import ChatMessage, ThinkingPart, repair_history
from tests.strategies import examples, messy_histories
from tests.transcripts.helpers import PLACEHOLDER_BEFORE_RESULT, codex_records, lines_of, normal, read_text

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sessions" / "codex_rollout.jsonl"


def test_reads_calls_outputs_and_the_model() -> None:
    session = read_text(SAMPLE.read_text())
    assert (session.format, session.provider, session.model) == ("codex", "openai_responses", "gpt-5-codex")
    roles = [m.role for m in session.messages]
    assert roles == ["user", "user", "assistant", "tool", "assistant", "user"]
    shell, patch = session.messages[2].tool_calls[0], session.messages[4].tool_calls[0]
    assert (shell.name, shell.arguments) == ("shell", {"command": ["rg", "-n", "users/me", "src", "tests"]})
    assert patch.name == "apply_patch"
    assert isinstance(patch.arguments, str) and patch.arguments.startswith("*** Begin Patch")


def test_interrupted_custom_call_gets_its_own_kind_of_output() -> None:
    original = SAMPLE.read_text().split("\n")[:-1]
    session = read_text(SAMPLE.read_text())
    result, chunks = session.repaired(None)
    out = "".join(chunks).split("\n")[:-1]
    assert [c.id for c in result.interrupted] == ["call_Fh3Wc9TqL2vN8xPz6mRb0KdY"]
    assert out[:9] == original[:9] and out[10:] == original[9:]
    added = json.loads(out[9])
    assert added == {
        "timestamp": "2026-02-11T16:02:21.430Z",
        "type": "response_item",
        "payload": {
            "type": "custom_tool_call_output",
            "call_id": "call_Fh3Wc9TqL2vN8xPz6mRb0KdY",
            "output": "Interrupted: the call to apply_patch was cut off before it returned a result. "
            "The tool may have partly run: check its effects before running it again.",
        },
    }


def test_failed_output_object_reads_as_an_error() -> None:
    lines = lines_of(
        [
            {"timestamp": "t", "type": "session_meta", "payload": {"id": "s"}},
            {
                "timestamp": "t",
                "type": "response_item",
                "payload": {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c"},
            },
            {
                "timestamp": "t",
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": "c",
                    "output": {"content": "boom", "success": False},
                },
            },
        ]
    )
    tool = read_text("".join(lines)).messages[1]
    assert (tool.role, tool.content, tool.is_error, tool.tool_name) == ("tool", "boom", True, "shell")


def _no_thinking(history: list[ChatMessage]) -> list[ChatMessage]:
    out = []
    for m in history:
        if isinstance(m.content, tuple):
            m = m.model_copy(
                update={"content": tuple(p for p in m.content if not isinstance(p, ThinkingPart))}
            )
        out.append(m)
    return out


@examples(60)
@given(messy_histories())
@example(PLACEHOLDER_BEFORE_RESULT)
def test_repaired_rollout_reads_back_as_the_repaired_history(history: list[ChatMessage]) -> None:
    records = codex_records(_no_thinking(history))
    if len(records) == 1:
        return
    text = "".join(lines_of(records))
    session = read_text(text, "codex")
    expected = repair_history(session.messages).messages
    result, chunks = session.repaired(None)
    assert result.messages == expected
    out = "".join(chunks)
    if not expected:
        return
    again = read_text(out, "codex")
    # A Codex output is a plain string: whether it failed is not written back (is_error reads false).
    assert normal(again.messages) == normal([m.model_copy(update={"is_error": False}) for m in expected])
    assert not repair_history(again.messages).changed
    events = [line for line in text.split("\n")[:-1] if '"event_msg"' in line or '"session_meta"' in line]
    assert [
        line for line in out.split("\n")[:-1] if '"event_msg"' in line or '"session_meta"' in line
    ] == events


def test_rollouts_before_the_payload_envelope() -> None:
    lines = lines_of([
        {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "timestamp": "2025-07-01T10:00:00.000Z",
         "instructions": None, "git": {"branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
        {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}', "call_id": "call_a"},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello?"}]},
    ])
    session = read_text("".join(lines))
    assert session.format == "codex"
    assert [m.role for m in session.messages] == ["user", "assistant", "user"]
    result, chunks = session.repaired(None)
    out = "".join(chunks).split("\n")[:-1]
    assert [c.id for c in result.interrupted] == ["call_a"]
    assert out[:4] == [line.rstrip("\n") for line in lines[:4]]
    assert json.loads(out[4]) == {"type": "function_call_output", "call_id": "call_a",
                                  "output": result.messages[2].content}
    assert out[5:] == [line.rstrip("\n") for line in lines[4:]]
