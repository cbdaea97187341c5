"""pydantic-ai message histories saved as JSON (`ModelMessagesTypeAdapter.dump_json`): made here with
pydantic-ai itself, repaired with every message repair leaves alone kept character for character, and the repaired
file loaded back by `ModelMessagesTypeAdapter.validate_json`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai import ModelMessagesTypeAdapter
from pydantic_ai import messages as pa

from chatmend import ChatMessage, ImagePart, NativePart, TextPart, ThinkingPart, repair_history
from chatmend.answer_order import keep_answer_order
from chatmend.cli import main
from chatmend.exceptions import InputError
from chatmend.formats import read_lines
from chatmend.transcripts import pydantic_ai as store
from chatmend.transcripts._document import list_text
from tests.strategies import examples, messy_histories, valid_histories
from tests.transcripts.helpers import normal

WHEN = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)


def _text(content: str | tuple[Any, ...]) -> str:
    return content if isinstance(content, str) else "".join(p.text for p in content if isinstance(p, TextPart))


def model_messages(history: Sequence[ChatMessage]) -> list[pa.ModelMessage]:
    """A neutral history as pydantic-ai's own messages: a request for each user, system and tool message, a
    response for each reply."""
    out: list[pa.ModelMessage] = []
    for m in history:
        if m.role == "user":
            if isinstance(m.content, str):
                content: Any = m.content
            else:
                content = [p.text if isinstance(p, TextPart) else pa.ImageUrl(url=p.url) if p.url else "[image]"
                           for p in m.content if isinstance(p, (TextPart, ImagePart))]
            out.append(pa.ModelRequest(parts=[pa.UserPromptPart(content=content, timestamp=WHEN)]))
        elif m.role == "system":
            out.append(pa.ModelRequest(parts=[pa.SystemPromptPart(content=_text(m.content), timestamp=WHEN)]))
        elif m.role == "tool":
            out.append(pa.ModelRequest(parts=[pa.ToolReturnPart(
                tool_name=m.tool_name or "tool", content=_text(m.content), tool_call_id=m.tool_call_id or "",
                outcome="failed" if m.is_error else "success", timestamp=WHEN)]))
        else:
            parts: list[Any] = []
            for p in (m.content,) if isinstance(m.content, str) else m.content:
                if isinstance(p, str):
                    if p:
                        parts.append(pa.TextPart(content=p))
                elif isinstance(p, TextPart):
                    parts.append(pa.TextPart(content=p.text))
                elif isinstance(p, ThinkingPart) and not p.redacted:
                    parts.append(pa.ThinkingPart(content=p.text, signature=p.signature))
            parts += [pa.ToolCallPart(tool_name=c.name, args=c.arguments, tool_call_id=c.id) for c in m.tool_calls]
            out.append(pa.ModelResponse(parts=parts, model_name="test-model", timestamp=WHEN))
    return out


def dumped(messages: list[pa.ModelMessage], indent: int | None = None) -> str:
    return ModelMessagesTypeAdapter.dump_json(messages, indent=indent).decode()


def read_doc(text: str, fmt: str = "auto") -> Any:
    return read_lines(text.splitlines(keepends=True), fmt)


def _items(text: str) -> list[str]:
    found = list_text(text, None)
    return [text[a:b] for a, b in found.spans]


def _killed_mid_run() -> list[pa.ModelMessage]:
    return [
        pa.ModelRequest(parts=[pa.SystemPromptPart(content="be brief", timestamp=WHEN),
                               pa.UserPromptPart(content="weather in Paris and Rome?", timestamp=WHEN)],
                        instructions="You are a weather bot."),
        pa.ModelResponse(parts=[pa.TextPart(content="Checking both."),
                                pa.ToolCallPart(tool_name="weather", args={"city": "Paris"}, tool_call_id="c1"),
                                pa.ToolCallPart(tool_name="weather", args='{"city": "Rome"}', tool_call_id="c2")],
                         model_name="gpt-test", timestamp=WHEN),
        pa.ModelRequest(parts=[pa.ToolReturnPart(tool_name="weather", content="sunny", tool_call_id="c1",
                                                 timestamp=WHEN)], instructions="You are a weather bot."),
    ]


def test_a_call_killed_mid_run_is_answered_in_the_request_holding_the_other_result() -> None:
    text = dumped(_killed_mid_run())
    session = read_doc(text)
    assert (session.format, session.provider, session.model) == ("pydantic_ai", None, "gpt-test")
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        ("system", None), ("user", None), ("assistant", None), ("tool", "c1")]
    assert session.messages[2].tool_calls[1].arguments == {"city": "Rome"}  # the file keeps its text
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["c2"]
    out = "".join(chunks)
    assert _items(out)[:2] == _items(text)[:2]
    loaded = ModelMessagesTypeAdapter.validate_json(out)
    request = loaded[2]
    assert isinstance(request, pa.ModelRequest) and request.instructions == "You are a weather bot."
    first, second = request.parts
    assert isinstance(first, pa.ToolReturnPart) and first.tool_call_id == "c1" and first.content == "sunny"
    assert isinstance(second, pa.ToolReturnPart) and second.tool_call_id == "c2"
    assert second.outcome == "interrupted" and second.metadata == {store.SYNTHESIZED: True}
    assert second.tool_name == "weather" and second.timestamp == WHEN
    assert not read_doc(out).repaired(None)[0].changed


def test_a_response_with_no_results_gets_a_new_request_after_it() -> None:
    messages = _killed_mid_run()[:2]
    out = "".join(read_doc(dumped(messages, indent=2)).repaired(None)[1])
    loaded = ModelMessagesTypeAdapter.validate_json(out)
    assert len(loaded) == 3 and loaded[:2] == messages
    request = loaded[2]
    assert isinstance(request, pa.ModelRequest) and request.instructions == "You are a weather bot."
    assert [p.tool_call_id for p in request.parts if isinstance(p, pa.ToolReturnPart)] == ["c1", "c2"]
    assert out.startswith("[\n  {\n    \"parts\": [")  # indented as the file was


def test_an_orphan_return_becomes_a_user_prompt_and_native_parts_are_kept() -> None:
    native = pa.NativeToolCallPart(tool_name="web_search", args={"q": "x"}, tool_call_id="ws_1",
                                   provider_name="openai")
    messages: list[pa.ModelMessage] = [
        pa.ModelRequest(parts=[pa.UserPromptPart(content="hi", timestamp=WHEN)]),
        pa.ModelResponse(parts=[native], model_name="gpt-test", timestamp=WHEN),
        pa.ModelRequest(parts=[pa.ToolReturnPart(tool_name="read_file", content={"lines": 3}, tool_call_id="gone",
                                                 timestamp=WHEN)]),
    ]
    text = dumped(messages)
    session = read_doc(text)
    reply = session.messages[1]
    assert isinstance(reply.content, tuple) and isinstance(reply.content[0], NativePart)  # not a placeholder
    result, chunks = session.repaired(None)
    assert len(result.notes) == 1
    out = "".join(chunks)
    loaded = ModelMessagesTypeAdapter.validate_json(out)
    assert loaded[:2] == messages[:2]
    note = loaded[2].parts[0]
    assert isinstance(note, pa.UserPromptPart) and '{"lines": 3}' in str(note.content) and note.timestamp == WHEN


def test_a_retry_prompt_naming_its_tool_answers_the_call() -> None:
    messages = _killed_mid_run()[:2]
    value = json.loads(dumped(messages))
    value.append({"parts": [{"content": "city must be a capital", "tool_name": "weather", "tool_call_id": "c1",
                             "timestamp": "2026-12-01T10:00:00Z", "part_kind": "retry-prompt"},
                            {"tool_name": "weather", "content": "rain", "tool_call_id": "c2",
                             "timestamp": "2026-12-01T10:00:00Z", "part_kind": "tool-return"}],
                  "kind": "request"})
    text = json.dumps(value)
    session = read_doc(text)
    assert [(m.role, m.is_error) for m in session.messages[-2:]] == [("tool", True), ("tool", False)]
    result, chunks = session.repaired(None)
    assert not result.changed and "".join(chunks) == text


@examples(50)
@given(valid_histories(), st.sampled_from([None, 2]))
def test_a_valid_history_is_written_back_character_for_character(history: list[ChatMessage],
                                                                 indent: int | None) -> None:
    text = dumped(model_messages(history), indent)
    session = read_doc(text)
    assert session.format == "pydantic_ai"
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    if not result.changed:
        assert "".join(chunks) == text


@examples(60)
@given(messy_histories())
def test_a_repaired_history_loads_in_pydantic_ai_and_reads_back_as_the_repaired_history(
        history: list[ChatMessage]) -> None:
    messages = model_messages(history)
    if not messages:
        return
    text = dumped(messages)
    session = read_doc(text, "pydantic_ai")
    expected = keep_answer_order(session.messages, repair_history(session.messages))  # as a store repair writes
    out = "".join(session.repaired(None)[1])
    loaded = ModelMessagesTypeAdapter.validate_json(out)  # pydantic-ai loads what chatmend wrote
    if not expected.messages:
        return
    again = read_doc(out, "pydantic_ai")
    assert normal(again.messages) == normal(expected.messages)
    assert not keep_answer_order(again.messages, repair_history(again.messages)).changed
    kept = [t for t, m in zip(_items(text), messages) if isinstance(m, pa.ModelRequest)
            and isinstance(m.parts[0], pa.UserPromptPart)]
    after = iter(_items(out))
    assert all(any(t == a for a in after) for t in kept)  # user prompts are never rewritten, and keep their order
    assert len(loaded) >= len(kept)
    if not expected.changed:
        assert out == text


def test_bad_parts_are_errors_at_their_line() -> None:
    text = ('[\n {"parts": [], "kind": "request"},\n {"kind": "response",\n  "parts": [{"part_kind": "tool-call", '
            '"tool_name": "f", "args": 3, "tool_call_id": "a"}]}\n]')
    with pytest.raises(InputError) as caught:
        read_doc(text, "pydantic_ai")
    assert caught.value.line == 3 and "parts[0].args: expected an object or a JSON string" in caught.value.message
    with pytest.raises(InputError) as caught:
        read_doc('[{"parts": "x", "kind": "request"}]', "pydantic_ai")
    assert "[0].parts: expected a list of parts" in caught.value.message
    with pytest.raises(InputError, match="expected a pydantic-ai message history"):
        read_doc('{"a": 1}', "pydantic_ai")


def test_cli_check_show_convert_and_repair_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history.json"
    path.write_text(dumped(_killed_mid_run()), encoding="utf-8")
    original = path.read_bytes()
    assert store.is_session_file(path) and not store.is_session_file(tmp_path / "missing.json")
    assert main(["check", str(path)]) == 1
    assert "c2" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    assert "pydantic_ai" in capsys.readouterr().out
    assert main(["convert", str(path), "--to", "anthropic", "--model", "claude-x", "-o", str(tmp_path / "b.json")]) == 0
    body = json.loads((tmp_path / "b.json").read_text())
    assert body["system"] and body["messages"][-1]["content"][-1]["tool_use_id"] == "c2"
    assert main(["repair", "--in-place", str(path)]) == 0
    assert (tmp_path / "history.json.bak").read_bytes() == original
    ModelMessagesTypeAdapter.validate_json(path.read_bytes())
    assert main(["check", str(path)]) == 0
    assert store.default_locations() == [] and "validate_json" in store.resume_command(path)
