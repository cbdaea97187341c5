"""What agent-tool transcripts share: JSON records, each holding blocks that make up neutral messages.

Repairing a transcript must change only what repair changes. Every neutral message remembers the blocks
(record index, block index) it was read from; after `repair_history`, each output message is turned back
into blocks by its origin (`RepairResult.origins`: the original blocks of its input message, with ids
patched where repair renamed them, or new ones for synthetic results and notes), and runs of blocks from
one record become that record again. A record whose blocks
all come back unchanged is written as its original line, byte for byte; records chatmend does not read
(summaries, events, metadata) keep their place.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from chatmend import ChatMessage, RepairResult, TextPart, ToolCall, repair_history
from chatmend import strict_json as strict_json
from chatmend.answer_order import keep_answer_order
from chatmend.exceptions import HistoryError, ReadError, validation_reason
from chatmend.files.io import InputError, json_kind
from chatmend.files.session import Session
from chatmend.messages import Part
from chatmend.repair import IsReadOnly, is_placeholder

__all__ = [
    "BlockAt", "Record", "TranscriptFormat", "as_read_only", "block_content", "compact_json", "content_blocks",
    "errors_at_line", "expect", "fresh_id", "joined_text", "located", "optional_text",
    "parse_records", "read_call", "relink_chain", "seeded_uuid", "writable_repair",
]

BlockAt = tuple[int, int]
"""(record index, block index): where a block of a neutral message was read from."""


def seeded_uuid(seed: str) -> str:
    """A version-4-shaped uuid made from `seed` (the same for the same seed: a repair writes the same file twice
    alike)."""
    return str(uuid.UUID(bytes=hashlib.sha256(seed.encode()).digest()[:16], version=4))


def fresh_id(seed: str, taken: set[str], shape: Callable[[str], str]) -> str:
    """A new id for a record repair adds: `shape` of `seed` and a count (the same for the same file), the first
    that no id in `taken` is (it joins them)."""
    n = 0
    while True:
        candidate = shape(f"{seed}:{n}")
        if candidate not in taken:
            taken.add(candidate)
            return candidate
        n += 1


def compact_json(value: Any) -> str:
    """A record as one compact JSON line, non-ASCII kept (how both agent tools write them)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(slots=True)
class Record:
    """One line of a transcript."""

    line: int
    """Its 1-based line number."""
    raw: str
    """Its text, without the newline."""
    data: dict[str, Any]
    """Its parsed JSON object, or the part of it its reader keeps (`parse_records`' `keep`; `whole` has all)."""
    blocks: list[Any] = field(default_factory=list)
    """The conversation blocks it holds (empty for records chatmend does not read)."""
    end: str = "\n"
    """Its line end as read: `\n`, `\r\n`, or nothing on a last line without one."""
    after: str = ""
    """The blank lines that follow it, as read (kept in their place with it)."""
    before: str = ""
    """The blank lines before it, as read: only the first record has them."""
    partial: bool = False
    """True when `data` holds only what its reader keeps: `whole` reads the line again."""

    def whole(self) -> dict[str, Any]:
        """Its whole JSON object (read again from its line when only part of it was kept), to write it anew."""
        if not self.partial:
            return self.data
        try:
            value: dict[str, Any] = strict_json.loads(self.raw)
        except json.JSONDecodeError as exc:  # nesting read at first, too deep with less of the stack left now
            raise InputError(f"invalid JSON: {exc.msg}", line=self.line, column=exc.colno) from None
        return value


