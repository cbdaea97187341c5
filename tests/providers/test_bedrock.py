"""Bedrock Converse adapter: every neutral feature, botocore's own validation of every body, every check rule, and the
real boto3 client against a local endpoint."""

from __future__ import annotations

import base64
import copy
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.validate import ParamValidator
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, FilePart, ImagePart, NativePart, TextPart, ThinkingPart, ToolCall, providers
from chatmend.exceptions import ReadError, UnsupportedError
from chatmend.jsonl import dump_line
from chatmend.providers import bedrock as adapter
from chatmend.providers.base import Dropped
from chatmend.repair import is_placeholder
from tests.providers.common import problems_after, sendable_body, texts_and_images
from tests.providers.local_server import serve
from tests.strategies import PNG, examples, messy_histories, valid_histories

MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
_SERVICE = botocore.session.get_session().get_service_model("bedrock-runtime")
_CONVERSE = _SERVICE.operation_model("Converse").input_shape
_TOOL_USE_ID = re.compile(f"(?:{_SERVICE.shape_for('ToolUseId').metadata['pattern']})")
WEATHER = {"name": "get_weather", "description": "Current weather.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


def user(content: Any) -> ChatMessage:
    return ChatMessage(role="user", content=content)


def assistant(content: Any = "", *calls: ToolCall) -> ChatMessage:
    return ChatMessage(role="assistant", content=content, tool_calls=calls)


def tool(call_id: str, content: Any, *, error: bool = False) -> ChatMessage:
    return ChatMessage(role="tool", tool_call_id=call_id, content=content, is_error=error)


def call(call_id: str, name: str = "search", **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def sdk_params(body: dict[str, Any]) -> dict[str, Any]:
    """What `send` hands `client.converse`."""
    return adapter.PROVIDER._sdk_body(body, {"model": MODEL})


def assert_botocore_accepts(body: dict[str, Any]) -> None:
    """botocore's own parameter validation of Converse (the client runs it before any request), plus the
    `ToolUseId` pattern and length of the service model (which botocore leaves to the service)."""
    report = ParamValidator().validate(sdk_params(body), _CONVERSE)
    assert not report.has_errors(), report.generate_report()
    for message in body["messages"]:
        for block in message["content"]:
            for kind in ("toolUse", "toolResult"):
                if kind in block:
                    assert _TOOL_USE_ID.fullmatch(block[kind]["toolUseId"])
                    assert 1 <= len(block[kind]["toolUseId"]) <= 64


# ------------------------------------------------------------------------------------------------- bodies


def test_exact_body_of_a_tool_loop() -> None:
    history = [
        ChatMessage(role="system", content="Be brief."),
        user("Weather in Paris?"),
        assistant("Let me check.", call("toolu_01", "get_weather", city="Paris")),
        tool("toolu_01", '{"temperature": 22}'),
        user("And tomorrow?"),
    ]
    body = adapter.to_request(history, model=MODEL, tools=[WEATHER], inferenceConfig={"maxTokens": 512})
    assert body == {
        "messages": [
            {"role": "user", "content": [{"text": "Weather in Paris?"}]},
            {"role": "assistant", "content": [
                {"text": "Let me check."},
                {"toolUse": {"toolUseId": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}}}]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "toolu_01", "content": [{"text": '{"temperature": 22}'}]}},
                {"text": "And tomorrow?"}]},  # BR3: the result and the steer share one user turn
        ],
        "system": [{"text": "Be brief."}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "description": "Current weather.",
                                               "inputSchema": {"json": WEATHER["parameters"]}}}]},
        "inferenceConfig": {"maxTokens": 512},
    }
    assert adapter.check(body) == []
    assert_botocore_accepts(body)
    assert adapter.from_request(body) == history


def test_consecutive_assistant_turns_and_an_assistant_first_get_user_fillers() -> None:
    body = adapter.to_request([assistant("one"), assistant("two")], model=MODEL)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant"]
    assert body["messages"][0]["content"] == [{"text": adapter.USER_FILLER}]  # BR4
    assert body["messages"][2]["content"] == [{"text": adapter.USER_FILLER}]  # BR3
    assert adapter.check(body) == []


def test_user_messages_in_a_row_merge_into_one_turn() -> None:
    body = adapter.to_request([user("a"), user("b"), ChatMessage(role="system", content="later")], model=MODEL)
    assert body["messages"] == [{"role": "user", "content": [
        {"text": "a"}, {"text": "b"}, {"text": "<system>\nlater\n</system>"}]}]
    # one user turn reads back as one user message (its texts kept in order), the tagged system text as a system message
    assert adapter.from_request(body) == [user((TextPart(text="a"), TextPart(text="b"))),
                                          ChatMessage(role="system", content="later")]


