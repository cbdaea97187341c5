"""Session stores that are one JSON document holding a list of messages (Cline and Roo Code tasks, pydantic-ai
message histories): each item of the list is a record, and a repair rewrites only the items it changes.

The document's text is kept: an item repair leaves alone is written back as the very characters it was read
from, and so are the separators, the indentation and everything around the list. A changed or new item is
written in the document's own style (compact, or indented as its neighbours are).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from chatmend import ChatMessage, RepairResult
from chatmend import strict_json as strict_json
from chatmend.files.io import MAX_JSON_SIZE, InputError, bounded_lines, decoded_lines, joined, open_input
from chatmend.files.session import Session
from chatmend.transcripts._records import Record, TranscriptFormat, as_read_only

__all__ = ["DocumentFormat", "ListText", "item_records", "list_text", "read_json"]

_SCAN = json.JSONDecoder()
_SPACE = " \t\n\r"


def read_json(path: str, limit: int = MAX_JSON_SIZE) -> tuple[Any, str]:
    """The JSON document in the file at `path` (`-`: stdin) and its text, or an InputError saying where it is
    not UTF-8 JSON or passes `limit` bytes."""
    with open_input(path) as (handle, _size):
        text = joined(decoded_lines(bounded_lines(handle, limit)), limit)
    try:
        return strict_json.loads(text), text
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}; expected a JSON document", line=exc.lineno,
                         column=exc.colno) from None


@dataclass
class ListText:
    """Where a document's message list and its items stand in its text."""

    text: str
    """The whole document, as read."""
    start: int
    """Where the list's `[` is."""
    end: int
    """Just after the list's `]`."""
    spans: list[tuple[int, int]]
    """Each item's (start, end) offsets."""

    def separator(self) -> str:
        """What stands between two items (`,` in compact JSON, `,\\n    ` when indented)."""
        if len(self.spans) >= 2:
            return self.text[self.spans[0][1]:self.spans[1][0]]
        if self.spans:
            lead = self.text[self.start + 1:self.spans[0][0]]
            return "," + lead if "\n" in lead else ","
        return ","

    def indent(self) -> tuple[int | None, str]:
        """How a new item is written: (json.dumps indent, or None for compact; the prefix of its inner lines)."""
        lead = self.text[self.start + 1:self.spans[0][0]] if self.spans else ""
        if "\n" not in lead:
            return None, ""
        column = lead.rsplit("\n", 1)[1]
        inner = self.text[self.spans[0][0]:self.spans[0][1]]
        if "\n" in inner:
            second = inner.split("\n", 2)[1]
            step = len(second) - len(second.lstrip(" ")) - len(column)
            return (step if step > 0 else 2), column
        return 2, column

    def dumps(self, value: Any) -> str:
        """An item written in the document's style."""
        step, column = self.indent()
        if step is None:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        newline = "\r\n" if "\r\n" in self.text[self.start:self.spans[0][0] if self.spans else self.end] else "\n"
        return json.dumps(value, ensure_ascii=False, indent=step).replace("\n", newline + column)

    def write(self, items: Sequence[str]) -> Iterator[str]:
        """The document with its list holding `items` (each an item's text) and every other character kept."""
        yield self.text[:self.start + 1]
        if not items:
            yield self.text[self.spans[-1][1] if self.spans else self.start + 1:self.end]
            yield self.text[self.end:]
            return
        if self.spans:
            yield self.text[self.start + 1:self.spans[0][0]]
        separator = self.separator()
        for n, item in enumerate(items):
            if n:
                yield separator
            yield item
        yield self.text[self.spans[-1][1]:self.end] if self.spans else "]"
        yield self.text[self.end:]


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _array(text: str, at: int, path: str) -> tuple[int, list[tuple[int, int]]]:
    """The spans of the items of the array whose `[` is at `at`, and where it ends."""
    if text[at:at + 1] != "[":
        raise InputError(f"{path or 'the document'}: expected a list of messages")
    spans: list[tuple[int, int]] = []
    at = _skip(text, at + 1)
    if text[at:at + 1] == "]":
        return at + 1, spans
    while True:
        _, end = _SCAN.raw_decode(text, at)
        spans.append((at, end))
        at = _skip(text, end)
        if text[at:at + 1] == "]":
            return at + 1, spans
        at = _skip(text, at + 1)  # the comma (the document was parsed whole before: it is well formed)


