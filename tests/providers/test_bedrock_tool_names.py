"""Bedrock tool names (BR12, issue #43 item 6): a name Converse refuses is mapped, deterministically and
collision-free, alike in `toolConfig` and every `toolUse`; `check` flags one that does not fit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, Tool, ToolCall
from chatmend.providers import bedrock as adapter
from chatmend.providers.bedrock.names import wire_names
from chatmend.providers.bedrock.wire import TOOL_NAME
from tests.providers.test_bedrock import assert_botocore_accepts
from tests.strategies import examples

MODEL = "us.amazon.nova-micro-v1:0"
ODD_NAMES = ["mcp__weather.get/city", "weather get", "weather.get", "weather_get", "x" * 80, "x" * 81, "é", "a.b",
             "a/b", "a_b"]

names = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=90)


def history_calling(*tool_names: str) -> list[ChatMessage]:
    """A user question, one assistant turn calling each tool, and their results."""
    calls = tuple(ToolCall(id=f"c{k}", name=name, arguments={"k": k}) for k, name in enumerate(tool_names))
    return [ChatMessage(role="user", content="go"), ChatMessage(role="assistant", content="", tool_calls=calls),
            *(ChatMessage(role="tool", tool_call_id=c.id, content="ok") for c in calls)]


def spec_names(body: dict[str, Any]) -> list[str]:
    return [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]]


def use_names(body: dict[str, Any]) -> list[str]:
    return [b["toolUse"]["name"] for m in body["messages"] for b in m["content"] if "toolUse" in b]


# ------------------------------------------------------------------------------------------------ the map


def test_a_fitting_name_is_kept_and_another_is_mapped_to_one_that_fits() -> None:
    mapped = wire_names(ODD_NAMES)
    assert mapped["weather_get"] == "weather_get" and mapped["a_b"] == "a_b"
    assert mapped["weather.get"].startswith("weather_get_") and len(mapped["weather.get"]) == len("weather_get_") + 10
    assert len(mapped["x" * 80]) == 64 and mapped["x" * 80] != mapped["x" * 81]
    assert all(TOOL_NAME.fullmatch(v) for v in mapped.values())
    assert len(set(mapped.values())) == len(ODD_NAMES)


@given(st.lists(names, max_size=12))
def test_the_map_is_deterministic_collision_free_and_fits(given_names: list[str]) -> None:
    mapped = wire_names(given_names)
    assert set(mapped) == set(given_names)
    assert all(TOOL_NAME.fullmatch(v) for v in mapped.values())
    assert len(set(mapped.values())) == len(mapped)  # two names never map to one
    assert all(mapped[n] == n for n in given_names if TOOL_NAME.fullmatch(n))
    assert wire_names(given_names) == mapped
    for name in given_names:  # a name alone maps as it does among others (prefix stability), clashes aside
        if not any(mapped[name] == other for other in given_names if other != name):
            assert wire_names([name])[name] == mapped[name]


def test_a_clash_with_a_fitting_name_takes_another_digest() -> None:
    taken = wire_names(["a.b"])["a.b"]
    mapped = wire_names([taken, "a.b"])
    assert mapped[taken] == taken and mapped["a.b"] != taken and TOOL_NAME.fullmatch(mapped["a.b"])


# ------------------------------------------------------------------------------------------------ to_request


def test_to_request_maps_names_alike_in_tool_config_and_every_tool_use() -> None:
    tools = [Tool(name=n) for n in ODD_NAMES]
    body = adapter.to_request(history_calling(*ODD_NAMES, "weather.get"), model=MODEL, tools=tools)
    mapped = wire_names(ODD_NAMES)
    assert spec_names(body) == [mapped[n] for n in ODD_NAMES]
    assert use_names(body) == [mapped[n] for n in [*ODD_NAMES, "weather.get"]]
    assert adapter.check(body) == []
    assert_botocore_accepts(body)
    # read back, the body gives the names it holds: those Bedrock sees
    assert [c.name for m in adapter.from_request(body) for c in m.tool_calls] == use_names(body)


def test_the_tools_a_history_called_are_declared_under_the_mapped_names() -> None:
    body = adapter.to_request(history_calling("mcp.fs/read", "ok_name"), model=MODEL)
    assert spec_names(body) == use_names(body) == [wire_names(["mcp.fs/read"])["mcp.fs/read"], "ok_name"]
    assert adapter.check(body) == []


def test_a_callers_own_tool_config_is_renamed_alike() -> None:
    config: dict[str, Any] = {"tools": [{"toolSpec": {"name": "fs.read", "inputSchema": {"json": {"type": "object"}}}}],
              "toolChoice": {"tool": {"name": "fs.read"}}}
    body = adapter.to_request(history_calling("fs.read"), model=MODEL, toolConfig=config)
    wire = wire_names(["fs.read"])["fs.read"]
    assert spec_names(body) == use_names(body) == [wire]
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": wire}}
    assert config["tools"][0]["toolSpec"]["name"] == "fs.read"  # the caller's dict is not edited
    assert adapter.check(body) == []


@examples(60)
@given(st.lists(names, min_size=1, max_size=5))
def test_every_body_written_holds_only_names_converse_takes(called: list[str]) -> None:
    tools = [Tool(name=n) for n in dict.fromkeys(called)]
    body = adapter.to_request(history_calling(*called), model=MODEL, tools=tools)
    assert not [p for p in adapter.check(body) if p.code == "BR12"]
    assert set(use_names(body)) <= set(spec_names(body))
    assert len(set(spec_names(body))) == len(dict.fromkeys(called))


class _Client:
    """A boto3 `bedrock-runtime` client stand-in: records the call, answers with a call under the wire name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: dict[str, Any] = {}

    def converse(self, **params: Any) -> dict[str, Any]:
        self.sent = params
        return {"output": {"message": {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t9", "name": self.name, "input": {}}}]}}, "stopReason": "tool_use"}


def test_send_gives_the_reply_s_calls_back_under_the_callers_names() -> None:
    wire = wire_names(["fs.read"])["fs.read"]
    client = _Client(wire)
    reply = adapter.send(client, [ChatMessage(role="user", content="read it")], model=MODEL,
                         tools=[Tool(name="fs.read")])
    assert client.sent["toolConfig"]["tools"][0]["toolSpec"]["name"] == wire
    assert [c.name for c in reply.tool_calls] == ["fs.read"]


# ------------------------------------------------------------------------------------------------ the CLI


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "chatmend", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


CHAT_BODY = {"model": "gpt-4o", "messages": [
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "mcp__weather.get/city",
                                                          "arguments": "{\"city\": \"Rome\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]}


def test_convert_to_bedrock_writes_names_bedrock_takes_and_check_passes_it(tmp_path: Path) -> None:
    (tmp_path / "chat.json").write_text(json.dumps(CHAT_BODY), encoding="utf-8")
    done = run("convert", "--to", "bedrock", "chat.json", "-o", "bedrock.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    body = json.loads((tmp_path / "bedrock.json").read_text(encoding="utf-8"))
    wire = wire_names(["mcp__weather.get/city"])["mcp__weather.get/city"]
    assert spec_names(body) == use_names(body) == [wire]
    checked = run("check", "bedrock.json", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_check_flags_a_tool_name_bedrock_refuses_in_spec_and_use(tmp_path: Path) -> None:
    body = {"messages": [
        {"role": "user", "content": [{"text": "Weather?"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "weather.get", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}]}}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "weather.get", "inputSchema": {"json": {"type": "object"}}}}]}}
    (tmp_path / "body.json").write_text(json.dumps(body), encoding="utf-8")
    done = run("check", "body.json", cwd=tmp_path)
    assert done.returncode == 1
    assert "toolConfig.tools[0].toolSpec.name: BR12" in done.stdout
    assert "messages[1].content[0].toolUse.name: BR12" in done.stdout
    assert "Value 'weather.get' at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy constraint: Member " \
           "must satisfy regular expression pattern: [a-zA-Z0-9_-]+" in done.stdout