def test_an_assistant_message_of_images_only_keeps_its_turn_and_moves_them() -> None:
    image = ImagePart(media_type="image/png", data=PNG)
    body = adapter.to_request([user("draw"), assistant((image,)), user("thanks")], model=MODEL)
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "draw"}]},
        {"role": "assistant", "content": [{"text": adapter.ASSISTANT_FILLER}]},
        {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": PNG}}}, {"text": "thanks"}]},
    ]
    assert adapter.check(body) == []


def test_assistant_images_go_after_its_results() -> None:
    image = ImagePart(media_type="image/jpeg", data="AAAA")
    history = [user("go"), assistant((TextPart(text="look"), image), call("c1")), tool("c1", "ok")]
    body = adapter.to_request(history, model=MODEL)
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "c1", "content": [{"text": "ok"}]}},
        {"image": {"format": "jpeg", "source": {"bytes": "AAAA"}}}]
    assert adapter.check(body) == []


def test_results_carry_text_json_images_documents_and_errors() -> None:
    doc = FilePart(media_type="application/pdf", data="JVBERg==", filename="report.pdf")
    json_text = TextPart(text='{"hits":3}', provider_data={"bedrock": {"block": "json"}})
    history = [user("go"), assistant("", call("a"), call("b"), call("c"), call("d")),
               tool("a", (json_text, ImagePart(media_type="image/png", data=PNG))),
               tool("b", (doc,)), tool("c", "", error=True), tool("d", "  ")]
    body = adapter.to_request(history, model=MODEL)
    results = [b["toolResult"] for b in body["messages"][2]["content"]]
    assert results[0]["content"] == [{"json": {"hits": 3}}, {"image": {"format": "png", "source": {"bytes": PNG}}}]
    assert results[1]["content"] == [{"document": {"format": "pdf", "name": "report-pdf",
                                                   "source": {"bytes": "JVBERg=="}}}]
    assert results[2] == {"toolUseId": "c", "content": [{"text": adapter.ERROR_WITHOUT_OUTPUT}],
                          "status": "error"}  # BR6
    assert results[3] == {"toolUseId": "d", "content": []}  # a blank success: no blank text (BR8)
    assert adapter.check(body) == []
    assert_botocore_accepts(body)
    back = adapter.from_request(body)
    assert back[2].content == (json_text, ImagePart(media_type="image/png", data=PNG))
    assert back[4].is_error and not back[3].is_error


def test_reasoning_of_bedrock_goes_back_signed_and_another_providers_as_tagged_text() -> None:
    mine = ThinkingPart(text="plan", signature="sig==", provider="bedrock")
    redacted = ThinkingPart(redacted=True, data="b3BhcXVl", provider="bedrock")
    theirs = ThinkingPart(text="their plan", signature="x", provider="anthropic")
    history = [user("go"), assistant((mine, redacted, theirs, TextPart(text="ok")), call("c1")), tool("c1", "r")]
    body = adapter.to_request(history, model=MODEL)
    assert body["messages"][1]["content"][:4] == [
        {"reasoningContent": {"reasoningText": {"text": "plan", "signature": "sig=="}}},
        {"reasoningContent": {"redactedContent": "b3BhcXVl"}},
        {"text": "<thinking>\ntheir plan\n</thinking>"},
        {"text": "ok"}]
    assert_botocore_accepts(body)
    back = adapter.from_request(body)[1].content
    assert back[:2] == (mine, redacted) and back[2] == ThinkingPart(text="their plan")


