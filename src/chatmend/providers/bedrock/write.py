"""The body writer: a repaired history as the top-level `system` blocks and strictly alternating Converse messages."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from chatmend.exceptions import UnsupportedError
from chatmend.messages import ChatMessage, FilePart, ImagePart, NativePart, Part, TextPart, ThinkingPart
from chatmend.providers.anthropic.wire import SYSTEM_TAGS, THINKING_TAGS, blank, tagged, tool_input
from chatmend.providers.base import IdAssigner, parse_data_url
from chatmend.providers.bedrock.wire import (
    ASSISTANT_FILLER,
    AUDIO_FORMATS,
    DOCUMENT_FORMATS,
    ERROR_WITHOUT_OUTPUT,
    IMAGE_FORMATS,
    PROVIDER_NAME,
    USER_FILLER,
    VIDEO_FORMATS,
)
from chatmend.providers.kept import kept_field, kept_fields

Block = dict[str, Any]
WireMessage = dict[str, Any]

JSON_TEXT = "json"
"""`provider_data["bedrock"]["block"]` of a text part read from a `json` result block: written back as `json`."""
_IMAGE_AT = "Image at "
_NAME_UNSAFE = re.compile(r"[^a-zA-Z0-9\s\-()\[\]]+")
_SPACES = re.compile(r"\s+")


def _source(data: str | None, url: str | None, extra: dict[str, Any]) -> dict[str, Any] | None:
    """A media `source`: base64 `bytes` (the JSON form of the blob; `send` decodes it for boto3) or an S3 location;
    None for a URL Converse cannot fetch."""
    if data is not None:
        return {"bytes": data}
    if url is not None and url.startswith("s3://"):
        return {"s3Location": {"uri": url, **extra.pop("s3Location", {})}}
    return None


def _image(part: ImagePart) -> Block:
    """An `image` block; an image by https URL (Converse takes bytes or S3 only) is named in a text block."""
    if part.url is not None and part.url.startswith("data:"):
        inline = parse_data_url(part.url)
        if inline.data is not None:
            part = ImagePart(media_type=inline.media_type, data=inline.data, provider_data=part.provider_data)
    extra = dict(kept_fields(part.provider_data, PROVIDER_NAME) or {})  # a copy: each field is popped as it is written
    source = _source(part.data, part.url, extra)
    if source is None:
        return {"text": _IMAGE_AT + (part.url or "")}
    fmt = extra.pop("format", None) or IMAGE_FORMATS.get(part.media_type or "") or _extension_format(
        part.url, IMAGE_FORMATS)
    if fmt is None:
        raise UnsupportedError(f"image media type {part.media_type!r} is not accepted; expected one of "
                               f"{', '.join(sorted(set(IMAGE_FORMATS.values())))}", provider=PROVIDER_NAME,
                               feature="image")
    return {"image": {"format": fmt, "source": source, **extra}}


def _extension_format(url: str | None, table: Mapping[str, str]) -> str | None:
    """The format an S3 object's extension names (`.png`), when it is one of the table's."""
    if not url or "." not in url.rsplit("/", 1)[-1]:
        return None
    ext = url.rsplit(".", 1)[-1].lower()
    return ext if ext in set(table.values()) else ("jpeg" if ext == "jpg" and "jpeg" in table.values() else None)


def _document_name(filename: str | None) -> str:
    """A document `name` Converse accepts (letters, digits, single spaces, hyphens, parentheses, brackets)."""
    name = _SPACES.sub(" ", _NAME_UNSAFE.sub("-", filename or "")).strip()
    return name[:200] or "document"


def _file(part: FilePart) -> Block:
    """A `document`, `video` or `audio` block by the file's media type."""
    extra = dict(kept_fields(part.provider_data, PROVIDER_NAME) or {})  # a copy: each field is popped as it is written
    media_type = part.media_type or ""
    kind = extra.pop("kind", None) or ("video" if media_type.startswith("video/") else "audio" if media_type.startswith(
        "audio/") else "document")
    table = {"video": VIDEO_FORMATS, "audio": AUDIO_FORMATS}.get(kind, DOCUMENT_FORMATS)
    source = _source(part.data, part.url, extra)
    fmt = extra.pop("format", None) or table.get(media_type) or _extension_format(part.url, table)
    if source is None or fmt is None:
        what = "a file id" if part.file_id is not None else (f"a URL ({part.url})" if source is None
                                                            else f"media type {media_type!r}")
        raise UnsupportedError(f"a Converse {kind} block cannot carry {what}: give its bytes or an s3:// URL "
                               f"of a format Converse knows", provider=PROVIDER_NAME, feature="file")
    if kind == "document":
        return {"document": {"format": fmt, "name": extra.pop("name", None) or _document_name(part.filename),
                             "source": source, **extra}}
    return {kind: {"format": fmt, "source": source, **extra}}


