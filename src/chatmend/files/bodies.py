"""Provider request bodies as files: a whole body, its message list, or JSON Lines of its messages.

Reading goes through the adapter's `from_request`; writing back runs the adapter's `to_request` and puts
only the conversation keys into the original body, so every other field stays as it was. A repair writes
through the `Repairer` that made its report, so the history is repaired once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from chatmend import ChatmendError, ChatMessage, Repairer, RepairResult, providers
from chatmend.files.io import InputError
from chatmend.files.session import InFormat, Session
from chatmend.providers.base import Provider
from chatmend.repair import IsReadOnly

__all__ = ["adapter", "body_for_check", "provider_formats", "read_provider", "wire_json"]

_PLACEHOLDER_MODEL = "unknown-model"


def provider_formats() -> dict[str, str]:
    """Every registered provider's format, with its one-line description."""
    return {name: adapter(name).description for name in providers.names()}


def _path_index() -> re.Pattern[str]:
    """`messages[3].content` as the index into a body's list and the rest of the path, for every list key."""
    keys = sorted({re.escape(adapter(name).list_key) for name in providers.names()})
    return re.compile(rf"^(?:{'|'.join(keys)})\[(\d+)\](.*)$")


def adapter(name: str) -> Provider:
    """The provider adapter, or an InputError when its module is not there."""
    try:
        return providers.get(name)
    except ModuleNotFoundError:
        raise InputError(f"the {name} adapter (chatmend.providers.{name}) is not available") from None


def wire_json(value: Any, *, indent: bool) -> str:
    """JSON text as providers take it: UTF-8, compact or indented by two, ending in a newline."""
    if indent:
        return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def read_provider(
    fmt: str, value: Any, *, shape: str, locations: Sequence[str], indent: bool = False, text: str | None = None
) -> Session:
    """A Session from a provider body (`shape` body), its list (`list`) or JSON Lines of it (`jsonl`); `text`,
    the JSON document `value` was read from, is what a repair in the body's format writes back: as it was when
    nothing changes, else with only the changed items written anew, in its own indentation and separators."""
    provider = adapter(fmt)
    items = value.get(provider.list_key) if isinstance(value, Mapping) else value
    try:
        messages = provider.from_request(value)
    except ChatmendError as exc:
        raise _at_file_line(exc, fmt, locations) from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InputError(f"cannot read this as {fmt}: {exc}") from None
    if not messages:
        raise InputError(f"no messages in this {fmt} {'body' if shape == 'body' else 'list'}")
    count = len(items) if isinstance(items, list) else -1
    where = _where(messages, count, locations)
    body = dict(value) if isinstance(value, Mapping) else None
    model = body.get("model") if body is not None else None
    write = _writer(fmt, shape, body, indent)

    def repair(is_read_only: IsReadOnly | None) -> tuple[RepairResult, Iterator[str]]:
        repairer = Repairer(is_read_only=is_read_only)
        return repairer.repair(messages), write(messages, repairer)  # the write finds the repair done

    def repair_in_format(is_read_only: IsReadOnly | None) -> InFormat:
        return _repair_in_format(provider, value, shape=shape, locations=locations, indent=indent,
                                 is_read_only=is_read_only, text=text)

    return Session(
        format=fmt,
        messages=messages,
        where=where,
        write=write,
        repair_and_write=repair,
        repair_in_format=repair_in_format,
        provider=fmt,
        body=body_for_check(fmt, value),
        model=model if isinstance(model, str) else None,
        item_lines=[int(w[5:]) for w in locations] if shape == "jsonl" else [],
    )


def _where(messages: Sequence[ChatMessage], count: int, locations: Sequence[str]) -> list[str]:
    """Where each message read from a list of `count` items was: its item's location when there is one message
    an item (or a system message first, from a body's own field), else its position."""
    if len(messages) == count:
        return list(locations)
    if len(messages) == count + 1 and messages and messages[0].role == "system":
        return ["system", *locations]
    return [f"message {i}" for i in range(len(messages))]