def test_native_blocks_and_unnamed_fields_come_back_verbatim() -> None:
    body: dict[str, Any] = {
        "system": [{"text": "sys"}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {"role": "user", "content": [{"text": "hi"}, {"guardContent": {"text": {"text": "guarded"}}},
                                         {"cachePoint": {"type": "default"}}]},
            {"role": "assistant", "content": [
                {"citationsContent": {"content": [{"text": "cited"}], "citations": []}},
                {"toolUse": {"toolUseId": "t1", "name": "search", "input": {"q": 1}, "type": "server_tool_use"}}]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "t1", "content": [{"searchResult": {"source": "s", "title": "t",
                                                                                "content": [{"text": "x"}]}}],
                                "status": "success", "type": "x"}},
                {"image": {"format": "png", "source": {"s3Location": {"uri": "s3://b/k.png",
                                                                      "bucketOwner": "123456789012"}}}}]},
        ],
        "toolConfig": {"tools": [{"toolSpec": {"name": "search", "inputSchema": {"json": {"type": "object"}}}}]},
        "additionalModelRequestFields": {"top_k": 5},
    }
    history = adapter.from_request(body)
    assert isinstance(history[0].content[1], NativePart) and history[0].content[1].native_type == "cachePoint"
    assert history[1].content[1] == NativePart(provider="bedrock", data={"guardContent": {"text": {"text": "guarded"}}})
    assert history[2].tool_calls[0].provider_data == {"bedrock": {"type": "server_tool_use"}}
    rewritten = adapter.to_request(history, model=MODEL, toolConfig=body["toolConfig"],
                                   additionalModelRequestFields={"top_k": 5})
    expected = copy.deepcopy(body)
    del expected["messages"][2]["content"][0]["toolResult"]["status"]  # `success` is the default, not sent
    assert rewritten == expected
    assert adapter.PROVIDER.repair_body(body).body == body


def test_a_native_part_of_another_provider_is_refused_or_dropped() -> None:
    native = NativePart(provider="anthropic", data={"type": "server_tool_use", "id": "s", "name": "web_search"})
    history = [user("go"), assistant((TextPart(text="ok"), native))]
    with pytest.raises(UnsupportedError) as error:
        adapter.to_request(history, model=MODEL)
    assert error.value.feature == "server_tool_use"
    dropped: list[Dropped] = []
    body = adapter.to_request(history, model=MODEL, on_unsupported=dropped.append)
    assert dropped == [Dropped("anthropic", "server_tool_use", "messages[1].content[1]")]
    assert body["messages"][1]["content"] == [{"text": "ok"}]


def test_media_by_kind_url_and_their_limits() -> None:
    video = FilePart(media_type="video/mp4", url="s3://bucket/clip.mp4")
    audio = FilePart(media_type="audio/wav", data="UklGRg==")
    web = ImagePart(url="https://example.com/cat.png")
    body = adapter.to_request([user((TextPart(text="see"), video, audio, web))], model=MODEL)
    assert body["messages"][0]["content"] == [
        {"text": "see"},
        {"video": {"format": "mp4", "source": {"s3Location": {"uri": "s3://bucket/clip.mp4"}}}},
        {"audio": {"format": "wav", "source": {"bytes": "UklGRg=="}}},
        {"text": "Image at https://example.com/cat.png"},  # Converse takes bytes or S3 only
    ]
    assert_botocore_accepts(body)
    assert adapter.from_request(body)[0].content[1:3] == (
        FilePart(media_type="video/mp4", url="s3://bucket/clip.mp4", provider_data={"bedrock": {"kind": "video",
                                                                                              "format": "mp4"}}),
        FilePart(media_type="audio/wav", data="UklGRg==", provider_data={"bedrock": {"kind": "audio"}}))
    for part in (FilePart(file_id="file-1", provider="openai"), FilePart(url="https://x/y.pdf"),
                 ImagePart(media_type="image/bmp", data="AAAA")):
        with pytest.raises(UnsupportedError):
            adapter.to_request([user((part,))], model=MODEL)


def test_raw_arguments_and_ids_the_pattern_refuses() -> None:
    history = [user("go"), assistant("", ToolCall(id="call/1 x", name="shell", arguments="not json"),
                                     ToolCall(id="y" * 90, name="shell", arguments={}),
                                     ToolCall(id="y" * 90 + "!", name="shell", arguments={}))]
    body = adapter.to_request(history, model=MODEL)
    uses = [b["toolUse"] for b in body["messages"][1]["content"]]
    assert uses[0]["input"] == {"_raw_arguments": "not json"}
    ids = [u["toolUseId"] for u in uses]
    assert len(set(ids)) == 3 and all(_TOOL_USE_ID.fullmatch(i) and len(i) <= 64 for i in ids)
    results = [b["toolResult"]["toolUseId"] for b in body["messages"][2]["content"]]
    assert results == ids
    assert adapter.from_request(body)[1].tool_calls[0].arguments == "not json"


