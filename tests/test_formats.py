"""Format detection from content, and the located errors of every reader."""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chatmend.providers
from chatmend import ChatMessage, dumps, providers, repair_history
from chatmend.files.io import Progress, atomic_write
from chatmend.formats import TRANSCRIPT_FORMATS, InputError, formats, read, read_lines, store_formats
from tests.providers.common import body_or_none
from tests.strategies import examples, messy_histories

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "examples" / "sessions"


def lines(text: str) -> list[str]:
    return [line + "\n" for line in text.split("\n")]


def detect(text: str) -> str:
    return read_lines(lines(text), "auto").format


def error(text: str, fmt: str = "auto") -> InputError:
    with pytest.raises(InputError) as info:
        read_lines(lines(text), fmt)
    return info.value


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("openai_chat_body.json", "openai_chat"),
        ("openai_chat_messages.jsonl", "openai_chat"),
        ("kimi_body.json", "kimi"),
        ("mistral_body.json", "mistral"),
        ("anthropic_body.json", "anthropic"),
        ("openai_responses_input.json", "openai_responses"),
        ("gemini_contents.json", "gemini"),
        ("bedrock_converse.json", "bedrock"),
        ("deepseek_body.json", "deepseek"),
        ("xai_body.json", "xai"),
        ("claude_code.jsonl", "claude_code"),
        ("codex_rollout.jsonl", "codex"),
        ("cline_task.json", "cline"),
        ("roo_code_task.json", "roo_code"),
        ("pydantic_ai_history.json", "pydantic_ai"),
        ("kimi_code_wire.jsonl", "kimi_code"),
        ("kimi_cli_context.jsonl", "kimi_cli"),
        ("pi_session.jsonl", "pi"),
        ("gemini_checkpoint.json", "gemini_checkpoint"),
    ],
)
def test_every_sample_session_is_detected_from_its_content(name: str, fmt: str, tmp_path: Path) -> None:
    # The name says nothing: the content decides.
    copy = tmp_path / "session.txt"
    copy.write_bytes((SESSIONS / name).read_bytes())
    assert read(str(copy)).format == fmt


def _detectable(fmt: str) -> bool:
    """False for a hosting service's dialect (a router or server of other vendors' models, no model names of its
    own): its bodies are another Chat body's, read with `--from` only."""
    if fmt not in providers.names():
        return True
    adapter = providers.get(fmt)
    return adapter.shape_of is None or bool(adapter.model_prefixes)


def test_every_format_has_a_sample_session() -> None:
    """Every format a file is read in (the session stores, databases and folders, have their own tests)."""
    samples = {read(str(p)).format for p in SESSIONS.iterdir()}
    files = {f for f in formats() if f not in store_formats() or f in TRANSCRIPT_FORMATS}
    assert samples | {"chatmend"} == {f for f in files if _detectable(f)}


CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ('{"role":"user","content":"hi"}\n{"role":"assistant","content":"yo"}', "chatmend"),
        ('{"role":"assistant","tool_calls":[{"id":"a","name":"f","arguments":{}}]}', "chatmend"),
        ('{"role":"tool","tool_call_id":"a","content":"x"}\n{"role":"user","content":"y"}', "chatmend"),
        (json.dumps({"role": "assistant", "tool_calls": [CALL]}), "openai_chat"),
        (json.dumps([{"role": "user", "content": "hi"}]), "openai_chat"),
        (json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}), "openai_chat"),
        (
            json.dumps({"model": "claude-opus-4-1", "messages": [{"role": "user", "content": "hi"}]}),
            "anthropic",
        ),
        (json.dumps({"model": "mistral-small", "messages": [{"role": "user", "content": "hi"}]}), "mistral"),
        (json.dumps({"model": "moonshot-v1-8k", "messages": [{"role": "user", "content": "hi"}]}), "kimi"),
        (
            json.dumps(
                {
                    "messages": [
                        {
                            "role": "assistant",
                            "tool_calls": [{**CALL, "id": "functions.f:0"}, {**CALL, "id": "functions.g:1"}],
                        }
                    ]
                }
            ),
            "kimi",
        ),
        (
            json.dumps(
                {"messages": [{"role": "assistant", "tool_calls": [{**CALL, "id": "functions.f:0"}, CALL]}]}
            ),
            "openai_chat",
        ),
        (
            json.dumps(
                {
                    "messages": [
                        {
                            "role": "user",
                            "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
                        }
                    ]
                }
            ),
            "anthropic",
        ),
        (json.dumps({"system": "s", "messages": [{"role": "user", "content": "hi"}]}), "anthropic"),
        (json.dumps({"model": "gpt-5", "input": "hi"}), "openai_responses"),
        (
            json.dumps([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]),
            "openai_responses",
        ),
        (
            json.dumps([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]),
            "openai_responses",
        ),
        (json.dumps([{"role": "user", "parts": [{"text": "hi"}]}]), "gemini"),
        (json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, indent=2), "gemini"),
        (
            '{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}\n'
            '{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"hi"}}',
            "codex",
        ),
        (
            '{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}}',
            "claude_code",
        ),
    ],
)
def test_detection(text: str, fmt: str) -> None:
    assert detect(text) == fmt


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            json.dumps({"messages": [{"role": "user", "content": "hi"}]}),
            "cannot tell the format: the messages hold only plain text, which OpenAI Chat, Anthropic Messages and "
            "Bedrock Converse share; say which with --from openai_chat or --from anthropic or --from bedrock",
        ),
        (
            json.dumps(
                {
                    "messages": [
                        {"role": "tool", "tool_call_id": "a", "content": "x"},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
                    ]
                }
            ),
            "cannot tell the format: the messages mix OpenAI Chat and Anthropic Messages shapes; "
            "say which with --from openai_chat or --from anthropic",
        ),
        (
            '{"role":"assistant","tool_calls":[{"id":"a","name":"f"}]}\n'
            '{"role":"assistant","tool_calls":[{"id":"b","type":"function","function":{"name":"f"}}]}',
            "cannot tell the format: the messages mix neutral and OpenAI Chat shapes; say which with "
            "--from chatmend or --from openai_chat",
        ),
        (
            '{"model": "x"}',
            "a JSON object with no 'messages', 'contents' or 'input' list; expected a request "
            "body or a list of messages",
        ),
        ("42", "the file holds a number; expected a request body (a JSON object) or a list of messages"),
        ('"hello"', "the file holds a string; expected a request body (a JSON object) or a list of messages"),
        ("[]", "an empty list; expected a list of messages"),
        ('[{"role": "user", "content": "x"}, 3]', "[1]: expected a message (a JSON object), got a number"),
        ("", "empty file; expected a chat session (JSON Lines or a JSON request body)"),
    ],
)
def test_unsure_or_wrong_input_says_what_was_expected(text: str, expected: str) -> None:
    assert error(text).message == expected


def test_json_document_errors_carry_line_and_column() -> None:
    exc = error('{\n  "messages": [\n    {"role": "user", "content": }\n  ]\n}')
    assert (exc.line, exc.column) == (3, 33)
    assert exc.message.startswith("invalid JSON: Expecting value; expected a JSON request body")


def test_json_document_errors_say_what_python_json_says_where_it_says_it() -> None:
    # A trailing comma: Python 3.13 points at the comma itself ("Illegal trailing comma"), older ones at the
    # bracket after it ("Expecting value"); the error carries whichever this Python's decoder gives.
    text = '{\n  "messages": [\n    {"role": "user", "content": "hi"},\n  ]\n}'
    with pytest.raises(json.JSONDecodeError) as decoder:
        json.loads(text)
    exc = error(text)
    assert (exc.line, exc.column) == (decoder.value.lineno, decoder.value.colno)
    assert exc.message.startswith(f"invalid JSON: {decoder.value.msg}; expected a JSON request body")


def test_provider_jsonl_errors_carry_line_and_column() -> None:
    exc = error(
        json.dumps({"role": "assistant", "tool_calls": [CALL]}) + '\n{"role": "tool", "tool_call_id"}\n'
    )
    assert (exc.line, exc.column) == (2, 32)
    assert exc.message == "invalid JSON: Expecting ':' delimiter; expected one openai_chat message a line"


def test_forced_format_that_does_not_fit_is_a_clear_error() -> None:
    exc = error(json.dumps({"model": "claude-x", "messages": [{"role": "user", "content": 3}]}), "anthropic")
    assert "anthropic" in exc.message
    exc = error(
        '{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}}', "codex"
    )
    assert exc.message == "no conversation messages in this codex transcript"
    exc = error(json.dumps([{"role": "user", "content": "hi"}]), "claude_code")
    assert exc.message.startswith("a single JSON document; claude_code sessions are JSON Lines")


