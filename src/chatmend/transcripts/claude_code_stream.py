"""The Claude Code reader (`claude_code`) run a part at a time: a large transcript checked and repaired holding
only each record's `Line` and place.

A first pass parses every line once and keeps, of each record, where it is and its `Line` (its links, and the
keys of its blocks when the Anthropic adapter says `check` finds nothing in them); the chain Claude Code resumes is
followed over those (`follow_lines`, as the whole reading follows it). The conversation is then cut before each
reply that is surely kept (its first record has text or a call): repair's spans stop there and the repair of what
comes before stays as it is (the spec's prefix stability), so each part is repaired on its own given the final
ids of the calls before it (`repair_following`). A part repair leaves as it is (its reply's calls answered right
after it, in order, under new ids, and only prompts after them) is not read again: a check counts its messages
and takes its ids, a repair copies its bytes. Every other part is read again from the file by the reader
(`ClaudeCode`), so what comes out is what reading the file whole (the reader run to the end) gives, byte for
byte.

A file this reading does not take whole (a line that is not a record, a BOM, a record a refusal retracted or a
fallback superseded, a call with an empty id, content check would look into) is read whole instead: the
functions here return None for it.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

from chatmend import strict_json as strict_json
from chatmend.answer_order import keep_answer_order
from chatmend.files.io import FileBytes, InputError, changed_while_read
from chatmend.files.problems import problems_of
from chatmend.files.session import RepairSummary, StreamedRepair
from chatmend.ids import FinalIds
from chatmend.providers.anthropic.read import PROMPT, has_call_without_id
from chatmend.repair import IsReadOnly, repair_following
from chatmend.results import RepairResult
from chatmend.transcripts._records import compact_json, parse_records
from chatmend.transcripts.claude_code import (
    NAME,
    WHAT,
    Chain,
    ClaudeCode,
    Line,
    Relinker,
    follow_lines,
    kept,
    line_of,
    relinked,
)

__all__ = ["Scan", "first_pass"]

_PIECE = 1 << 16
"""How much of the file the first pass reads at a time: many records a piece, and small enough to stay in the
CPU's caches between decoding it and parsing it."""
_RARE = ("retractedMessageUuids", "supersedesUuids", "isVirtual", "sourceToolAssistantUUID")
"""Keys few records have, each of which the first pass looks for."""


class _Places:
    """Where each record's line is in the file: its 1-based number, where it starts and its length without the
    line end, in bytes (arrays of machine integers: three numbers a record, not three objects)."""

    def __init__(self) -> None:
        self.numbers = array("q")
        self.starts = array("q")
        self.sizes = array("q")

    def line(self, k: int) -> tuple[int, int]:
        """Where record `k`'s line starts and ends (before its line end)."""
        return self.starts[k], self.starts[k] + self.sizes[k]


