"""Every provider × every messy history: what each adapter promises, checked the same way for all.

For each generated history, for every registered provider in turn: the body passes the provider's own `check`, is
JSON, is deterministic, is prefix-stable on the wire, carries every text and image of the history, and
reads back (`from_request`) without losing any of them.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, replace
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import chatmend.ids
from chatmend import ChatMessage, ImagePart, ReadError, Repairer, TextPart, providers, repair_history
from chatmend.ids import all_fit
from chatmend.providers.base import Provider
from chatmend.repair import is_placeholder
from tests.providers.chat_helpers import completion
from tests.providers.common import body_or_none, writable
from tests.strategies import corrupt, examples, messy_histories

# Where each provider's body keeps its message list.
MESSAGE_LIST = {
    "anthropic": "messages",
    "bedrock": "messages",
    "deepseek": "messages",
    "gemini": "contents",
    "groq": "messages",
    "kimi": "messages",
    "mistral": "messages",
    "ollama": "messages",
    "openai_chat": "messages",
    "openai_responses": "input",
    "openrouter": "messages",
    "together": "messages",
    "vllm": "messages",
    "xai": "messages",
}
MATRIX = examples(150)


def test_every_registered_provider_is_in_the_matrix() -> None:
    assert sorted(MESSAGE_LIST) == providers.names()


def said(history: list[ChatMessage]) -> tuple[list[str], list[str]]:
    """The non-blank texts and the image sources of a history (what must never be lost)."""
    texts, images = [], []
    for message in history:
        if is_placeholder(message):
            continue
        content = message.content
        parts = [TextPart(text=content)] if isinstance(content, str) else list(content)
        for part in parts:
            if isinstance(part, TextPart) and part.text.strip():
                texts.append(part.text)
            elif isinstance(part, ImagePart):
                images.append(part.data or part.url or "")
    return texts, images


def assert_carries(history: list[ChatMessage], wire: str) -> None:
    texts, images = said(history)
    for text in texts:
        assert json.dumps(text, ensure_ascii=False)[1:-1] in wire, f"text {text!r} lost"
    for image in images:
        assert image in wire, f"image {image[:20]!r} lost"


def each_provider(history: list[ChatMessage]) -> Iterator[tuple[str, Provider, list[ChatMessage]]]:
    """Every provider, its name and the history as it writes it; one drawn history serves them all (drawing it
    costs more than the checks)."""
    for name in sorted(MESSAGE_LIST):
        provider = providers.get(name)
        yield name, provider, writable(provider, history)


@contextlib.contextmanager
def reported(name: str) -> Iterator[None]:
    """Names the provider in the report of an example that fails for it."""
    try:
        yield
    except BaseException:
        note(f"provider: {name}")
        raise


def to_request(name: str, history: list[ChatMessage]) -> dict[str, Any] | None:
    """The provider's body, or None for a history it refuses for sending no messages (system text only)."""
    return body_or_none(providers.get(name), history, model="test-model")


@MATRIX
@given(history=messy_histories())
def test_body_is_accepted_json_deterministic_and_carries_everything(history: list[ChatMessage]) -> None:
    for name, provider, sent in each_provider(history):
        with reported(name):
            body = to_request(name, sent)
            if body is None:
                continue
            assert provider.check(body) == []
            wire = json.dumps(body, ensure_ascii=False)
            assert json.dumps(to_request(name, sent), ensure_ascii=False) == wire
            assert_carries(sent, wire)


@MATRIX
@given(history=messy_histories())
def test_wire_is_prefix_stable(history: list[ChatMessage]) -> None:
    for name, _, sent in each_provider(history):
        with reported(name):
            key = MESSAGE_LIST[name]
            body = to_request(name, sent)
            if body is None:
                continue
            full = body[key]
            for i, message in enumerate(sent):
                if message.role == "assistant" and not is_placeholder(message):
                    shorter = (to_request(name, sent[:i]) or {}).get(key, [])  # None: nothing sent yet
                    assert full[: len(shorter)] == shorter, f"to_request(history[:{i}]) is not a prefix"


@MATRIX
@given(history=messy_histories())
def test_reading_the_body_back_keeps_every_text_and_image(history: list[ChatMessage]) -> None:
    for name, provider, sent in each_provider(history):
        with reported(name):
            body = to_request(name, sent)
            if body is None:
                continue
            back = provider.from_request(body)
            assert all(isinstance(m, ChatMessage) for m in back)
            assert_carries(sent, json.dumps([asdict(m) for m in back], ensure_ascii=False))


def reads_only(tool: str) -> bool:
    return tool in ("read_file", "search")


@MATRIX
@given(history=messy_histories(), cut=st.integers(min_value=0, max_value=40))
def test_a_kept_repairer_gives_the_same_bodies_as_a_fresh_repair(history: list[ChatMessage], cut: int) -> None:
    for name, provider, sent in each_provider(history):
        with reported(name):
            # A session sent at every length, then a history that does not extend the last one (it starts over).
            repairer = Repairer(is_read_only=reads_only)
            lengths = [*range(len(sent) + 1), min(cut, len(sent))]
            for n in lengths:
                expected = body_or_none(provider, sent[:n], model="test-model", is_read_only=reads_only)
                assert body_or_none(provider, sent[:n], model="test-model", repairer=repairer) == expected


