"""Reading back: saved Messages bodies and responses as ChatMessages.

Lossless: each block the neutral model names becomes its part (text, image, thinking, a `document` as a
FilePart, `tool_use` as a call, `tool_result` as a tool message) with every field it does not name kept in
`provider_data["anthropic"]`; any other block (`server_tool_use`, `web_search_tool_result`, `mcp_tool_use`,
`container_upload`, `search_result`, a type added last month) is a NativePart kept in place, verbatim.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from chatmend.exceptions import HistoryError, ReadError, error_context, validation_reason
from chatmend.messages import (
    ChatMessage,
    FilePart,
    ImagePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
    plainest_content,
)
from chatmend.providers.anthropic.wire import (
    DOCUMENT_MEDIA_TYPES,
    IN_MESSAGES,
    PROVIDER_NAME,
    RAW_ARGUMENTS,
    SYSTEM_TAGS,
    THINKING_TAGS,
    untagged,
)
from chatmend.providers.kept import as_provider_data, native, unnamed_fields
from chatmend.strict_json import brief, json_kind

ProviderData = dict[str, Any] | None

_CALL_KEYS = frozenset({"type", "id", "name", "input"})
_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
_DOCUMENT_KEYS = frozenset({"type", "source", "title"})
_IN_MESSAGES = {PROVIDER_NAME: {IN_MESSAGES: True}}


def _extra(block: Mapping[str, Any], named: frozenset[str]) -> ProviderData:
    """The block's fields the neutral model does not name, as `provider_data` (None when there are none)."""
    return as_provider_data(PROVIDER_NAME, unnamed_fields(block, named))


def _message(**fields: Any) -> ChatMessage:
    """A ChatMessage, its validation errors as ReadError."""
    try:
        return ChatMessage(**fields)
    except HistoryError as exc:
        raise ReadError(validation_reason(exc)) from None


def read_system(system: Any) -> list[ChatMessage]:
    """The top-level system as system messages: one per text block (its `cache_control` kept)."""
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
        if len(block) == 2:
            out.append(_message(role="system", content=block["text"]))
        else:
            out.append(_message(role="system", content=(_text_part(block),)))
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
    if role == "system":  # a system message inside `messages`: written back there
        return [_message(role="system", content=content if isinstance(content, str) else _read_parts(content),
                         provider_data=_IN_MESSAGES)]
    if role != "user":
        raise ReadError(f"unsupported role {brief(role)}; expected user, assistant or system", path="role")
    if isinstance(content, str):
        inner = untagged(content, SYSTEM_TAGS)
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
                out.append(_read_result(block, names.get))
        else:
            with error_context(path=f"content[{j}]"):
                group.append(_read_part(block))
    if group or not out:
        out.append(_user_group(group))
    return out


def _user_group(parts: list[Part], *, stored: bool = False) -> ChatMessage:
    """User blocks as a user message, or as the system message they were written from (`stored`: a transcript's,
    its content as plain as it goes)."""
    shape = plainest_content if stored else tuple
    first = parts[0] if parts else None
    if isinstance(first, TextPart) and first.provider_data is None:
        inner = untagged(first.text, SYSTEM_TAGS)
        if inner is not None:
            return _message(role="system", content=shape((TextPart(text=inner), *parts[1:])))
    return _message(role="user", content=shape(parts))


def _read_result(block: Mapping[str, Any], name_of: Callable[[str], str | None], *, stored: bool = False,
                 ) -> ChatMessage:
    """A tool_result block as a tool message (its tool's name from the matching tool_use).

    Its other fields (`cache_control`, ...) go to `provider_data`, and so do the forms the neutral message
    cannot tell apart: an explicit `is_error: false`, an empty `content` string or list (a missing one is "").
    """
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
        content = plainest_content(_stored_parts(raw, range(len(raw)))) if stored else _read_parts(raw)
    else:
        raise ReadError("tool_result content must be a string or a list of blocks", path="content")
    is_error = block.get("is_error")
    extra = None
    if len(block) > 2 + ("content" in block) + (is_error is True):
        extra = unnamed_fields(block, _RESULT_KEYS)
        if "is_error" in block and is_error is not True:
            extra["is_error"] = is_error
    if raw is not None and not raw:
        extra = {**(extra or {}), "content": raw}
    return _message(role="tool", tool_call_id=call_id, tool_name=name_of(call_id), is_error=is_error is True,
                    content=content, provider_data={PROVIDER_NAME: extra} if extra else None)