def test_a_history_with_calls_and_no_tools_gets_a_tool_config_of_the_tools_it_called() -> None:
    body = adapter.to_request([user("go"), assistant("", call("a", "read_file"), call("b", "search"),
                                                     call("c", "read_file"))], model=MODEL)
    assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]] == ["read_file", "search"]
    given_config = {"tools": [], "toolChoice": {"auto": {}}}
    body = adapter.to_request([user("go")], model=MODEL, tools=[WEATHER], toolConfig=given_config)
    assert body["toolConfig"]["toolChoice"] == {"auto": {}}
    assert [t["toolSpec"]["name"] for t in body["toolConfig"]["tools"]] == ["get_weather"]
    body = adapter.to_request([user("go")], model=MODEL, tools=[{"name": "bad name"}])  # mapped (BR12), not refused
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"].startswith("bad_name_")
    assert adapter.check(body) == []


# -------------------------------------------------------------------------------- generated histories


@examples(100)
@given(history=messy_histories())
def test_every_body_passes_botocores_validation_and_check_and_reads_back(history: list[ChatMessage]) -> None:
    body = sendable_body(adapter, history, model=MODEL)
    assert adapter.check(body) == []
    assert_botocore_accepts(body)
    roles = [m["role"] for m in body["messages"]]
    assert roles[:1] in ([], ["user"]) and all(a != b for a, b in itertools.pairwise(roles))  # BR3, BR4
    texts, images = texts_and_images([m for m in history if not is_placeholder(m)])
    wire = json.dumps([asdict(m) for m in adapter.from_request(body)], ensure_ascii=False)
    for text in texts:
        assert text.strip() == "" or json.dumps(text, ensure_ascii=False)[1:-1] in wire
    for image in images:
        assert image in wire


@examples(60)
@given(history=valid_histories(), data=st.data())
def test_a_result_taken_out_of_a_body_is_caught_by_check(history: list[ChatMessage], data: st.DataObject) -> None:
    body = adapter.to_request(history, model=MODEL)
    spots = [(n, m) for n, message in enumerate(body["messages"]) for m, block in enumerate(message["content"])
             if "toolResult" in block]
    if not spots:
        return
    n, m = data.draw(st.sampled_from(spots))
    content = body["messages"][n]["content"]
    gone = content.pop(m)["toolResult"]["toolUseId"]
    problems = adapter.check(body)
    assert any(p.code == "BR1" and gone in p.message for p in problems) or (
        not content and any(p.code == "BR8e" for p in problems))


@examples(60)
@given(history=valid_histories(), data=st.data())
def test_a_message_taken_out_of_a_body_breaks_alternation_or_pairing(history: list[ChatMessage],
                                                                       data: st.DataObject) -> None:
    body = adapter.to_request(history, model=MODEL)
    if len(body["messages"]) < 3:
        return
    n = data.draw(st.integers(min_value=1, max_value=len(body["messages"]) - 2))
    del body["messages"][n]
    assert {p.code for p in adapter.check(body)} & {"BR1", "BR1x", "BR3"}


# ------------------------------------------------------------------------------------------ check rules


def _body() -> dict[str, Any]:
    return adapter.to_request([user("go"), assistant("", call("a"), call("b")), tool("a", "1"), tool("b", "2")],
                              model=MODEL)


def _set(path: list[Any], value: Any) -> Callable[[dict[str, Any]], None]:
    def breaks(body: dict[str, Any]) -> None:
        node: Any = body
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return breaks


def _rename(body: dict[str, Any], new_id: str) -> None:
    body["messages"][1]["content"][0]["toolUse"]["toolUseId"] = new_id
    body["messages"][2]["content"][0]["toolResult"]["toolUseId"] = new_id