def _repair_in_format(provider: Provider, value: Any, *, shape: str, locations: Sequence[str], indent: bool,
                      is_read_only: IsReadOnly | None, text: str | None = None) -> InFormat:
    """The body (or the list, or the JSON Lines of it) repaired by the adapter's `repair_body`: the other fields
    and every item repair leaves alone as they were."""
    key = provider.list_key
    body = value if shape == "body" else {key: value}
    try:
        repaired = provider.repair_body(body, is_read_only=is_read_only)
    except ChatmendError as exc:
        raise _at_file_line(exc, provider.name, locations) from None
    items: list[Any] = repaired.body[key]
    count = len(body[key])
    if repaired.item_of and len(locations) == count:
        where = [locations[r] for r in repaired.item_of]
    else:
        where = _where(repaired.history, count, locations)
    if shape == "body":
        chunks = iter([_written(text, value, repaired.body, key, indent=indent, changed=repaired.changed)])
        rewritten = [f"{key}[{i}]" for i in repaired.rewritten]
    elif shape == "list":
        chunks = iter([_written(text, value, items, None, indent=indent, changed=repaired.changed)])
        rewritten = [f"[{i}]" for i in repaired.rewritten]
    else:
        chunks = (wire_json(item, indent=False) for item in items)
        rewritten = [f"line {i + 1}" for i in repaired.rewritten]
    return InFormat(repaired.result, chunks, repaired.history, where, rewritten)


def _written(text: str | None, before: Any, after: Any, key: str | None, *, indent: bool, changed: bool) -> str:
    """The repaired document's text: `text` itself when nothing changed; else `text` with only what repair
    wrote anew in it replaced, in the file's own indentation and separators (`_Layout`); the whole document
    written anew (`wire_json`) when there is no text, or it cannot be spliced."""
    if text is not None and not changed:
        return text
    if text is not None:
        try:
            return _splice(text, before, after, key)
        except (ValueError, IndexError, KeyError):
            pass  # (not met with text the reader read: the whole document is written anew)
    return wire_json(after, indent=indent)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    match = _WHITESPACE.match(text, i)
    assert match is not None
    return match.end()


def _values(text: str, start: int) -> tuple[list[tuple[Any, int, int]], int]:
    """The members of the object (keys) or the items of the array (positions) that opens at `start`: each with
    the span of its value in `text`; and where the container ends."""
    opening = text[start]
    closing = "}" if opening == "{" else "]"
    i = _skip(text, start + 1)
    spans: list[tuple[Any, int, int]] = []
    if text[i] == closing:
        return spans, i + 1
    while True:
        name: Any = len(spans)
        if opening == "{":
            name, i = _DECODER.raw_decode(text, i)
            i = _skip(text, i)
            if text[i] != ":":
                raise ValueError("expected ':'")
            i = _skip(text, i + 1)
        _, end = _DECODER.raw_decode(text, i)
        spans.append((name, i, end))
        i = _skip(text, end)
        if text[i] == closing:
            return spans, i + 1
        if text[i] != ",":
            raise ValueError("expected ','")
        i = _skip(text, i + 1)


class _Layout:
    """How a JSON document is laid out: its indent unit (None: on one line), its separators, whether it escapes
    every character past ASCII."""

    def __init__(self, text: str, members: list[tuple[Any, int, int]], start: int) -> None:
        self.unit: str | None = None
        """The indent unit (None: the document is on one line)."""
        self.item = ", " if len(members) > 1 and text[members[0][2]:members[1][1]].startswith(", ") else ","
        self.key = ": "
        first = text[start + 1:members[0][1]] if members else ""
        if "\n" in first:
            line = first.rsplit("\n", 1)[1]
            self.unit = line.split('"', 1)[0] if '"' in line else line
            self.item = ","
        if members and isinstance(members[0][0], str) and '"' in first:
            self.key = ": " if first[first.rfind('"') + 1:].endswith((" ", "\t")) else ":"
        self.ascii = text.isascii()

    def dumps(self, value: Any, depth: int) -> str:
        """`value` as this layout writes it, standing `depth` levels in."""
        if self.unit is None:
            return json.dumps(value, ensure_ascii=self.ascii, separators=(self.item, self.key), allow_nan=False)
        written = json.dumps(value, ensure_ascii=self.ascii, indent=self.unit, separators=(",", self.key),
                             allow_nan=False)
        return written.replace("\n", "\n" + self.unit * depth)


