"""Gemini generateContent: exact bodies, SDK types, check() per rule, reading, the SDK on a local server."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st

from chatmend import (
    ChatMessage,
    ImagePart,
    ReadError,
    TextPart,
    ThinkingPart,
    ToolCall,
    UnsupportedError,
    repair_history,
)
from chatmend.providers import gemini as ge
from chatmend.providers.gemini import BRIDGE_TEXT, PROVIDER, SKIP_SIGNATURE
from chatmend.repair import is_placeholder
from tests.providers.common import body_or_none, problems_after, sendable_body, texts_and_images
from tests.providers.local_server import serve
from tests.strategies import examples, messy_histories

EXAMPLE = Path(__file__).parents[2] / "examples" / "requests" / "gemini.json"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
SIG_CALL = "CiQBDDnWx8TW+/call/sig=="
SIG_THOUGHT = "EqQBthought/sig+AA=="
SIG_TEXT = "Cg0IAhIJdGV4dC1zaWc="
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
FLASH = "gemini-2.5-flash"
PRO3 = "gemini-3-pro-preview"


def agent_history() -> list[ChatMessage]:
    """A coding agent's turn as Gemini answered it: a thought, parallel calls, an image result, a steer."""
    return [
        ChatMessage(role="system", content="You are a coding agent."),
        ChatMessage(
            role="user",
            content=(TextPart(text="Why is login broken?"), ImagePart(url="https://example.com/bug.png")),
        ),
        ChatMessage(
            role="assistant",
            content=(ThinkingPart(text="Look at the page first.", signature=SIG_THOUGHT, provider="gemini"),),
            tool_calls=(
                ToolCall(
                    id="call_0",
                    name="screenshot",
                    arguments={"url": "/login"},
                    provider_data={"gemini": {"thoughtSignature": SIG_CALL}},
                ),
                ToolCall(id="call_1", name="read_file", arguments="login.css"),
            ),
        ),
        ChatMessage(role="tool", tool_call_id="call_1", content="ENOENT", is_error=True),
        ChatMessage(role="user", content="hurry up"),
        ChatMessage(
            role="tool",
            tool_call_id="call_0",
            tool_name="screenshot",
            content=(TextPart(text="390x844"), ImagePart(media_type="image/png", data=PNG)),
        ),
        ChatMessage(
            role="assistant",
            content=(
                ThinkingPart(signature=SIG_TEXT, provider="gemini"),
                TextPart(text="The form is too wide."),
            ),
        ),
        ChatMessage(role="system", content="Answer in one line."),
        ChatMessage(
            role="assistant",
            tool_calls=(ToolCall(id="call_0", name="read_file", arguments={"path": "form.css"}),),
        ),
    ]


EXPECTED_CONTENTS: list[dict[str, Any]] = [
    {
        "role": "user",
        "parts": [
            {"text": "Why is login broken?"},
            {"fileData": {"mimeType": "image/png", "fileUri": "https://example.com/bug.png"}},
        ],
    },
    {
        "role": "model",
        "parts": [
            {"text": "Look at the page first.", "thought": True, "thoughtSignature": SIG_THOUGHT},
            {
                "functionCall": {"id": "call_0", "name": "screenshot", "args": {"url": "/login"}},
                "thoughtSignature": SIG_CALL,
            },
            {"functionCall": {"id": "call_1", "name": "read_file", "args": {"_raw": "login.css"}}},
        ],
    },
    {
        "role": "user",
        "parts": [
            {"functionResponse": {"id": "call_0", "name": "screenshot", "response": {"output": "390x844"}}},
            {"functionResponse": {"id": "call_1", "name": "read_file", "response": {"error": "ENOENT"}}},
            {"text": "Images from tool result call_0:"},
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            {"text": "hurry up"},
        ],
    },
    {"role": "model", "parts": [{"text": "The form is too wide.", "thoughtSignature": SIG_TEXT}]},
    {"role": "user", "parts": [{"text": "Answer in one line."}]},
    {
        "role": "model",
        "parts": [{"functionCall": {"id": "call_0_1", "name": "read_file", "args": {"path": "form.css"}}}],
    },
    {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "id": "call_0_1",
                    "name": "read_file",
                    "response": {
                        "error": (
                            "Interrupted: the call to read_file was cut off before it returned a result. "
                            "The tool may have partly run: check its effects before running it again."
                        )
                    },
                }
            }
        ],
    },
]


def test_exact_body_for_an_agent_turn() -> None:
    body = ge.to_request(
        agent_history(),
        model=FLASH,
        tools=[WEATHER_TOOL],
        system="Be brief.",
        temperature=0,
        max_output_tokens=512,
        tool_config={"functionCallingConfig": {"mode": "AUTO"}},
    )
    assert body == {
        "contents": EXPECTED_CONTENTS,
        "systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "You are a coding agent."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "get_weather",
                        "description": "Current weather for a city.",
                        "parametersJsonSchema": WEATHER_TOOL["parameters"],
                    }
                ]
            }
        ],
        "generationConfig": {"temperature": 0, "maxOutputTokens": 512},
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
    }
    assert ge.check(body) == []
    sdk_validate(body)