FAULTS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "BR1": (lambda b: b["messages"][2]["content"].pop(1),
            "Expected toolResult blocks at messages.2.content for the following Ids: b"),
    "BR1x": (lambda b: b["messages"][2]["content"].append(copy.deepcopy(b["messages"][2]["content"][0])),
             "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of "
             "previous turn."),
    "BR2": (_set(["messages", 1, "content", 1, "toolUse", "toolUseId"], "a"),
            "The toolUse blocks at messages.1.content contain duplicate Ids: a"),
    "BR3": (lambda b: b["messages"].append({"role": "user", "content": [{"text": "more"}]}),
            "A conversation must alternate between user and assistant roles."),
    "BR4": (lambda b: b["messages"].pop(0), "A conversation must start with a user message."),
    "BR5": (lambda b: b.pop("toolConfig"),
            "The toolConfig field must be defined when using toolUse and toolResult content blocks."),
    "BR6": (lambda b: b["messages"][2]["content"][0]["toolResult"].update(status="error", content=[]),
            "The content field at messages.2.content.0.toolResult cannot be empty when status value is error."),
    "BR7": (_set(["messages", 2, "content", 0, "toolResult", "content"], [{"json": [1, 2]}]),
            "The format of the value at messages.2.content.0.toolResult.content.0.json is invalid."),
    "BR8": (_set(["messages", 0, "content", 0, "text"], " \n"),
            "The text field in the ContentBlock object at messages.0.content.0 is blank."),
    "BR8e": (_set(["messages", 0, "content"], []),
             "The content field in the Message object at messages.0 is empty."),
    "BR11": (lambda b: _rename(b, "a/1"),
             "Member must satisfy regular expression pattern: [a-zA-Z0-9_.:-]+"),
    "BR12": (_set(["messages", 1, "content", 0, "toolUse", "name"], "web search"),
             "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"),
    "BR13": (lambda b: b["messages"][1]["content"].insert(0, {"image": {"format": "png", "source": {"bytes": PNG}}}),
             "You can only include images and documents if the role is user."),
}


@pytest.mark.parametrize("code", sorted(FAULTS))
def test_each_fault_is_reported_in_bedrocks_words(code: str) -> None:
    breaks, words = FAULTS[code]
    problems = problems_after(adapter.PROVIDER, _body(), breaks)
    assert any(p.code == code and words in p.message for p in problems), problems


@pytest.mark.parametrize("body", [[], {"messages": {}}, {"messages": [1]}, {"messages": [{"role": "tool",
                                                                                          "content": []}]},
                                  {"messages": [{"role": "user", "content": [{"text": "a", "image": {}}]}]},
                                  {"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": 1}}]}]},
                                  {"messages": [], "system": "text"}])
def test_a_malformed_body_is_a_shape_problem_never_an_exception(body: Any) -> None:
    problems = adapter.check(body)
    assert problems and all(p.code == "SHAPE" and p.provider == "bedrock" for p in problems)


# ------------------------------------------------------------------------------------------- repair_body


def test_repair_body_keeps_items_repair_leaves_alone() -> None:
    body = _body()
    body["messages"][2]["content"].pop(1)  # result b lost
    body["messages"].append({"role": "assistant", "content": [{"text": "done"}]})
    repaired = adapter.PROVIDER.repair_body(body)
    assert adapter.check(repaired.body) == []
    assert repaired.body["messages"][0] is body["messages"][0] and repaired.body["messages"][3] is body["messages"][3]
    assert [b["toolResult"]["toolUseId"] for b in repaired.body["messages"][2]["content"]] == ["a", "b"]
    assert repaired.rewritten == [2]


# ------------------------------------------------------------------------------------------------ replies


REPLY: dict[str, Any] = {
    # the shape of the Converse response recorded in docs/rules.md §8 (Nova Micro, 200)
    "output": {"message": {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "Need the tool.", "signature": "c2ln"}}},
        {"text": "Let me check."},
        {"toolUse": {"toolUseId": "tooluse_a8nlf2bqGLcZvaSoBpQ1sH", "name": "get_weather",
                     "input": {"city": "Paris"}}}]}},
    "stopReason": "tool_use",
    "usage": {"inputTokens": 412, "outputTokens": 57, "totalTokens": 469},
    "metrics": {"latencyMs": 689},
}
FINAL: dict[str, Any] = {
    "output": {"message": {"role": "assistant", "content": [{"text": "22 °C in Paris."}]}},
    "stopReason": "end_turn", "usage": {"inputTokens": 480, "outputTokens": 9, "totalTokens": 489},
    "metrics": {"latencyMs": 301},
}


def test_a_reply_reads_with_reasoning_text_and_calls() -> None:
    reply = adapter.from_response(REPLY)
    assert reply.content == (ThinkingPart(text="Need the tool.", signature="c2ln", provider="bedrock"),
                             TextPart(text="Let me check."))
    assert reply.tool_calls == (ToolCall(id="tooluse_a8nlf2bqGLcZvaSoBpQ1sH", name="get_weather",
                                         arguments={"city": "Paris"}),)


def test_a_reply_as_boto3_parses_it_has_bytes_which_read_as_base64() -> None:
    parsed = {"output": {"message": {"role": "assistant", "content": [
        {"reasoningContent": {"redactedContent": b"opaque"}}, {"text": "ok"}]}}}
    reply = adapter.from_response(parsed)
    assert reply.content[0] == ThinkingPart(redacted=True, data=base64.b64encode(b"opaque").decode(),
                                            provider="bedrock")


