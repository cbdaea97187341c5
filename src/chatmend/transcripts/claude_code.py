"""Claude Code session transcripts: `~/.claude/projects/<project>/<session>.jsonl`, and its subagents'
(`agent-*.jsonl` beside it in 2.0, `<session>/subagents/agent-*.jsonl` in 2.1).

One JSON record a line. Records of `type` `user` and `assistant` hold an Anthropic Messages `message`;
Claude Code writes each content block of one reply as its own record (same `message.id`), and each tool
result as its own `user` record. Records are linked by `uuid`/`parentUuid`, and what Claude Code resumes is
the chain from the leaf back to the last compaction boundary (`follow`); summaries, system events, file
snapshots, queue operations, the 2.1.3xx bookkeeping records and a main session's sidechain records are kept
as they are and not read."""

from __future__ import annotations

import collections
import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, NamedTuple

from chatmend import ChatMessage
from chatmend import strict_json as strict_json
from chatmend.exceptions import ReadError
from chatmend.files.session import Session
from chatmend.providers.anthropic.read import (
    block_identity,
    plain_reply,
    plain_turn,
    read_turn,
)
from chatmend.providers.anthropic.write import text_result_block, user_blocks
from chatmend.providers.base import text_field
from chatmend.transcripts._records import (
    BlockAt,
    Record,
    TranscriptFormat,
    block_content,
    content_blocks,
    errors_at_line,
    located,
    parse_records,
)
from chatmend.transcripts.stores import FileFormat, any_record, tool_locations

__all__ = [
    "FORMAT", "NAME", "TOOL", "ClaudeCode", "Line", "default_locations", "is_record", "is_session_file", "line_of",
    "read", "resume_command", "session_id",
]

NAME = "claude_code"
"""The format's name (`--from claude_code`)."""
TOOL = "Claude Code"
"""The tool's name, as a person knows it."""
WHAT = "one Claude Code transcript record a line"
_NAMESPACE = uuid.UUID("5b0e3c1e-7f0a-4c47-9a57-0c6f8f0c2d11")
_ENVELOPE = ("isSidechain", "agentId", "userType", "cwd", "sessionId", "version", "gitBranch", "slug")
_IN_RECORD = "message."
"""Where the Anthropic message stands in a record (a block's error path is `message.content[1].id`)."""


_READ = ("uuid", "parentUuid", "type", "subtype", "isSidechain", "isVirtual", "isAbortedMidStream", "apiBlockIndex",
         "timestamp", "retractedMessageUuids", "supersedesUuids", "sourceToolAssistantUUID", *_ENVELOPE)
"""The fields of a record that reading it and writing records for it look at."""
_READ_OF_MESSAGE = ("id", "model", "content")


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Claude Code keeps its projects' transcripts: `$CLAUDE_CONFIG_DIR/projects` when set, else
    `~/.claude/projects`."""
    return tool_locations(env, "CLAUDE_CONFIG_DIR", ".claude", "projects")


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a session Claude Code resumes by id: a `.jsonl` right in a project's folder, not a subagent's
    (`agent-*.jsonl` beside it, or anything in a session's own folder: they are part of their parent's)."""
    file = Path(path)
    return file.suffix == ".jsonl" and file.parent.parent.name == "projects" and not file.name.startswith("agent-")


