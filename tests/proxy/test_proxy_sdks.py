"""The official SDK clients pointed at the proxy, the proxy at a fake upstream: broken histories arrive valid,
valid ones arrive as the client sent them, every header arrives, and the client gets the upstream's bytes."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from chatmend.proxy import REPAIRED_HEADER
from tests.proxy.upstream import Upstream

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
genai = pytest.importorskip("google.genai")

BROKEN_ANTHROPIC: list[Any] = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"c": "ls"}}]},
    {"role": "user", "content": "still there?"},
]
BROKEN_CHAT: list[Any] = [
    {"role": "user", "content": "list the files"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{\"c\": \"ls\"}"}}]},
    {"role": "user", "content": "still there?"},
]
BROKEN_RESPONSES: list[Any] = [
    {"role": "user", "content": "list the files"},
    {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"c\": \"ls\"}"},
    {"role": "user", "content": "still there?"},
]
BROKEN_GEMINI: list[Any] = [
    {"role": "user", "parts": [{"text": "list the files"}]},
    {"role": "model", "parts": [{"functionCall": {"name": "shell", "args": {"c": "ls"}}}]},
    {"role": "user", "parts": [{"text": "still there?"}]},
]


def _one(upstream: Upstream, provider: str) -> Any:
    bodies = [s for s in upstream.seen if s.provider == provider]
    assert len(bodies) == 1
    return bodies[0]


def test_anthropic_sdk_broken_history_arrives_valid_with_every_header(proxy: str, upstream: Upstream) -> None:
    client = anthropic.Anthropic(base_url=proxy, api_key="sk-test-key", max_retries=0,
                                 default_headers={"anthropic-beta": "tools-2025", "x-custom": "kept"})
    raw = client.messages.with_raw_response.create(model="claude-sonnet-4-5", max_tokens=64,
                                                   messages=BROKEN_ANTHROPIC)
    assert raw.parse().content[0].text == "done"
    assert "interrupted=1" in raw.headers[REPAIRED_HEADER]
    seen = _one(upstream, "anthropic")
    assert seen.problems == []
    assert any("sk-test-key" in v for v in seen.headers.values())  # x-api-key or a bearer token, as the SDK sends it
    assert seen.headers["anthropic-beta"] == "tools-2025" and seen.headers["x-custom"] == "kept"
    assert seen.headers["anthropic-version"]
    sent = seen.json()
    assert sent["messages"][:2] == BROKEN_ANTHROPIC[:2]
    assert sent["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"


def test_anthropic_sdk_stream_is_relayed_byte_for_byte(proxy: str, upstream: Upstream) -> None:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True, "messages": BROKEN_ANTHROPIC}
    with httpx2.stream("POST", proxy + "/v1/messages", json=body, headers={"x-api-key": "k"}) as response:
        received = b"".join(response.iter_raw())
    assert received == upstream.sent["/v1/messages"]
    client = anthropic.Anthropic(base_url=proxy, api_key="k", max_retries=0)
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=64, messages=BROKEN_ANTHROPIC) as stream:
        assert stream.get_final_text() == "done"


def test_a_valid_history_arrives_exactly_as_sent(proxy: str, upstream: Upstream) -> None:
    valid = [*BROKEN_ANTHROPIC[:2], {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "still there?"}]}]
    data = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": valid}, indent=1).encode()
    response = httpx2.post(proxy + "/v1/messages", content=data, headers={"content-type": "application/json"})
    assert response.status_code == 200
    assert REPAIRED_HEADER not in response.headers
    assert _one(upstream, "anthropic").raw == data  # not even re-serialized


def test_openai_chat_sdk_plain_and_streamed(proxy: str, upstream: Upstream) -> None:
    client = openai.OpenAI(base_url=proxy + "/v1", api_key="sk-test", max_retries=0)
    reply = client.chat.completions.create(model="gpt-4o", messages=BROKEN_CHAT)
    assert reply.choices[0].message.content == "done"
    stream = client.chat.completions.create(model="gpt-4o", messages=BROKEN_CHAT, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "done"
    bodies = [s for s in upstream.seen if s.provider == "openai_chat"]
    assert len(bodies) == 2 and all(s.problems == [] for s in bodies)
    assert bodies[0].headers["authorization"] == "Bearer sk-test"
    assert bodies[0].json()["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": bodies[0].json()[
        "messages"][2]["content"]}
    assert bodies[0].json()["messages"][1] == BROKEN_CHAT[1]  # the call, arguments text and all, untouched


def test_openai_responses_sdk(proxy: str, upstream: Upstream) -> None:
    client = openai.OpenAI(base_url=proxy + "/v1", api_key="sk-test", max_retries=0)
    reply = client.responses.create(model="gpt-4o", input=BROKEN_RESPONSES)
    assert reply.output_text == "done"
    events = list(client.responses.create(model="gpt-4o", input=BROKEN_RESPONSES, stream=True))
    assert events[-1].type == "response.completed"
    bodies = [s for s in upstream.seen if s.provider == "openai_responses"]
    assert len(bodies) == 2 and all(s.problems == [] for s in bodies)
    outputs = [i for i in bodies[0].json()["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == ["call_1"]


def test_gemini_sdk_plain_and_streamed(proxy: str, upstream: Upstream) -> None:
    from google.genai import types

    client = genai.Client(api_key="g-key", http_options=types.HttpOptions(base_url=proxy))
    reply = client.models.generate_content(model="gemini-2.5-pro", contents=BROKEN_GEMINI)
    assert reply.text == "done"
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-pro", contents=BROKEN_GEMINI))
    assert "".join(c.text or "" for c in chunks) == "done"
    bodies = [s for s in upstream.seen if s.provider == "gemini"]
    assert len(bodies) == 2 and all(s.problems == [] for s in bodies)
    assert bodies[0].headers["x-goog-api-key"] == "g-key"
    assert bodies[1].query == "alt=sse"
    answers = [p for c in bodies[0].json()["contents"] for p in c["parts"] if "functionResponse" in p]
    assert len(answers) == 1


def test_other_paths_are_forwarded_unchanged(proxy: str, upstream: Upstream) -> None:
    response = httpx2.get(proxy + "/v1/models?limit=2", headers={"authorization": "Bearer k"})
    assert response.status_code == 200 and response.json()["data"][0]["id"] == "m-1"
    seen = upstream.seen[-1]
    assert (seen.method, seen.path, seen.query) == ("GET", "/v1/models", "limit=2")
    assert response.headers.get_list("set-cookie") == ["a=1", "b=2"]  # repeated headers kept


def test_count_tokens_is_repaired_too(proxy: str, upstream: Upstream) -> None:
    client = anthropic.Anthropic(base_url=proxy, api_key="k", max_retries=0)
    count = client.messages.count_tokens(model="claude-sonnet-4-5", messages=BROKEN_ANTHROPIC)
    assert count.input_tokens == 12
    assert _one(upstream, "anthropic").path == "/v1/messages/count_tokens"