def read_assistant(content: list[Any], names: dict[str, str]) -> ChatMessage:
    """Assistant blocks as one message: text, thinking (signed, Anthropic's), calls, and native blocks in
    place (server tool uses and their results, MCP calls)."""
    parts: list[Part] = []
    calls: list[ToolCall] = []
    for j, block in enumerate(content):
        with error_context(path=f"content[{j}]"):
            if _read_reply_block(block, parts, calls):
                names[calls[-1].id] = calls[-1].name
    return _message(role="assistant", content=tuple(parts), tool_calls=tuple(calls))


def _read_reply_block(block: Any, parts: list[Part], calls: list[ToolCall]) -> bool:
    """One block of a reply, added to its parts or its calls (True for a call)."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    if kind == "tool_use":
        calls.append(_read_call(block))
        return True
    if kind == "thinking":
        text, signature = block.get("thinking"), block.get("signature")
        if not isinstance(text, str):
            raise ReadError("a thinking block needs its 'thinking' text")
        parts.append(ThinkingPart(text=text, provider=PROVIDER_NAME,
                                  signature=signature if isinstance(signature, str) else None,
                                  provider_data=_extra(block, _THINKING_KEYS) if len(block) > 3 else None))
    elif kind == "redacted_thinking":
        data = block.get("data")
        if not isinstance(data, str):
            raise ReadError("a redacted_thinking block needs its 'data'")
        parts.append(ThinkingPart(redacted=True, data=data, provider=PROVIDER_NAME,
                                  provider_data=_extra(block, _REDACTED_KEYS) if len(block) > 2 else None))
    else:
        part = _read_part(block)
        inner = untagged(part.text, THINKING_TAGS) if isinstance(
            part, TextPart) and part.provider_data is None else None
        parts.append(ThinkingPart(text=inner) if inner is not None else part)
    return False


_THINKING_KEYS = frozenset({"type", "thinking", "signature"})
_REDACTED_KEYS = frozenset({"type", "data"})


def _read_call(block: Mapping[str, Any]) -> ToolCall:
    """A tool_use block as a ToolCall; RAW_ARGUMENTS gives back the verbatim text; `cache_control`, `caller`
    and the other fields go to `provider_data`."""
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(name, str) or not name:
        raise ReadError("a tool_use block needs a 'name'")
    if isinstance(arguments, Mapping) and set(arguments) == {RAW_ARGUMENTS}:
        arguments = arguments[RAW_ARGUMENTS]
    if not isinstance(arguments, (str, Mapping)):
        arguments = {}
    try:
        return ToolCall(id=call_id if isinstance(call_id, str) else "", name=name,
                        arguments=arguments if isinstance(arguments, str) else dict(arguments),
                        provider_data=_extra(block, _CALL_KEYS) if len(block) > 4 else None)
    except HistoryError as exc:
        raise ReadError(validation_reason(exc)) from None


def _read_parts(blocks: list[Any]) -> tuple[Part, ...]:
    """Content blocks, each error at its block (`content[j]`)."""
    parts = []
    for j, block in enumerate(blocks):
        with error_context(path=f"content[{j}]"):
            parts.append(_read_part(block))
    return tuple(parts)


def _text_part(block: Mapping[str, Any]) -> TextPart:
    """A text block (its `cache_control`, `citations` in `provider_data`)."""
    return TextPart(text=block["text"], provider_data=_extra(block, _TEXT_KEYS) if len(block) > 2 else None)


_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "source"})


def _read_part(block: Any) -> Part:
    """A content block as a part (an error's path is within the block): text, image and document as theirs,
    any other type as a NativePart, verbatim."""
    if not isinstance(block, Mapping):
        raise ReadError(f"expected a content block object, got {type(block).__name__}")
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return _text_part(block)
    if kind == "image":
        return _read_image(block)
    if kind == "document":
        return _read_document(block)
    return native(PROVIDER_NAME, block)


def _read_image(block: Mapping[str, Any]) -> Part:
    """An image block: a base64 or url source as an ImagePart, a file source (or any other) verbatim."""
    source = block.get("source")
    if not isinstance(source, Mapping) or not isinstance(source.get("type"), str):
        raise ReadError("an image needs a base64, url or file source", path="source")
    extra = _extra(block, _IMAGE_KEYS) if len(block) > 2 else None
    kind = source["type"]
    if kind == "base64" and isinstance(source.get("data"), str):
        media_type = source.get("media_type")
        if media_type is not None and not isinstance(media_type, str):  # (`check`: SHAPE)
            raise ReadError(f"'media_type' must be a string, got {type(media_type).__name__}",
                            path="source.media_type")
        if media_type is not None and len(source) == 3:
            return ImagePart(media_type=media_type, data=source["data"], provider_data=extra)
    elif kind == "url" and isinstance(url := source.get("url"), str):
        if len(source) == 2 and not url.startswith("data:"):  # (a data: URI would be written back as base64)
            return ImagePart(url=url, provider_data=extra)
    elif kind in ("base64", "url"):
        raise ReadError(f"an image's {kind} source needs its {'data' if kind == 'base64' else 'url'}",
                        path="source")
    return native(PROVIDER_NAME, block)


def _read_document(block: Mapping[str, Any]) -> Part:
    """A document block as a FilePart (base64 PDF, plain text, PDF url, file id; the title as its filename,
    `context`, `citations`, `cache_control` in `provider_data`); a content source, verbatim."""
    source = block.get("source")
    if not isinstance(source, Mapping) or not isinstance(source.get("type"), str):
        raise ReadError("a document needs a source with a 'type'", path="source")
    title = block.get("title")
    extra = _extra(block, _DOCUMENT_KEYS if isinstance(title, str) else _IMAGE_KEYS)
    filename = title if isinstance(title, str) else None
    kind = source["type"]
    data = source.get("data")
    if kind in DOCUMENT_MEDIA_TYPES and len(source) == 3 and isinstance(data, str) and source.get(
            "media_type") == DOCUMENT_MEDIA_TYPES[kind]:
        if kind == "text":
            try:
                data = base64.b64encode(data.encode()).decode("ascii")
            except UnicodeEncodeError:  # a lone surrogate: no bytes to carry, kept verbatim
                return native(PROVIDER_NAME, block)
        return FilePart(media_type=DOCUMENT_MEDIA_TYPES[kind], data=data, filename=filename, provider_data=extra)
    if kind == "url" and len(source) == 2 and isinstance(source.get("url"), str):
        return FilePart(url=source["url"], filename=filename, provider_data=extra)
    if kind == "file" and len(source) == 2 and isinstance(source.get("file_id"), str):
        return FilePart(file_id=source["file_id"], provider=PROVIDER_NAME, filename=filename, provider_data=extra)
    return native(PROVIDER_NAME, block)


# --- an agent's transcript: its turns, handed over by the store that holds them ---------------------------------


def read_turn(role: str, blocks: Sequence[Any], name_of: Callable[[str], str | None],
              ) -> list[tuple[ChatMessage, list[int]]]:
    """A turn an agent's transcript holds (Claude Code, Cline): one wire message's content blocks, a reply's maybe
    gathered from several records, as ChatMessages, each with the indices of the blocks it was read from (the
    store writes repaired messages back block by block); a result's tool is `name_of` its call id (the store
    pairs results as repair does). Read as `read_message` reads a body's, but for what a transcript holds that a
    body would not: a string is a text block; a block that is not an object stays in the file, unread; a call
    with no name is `tool`'s and one with no input takes none, thinking with no text is empty, a result with no
    call id answers "" (as the agent's tool reads them); a field of another type is a ReadError at it
    (`content[1].id: expected a string, got a list`), never read as something else. One text is a plain string.
    """
    if role == "assistant":
        parts: list[Part] = []
        calls: list[ToolCall] = []
        j = 0
        try:
            for j in range(len(blocks)):
                stored = _as_stored(blocks[j])
                if stored is not None:
                    _read_reply_block(stored, parts, calls)
        except ValueError:  # a ReadError, or a value the neutral model refuses: at its block
            with error_context(path=f"content[{j}]"):
                raise
        content = tuple(parts) if any(isinstance(p, ThinkingPart) for p in parts) else plainest_content(parts)
        return [(_message(role="assistant", content=content, tool_calls=tuple(calls)), list(range(len(blocks))))]
    out: list[tuple[ChatMessage, list[int]]] = []
    group: list[int] = []
    for j, block in enumerate(blocks):
        if isinstance(block, Mapping) and block.get("type") == "tool_result":
            if group:
                out.append(_stored_group(blocks, group))
                group = []
            with error_context(path=f"content[{j}]"):
                out.append((_stored_result(block, name_of), [j]))
        else:
            group.append(j)
    if group:
        out.append(_stored_group(blocks, group))
    return out


def _stored_group(blocks: Sequence[Any], group: list[int]) -> tuple[ChatMessage, list[int]]:
    """A run of a user turn's blocks other than results, as one user message (or the system one it wraps)."""
    return _user_group(_stored_parts(blocks, group), stored=True), group


def _stored_result(block: Mapping[str, Any], name_of: Callable[[str], str | None]) -> ChatMessage:
    """A transcript's tool_result (no call id: "")."""
    call_id = block.get("tool_use_id")
    _expect(block, "tool_use_id", (str, type(None)), "a string")
    return _read_result(block if call_id is not None else {**block, "tool_use_id": ""}, name_of, stored=True)


def _stored_parts(blocks: Sequence[Any], at: Iterable[int]) -> list[Part]:
    """A transcript's content blocks at `at` as parts (a block that is not an object stays in the file, unread)."""
    parts = []
    j = 0
    try:
        for j in at:
            stored = _as_stored(blocks[j])
            if stored is not None:
                parts.append(_read_part(stored))
    except ValueError:  # a ReadError, or a value the neutral model refuses: at its block
        with error_context(path=f"content[{j}]"):
            raise
    return parts


def _as_stored(block: Any) -> Mapping[str, Any] | None:
    """A transcript's block in the shape the body reader reads (None: not an object, left unread), its fields'
    types checked."""
    if isinstance(block, str):
        return {"type": "text", "text": block}
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind == "tool_use":
        _expect(block, "id", (str, type(None)), "a string")
        _expect(block, "name", (str, type(None)), "a string")
        name, arguments = block.get("name"), block.get("input")
        if arguments:
            _expect(block, "input", (dict, str), "an object (the tool's input)")
        elif type(arguments) is not dict or not name:
            return {**block, "name": name or "tool", "input": {}}
        if not name:
            return {**block, "name": "tool"}
    elif kind == "thinking":
        _expect(block, "thinking", (str, type(None)), "a string")
        _expect(block, "signature", (str, type(None)), "a string")
        if block.get("thinking") is None:
            return {**block, "thinking": ""}
    elif kind == "redacted_thinking":
        _expect(block, "data", (str, type(None)), "a string")
        if block.get("data") is None:
            return {**block, "data": ""}
    return block


def _expect(block: Mapping[str, Any], key: str, types: tuple[type, ...], expected: str) -> None:
    """A ReadError at the block's `key` when its value is not of `types` (`expected` says what it should be)."""
    value = block.get(key)
    if not isinstance(value, types):
        raise ReadError(f"expected {expected}, got {json_kind(value)}", path=key)


# --- blocks a reader of a large transcript need not read: their keys ---------------------------------------------

PROMPT = "prompt"
"""`plain_turn`'s shape of a user turn of plain text."""
_plain_name = re.compile(r"[A-Za-z0-9_-]{1,64}").fullmatch
"""A call id or tool name as agents write them, which every check takes as it is."""


def plain_reply(content: object) -> tuple[tuple[str, object], ...] | None:
    """The keys of a reply's blocks when every block is one `check` finds nothing in and `read_turn` reads as it
    stands: non-blank text and signed thinking (("text" or "thinking", a hash of them)), a call with a plain id
    and name and an object input (("tool_use", its id)); None for any other content."""
    if type(content) is not list or not content:
        return None
    keys = tuple(map(_plain_key, content))
    return None if None in keys else keys  # type: ignore[return-value]


def plain_turn(content: object) -> tuple[object, bool]:
    """A user turn's shape (`PROMPT` for plain text; the call ids of results of plain text, a tuple; None for any
    other content) and whether it holds a result."""
    if type(content) is str:
        return (PROMPT if content.strip() else None), False
    if type(content) is not list or not content:
        return None, False
    first = content[0]
    if type(first) is dict and first.get("type") == "tool_result":
        ids = tuple(map(_plain_result, content))
        return (None if None in ids else ids), True
    if _plain_text(first):
        return (PROMPT if all(map(_plain_text, content)) else None), holds_results(content)
    return None, holds_results(content)


def holds_results(content: object) -> bool:
    """True for a user turn's content holding a tool_result block."""
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def has_call_without_id(content: object) -> bool:
    """True when a reply's content holds a call with no id (rule 5 names it by its index in the whole history)."""
    return type(content) is list and any(
        isinstance(b, Mapping) and b.get("type") == "tool_use" and not (isinstance(b.get("id"), str) and b["id"])
        for b in content)


def block_identity(block: object) -> object:
    """What makes a block the same block sent again: a call its id, a plain text its text, any other its JSON."""
    if isinstance(block, str):
        return ("text", block)
    if isinstance(block, Mapping):
        kind = block.get("type")
        if kind == "tool_use" and isinstance(block.get("id"), str):
            return (kind, block["id"])
        if kind == "text" and len(block) == 2 and isinstance(block.get("text"), str):
            return (kind, block["text"])
    return json.dumps(block, ensure_ascii=False, separators=(",", ":"))


def _plain_text(block: object) -> bool:
    """A text block with nothing but non-blank text."""
    return type(block) is dict and len(block) == 2 and block.get("type") == "text" \
        and type(block.get("text")) is str and not block["text"].isspace() and bool(block["text"])


def _plain_result(block: object) -> str | None:
    """The call id of a tool_result block of plain text (a string, or text blocks), else None."""
    if type(block) is not dict or block.get("type") != "tool_result" or not block.keys() <= _RESULT_KEYS:
        return None
    call_id, content = block.get("tool_use_id"), block.get("content")
    if type(call_id) is not str or not _plain_name(call_id) or type(block.get("is_error", False)) is not bool:
        return None
    if type(content) is str or (type(content) is list and all(map(_plain_text, content))):
        return call_id
    return None


def _plain_key(block: object) -> tuple[str, object] | None:
    """A reply block's key (`plain_reply`), or None for a block check might find something in."""
    if type(block) is not dict:
        return None
    kind = block.get("type")
    if kind == "tool_use":
        call_id, name = block.get("id"), block.get("name")
        if block.keys() != _CALL_KEYS or type(call_id) is not str or type(name) is not str \
                or type(block["input"]) is not dict or not _plain_name(call_id) or not _plain_name(name):
            return None
        return "tool_use", call_id
    if kind == "text":
        text = block.get("text")
        if len(block) != 2 or type(text) is not str or not text or text.isspace():
            return None
        return "text", hash(text)
    if kind == "thinking":
        thinking, signature = block.get("thinking"), block.get("signature")
        if block.keys() != _THINKING_KEYS or type(thinking) is not str or type(signature) is not str:
            return None
        return "thinking", hash((thinking, signature))
    return None
