"""Codex CLI session files: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.

One JSON record a line: `{"timestamp", "type", "payload"}` (rollouts before that envelope hold a session
line, then the bare items, and `{"record_type": "state"}` lines; 0.17x lines also carry an `ordinal`, and
`response_item` payloads a `metadata` object). Records of type `response_item` hold one OpenAI Responses item
(`message`, `function_call`, `function_call_output`, `custom_tool_call`, `local_shell_call`, `reasoning`,
`web_search_call`, ...); a `compacted` record's `replacement_history` replaces the whole history before it
(the history restarts there); `session_meta`, `turn_context` and `event_msg` records describe the session
and are kept as they are and not read, like `reasoning` and `web_search_call` items (server-side, no output).
The content parts of messages and outputs are the Responses API's: the Responses adapter reads them
(`read_content`); this store reads only what Codex alone writes (its records, the `{"content", "success"}` output).

Codex pairs a call with its output by `call_id`, wherever the output stands, and keeps the byte offsets of
earlier lines (`thread_history_1.sqlite`): repair rewrites the lines it changes in their place and APPENDS what
it adds (synthetic outputs) at the end of the file, each with the next `ordinal` when the file's lines have one.
Item ids the Responses API refuses (a `call_id` over 64 characters, an `id` without its type's prefix) are
`Session.problems` for `check`, and fixed where they stand by `repair` (`Session.fixes`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, ImagePart, TextPart, ToolCall
from chatmend.files.session import Session
from chatmend.ids import normalize_tool_id
from chatmend.messages import Part
from chatmend.providers.base import text_field
from chatmend.providers.openai_responses.read import read_content
from chatmend.providers.openai_responses.wire import (
    CALL_ID_MAX,
    CALL_OUTPUTS,
    ID_PREFIX,
    RESPONSES_ITEM_TYPES,
    TOOL_NAMES,
    is_client_output,
)
from chatmend.providers.openai_responses.write import result_item
from chatmend.transcripts._records import (
    BlockAt,
    Record,
    TranscriptFormat,
    compact_json,
    errors_at_line,
    expect,
    optional_text,
    parse_records,
)
from chatmend.transcripts.stores import FileFormat, tool_locations

__all__ = [
    "FORMAT", "NAME", "TOOL", "Codex", "default_locations", "holds_records", "is_session_file", "read",
    "resume_command", "session_id",
]

NAME = "codex"
"""The format's name (`--from codex`)."""
TOOL = "Codex"
"""The tool's name, as a person knows it."""
_WHAT = "one Codex session record a line"
_OUTPUT_OF = {**CALL_OUTPUTS, "local_shell_call": "function_call_output"}
"""The output type of each client call as Codex answers it (a local shell call with a `function_call_output`)."""
_PAYLOAD = {"function_call": "arguments", "custom_tool_call": "input", "tool_search_call": "arguments",
            "local_shell_call": "action", "shell_call": "action", "computer_call": "action",
            "apply_patch_call": "operation"}
"""The field holding each client call's payload."""
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Codex keeps its session files: `sessions` and `archived_sessions` in `$CODEX_HOME` when set, else in
    `~/.codex`."""
    return [*tool_locations(env, "CODEX_HOME", ".codex", "sessions"),
            *tool_locations(env, "CODEX_HOME", ".codex", "archived_sessions")]


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a session file: Codex names each `rollout-<time>-<thread id>.jsonl`."""
    file = Path(path)
    return file.name.startswith("rollout-") and file.suffix == ".jsonl"


def session_id(path: str | os.PathLike[str]) -> str:
    """The session's id: the thread id at the end of the file's name (its stem when it holds none)."""
    found = _UUID.findall(Path(path).name)
    return found[-1] if found else Path(path).stem


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the session: `codex resume ID`."""
    return f"codex resume {session_id(path)}"


def _is_call(payload: Mapping[str, Any], kind: object) -> bool:
    """A call Codex answers by `call_id` (a tool search only when the client runs it)."""
    return isinstance(kind, str) and kind in _PAYLOAD and (
        kind != "tool_search_call" or payload.get("execution") == "client")


def read(lines: Iterable[str]) -> Session:
    """A Session from a Codex CLI session file. A torn last line (Codex died mid-write) is skipped and said, as
    Codex's own reader skips a line it cannot parse."""
    warnings: list[str] = []
    return Codex(parse_records(lines, what=_WHAT, warnings=warnings)).session(warnings)