def test_gemini3_keeps_images_in_the_response_and_signs_unsigned_call_turns() -> None:
    contents = ge.to_request(agent_history(), model=PRO3)["contents"]
    assert contents[2]["parts"] == [
        {
            "functionResponse": {
                "id": "call_0",
                "name": "screenshot",
                "response": {"output": "390x844"},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}],
            }
        },
        {"functionResponse": {"id": "call_1", "name": "read_file", "response": {"error": "ENOENT"}}},
        {"text": "hurry up"},
    ]
    # GE4: the call turn that never had a signature (history from another model) gets the stand-in.
    assert contents[5]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE
    assert contents[1]["parts"][1]["thoughtSignature"] == SIG_CALL
    body = ge.to_request(agent_history(), model=PRO3)
    assert ge.check(body, model=PRO3) == []
    sdk_validate(body)
    unsigned = ge.to_request(agent_history(), model=PRO3, thought_signature_fallback=None)
    assert [p.code for p in ge.check(unsigned, model=PRO3)] == ["GE4"]
    assert ge.check(unsigned) == []  # without the model, GE4 cannot be told


def test_options_choose_multimodal_responses_and_vertex_drops_ids() -> None:
    body = ge.to_request(agent_history(), model=FLASH, multimodal_function_response=True, vertex=True)
    responses = [p["functionResponse"] for p in body["contents"][2]["parts"][:2]]
    assert "parts" in responses[0]
    for content in body["contents"]:
        for part in content["parts"]:
            for key in ("functionCall", "functionResponse"):
                assert "id" not in part.get(key, {})  # GE8
    assert ge.check(body, platform="vertex") == []
    with_ids = ge.to_request(agent_history(), model=FLASH)
    assert {p.code for p in ge.check(with_ids, platform="vertex")} == {"GE8"}


def test_bridge_turns_keep_turn_rules_without_merging() -> None:
    history = [
        ChatMessage(role="assistant", content="Resuming.", tool_calls=(ToolCall(id="a", name="shell"),)),
        ChatMessage(role="tool", tool_call_id="a", tool_name="shell", content="ok"),
        ChatMessage(role="assistant", content="Done."),
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="b", name="shell"),)),
        ChatMessage(role="tool", tool_call_id="b", tool_name="shell", content="ok"),
    ]
    contents = ge.to_request(history, model=FLASH)["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user", "model", "user"]
    assert contents[0] == contents[4] == {"role": "user", "parts": [{"text": BRIDGE_TEXT}]}
    assert ge.check({"contents": contents}) == []
    assert ge.from_request({"contents": contents}) == history
    assert ge.to_request([], model=FLASH)["contents"] == [{"role": "user", "parts": [{"text": BRIDGE_TEXT}]}]
    assert ge.from_request(ge.to_request([], model=FLASH)) == []
    alone = ge.to_request([], model=FLASH, system="Be brief.")
    assert ge.from_request(alone) == [ChatMessage(role="system", content="Be brief.")]  # the bridge is dropped
    # messages that all send nothing are refused, not sent as a bridge alone
    with pytest.raises(UnsupportedError, match="no messages to send"):
        ge.to_request([ChatMessage(role="user", content="")], model=FLASH)


def test_empty_parts_are_never_sent() -> None:
    history = [
        ChatMessage(role="user", content=""),
        ChatMessage(role="user", content=(TextPart(text=""),)),
        ChatMessage(
            role="assistant", content=(ThinkingPart(redacted=True, data="opaque", provider="anthropic"),)
        ),
        ChatMessage(
            role="assistant",
            content=(TextPart(text=""), ThinkingPart(signature="c2ln", provider="gemini")),
            tool_calls=(ToolCall(id="x", name="shell"),),
        ),
        ChatMessage(role="tool", tool_call_id="x", content=""),
    ]
    body = ge.to_request(history, model=FLASH)
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": BRIDGE_TEXT}]},
        {"role": "model", "parts": [{"functionCall": {"id": "x", "name": "shell", "args": {}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"id": "x", "name": "shell", "response": {"output": ""}}}],
        },
    ]
    assert ge.check(body) == []


def test_signatures_that_are_not_base64_are_not_sent() -> None:
    history = [
        ChatMessage(role="user", content="go"),
        ChatMessage(
            role="assistant",
            content=(ThinkingPart(text="t", signature="sig 1", provider="gemini"),),
            tool_calls=(ToolCall(id="x", name="shell", provider_data={"gemini": {"thoughtSignature": "a"}}),),
        ),
        ChatMessage(role="tool", tool_call_id="x", content="ok"),
    ]
    model = ge.to_request(history, model=FLASH)["contents"][1]
    assert model["parts"] == [
        {"text": "t", "thought": True},
        {"functionCall": {"id": "x", "name": "shell", "args": {}}},
    ]


# --- generated histories ---------------------------------------------------------------------------------

_CONTENT = types.Content.model_validate
_SETTINGS = examples(200)


def sdk_validate(body: dict[str, Any]) -> None:
    """Every content (and system instruction, tools, config) against google-genai's strict pydantic types."""
    for content in body["contents"]:
        validated = _CONTENT(content)
        assert validated.role in ("user", "model")
        assert validated.parts
    if "systemInstruction" in body:
        _CONTENT(body["systemInstruction"])
    for tool in body.get("tools", []):
        types.Tool.model_validate(tool)
    types.GenerateContentConfig.model_validate(PROVIDER.sdk_arguments(body, model=FLASH)["config"])