def test_non_utf8_and_directories_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "s.json"
    bad.write_bytes(b'[{"role": "user", "content": "\xff"}]')
    with pytest.raises(InputError) as info:
        read(str(bad))
    assert (info.value.line, info.value.column) == (1, 31)
    assert info.value.message == "not UTF-8 text (byte 0xff); expected a UTF-8 encoded file"
    with pytest.raises(InputError) as info:
        read(str(tmp_path))
    assert info.value.message == "is a directory, expected a file"


def test_a_bom_is_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"role":"user","content":"hi"}\n')
    assert read(str(path)).messages[0].content == "hi"


def test_progress_is_drawn_only_when_enabled(capsys: pytest.CaptureFixture[str]) -> None:
    quiet = Progress("f", 100, enabled=False)
    quiet.add(50)
    quiet.close()
    assert capsys.readouterr().err == ""
    loud = Progress("f", 1000, enabled=True)
    loud._last = -1e9
    loud.add(500)
    loud.close()
    err = capsys.readouterr().err
    assert "reading f: 0 MB (50%)" in err
    assert err.endswith("\r\x1b[K")


def test_atomic_write_failure_leaves_the_target_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")

    def chunks() -> object:
        yield "new "
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic_write(str(target), chunks())  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_a_new_file_gets_the_permissions_open_would_give_it(tmp_path: Path, umask: int) -> None:
    target, kept = tmp_path / "new.json", tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o640)
    previous = os.umask(umask)
    try:
        atomic_write(str(target), ["{}"])
        atomic_write(str(kept), ["{}"])
        assert os.umask(umask) == umask  # the umask is as it was
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask  # not the temporary file's 0o600
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640  # a replaced file keeps its own


def test_a_private_file_is_never_readable_by_others_while_it_is_rewritten(tmp_path: Path) -> None:
    target = tmp_path / "private.json"
    target.write_text("old")
    target.chmod(0o600)
    seen: list[int] = []

    def chunks() -> Iterator[str]:
        yield "{"
        (temporary,) = [p for p in tmp_path.iterdir() if p.name != "private.json"]
        seen.append(stat.S_IMODE(temporary.stat().st_mode))  # the temporary file, half written
        yield "}"

    previous = os.umask(0o022)
    try:
        atomic_write(str(target), chunks())
    finally:
        os.umask(previous)
    assert seen == [0o600] and target.read_text() == "{}" and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_large_neutral_file_streams(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    one = (
        '{"role":"assistant","content":"","tool_calls":[{"id":"functions.f:0","name":"f","arguments":{}}]}\n'
    )
    path.write_text((one + '{"role":"tool","tool_call_id":"functions.f:0","content":"ok"}\n') * 20_000)
    session = read(str(path), progress=False)
    assert len(session.messages) == 40_000
    assert session.where[-1] == "line 40000"
    result, chunks = session.repaired(None)
    assert len(result.renamed) == 19_999
    out = io.StringIO()
    for chunk in chunks:
        out.write(chunk)
    assert out.getvalue().count("\n") == 40_000


MODELS = {
    "openai_chat": "gpt-4.1",
    "kimi": "kimi-k2-0905-preview",
    "mistral": "mistral-large-latest",
    "anthropic": "claude-sonnet-4-5",
    "openai_responses": "gpt-5",
    "gemini": "gemini-2.5-flash",
}


@examples(40)
@given(messy_histories(), st.sampled_from(sorted(MODELS)))
def test_every_adapters_body_is_detected_as_its_provider(history: list[ChatMessage], provider: str) -> None:
    if not repair_history(history).messages:
        return
    body = body_or_none(chatmend.providers.get(provider), history, model=MODELS[provider])
    if body is None:
        return  # system text only: no messages to send, which the provider refuses (to_request too)
    session = read_lines(lines(json.dumps(body)), "auto")
    assert session.format == provider
    assert session.messages


@examples(60)
@given(messy_histories())
def test_neutral_json_lines_are_detected_as_neutral(history: list[ChatMessage]) -> None:
    if not history:
        return
    session = read_lines(lines(dumps(history)), "auto")
    assert session.format == "chatmend"
    assert session.messages == history


def test_a_bad_message_in_a_neutral_json_list_is_located_at_its_item_and_field(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps([{"role": "user", "content": "go"}, {"role": "assistant", "tool_calls": [{"id": "a"}]}]))
    with pytest.raises(InputError, match=r"\[1\]\.tool_calls\.0\.name: required field is missing"):
        read(str(path), "chatmend")