@pytest.mark.parametrize("reply", [{}, {"output": {}}, {"message": "The security token is invalid."},
                                   {"output": {"message": {"content": "text"}}}])
def test_a_reply_that_is_not_one_is_a_located_read_error(reply: dict[str, Any]) -> None:
    with pytest.raises(ReadError) as error:
        adapter.from_response(reply)
    assert error.value.provider == "bedrock"


# ---------------------------------------------------------------------------------------- the boto3 client


class _Endpoint:
    def __init__(self, replies: list[tuple[int, dict[str, Any]]]) -> None:
        self.replies = replies
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.statuses: list[int] = []

    def route(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.received.append((path, body))
        return self.replies.pop(0)


def _client(url: str) -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url, aws_access_key_id="test",
                        aws_secret_access_key="test", config=Config(retries={"max_attempts": 1}))


def test_send_drives_a_tool_loop_through_boto3_against_a_local_endpoint() -> None:
    endpoint = _Endpoint([(200, copy.deepcopy(REPLY)), (200, copy.deepcopy(FINAL))])
    with serve(endpoint.route, endpoint.statuses) as url:
        client = _client(url)
        history = [user((TextPart(text="Weather in Paris?"), ImagePart(media_type="image/png", data=PNG)))]
        reply = adapter.send(client, history, model=MODEL, tools=[WEATHER], system="Be brief.")
        assert reply.tool_calls[0].name == "get_weather"
        history += [reply, tool(reply.tool_calls[0].id, '{"temperature": 22}')]
        final = adapter.send(client, history, model=MODEL, tools=[WEATHER], system="Be brief.")
    assert final.content == "22 °C in Paris."
    assert endpoint.statuses == [200, 200]
    path, sent = endpoint.received[1]
    assert path == "/model/" + MODEL.replace(":", "%3A") + "/converse"
    # the image went as base64 of its bytes (decoded once, encoded once by boto3), the reasoning signed
    assert sent["messages"][0]["content"][1] == {"image": {"format": "png", "source": {"bytes": PNG}}}
    assert sent["messages"][1]["content"][0] == {"reasoningContent": {"reasoningText": {
        "text": "Need the tool.", "signature": "c2ln"}}}
    assert sent["messages"][2]["content"][0]["toolResult"]["toolUseId"] == "tooluse_a8nlf2bqGLcZvaSoBpQ1sH"
    assert sent["system"] == [{"text": "Be brief."}]


def test_a_validation_exception_from_the_service_reaches_the_caller_as_boto3_raises_it() -> None:
    message = "A conversation must alternate between user and assistant roles."
    endpoint = _Endpoint([(400, {"message": message})])
    with serve(endpoint.route, endpoint.statuses) as url, pytest.raises(ClientError) as error:
        adapter.send(_client(url), [user("hi")], model=MODEL)
    assert message in str(error.value)


def test_bedrock_is_registered_and_detected_by_its_blocks() -> None:
    from chatmend.formats._detect import detect_document

    assert providers.get("bedrock") is adapter.PROVIDER
    body = _body()
    assert detect_document(body) == "bedrock"
    assert detect_document(body["messages"]) == "bedrock"
    assert detect_document({**body, "system": [{"text": "s"}]}) == "bedrock"


def test_the_command_line_checks_repairs_and_converts_bedrock_bodies(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Any) -> None:
    from chatmend.cli import main

    body = _body()
    body["messages"][2]["content"].pop(1)  # result b lost
    path = tmp_path / "converse.json"
    path.write_text(json.dumps(body))
    assert main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "BR1: Expected toolResult blocks at messages.2.content for the following Ids: b" in out + err
    assert main(["repair", str(path)]) == 0
    repaired = json.loads(capsys.readouterr().out)
    assert adapter.check(repaired) == [] and repaired["toolConfig"] == body["toolConfig"]
    neutral = tmp_path / "history.jsonl"
    neutral.write_text("".join(dump_line(m) + "\n"
                               for m in LOOP_HISTORY))
    assert main(["convert", str(neutral), "--to", "bedrock"]) == 0
    converted = json.loads(capsys.readouterr().out)
    assert adapter.check(converted) == [] and "modelId" not in converted


LOOP_HISTORY = [user("go"), assistant("", call("a")), tool("a", "1"), user("thanks")]