def list_text(text: str, key: str | None) -> ListText:
    """Where the list is in `text`: the whole document (`key` None) or the value of its top-level `key`."""
    at = _skip(text, 0)
    if key is None:
        end, spans = _array(text, at, "")
        return ListText(text, at, end, spans)
    if text[at:at + 1] != "{":
        raise InputError(f"expected a JSON object with a {key!r} list")
    at = _skip(text, at + 1)
    found: ListText | None = None
    while text[at:at + 1] == '"':
        name, end = _SCAN.raw_decode(text, at)
        at = _skip(text, _skip(text, end) + 1)  # past the colon
        if name == key:
            end, spans = _array(text, at, key)
            found = ListText(text, at, end, spans)  # the last one wins, as in the parsed document
        else:
            _, end = _SCAN.raw_decode(text, at)
        at = _skip(text, end)
        if text[at:at + 1] == ",":
            at = _skip(text, at + 1)
    if found is None:
        raise InputError(f"expected a JSON object with a {key!r} list")
    return found


def item_records(found: ListText, items: list[Any]) -> list[Record]:
    """Each item as a Record: its text (`raw`), its value, and the line it starts on (for located errors)."""
    records: list[Record] = []
    line, counted = 1, 0
    for (start, end), value in zip(found.spans, items):
        line += found.text.count("\n", counted, start)
        counted = start
        records.append(Record(line, found.text[start:end], value if isinstance(value, dict) else {}, end=""))
    return records


class DocumentFormat(TranscriptFormat):
    """A TranscriptFormat whose records are the items of one JSON document's list (written back spliced)."""

    key: str | None = None
    """The top-level key holding the list (None: the document is the list)."""
    turn_key: str
    """The item field that says whose turn it is (`role`, `kind`)."""
    result_turns: tuple[str, ...]
    """The values of `turn_key` of the items that hold tool results."""
    blocks_key: str
    """The item field holding its blocks (`content`, `parts`)."""

    def __init__(self, found: ListText, records: list[Record]) -> None:
        super().__init__(records)
        self.found = found

    def session(self, warnings: Sequence[str] = ()) -> Session:
        session = super().session(warnings)
        prefix = self.key or ""
        session.where = [f"line {self.records[b[0][0]].line} {prefix}[{b[0][0]}]" if b else "?"
                         for b in self.blocks_at]
        return session

    def _write_unrepaired(self, messages: Sequence[ChatMessage]) -> Iterator[str]:
        as_read_only(self.name, messages, self.messages)
        yield self.found.text

    def is_result(self, block: Any) -> bool:
        """True for a block that is a tool result (new items holding only those are merged when side by side)."""
        return False

    def pieces(self, result: RepairResult) -> list[tuple[int | None, Any]]:
        """As the base's, with a synthetic result that follows another result of its turn put into that result's
        item (one turn holding every result, as the tools write them), not an item of its own."""
        pieces = super().pieces(result)
        for n in range(1, len(pieces)):
            k, block = pieces[n]
            before = pieces[n - 1][0]
            if k is not None and k < 0 and before is not None and before >= 0 and \
                    self.records[before].data.get(self.turn_key) in self.result_turns:
                pieces[n] = (before, block)
        return pieces

    def relink(self, out: list[tuple[Record | None, dict[str, Any] | None]]) -> None:
        """New items of results side by side (the answers to a turn's calls none of which returned) become one."""
        n = 1
        while n < len(out):
            (before, first), (record, data) = out[n - 1], out[n]
            if before is None and record is None and first is not None and data is not None \
                    and first.get(self.turn_key) == data.get(self.turn_key) \
                    and all(self.is_result(b) for b in [*first[self.blocks_key], *data[self.blocks_key]]):
                out[n - 1] = (None, {**first, self.blocks_key: [*first[self.blocks_key], *data[self.blocks_key]]})
                del out[n]
            else:
                n += 1

    def written_lines(self, out: list[tuple[Record | None, dict[str, Any] | None]],
                      newline: str | None = None) -> Iterator[str]:
        """The document: kept items as read, changed and new ones in its style, the rest of its text as it was."""
        items = [record.raw if data is None and record is not None else self.found.dumps(data) for record, data in out]
        yield from self.found.write(items)
