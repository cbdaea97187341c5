"""The model-dependent rules of Bedrock Converse: BR9 (some models take no other block beside tool blocks in one
turn) and BR10 (a Claude model adds Anthropic's rules), in `check` and in what `to_request` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, ThinkingPart, providers
from chatmend.providers import bedrock as adapter
from chatmend.providers.bedrock.wire import ASSISTANT_FILLER, USER_FILLER, model_family
from chatmend.repair import is_placeholder
from tests.providers.common import body_or_none, sendable_body
from tests.providers.test_bedrock import assert_botocore_accepts, assistant, call, tool, user
from tests.strategies import examples, messy_histories

LLAMA = "us.meta.llama4-maverick-17b-instruct-v1:0"
CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"
NOVA = "amazon.nova-micro-v1:0"

# a steer typed while the tools ran: results and the user's words share the user turn; a call with its text
STEER = [user("go"), assistant("Looking.", call("functions.search:0")), tool("functions.search:0", "found"),
         user("and the weather?")]


def codes(problems: list[Any]) -> list[str]:
    return [p.code for p in problems]


@pytest.mark.parametrize(("model", "family"), [
    (LLAMA, "unmixed"), ("meta.llama3-1-70b-instruct-v1:0", "unmixed"), (CLAUDE, "claude"),
    ("anthropic.claude-3-haiku-20240307-v1:0", "claude"),
    ("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0", "claude"),
    (NOVA, None), ("mistral.mistral-large-2407-v1:0", None), (None, None)])
def test_model_family(model: str | None, family: str | None) -> None:
    assert model_family(model) == family


def test_br9_check_names_mixed_turns_only_for_the_models_that_refuse_them() -> None:
    body = adapter.to_request(STEER, model=NOVA)
    assert [len(m["content"]) for m in body["messages"]] == [1, 2, 2]  # text+call, result+words
    assert adapter.check(body) == [] and adapter.check(body, model=NOVA) == []
    problems = adapter.check(body, model=LLAMA)
    assert [(p.code, p.path, p.message) for p in problems] == [
        ("BR9u", "messages[1].content",
         "messages.1.content: Conversation blocks and tool use blocks cannot be provided in the same turn."),
        ("BR9", "messages[2].content",
         "messages.2.content: Conversation blocks and tool result blocks cannot be provided in the same turn.")]
    assert codes(adapter.check({**body, "modelId": LLAMA})) == ["BR9u", "BR9"]  # a saved request names its model


def test_br9_to_request_splits_mixed_turns_around_fillers() -> None:
    body = adapter.to_request(STEER, model=LLAMA)
    assert [(m["role"], [next(iter(b)) for b in m["content"]]) for m in body["messages"]] == [
        ("user", ["text"]), ("assistant", ["text"]), ("user", ["text"]), ("assistant", ["toolUse"]),
        ("user", ["toolResult"]), ("assistant", ["text"]), ("user", ["text"])]
    assert body["messages"][2]["content"] == [{"text": USER_FILLER}]
    assert body["messages"][5]["content"] == [{"text": ASSISTANT_FILLER}]
    assert adapter.check(body, model=LLAMA) == []
    assert_botocore_accepts(body)


def test_br9_repair_body_of_the_models_adapter_mends_a_mixed_turn() -> None:
    body = adapter.to_request(STEER, model=NOVA)
    llama = adapter.PROVIDER.for_model(LLAMA)
    repaired = llama.repair_body(body)
    assert adapter.check(repaired.body, model=LLAMA) == []
    # the mixed turns break no pairing: the base writes the list anew, as to_request writes it for the model
    assert repaired.body["messages"] == adapter.to_request(STEER, model=LLAMA)["messages"]
    assert "and the weather?" in json.dumps(repaired.body)


def test_for_model_is_the_adapter_itself_where_a_providers_models_share_their_rules() -> None:
    # the proxy calls `for_model` on every adapter a route names a model for; only Bedrock chooses
    for name in providers.names():
        chosen = providers.get(name).for_model(LLAMA)
        assert (chosen is providers.get(name)) is (name != "bedrock")
    assert adapter.PROVIDER.for_model(LLAMA).family == "unmixed"


def test_br10_claude_ids_are_anthropics_and_checked_in_bedrocks_wrapper() -> None:
    loose = adapter.to_request(STEER, model=NOVA)
    assert loose["messages"][1]["content"][1]["toolUse"]["toolUseId"] == "functions.search:0"  # botocore's pattern
    problems = adapter.check(loose, model=CLAUDE)
    assert [(p.code, p.path, p.message) for p in problems] == [(
        "BR10", "messages[1].content[1].toolUse.toolUseId",
        "The model returned the following errors: messages.1.content.1.tool_use.id: String should match pattern "
        "'^[a-zA-Z0-9_-]+$'")]
    strict = adapter.to_request(STEER, model=CLAUDE)
    wire_id = strict["messages"][1]["content"][1]["toolUse"]["toolUseId"]
    assert ":" not in wire_id and "." not in wire_id
    assert strict["messages"][2]["content"][0]["toolResult"]["toolUseId"] == wire_id
    assert adapter.check(strict, model=CLAUDE) == []


def test_br10_thinking_on_needs_the_last_tool_turn_to_open_with_its_reasoning() -> None:
    fields = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    history = [user("go"), assistant("", call("a")), tool("a", "1")]
    body = adapter.to_request(history, model=CLAUDE, additionalModelRequestFields=fields)
    problems = adapter.check(body, model=CLAUDE)
    assert codes(problems) == ["BR10"] and problems[0].path == "messages[1].content[0]"
    assert problems[0].message.startswith("The model returned the following errors: messages.1.content.0.type: "
                                          "Expected `thinking` or `redacted_thinking`, but found `tool_use`.")
    assert adapter.check(body, model=NOVA) == [] and adapter.check(body, model=CLAUDE[:-1] + "x") != []
    thought = ChatMessage(role="assistant", content=(ThinkingPart(text="plan", signature="c2ln", provider="bedrock"),),
                          tool_calls=(call("a"),))
    with_reasoning = adapter.to_request([user("go"), thought, tool("a", "1")], model=CLAUDE,
                                        additionalModelRequestFields=fields)
    assert adapter.check(with_reasoning, model=CLAUDE) == []
    off = adapter.to_request(history, model=CLAUDE, additionalModelRequestFields={"thinking": {"type": "disabled"}})
    assert adapter.check(off, model=CLAUDE) == []


@pytest.mark.parametrize("model", [LLAMA, CLAUDE])
@examples(60)
@given(history=messy_histories())
def test_bodies_written_for_a_model_pass_its_check_and_botocore(model: str, history: list[ChatMessage]) -> None:
    provider = providers.get("bedrock")
    body = sendable_body(provider, history, model=model)
    assert provider.check(body, model=model) == []
    assert_botocore_accepts(body)
    assert provider.to_request(history, model=model) == body


@examples(60)
@given(history=messy_histories())
def test_a_split_body_is_prefix_stable(history: list[ChatMessage]) -> None:
    provider = providers.get("bedrock")
    full = sendable_body(provider, history, model=LLAMA)["messages"]
    for i, message in enumerate(history):
        if message.role == "assistant" and not is_placeholder(message):
            shorter = (body_or_none(provider, history[:i], model=LLAMA) or {}).get("messages", [])
            assert full[: len(shorter)] == shorter


def test_the_command_line_checks_and_writes_for_the_model(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from chatmend.cli import main

    path = tmp_path / "converse.json"
    path.write_text(json.dumps(adapter.to_request(STEER, model=NOVA)))
    assert main(["check", str(path)]) == 0
    assert main(["check", "--model", LLAMA, str(path)]) == 1
    assert "BR9: messages.2.content: Conversation blocks and tool result blocks" in "".join(capsys.readouterr())