def parse_records(lines: Iterable[str], *, what: str, warnings: list[str] | None = None,
                  keep: Callable[[dict[str, Any]], dict[str, Any]] | None = None, first_line: int = 1,
                  lone_surrogates: bool = False) -> list[Record]:
    """Every non-blank line as a JSON object; a bad line is an InputError with line and column. Line ends and
    blank lines are kept on the records, so unchanged lines are written back byte for byte.

    With `keep`, each record holds only `keep(data)` (what its reader looks at), so the rest of every line's
    JSON is not kept alive while the file is read; `Record.whole` reads a line again to write it anew.

    With `warnings` (a list to add to), a line that is not a record (a crash's half-written last line, a stray
    value) is kept verbatim as a record holding nothing, and said there, as the tool that wrote it skips it.
    """
    records: list[Record] = []
    blank = ""
    torn: InputError | None = None  # a line that is not JSON: torn when it is the last, else corrupt
    for number, line in enumerate(lines, start=first_line):
        text = line.rstrip("\r\n")
        if not text.strip():
            blank += line
            continue
        if torn is not None:
            raise torn  # a corrupt record with records after it: not a write cut short; its record is lost
        try:
            data = strict_json.loads(text, lone_surrogates=lone_surrogates)
        except json.JSONDecodeError as exc:
            error = InputError(f"invalid JSON: {exc.msg}; expected {what}", line=number, column=exc.colno)
            if warnings is None:
                raise error from None
            torn = error
            size = len(text.encode("utf-8", "surrogatepass"))
            warnings.append(f"line {number}: a torn last line ({size} bytes: its writer stopped mid-line), "
                            f"invalid JSON at column {exc.colno} ({exc.msg}); skipped, as the tool that wrote it "
                            "skips it")
            data = None
        if not isinstance(data, dict):
            if warnings is None:
                raise InputError(f"a JSON {type(data).__name__}, expected a JSON object ({what})", line=number)
            if data is not None:
                warnings.append(f"line {number}: not a record ({json_kind(data)}); kept as it is")
            data = {}
        partial = False
        if keep is not None and data:
            data, partial = keep(data), True  # the rest of the line's JSON is dropped at once
        if records:
            records[-1].after = blank
        records.append(Record(number, text, data, end=line[len(text):], before="" if records else blank,
                              partial=partial))
        blank = ""
    if records:
        records[-1].after = blank
    if not records:
        raise InputError(f"empty file; expected {what}")
    return records


def as_read_only(name: str, messages: Iterable[ChatMessage], read: Sequence[ChatMessage]) -> None:
    """A store's file is written back unrepaired only from the history read from it (its records hold no other):
    an InputError for another history."""
    if list(messages) != list(read):
        raise InputError(f"a {name} session can only be written back from itself; use --to chatmend or a provider")


_CHANGES = {"moved": "moved", "renamed": "renamed", "dropped": "dropped", "notes": "orphan results",
            "interrupted": "answered calls", "stripped": "answered calls"}
"""A RepairResult's kinds of change, in the words a refusal names them with."""


def writable_repair(messages: Sequence[ChatMessage], is_read_only: IsReadOnly | None, refused: Sequence[str],
                    into: str) -> RepairResult:
    """`repair_history` for a store that has no place for some kinds of change (`refused`: RepairResult's fields,
    `moved`, `notes`...): a HistoryError when the repair makes one (`into`: where it would have been written)."""
    result = repair_history(messages, is_read_only=is_read_only)
    if any(getattr(result, kind) for kind in refused):
        *most, last = dict.fromkeys(_CHANGES[kind] for kind in refused)
        named = f"{', '.join(most)} or {last}" if most else last
        raise HistoryError(f"this repair ({named}) cannot be written {into}; write it with --to chatmend or a "
                           "provider")
    return result


def expect(record: Record, path: str, value: object, types: tuple[type, ...], expected: str) -> None:
    """A field the reader cannot take (a list for a call's input) as an InputError naming its line and path in
    the record, what was expected there and what was found."""
    if not isinstance(value, types):
        raise InputError(f"{path}: expected {expected}, got {json_kind(value)}", line=record.line)


def optional_text(record: Record, path: str, value: object) -> str:
    """A field that holds text or nothing (absent, null): the text, "" for nothing; another JSON type is an
    InputError at it (an id of `[1]` read as the text "[1]" would send a made-up id)."""
    expect(record, path, value, (str, type(None)), "a string")
    return value if isinstance(value, str) else ""


def read_call(record: Record, where: str, block: Mapping[str, Any], *, id: str, name: str, arguments: str,
              expected: str) -> ToolCall:
    """A call block as a ToolCall, its fields under these keys at `where` in the record: its arguments an object or
    a JSON string (none: `{}`; `expected` says what else is an InputError there), its id and name texts (no name:
    `tool`)."""
    value = block.get(arguments)
    value = {} if value is None else value
    expect(record, f"{where}{arguments}", value, (dict, str), expected)
    return ToolCall(id=optional_text(record, f"{where}{id}", block.get(id)),
                    name=optional_text(record, f"{where}{name}", block.get(name)) or "tool", arguments=value)