def _content(content: object, path: str) -> str | tuple[Part, ...]:
    """Responses content as the adapter reads it (no parts when absent), one text part as its text."""
    read = read_content([] if content is None else content, path)
    if isinstance(read, tuple) and len(read) == 1 and isinstance(read[0], TextPart):
        return read[0].text
    return read


def _output(payload: Mapping[str, Any], where: str) -> tuple[str | tuple[Part, ...], bool]:
    """A call output's content, and whether it failed (`{"content", "success": false}`, the object Codex stores;
    a tool search's found tools as their JSON)."""
    if payload.get("type") == "tool_search_output":
        tools = payload.get("tools")
        return (compact_json({"tools": tools}) if isinstance(tools, list) else ""), False
    output = payload.get("output")
    if isinstance(output, Mapping):
        failed = output.get("success") is False
        return _content(output.get("content", ""), f"{where}output.content"), failed
    return _content(output if output is not None else "", f"{where}output"), False


class Codex(TranscriptFormat):
    """Reads the conversation out of a session file and writes repaired records back."""

    keeps_answer_order = False  # its reader reads each call's output after the calls, in call order

    name = NAME
    provider = "openai_responses"

    def __init__(self, records: list[Record]) -> None:
        super().__init__(records)
        self.legacy = "payload" not in records[0].data and "type" not in records[0].data
        self._assistant: tuple[list[Part], list[ToolCall], list[BlockAt]] | None = None
        self._reply_of: dict[str, ChatMessage] = {}
        """The reply that made each call still waiting for its output (Codex pairs by `call_id`)."""
        self._positions: dict[int, list[int]] = {}
        """For a compaction record: where each item read stands in its replacement history."""
        for k, record in enumerate(records):
            with errors_at_line(record, _WHAT):
                self._read(k, record)
        with errors_at_line(records[-1], _WHAT):
            self._flush()

    def _read(self, k: int, record: Record) -> None:
        """Read one record: messages, calls and outputs; everything else is kept unread."""
        data = record.data
        payload = data.get("payload")
        if data.get("type") == "turn_context" and isinstance(payload, Mapping) \
                and isinstance(payload.get("model"), str):
            self.model = payload["model"]
        if data.get("type") == "compacted" and isinstance(payload, Mapping) \
                and isinstance(payload.get("replacement_history"), list):
            self._restart(k, record, payload["replacement_history"])
            return
        if self.legacy and "payload" not in data and text_field(data) in RESPONSES_ITEM_TYPES:
            payload = data  # the bare item of an older rollout
        elif data.get("type") != "response_item" or not isinstance(payload, Mapping):
            return
        where = "" if payload is data else "payload."  # (an older rollout's items have no envelope)
        if self._read_item(k, 0, record, payload, where):
            record.blocks = [payload]

    def _restart(self, k: int, record: Record, history: list[Any]) -> None:
        """A compaction: the history restarts with its replacement history (what came before is no longer sent,
        and is kept as it is)."""
        self._assistant = None
        self._reply_of = {}
        self._waiting = {}
        self.messages, self.blocks_at = [], []
        self.problems = []  # the ids of what is no longer sent do not matter
        for earlier in self.records[:k]:
            earlier.blocks = []
        read: list[Any] = []
        self._positions[k] = []
        for b, item in enumerate(history):
            if isinstance(item, Mapping) and self._read_item(k, len(read), record, item,
                                                             f"payload.replacement_history[{b}]."):
                read.append(item)
                self._positions[k].append(b)
        record.blocks = read
        self._flush()

    def _read_item(self, k: int, b: int, record: Record, payload: Mapping[str, Any], where: str) -> bool:
        """Read one Responses item (block `b` of record `k`); True when it is one chatmend reads."""
        kind = payload.get("type")
        # an item without a type is not one chatmend reads: kept as it is, as any other
        expect(record, f"{where}type", kind, (str, type(None)), "a string (the item's type)")
        if kind == "message":
            self._check_ids(record, payload, where)
            role = payload.get("role")
            if role == "assistant":
                # An assistant message and the calls right after it are one reply.
                self._flush()
                self._assistant = ([], [], [(k, b)])
                content = _content(payload.get("content"), f"{where}content")
                self._assistant[0].extend((TextPart(text=content),) if isinstance(content, str) else content)
                return True
            if role in ("user", "developer", "system"):
                self._flush()
                self.add(ChatMessage(role="user" if role == "user" else "system",
                                     content=_content(payload.get("content"), f"{where}content")), [(k, b)])
                return True
            return False
        if _is_call(payload, kind):
            assert isinstance(kind, str)
            if self._assistant is None:
                self._assistant = ([], [], [])
            call_id = (optional_text(record, f"{where}call_id", payload.get("call_id"))
                       or optional_text(record, f"{where}id", payload.get("id")))
            name = optional_text(record, f"{where}name", payload.get("name")) or TOOL_NAMES.get(kind, "tool")
            field = _PAYLOAD[kind]
            arguments = payload.get(field) or {}
            expect(record, f"{where}{field}", arguments, (dict, str),
                   "a string (the call's JSON arguments) or an object")
            self._check_ids(record, payload, where)
            self._assistant[1].append(ToolCall(id=call_id, name=name, arguments=arguments))
            self._assistant[2].append((k, b))
            return True
        if is_client_output(payload, kind) or kind == "local_shell_call_output":
            call_id = optional_text(record, f"{where}call_id", payload.get("call_id"))
            self._check_ids(record, payload, where)
            content, failed = _output(payload, where)
            self._flush()
            waiting = self.tool_name(call_id)
            reply = self._reply_of.pop(call_id, None)
            if reply is not None:
                self._answer(reply, call_id, content, failed, (k, b))
            else:
                self.add(ChatMessage(role="tool", tool_call_id=call_id, tool_name=waiting, is_error=failed,
                                     content=content), [(k, b)])
            return True
        return False

    def _check_ids(self, record: Record, payload: Mapping[str, Any], where: str) -> None:
        """What the Responses API refuses in an item's ids, and repair fixes (OR3: a `call_id` longer than 64
        characters, shortened; OR4: an item `id` without its type's prefix, `ctc_` for a custom tool call,
        left out: the API takes items without one)."""
        call_id, item_id, kind = payload.get("call_id"), payload.get("id"), payload.get("type")
        if isinstance(call_id, str) and len(call_id) > CALL_ID_MAX:
            self.problems.append(f"line {record.line}: {where}call_id: OR3: Invalid 'call_id': string too long. "
                                 f"Expected a string with maximum length {CALL_ID_MAX}, but got a string with "
                                 f"length {len(call_id)} instead.")
        if isinstance(item_id, str) and isinstance(kind, str) and kind in ID_PREFIX \
                and not item_id.startswith(ID_PREFIX[kind]):
            self.problems.append(f"line {record.line}: {where}id: OR4: Invalid 'id': '{item_id}'. Expected an ID "
                                 f"that begins with '{ID_PREFIX[kind]}'.")

    def _answer(self, reply: ChatMessage, call_id: str, content: str | tuple[Part, ...], failed: bool,
                at: BlockAt) -> None:
        """An output answers its call as Codex reads it, by `call_id` wherever it stands: it joins the outputs
        right after the call's reply (an output appended after later messages is not an orphan)."""
        order: dict[str, int] = {}  # each call id's place in the reply: outputs stand in the order of their calls
        for n, c in enumerate(reply.tool_calls):
            order.setdefault(c.id, n)
        call = reply.tool_calls[order[call_id]]
        index = next(i for i in range(len(self.messages) - 1, -1, -1) if self.messages[i] is reply) + 1
        while index < len(self.messages) and self.messages[index].role == "tool" \
                and order.get(self.messages[index].tool_call_id or "", -1) <= order[call_id]:
            index += 1
        self.messages.insert(index, ChatMessage(role="tool", tool_call_id=call_id, tool_name=call.name,
                                                is_error=failed, content=content))
        self.blocks_at.insert(index, [at])

    def _flush(self) -> None:
        """Emit the reply being read, if any."""
        if self._assistant is None:
            return
        parts, calls, blocks_at = self._assistant
        self._assistant = None
        content: str | tuple[Part, ...] = tuple(parts)
        if all(isinstance(p, TextPart) for p in parts):
            content = "".join(p.text for p in parts if isinstance(p, TextPart))
        reply = ChatMessage(role="assistant", content=content, tool_calls=tuple(calls))
        self.add_reply(reply, blocks_at)
        for call in calls:
            self._reply_of[call.id] = reply

    # --- writing -------------------------------------------------------------------------------------------

    def is_call(self, block: Any) -> bool:
        return isinstance(block, Mapping) and _is_call(block, block.get("type"))

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return {**block, "call_id": new_id}

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        return {**block, "call_id": new_id}

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        content: list[dict[str, Any]] = []
        for part in note.content if isinstance(note.content, tuple) else (TextPart(text=note.content),):
            if isinstance(part, TextPart):
                content.append({"type": "input_text", "text": part.text})
            elif isinstance(part, ImagePart):
                url = part.url if part.url is not None else f"data:{part.media_type};base64,{part.data}"
                content.append({"type": "input_image", "image_url": url})
        return [{"type": "message", "role": "user", "content": content}]

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        kind = str(call.get("type"))
        output = _OUTPUT_OF.get(kind, "function_call_output")
        if output in ("function_call_output", "custom_tool_call_output"):  # Codex's own: the text as it is
            text = result.content if isinstance(result.content, str) else ""
            return [{"type": output, "call_id": result.tool_call_id, "output": text}]
        return [result_item(result, result.tool_call_id or "", kind)]  # the output type's own shape

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        if self.legacy and "payload" not in record.data:
            return dict(blocks[0])
        data = dict(record.data)
        if data.get("type") == "compacted":
            # the items chatmend reads take their places back among those it does not (reasoning, compaction)
            history = list(data["payload"]["replacement_history"])
            positions = self._positions[record_index(self.records, record)]
            for position, block in zip(positions, blocks):
                history[position] = block
            for position in reversed(positions[len(blocks):]):
                del history[position]
            data["payload"] = {**data["payload"], "replacement_history": history}
            return data
        data["payload"] = blocks[0] if len(blocks) == 1 else {"type": "message", "role": "user", "content": [
            c for b in blocks for c in b.get("content", [])]}
        return data

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        """A synthetic output appended at the end: the file's last timestamp (not earlier than the line before
        it), the call's `metadata` (Codex writes one on each item of a turn)."""
        payload = dict(blocks[0])
        call = next((b for b in near.blocks if isinstance(b, Mapping) and b.get("call_id") == payload["call_id"]),
                    None)
        if isinstance(call, Mapping) and isinstance(call.get("metadata"), Mapping):
            payload["metadata"] = call["metadata"]
        if self.legacy and "payload" not in near.data:
            return payload
        data: dict[str, Any] = {}
        stamp = next((r.data["timestamp"] for r in reversed(self.records) if isinstance(r.data.get("timestamp"), str)),
                     None)
        if stamp is not None:
            data["timestamp"] = stamp
        data["type"] = "response_item"
        data["payload"] = payload
        if isinstance(near.data.get("metadata"), Mapping):
            # the call's turn, less what belongs to the call alone (its place among the user's inputs)
            data["metadata"] = {k: v for k, v in near.data["metadata"].items()
                                if k not in ("user_input_order", "retained_source")}
        return data

    def _emit(self, pieces: list[tuple[int | None, Any]]) -> Iterator[str]:
        """Every record keeps its place (and every unchanged line its byte offset); a record whose items repair
        changed is rewritten where it stands, one whose items it dropped is left out, and what repair adds goes
        at the end, each line with the next `ordinal` when the file's lines carry one."""
        kept: dict[int, list[Any]] = {}
        added: list[dict[str, Any]] = []
        self.fixes.clear()
        for k, block in pieces:
            assert k is not None
            if k >= 0:
                kept.setdefault(k, []).append(self._fit(block, self.records[k].line))
            else:
                block = self._fit(block, None)
                added.append(self.new_record(self.records[-1 - k], [block], len(added) + 1))
        out: list[tuple[Record | None, dict[str, Any] | None]] = []
        for k, record in enumerate(self.records):
            blocks = kept.get(k)
            if not record.blocks or blocks == record.blocks:
                out.append((record, None))
            elif blocks:
                out.append((record, self.render(record, blocks, 0)))
        ordinals = [r.data["ordinal"] for r in self.records if type(r.data.get("ordinal")) is int]
        sequence = max(_sequences(self.records), default=0)
        for n, data in enumerate(added, start=max(ordinals, default=-1) + 1):
            if ordinals:
                data = _with_ordinal(data, n)
            metadata = data.get("metadata")
            if isinstance(metadata, dict) and type(metadata.get("history_sequence")) is int:
                sequence += 1  # each item of the history has its own, in order
                data["metadata"] = {**metadata, "history_sequence": sequence}
            out.append((None, data))
        yield from self.written_lines(out)

    def _fit(self, block: Any, line: int | None) -> Any:
        """An item with the ids the Responses API takes (see `_check_ids`): a `call_id` over 64 characters
        shortened the same way in its call and its output, an `id` without its type's prefix left out."""
        if not isinstance(block, Mapping):
            return block
        at = f"line {line}: " if line is not None else ""
        call_id, item_id, kind = block.get("call_id"), block.get("id"), block.get("type")
        if isinstance(call_id, str) and len(call_id) > CALL_ID_MAX:
            block = {**block, "call_id": normalize_tool_id(call_id, max_length=CALL_ID_MAX)}
            if line is not None:
                self.fixes.append(f"{at}call_id of {len(call_id)} characters shortened to {len(block['call_id'])}")
        if isinstance(item_id, str) and isinstance(kind, str) and kind in ID_PREFIX \
                and not item_id.startswith(ID_PREFIX[kind]):
            block = {key: value for key, value in block.items() if key != "id"}
            self.fixes.append(f"{at}item id {item_id!r} of a {kind} left out (it must begin with "
                              f"'{ID_PREFIX[kind]}')")
        return block