@dataclass
class Scan:
    """A transcript's first pass: its records' `Line`s, the chain, and how to read a part of it again."""

    handle: IO[bytes]
    size: int
    lines: list[Line]
    places: _Places
    """Where each record's line is in the file."""
    live: set[int]
    sidechain: bool
    uses_source: bool
    """Whether its records name their call's record (`sourceToolAssistantUUID`), which records added copy."""
    newline: str
    """The line end of its first record: records added end as it does."""
    plain: bool
    """True when every record the conversation reads has a shape (check then finds nothing in any block) and one
    of them is sent: replies of thinking alone send no message, which the provider's rules refuse."""
    digest: bytes | None = None
    """The sha256 of the bytes the first pass read, when asked for (`still_as_read`)."""
    starts: list[int] = field(default_factory=list)
    """The record each part starts at."""
    as_is: list[tuple[int, list[str]] | None] = field(default_factory=list)
    """For each part repair leaves as it is once no call before it took its calls' ids, its message count and
    those ids (`_PartSoFar`); None for any other."""
    stamp: tuple[int, int, int] | None = None
    """The file's `_stamp` before the first pass read it."""
    format = NAME
    provider = ClaudeCode.provider

    def still_as_read(self) -> bool:
        """True when the file still holds the bytes the first pass read (hashed again; False without a digest)."""
        if self.digest is None:
            return False
        hashed = hashlib.sha256()
        self.handle.seek(0)
        for start in range(0, self.size, 1 << 20):
            hashed.update(self.handle.read(min(1 << 20, self.size - start)))
        return self.handle.read(1) == b"" and hashed.digest() == self.digest

    def check(self) -> list[str] | None:
        """`check`'s problem lines for the transcript (the neutral rules' findings: the provider's own rules find
        nothing in plain blocks), or None when some block is not plain (read whole: the provider's rules apply)."""
        return self.findings()[0] if self.plain else None

    def findings(self) -> tuple[list[str], RepairSummary]:
        """What the neutral rules find in the transcript (`check`'s lines but for the provider's own rules) and
        what repair would change, each part repaired once and let go."""
        problems: list[str] = []
        summary = RepairSummary()
        read = 0  # the messages read so far (problems are numbered in the input; the summary counts the output)
        for step in _walk(self, None):
            if step.part is None or step.result is None:
                summary.messages += step.messages
                read += step.messages
                continue
            where = step.part.where()
            problems += problems_of(step.part.messages, where, step.result, read)
            summary.add(RepairSummary.of(step.part.messages, where, step.result))
            read += len(step.part.messages)
        return problems, summary

    def repair(self, is_read_only: IsReadOnly | None) -> StreamedRepair:
        """The transcript repaired as `ClaudeCode`'s repair repairs it whole, a part at a time."""
        summary = RepairSummary()
        return StreamedRepair(summary, _repaired(self, is_read_only, summary))

    def part_bytes(self, a: int, b: int) -> tuple[int, int]:
        """Where the part of records [a, b) lies in the file: from its first line (the file's start for the first
        part, with the blank lines before it) to the next part's first line (the blank lines after it too)."""
        starts = self.places.starts
        return (0 if a == 0 else starts[a]), (starts[b] if b < len(self.lines) else self.size)

    def text(self, start: int, stop: int) -> str:
        """The file's text from byte `start` to `stop` (both at a line's start or end), read again."""
        self.handle.seek(start)
        piece = self.handle.read(stop - start)
        try:
            return piece.decode("utf-8")
        except UnicodeDecodeError:
            raise changed_while_read() from None

    def read_part(self, a: int, b: int) -> ClaudeCode:
        """Records [a, b) read whole again, as one part of the transcript (an InputError when they are no longer
        the records the first pass read: the file changed meanwhile)."""
        text = self.text(*self.part_bytes(a, b))
        first = 1 if a == 0 else self.places.numbers[a]
        warnings: list[str] = []
        try:
            records = parse_records(_split_lines(text), what=WHAT, warnings=warnings, keep=kept, first_line=first)
        except InputError:
            raise changed_while_read() from None  # the first pass read every line of it as a record
        if warnings or len(records) != b - a:
            raise changed_while_read()
        live = {k - a for k in range(a, b) if k in self.live}
        return ClaudeCode(records, Chain(live, set(), self.sidechain), self.uses_source)


def _split_lines(text: str) -> list[str]:
    """The lines of a part's text, each with its `\n`, split on `\n` only, as the whole reading splits them
    (`str.splitlines` would also split a record at a U+2028 in one of its strings)."""
    lines = [line + "\n" for line in text.split("\n")]
    last = lines.pop()
    if last != "\n":
        lines.append(last[:-1])  # the file's last line, with no line end
    return lines


def first_pass(handle: IO[bytes], max_size: int, *, digest: bool = False) -> Scan | None:
    """The first pass over a Claude Code transcript (`handle`, at its start), or None for a file to read whole;
    with `digest`, a hash of the bytes read (`Scan.still_as_read`)."""
    hashed = hashlib.sha256() if digest else None
    stamp = _stamp(handle)
    lines: list[Line] = []
    places = _Places()
    uses_source = False
    newline = "\n"
    try:
        for returns, data in _records(handle, max_size, places, hashed):
            if not data.keys().isdisjoint(_RARE):  # one test a record for the four
                if "sourceToolAssistantUUID" in data:
                    uses_source = True
                if "retractedMessageUuids" in data or "supersedesUuids" in data or "isVirtual" in data:
                    return None  # records Claude Code leaves out of what it sends: the whole reading knows them
            line = line_of(data)
            if line.shape is None and line.kind == "assistant" and line.conversation \
                    and has_call_without_id(data["message"].get("content")):
                return None
            if not lines and returns:
                newline = "\r\n"  # records added end as the first one does
            lines.append(line)
    except (ValueError, RecursionError):  # not UTF-8, a NUL byte, a line past the limit, not JSON
        return None
    if not lines:
        return None
    live, sidechain, leaf = follow_lines(lines)
    starts, as_is, plain = _cut(lines, live, sidechain)
    if not leaf or not as_is:
        return None  # no conversation: the whole reading says so
    size = handle.tell()  # what was read, to its end (a file an agent appended to since its stat included)
    return Scan(handle, size, lines, places, live, sidechain, uses_source, newline, plain,
                hashed.digest() if hashed is not None else None, starts, as_is, stamp)