def _splice(text: str, before: Any, after: Any, key: str | None) -> str:
    """`text` (the JSON of `before`) made the JSON of `after`: every value `after` holds as `before`'s very
    object keeps its bytes; the others are written in the text's layout. A body (`key`, its list's) changes in
    its top-level values and its list's items; a bare list (`key` None) in its items."""
    start = _skip(text, 0)
    members, _ = _values(text, start)
    if key is None:
        return _splice_list(text, start, before, after, _Layout(text, members, start), 1)
    layout = _Layout(text, members, start)
    by_name = {name: (s, e) for name, s, e in members}
    if list(after) != [name for name, _, _ in members]:
        raise ValueError("the keys changed")
    out: list[str] = []
    last = 0
    for name, s, e in members:
        value = after[name]
        if value is before[name]:
            continue
        if name == key and isinstance(value, list) and text[s] == "[":
            piece = _splice_list(text[:e], s, before[name], value, layout, 2)[s:]
        else:
            piece = layout.dumps(value, 1)
        out += [text[last:s], piece]
        last = by_name[name][1]
    out.append(text[last:])
    return "".join(out)


def _splice_list(text: str, start: int, before: list[Any], after: list[Any], layout: _Layout, depth: int) -> str:
    """`text` up to the end of the array opening at `start`, with its items made `after`'s."""
    items, end = _values(text, start)
    spans = {id(before[k]): (s, e) for k, s, e in items}
    pieces = [text[spans[id(item)][0]:spans[id(item)][1]] if id(item) in spans else layout.dumps(item, depth)
              for item in after]
    if len(items) >= 2:
        separator = text[items[0][2]:items[1][1]]
    else:
        separator = "," + ("\n" + layout.unit * depth if layout.unit is not None else layout.item[1:])
    if items:
        head, tail = text[start:items[0][1]], text[items[-1][2]:end]
    elif layout.unit is not None:
        head, tail = "[\n" + layout.unit * depth, "\n" + layout.unit * (depth - 1) + "]"
    else:
        head, tail = "[", "]"
    if not after:
        head, tail = "[", "]"
    return text[:start] + head + separator.join(pieces) + tail + text[end:]


def body_for_check(fmt: str, value: Any) -> dict[str, Any]:
    """The saved body as `check` takes it: a bare list gets the fields every body of its provider has."""
    if isinstance(value, Mapping):
        return dict(value)
    provider = adapter(fmt)
    body: dict[str, Any] = {provider.list_key: value}
    if provider.model_in_body:
        body = {"model": _PLACEHOLDER_MODEL, **body}
    body.update(provider.required_fields)
    return body


def _at_file_line(exc: ChatmendError, fmt: str, locations: Sequence[str]) -> InputError:
    """A ReadError, with its `messages[i]` path turned into the file line of item i when it is known."""
    path = getattr(exc, "path", None)
    reason = getattr(exc, "reason", str(exc))
    if isinstance(path, str):
        match = _path_index().match(path)
        if match and int(match.group(1)) < len(locations) and locations[0].startswith("line "):
            line = int(locations[int(match.group(1))][5:])
            rest = match.group(2).lstrip(".")
            return InputError(f"{rest + ': ' if rest else ''}{reason} (reading {fmt})", line=line)
        return InputError(f"{path}: {reason} (reading {fmt})")
    return InputError(f"{reason} (reading {fmt})")


class _BodyWriter(Protocol):
    """A `Writer` that can take the `Repairer` that already repaired the history."""

    def __call__(self, messages: Sequence[ChatMessage], repairer: Repairer | None = None) -> Iterator[str]: ...


def _writer(fmt: str, shape: str, body: dict[str, Any] | None, indent: bool) -> _BodyWriter:
    """How a history is written back: the same shape, the same other fields, the adapter's messages (repaired
    by the `Repairer` when given one)."""

    def write(messages: Sequence[ChatMessage], repairer: Repairer | None = None) -> Iterator[str]:
        provider = adapter(fmt)
        model = body.get("model") if body is not None else None
        name = model if isinstance(model, str) else _PLACEHOLDER_MODEL
        wire = provider.to_request(list(messages), model=name, repairer=repairer)
        list_key = provider.list_key
        if shape == "body":
            assert body is not None
            out = dict(body)
            out[list_key] = wire[list_key]
            for key in provider.history_keys:
                # Repair never changes system text: a saved system prompt stays exactly as it was.
                if key != list_key and key not in body and key in wire:
                    out[key] = wire[key]
            yield wire_json(out, indent=indent)
            return
        items = wire[list_key]
        if shape == "list":
            yield wire_json(items, indent=indent)
            return
        for item in items:
            yield wire_json(item, indent=False)

    return write