def _sequences(records: list[Record]) -> Iterator[int]:
    """The `metadata.history_sequence` numbers of the file's lines (0.17x)."""
    for record in records:
        metadata = record.data.get("metadata")
        if isinstance(metadata, Mapping) and type(metadata.get("history_sequence")) is int:
            yield metadata["history_sequence"]


def record_index(records: list[Record], record: Record) -> int:
    """The index of a record (by identity) in the file's records."""
    return next(k for k, r in enumerate(records) if r is record)


def _with_ordinal(data: dict[str, Any], ordinal: int) -> dict[str, Any]:
    """The record with `ordinal` after its timestamp, where Codex writes it."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[key] = value
        if key == "timestamp":
            out["ordinal"] = ordinal
    if "ordinal" not in out:
        out = {"ordinal": ordinal, **out}
    return out


# --- detection -----------------------------------------------------------------------------------------------

_RECORD_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
"""The types of the records in the `payload` envelope."""
_BARE_ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "computer_call",
    "computer_call_output", "web_search_call", "file_search_call", "item_reference", "mcp_call",
})
"""The item types a Codex rollout from before the `payload` envelope records bare."""


def holds_records(records: Sequence[Mapping[str, Any]]) -> bool:
    """True for a Codex rollout's first records: a record in the `payload` envelope, or (before that envelope) a
    session line (`id`, `timestamp`), then bare items or `{"record_type": "state"}` lines."""
    if any(text_field(r) in _RECORD_TYPES and isinstance(r.get("payload"), Mapping) for r in records):
        return True
    first = records[0]
    return (
        "id" in first and "timestamp" in first and "type" not in first and "role" not in first
        and any(text_field(r) in _BARE_ITEM_TYPES or r.get("record_type") == "state" for r in records[1:])
    )


FORMAT = FileFormat(NAME, "Codex CLI session files (~/.codex/sessions/**/rollout-*.jsonl)", order=10,
                    read_lines=read, holds_records=holds_records)
"""The format table's entry (its envelope tells a rollout first)."""
