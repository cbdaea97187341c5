"""Reading back: saved Converse requests (boto3 keyword arguments, or the JSON body) and responses as ChatMessages."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from chatmend.exceptions import HistoryError, ReadError, error_context, validation_reason
from chatmend.messages import ChatMessage, FilePart, ImagePart, Part, TextPart, ThinkingPart, ToolCall, plainest_content
from chatmend.providers.anthropic.wire import SYSTEM_TAGS, THINKING_TAGS, untagged
from chatmend.providers.bedrock.wire import (
    MEDIA_KINDS,
    PROVIDER_NAME,
    RAW_ARGUMENTS,
    media_type_of_format,
)
from chatmend.providers.bedrock.write import JSON_TEXT
from chatmend.providers.kept import as_provider_data, native, unnamed_fields


def _message(**fields: Any) -> ChatMessage:
    """A ChatMessage, its validation errors as ReadError."""
    try:
        return ChatMessage(**fields)
    except HistoryError as exc:
        raise ReadError(validation_reason(exc)) from None


def blob(value: Any) -> str | None:
    """A blob as base64 text: JSON's form as it is, boto3's `bytes` encoded (None: not a blob)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return None


def _media(kind: str, value: Any, block: Mapping[str, Any]) -> Part:
    """An image, document, video or audio block as a part; one whose source chatmend cannot hold stays native."""
    if not isinstance(value, Mapping) or not isinstance(value.get("format"), str):
        return native(PROVIDER_NAME, block)
    source = value.get("source")
    fmt: str = value["format"]
    extra = unnamed_fields(value, ("format", "source", "name"))
    data = blob(source.get("bytes")) if isinstance(source, Mapping) else None
    s3 = source.get("s3Location") if isinstance(source, Mapping) else None
    url = s3.get("uri") if isinstance(s3, Mapping) and isinstance(s3.get("uri"), str) else None
    if (data is None) == (url is None) or not isinstance(source, Mapping) or len(source) != 1:
        return native(PROVIDER_NAME, block)  # a text or content document, or a malformed source: kept as it is
    if url is not None:
        assert isinstance(s3, Mapping)
        rest = {k: v for k, v in s3.items() if k != "uri"}
        extra = {"format": fmt, **({"s3Location": rest} if rest else {}), **extra}
    media_type = media_type_of_format(kind, fmt)
    if kind == "image":
        return ImagePart(media_type=media_type if data is not None else None, data=data, url=url,
                         provider_data=as_provider_data(PROVIDER_NAME, extra))
    name = value.get("name")
    if kind == "document":
        if not isinstance(name, str):
            return native(PROVIDER_NAME, block)
    else:
        extra = {"kind": kind, **extra}
    return FilePart(media_type=media_type, data=data, url=url, filename=name if isinstance(name, str) else None,
                    provider_data=as_provider_data(PROVIDER_NAME, extra))


def _user_part(block: Any, j: int) -> Part:
    """One non-result block of a user turn (or of a tool result's content)."""
    if not isinstance(block, Mapping):
        raise ReadError(f"expected a content block object, got {type(block).__name__}", path=f"content[{j}]")
    if len(block) == 1:
        (kind, value), = block.items()
        if kind == "text" and isinstance(value, str):
            inner = untagged(value, THINKING_TAGS)
            return ThinkingPart(text=inner) if inner is not None else TextPart(text=value)
        if kind in MEDIA_KINDS:
            return _media(kind, value, block)
    return native(PROVIDER_NAME, block)


def _reasoning(value: Any, block: Mapping[str, Any]) -> Part:
    """A `reasoningContent` block: readable text with its signature, or redacted bytes."""
    if not isinstance(value, Mapping):
        return native(PROVIDER_NAME, block)
    kept = as_provider_data(PROVIDER_NAME, unnamed_fields(value, ("reasoningText", "redactedContent")))
    text = value.get("reasoningText")
    redacted = blob(value.get("redactedContent"))
    if isinstance(text, Mapping) and isinstance(text.get("text"), str) and redacted is None:
        signature = text.get("signature")
        more = unnamed_fields(text, ("text", "signature"))
        if more or (signature is not None and not isinstance(signature, str)):
            return native(PROVIDER_NAME, block)
        return ThinkingPart(text=text["text"], signature=signature, provider=PROVIDER_NAME, provider_data=kept)
    if redacted is not None and text is None:
        return ThinkingPart(redacted=True, data=redacted, provider=PROVIDER_NAME, provider_data=kept)
    return native(PROVIDER_NAME, block)


def _call(value: Any, j: int) -> ToolCall:
    """A `toolUse` block as a call; arguments that are not an object come back as text."""
    path = f"content[{j}].toolUse"
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str) or not value["name"]:
        raise ReadError("a toolUse block needs a non-empty string 'name'", path=path)
    call_id = value.get("toolUseId", "")
    if not isinstance(call_id, str):
        raise ReadError(f"'toolUseId' must be a string, got {type(call_id).__name__}", path=f"{path}.toolUseId")
    raw = value.get("input", {})
    arguments: dict[str, Any] | str
    if isinstance(raw, dict) and set(raw) == {RAW_ARGUMENTS} and isinstance(raw[RAW_ARGUMENTS], str):
        arguments = raw[RAW_ARGUMENTS]
    elif isinstance(raw, dict):
        arguments = raw
    else:
        arguments = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
    kept = as_provider_data(PROVIDER_NAME, unnamed_fields(value, ("toolUseId", "name", "input")))
    return ToolCall(id=call_id, name=value["name"], arguments=arguments, provider_data=kept)