def _stamp(handle: IO[bytes]) -> tuple[int, int, int] | None:
    """The inode, size and modification time of the file behind `handle` (None for a stream with no file): any
    write to it changes them, so a repair that copies its bytes tells a file written to meanwhile."""
    try:
        st = os.fstat(handle.fileno())
    except (OSError, AttributeError, io.UnsupportedOperation):
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _records(handle: IO[bytes], max_size: int, places: _Places, hashed: Any = None) -> Iterator[tuple[int, Any]]:
    """Each record of the file with how many `\r` end its line, its place put in `places` (its line number, where
    its line starts and its length without the line end, in bytes): read a piece at a time (cut after a `\n`),
    each piece added to `hashed` (a hashlib object) too, each record parsed from its bytes by `fast_loads`, and a
    line with more brackets than `loads` reads levels here by `loads` itself (the only nesting `fast_loads` may
    read that `loads` refuses). Lines are split on `\n` only, as the whole reading splits them; blank lines are
    skipped. A NUL byte, bytes that are not UTF-8, a lone surrogate escape, a number JSON has no way to write,
    nesting too deep, a line longer than `max_size` or one that is not a JSON object raise a ValueError (so does
    an integer past the largest float: the whole reading reads it)."""
    number = 0
    start = 0  # where the next line starts in the file, in bytes
    add_number, add_start, add_size = places.numbers.append, places.starts.append, places.sizes.append
    pending: list[bytes] = []  # a line read so far with no line end yet (joined once, not once a piece)
    waiting = 0  # its length
    deepest = strict_json.nesting_read()  # on CPython 3.11 and older, fewer levels than `fast_loads` reads
    # A line nested deeper has more brackets than that, and twice as many bytes: only such a line is counted.
    shortest_deep = 2 * deepest if deepest <= strict_json.FAST_DEPTH else max_size + 1
    fast_loads = strict_json.fast_loads
    while True:
        piece = handle.read(_PIECE)
        if hashed is not None:
            hashed.update(piece)
        if b"\0" in piece:
            raise ValueError("a NUL byte")
        cut = piece.rfind(b"\n") + 1  # at the end (no piece), the last line has no line end
        if (len(piece) - cut if cut else waiting + len(piece)) > max_size:
            raise ValueError("a line past the limit")
        if cut == 0 and piece:
            pending.append(piece)  # no line end yet: read on
            waiting += len(piece)
            continue
        data = b"".join((*pending, piece[:cut])) if pending else piece[:cut]
        pending, waiting = [piece[cut:]], len(piece) - cut
        lines = data.split(b"\n")  # a line at a time: one C call a piece, not a search and a slice a line
        if piece or not data:
            lines.pop()  # what follows the piece's last line end (at the end of the file, the empty last line)
        for line in lines:
            number += 1
            size = len(line)
            if size > max_size:
                raise ValueError("a line past the limit")
            if line[:1] == b"{":
                if size < shortest_deep or line.count(b"[") + line.count(b"{") <= deepest:
                    value = fast_loads(line)
                else:
                    value = _read_strictly(line)  # maybe nested deeper than `loads` reads here
                returns = size - len(line.rstrip(b"\r")) if line[-1:] == b"\r" else 0
                add_number(number)
                add_start(start)
                add_size(size - returns)
                yield returns, value
            elif line.decode("utf-8").strip():  # str.strip: what the whole reading takes for blank
                raise ValueError("a line that is not a record")  # or a BOM: the whole reading says what it is
            start += size + 1
        if not piece:
            return


def _read_strictly(line: bytes) -> Any:
    """A record's line read by the strict reader (`fast_loads` may read nesting it refuses)."""
    return strict_json.loads(line.decode("utf-8"))