def _wire_strings(value: Any) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _wire_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _wire_strings(v)]
    return [value] if isinstance(value, str) else []


VARIANTS = [
    {"model": FLASH},
    {"model": PRO3},
    {"model": FLASH, "vertex": True},
    {"model": FLASH, "multimodal_function_response": True},
]


@_SETTINGS
@given(messy_histories(), st.sampled_from(VARIANTS))
def test_messy_histories_give_valid_sdk_typed_bodies(
    history: list[ChatMessage], opts: dict[str, Any]
) -> None:
    body = sendable_body(ge, history, **opts)
    model = None if "multimodal_function_response" in opts else opts["model"]  # forced on a 2.5 model
    assert ge.check(body, model=model, platform="vertex" if opts.get("vertex") else None) == []
    assert json.loads(json.dumps(body)) == body
    assert ge.to_request(history, **opts) == body
    sdk_validate(body)
    strings = " ".join(_wire_strings(body))
    texts, images = texts_and_images(repair_history(history).messages)
    for text in texts:
        assert text in strings
    for image in images:
        assert image in strings


@_SETTINGS
@given(messy_histories(), st.sampled_from(VARIANTS))
def test_wire_is_prefix_stable(history: list[ChatMessage], opts: dict[str, Any]) -> None:
    full = sendable_body(ge, history, **opts)["contents"]
    for i, message in enumerate(history):
        if message.role == "assistant" and not is_placeholder(message):
            shorter = body_or_none(ge, history[:i], **opts)  # None: that prefix has nothing to send
            assert shorter is None or full[: len(shorter["contents"])] == shorter["contents"], i


@_SETTINGS
@given(messy_histories(), st.sampled_from(VARIANTS))
def test_from_request_keeps_every_text_and_image(history: list[ChatMessage], opts: dict[str, Any]) -> None:
    body = sendable_body(ge, history, **opts)
    back = ge.from_request(body)
    texts, images = texts_and_images(back)
    want_texts, want_images = texts_and_images(repair_history(history).messages)
    joined = "\n".join(texts)
    for text in want_texts:
        assert text in joined
    assert sorted(images) == sorted(want_images)
    # Reading is the inverse of writing on the wire: writing what was read gives the same contents.
    again = ge.to_request(back, **opts)
    assert again["contents"] == body["contents"]
    assert again.get("systemInstruction") == body.get("systemInstruction")


