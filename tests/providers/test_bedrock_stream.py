"""Bedrock `ConverseStream`: `send_stream` through boto3's `converse_stream` against a local endpoint on 127.0.0.1
that answers in AWS event-stream bytes; `from_stream` reads the events as boto3 decodes them."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.config import Config
from botocore.exceptions import EventStreamError
from botocore.validate import ParamValidator
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ImagePart, TextPart, ThinkingPart
from chatmend.exceptions import ReadError
from chatmend.providers import bedrock as adapter
from tests.providers import eventstream
from tests.providers.local_server import serve_handler
from tests.providers.test_bedrock import _CONVERSE, FINAL, MODEL, REPLY, WEATHER, tool, user
from tests.strategies import PNG

_STREAM = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("ConverseStream")


@contextmanager
def stream_endpoint(answers: list[list[bytes]], received: list[tuple[str, dict[str, Any]]]) -> Iterator[str]:
    """A local Converse endpoint: each POST takes the next list of event-stream messages and writes them one by
    one; what it received is recorded."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            received.append((self.path, json.loads(self.rfile.read(length))))
            events = answers.pop(0)
            self.send_response(200)
            self.send_header("Content-Type", eventstream.CONTENT_TYPE)
            self.send_header("Content-Length", str(sum(map(len, events))))
            self.end_headers()
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    with serve_handler(Handler) as url:
        yield url


@contextmanager
def boto_client(url: str) -> Iterator[Any]:
    client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=url, aws_access_key_id="test",
                          aws_secret_access_key="test", config=Config(retries={"max_attempts": 1}))
    try:
        yield client
    finally:
        client.close()


def _blocks(response: dict[str, Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = response["output"]["message"]["content"]
    return blocks


def test_send_stream_drives_a_tool_loop_through_boto3_converse_stream() -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    answers = [eventstream.reply_events(_blocks(REPLY), "tool_use"), eventstream.reply_events(_blocks(FINAL))]
    with stream_endpoint(answers, received) as url, boto_client(url) as client:
        history = [user((TextPart(text="Weather in Paris?"), ImagePart(media_type="image/png", data=PNG)))]
        reply = adapter.send_stream(client, history, model=MODEL, tools=[WEATHER], system="Be brief.")
        # the streamed reply reads as the same reply sent whole
        assert reply == adapter.from_response(REPLY)
        assert reply.tool_calls[0].arguments == {"city": "Paris"}
        assert not isinstance(reply.content, str) and isinstance(reply.content[0], ThinkingPart)
        assert reply.content[0].signature == "c2ln"
        history += [reply, tool(reply.tool_calls[0].id, '{"temperature": 22}')]
        final = adapter.send_stream(client, history, model=MODEL, tools=[WEATHER], system="Be brief.")
    assert final.content == "22 °C in Paris."
    path, sent = received[1]
    assert path == "/model/" + MODEL.replace(":", "%3A") + "/converse-stream"
    assert sent["messages"][1]["content"][0] == {"reasoningContent": {"reasoningText": {
        "text": "Need the tool.", "signature": "c2ln"}}}
    assert sent["messages"][2]["content"][0]["toolResult"]["toolUseId"] == "tooluse_a8nlf2bqGLcZvaSoBpQ1sH"
    assert adapter.check(sent) == []


def test_a_converse_stream_body_passes_botocores_validation_of_converse_stream() -> None:
    body = adapter.to_request([user("hi"), adapter.from_response(REPLY), tool("tooluse_a8nlf2bqGLcZvaSoBpQ1sH", "22")],
                              model=MODEL, tools=[WEATHER])
    params = adapter.PROVIDER._sdk_body(body, {"model": MODEL})
    for shape in (_STREAM.input_shape, _CONVERSE):
        report = ParamValidator().validate(params, shape)
        assert not report.has_errors(), report.generate_report()


def test_an_exception_event_mid_stream_reaches_the_caller_as_boto3_raises_it() -> None:
    received: list[tuple[str, dict[str, Any]]] = []
    events = eventstream.reply_events([{"text": "partial"}])[:2]
    events.append(eventstream.exception("throttlingException", "Too many tokens, please wait."))
    with stream_endpoint([events], received) as url, boto_client(url) as client, \
            pytest.raises(EventStreamError) as error:
        adapter.send_stream(client, [user("hi")], model=MODEL)
    assert "Too many tokens" in str(error.value)


def test_a_stream_cut_off_mid_call_keeps_its_arguments_as_text() -> None:
    events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"q": "par'}}}},
    ]
    reply = adapter.from_stream({"stream": events})
    assert reply.tool_calls[0].id == "t1"
    assert reply.tool_calls[0].arguments == '{"q": "par'


def test_redacted_reasoning_arrives_as_bytes_and_goes_back_as_it_came() -> None:
    events = [
        {"contentBlockDelta": {"contentBlockIndex": 0,
                               "delta": {"reasoningContent": {"redactedContent": b"\x00\x01"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "ok"}}},
    ]
    reply = adapter.from_stream(events)
    assert not isinstance(reply.content, str)
    thinking = reply.content[0]
    assert isinstance(thinking, ThinkingPart) and thinking.redacted and thinking.data == "AAE="
    body = adapter.to_request([user("hi"), reply, user("more")], model=MODEL)
    assert body["messages"][1]["content"][0] == {"reasoningContent": {"redactedContent": "AAE="}}


@pytest.mark.parametrize("events", [
    [{"validationException": {"message": "bad"}}],
    [{"contentBlockDelta": {"contentBlockIndex": "0", "delta": {"text": "x"}}}],
    [{"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}}],
    [{"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": 1}}}],
    ["text"],
])
def test_a_malformed_stream_is_a_located_read_error(events: list[Any]) -> None:
    with pytest.raises(ReadError) as error:
        adapter.from_stream(events)
    assert error.value.provider == "bedrock" and (error.value.path or "").startswith("stream[0]")


def test_from_stream_refuses_what_is_not_a_stream() -> None:
    with pytest.raises(ReadError):
        adapter.from_stream({"output": {}})


_TEXT = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != "")
_BLOCK = st.one_of(
    _TEXT.map(lambda t: {"text": t}),
    st.tuples(st.from_regex(r"[a-zA-Z0-9_-]{1,20}", fullmatch=True),
              st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3)).map(
        lambda p: {"toolUse": {"toolUseId": "tooluse_" + p[0], "name": "f", "input": p[1]}}),
    st.tuples(_TEXT, st.text(min_size=1, max_size=8)).map(
        lambda p: {"reasoningContent": {"reasoningText": {"text": p[0], "signature": p[1]}}}),
)