def _cut(lines: list[Line], live: set[int], sidechain: bool,
         ) -> tuple[list[int], list[tuple[int, list[str]] | None], bool]:
    """The record each part starts at, what each part is as far as repair leaving it as it is goes
    (`Scan.as_is`; none when the reader reads no record), and whether every record the reader reads has a shape
    and one of them is sent (`Scan.plain`). A part starts at the first record and at each record the reader reads
    that starts a reply surely kept (a reply's first record with a shape has text or a call, so rule 1 never drops
    it)."""
    starts = [0]
    as_is: list[tuple[int, list[str]] | None] = []
    part = _PartSoFar()
    plain = True
    sent = False
    previous: Line | None = None
    reply: object = None  # the message.id of the reply the reader may still be reading (results only since)
    for k, current in enumerate(lines):
        if not current.conversation or current.sidechain is not sidechain or k not in live:
            continue  # not read by the reader
        goes_on = current.kind == "assistant" and current.message_id is not None and current.message_id == reply
        if current.kind == "assistant":
            reply = current.message_id
        elif not current.holds_results:
            reply = None  # a prompt ends the reply; results (maybe with more) may stand inside it: no cut there
        if current.shape is None:
            plain = False
        elif current.kind == "assistant" and k and not goes_on:
            as_is.append(part.as_is())
            starts.append(k)
            part = _PartSoFar()
        if not sent and current.shape is not None:
            sent = _sent(current)
        part.add(current)
        previous = current
    if previous is None:
        return starts, [], plain
    as_is.append(part.as_is())
    return starts, as_is, plain and sent


def _sent(line: Line) -> bool:
    """True when the record, read with a shape, is sent: a prompt, results, or a reply with more than thinking
    (thinking that nothing follows is not sent, AT7)."""
    return line.kind != "assistant" or any(key[0] != "thinking" for key in line.shape)  # type: ignore[attr-defined]


class _PartSoFar:
    """A part's records the reader reads, as they come: whether repair leaves it as it is (given no call before
    took its calls' ids). Such a part: a reply of records with no block twice, its calls answered in call order by
    the user records right after it; then prompts only."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.results: list[str] = []
        self.keys: set[object] = set()
        self.positions: set[int] = set()
        self.replies = self.prompts = 0
        self.plain = True

    def add(self, line: Line) -> None:
        shape = line.shape
        if not self.plain:
            return
        if shape is None:
            self.plain = False
        elif line.kind == "assistant":
            if self.results or self.prompts:
                self.plain = False  # a second reply (a part starts at each: only a reply the reader merges)
            elif type(line.api_index) is int and line.api_index in self.positions:
                self.plain = False  # the reader's repeats
            elif type(line.api_index) is float:
                self.plain = False  # maybe an integer past 64 bits (`fast_loads`): the reader reads it exactly
            else:
                if type(line.api_index) is int:
                    self.positions.add(line.api_index)
                for key in shape:  # type: ignore[attr-defined]
                    if key in self.keys:
                        self.plain = False  # a block written twice, or two calls under one id
                        return
                    self.keys.add(key)
                    if key[0] == "tool_use":
                        self.calls.append(key[1])
                self.replies = 1
        elif shape == PROMPT:
            self.prompts += 1
        elif self.prompts:
            self.plain = False  # a result after a prompt: typed while the tools ran
        else:
            self.results.extend(shape)  # type: ignore[arg-type]

    def as_is(self) -> tuple[int, list[str]] | None:
        """Its message count and its calls' ids when repair leaves it as it is, else None."""
        if not self.plain or self.results != self.calls:
            return None
        return self.replies + len(self.results) + self.prompts, self.calls


def _parts(found: Scan) -> Iterator[tuple[int, int]]:
    return itertools.pairwise([*found.starts, len(found.lines)])


class _Step(NamedTuple):
    """Records [a, b) of the transcript as `_walk` went over them: a run of parts repair leaves as they are
    (`part` None, their message count), or one part read again whole and its repair."""

    a: int
    b: int
    messages: int
    part: ClaudeCode | None
    result: RepairResult | None