@contextmanager
def errors_at_line(record: Record, what: str, blocks_in: str = "") -> Iterator[None]:
    """The net under `expect`: whatever else in a record its reader cannot take, as an InputError at its line,
    not a crash; a provider's reader's error at its path in the record (`blocks_in`: where in the record the
    provider's message stands, `message.` for Claude Code's)."""
    try:
        yield
    except InputError:
        raise  # already located by `expect`
    except ReadError as exc:
        raise located(exc, record, blocks_in) from None
    except HistoryError as exc:
        raise InputError(f"{validation_reason(exc)}; expected {what}", line=record.line) from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InputError(f"a field holds a value of the wrong type ({exc}); expected {what}",
                         line=record.line) from None


def located(error: ReadError, record: Record, blocks_in: str = "") -> InputError:
    """A provider's reader's error as an InputError at the record's line and the error's path in it."""
    where = f"{blocks_in}{error.path}: " if error.path else ""
    return InputError(f"{where}{error.reason}", line=record.line)


class TranscriptFormat(ABC):
    """One agent tool's transcript: how its blocks read as messages and how repaired ones are written."""

    name: str
    provider: str
    """The provider the agent tool talks to: `check` applies its rules."""
    keeps_answer_order = True
    """Results its tool wrote in the order they finished stay so (`keep_answer_order`); False for a format
    whose reader already reads them in call order, as its tool sends them."""

    def __init__(self, records: list[Record]) -> None:
        self.records = records
        self.messages: list[ChatMessage] = []
        self.blocks_at: list[list[BlockAt]] = []
        """For each message, the blocks it was read from."""
        self.model: str | None = None
        self.problems: list[str] = []
        """What the store holds that the provider refuses and repair fixes beyond the history, located."""
        self.fixes: list[str] = []
        """What the last repair fixed beyond the history (filled as it writes)."""
        self.mended: dict[int, list[str]] = {}
        """Records read with a lone surrogate (half an emoji, which the provider refuses as invalid JSON), each
        with what repair says of it: repair writes them anew with U+FFFD in its place."""

    # --- reading -------------------------------------------------------------------------------------------

    def add_reply(self, reply: ChatMessage, blocks_at: list[BlockAt]) -> None:
        """Append a reply, and remember its calls' tool names for the results that follow it.

        A placeholder (spec rule 1) is dropped by repair and does not end its span: the calls before it keep
        waiting, so a result after it is named as repair will pair it, read before or after a repair.
        """
        if not is_placeholder(reply):
            self._waiting: dict[str, list[str]] = {}
            for call in reply.tool_calls:
                self._waiting.setdefault(call.id, []).append(call.name)
        self.add(reply, blocks_at)

    def tool_name(self, call_id: str) -> str | None:
        """The name of the first unanswered call with this id in the last reply (spec rule 3's pairing)."""
        queue = getattr(self, "_waiting", {}).get(call_id)
        return queue.pop(0) if queue else None

    def add(self, message: ChatMessage, blocks_at: list[BlockAt]) -> None:
        """Append a neutral message read from these blocks."""
        self.messages.append(message)
        self.blocks_at.append(blocks_at)

    def session(self, warnings: Sequence[str] = ()) -> Session:
        """The Session: neutral messages located by line, written back record by record."""
        if not self.messages:
            raise InputError(f"no conversation messages in this {self.name} transcript")
        return Session(format=self.name, messages=self.messages, where=self.where(), write=self._write_unrepaired,
                       provider=self.provider, model=self.model, repair_and_write=self._repair, warnings=list(warnings),
                       problems=self.problems, fixes=self.fixes)

    def where(self) -> list[str]:
        """Where each message was read: `line N` of its first block's record."""
        return [f"line {self.records[b[0][0]].line}" if b else "?" for b in self.blocks_at]

    # --- writing -------------------------------------------------------------------------------------------

    def as_read(self, out: list[tuple[Record | None, dict[str, Any] | None]]) -> bool:
        """True when the records to write (`placed`) are the records read, each unchanged and in its place."""
        return [id(record) if data is None else None for record, data in out] == [id(r) for r in self.records]

    @abstractmethod
    def patch_call_id(self, block: Any, new_id: str) -> Any:
        """The call block under a new id."""

    @abstractmethod
    def patch_result_id(self, block: Any, new_id: str) -> Any:
        """The result block answering a new id."""

    @abstractmethod
    def is_call(self, block: Any) -> bool:
        """True for a block that is a tool call."""

    @abstractmethod
    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        """The blocks of a user note that replaces the orphan result block `orphan`."""

    @abstractmethod
    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        """The blocks of a synthetic result for the call block `call`."""

    @abstractmethod
    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        """`record` holding `blocks` instead of its own (`copy` > 0: a further record made from it)."""

    @abstractmethod
    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        """A record for new blocks (a synthetic result), modelled on the record of their call."""

    def reply_end(self, k: int) -> int:
        """The last record of the reply record `k` holds blocks of (records it alone reads, such as a repeat
        of a block, stay with it, before what repair adds after the reply)."""
        return k

    def relink(self, out: list[tuple[Record | None, dict[str, Any] | None]]) -> None:  # noqa: B027
        """Fix links between records after reordering (only Claude Code has them)."""

    def _write_unrepaired(self, messages: Sequence[ChatMessage]) -> Iterator[str]:
        """Write back as read: only possible for the history this transcript holds."""
        as_read_only(self.name, messages, self.messages)
        yield self.records[0].before
        for record in self.records:
            yield record.raw + record.end + record.after

    def _repair(self, is_read_only: IsReadOnly | None) -> tuple[RepairResult, Iterator[str]]:
        """Repair the history, then write each output message back into the records of its origin."""
        self.fixes.clear()  # filled as it writes
        result = repair_history(self.messages, is_read_only=is_read_only)
        if self.keeps_answer_order:
            result = keep_answer_order(self.messages, result)
        return result, self._emit(self.pieces(result))

    def pieces(self, result: RepairResult) -> list[tuple[int | None, Any]]:
        """Each output message as (source record or None, block) pairs, in output order."""
        call_blocks: dict[tuple[int, int], tuple[int, Any]] = {}  # by (message index, call index) in the input
        pieces: list[tuple[int | None, Any]] = []
        turn = answers = 0  # where the pieces of the last reply start, and those of its results
        for message, origin in zip(result.messages, result.origins()):
            if message.role != "tool":
                self.keep_record_order(pieces, turn, answers)
                turn = answers = len(pieces)
            source = origin.message_index
            if origin.kind == "input":
                blocks = [(k, self.records[k].blocks[b]) for k, b in self.blocks_at[source]]
                if message.role == "assistant":
                    calls = iter(enumerate(message.tool_calls))
                    patched = []
                    for k, block in blocks:
                        if self.is_call(block):
                            ci, call = next(calls)
                            block = self.patch_call_id(block, call.id)
                            call_blocks[(source, ci)] = (k, block)
                        patched.append((k, block))
                    blocks = patched
                elif message.role == "tool" and message.tool_call_id != self.messages[source].tool_call_id:
                    blocks = [(k, self.patch_result_id(b, message.tool_call_id or "")) for k, b in blocks]
                pieces.extend(blocks)
                if message.role == "assistant":
                    answers = len(pieces)
            elif origin.kind == "note":  # an orphan result turned into a note
                k, b = self.blocks_at[source][0]
                pieces.extend((k, block) for block in self.note_blocks(message, self.records[k].blocks[b]))
            else:  # a synthetic result for an interrupted call
                assert origin.call_index is not None
                k, call = call_blocks[(source, origin.call_index)]
                pieces.extend((-1 - k, block) for block in self.result_blocks(message, call))
        self.keep_record_order(pieces, turn, answers)
        return pieces

    def keep_record_order(self, pieces: list[tuple[int | None, Any]], reply: int, answers: int) -> None:  # noqa: B027
        """Put the pieces of one reply (from `reply` on) back between those of its results (from `answers` on) as
        their records stood, where the format's records may interleave them (a hook: most keep them as repair
        writes them)."""

    def _emit(self, pieces: list[tuple[int | None, Any]]) -> Iterator[str]:
        """Runs of blocks from one record become that record; other records keep their place."""
        out = self.placed(pieces)
        self.relink(out)
        yield from self.written_lines(out)

    def placed(self, pieces: list[tuple[int | None, Any]], serial: int = 0,
               ) -> list[tuple[Record | None, dict[str, Any] | None]]:
        """The records to write, in order: (a record as read, None), (a record, what it now holds) or (None, a new
        record). Runs of blocks from one record become that record; other records keep their place. `serial` is
        how many records were added before these (a part of a file: new records are numbered in the whole)."""
        out: list[tuple[Record | None, dict[str, Any] | None]] = []
        used = {k for k, _ in pieces if k is not None and k >= 0}
        pending = [i for i, r in enumerate(self.records) if not r.blocks or i not in used]
        copies: dict[int, int] = {}
        position = 0

        def flush_until(index: int) -> None:
            # Records that hold no kept blocks go out once every record before them has.
            nonlocal position
            while position < len(pending) and pending[position] < index:
                record = self.records[pending[position]]
                if not record.blocks:
                    out.append((record, None))
                position += 1

        runs: list[tuple[int, list[Any]]] = []
        for k, block in pieces:
            assert k is not None
            if runs and runs[-1][0] == k and k >= 0:
                runs[-1][1].append(block)
            else:
                runs.append((k, [block]))
        for k, blocks in runs:
            if k < 0:
                flush_until(self.reply_end(-1 - k) + 1)
                serial += 1
                out.append((None, self.new_record(self.records[-1 - k], blocks, serial)))
                continue
            flush_until(k)
            record = self.records[k]
            copy = copies.get(k, 0)
            copies[k] = copy + 1
            if copy == 0 and blocks == record.blocks and k not in self.mended:
                out.append((record, None))
            else:
                out.append((record, self.render(record, blocks, copy)))
                if copy == 0:
                    self.fixes.extend(self.mended.get(k, ()))
        flush_until(len(self.records))
        return out

    def written_lines(self, out: list[tuple[Record | None, dict[str, Any] | None]],
                      newline: str | None = None) -> Iterator[str]:
        """The records' lines: an unchanged one as read, with its line end and the blank lines after it; a
        rewritten one in its place with its own; new ones end as the file's lines do (`newline`: as its first
        one does)."""
        first = self.records[0]
        if newline is None:
            newline = first.end if first.end.endswith("\n") else "\n"
        yield first.before
        placed: set[int] = set()  # records whose end and blank lines went out (a split record's first part)
        last = self.records[-1]
        for n, (source, data) in enumerate(out):
            if source is last and data is None and not source.data and _torn(source.raw):
                continue  # a torn last line: left out, so the tool's next record starts on a line of its own
            own = source is not None and id(source) not in placed
            text = source.raw if data is None and source is not None else compact_json(data)
            end, after = (source.end, source.after) if own and source is not None else (newline, "")
            if source is not None:
                placed.add(id(source))
            if not end and n < len(out) - 1:
                end = newline  # the last line had no line end, and now a line follows it
            yield text + end + after


