"""The dialects of the Chat adapter: each one's rules, in its words, and the upstream rules the routers apply."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall, providers
from chatmend.exceptions import ReadError, UnsupportedError
from chatmend.providers import deepseek, groq, ollama, openai_chat, openrouter, together, vllm, xai
from chatmend.providers.base import Dropped
from tests.providers.chat_helpers import completion
from tests.providers.common import sendable_body, writable
from tests.strategies import PNG, examples, messy_histories

DIALECTS = ("deepseek", "groq", "ollama", "openrouter", "together", "vllm", "xai")
LONG_ID = "toolu_" + "x" * 50


def user(content: Any) -> ChatMessage:
    return ChatMessage(role="user", content=content)


def assistant(content: Any = "", *calls: ToolCall) -> ChatMessage:
    return ChatMessage(role="assistant", content=content, tool_calls=calls)


def tool(call_id: str, content: str = "ok") -> ChatMessage:
    return ChatMessage(role="tool", tool_call_id=call_id, content=content)


def call(call_id: str, name: str = "search") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments={"q": "x"})


LOOP = [user("go"), assistant("", call("c1"), call("c2")), tool("c1"), tool("c2"), user("thanks")]


def codes(problems: list[Any]) -> list[str]:
    return [p.code for p in problems]


@pytest.mark.parametrize("name", DIALECTS)
def test_every_dialect_is_registered_speaks_chat_and_names_itself_in_its_problems(name: str) -> None:
    provider = providers.get(name)
    assert provider.shape_of == "openai_chat" and provider.name == name
    body = provider.to_request(LOOP, model="test-model")
    assert provider.check(body) == []
    del body["messages"][3]  # the result of c2
    problems = provider.check(body)
    assert problems and all(p.provider == name and p.message for p in problems)


# ------------------------------------------------------------------------------------------------- deepseek


def test_deepseek_takes_no_image_anywhere_ds7() -> None:
    image = ImagePart(media_type="image/png", data=PNG)
    history = [user((TextPart(text="see"), image)), *LOOP[1:]]
    with pytest.raises(UnsupportedError) as error:
        deepseek.to_request(history, model="deepseek-v4-flash")
    assert error.value.path == "messages[0].content[1]" and error.value.feature == "image"
    dropped: list[Dropped] = []
    body = deepseek.to_request(history, model="deepseek-v4-flash", on_unsupported=dropped.append)
    assert [d.path for d in dropped] == ["messages[0].content[1]"]
    assert deepseek.check(body) == [] and "image_url" not in json.dumps(body)
    # what Chat would send (an image in a user turn, one in a tool result moved to a user turn) is a 400 here
    chat = openai_chat.to_request([user((TextPart(text="see"), image)), *LOOP[1:]], model="gpt-4o")
    problems = deepseek.check(chat)
    assert [(p.code, p.path, p.message) for p in problems] == [(
        "DS7", "messages[0].content[1]", "Failed to deserialize the JSON body into the target type: messages[0]: "
        "unknown variant `image_url`, expected `text`")]
    chat["messages"][2]["content"] = [{"type": "input_audio", "input_audio": {"data": "AA==", "format": "wav"}}]
    assert [p.path for p in deepseek.check(chat)] == ["messages[0].content[1]", "messages[2].content[0]"]


def test_deepseek_repair_body_mends_pairing_and_leaves_images_to_the_provider() -> None:
    chat = openai_chat.to_request([user((TextPart(text="see"), ImagePart(media_type="image/png", data=PNG))),
                                   *LOOP[1:]], model="deepseek-v4-flash")
    valid = deepseek.PROVIDER.repair_body(chat)
    assert not valid.changed and valid.body == chat and valid.rewritten == []  # DS7 alone: nothing to write
    broken = {**chat, "messages": chat["messages"][:2]}  # the call's result lost
    repaired = deepseek.PROVIDER.repair_body(broken)
    assert repaired.body["messages"][0] is broken["messages"][0]  # the image's message kept as it came
    assert codes(deepseek.check(repaired.body)) == ["DS7"]


def test_deepseek_passes_reasoning_back_on_every_call_turn() -> None:
    history = [user("go"), assistant((ThinkingPart(text="plan", provider="deepseek"), TextPart(text="ok")),
                                     call("c1")), tool("c1"), user("more"), assistant("", call("c2")), tool("c2")]
    body = deepseek.to_request(history, model="deepseek-v4-pro", thinking={"type": "enabled"})
    assert body["messages"][1]["reasoning_content"] == "plan"
    assert body["messages"][4]["reasoning_content"] == ""  # DS3: no thinking to give back, yet the field is there
    assert deepseek.check(body) == []
    reply = deepseek.from_response(completion("deepseek-v4-pro", {
        "role": "assistant", "content": "", "reasoning_content": "why", "tool_calls": [
            {"id": "call_00_ab", "type": "function", "function": {"name": "search", "arguments": "{}"}}]}, 1))
    assert reply.content == (ThinkingPart(text="why", provider="deepseek"),)


def test_deepseek_ds3_missing_reasoning_content_in_thinking_mode_only() -> None:
    body = deepseek.to_request(LOOP, model="deepseek-v4-pro")
    del body["messages"][1]["reasoning_content"]
    assert deepseek.check(body) == []  # thinking not on: past reasoning is ignored
    problems = deepseek.check({**body, "thinking": {"type": "enabled"}})
    assert codes(problems) == ["DS3"]
    assert problems[0].message.startswith(
        "Missing `reasoning_content` field in the assistant message at message index 1.")
    assert codes(deepseek.check({**body, "model": "deepseek-reasoner"})) == ["DS3"]  # a reasoner always thinks


def test_deepseek_words_ds1_ds2_and_refuses_empty_ids() -> None:
    body = deepseek.to_request(LOOP, model="deepseek-v4-flash")
    unanswered = {**body, "messages": [m for k, m in enumerate(body["messages"]) if k != 3]}
    assert [p.message for p in deepseek.check(unanswered)] == [deepseek.PROVIDER.texts["DS1"]]
    orphan = {**body, "messages": [body["messages"][0], {"role": "tool", "tool_call_id": "x", "content": "r"}]}
    assert [p.message for p in deepseek.check(orphan)] == [
        "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"]
    empty = json.loads(json.dumps(body).replace('"c1"', '""'))
    assert codes(deepseek.check(empty)).count("DS6e") == 2  # the call's id and its tool_call_id
    missing = json.loads(json.dumps(body))
    del missing["messages"][1]["tool_calls"][0]["id"]
    assert "DS6" in codes(deepseek.check(missing))


# ----------------------------------------------------------------------------------------------------- groq


def test_groq_assistant_content_is_always_a_string() -> None:
    body = groq.to_request(LOOP, model="llama-3.3-70b-versatile")
    assert body["messages"][1]["content"] == ""  # a call turn without text: "" where OpenAI sends null
    assert groq.check(body) == []
    body["messages"][1]["content"] = None
    problems = groq.check(body)
    assert [p.message for p in problems] == [
        "'messages.1' : for 'role:assistant' the following must be satisfied[('messages.1.content' : value must be "
        "a string)]"]
    system = {"model": "m", "messages": [{"role": "system", "content": [{"type": "text", "text": "s"}]},
                                         {"role": "user", "content": "hi"}]}
    assert "for 'role:system'" in groq.check(system)[0].message


# ------------------------------------------------------------------------------------------------------ xai


@pytest.mark.parametrize("content", [None, [], "missing"])
def test_xai_every_message_has_content(content: Any) -> None:
    body = xai.to_request(LOOP, model="grok-4")
    assert body["messages"][1]["content"] == ""
    assert xai.check(body) == []
    if content == "missing":
        del body["messages"][1]["content"]
    else:
        body["messages"][1]["content"] = content
    assert [p.message for p in xai.check(body)] == [
        "Invalid request content: Each message must have at least one content element."]


# ------------------------------------------------------------------------------------------------- together


def test_together_every_call_of_a_group_is_answered_before_anything_else() -> None:
    body = together.to_request(LOOP, model="meta-llama/Llama-3.3-70B-Instruct-Turbo")
    assert together.check(body) == []
    steer_between = {**body, "messages": [*body["messages"][:3], {"role": "user", "content": "wait"},
                                          body["messages"][3]]}
    problems = together.check(steer_between)
    assert codes(problems) == ["TG1", "OC2"]
    assert all(p.message.startswith("Input validation error") for p in problems)
    assert "unanswered: c2" in problems[0].message


# ----------------------------------------------------------------------------------------------- openrouter


def test_openrouter_writes_and_checks_by_the_upstreams_rules() -> None:
    history = [user("go"), assistant("", ToolCall(id=LONG_ID, name="search")), tool(LONG_ID)]
    body = openrouter.to_request(history, model="mistralai/mistral-large-2411")
    assert body == providers.get("mistral").to_request(history, model="mistralai/mistral-large-2411")
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", body["messages"][1]["tool_calls"][0]["id"])  # MI1
    assert openrouter.check(body) == []
    chat_body = providers.get("openai_chat").to_request([user("go"), assistant("", call("a1b2c3d4e"))],
                                                        model="mistralai/mistral-large-2411")
    chat_body["messages"][1]["tool_calls"][0]["id"] = "call_1"
    problems = openrouter.check(chat_body)
    assert "MI1" in codes(problems) and all(p.provider == "openrouter" for p in problems)
    kimi = openrouter.to_request(history, model="moonshotai/kimi-k2")
    assert kimi["messages"][1]["tool_calls"][0]["id"] == "functions.search:0"


def test_openrouter_other_vendors_get_openais_rules() -> None:
    history = [user("go"), assistant("", ToolCall(id=LONG_ID, name="search")), tool(LONG_ID)]
    body = openrouter.to_request(history, model="openai/gpt-4o")
    assert len(body["messages"][1]["tool_calls"][0]["id"]) <= 40  # OC5
    body["messages"][1]["tool_calls"][0]["id"] = body["messages"][2]["tool_call_id"] = LONG_ID
    assert codes(openrouter.check(body)) == ["OC5"]
    assert codes(openrouter.check(body, model="anthropic/claude-sonnet-4")) == ["OC5"]


@pytest.mark.parametrize(("error", "says"), [
    ({"message": "Provider returned error", "code": 400, "metadata": {
        "raw": json.dumps({"error": {"message": "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length "
                                                "of 9."}}), "provider_name": "Mistral"}},
     "from Mistral: Tool call id was call_1"),
    ({"message": "Provider returned error", "code": 429, "metadata": {"raw": "rate-limited upstream",
                                                                      "provider_name": "BaseTen"}},
     "from BaseTen: rate-limited upstream"),
    ({"message": "No auth credentials found", "code": 401}, "'No auth credentials found'"),
])
def test_openrouter_reads_its_error_wrapper(error: dict[str, Any], says: str) -> None:
    with pytest.raises(ReadError) as raised:
        openrouter.from_response({"error": error, "user_id": "user_1"})
    assert raised.value.provider == "openrouter" and says in raised.value.reason
    assert openrouter.from_response(completion("m", {"role": "assistant", "content": "ok"}, 1)).content == "ok"


# ----------------------------------------------------------------------------------------------------- vllm


def test_vllm_mistral_and_kimi_models_by_their_templates_others_without_an_id_limit() -> None:
    history = [user("go"), assistant("", ToolCall(id=LONG_ID, name="search")), tool(LONG_ID), user("and?")]
    mistral_body = vllm.to_request(history, model="mistralai/Mistral-Small-3.2-24B-Instruct-2506")
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", mistral_body["messages"][1]["tool_calls"][0]["id"])
    assert vllm.check(mistral_body) == []
    broken = json.loads(json.dumps(mistral_body))
    broken["messages"][1]["tool_calls"][0]["id"] = broken["messages"][2]["tool_call_id"] = "call_1"
    assert "MI1" in codes(vllm.check(broken))
    kimi_body = vllm.to_request(history, model="moonshotai/Kimi-K2-Instruct")
    assert kimi_body["messages"][1]["tool_calls"][0]["id"] == "functions.search:0"
    plain = vllm.to_request(history, model="Qwen/Qwen3-32B")
    assert plain["messages"][1]["tool_calls"][0]["id"] == LONG_ID  # vLLM sets no id limit
    assert vllm.check(plain) == []


# --------------------------------------------------------------------------------------------------- ollama


def test_ollama_images_inline_only_and_tool_content_a_string() -> None:
    history = [user((TextPart(text="see"), ImagePart(url="https://example.com/cat.png"),
                     ImagePart(media_type="image/png", data=PNG)))]
    body = ollama.to_request(history, model="llama3.2")
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "see"}, {"type": "text", "text": "Image at https://example.com/cat.png"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]
    assert ollama.check(body) == []
    body["messages"][0]["content"][1] = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    body["messages"][0]["content"][2]["image_url"]["url"] = "data:image/gif;base64,R0lG"
    problems = ollama.check(body)
    assert [p.message for p in problems] == [
        "image URLs are not currently supported, please use base64 encoded data instead", "invalid image input"]
    loop = ollama.to_request(LOOP, model="llama3.2")
    loop["messages"][1]["tool_calls"][0]["function"]["arguments"] = {"q": "x"}
    loop["messages"][2]["content"] = [{"type": "text", "text": "ok"}]
    assert codes(ollama.check(loop)) == ["OL2", "OL3"]


# ----------------------------------------------------------------------------------- generated histories


UPSTREAM_MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "deepseek": ("deepseek-v4-pro", {"thinking": {"type": "enabled"}}),
    "openrouter": ("mistralai/mistral-large-2411", {}),
    "vllm": ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", {}),
    "groq": ("llama-3.3-70b-versatile", {}),
    "xai": ("grok-4", {}),
    "ollama": ("llama3.2", {}),
}


@pytest.mark.parametrize("name", sorted(UPSTREAM_MODELS))
@examples(40)
@given(history=messy_histories())
def test_bodies_for_each_dialects_own_rules_pass_its_check(name: str, history: list[ChatMessage]) -> None:
    # the matrix runs every dialect with a model of no special rules; here each one's rules are on
    model, options = UPSTREAM_MODELS[name]
    provider = providers.get(name)
    history = writable(provider, history)
    body = sendable_body(provider, history, model=model, **options)  # nothing to send: no body (#21)
    assert provider.check(body) == []
    assert provider.to_request(history, model=model, **options) == body