def test_signatures_round_trip_byte_for_byte() -> None:
    reply = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "plan", "thought": True, "thoughtSignature": SIG_THOUGHT},
                        {"text": "Checking.", "thoughtSignature": SIG_TEXT},
                        {
                            "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                            "thoughtSignature": SIG_CALL,
                        },
                        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
                    ],
                },
                "finishReason": "STOP",
            }
        ]
    }
    message = ge.from_response(reply)
    history = [
        ChatMessage(role="user", content="weather?"),
        message,
        ChatMessage(role="tool", tool_call_id="", content="22"),
        ChatMessage(role="tool", tool_call_id="", content="25"),
    ]
    sent = ge.to_request(history, model=PRO3)["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in sent] == [SIG_THOUGHT, SIG_TEXT, SIG_CALL, None]
    assert [p.get("text") for p in sent[:2]] == ["plan", "Checking."]
    assert [p["functionCall"]["id"] for p in sent[2:]] == ["call_1_0", "call_1_1"]


# --- check(): one broken body per rule ------------------------------------------------------------------


def _base() -> dict[str, Any]:
    return ge.to_request(agent_history(), model=FLASH, system="Be brief.")


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A mutation setting a dotted path (`contents.1.parts.0`); `...` as value deletes the key."""

    def mutate(body: dict[str, Any]) -> None:
        *head, last = path.split(".")
        target: Any = body
        for key in head:
            target = target[int(key)] if key.isdigit() else target[key]
        leaf: Any = int(last) if last.isdigit() else last
        if value is ...:
            del target[leaf]
        else:
            target[leaf] = value

    return mutate


def _drop_response(body: dict[str, Any]) -> None:
    del body["contents"][2]["parts"][1]


def _swap_turns(body: dict[str, Any]) -> None:
    c = body["contents"]
    c[1], c[2] = c[2], c[1]


def _no_user_before_call(body: dict[str, Any]) -> None:
    del body["contents"][4]


def _start_with_call(body: dict[str, Any]) -> None:
    del body["contents"][0]


def _text_between(body: dict[str, Any]) -> None:
    body["contents"].insert(2, {"role": "model", "parts": [{"text": "wait"}]})


def _end_on_call(body: dict[str, Any]) -> None:
    del body["contents"][-1]


def _duplicate_call_ids(body: dict[str, Any]) -> None:
    body["contents"][1]["parts"][2]["functionCall"]["id"] = "call_0"


def _wrong_response_id(body: dict[str, Any]) -> None:
    body["contents"][2]["parts"][0]["functionResponse"]["id"] = "nope"


def _two_kinds(body: dict[str, Any]) -> None:
    body["contents"][0]["parts"][0]["inlineData"] = {"mimeType": "image/png", "data": PNG}


FAULTS: list[tuple[str, str, Callable[[dict[str, Any]], None]]] = [
    ("GE1", "contents[2]", _drop_response),
    ("GE1", "contents[2]", _duplicate_call_ids),
    ("GE1", "contents[2]", _wrong_response_id),
    ("GE1", "contents[5]", _end_on_call),
    ("GE2", "contents[0]", _start_with_call),
    ("GE2", "contents[4]", _no_user_before_call),
    ("GE3", "contents[1]", _swap_turns),
    ("GE3", "contents[3]", _text_between),
    (
        "GE5",
        "contents[2].parts[0].functionResponse.name",
        _set("contents.2.parts.0.functionResponse.name", ""),
    ),
    ("GE5", "contents[1].parts[1].functionCall.name", _set("contents.1.parts.1.functionCall.name", ...)),
    ("GE6", "contents[3].parts", _set("contents.3.parts", [])),
    ("GE6", "contents[0].parts", _set("contents.0.parts", ...)),
    ("GE6", "systemInstruction.parts", _set("systemInstruction.parts", [])),
    ("GE6", "contents", _set("contents", [])),
    ("GE7", "contents[4].role", _set("contents.4.role", "system")),
    ("GE7", "contents[3].role", _set("contents.3.role", "assistant")),
    (
        "GE9",
        "contents[2].parts[0].functionResponse.response",
        _set("contents.2.parts.0.functionResponse.response", {"image": {"$ref": "shot.png"}}),
    ),
    (
        "GE0",
        "contents[1].parts[1].functionCall.args",
        _set("contents.1.parts.1.functionCall.args", '{"url": 1}'),
    ),
    (
        "GE0",
        "contents[2].parts[1].functionResponse.response",
        _set("contents.2.parts.1.functionResponse.response", "ENOENT"),
    ),
    (
        "GE0",
        "contents[1].parts[1].thoughtSignature",
        _set("contents.1.parts.1.thoughtSignature", "not base64!"),
    ),
    ("GE0", "contents[2].parts[3].inlineData.data", _set("contents.2.parts.3.inlineData.data", "a")),
    ("GE0", "contents[2].parts[3].inlineData.mimeType", _set("contents.2.parts.3.inlineData.mimeType", ...)),
    ("GE0", "contents[0].parts[1].fileData", _set("contents.0.parts.1.fileData", {"mimeType": "image/png"})),
    # found by corrupting real bodies (test_matrix): a MIME type or file URI that is not a string
    ("GE0", "contents[2].parts[3].inlineData.mimeType", _set("contents.2.parts.3.inlineData.mimeType", [{}])),
    ("GE0", "contents[0].parts[1].fileData.fileUri", _set("contents.0.parts.1.fileData.fileUri", 7)),
    ("GE0", "contents[0].parts[0]", _set("contents.0.parts.0", {"thoughtSignature": "c2ln"})),
    ("GE0", "contents[0].parts[0]", _two_kinds),
    ("GE0", "contents[0].parts[0]", _set("contents.0.parts.0", "hello")),
]


@pytest.mark.parametrize(("code", "path", "breaks"), FAULTS, ids=[f"{c}-{b.__name__}" for c, _, b in FAULTS])
def test_each_rule_is_reported(code: str, path: str, breaks: Callable[[dict[str, Any]], None]) -> None:
    problems = problems_after(PROVIDER, _base(), breaks)
    assert (code, path) in [(p.code, p.path) for p in problems], problems


def test_a_mime_type_that_is_not_a_string_is_a_located_read_error() -> None:
    body = {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": [{}], "data": "AAAA"}}]}]}
    with pytest.raises(ReadError) as info:
        ge.from_request(body)
    assert info.value.path == "contents[0].parts[0].inlineData.mimeType"


@pytest.mark.parametrize(("contents", "path"), [
    ([{"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}, "id": 5}}]}],
     "contents[0].parts[0].functionCall.id"),
    ([{"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}, "id": "c1"}}]},
      {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}, "id": ["c1"]}}]}],
     "contents[1].parts[0].functionResponse.id"),
])
def test_a_call_or_response_id_that_is_not_a_string_is_reported_and_a_located_read_error(
        contents: list[dict[str, Any]], path: str) -> None:
    # read as text, ["c1"] would have been the id "['c1']"
    problems = [p for p in ge.check({"contents": contents}) if p.path == path]
    api_path = path.replace("functionCall", "function_call").replace("functionResponse", "function_response")
    assert [(p.code, p.message.split(",")[0]) for p in problems] == [
        ("GE0", f"Invalid value at '{api_path}' (TYPE_STRING)")]
    with pytest.raises(ReadError) as info:
        ge.from_request({"contents": contents})
    assert info.value.path == path


@pytest.mark.parametrize(("part", "path"), [
    ({"thought": True, "text": ["hm"]}, "contents[0].parts[0].text"),
    ({"inlineData": {"mimeType": "image/png", "data": 7}}, "contents[0].parts[0].inlineData.data"),
])
def test_thought_text_or_image_data_that_is_not_a_string_is_a_located_read_error(part: dict[str, Any],
                                                                                 path: str) -> None:
    body = {"contents": [{"role": "model", "parts": [part]}]}
    assert path in [p.path for p in ge.check(body)]
    with pytest.raises(ReadError) as info:
        ge.from_request(body)
    assert info.value.path == path


def test_model_and_vertex_rules() -> None:
    pro = ge.to_request(agent_history(), model=PRO3)
    pro["contents"][1]["parts"][1].pop("thoughtSignature")  # before the current turn: not validated
    assert ge.check(pro, model=PRO3) == []
    pro["contents"][5]["parts"][0].pop("thoughtSignature")
    problems = ge.check(pro, model=PRO3)
    assert [(p.code, p.path) for p in problems] == [("GE4", "contents[5]")]
    assert "function call `default_api:read_file` , position 5" in problems[0].message
    # GE4 looks only at the current turn: after a new user message the old turn is not validated.
    pro["contents"].append({"role": "user", "parts": [{"text": "thanks"}]})
    assert ge.check(pro, model=PRO3) == []
    old = ge.to_request(agent_history(), model=FLASH, multimodal_function_response=True)
    assert [p.code for p in ge.check(old, model=FLASH)] == ["GE10"]
    vertex = ge.to_request(agent_history(), model=FLASH, vertex=True)
    del vertex["contents"][0]["role"]
    assert [(p.code, p.path) for p in ge.check(vertex, platform="vertex")] == [("GE7", "contents[0].role")]
    assert ge.check(vertex) == []  # the Developer API defaults a missing role to user


def test_messages_are_the_providers_own_words() -> None:
    body = _base()
    _drop_response(body)
    assert ge.check(body)[0].message == (
        "Please ensure that the number of function response parts is equal to the number of function call "
        "parts "
        "of the function call turn."
    )
    body = _base()
    _start_with_call(body)
    assert ge.check(body)[0].message == (
        "Please ensure that function call turn comes immediately after a user turn or after a function "
        "response "
        "turn."
    )
    body = _base()
    body["contents"][3]["parts"] = []
    assert ge.check(body)[0].message == (
        "* GenerateContentRequest.contents[3].parts: contents.parts must not be empty."
    )


def test_check_reads_snake_case_bodies_as_the_sdk_sends_them() -> None:
    body = _base()
    snake = json.loads(
        json.dumps(body)
        .replace('"inlineData"', '"inline_data"')
        .replace('"mimeType"', '"mime_type"')
        .replace('"functionCall"', '"function_call"')
    )
    assert ge.check(snake) == []
    assert ge.from_request(snake) == ge.from_request(body)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "role",
                    "parts",
                    "text",
                    "functionCall",
                    "functionResponse",
                    "name",
                    "args",
                    "response",
                    "id",
                    "inlineData",
                    "data",
                    "mimeType",
                    "thoughtSignature",
                    "$ref",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@pytest.mark.parametrize(
    "body",
    [
        None,
        3,
        "x",
        [],
        {},
        {"contents": "x"},
        {"contents": [None]},
        {"contents": [{"role": "model", "parts": [{"functionCall": "x"}]}]},
        {"systemInstruction": 5, "contents": [{}]},
    ],
)
def test_malformed_bodies_are_reported_not_raised(body: Any) -> None:
    assert ge.check(body)


@_SETTINGS
@given(st.dictionaries(st.sampled_from(["contents", "systemInstruction"]), st.lists(json_values, max_size=4)))
def test_check_never_raises(body: dict[str, Any]) -> None:
    for problem in ge.check(body, model=PRO3):
        assert problem.code.startswith("GE")


# --- reading ---------------------------------------------------------------------------------------------


def test_from_request_reads_bodies_and_content_lists() -> None:
    body = ge.to_request(agent_history(), model=FLASH)
    history = ge.from_request(body)
    assert ge.from_request(body["contents"]) == history[1:]
    assert history[0] == ChatMessage(role="system", content="You are a coding agent.")
    assistant = history[2]
    assert assistant.tool_calls[1].arguments == "login.css"  # `_raw` unwrapped
    assert assistant.tool_calls[0].provider_data == {"gemini": {"thoughtSignature": SIG_CALL}}
    screenshot = history[3]
    assert screenshot.tool_call_id == "call_0" and screenshot.tool_name == "screenshot"
    assert screenshot.content == (TextPart(text="390x844"), ImagePart(media_type="image/png", data=PNG))
    assert history[4].is_error and history[4].content == "ENOENT"
    assert history[5] == ChatMessage(role="user", content="hurry up")


def test_raw_wrapper_is_unwrapped_only_when_it_wraps_non_objects() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "a", "args": {"_raw": '{"x": 1}'}}},
                {"functionCall": {"name": "b", "args": {"_raw": "[1, 2]"}}},
                {"functionCall": {"name": "c", "args": {"_raw": 5}}},
            ],
        },
    ]
    calls = ge.from_request(contents)[1].tool_calls
    assert [c.arguments for c in calls] == [{"_raw": '{"x": 1}'}, "[1, 2]", {"_raw": 5}]


def test_vertex_bodies_pair_responses_by_order() -> None:
    body = ge.to_request(agent_history(), model=FLASH, vertex=True)
    history = ge.from_request(body)
    assert [m.tool_call_id for m in history if m.role == "tool"] == ["", "", ""]
    assert ge.to_request(history, model=FLASH, vertex=True)["contents"] == body["contents"]


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ("nope", "contents"),
        ({"messages": []}, None),
        ({"contents": [3]}, "contents[0]"),
        (
            {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
            "contents[0].parts[0].functionCall.name",
        ),
        ({"contents": [{"role": "user", "parts": "x"}]}, "contents[0].parts"),
    ],
)
def test_from_request_errors_say_where(data: Any, path: str | None) -> None:
    with pytest.raises(ReadError) as info:
        ge.from_request(data)
    assert info.value.provider == "gemini"
    assert info.value.path == path


REPLY = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Let me check.", "thought": True, "thoughtSignature": SIG_THOUGHT},
                    {
                        "functionCall": {"id": "call_0", "name": "get_weather", "args": {"city": "Paris"}},
                        "thoughtSignature": SIG_CALL,
                    },
                ],
            },
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    "modelVersion": FLASH,
}


def test_from_response_reads_dicts_and_sdk_objects() -> None:
    expected = ChatMessage(
        role="assistant",
        content=(ThinkingPart(text="Let me check.", signature=SIG_THOUGHT, provider="gemini"),),
        tool_calls=(
            ToolCall(
                id="call_0",
                name="get_weather",
                arguments={"city": "Paris"},
                provider_data={"gemini": {"thoughtSignature": SIG_CALL}},
            ),
        ),
    )
    assert ge.from_response(REPLY) == expected
    sdk = types.GenerateContentResponse.model_validate(REPLY)
    assert ge.from_response(sdk) == expected
    with pytest.raises(ReadError, match="SAFETY"):
        ge.from_response({"promptFeedback": {"blockReason": "SAFETY"}})
    empty = ge.from_response({"candidates": [{"finishReason": "MAX_TOKENS"}]})
    assert empty == ChatMessage(role="assistant", content="")


# --- the official SDK against a local server -------------------------------------------------------------


def gemini_error(message: str) -> dict[str, Any]:
    """Gemini's 400 body."""
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


def _b64(text: str) -> bytes:
    """Bytes of base64 text, standard or URL-safe, padding optional (as the API decodes it)."""
    text = text.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4))