def _reasoning(part: ThinkingPart) -> Block | None:
    """The part as a `reasoningContent` block when Bedrock made it (its signature is valid only there), else None."""
    if part.provider != PROVIDER_NAME:
        return None
    extra = kept_fields(part.provider_data, PROVIDER_NAME) or {}
    if part.redacted:
        return {"reasoningContent": {"redactedContent": part.data, **extra}} if part.data else None
    text: dict[str, Any] = {"text": part.text}
    if part.signature is not None:
        text["signature"] = part.signature
    return {"reasoningContent": {"reasoningText": text, **extra}}


def _block(part: Part) -> Block | None:
    """A part as a block of a user turn (None for blank text, BR8): another provider's thinking as tagged text,
    Bedrock's native block verbatim (another's never reaches the writer); a text read from a `json` result block
    is not written here."""
    if isinstance(part, TextPart):
        return None if blank(part.text) else {"text": part.text}
    if isinstance(part, ImagePart):
        return _image(part)
    if isinstance(part, FilePart):
        return _file(part)
    if isinstance(part, NativePart):
        return part.data
    return None if blank(part.text) else {"text": tagged(part.text, THINKING_TAGS)}


def _content_blocks(parts: Sequence[Part]) -> list[Block]:
    """User parts as blocks (`_block`), blank text left out."""
    return [block for part in parts if (block := _block(part)) is not None]


def _result_content(content: str | tuple[Part, ...], is_error: bool) -> list[Block]:
    """A `toolResult`'s content: text, json, images, documents; never empty when it failed (BR6)."""
    if isinstance(content, str):
        blocks: list[Block] = [] if blank(content) else [{"text": content}]
    else:
        blocks = []
        for part in content:
            if isinstance(part, TextPart) and kept_field(part.provider_data, PROVIDER_NAME, "block") == JSON_TEXT:
                try:
                    value = json.loads(part.text)
                except ValueError:
                    value = None
                if isinstance(value, dict):  # BR7: a json block holds an object
                    blocks.append({"json": value})
                    continue
            block = _block(part)
            if block is not None:
                blocks.append(block)
    if not blocks and is_error:
        blocks = [{"text": ERROR_WITHOUT_OUTPUT}]
    return blocks