def _walk(found: Scan, is_read_only: IsReadOnly | None) -> Iterator[_Step]:
    """The parts in order, repaired after the final ids of the calls before them: each run of parts repair leaves
    as they are counted as one step, every other part read again and repaired."""
    ids = FinalIds()
    run: list[int] = []  # the run of parts left as they are so far: where it starts and ends, its messages
    for (a, b), as_is in zip(_parts(found), found.as_is):
        if as_is is not None and ids.used.isdisjoint(as_is[1]):  # under ids no call before took
            count, calls = as_is
            ids.used.update(calls)  # new, non-empty ids: rule 5 keeps them as they are
            ids.in_order.extend(calls)
            run = [run[0], b, run[2] + count] if run else [a, b, count]
            continue
        if run:
            yield _Step(run[0], run[1], run[2], None, None)
            run = []
        part = found.read_part(a, b)
        result = repair_following(part.messages, ids, is_read_only=is_read_only)
        yield _Step(a, b, 0, part, keep_answer_order(part.messages, result))
    if run:
        yield _Step(run[0], run[1], run[2], None, None)


# --- repair -----------------------------------------------------------------------------------------------------


def _repaired(found: Scan, is_read_only: IsReadOnly | None, summary: RepairSummary,
              ) -> Iterator[bytes | FileBytes]:
    """The repaired file's bytes, part by part, relinked as a whole reading relinks it: once repair writes a
    record anew, every live record hangs off the live record before it, those before that point too, so the
    parts before the first one repair changes are relinked only once it is found. What repair leaves as it is
    goes out as the file's own bytes."""
    relinker = Relinker(found.sidechain)
    copier = _Copier(found)
    added = 0  # records repair added so far (each new record's uuid is made from its number)
    changed = False
    waiting: list[tuple[int, int]] = []  # the parts before the first one repair changes
    for step in _walk(found, is_read_only):
        part, result = step.part, step.result
        if part is None or result is None:
            summary.messages += step.messages
            if changed:
                yield from _relinked_as_read(found, step.a, step.b, relinker, copier)
            else:
                waiting.append((step.a, step.b))
            continue
        summary.add(RepairSummary.of(part.messages, part.where(), result))
        out = part.placed(part.pieces(result), added)
        if not changed:
            if part.as_read(out):
                waiting.append((step.a, step.b))  # as read, so far
                continue
            changed = True
            for before in waiting:
                yield from _relinked_as_read(found, *before, relinker, copier)
        added += sum(1 for record, _ in out if record is None)
        part.patch_repeats(out)
        part.link(out, relinker)
        start, stop = found.part_bytes(step.a, step.b)
        yield from copier.upto(start)
        yield "".join(part.written_lines(out, found.newline)).encode("utf-8")
        copier.skip_to(stop)
    yield from copier.upto(found.size)
    if relinker.moved:
        summary.fixes.append(relinked(relinker.moved))
    if _stamp(found.handle) != found.stamp:
        raise changed_while_read()  # written to since the first pass: what was copied may not be what was read


class _Copier:
    """The file's own bytes, given out up to where something written anew stands, then skipped past it."""

    def __init__(self, found: Scan) -> None:
        self.found = found
        self.done = 0
        """Where the bytes not yet given out start."""

    def upto(self, offset: int) -> Iterator[FileBytes]:
        """The file's bytes from where it was left to `offset` (a line's start), as read and checked by the first
        pass: copied file to file by the writer, not read and decoded again."""
        if self.done < offset:
            yield FileBytes(self.found.handle, self.done, offset)
            self.done = offset

    def skip_to(self, offset: int) -> None:
        """Leave the bytes up to `offset` out: what stood there was written anew."""
        self.done = offset


def _relinked_as_read(found: Scan, a: int, b: int, relinker: Relinker, copier: _Copier,
                      ) -> Iterator[bytes | FileBytes]:
    """Records [a, b), which repair leaves as they are, as read but for the links relinking changes."""
    for k in range(a, b):
        line = found.lines[k]
        changes = relinker.visit(line.uid, line.parent, line.sidechain, line.timestamp, new=False,
                                 live=k in found.live)
        if changes:
            start, stop = found.places.line(k)
            yield from copier.upto(start)
            yield compact_json({**_record_at(found, start, stop), **changes}).encode("utf-8")
            copier.skip_to(stop)


def _record_at(found: Scan, start: int, stop: int) -> dict[str, Any]:
    """A record read again whole from its line (an InputError when it is no longer a record: the file changed)."""
    try:
        data = strict_json.loads(found.text(start, stop))
    except ValueError:
        raise changed_while_read() from None
    if not isinstance(data, dict):
        raise changed_while_read()
    return data
