"""Codex CLI session files: read the conversation, write repaired items back, keep the rest byte for byte."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from hypothesis import example, given

from chatmend import ChatMessage, ThinkingPart, repair_history
from chatmend.ids import normalize_tool_id
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
    # Appended at the end: every line before keeps its byte offset (Codex pairs the output by call_id).
    assert out[:-1] == original
    added = json.loads(out[-1])
    assert added == {
        "timestamp": json.loads(original[-1])["timestamp"],
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
            m = replace(m, content=tuple(p for p in m.content if not isinstance(p, ThinkingPart)))
        out.append(m)
    return out


def _fit(call_id: str | None) -> str | None:
    return normalize_tool_id(call_id) if call_id is not None and len(call_id) > 64 else call_id


def _fitted(message: ChatMessage) -> ChatMessage:
    calls = tuple(replace(c, id=_fit(c.id) or c.id) for c in message.tool_calls)
    return replace(message, tool_calls=calls, tool_call_id=_fit(message.tool_call_id))


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
    # A Codex output is a plain string: whether it failed is not written back (is_error reads false); a call id
    # the API refuses as too long is written shortened (the same in its call and its output).
    assert normal(again.messages) == normal([_fitted(replace(m, is_error=False)) for m in expected])
    assert not repair_history(again.messages).changed and not again.problems
    if not (result.renamed or result.notes or result.dropped or session.fixes):
        assert out.startswith(text)  # what repair adds is appended: every line keeps its byte offset
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
    assert out[:-1] == [line.rstrip("\n") for line in lines]
    assert json.loads(out[-1]) == {"type": "function_call_output", "call_id": "call_a",
                                   "output": result.messages[2].content}


def _rollout_0171() -> list[dict[str, object]]:
    """A 0.171-style rollout: an `ordinal` on every line, a `metadata` object on every item; a turn with a
    custom tool call, a local shell call and a web search, cut off while a function call ran."""
    meta = {"turn_id": "t-1"}
    items: list[dict[str, object]] = [
        {"type": "session_meta", "payload": {"id": "s", "cli_version": "0.171.0"}},
        {"type": "turn_context", "payload": {"model": "gpt-5.5-codex", "cwd": "/w"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "go"}], "metadata": meta}},
        {"type": "response_item", "payload": {"type": "custom_tool_call", "call_id": "ctc_1", "name": "apply_patch",
                                              "input": "*** Begin Patch", "metadata": meta}},
        {"type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": "ctc_1",
                                              "output": [{"type": "input_text", "text": "applied"}],
                                              "metadata": meta}},
        {"type": "response_item", "payload": {"type": "local_shell_call", "call_id": "ls_1", "status": "completed",
                                              "action": {"type": "exec", "command": ["ls"]}, "metadata": meta}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "ls_1", "output": "a b",
                                              "metadata": meta}},
        {"type": "response_item", "payload": {"type": "web_search_call", "status": "completed",
                                              "action": {"type": "search", "query": "x"}, "metadata": meta}},
        {"type": "response_item", "payload": {"type": "function_call", "call_id": "call_9", "name": "exec_command",
                                              "arguments": '{"cmd":"sleep 60"}', "metadata": meta}},
        {"type": "event_msg", "payload": {"type": "turn_aborted", "reason": "interrupted"}},
    ]
    records = [{"timestamp": f"2026-11-30T10:00:{n:02d}.000Z", "ordinal": n, **item} for n, item in enumerate(items)]
    for n, record in enumerate(records):  # 0.171 also writes a metadata object on the line
        if record["type"] == "response_item":
            record["metadata"] = {"history_sequence": n, "sampled_through_sequence": 1, "user_input_order": 0}
    return records


def test_what_repair_adds_is_appended_with_the_next_ordinal_and_the_turns_metadata() -> None:
    text = "".join(lines_of(_rollout_0171()))
    session = read_text(text)
    assert session.model == "gpt-5.5-codex"
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [c.name for m in session.messages for c in m.tool_calls] == ["apply_patch", "local_shell", "exec_command"]
    assert session.messages[2].content == "applied"  # a list-shaped custom tool output
    result, chunks = session.repaired(None)
    out = "".join(chunks)
    assert [c.id for c in result.interrupted] == ["call_9"]
    assert out.startswith(text)  # every line before keeps its byte offset
    added = [json.loads(line) for line in out[len(text):].splitlines()]
    assert added == [{
        "timestamp": "2026-11-30T10:00:09.000Z", "ordinal": 10, "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "call_9", "output": result.messages[-1].content,
                    "metadata": {"turn_id": "t-1"}},
        "metadata": {"history_sequence": 9, "sampled_through_sequence": 1},  # the next; the call's own dropped
    }]
    again = read_text(out)
    # (a plain-string output does not say it failed: is_error reads false)
    assert again.messages == [*session.messages, replace(result.messages[-1], is_error=False)]
    assert not again.repaired(None)[0].changed


def test_an_output_after_later_messages_answers_its_call() -> None:
    # Codex pairs by call_id: an output written after the next user message is not an orphan.
    records = _rollout_0171()[:9]
    records.append({"timestamp": "t", "ordinal": 9, "type": "response_item",
                    "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "?"}]}})
    records.append({"timestamp": "t", "ordinal": 10, "type": "response_item",
                    "payload": {"type": "function_call_output", "call_id": "call_9", "output": "late"}})
    session = read_text("".join(lines_of(records)))
    assert [(m.role, m.tool_call_id) for m in session.messages][-3:] == [
        ("assistant", None), ("tool", "call_9"), ("user", None)]
    assert session.where[-2] == "line 11"
    assert not session.repaired(None)[0].changed


def test_a_compaction_restarts_the_history_with_its_replacement() -> None:
    records = _rollout_0171()[:9]
    replacement = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "summary"}]},
        {"type": "function_call", "call_id": "call_r", "name": "exec_command", "arguments": "{}"},
    ]
    records.append({"timestamp": "t", "ordinal": 9, "type": "compacted",
                    "payload": {"message": "", "replacement_history": replacement}})
    records.append({"timestamp": "t", "ordinal": 10, "type": "response_item",
                    "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "on"}]}})
    text = "".join(lines_of(records))
    session = read_text(text)
    # the calls before the compaction (call_9 among them) are no longer sent: only its replacement and after
    assert [m.role for m in session.messages] == ["user", "assistant", "user"]
    assert session.messages[1].tool_calls[0].id == "call_r" and session.where[0] == "line 10"
    result, chunks = session.repaired(None)
    out = "".join(chunks)
    assert [c.id for c in result.interrupted] == ["call_r"]
    assert out.startswith(text)
    added = json.loads(out[len(text):])
    assert (added["ordinal"], added["payload"]["call_id"]) == (11, "call_r")
    assert not read_text(out).repaired(None)[0].changed


def test_a_rollout_without_ordinals_gets_none() -> None:
    records = [{k: v for k, v in r.items() if k != "ordinal"} for r in _rollout_0171()]
    session = read_text("".join(lines_of(records)))
    _, chunks = session.repaired(None)
    last = json.loads("".join(chunks).splitlines()[-1])
    assert "ordinal" not in last and last["payload"]["call_id"] == "call_9"
