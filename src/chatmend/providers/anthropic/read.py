"""Reading back: saved Messages bodies and responses as ChatMessages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from chatmend._json import brief
from chatmend.exceptions import ReadError, error_context, validation_reason
from chatmend.messages import ChatMessage, ImagePart, Part, TextPart, ThinkingPart, ToolCall
from chatmend.providers.anthropic.wire import (
    PROVIDER_NAME,
    RAW_ARGUMENTS,
    SYSTEM_CLOSE,
    SYSTEM_OPEN,
    THINKING_CLOSE,
    THINKING_OPEN,
)


def _unwrap(text: str, opening: str, closing: str) -> str | None:
    """The text between the tag lines `opening` and `closing`, or None when `text` is not wrapped in them."""
    if text.startswith(opening) and text.endswith(closing) and len(text) >= len(opening) + len(closing):
        return text[len(opening): len(text) - len(closing)]
    return None


def _message(**fields: Any) -> ChatMessage:
    """A ChatMessage, its validation errors as ReadError."""
    try:
        return ChatMessage(**fields)
    except ValidationError as exc:
        raise ReadError(validation_reason(exc)) from None


def read_system(system: Any) -> list[ChatMessage]:
    """The top-level system as system messages: one per text block."""
    if system is None:
        return []
    if isinstance(system, str):
        return [_message(role="system", content=system)]
    if not isinstance(system, list):
        raise ReadError("'system' must be a string or a list of text blocks")
    out = []
    for j, block in enumerate(system):
        if not isinstance(block, Mapping) or block.get("type") != "text" or not isinstance(
                block.get("text"), str):
            raise ReadError("the system prompt takes text blocks only", path=f"[{j}]")
        out.append(_message(role="system", content=block["text"]))
    return out


def read_message(item: Any, names: dict[str, str]) -> list[ChatMessage]:
    """One wire message as ChatMessages: a user turn splits into tool results and user text."""
    if not isinstance(item, Mapping):
        raise ReadError(f"expected a message object, got {type(item).__name__}")
    role = item.get("role")
    content = item.get("content")
    if not isinstance(content, (str, list)):
        raise ReadError("content must be a string or a list of blocks", path="content")
    if role == "assistant":
        if isinstance(content, str):
            return [_message(role="assistant", content=content)]
        return [read_assistant(content, names)]
    if role == "system":
        if isinstance(content, str):
            return [_message(role="system", content=content)]
        return [_message(role="system", content=_read_parts(content))]
    if role != "user":
        raise ReadError(f"unsupported role {brief(role)}; expected user, assistant or system", path="role")
    if isinstance(content, str):
        inner = _unwrap(content, SYSTEM_OPEN, SYSTEM_CLOSE)
        return [_message(role="system" if inner is not None else "user",
                         content=inner if inner is not None else content)]
    out: list[ChatMessage] = []
    group: list[Part] = []
    for j, block in enumerate(content):
        if isinstance(block, Mapping) and block.get("type") == "tool_result":
            if group:
                out.append(_user_group(group))
                group = []
            with error_context(path=f"content[{j}]"):
                out.append(_read_result(block, names))
        else:
            with error_context(path=f"content[{j}]"):
                group.append(_read_part(block))
    if group or not out:
        out.append(_user_group(group))
    return out


def _user_group(parts: list[Part]) -> ChatMessage:
    """User blocks as a user message, or as the system message they were written from."""
    first = parts[0] if parts else None
    if isinstance(first, TextPart):
        inner = _unwrap(first.text, SYSTEM_OPEN, SYSTEM_CLOSE)
        if inner is not None:
            return _message(role="system", content=(TextPart(text=inner), *parts[1:]))
    return _message(role="user", content=tuple(parts))


def _read_result(block: Mapping[str, Any], names: dict[str, str]) -> ChatMessage:
    """A tool_result block as a tool message (its tool's name from the matching tool_use)."""
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        raise ReadError("a tool_result needs a string 'tool_use_id'", path="tool_use_id")
    raw = block.get("content")
    content: str | tuple[Part, ...]
    if raw is None:
        content = ""
    elif isinstance(raw, str):
        content = raw
    elif isinstance(raw, list):
        content = _read_parts(raw)
    else:
        raise ReadError("tool_result content must be a string or a list of blocks", path="content")
    return _message(role="tool", tool_call_id=call_id, tool_name=names.get(call_id),
                    is_error=block.get("is_error") is True, content=content)


def read_assistant(content: list[Any], names: dict[str, str]) -> ChatMessage:
    """Assistant blocks as one message: text, thinking (signed, Anthropic's), and calls."""
    parts: list[Part] = []
    calls: list[ToolCall] = []
    for j, block in enumerate(content):
        kind = block.get("type") if isinstance(block, Mapping) else None
        with error_context(path=f"content[{j}]"):
            if kind == "tool_use":
                calls.append(_read_call(block))
                names[calls[-1].id] = calls[-1].name
            elif kind == "thinking":
                text, signature = block.get("thinking"), block.get("signature")
                if not isinstance(text, str):
                    raise ReadError("a thinking block needs its 'thinking' text")
                parts.append(ThinkingPart(text=text, provider=PROVIDER_NAME,
                                          signature=signature if isinstance(signature, str) else None))
            elif kind == "redacted_thinking":
                data = block.get("data")
                if not isinstance(data, str):
                    raise ReadError("a redacted_thinking block needs its 'data'")
                parts.append(ThinkingPart(redacted=True, data=data, provider=PROVIDER_NAME))
            else:
                part = _read_part(block)
                inner = _unwrap(part.text, THINKING_OPEN, THINKING_CLOSE) if isinstance(
                    part, TextPart) else None
                parts.append(ThinkingPart(text=inner) if inner is not None else part)
    return _message(role="assistant", content=tuple(parts), tool_calls=tuple(calls))


def _read_call(block: Mapping[str, Any]) -> ToolCall:
    """A tool_use block as a ToolCall; RAW_ARGUMENTS gives back the verbatim text."""
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(name, str) or not name:
        raise ReadError("a tool_use block needs a 'name'")
    if isinstance(arguments, Mapping) and set(arguments) == {RAW_ARGUMENTS}:
        arguments = arguments[RAW_ARGUMENTS]
    if not isinstance(arguments, (str, Mapping)):
        arguments = {}
    try:
        return ToolCall(id=call_id if isinstance(call_id, str) else "", name=name,
                        arguments=arguments if isinstance(arguments, str) else dict(arguments))
    except ValidationError as exc:
        raise ReadError(validation_reason(exc)) from None


def _read_parts(blocks: list[Any]) -> tuple[Part, ...]:
    """Text and image blocks, each error at its block (`content[j]`)."""
    parts = []
    for j, block in enumerate(blocks):
        with error_context(path=f"content[{j}]"):
            parts.append(_read_part(block))
    return tuple(parts)


def _read_part(block: Any) -> Part:
    """A text or image block (an error's path is within the block)."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    if kind == "text" and isinstance(block.get("text"), str):
        return TextPart(text=block["text"])
    if kind == "image":
        source = block.get("source")
        if isinstance(source, Mapping):
            if source.get("type") == "base64" and isinstance(source.get("data"), str):
                media_type = source.get("media_type")
                if media_type is not None and not isinstance(media_type, str):  # (`check`: SHAPE)
                    raise ReadError(f"'media_type' must be a string, got {type(media_type).__name__}",
                                    path="source.media_type")
                return ImagePart(media_type=media_type or "image/png", data=source["data"])
            if source.get("type") == "url" and isinstance(source.get("url"), str):
                return ImagePart(url=source["url"])
        raise ReadError("an image needs a base64 or url source", path="source")
    raise ReadError(f"unsupported block {brief(kind)}; expected text, image, thinking, tool_use or tool_result")

