"""`convert` keeps a call's arguments text byte for byte wherever the target takes a string (issue #43 item 6), and
a history read from compact arguments still equals the one written."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, ToolCall, providers
from chatmend.providers.base import arguments_text

SPACED = '{"city": "Rome", "days": [1, 2]}'
"""Arguments text as a client wrote it, not as chatmend's compact dump writes it."""
TEXT_TARGETS = ["openai_chat", "openai_responses", "kimi", "mistral", "deepseek", "xai", "groq", "openrouter"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "chatmend", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def chat_body(arguments: str) -> dict[str, Any]:
    return {"model": "gpt-4.1", "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]}


def responses_body(arguments: str) -> dict[str, Any]:
    return {"model": "gpt-4.1", "input": [
        {"type": "message", "role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": arguments},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]}


def written_arguments(body: dict[str, Any]) -> list[str]:
    """Every call's arguments text in a Chat-shaped or Responses body."""
    if "input" in body:
        return [i["arguments"] for i in body["input"] if i.get("type") == "function_call"]
    return [c["function"]["arguments"] for m in body["messages"] for c in m.get("tool_calls") or []]


@pytest.mark.parametrize("source", [chat_body, responses_body])
@pytest.mark.parametrize("target", TEXT_TARGETS)
def test_convert_keeps_the_arguments_text_byte_for_byte(tmp_path: Path, source: Any, target: str) -> None:
    (tmp_path / "in.json").write_text(json.dumps(source(SPACED)), encoding="utf-8")
    done = run("convert", "--to", target, "--model", "m-1", "in.json", "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert written_arguments(json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))) == [SPACED]


def test_convert_to_the_same_provider_leaves_the_body_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "in.json").write_text(json.dumps(chat_body(SPACED)), encoding="utf-8")
    done = run("convert", "--to", "openai_chat", "in.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == chat_body(SPACED)


def test_from_request_keeps_the_text_only_where_the_writer_would_write_other_text() -> None:
    for name, body in (("openai_chat", chat_body), ("openai_responses", responses_body)):
        adapter = providers.get(name)
        spaced = [c for m in adapter.from_request(body(SPACED)) for c in m.tool_calls]
        compact = [c for m in adapter.from_request(body('{"city":"Rome"}')) for c in m.tool_calls]
        assert [c.raw_arguments for c in spaced] == [SPACED]
        assert spaced[0].arguments == {"city": "Rome", "days": [1, 2]}
        assert compact == [ToolCall(id="call_1", name="get_weather", arguments={"city": "Rome"})]


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=8)


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=4), st.sampled_from([None, 1, 2]),
       st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]), st.booleans(),
       st.sampled_from(["openai_chat", "openai_responses", "kimi", "mistral"]))
def test_any_arguments_text_survives_a_round_trip_and_a_compact_one_reads_as_written(
        arguments: dict[str, Any], indent: int | None, separators: tuple[str, str], ascii_only: bool,
        name: str) -> None:
    """Whatever the text's layout, the body written from the body read holds it byte for byte; text in the
    writer's own layout reads as the history without `raw_arguments` (equality with what was written holds)."""
    text = json.dumps(arguments, indent=indent, separators=separators, ensure_ascii=ascii_only)
    adapter = providers.get(name)
    if name == "openai_responses":
        body = responses_body(text)
    else:
        body = chat_body(text)
        body["messages"][1]["tool_calls"][0]["id"] = "abcdefghi"  # an id Mistral takes
        body["messages"][2]["tool_call_id"] = "abcdefghi"
    history = adapter.from_request(body)
    assert written_arguments(adapter.to_request(history, model="m-1")) == [text]
    call = history[1].tool_calls[0]
    assert call.arguments == arguments
    assert call.raw_arguments == (None if text == arguments_text(arguments) else text)
    written = adapter.to_request([ChatMessage(role="user", content="Weather?"),
                                  ChatMessage(role="assistant", tool_calls=(replace(call, raw_arguments=None),)),
                                  ChatMessage(role="tool", tool_call_id=call.id, content="sunny")], model="m-1")
    read_back = [c for m in adapter.from_request(written) for c in m.tool_calls]
    assert [(c.name, c.arguments, c.raw_arguments) for c in read_back] == [(call.name, call.arguments, None)]
