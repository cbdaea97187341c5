"""Canonical JSON Lines: one message a line, fixed key order, no spaces, UTF-8, defaults left out.

Key order: role, tool_call_id, tool_name, is_error, content, tool_calls, provider_data.

Equal histories give equal bytes (object keys inside arguments and provider data are sorted), and
`loads(dumps(h)) == h`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import fields
from typing import Any

from chatmend import strict_json as strict_json
from chatmend.exceptions import HistoryError
from chatmend.messages import (
    ChatMessage,
    FilePart,
    ImagePart,
    NativePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
    coerce_message,
    type_adapter,
)

__all__ = ["dump_line", "dumps", "iter_loads", "loads", "message_to_dict"]

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _canonical(value: Any) -> Any:
    """A JSON value with every object's keys sorted, so equal values give equal bytes."""
    if isinstance(value, dict) and not any(isinstance(v, (dict, list, tuple)) for v in value.values()):
        return {k: value[k] for k in sorted(value)}  # the usual flat arguments, without the stack
    return strict_json.copy_tree(value, sort_keys=True)  # a stack, not recursion: any depth read is written


def _part_to_dict(part: Part) -> dict[str, Any]:
    if type(part) is TextPart:
        if part.provider_data is None:
            return {"type": "text", "text": part.text}
        return {"type": "text", "text": part.text, "provider_data": _canonical(part.provider_data)}
    if type(part) is ImagePart or type(part) is FilePart:
        return _source_to_dict(part)
    if type(part) is NativePart:
        return {"type": "native", "provider": part.provider, "data": _canonical(part.data)}
    assert type(part) is ThinkingPart
    d: dict[str, Any] = {"type": "thinking"}
    if part.text:
        d["text"] = part.text
    if part.signature is not None:
        d["signature"] = part.signature
    if part.redacted:
        d["redacted"] = True
    if part.data is not None:
        d["data"] = part.data
    if part.provider is not None:
        d["provider"] = part.provider
    if part.provider_data is not None:
        d["provider_data"] = _canonical(part.provider_data)
    return d


def _source_to_dict(part: ImagePart | FilePart) -> dict[str, Any]:
    """An image or file part: its tag, then every field that is set, in the model's order."""
    d: dict[str, Any] = {"type": part.type}
    for name in _SOURCE_FIELDS[type(part)]:
        value = getattr(part, name)
        if value is not None:
            d[name] = _canonical(value) if name == "provider_data" else value
    return d


_SOURCE_FIELDS = {kind: tuple(f.name for f in fields(kind) if f.name != "type") for kind in (ImagePart, FilePart)}


def _call_to_dict(call: ToolCall) -> dict[str, Any]:
    d: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": _canonical(call.arguments)}
    if call.raw_arguments is not None:
        d["raw_arguments"] = call.raw_arguments
    if call.provider_data is not None:
        d["provider_data"] = _canonical(call.provider_data)
    return d


def message_to_dict(message: ChatMessage) -> dict[str, Any]:
    """The canonical JSON shape of one message: fixed key order, default-valued fields left out."""
    content = message.content
    d: dict[str, Any] = {"role": message.role}
    if message.tool_call_id is not None:
        d["tool_call_id"] = message.tool_call_id
    if message.tool_name is not None:
        d["tool_name"] = message.tool_name
    if message.is_error:
        d["is_error"] = True
    d["content"] = content if isinstance(content, str) else [_part_to_dict(p) for p in content]
    if message.tool_calls:
        d["tool_calls"] = [_call_to_dict(c) for c in message.tool_calls]
    if message.provider_data is not None:
        d["provider_data"] = _canonical(message.provider_data)
    return d


# Characters that str.splitlines (and JavaScript) treat as line breaks although JSON allows them raw:
# escaped, so any line-based reader sees one message a line.
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def dump_line(message: ChatMessage) -> str:
    """One message as its canonical line, without the newline."""
    line = _encode(message_to_dict(message))
    if "\x85" in line or "\u2028" in line or "\u2029" in line:
        line = line.translate(_LINE_BREAKS)
    return line


def dumps(messages: Iterable[ChatMessage]) -> str:
    """Canonical JSON Lines: one message a line, each line ending in a newline."""
    return "".join(dump_line(m) + "\n" for m in messages)


def iter_loads(lines: Iterable[str], *, first_line: int = 1) -> Iterator[ChatMessage]:
    """Messages from JSON Lines, one at a time; a bad line raises a HistoryError with its line number."""
    index = 0
    for number, line in enumerate(lines, start=first_line):
        if not line.strip():
            continue
        line = line.rstrip("\r\n")  # so an error at the end of the line is located on this line
        try:
            # Parsed and validated in one step by pydantic-core: the same message as json.loads then validation
            # (floats, big ints, NaN, repeated keys alike; tested), without the intermediate dicts.
            if strict_json.suspect(line):
                raise ValueError  # what pydantic-core reads and JSON is not (NaN, 1e999): the careful path decides
            message = type_adapter(ChatMessage).validate_json(line)
        except ValueError:  # pydantic's ValidationError is one
            message = _read_line(line, number, index)  # again by the located path, for its exact error
        yield message
        index += 1


def _read_line(line: str, number: int, index: int) -> ChatMessage:
    """One line through json.loads and `coerce_message`: a HistoryError with the line number when it is bad.

    Also what reads the rare good line pydantic-core's parser refuses (a lone surrogate escape like \\ud800).
    """
    try:
        data = strict_json.loads(line)
    except json.JSONDecodeError as exc:
        raise HistoryError(f"invalid JSON: {exc.msg}", line=number, column=exc.colno, index=index) from None
    try:
        return coerce_message(data, index)
    except HistoryError as exc:
        exc.line = number
        exc.args = (exc._render(),)
        raise


def loads(text: str) -> list[ChatMessage]:
    """A history from JSON Lines text (blank lines are skipped)."""
    # Split on "\n" only: str.splitlines would also split inside strings holding U+2028 and friends.
    return list(iter_loads(text.split("\n")))
