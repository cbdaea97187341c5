"""`repair` of a body it leaves as it is says "nothing to repair" (issue #44 item 6), for every provider: a body
whose only problems are ones no repair fixes was written anew whole, item for item equal, and reported "repaired
... wrote N items anew". `repair_body` keeps every item equal to the input's at its place as the input's own."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import providers
from chatmend.exceptions import ChatmendError
from tests.strategies import corrupt, examples, messy_histories

WEATHER = "Weather in Rome?"

UNFIXABLE: dict[str, tuple[dict[str, Any], str]] = {
    # (a body, the code of the one problem repair cannot fix)
    "anthropic": ({"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [
        {"role": "user", "content": [{"type": "text", "text": WEATHER}, {}]},  # a block without a type
        {"role": "assistant", "content": "Sunny."}]}, "SHAPE"),
    "gemini": ({"contents": [
        {"role": "user", "parts": [{"text": WEATHER}]},
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Rome"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": "sunny"}}]}]},  # not an object
        "GE0"),
    "kimi": ({"model": "kimi-k2", "messages": [
        {"role": "user", "content": WEATHER},
        {"role": "assistant", "content": None, "reasoning_content": "", "tool_calls": [
            {"id": "functions.weather:0", "type": "function",
             "function": {"name": "weather", "arguments": None}}]},  # arguments that are not JSON text
        {"role": "tool", "tool_call_id": "functions.weather:0", "content": "sunny"}]}, "OC6"),
    "mistral": ({"model": "mistral-large-latest", "messages": [
        {"role": "user", "content": WEATHER},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "abcdefghi", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "abcdefghi", "name": "weather.get", "content": "sunny"}]},  # MI9's name
        "MI9"),
}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "chatmend", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("name", sorted(UNFIXABLE))
@pytest.mark.parametrize("indent", [None, 2])
def test_repair_says_nothing_to_repair_and_writes_the_same_bytes(tmp_path: Path, name: str,
                                                                  indent: int | None) -> None:
    body, code = UNFIXABLE[name]
    source = tmp_path / "body.json"
    source.write_text(json.dumps(body, indent=indent) + "\n", encoding="utf-8")
    checked = run("check", "body.json", "--from", name, cwd=tmp_path)
    assert checked.returncode == 1 and code in checked.stdout, checked.stdout + checked.stderr
    done = run("repair", "body.json", "--from", name, "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("body.json: nothing to repair ("), done.stdout
    assert (tmp_path / "out.json").read_bytes() == source.read_bytes()


@pytest.mark.parametrize("name", sorted(UNFIXABLE))
def test_repair_body_leaves_it_as_it_is(name: str) -> None:
    body, code = UNFIXABLE[name]
    provider = providers.get(name)
    assert [p.code for p in provider.check(body)] == [code]
    repaired = provider.repair_body(body)
    assert not repaired.changed and repaired.rewritten == []
    assert json.dumps(repaired.body) == json.dumps(body)
    assert all(a is b for a, b in zip(repaired.body[provider.list_key], body[provider.list_key], strict=True))
    assert provider.repair_fixes(body) == []


MODELS = {"anthropic": "claude-sonnet-4-5", "bedrock": "us.amazon.nova-micro-v1:0", "gemini": "gemini-2.5-pro",
          "kimi": "kimi-k2", "mistral": "mistral-large-latest"}


def same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@examples(400)
@given(name=st.sampled_from(providers.names()), history=messy_histories(), broken=st.booleans(), data=st.data())
def test_an_item_equal_to_its_original_is_the_original(name: str, history: Any, broken: bool,
                                                       data: st.DataObject) -> None:
    """Any body, valid or broken anywhere: every output item that is the same JSON as the input's item at its place
    is that very object, not counted as rewritten; a body that comes back the same says it did not change."""
    provider = providers.get(name)
    try:
        body = provider.to_request(history, model=MODELS.get(name, "gpt-5"))
    except ChatmendError:
        return
    if broken:
        corrupt(data, [body[provider.list_key]])
    before = copy.deepcopy(body)
    try:
        repaired = provider.repair_body(body)
    except ChatmendError:
        return
    items, out = body[provider.list_key], repaired.body[provider.list_key]
    for k in range(min(len(items), len(out))):
        if same_json(out[k], items[k]):
            assert out[k] is items[k] and k not in repaired.rewritten, k
    if json.dumps(repaired.body) == json.dumps(before):
        assert not repaired.changed, repaired
    assert body == before  # the input is not mutated