def relink_chain(out: list[tuple[Record | None, dict[str, Any] | None]], chain: set[int], id_key: str,
             parent_key: str) -> list[int]:
    """Make a chain of records that name their parent (`parent_key` holds the `id_key` of the record before) pass
    every record of it that is written, and every new one, in file order: a record whose predecessor on the chain
    changed (a new result before it, a placeholder dropped) takes the record now before it as its parent, the
    fragments of one id the first one's. `chain`: the `id()`s of the records read on the chain (others keep their
    parents). Changes `out` in place; returns the lines of the records read that were relinked."""
    previous: str | None = None
    parent_of: dict[str, Any] = {}
    started = False
    lines: list[int] = []
    for i, (record, data) in enumerate(out):
        if record is not None and id(record) not in chain:
            continue
        current = data if data is not None else (record.data if record is not None else {})
        uid = current.get(id_key)
        if not isinstance(uid, str):
            continue
        wanted = parent_of.get(uid, previous) if started else current.get(parent_key)
        if current.get(parent_key) != wanted:
            whole = current if data is not None or record is None else dict(record.whole())
            out[i] = (record, {**whole, parent_key: wanted})
            if record is not None:
                lines.append(record.line)
        parent_of.setdefault(uid, wanted)
        started = True
        previous = uid
    return lines


def _torn(raw: str) -> bool:
    """True for a line that is no JSON value at all (what `parse_records` warned of as a torn last line)."""
    try:
        strict_json.loads(raw)
    except (ValueError, RecursionError):
        return True
    return False


def content_blocks(content: object) -> list[Any]:
    """A message's content as a list of blocks: a string is one block of its own, anything else holds none."""
    if isinstance(content, str):
        return [content]
    return list(content) if isinstance(content, list) else []


def block_content(blocks: list[Any], original: object) -> str | list[Any]:
    """An Anthropic message's content from its blocks again (`content_blocks` undone): the `original` string when
    it is still the one block, else a list, each string a text block."""
    if isinstance(original, str) and blocks == [original]:
        return original
    return [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]


def joined_text(content: str | Sequence[Part]) -> str:
    """A content as one text: the string itself, or its text parts run together (what a store writes for a note
    or a result, which hold text alone)."""
    return content if isinstance(content, str) else "".join(p.text for p in content if isinstance(p, TextPart))