def session_id(path: str | os.PathLike[str]) -> str:
    """The session's id: Claude Code names its transcript `<session id>.jsonl`."""
    return Path(path).stem


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the session (from the project's folder): `claude --resume ID`."""
    return f"claude --resume {session_id(path)}"


def read(lines: Iterable[str]) -> Session:
    """A Session from a Claude Code transcript (a line that is not a record is kept and warned about): the reader
    run over the whole file at once (`claude_code_stream` runs it a part at a time)."""
    warnings: list[str] = []
    records = parse_records(lines, what=WHAT, warnings=warnings, keep=kept, lone_surrogates=True)
    return ClaudeCode(records).session(warnings)


def kept(data: dict[str, Any]) -> dict[str, Any]:
    """What of a record reading looks at (ids, links, flags, its message's id, model and content): the rest
    (`toolUseResult`, which repeats a result, `usage`, file snapshots, progress) is read again from the line
    only for a record written anew."""
    part = {key: data[key] for key in _READ if key in data}
    message = data.get("message")
    if isinstance(message, dict):
        part["message"] = {key: message[key] for key in _READ_OF_MESSAGE if key in message}
    elif "message" in data:
        part["message"] = message
    return part


class Line(NamedTuple):
    """What following the chain and cutting a transcript into parts read of one record (a tuple: the fewest
    objects a record, for the collector too, when a large file's first pass holds one for each)."""

    uid: object
    parent: object
    kind: str | None
    compact_boundary: bool
    sidechain: bool
    message_id: object
    """An assistant record's `message.id` (the reply it is a block of), else None."""
    holds_results: bool
    """True for a user record holding a tool_result block."""
    timestamp: object
    api_index: object
    """Its `apiBlockIndex` (None when it has none)."""
    conversation: bool
    """True for a user or assistant record holding a message (what the reader reads when it is live)."""
    shape: object
    """A conversation record whose blocks a check finds nothing in: the adapter's `plain_turn` or `plain_reply`
    of its content; None for any other."""


def line_of(data: dict[str, Any]) -> Line:
    """What following the chain and the cut read of a record (its JSON object, or what `kept` keeps of it)."""
    get = data.get
    kind = get("type")
    message: Any = get("message")
    message_id: object = None
    results = conversation = False
    shape: object = None
    if kind == "assistant":
        if type(message) is dict:
            conversation = True
            message_id = message.get("id")
            if type(message_id) is not str:
                message_id = None
            shape = plain_reply(message.get("content"))
    elif kind == "user":
        if type(message) is dict:
            conversation = True
            shape, results = plain_turn(message.get("content"))
    elif type(kind) is not str:
        kind = None
    return Line(get("uuid"), get("parentUuid"), kind, kind == "system" and get("subtype") == "compact_boundary",
                bool(get("isSidechain")), message_id, results, get("timestamp"), get("apiBlockIndex"), conversation,
                shape)


def is_subagent(lines: Sequence[Line]) -> bool:
    """True for a subagent's transcript (`agent-*.jsonl` beside the session in 2.0, `<session>/subagents/` in
    2.1): every user and assistant record is on the sidechain, so the sidechain is the conversation."""
    turns = (n.sidechain for n in lines if n.kind in ("user", "assistant"))
    return next(turns, False) and all(turns)  # a main session's first turn already says so


@dataclass
class Chain:
    """What Claude Code resumes of a transcript."""

    live: set[int]
    """The records of the chain it follows (relinked in their order when repair changes anything)."""
    unsent: set[int] = field(default_factory=set)
    """Records of that chain it leaves out of what it sends (retracted, superseded, a virtual aborted stream)."""
    sidechain: bool = False
    """True when the conversation is a subagent's (its records are all `isSidechain`)."""


def follow(records: list[Record]) -> Chain:
    """The records Claude Code resumes (`follow_lines`), and those of them it leaves out of what it sends."""
    live, sidechain, leaf = follow_lines([line_of(r.data) for r in records])
    return Chain(live, _unsent(records, live) if leaf else set(), sidechain)


def follow_lines(lines: Sequence[Line]) -> tuple[set[int], bool, bool]:
    """The records Claude Code resumes, whether they are a subagent's sidechain, and whether it has a leaf (a
    user or assistant record to continue; without one, everything from the boundary on): the `parentUuid` chain
    from the leaf it continues (the last user or assistant record of the conversation) back to its start or
    the last compaction boundary (nothing before the boundary is sent, whatever links point there), plus what
    Claude Code gathers back onto that chain: the other records of a reply split one block a line (same
    `message.id`) and the results hanging off them (parallel calls). A chain that breaks (a parent that is not
    there, or one behind the boundary) is read whole from the boundary on, in line order, and relinked."""
    sidechain = is_subagent(lines)
    # One pass: where each uuid of the conversation's tree is, its replies' and results' records, the boundary.
    index: dict[str, int] = {}
    replies: list[int] = []
    results: list[int] = []
    leaf: int | None = None
    start = 0
    for at, record in enumerate(lines):
        if type(record.uid) is not str or record.sidechain is not sidechain:
            continue
        if record.compact_boundary:
            start, index, replies, results, leaf = at, {}, [], [], None
        index[record.uid] = at
        if record.kind == "assistant":
            replies.append(at)
            leaf = at
        elif record.kind == "user":
            leaf = at
            if record.holds_results:
                results.append(at)
    if leaf is None:
        return set(range(start, len(lines))), sidechain, False
    live: set[int] = set()
    k: int | None = leaf
    parent: object = None
    while k is not None and k not in live:
        live.add(k)
        parent = lines[k].parent
        k = index.get(parent) if isinstance(parent, str) else None
    if parent is not None:
        return set(range(start, len(lines))), sidechain, True  # a broken chain: read whole from the boundary
    first = min(live)
    message_ids = {lines[k].message_id for k in live} - {None}
    calls = set()
    for k in replies:
        if k >= first and (k in live or lines[k].message_id in message_ids):
            live.add(k)
            calls.add(lines[k].uid)
    for k in results:
        parent = lines[k].parent
        if k >= first and isinstance(parent, str) and parent in calls:
            live.add(k)
    return live, sidechain, True


def _unsent(records: list[Record], live: set[int]) -> set[int]:
    """The records of the chain Claude Code drops before sending it.

    - `retractedMessageUuids` (on a user or assistant record, or a `model_refusal_fallback` system record): the
      messages a refusal retracted; system records stay.
    - `supersedesUuids` (on an assistant record): the replies a fallback model's reply replaced.
    - `isVirtual` with `isAbortedMidStream`: a stream cut off that Claude Code never counts as a reply.
    """
    gone: set[str] = set()
    unsent: set[int] = set()
    for k in live:
        data = records[k].data
        if "retractedMessageUuids" in data and (text_field(data) in ("user", "assistant") or (
                text_field(data) == "system" and data.get("subtype") == "model_refusal_fallback")):
            gone.update(_strings(data["retractedMessageUuids"]))
        if "supersedesUuids" in data and text_field(data) == "assistant":
            gone.update(_strings(data["supersedesUuids"]))
        if data.get("isVirtual") is True and data.get("isAbortedMidStream") is True:
            unsent.add(k)
    if gone:
        unsent.update(k for k in live if text_field(records[k].data, "uuid") in gone
                      and text_field(records[k].data) != "system")
    return unsent


def _strings(value: object) -> list[str]:
    """The strings of a list field (anything else holds none)."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


_AT_BLOCK = re.compile(r"content\[(\d+)\]")


@dataclass
class _Reply:
    """An assistant reply being read, record by record: its blocks, handed to the adapter's reader once whole."""

    message_id: object
    blocks: list[Any] = field(default_factory=list)
    blocks_at: list[BlockAt] = field(default_factory=list)
    seen: dict[object, int] = field(default_factory=dict)
    """Each block read (by `block_identity`) and the record it was read from, to know a record that repeats them."""
    positions: dict[int, int] = field(default_factory=dict)
    """The `apiBlockIndex` of each record read, and that record."""
    end: int = 0
    """Its last record (a repeat included)."""


class ClaudeCode(TranscriptFormat):
    """Reads the conversation out of a transcript (the records of a whole file, or of a part of one) and writes
    repaired records back. It gathers each turn's blocks from the records Claude Code split them into and hands
    them to the Anthropic adapter's reader (`read_turn`)."""

    name = NAME
    provider = "anthropic"

    def __init__(self, records: list[Record], chain: Chain | None = None, uses_source: bool | None = None) -> None:
        """Read `records`: a whole transcript, or a part of one (a streaming reader's) with the `chain` followed
        over the whole file and whether the file's records name their call's record (`uses_source`)."""
        super().__init__(records)
        self._reply: _Reply | None = None
        self._held: list[tuple[int, Record]] = []
        """User records of results only, read while a reply is open: its next record may still follow them."""
        if chain is None:
            chain = follow(records)
        self.live = chain.live
        self.sidechain = chain.sidechain
        if uses_source is None:
            uses_source = any("sourceToolAssistantUUID" in r.data for r in records)
        self._uses_source = uses_source
        self._reply_end: dict[int, int] = {}
        self.repeats: dict[int, int] = {}
        """Assistant records that repeat blocks read from an earlier one (kept unread), and that record."""
        for k, record in enumerate(records):
            if k not in self.live or k in chain.unsent:
                continue  # not what Claude Code resumes (an abandoned branch, before a compaction): kept as is
            with errors_at_line(record, WHAT, _IN_RECORD):
                self._read(k, record)
        with errors_at_line(records[-1], WHAT, _IN_RECORD):
            self._flush()

    def _read(self, k: int, record: Record) -> None:
        """Read one record: the conversation's user and assistant messages only."""
        data = record.data
        message = data.get("message")
        if bool(data.get("isSidechain")) is not self.sidechain or text_field(data) not in ("user", "assistant") \
                or not isinstance(message, Mapping):
            return  # not part of the conversation: kept as it is
        if strict_json.lone_surrogate(record.raw) is not None:
            message = self._mend(k, record, message)
        record.blocks = content_blocks(message.get("content"))
        if data["type"] == "assistant":
            if isinstance(message.get("model"), str) and message["model"] != "<synthetic>":
                self.model = message["model"]
            self._read_assistant(k, record, message.get("id"))
        elif self._reply is not None and record.blocks and all(
                isinstance(b, Mapping) and b.get("type") == "tool_result" for b in record.blocks):
            self._held.append((k, record))  # results written while the reply still streamed: read after it
        else:
            self._flush()
            self._read_user(k, record)
    def _mend(self, k: int, record: Record, message: Mapping[str, Any]) -> Mapping[str, Any]:
        """A sent record whose message holds a lone surrogate (Claude Code reads it, the API refuses the request
        as invalid JSON): read with U+FFFD in its place, reported, and written so by repair. Its message, mended
        (a lone surrogate only outside the message is not sent: the record is left as it is)."""
        whole = strict_json.loads(record.raw, lone_surrogates=True)
        sent = [found for found in strict_json.find_lone_surrogates(whole) if found.path.startswith("message.")]
        if not sent:
            return message
        for found in sent:
            self.problems.append(
                f"line {record.line}: {found.path}: JSON: half of a surrogate pair ({found.escape}) with no other "
                "half, which Anthropic refuses: The request body is not valid JSON: "
                f"{'no low surrogate in string' if found.high else 'invalid high surrogate in string'}")
        mended, paths = strict_json.without_lone_surrogates(whole)
        record.data, record.partial = mended, False
        self.mended[k] = [f"line {record.line}: replaced a lone surrogate with U+FFFD at {path}" for path in paths]
        mended_message: Mapping[str, Any] = mended["message"]
        return mended_message

    def _read_assistant(self, k: int, record: Record, message_id: object) -> None:
        """Add a record's blocks to the reply it belongs to.

        Claude Code writes each block of one reply as its own record, all with the reply's `message.id`; a
        record that repeats blocks already read under that id (the same `apiBlockIndex`, or the same blocks: a
        `tool_use` by its id) is the same blocks written again, not a second call, and is kept unread.
        """
        reply = self._reply
        if reply is None or message_id is None or reply.message_id != message_id:
            self._flush()
            reply = self._reply = _Reply(message_id)
        # else: the same reply goes on, past the results of its calls that its tools wrote meanwhile (Claude Code
        # runs a call while the reply still streams, and sends the records of one message.id as one reply)
        keys = [block_identity(block) for block in record.blocks]
        index = record.data.get("apiBlockIndex")
        position = index if type(index) is int else None
        if record.blocks and position is not None and position in reply.positions:
            self.repeats[k] = reply.positions[position]
        elif record.blocks and position is None and all(key in reply.seen for key in keys):
            self.repeats[k] = reply.seen[keys[0]]
        if k in self.repeats:
            record.blocks = []  # a repeat: Claude Code sends the block once
            reply.end = k
            return
        if position is not None:
            reply.positions[position] = k
        reply.seen.update((key, k) for key in keys)
        reply.end = k
        reply.blocks += record.blocks
        reply.blocks_at += ((k, b) for b in range(len(record.blocks)))

    def _flush(self) -> None:
        """Emit the reply being read, if any (its blocks read by the adapter as one message), then the results
        held while it was read."""
        if self._reply is None:
            return
        reply, self._reply = self._reply, None
        for k, _ in reply.blocks_at:
            self._reply_end[k] = reply.end
        try:
            [(message, _)] = read_turn("assistant", reply.blocks, self.tool_name)
        except ReadError as exc:  # at its block's place in the record it came from
            path = exc.path or ""
            at = _AT_BLOCK.match(path)
            if at is None:
                raise
            k, b = reply.blocks_at[int(at.group(1))]
            exc.path = f"content[{b}]{path[at.end():]}"
            raise located(exc, self.records[k], _IN_RECORD) from None
        self.add_reply(message, reply.blocks_at)
        held, self._held = self._held, []
        for k, record in held:
            with errors_at_line(record, WHAT, _IN_RECORD):
                self._read_user(k, record)

    def _read_user(self, k: int, record: Record) -> None:
        """A user record: each tool_result a tool message, other blocks user messages (the adapter's reading)."""
        for message, blocks in read_turn("user", record.blocks, self.tool_name):
            self.add(message, [(k, b) for b in blocks])

    # --- writing -------------------------------------------------------------------------------------------

    def is_call(self, block: Any) -> bool:
        return isinstance(block, Mapping) and block.get("type") == "tool_use"

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return {**block, "id": new_id}

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        return {**block, "tool_use_id": new_id}

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        return user_blocks(note)

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        text = result.content if isinstance(result.content, str) else ""
        return [text_result_block(result.tool_call_id or "", text, is_error=True)]

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        data = dict(record.whole())
        message = dict(data["message"])
        message["content"] = block_content(blocks, message.get("content"))
        data["message"] = message
        if copy and isinstance(data.get("uuid"), str):
            data["uuid"] = str(uuid.uuid5(_NAMESPACE, f"{data['uuid']}/{copy}"))
        return data

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        data: dict[str, Any] = {"parentUuid": None}
        for key in _ENVELOPE:
            if key in near.data:
                data[key] = near.data[key]
        data["type"] = "user"
        data["message"] = {"role": "user", "content": blocks}
        data["uuid"] = str(uuid.uuid5(_NAMESPACE, f"{near.data.get('uuid')}/interrupted/{serial}"))
        if "timestamp" in near.data:
            data["timestamp"] = near.data["timestamp"]
        if self._uses_source and isinstance(near.data.get("uuid"), str):
            data["sourceToolAssistantUUID"] = near.data["uuid"]  # 2.1.3xx: the record of the call it answers
        return data

    def relink(self, out: list[tuple[Record | None, dict[str, Any] | None]]) -> None:
        """Make the chain Claude Code resumes pass every record it should, in their new order.

        Claude Code follows `parentUuid` from the leaf; each parallel result hanging off its own call's record
        is a branch of which resume keeps one. When repair changed anything, every live record (and every new
        one) hangs off the live record before it, so the chain passes every `tool_use` and then every
        `tool_result`; the first keeps its parent (null at the start or a compaction boundary). A new record is
        timestamped a millisecond after the line before it (Claude Code 2.1.1 leaves out results that are not
        later than the line before them, and their calls with them).
        """
        if self.as_read(out):
            return  # nothing repaired: the tree stays as Claude Code wrote it
        self.patch_repeats(out)
        relinker = Relinker(self.sidechain)
        self.link(out, relinker)
        if relinker.moved:
            self.fixes.append(relinked(relinker.moved))

    def link(self, out: list[tuple[Record | None, dict[str, Any] | None]], relinker: Relinker) -> None:
        """`relink` of these records, written where `relinker` stands (a part of the file, written part by part)."""
        live = {id(self.records[k]) for k in self.live}
        for i, (record, data) in enumerate(out):
            current = data if data is not None else (record.data if record is not None else {})
            changes = relinker.changes(current, new=record is None, live=record is None or id(record) in live)
            if changes:
                whole = current if data is not None or record is None else record.whole()
                out[i] = (record, {**whole, **changes})

    def reply_end(self, k: int) -> int:
        return self._reply_end.get(k, k)

    def keep_record_order(self, pieces: list[tuple[int | None, Any]], reply: int, answers: int) -> None:
        """A reply's records go back between its results' records as they stood in the file (results a tool wrote
        while the reply still streamed stay between the reply's records); the results keep their order, and what
        repair adds (no record yet) comes after the reply's records."""
        if answers <= reply or answers == len(pieces):
            return
        own = collections.deque(pieces[reply:answers])
        merged: list[tuple[int | None, Any]] = []
        for piece in pieces[answers:]:
            k = piece[0]
            while own and (k is None or k < 0 or own[0][0] < k):  # type: ignore[operator]
                merged.append(own.popleft())
            merged.append(piece)
        pieces[reply:] = [*merged, *own]

    def patch_repeats(self, out: list[tuple[Record | None, dict[str, Any] | None]]) -> None:
        """A repeated record gets the content its original was written back with (a call renamed in one is
        renamed in the other, so they stay the same block), and is left out with it."""
        written: dict[int, dict[str, Any]] = {}
        for record, data in out:
            if record is not None and data is not None:
                written.setdefault(id(record), data)
        present = {id(record) for record, _ in out}
        repeats = {id(self.records[k]): self.records[original] for k, original in self.repeats.items()}
        for i, (record, data) in enumerate(out):
            source = repeats.get(id(record))
            original = written.get(id(source)) if source is not None else None
            if record is not None and original is not None and data is None:
                whole = record.whole()
                message = {**whole["message"], "content": original["message"]["content"]}
                out[i] = (record, {**whole, "message": message})
        # a repeat of a record repair dropped (an empty reply) goes with it
        out[:] = [(r, d) for r, d in out if id(repeats.get(id(r))) in present or id(r) not in repeats]


class Relinker:
    """Relinking's state as it walks the records in the order they are written: the live record before (each
    live record hangs off it) and the latest timestamp so far (a new record is later than every line before it).
    One serves a whole file, carried from one part to the next when a transcript is written part by part."""

    def __init__(self, sidechain: bool) -> None:
        self.sidechain = sidechain
        self.previous: str | None = None
        self.stamp: str | None = None
        self.started = False
        self.moved = 0
        """How many records so far got a new `parentUuid` (repair reports it)."""

    def changes(self, record: Mapping[str, Any], *, new: bool, live: bool) -> dict[str, Any]:
        """The fields the next record written gets (none, its `timestamp`, its `parentUuid`); `new` for a record
        repair adds, `live` for one of the chain Claude Code resumes."""
        return self.visit(record.get("uuid"), record.get("parentUuid"), bool(record.get("isSidechain")),
                          record.get("timestamp"), new=new, live=live)

    def visit(self, uid: object, parent: object, sidechain: bool, stamp: object, *, new: bool, live: bool,
              ) -> dict[str, Any]:
        """`changes` of a record given its fields."""
        changes: dict[str, Any] = {}
        if new and isinstance(stamp, str) and self.stamp is not None and stamp <= self.stamp:
            stamp = changes["timestamp"] = _after(self.stamp)
        if isinstance(stamp, str):
            self.stamp = max(self.stamp or stamp, stamp)
        if not live or not isinstance(uid, str) or sidechain is not self.sidechain:
            return changes
        if self.started and parent != self.previous:
            changes["parentUuid"] = self.previous
            self.moved += not new  # a record repair adds is reported as added
        self.started = True
        self.previous = uid
        return changes


def relinked(count: int) -> str:
    """What repair says of the records it relinked."""
    records = "record" if count == 1 else "records"
    return (f"relinked {count} {records} (a new parentUuid): the chain Claude Code resumes passes every record, "
            "in the order repair wrote them")


def _after(stamp: str) -> str:
    """The ISO timestamp one millisecond after `stamp`, written as Claude Code writes them (`...00.000Z`); an
    unreadable one is kept as it is."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + timedelta(milliseconds=1)
    except ValueError:
        return stamp
    text = moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
    return f"{text}Z" if stamp.endswith("Z") else moment.isoformat(timespec="milliseconds")


# --- detection -----------------------------------------------------------------------------------------------

_RECORD_TYPES = frozenset({"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation",
                           "attachment", "progress"})
"""The types of a transcript's records."""


def is_record(value: Mapping[str, Any]) -> bool:
    """True for a record only a Claude Code transcript has: one of its types, with a `uuid`, a `sessionId` or a
    `leafUuid` (a `summary` record names its leaf message by it)."""
    return text_field(value) in _RECORD_TYPES and ("uuid" in value or "sessionId" in value or "leafUuid" in value)


FORMAT = FileFormat(NAME, "Claude Code session transcripts (~/.claude/projects/*/*.jsonl)", order=80,
                    read_lines=read, holds_records=any_record(is_record))
"""The format table's entry (its check runs last of the JSON Lines formats': other tools' records look alike)."""