class _Writer:
    """One pass over a repaired history: the wire messages, merged so that user and assistant turns alternate."""

    __slots__ = ("history", "ids", "names", "out")

    def __init__(self, history: list[ChatMessage], ids: IdAssigner, names: Mapping[str, str]) -> None:
        self.history = history
        self.ids = ids
        self.names = names
        """Tool names to the names written (BR12, `names.wire_names`); a name not in it is written as it is."""
        self.out: list[WireMessage] = []

    def user(self, blocks: list[Block]) -> None:
        """Add blocks to the user turn being written (BR3: results, moved media and a steer share one turn)."""
        if not blocks:
            return
        out = self.out
        if out and out[-1]["role"] == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": "user", "content": blocks})

    def assistant_turn(self, blocks: list[Block], leading_filler: bool) -> None:
        """Append an assistant turn; a user filler goes before it where a user turn must (BR3, BR4)."""
        out = self.out
        if (out and out[-1]["role"] == "assistant") or (not out and leading_filler):
            out.append({"role": "user", "content": [{"text": USER_FILLER}]})
        out.append({"role": "assistant", "content": blocks})

    def run(self, start: int, leading_filler: bool) -> None:
        """Write every message from `start` on."""
        history = self.history
        i = start
        while i < len(history):
            message = history[i]
            role = message.role
            if role == "assistant":
                i = self.assistant(i, leading_filler)
                continue
            if role == "user":
                content = message.content
                if isinstance(content, str):
                    self.user([] if blank(content) else [{"text": content}])
                else:
                    self.user(_content_blocks(content))
            elif role == "system":
                self.system_in_place(message)
            else:
                # unreachable after repair (every result follows its call); check reports it
                self.user([tool_result(message, message.tool_call_id or "")])
            i += 1

    def system_in_place(self, message: ChatMessage) -> None:
        """A later system message as user text in place, tagged so the model knows whose words these are."""
        content = message.content
        text = content if isinstance(content, str) else "\n".join(p.text for p in content if isinstance(p, TextPart))
        blocks = [] if blank(text) else [{"text": tagged(text, SYSTEM_TAGS)}]
        if not isinstance(content, str):
            blocks.extend(_content_blocks([p for p in content if not isinstance(p, TextPart)]))
        self.user(blocks)

    def assistant(self, i: int, leading_filler: bool) -> int:
        """Write the assistant message at `i`, its results and its media (only user turns carry images and
        documents: they follow the results); the index after them."""
        message = self.history[i]
        content = message.content
        blocks: list[Block] = []
        moved: list[Block] = []
        if isinstance(content, str):
            if not blank(content):
                blocks.append({"text": content})
        else:
            for part in content:
                if isinstance(part, (ImagePart, FilePart)):  # images and files go in user turns only: after the results
                    moved.extend(_content_blocks((part,)))
                    continue
                # Bedrock's own thinking as reasoning (its signature is valid here), any other part as in a user turn
                block = _reasoning(part) if isinstance(part, ThinkingPart) else None
                if block is None:
                    block = _block(part)
                if block is not None:
                    blocks.append(block)
        calls = message.tool_calls
        call_ids = [self.ids.next_id(c.name) for c in calls]
        for call, wire_id in zip(calls, call_ids):
            name = self.names.get(call.name, call.name)
            use = {"toolUseId": wire_id, "name": name, "input": tool_input(call.arguments)}
            if call.provider_data:
                use.update(kept_fields(call.provider_data, PROVIDER_NAME) or {})
            blocks.append({"toolUse": use})
        if not blocks:
            blocks = [{"text": ASSISTANT_FILLER}]  # BR3: the turn stays, so the user turns around it stay apart
        self.assistant_turn(blocks, leading_filler)
        # after repair, one result per call follows in call order (a lead written alone for context has none)
        history = self.history
        j = i + 1
        results = []
        for wire_id in call_ids:
            if j >= len(history) or history[j].role != "tool":
                break
            results.append(tool_result(history[j], wire_id))
            j += 1
        self.user(results)
        if moved:
            self.user(moved)
        return j



def tool_result(message: ChatMessage, wire_id: str) -> Block:
    """A `toolResult` block under the wire id of the call it answers; `status` only when it failed (the field is
    only supported by some models)."""
    block: Block = {"toolUseId": wire_id, "content": _result_content(message.content, message.is_error)}
    if message.is_error:
        block["status"] = "error"
    if message.provider_data:
        block.update(kept_fields(message.provider_data, PROVIDER_NAME) or {})
    return {"toolResult": block}


def system_blocks(history: list[ChatMessage], system: str | None) -> tuple[list[Block], int]:
    """The top-level `system` blocks (the option, then the system messages the history opens with) and the index of
    the first message written in the list."""
    blocks: list[Block] = [] if system is None or blank(system) else [{"text": system}]
    i = 0
    while i < len(history) and history[i].role == "system":
        content = history[i].content
        if isinstance(content, str):
            if not blank(content):
                blocks.append({"text": content})
        elif all(isinstance(p, TextPart) or (isinstance(p, NativePart) and p.provider == PROVIDER_NAME)
                 for p in content):
            for part in content:
                if isinstance(part, NativePart):
                    blocks.append(part.data)  # a cachePoint or guardContent of the system prompt
                elif isinstance(part, TextPart) and not blank(part.text):
                    blocks.append({"text": part.text})
        else:
            break  # images cannot go in the top-level system: this one goes in place
        i += 1
    return blocks, i


def write_messages(history: list[ChatMessage], ids: IdAssigner, *, start: int = 0,
                   leading_filler: bool = True, names: Mapping[str, str] | None = None) -> list[WireMessage]:
    """The wire messages of a repaired history from `start` on (`leading_filler`: a body opening with an assistant
    turn gets a user filler first, BR4; a run written inside a body does not; `names`: the tool names to write
    in place of the calls' own, a body's `wire_names`)."""
    writer = _Writer(history, ids, names or {})
    writer.run(start, leading_filler)
    return writer.out


def used_tool_names(history: list[ChatMessage]) -> list[str]:
    """The tool names the history's calls use, in order of first use."""
    names: dict[str, None] = {}
    for message in history:
        for call in message.tool_calls:
            names.setdefault(call.name, None)
    return list(names)
