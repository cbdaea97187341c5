"""`repair` of a body it leaves as it is says "nothing to repair" (issue #44 item 6): a Bedrock body whose only
problem is one no repair makes (a tool name Converse refuses, BR12, kept in a body's own list) was written anew,
item for item equal, and reported "repaired ... wrote 3 items anew"."""

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

from chatmend.providers import bedrock
from tests.strategies import examples, valid_histories

MODEL = "us.amazon.nova-micro-v1:0"
BODY: dict[str, Any] = {
    "messages": [
        {"role": "user", "content": [{"text": "Weather?"}]},
        {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "Need the tool.", "signature": "c2ln"}}},
            {"toolUse": {"toolUseId": "t1", "name": "weather.get", "input": {"city": "Rome"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}]}}]}],
    "toolConfig": {"tools": [{"toolSpec": {"name": "weather.get", "inputSchema": {"json": {"type": "object"}}}}]},
}


def variants() -> list[dict[str, Any]]:
    """The body as it is, with a cache point (a block of no plain shape), and with a model named."""
    cached = copy.deepcopy(BODY)
    cached["messages"][0]["content"].append({"cachePoint": {"type": "default"}})
    return [BODY, cached, {"modelId": MODEL, **BODY}]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "chatmend", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("body", variants())
@pytest.mark.parametrize("indent", [None, 1, 4])
def test_repair_says_nothing_to_repair_and_writes_the_same_bytes(tmp_path: Path, body: dict[str, Any],
                                                                  indent: int | None) -> None:
    source = tmp_path / "body.json"
    source.write_text(json.dumps(body, indent=indent) + "\n", encoding="utf-8")
    done = run("repair", "body.json", "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "body.json: nothing to repair (3 messages)\n"
    assert (tmp_path / "out.json").read_bytes() == source.read_bytes()
    checked = run("check", "body.json", cwd=tmp_path)
    assert checked.returncode == 1 and "BR12" in checked.stdout and "cannot fix them" in checked.stderr


@pytest.mark.parametrize("body", variants())
def test_repair_body_leaves_it_as_it_is(body: dict[str, Any]) -> None:
    repaired = bedrock.PROVIDER.repair_body(body)
    assert not repaired.changed and repaired.rewritten == []
    assert repaired.body == body
    assert all(a is b for a, b in zip(repaired.body["messages"], body["messages"]))
    assert bedrock.PROVIDER.repair_fixes(body) == []


@examples(60)
@given(valid_histories(), st.booleans(), st.data())
def test_a_valid_body_with_a_refused_tool_name_is_left_as_it_is(history: Any, named: bool, data: st.DataObject) -> None:
    """Any body Bedrock would take but for its tool names (renamed to names with a dot) comes back unchanged."""
    body = bedrock.to_request(history, model=MODEL)
    uses = [b["toolUse"] for m in body["messages"] for b in m["content"] if "toolUse" in b]
    if not uses:
        return
    for use in uses:
        use["name"] = use["name"] + ".v1"
    for tool in body["toolConfig"]["tools"]:
        tool["toolSpec"]["name"] += ".v1"
    if named:
        body["modelId"] = MODEL
    if data.draw(st.booleans()):
        body["messages"][0]["content"].append({"cachePoint": {"type": "default"}})
    before = copy.deepcopy(body)
    repaired = bedrock.PROVIDER.repair_body(body)
    assert not repaired.changed, repaired.rewritten
    assert repaired.body == before