def read_assistant(content: Any) -> ChatMessage:
    """An assistant turn: text, reasoning, calls, and Bedrock's other blocks kept where they stood."""
    if not isinstance(content, list):
        raise ReadError("content must be a list of content blocks", path="content")
    parts: list[Part] = []
    calls: list[ToolCall] = []
    for j, block in enumerate(content):
        if isinstance(block, Mapping) and len(block) == 1:
            (kind, value), = block.items()
            if kind == "toolUse":
                calls.append(_call(value, j))
                continue
            if kind == "reasoningContent":
                parts.append(_reasoning(value, block))
                continue
        parts.append(_user_part(block, j))
    if len(parts) == 1 and type(parts[0]) is TextPart and parts[0].provider_data is None:
        return _message(role="assistant", content=parts[0].text, tool_calls=tuple(calls))
    return _message(role="assistant", content=tuple(parts), tool_calls=tuple(calls))


def _result(value: Any, j: int) -> ChatMessage:
    """A `toolResult` block as a tool message; `json` content as text that is written back as `json`."""
    path = f"content[{j}].toolResult"
    if not isinstance(value, Mapping) or not isinstance(value.get("toolUseId"), str):
        raise ReadError("a toolResult block needs a string 'toolUseId'", path=path)
    blocks = value.get("content", [])
    if not isinstance(blocks, list):
        raise ReadError("a toolResult's 'content' must be a list of blocks", path=f"{path}.content")
    parts: list[Part] = []
    with error_context(path=path):
        for k, block in enumerate(blocks):
            if isinstance(block, Mapping) and len(block) == 1 and "json" in block:
                text = json.dumps(block["json"], ensure_ascii=False, separators=(",", ":"))
                parts.append(TextPart(text=text, provider_data={PROVIDER_NAME: {"block": JSON_TEXT}}))
            else:
                parts.append(_user_part(block, k))
    status = value.get("status")
    extra = unnamed_fields(value, ("toolUseId", "content", "status"))
    if status not in (None, "success", "error"):
        extra["status"] = status
    return _message(role="tool", tool_call_id=value["toolUseId"], content=plainest_content(parts),
                    is_error=status == "error", provider_data=as_provider_data(PROVIDER_NAME, extra))


def read_user(content: Any) -> list[ChatMessage]:
    """A user turn: its results as tool messages, the rest as user messages in between; tagged system text as a
    system message."""
    if not isinstance(content, list):
        raise ReadError("content must be a list of content blocks", path="content")
    out: list[ChatMessage] = []
    group: list[Part] = []

    def close() -> None:
        if group:
            out.append(_message(role="user", content=plainest_content(group)))
            group.clear()

    for j, block in enumerate(content):
        if isinstance(block, Mapping) and len(block) == 1 and "toolResult" in block:
            close()
            out.append(_result(block["toolResult"], j))
            continue
        part = _user_part(block, j)
        inner = untagged(part.text, SYSTEM_TAGS) if type(part) is TextPart else None
        if inner is not None:
            close()
            out.append(_message(role="system", content=inner))
            continue
        group.append(part)
    close()
    return out


def read_message(item: Any) -> list[ChatMessage]:
    """One wire message as ChatMessages."""
    if not isinstance(item, Mapping):
        raise ReadError(f"expected a message object, got {type(item).__name__}")
    role = item.get("role")
    content = item.get("content")
    if role == "assistant":
        return [read_assistant(content)]
    if role == "user":
        return read_user(content)
    if role == "system":  # in botocore's ConversationRole enum; the API takes system text at the top level
        if not isinstance(content, list):
            raise ReadError("content must be a list of content blocks", path="content")
        return read_system(content)
    raise ReadError(f"unsupported role {role!r}; expected user or assistant", path="role")


def read_system(system: Any) -> list[ChatMessage]:
    """The top-level `system` as system messages: one per text block, with the blocks after it (a cachePoint)."""
    if system is None:
        return []
    if not isinstance(system, list):
        raise ReadError("'system' must be a list of system content blocks")
    messages: list[list[Part]] = []
    for j, block in enumerate(system):
        if not isinstance(block, Mapping):
            raise ReadError("expected a system content block object", path=f"[{j}]")
        if len(block) == 1 and isinstance(block.get("text"), str):
            messages.append([TextPart(text=block["text"])])
        elif messages:
            messages[-1].append(native(PROVIDER_NAME, block))
        else:
            messages.append([native(PROVIDER_NAME, block)])
    return [_message(role="system", content=plainest_content(parts)) for parts in messages]
