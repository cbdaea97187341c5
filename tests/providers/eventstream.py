"""AWS event-stream messages (`application/vnd.amazon.eventstream`), as Bedrock's `ConverseStream` answers with
them, for local endpoints in tests: the prelude (total and headers length, their CRC32), string headers, the JSON
payload, the message's CRC32. boto3 decodes them with botocore's own `EventStreamBuffer`."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

CONTENT_TYPE = "application/vnd.amazon.eventstream"


def _headers(headers: dict[str, str]) -> bytes:
    out = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        out += struct.pack("!B", len(raw_name)) + raw_name + b"\x07" + struct.pack("!H", len(raw_value)) + raw_value
    return out


def message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message."""
    head = _headers(headers)
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack("!II", total, len(head))
    prelude += struct.pack("!I", zlib.crc32(prelude))
    body = prelude + head + payload
    return body + struct.pack("!I", zlib.crc32(body))


def event(kind: str, payload: dict[str, Any]) -> bytes:
    """An event of the stream (`contentBlockDelta`, ...), its members as JSON."""
    return message({":event-type": kind, ":content-type": "application/json", ":message-type": "event"},
                   json.dumps(payload).encode())


def exception(kind: str, text: str) -> bytes:
    """An exception event (`validationException`, `throttlingException`, ...)."""
    return message({":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"},
                   json.dumps({"message": text}).encode())


def reply_events(blocks: list[dict[str, Any]], stop: str = "end_turn") -> list[bytes]:
    """The events of a reply made of `blocks` (`{"text": ...}`, `{"toolUse": {...}}`, `{"reasoningContent": ...}`),
    each delta cut in two as a model streams them."""
    out = [event("messageStart", {"role": "assistant"})]
    for i, block in enumerate(blocks):
        if "toolUse" in block:
            use = block["toolUse"]
            out.append(event("contentBlockStart", {"contentBlockIndex": i, "start": {"toolUse": {
                "toolUseId": use["toolUseId"], "name": use["name"]}}}))
            text = json.dumps(use["input"])
            for piece in (text[: len(text) // 2], text[len(text) // 2:]):
                out.append(event("contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": piece}}}))
        elif "text" in block:
            text = block["text"]
            for piece in (text[: len(text) // 2], text[len(text) // 2:]):
                out.append(event("contentBlockDelta", {"contentBlockIndex": i, "delta": {"text": piece}}))
        elif "reasoningContent" in block:
            reasoning = block["reasoningContent"]["reasoningText"]
            out.append(event("contentBlockDelta", {"contentBlockIndex": i,
                                                   "delta": {"reasoningContent": {"text": reasoning["text"]}}}))
            out.append(event("contentBlockDelta", {"contentBlockIndex": i, "delta": {
                "reasoningContent": {"signature": reasoning["signature"]}}}))
        out.append(event("contentBlockStop", {"contentBlockIndex": i}))
    out.append(event("messageStop", {"stopReason": stop}))
    out.append(event("metadata", {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
                                  "metrics": {"latencyMs": 1}}))
    return out