@given(st.lists(_BLOCK, min_size=1, max_size=6))
def test_any_reply_streamed_reads_as_the_same_reply_whole(blocks: list[dict[str, Any]]) -> None:
    from botocore.eventstream import EventStreamBuffer
    from botocore.parsers import EventStreamJSONParser

    shape = _STREAM.output_shape.members["stream"]
    buffer = EventStreamBuffer()
    for chunk in eventstream.reply_events(copy.deepcopy(blocks)):
        buffer.add_data(chunk)
    parser = EventStreamJSONParser()
    events = [parser.parse(m.to_response_dict(), shape) for m in buffer]
    whole = {"output": {"message": {"role": "assistant", "content": blocks}}}
    assert adapter.from_stream(events) == adapter.from_response(whole)


def test_send_stream_async_takes_an_async_client() -> None:
    class AsyncStream:
        def __init__(self, events: list[dict[str, Any]]) -> None:
            self.events = events

        def __aiter__(self) -> Any:
            return self._gen()

        async def _gen(self) -> Any:
            for e in self.events:
                yield e

    class AsyncClient:
        def __init__(self) -> None:
            self.calls: list[dict[str, Any]] = []

        async def converse_stream(self, **body: Any) -> dict[str, Any]:
            self.calls.append(body)
            return {"stream": AsyncStream([{"contentBlockDelta": {"contentBlockIndex": 0,
                                                                   "delta": {"text": "hello"}}}])}

    client = AsyncClient()
    reply = asyncio.run(adapter.send_stream_async(client, [user("hi")], model=MODEL))
    assert reply.content == "hello" and client.calls[0]["modelId"] == MODEL
