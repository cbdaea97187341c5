"""chatmend.bridges.litellm: LiteLLM's messages repaired, unchanged objects kept, through litellm's own calls to a
local OpenAI endpoint, and the proxy's pre-call hook."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

# LiteLLM fetches its model price map from the network when imported, unless told to read its own copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
import openai
import pytest
from hypothesis import given
from litellm.caching.dual_cache import DualCache
from litellm.proxy._types import UserAPIKeyAuth
from litellm.types.utils import Message

from chatmend import ChatMessage, loads, providers, repair_history
from chatmend.bridges.litellm import RepairHook, acompletion, completion, provider_for, repair_messages
from tests.bridges.peers import framework_peer_cases
from tests.proxy.upstream import Upstream, fake_upstream
from tests.strategies import examples, messy_histories

# LiteLLM's message TypedDicts mark fields ReadOnly, which pydantic warns of when it builds their schema
pytestmark = pytest.mark.filterwarnings("ignore:Item.* using the `ReadOnly` qualifier:UserWarning")

CHAT = providers.get("openai_chat")
PAIRING = {"OC1", "OC2", "OC3", "OC4"}  # docs/rules.md: calls answered, results after their call


def _call(call_id: str, name: str = "read", args: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


BROKEN: list[Any] = [
    {"role": "system", "content": "Be terse."},
    {"role": "user", "content": "fix the bug"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_1"), _call("call_2", "grep", '{"q": 1}')]},
    {"role": "tool", "tool_call_id": "call_1", "content": "A"},
    {"role": "user", "content": "are you there?"},
]


def _pairing(messages: list[Any]) -> list[Any]:
    plain = [m if isinstance(m, dict) else m.model_dump(exclude_none=True) for m in messages]
    return [p for p in CHAT.check({"model": "gpt-4o", "messages": plain}) if p.code in PAIRING]


def test_missing_results_are_answered_and_the_rest_kept() -> None:
    out = repair_messages(BROKEN, is_read_only={"read"}.__contains__)
    assert _pairing(BROKEN) != [] and _pairing(out) == []
    assert [m.get("tool_call_id") for m in out if m["role"] == "tool"] == ["call_1", "call_2"]
    kept = [m for m in out if any(m is b for b in BROKEN)]
    assert len(kept) == len(BROKEN)
    assert BROKEN[2]["tool_calls"][1]["id"] == "call_2"  # the input is not changed


def test_a_valid_history_with_litellm_messages_is_the_same_objects() -> None:
    reply = Message(content=None, role="assistant", tool_calls=[_call("call_1")])  # response.choices[0].message
    history = [{"role": "user", "content": "go"}, reply, {"role": "tool", "tool_call_id": "call_1", "content": "A"}]
    out = repair_messages(history)
    assert all(a is b for a, b in zip(out, history)) and len(out) == len(history)
    broken = history[:2]
    fixed = repair_messages(broken)
    assert fixed[1] is reply and fixed[2]["tool_call_id"] == "call_1"


def test_an_orphan_result_becomes_a_user_note() -> None:
    out = repair_messages([{"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "x", "content": "42"}])
    assert _pairing(out) == [] and "42" in json.dumps(out)


def test_the_model_prefix_picks_the_dialect_and_its_ids() -> None:
    assert provider_for("mistral/mistral-large-latest").name == "mistral"
    assert provider_for("moonshot/kimi-k2").name == "kimi"
    assert provider_for("together_ai/meta-llama/x").name == "together"
    assert provider_for("anthropic/claude-sonnet-4-5").name == "openai_chat"  # LiteLLM translates it
    assert provider_for("gpt-4o").name == provider_for(None).name == "openai_chat"
    history: list[Any] = [{"role": "user", "content": "go"},
                          {"role": "assistant", "content": None, "tool_calls": [_call("functions.read:0")]}]
    out = repair_messages(history, model="mistral/mistral-large-latest")
    assert providers.get("mistral").check({"model": "mistral-large-latest", "messages": out}) == []
    assert len(out[1]["tool_calls"][0]["id"]) == 9 and out[2]["tool_call_id"] == out[1]["tool_calls"][0]["id"]


def _as_dicts(history: list[ChatMessage]) -> list[Any]:
    out: list[Any] = []
    for m in history:
        text = m.content if isinstance(m.content, str) else "".join(getattr(p, "text", "") for p in m.content)
        if m.role == "assistant":
            calls = [_call(c.id, c.name, json.dumps(c.arguments) if isinstance(c.arguments, dict) else c.arguments)
                     for c in m.tool_calls]
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": text})
        else:
            out.append({"role": m.role, "content": text or "."})
    return out


@examples(150)
@given(history=messy_histories())
def test_any_history_repairs_valid_deterministic_and_idempotent(history: list[ChatMessage]) -> None:
    messages = _as_dicts(history)
    once = repair_messages(messages)
    assert _pairing(once) == []
    assert repair_messages(messages) == once
    again = repair_messages(once)
    assert all(a is b for a, b in zip(again, once)) and len(again) == len(once)


def _sent(upstream: Upstream) -> list[Any]:
    return [s for s in upstream.seen if s.provider == "openai_chat"]


def test_acompletion_sends_a_valid_history() -> None:
    async def main(upstream: Upstream, repair: bool) -> str:
        async with openai.AsyncOpenAI(base_url=upstream.url + "/v1", api_key="k", max_retries=0) as client:
            call = acompletion if repair else litellm.acompletion
            response = await call(model="openai/gpt-4o", messages=BROKEN, client=client)
        return str(response.choices[0].message.content)

    with fake_upstream() as upstream:
        assert asyncio.run(main(upstream, True)) == "done"
        assert asyncio.run(main(upstream, False)) == "done"  # the fake answers all; it records what it judged
    repaired, plain = _sent(upstream)
    assert repaired.problems == [] and plain.problems != []


def test_completion_sends_a_valid_history() -> None:
    def call(upstream: Upstream) -> str:
        with openai.OpenAI(base_url=upstream.url + "/v1", api_key="k", max_retries=0) as client:
            response = completion(model="openai/gpt-4o", messages=BROKEN, client=client)
        return str(response.choices[0].message.content)

    with fake_upstream() as upstream, ThreadPoolExecutor(1) as pool:
        # in a thread of its own: LiteLLM's sync path makes the calling thread an event loop it never closes, and in
        # a thread without one it runs its service hooks with asyncio.run instead
        assert pool.submit(call, upstream).result() == "done"
    assert [s.problems for s in _sent(upstream)] == [[]]


def _hook(data: dict[str, Any], call_type: str) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        out: dict[str, Any] = await RepairHook().async_pre_call_hook(UserAPIKeyAuth(), DualCache(), data, call_type)
        return out
    return asyncio.run(main())


def test_the_proxy_hook_repairs_chat_requests_and_litellm_sends_them_valid() -> None:
    data = _hook({"model": "openai/gpt-4o", "messages": list(BROKEN), "temperature": 0}, "acompletion")
    assert data["temperature"] == 0 and _pairing(data["messages"]) == []

    async def main(upstream: Upstream) -> None:  # what the proxy then does with the data
        async with openai.AsyncOpenAI(base_url=upstream.url + "/v1", api_key="k", max_retries=0) as client:
            await litellm.acompletion(**data, client=client)

    with fake_upstream() as upstream:
        asyncio.run(main(upstream))
    assert [s.problems for s in _sent(upstream)] == [[]]


def test_the_proxy_hook_repairs_responses_and_anthropic_requests_in_their_formats() -> None:
    items: list[Any] = [{"role": "user", "content": "go"},
                        {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": "{}"},
                        {"role": "user", "content": "there?"}]
    data = _hook({"model": "gpt-4o", "input": items}, "aresponses")
    assert providers.get("openai_responses").check(data) == [] and data["input"][0] is items[0]
    messages: list[Any] = [{"role": "user", "content": "go"},
                           {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read",
                                                              "input": {}}]},
                           {"role": "user", "content": "there?"}]
    data = _hook({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": messages}, "anthropic_messages")
    assert providers.get("anthropic").check(data) == []
    untouched = {"model": "text-embedding-3-small", "input": ["a"]}
    assert _hook(dict(untouched), "aembedding") == untouched


def _litellm_proxy_cli() -> str | None:
    """LiteLLM's proxy command, where `litellm[proxy]` is installed beside this interpreter (not in the test install:
    it pulls some 45 packages and an older litellm)."""
    cli = Path(sys.executable).with_name("litellm")
    return str(cli) if importlib.util.find_spec("fastapi") is not None and cli.exists() else None


@pytest.mark.skipif(_litellm_proxy_cli() is None, reason="litellm[proxy] is not installed")
def test_the_hook_in_a_running_litellm_proxy(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "chatmend_hook.py").write_text("from chatmend.bridges.litellm import RepairHook\n"
                                               "proxy_handler_instance = RepairHook()\n")
    key = "sk-chatmend-test-0123456789abcdef"
    with fake_upstream() as upstream:
        (tmp_path / "config.yaml").write_text(
            "model_list:\n  - model_name: gpt-4o\n    litellm_params:\n      model: openai/gpt-4o\n"
            f"      api_base: {upstream.url}/v1\n      api_key: k\n"
            "litellm_settings:\n  callbacks: chatmend_hook.proxy_handler_instance\n")
        env = {**os.environ, "LITELLM_MASTER_KEY": key, "PYTHONPATH": str(tmp_path)}
        with open(tmp_path / "proxy.log", "wb") as log:
            proxy = subprocess.Popen([str(_litellm_proxy_cli()), "--config", "config.yaml", "--host", "127.0.0.1",
                                      "--port", str(port)], cwd=tmp_path, env=env, stdout=log, stderr=log)
            try:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    try:
                        socket.create_connection(("127.0.0.1", port), timeout=1).close()
                        break
                    except OSError:
                        time.sleep(0.5)
                with openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key, max_retries=0) as client:
                    reply = client.chat.completions.create(model="gpt-4o", messages=BROKEN)
            finally:
                proxy.terminate()
                proxy.wait(30)
    assert reply.choices[0].message.content == "done"
    assert [s.problems for s in _sent(upstream)] == [[]]


SEEDS = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.jsonl"))


def _skeleton(messages: list[Any]) -> list[tuple[str, tuple[str, ...]]]:
    """Each message's role and the call ids it makes or answers: what the repair rules decide."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for m in messages:
        if isinstance(m, ChatMessage):
            ids = tuple(c.id for c in m.tool_calls) if m.role == "assistant" else (
                (m.tool_call_id or "",) if m.role == "tool" else ())
            out.append((m.role, ids))
        else:
            ids = tuple(c["id"] for c in m.get("tool_calls") or []) if m["role"] == "assistant" else (
                (m["tool_call_id"],) if m["role"] == "tool" else ())
            out.append((m["role"], ids))
    return out


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
def test_the_seed_examples_repair_as_repair_history_does(seed: Path) -> None:
    history = loads(seed.read_text())
    expected = repair_history(history).messages
    out = repair_messages(_as_dicts(history))
    assert _skeleton(out) == _skeleton(list(expected)) and _pairing(out) == []


PEERS = framework_peer_cases()


@pytest.mark.skipif(not PEERS, reason="../shared/real-world/peer-cases.json is absent")
@pytest.mark.parametrize(("name", "history"), PEERS, ids=[name for name, _ in PEERS])
def test_the_peers_cases_repair_as_repair_history_does(name: str, history: list[Any]) -> None:
    expected = repair_history(history).messages
    out = repair_messages(_as_dicts(history))
    assert _skeleton(out) == _skeleton(list(expected)) and _pairing(out) == []
