"""Reading a `ConverseStream` reply: its events, as boto3's `converse_stream(...)["stream"]` yields them, assembled
into the message `converse` would have returned.

The events (botocore 1.44.8 `ConverseStreamOutput`): `messageStart {role}`, `contentBlockStart {start,
contentBlockIndex}` (a `toolUse` start carries its id and name), `contentBlockDelta {delta, contentBlockIndex}`
(`text`, `toolUse.input` as pieces of JSON text, `reasoningContent` `text` / `signature` / `redactedContent`, or
another delta kept as it came), `contentBlockStop`, `messageStop {stopReason}`, `metadata`. An exception event of
the stream (`validationException`, `throttlingException`, ...) is raised by boto3 while iterating; given here as a
dict it is a ReadError naming it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from chatmend.exceptions import ReadError
from chatmend.providers.bedrock.wire import RAW_ARGUMENTS

__all__ = ["StreamedBlocks", "converse_response"]

_EXCEPTIONS = frozenset({"internalServerException", "modelStreamErrorException", "validationException",
                         "throttlingException", "serviceUnavailableException"})


class StreamedBlocks:
    """The content blocks of one streamed reply, built event by event."""

    def __init__(self) -> None:
        self.role = "assistant"
        self.stop_reason: str | None = None
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}

    def add(self, event: Any, n: int) -> None:
        """One event of the stream (its position `n`, for errors)."""
        if not isinstance(event, Mapping) or len(event) != 1:
            raise ReadError("a ConverseStream event is an object of one member", path=f"stream[{n}]")
        (kind, value), = event.items()
        path = f"stream[{n}].{kind}"
        if kind in _EXCEPTIONS:
            message = value.get("message") if isinstance(value, Mapping) else None
            raise ReadError(f"the stream ended with {kind}: {message!r}", path=path)
        if not isinstance(value, Mapping):
            raise ReadError(f"a {kind} event holds an object", path=path)
        if kind == "messageStart":
            self.role = str(value.get("role", "assistant"))
        elif kind == "messageStop":
            reason = value.get("stopReason")
            self.stop_reason = reason if isinstance(reason, str) else None
        elif kind in ("contentBlockStart", "contentBlockDelta", "contentBlockStop"):
            index = value.get("contentBlockIndex")
            if not isinstance(index, int) or isinstance(index, bool):
                raise ReadError("'contentBlockIndex' must be an integer", path=f"{path}.contentBlockIndex")
            if kind == "contentBlockStart":
                self._start(index, value.get("start"), path)
            elif kind == "contentBlockDelta":
                self._delta(index, value.get("delta"), path)
        # metadata (usage, metrics) and event kinds added later say nothing about the message

    def _start(self, index: int, start: Any, path: str) -> None:
        if not isinstance(start, Mapping):
            raise ReadError("'start' must be an object", path=f"{path}.start")
        use = start.get("toolUse")
        if isinstance(use, Mapping):
            self._blocks[index] = {"toolUse": {**use}}
            self._json[index] = []
        elif start:
            self._blocks[index] = dict(start)

    def _delta(self, index: int, delta: Any, path: str) -> None:
        if not isinstance(delta, Mapping) or len(delta) != 1:
            raise ReadError("'delta' is an object of one member", path=f"{path}.delta")
        (kind, value), = delta.items()
        block = self._blocks.get(index)
        if kind == "text":
            if not isinstance(value, str):
                raise ReadError("a text delta holds a string", path=f"{path}.delta.text")
            if block is None:
                block = self._blocks[index] = {"text": ""}
            if "text" not in block:
                raise ReadError(f"a text delta for block {index}, which is not text", path=f"{path}.delta")
            block["text"] += value
        elif kind == "toolUse":
            pieces = self._json.get(index)
            piece = value.get("input") if isinstance(value, Mapping) else None
            if pieces is None or not isinstance(piece, str):
                raise ReadError(f"a toolUse delta for block {index} needs its contentBlockStart and string "
                                "'input'", path=f"{path}.delta.toolUse")
            pieces.append(piece)
        elif kind == "reasoningContent":
            self._reasoning(index, block, value, path)
        else:  # citations and deltas added later: kept under their kind, the last one winning
            self._blocks.setdefault(index, {})[kind] = value

    def _reasoning(self, index: int, block: dict[str, Any] | None, value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            raise ReadError("a reasoningContent delta holds an object", path=f"{path}.delta.reasoningContent")
        if block is None:
            block = self._blocks[index] = {"reasoningContent": {}}
        reasoning = block.setdefault("reasoningContent", {})
        if "redactedContent" in value:
            data = value["redactedContent"]
            reasoning["redactedContent"] = (base64.b64encode(data).decode("ascii")
                                            if isinstance(data, (bytes, bytearray)) else data)
            return
        text = reasoning.setdefault("reasoningText", {"text": ""})
        if isinstance(value.get("text"), str):
            text["text"] += value["text"]
        if isinstance(value.get("signature"), str):
            text["signature"] = text.get("signature", "") + value["signature"]

    def message(self) -> dict[str, Any]:
        """The reply as `converse`'s `output.message`: blocks in index order, tool input parsed (not a JSON object:
        `{"_raw_arguments": text}`, as a stream cut off mid-call leaves it)."""
        content = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if index in self._json:
                text = "".join(self._json[index])
                try:
                    value = json.loads(text) if text else {}
                except ValueError:
                    value = None
                block["toolUse"]["input"] = value if isinstance(value, dict) else {RAW_ARGUMENTS: text}
            content.append(block)
        return {"role": self.role, "content": content}


def converse_response(events: Iterable[Any]) -> dict[str, Any]:
    """The `converse`-shaped response of a stream's events: `{"output": {"message": ...}, "stopReason": ...}`."""
    blocks = StreamedBlocks()
    for n, event in enumerate(events):
        blocks.add(event, n)
    response: dict[str, Any] = {"output": {"message": blocks.message()}}
    if blocks.stop_reason is not None:
        response["stopReason"] = blocks.stop_reason
    return response