@pytest.mark.parametrize("name", sorted(MESSAGE_LIST))
def test_is_read_only_belongs_to_the_repairer(name: str) -> None:
    with pytest.raises(ValueError, match=r"Repairer\(is_read_only=\.\.\.\)"):
        providers.get(name).to_request([], model="m", repairer=Repairer(), is_read_only=lambda tool: True)


def fitting(message: ChatMessage) -> ChatMessage:
    """The message with its ids cut to characters and lengths every provider sends as they are."""
    def cut(tool_id: str) -> str:
        return re.sub(r"[^a-zA-Z0-9_-]", "_", tool_id)[:30]

    if message.tool_calls:
        return replace(message, tool_calls=tuple(
            replace(c, id=cut(c.id)) for c in message.tool_calls))
    if message.tool_call_id is not None:
        return replace(message, tool_call_id=cut(message.tool_call_id))
    return message


@MATRIX
@given(history=messy_histories(), fit=st.booleans())
def test_ids_sent_as_they_are_give_the_body_the_id_map_gives(history: list[ChatMessage], fit: bool) -> None:
    for name, _, sent in each_provider(history):
        with reported(name):
            # When every final id already fits, they are the wire ids as they are (ids.all_fit): nothing may change.
            if fit:
                sent = [fitting(m) for m in sent]
                assert all_fit(repair_history(sent).final_ids, 40, re.compile(r"[a-zA-Z0-9_-]*"))
            shortcut = to_request(name, sent)
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(chatmend.ids, "all_fit", lambda *args: False)
                mapped = to_request(name, sent)
            assert shortcut == mapped


@examples(100)
@given(history=messy_histories(), data=st.data())
def test_a_corrupted_body_is_reported_or_read_never_crashes(history: list[ChatMessage], data: st.DataObject) -> None:
    # Bad input gets a clear error: whatever a field holds, `check` lists problems (each with a code, a path and
    # the provider's words) and `from_request` reads the body or raises a ReadError that says where; a body
    # `check` finds nothing wrong with reads, unless it holds a part of a kind the neutral model cannot hold.
    for name, provider, sent in each_provider(history):
        with reported(name):
            body = to_request(name, sent)
            if body is None:
                continue
            corrupt(data, [body])
            problems = provider.check(body)
            assert all(p.code and p.path is not None and p.message for p in problems)
            try:
                read = provider.from_request(body)
            except ReadError as error:
                assert error.reason and error.provider == name
                # (a part of a kind the neutral model has no place for, as audio or a file, is sent but cannot be
                # read)
                unreadable_kind = error.reason.startswith("unsupported content part")
                assert problems or unreadable_kind, f"check found nothing, yet reading failed: {error}"
            else:
                assert all(isinstance(m, ChatMessage) for m in read)


# A reply of each provider's shape: thinking (where the wire has it), text and a call.
_CHAT_CALL = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}
REPLIES: dict[str, dict[str, Any]] = {
    "openai_chat": completion("m", {"role": "assistant", "content": "ok", "tool_calls": [_CHAT_CALL]}, 1),
    "kimi": completion("m", {"role": "assistant", "content": "ok", "reasoning_content": "hmm",
                             "tool_calls": [_CHAT_CALL]}, 1),
    "mistral": completion("m", {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                                "tool_calls": [_CHAT_CALL]}, 1),
    "deepseek": completion("deepseek-v4-flash", {"role": "assistant", "content": "ok", "reasoning_content": "hmm",
                                                 "tool_calls": [_CHAT_CALL]}, 1),
    **{name: completion("m", {"role": "assistant", "content": "ok", "tool_calls": [_CHAT_CALL]}, 1)
       for name in ("groq", "ollama", "openrouter", "together", "vllm", "xai")},
    "anthropic": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "stop_reason": "tool_use",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "text", "text": "ok"},
                    {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "x"}}],
    },
    "gemini": {
        "candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
            {"text": "hmm", "thought": True}, {"text": "ok"},
            {"functionCall": {"name": "search", "args": {"q": "x"}}, "thoughtSignature": "c2ln"}]}}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    },
    "bedrock": {
        "ResponseMetadata": {"HTTPStatusCode": 200}, "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1},
        "output": {"message": {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "sig"}}}, {"text": "ok"},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "search", "input": {"q": "x"}}}]}},
    },
    "openai_responses": {
        "id": "resp_1", "object": "response", "status": "completed", "model": "m", "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hmm"}]},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "ok", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "search",
             "arguments": '{"q": "x"}', "status": "completed"}],
    },
}


def test_every_provider_has_a_reply() -> None:
    assert sorted(REPLIES) == providers.names()
    for name, reply in REPLIES.items():
        message = providers.get(name).from_response(copy.deepcopy(reply))
        assert message.role == "assistant" and [c.name for c in message.tool_calls] == ["search"]


@pytest.mark.parametrize("name", sorted(MESSAGE_LIST))
@examples(100)
@given(data=st.data())
def test_a_corrupted_reply_is_read_or_a_located_error_never_a_crash(name: str, data: st.DataObject) -> None:
    reply = copy.deepcopy(REPLIES[name])
    corrupt(data, [reply])
    try:
        message = providers.get(name).from_response(reply)
    except ReadError as error:
        assert error.reason and error.provider == name
    else:
        assert message.role == "assistant"