@dataclass
class GeminiServer:
    """A local generateContent endpoint: Gemini's 400 when `check()` finds problems, else a scripted reply."""

    reply: Callable[[dict[str, Any]], dict[str, Any]]
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    base_url: str = ""

    def answer(self, model: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.received.append((model, body))
        problems = ge.check(body, model=model)
        if problems:
            return 400, gemini_error(problems[0].message)
        return 200, {
            "candidates": [{"content": self.reply(body), "finishReason": "STOP", "index": 0}],
            "modelVersion": model,
        }


@contextmanager
def gemini_server(server: GeminiServer) -> Iterator[GeminiServer]:
    """Serve `server` on 127.0.0.1 (a free port) in a thread for the duration of the block."""

    def route(path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        match = re.search(r"/models/([^/:]+):generateContent$", path)
        return server.answer(match.group(1), body) if match else (404, gemini_error("not found"))

    with serve(route, server.statuses) as root:
        server.base_url = root
        yield server


def weather_model(body: dict[str, Any]) -> dict[str, Any]:
    """Scripted Gemini: a signed call without id (as Gemini sends it) after user text, text after results."""
    last = body["contents"][-1]["parts"]
    if any("functionResponse" in p or "function_response" in p for p in last):
        return {"role": "model", "parts": [{"text": "It is 22 °C in Paris.", "thoughtSignature": SIG_TEXT}]}
    return {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": SIG_CALL}
        ],
    }


def _client(server: GeminiServer) -> genai.Client:
    return genai.Client(api_key="x", http_options=types.HttpOptions(base_url=server.base_url))


def _tool_loop(reply: ChatMessage, history: list[ChatMessage]) -> list[ChatMessage]:
    """The agent side: run each call (the weather is always 22) and append the results."""
    history = [*history, reply]
    for call in reply.tool_calls:
        history.append(
            ChatMessage(role="tool", tool_call_id=call.id, tool_name=call.name, content='{"temp": 22}')
        )
    return history


def test_tool_loop_through_the_google_genai_sdk_against_a_local_server() -> None:
    with gemini_server(GeminiServer(weather_model)) as server:
        client = _client(server)
        history = [ChatMessage(role="user", content="Weather in Paris?")]
        reply = ge.send(client, history, model=PRO3, tools=[WEATHER_TOOL], system="Be brief.", temperature=0)
        assert reply.tool_calls[0].name == "get_weather"
        assert reply.tool_calls[0].provider_data == {"gemini": {"thoughtSignature": SIG_CALL}}
        history = _tool_loop(reply, history)
        final = ge.send(client, history, model=PRO3, tools=[WEATHER_TOOL], system="Be brief.")
        assert final.content == (
            ThinkingPart(signature=SIG_TEXT, provider="gemini"),
            TextPart(text="It is 22 °C in Paris."),
        )
        assert server.statuses == [200, 200]
        model, second = server.received[1]
        assert model == PRO3
        assert second["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
        call_part = second["contents"][1]["parts"][0]
        assert _b64(call_part["thoughtSignature"]) == _b64(SIG_CALL)  # echoed byte for byte (GE4)
        assert call_part["functionCall"]["id"] == second["contents"][2]["parts"][0]["functionResponse"]["id"]
        assert server.received[0][1]["generationConfig"] == {"temperature": 0}


def test_the_server_answers_gemini_400s_that_the_sdk_raises() -> None:
    history = [
        ChatMessage(role="user", content="Weather?"),
        ChatMessage(
            role="assistant", tool_calls=(ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),)
        ),
        ChatMessage(role="tool", tool_call_id="c1", content="22"),
    ]
    with gemini_server(GeminiServer(weather_model)) as server:
        client = _client(server)
        with pytest.raises(genai_errors.ClientError) as info:
            ge.send(client, history, model=PRO3, thought_signature_fallback=None)
        assert info.value.code == 400
        assert "missing a thought_signature" in str(info.value.message)
        reply = ge.send(client, history, model=PRO3)  # the stand-in signature passes
        assert server.statuses == [400, 200]
        assert reply.content


def test_send_async_with_the_sdk_aio_client() -> None:
    async def run() -> list[ChatMessage]:
        with gemini_server(GeminiServer(weather_model)) as server:
            client = _client(server)
            history = [
                ChatMessage(
                    role="user",
                    content=(TextPart(text="Weather here?"), ImagePart(media_type="image/png", data=PNG)),
                )
            ]
            reply = await ge.send_async(client, history, model=FLASH, tools=[WEATHER_TOOL])
            history = _tool_loop(reply, history)
            final = await ge.send_async(client, history, model=FLASH, tools=[WEATHER_TOOL])
            assert server.statuses == [200, 200]
            sent = server.received[1][1]["contents"][0]["parts"][1]
            blob = sent.get("inlineData") or sent.get("inline_data")
            assert _b64(blob["data"]) == _b64(PNG)
            return [*history, final]

    history = asyncio.run(run())
    assert history[-1].content[-1] == TextPart(text="It is 22 °C in Paris.")


def test_create_needs_the_model_beside_the_body() -> None:
    with pytest.raises(ValueError, match="model"):
        PROVIDER._create(object(), ge.to_request([ChatMessage(role="user", content="hi")], model=FLASH))


# --- the shipped example ---------------------------------------------------------------------------------


def test_example_request_reads_checks_and_writes_back_the_same() -> None:
    body = json.loads(EXAMPLE.read_text())
    assert ge.check(body, model=PRO3) == []
    sdk_validate(body)
    history = ge.from_request(body)
    assert any(m.role == "tool" and isinstance(m.content, tuple) for m in history)
    again = ge.to_request(
        history,
        model=PRO3,
        tools=[
            {
                "name": d["name"],
                "description": d.get("description", ""),
                "parameters": d["parametersJsonSchema"],
            }
            for d in body["tools"][0]["functionDeclarations"]
        ],
        **{"generation_config": body["generationConfig"]},
    )
    assert again == body


def test_body_is_not_shared_with_the_input() -> None:
    history = agent_history()
    before = copy.deepcopy([asdict(m) for m in history])
    body = ge.to_request(history, model=FLASH)
    body["contents"][1]["parts"][1]["functionCall"]["args"]["url"] = "changed"
    assert [asdict(m) for m in history] == before


def _mutations() -> st.SearchStrategy[list[tuple[int, Any]]]:
    return st.lists(st.tuples(st.integers(0, 10_000), json_values), min_size=1, max_size=3)


def _nodes(value: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key) slot of a JSON value, in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((value, key))
            _nodes(item, out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((value, index))
            _nodes(item, out)
    return out


@_SETTINGS
@given(_mutations())
def test_broken_bodies_never_crash_check_or_from_request(mutations: list[tuple[int, Any]]) -> None:
    body = _base()
    for where, value in mutations:
        slots = _nodes(body, [])
        container, key = slots[where % len(slots)]
        container[key] = value
    for problem in ge.check(body, model=PRO3, platform="vertex"):
        assert problem.code.startswith("GE") and problem.message
    try:
        ge.from_request(body)
    except ReadError as exc:
        assert exc.provider == "gemini"


def test_options_split_into_generation_config_and_top_level_fields() -> None:
    body = ge.to_request(
        [ChatMessage(role="user", content="hi")], model=FLASH, temperature=0.5, topK=3,
        generation_config={"seed": 7}, thinking_config={"thinkingBudget": 0},
        safety_settings=[{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
        cached_content="cachedContents/abc",
    )
    generation = {"temperature": 0.5, "topK": 3, "seed": 7, "thinkingConfig": {"thinkingBudget": 0}}
    assert body["generationConfig"] == generation
    assert body["safetySettings"][0]["threshold"] == "BLOCK_NONE"
    assert body["cachedContent"] == "cachedContents/abc"
    assert PROVIDER.sdk_arguments(body, model=FLASH) == {
        "model": FLASH,
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "config": {**generation, "safetySettings": body["safetySettings"], "cachedContent": "cachedContents/abc"},
    }
    types.GenerateContentConfig.model_validate(PROVIDER.sdk_arguments(body, model=FLASH)["config"])


signatures = st.one_of(st.none(), st.binary(min_size=1, max_size=24).map(lambda b: base64.b64encode(b).decode()))
reply_texts = st.text(min_size=1, max_size=8).filter(lambda t: t != BRIDGE_TEXT)


@st.composite
def gemini_replies(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The parts of a Gemini reply: thoughts and texts (signed or not), then calls (signed or not, ids or not)."""
    parts: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 3))):
        part: dict[str, Any] = {"text": draw(reply_texts)}
        if draw(st.booleans()):
            part["thought"] = True
        signature = draw(signatures)
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    for n in range(draw(st.integers(0 if parts else 1, 3))):
        call: dict[str, Any] = {"name": draw(st.sampled_from(["search", "read_file"])),
                                "args": draw(st.dictionaries(st.sampled_from(["q", "n"]), st.integers(0, 9)))}
        if draw(st.booleans()):
            call = {"id": f"call_{n}", **call}  # Gemini restarts ids every reply
        part = {"functionCall": call}
        signature = draw(signatures)
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    return parts


@_SETTINGS
@given(st.lists(gemini_replies(), min_size=1, max_size=3))
def test_every_signature_goes_back_on_its_own_part(replies: list[list[dict[str, Any]]]) -> None:
    history = [ChatMessage(role="user", content="go")]
    for parts in replies:
        reply = ge.from_response({"candidates": [{"content": {"role": "model", "parts": parts}}]})
        history = _tool_loop(reply, history)
    body = ge.to_request(history, model=FLASH)
    assert ge.check(body) == []
    sent = [c["parts"] for c in body["contents"] if c["role"] == "model"]
    assert len(sent) == len(replies)
    for original, wire in zip(replies, sent):
        assert len(wire) == len(original)
        for was, now in zip(original, wire):
            assert now.get("thoughtSignature") == was.get("thoughtSignature")  # GE4: byte for byte
            assert now.get("text") == was.get("text") and now.get("thought") == was.get("thought")
            if "functionCall" in was:
                assert now["functionCall"]["name"] == was["functionCall"]["name"]
                assert now["functionCall"]["args"] == was["functionCall"]["args"]
    # Ids are unique on the wire although Gemini restarted them every reply.
    ids = [p["functionCall"]["id"] for parts in sent for p in parts if "functionCall" in p]
    assert len(set(ids)) == len(ids)
    # Gemini 3: each step's first call carries a signature, its own whenever it had one.
    pro = ge.to_request(history, model=PRO3)
    assert ge.check(pro, model=PRO3) == []


def test_nested_arguments_are_copied_all_the_way_down() -> None:
    arguments = {"q": "x", "filters": {"langs": ["py", "rs"]}, "paths": [{"p": "a"}]}
    history = [
        ChatMessage(role="user", content="go"),
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="c", name="search", arguments=arguments),)),
        ChatMessage(role="tool", tool_call_id="c", content="ok"),
    ]
    body = ge.to_request(history, model=FLASH)
    args = body["contents"][1]["parts"][0]["functionCall"]["args"]
    assert args == arguments
    args["filters"]["langs"].append("go")
    args["paths"][0]["p"] = "b"
    assert history[1].tool_calls[0].arguments == {"q": "x", "filters": {"langs": ["py", "rs"]}, "paths": [{"p": "a"}]}


def test_fallback_signature_only_on_an_unsigned_first_call() -> None:
    def turn(*signatures: str | None) -> list[dict[str, Any]]:
        calls = tuple(
            ToolCall(id=f"c{k}", name="f", provider_data={"gemini": {"thoughtSignature": s}} if s else None)
            for k, s in enumerate(signatures)
        )
        history = [ChatMessage(role="user", content="go"), ChatMessage(role="assistant", tool_calls=calls)]
        history += [ChatMessage(role="tool", tool_call_id=c.id, content="ok") for c in calls]
        parts: list[dict[str, Any]] = ge.to_request(history, model=PRO3)["contents"][1]["parts"]
        return parts

    assert [p.get("thoughtSignature") for p in turn(None, None)] == [SKIP_SIGNATURE, None]
    assert [p.get("thoughtSignature") for p in turn(SIG_CALL, None)] == [SIG_CALL, None]
    assert [p.get("thoughtSignature") for p in turn(None, SIG_CALL)] == [SKIP_SIGNATURE, SIG_CALL]
    assert [p.get("thoughtSignature") for p in turn("not base64!", None)] == [SKIP_SIGNATURE, None]  # GE4


@pytest.mark.parametrize("value", [[], 0, False, {}])
def test_a_falsy_mime_type_or_file_uri_that_is_not_a_string_is_reported_once(value: Any) -> None:
    # a wrong type is TYPE_STRING; "must be specified" is for a missing or empty one only
    inline = {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": value, "data": "AAAA"}}]}]}
    assert [p.path for p in ge.check(inline)] == ["contents[0].parts[0].inlineData.mimeType"]
    assert "(TYPE_STRING)" in ge.check(inline)[0].message
    file = {"contents": [{"role": "user", "parts": [{"fileData": {"mimeType": "image/png", "fileUri": value}}]}]}
    assert [p.path for p in ge.check(file)] == ["contents[0].parts[0].fileData.fileUri"]
    for empty in (None, ""):
        missing = {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": empty, "data": "AAAA"}}]}]}
        assert [p.message.endswith("mime_type must be specified.") for p in ge.check(missing)] == [True]
