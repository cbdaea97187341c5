"""Cline and Roo Code tasks: `tasks/<id>/api_conversation_history.json` in the extension's global storage.

Cline (and Roo Code before its version-2 format) keeps the conversation it sends as one JSON list of Anthropic
message params, each with a `ts` (Unix milliseconds) and, in Roo Code, the marks of its non-destructive context
management: a summary (`isSummary`, `condenseId`) hides the messages whose `condenseParent` names it, a
truncation marker (`isTruncationMarker`, `truncationId`) those whose `truncationParent` names it. Roo Code's
version 2 (`RooMessageHistory`) wraps AI SDK model messages in `{"version": 2, "messages": [...]}`: `tool-call`
parts in assistant messages, `tool-result` parts in `tool` messages, standalone `reasoning` items.

chatmend reads what the tool sends on resume (hidden messages are kept, not read) and a repair rewrites only the
items it changes, every other character of the file as it was. A synthetic result for an interrupted call is
a new item after its call (`user` with a `tool_result` block, or in version 2 a `tool` message), stamped a
millisecond after the call's `ts`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, ImagePart, RepairResult, TextPart, ToolCall
from chatmend.files.io import InputError
from chatmend.files.session import Session
from chatmend.messages import Part, plainest_content
from chatmend.providers.anthropic.read import read_turn
from chatmend.providers.anthropic.write import text_result_block, user_blocks
from chatmend.transcripts._document import DocumentFormat, item_records, list_text, read_json
from chatmend.transcripts._records import (
    BlockAt,
    Record,
    block_content,
    content_blocks,
    errors_at_line,
    expect,
    optional_text,
    read_call,
)
from chatmend.transcripts.stores import FileFormat, home, tool_locations

__all__ = [
    "FILE_NAME", "FORMAT", "NAME", "ROO_NAME", "TOOL", "default_locations", "holds_session", "holds_task",
    "is_session_file", "read", "read_document", "resume_command",
]

NAME = "cline"
"""The format of the list of Anthropic message params (`--from cline`), Cline's and Roo Code's older one."""
ROO_NAME = "roo_code"
"""The format of Roo Code's version-2 `RooMessageHistory` (`--from roo_code`)."""
TOOL = "Cline"
"""The tool's name, as a person knows it."""
FILE_NAME = "api_conversation_history.json"
"""The name of a task's conversation file."""
EXTENSION_ID = "saoudrizwan.claude-dev"
"""Cline's VS Code extension id: its global storage directory's name."""
_WHAT = "a Cline task's message (an Anthropic message param with 'role' and 'content')"
_ROO_WHAT = "a Roo Code message (an AI SDK model message with 'role' and 'content')"
_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
"""The VS Code builds whose global storage a VS Code extension's data may be in."""


# --- what a doctor needs -------------------------------------------------------------------------------------


def editor_storage(extension: str, env: Mapping[str, str] | None = None) -> list[Path]:
    """The global storage directories of a VS Code extension in every VS Code build, on this platform."""
    env = os.environ if env is None else env
    home_dir = Path(home(env))
    if env.get("APPDATA"):  # Windows
        roots = [Path(env["APPDATA"])]
    elif (home_dir / "Library" / "Application Support").is_dir():  # macOS
        roots = [home_dir / "Library" / "Application Support"]
    else:
        roots = [Path(env.get("XDG_CONFIG_HOME") or home_dir / ".config")]
    return [root / editor / "User" / "globalStorage" / extension for root in roots for editor in _EDITORS]


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Cline keeps its tasks: each VS Code build's global storage (`.../globalStorage/saoudrizwan.claude-dev/
    tasks`) and the Cline CLI's data directory (`$CLINE_DATA_DIR`, else `$CLINE_DIR/data`, else
    `~/.cline/data`, then `tasks`). The directories to scan; some may not exist."""
    env = os.environ if env is None else env
    chosen = env.get("CLINE_DATA_DIR", "").strip()
    data = Path(chosen) if chosen else tool_locations(env, "CLINE_DIR", ".cline", "data")[0]
    return [*(storage / "tasks" for storage in editor_storage(EXTENSION_ID, env)), data / "tasks"]


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a task's conversation file: `tasks/<id>/api_conversation_history.json` (or, in Roo Code's newer
    layout, `tasks/<id>/context/api_conversation_history.json`)."""
    parts = Path(path).parts
    return len(parts) >= 3 and parts[-1] == FILE_NAME and "tasks" in parts[-4:-2]


def task_id(path: str | os.PathLike[str]) -> str:
    """The task id of a conversation file: the name of its task directory."""
    parent = Path(path).parent
    return parent.parent.name if parent.name == "context" else parent.name


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the task in Cline: the CLI's `cline task open ID` for the CLI's tasks, else its history
    panel in the editor."""
    if ".cline" in Path(path).parts or "globalStorage" not in Path(path).parts:
        return f"cline task open {task_id(path)}"
    return f"open task {task_id(path)} from Cline's history in the editor"


# --- detection -----------------------------------------------------------------------------------------------


def _message_like(item: object) -> bool:
    """An Anthropic message param (or Roo Code's standalone reasoning item); not a Chat message with calls."""
    return isinstance(item, Mapping) and "tool_calls" not in item and (item.get("role") in ("user", "assistant") or (
        item.get("type") == "reasoning" and "role" not in item))


def holds_session(value: object) -> str | None:
    """The format of a task's conversation file (`cline` or `roo_code`), or None for another document: a list
    of Anthropic message params some of which carry Cline's `ts`, or Roo Code's `{"version": 2, "messages"}`."""
    if isinstance(value, list) and value and all(_message_like(m) for m in value[:200]) and any(
            isinstance(m.get("ts"), (int, float)) and not isinstance(m.get("ts"), bool) for m in value[:200]):
        return NAME
    if isinstance(value, Mapping) and value.get("version") == 2 and isinstance(value.get("messages"), list) \
            and value["messages"] and "model" not in value and all(
                isinstance(m, Mapping) and (m.get("role") in ("user", "assistant", "tool", "system")
                                            or m.get("type") == "reasoning") for m in value["messages"][:200]):
        return ROO_NAME
    return None


# --- reading -------------------------------------------------------------------------------------------------


def _hidden(items: list[Any]) -> set[int]:
    """The items Cline and Roo Code leave out of what they send: condensed under a summary that is there, or
    hidden by a truncation marker that is there."""
    summaries = {m.get("condenseId") for m in items if isinstance(m, Mapping) and m.get("isSummary")}
    markers = {m.get("truncationId") for m in items if isinstance(m, Mapping) and m.get("isTruncationMarker")}
    summaries.discard(None)
    markers.discard(None)
    return {k for k, m in enumerate(items) if isinstance(m, Mapping) and (
        m.get("condenseParent") in summaries or m.get("truncationParent") in markers)}


def _data_url(url: str, media_type: object) -> ImagePart | None:
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return ImagePart(media_type=head or str(media_type or "image/png"), data=data)
    if url.startswith(("http://", "https://")):
        return ImagePart(url=url)
    if url and isinstance(media_type, str) and media_type:
        return ImagePart(media_type=media_type, data=url)  # bare base64
    return None


def _parts(blocks: list[Any]) -> tuple[Part, ...]:
    """An AI SDK message's text and image parts (strings too) as neutral parts; others stay in the file, unread."""
    parts: list[Part] = []
    for block in blocks:
        if isinstance(block, str):
            parts.append(TextPart(text=block))
        elif not isinstance(block, Mapping):
            continue
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(TextPart(text=block["text"]))
        elif block.get("type") == "image" and isinstance(block.get("image"), str):
            image = _data_url(block["image"], block.get("mediaType") or block.get("mimeType"))
            if image is not None:
                parts.append(image)
    return tuple(parts)


def _output_text(output: object) -> tuple[str, bool]:
    """An AI SDK tool result's `output` as (text, is_error)."""
    if isinstance(output, Mapping):
        kind = output.get("type")
        value = output.get("value")
        error = kind in ("error-text", "error-json")
        if isinstance(value, str):
            return value, error
        if kind == "content" and isinstance(value, list):
            return "".join(str(p.get("text", "")) for p in value if isinstance(p, Mapping)), error
        return json.dumps(value, ensure_ascii=False), error
    if isinstance(output, str):
        return output, output.lstrip().startswith("[ERROR]")
    return json.dumps(output, ensure_ascii=False), False


class TaskHistory(DocumentFormat):
    """A task's conversation file: what the tool sends from it, and how a repair is written back."""

    provider = "anthropic"
    turn_key = "role"
    result_turns = ("user", "tool")
    blocks_key = "content"

    def __init__(self, value: Any, text: str, *, roo: bool) -> None:
        self.roo = roo
        self.name = ROO_NAME if roo else NAME
        self.key = "messages" if roo else None
        found = list_text(text, self.key)
        items: list[Any] = value["messages"] if roo else value
        super().__init__(found, item_records(found, items))
        hidden = _hidden(items)
        what = _ROO_WHAT if roo else _WHAT
        for k, (record, item) in enumerate(zip(self.records, items)):
            at = f"{self.key or ''}[{k}]"
            if not isinstance(item, Mapping):
                raise InputError(f"{at}: expected {what}, got {json.dumps(item)[:40]}", line=record.line)
            if k in hidden or "role" not in item:
                continue  # condensed or truncated away, or a standalone reasoning item: kept as it is
            with errors_at_line(record, what):
                self._read(k, record, item)

    def session(self, warnings: Any = ()) -> Session:
        session = super().session(warnings)
        if self.roo:
            session.provider = None  # Roo Code's own model messages: the neutral rules
        return session

    def _read(self, k: int, record: Record, item: Mapping[str, Any]) -> None:
        role = item.get("role")
        content = item.get("content")
        expect(record, "content", content, (str, list), "a string or a list of content blocks")
        record.blocks = content_blocks(content)
        if not record.blocks and role == "assistant":
            # a reply of nothing (rule 1's placeholder): a stand-in block, so that repair's drop drops it
            record.blocks = [None]
            self.add_reply(ChatMessage(role="assistant", content=""), [(k, 0)])
            return
        if not record.blocks:
            return  # an empty content list: nothing the tool sends from it, kept as it is
        if role in ("user", "assistant") and not self.roo:  # an Anthropic message param: the adapter reads it
            for message, blocks in read_turn(role, record.blocks, self.tool_name):
                add = self.add_reply if role == "assistant" else self.add
                add(message, [(k, b) for b in blocks])
        elif role == "assistant":
            self._read_roo_reply(k, record)
        elif role in ("user", "tool"):
            self._read_roo_turn(k, record)
        elif role == "system":
            self.add(ChatMessage(role="system", content=plainest_content(_parts(record.blocks))),
                     [(k, b) for b in range(len(record.blocks))])
        else:
            raise InputError(f"role: expected 'user' or 'assistant', got {json.dumps(role)[:40]}", line=record.line)

    def _read_roo_reply(self, k: int, record: Record) -> None:
        """A version-2 assistant message: text and `tool-call` parts (reasoning stays in the file, unread)."""
        parts: list[Part] = []
        calls: list[ToolCall] = []
        at: list[BlockAt] = []
        for b, block in enumerate(record.blocks):
            at.append((k, b))
            if isinstance(block, str):
                parts.append(TextPart(text=block))
                continue
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            path = f"content[{b}]"
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(TextPart(text=block["text"]))
            elif kind == "tool-call":
                calls.append(read_call(record, f"{path}.", block, id="toolCallId", name="toolName", arguments="input",
                                       expected="an object (the tool's input)"))
        self.add_reply(ChatMessage(role="assistant", content=plainest_content(tuple(parts)), tool_calls=tuple(calls)),
                       at)

    def _read_roo_turn(self, k: int, record: Record) -> None:
        """A version-2 user or tool message: each `tool-result` a tool message, other parts user messages."""
        group: list[int] = []

        def close_group() -> None:
            if group:
                self.add(ChatMessage(role="user", content=plainest_content(_parts([record.blocks[b] for b in group]))),
                         [(k, b) for b in group])
                group.clear()

        for b, block in enumerate(record.blocks):
            if isinstance(block, Mapping) and block.get("type") == "tool-result":
                close_group()
                call_id = optional_text(record, f"content[{b}].toolCallId", block.get("toolCallId"))
                text, error = _output_text(block.get("output"))
                self.add(ChatMessage(role="tool", tool_call_id=call_id,
                                     tool_name=self.tool_name(call_id) or str(block.get("toolName") or "") or None,
                                     is_error=error, content=text), [(k, b)])
            else:
                group.append(b)
        close_group()

    # --- writing -------------------------------------------------------------------------------------------

    def pieces(self, result: RepairResult) -> list[tuple[int | None, Any]]:
        """As the base's; in version 2, what is not a `tool-result` (a note that replaced an orphan one) does not
        stay in its `tool` message (which holds nothing else) but goes into a user message of its own, in place."""
        pieces = super().pieces(result)
        if not self.roo:
            return pieces
        return [(-1 - k, block) if k is not None and k >= 0 and self.records[k].data.get("role") == "tool"
                and not (isinstance(block, Mapping) and block.get("type") == "tool-result") else (k, block)
                for k, block in pieces]

    def is_call(self, block: Any) -> bool:
        return isinstance(block, Mapping) and block.get("type") in ("tool_use", "tool-call")

    def is_result(self, block: Any) -> bool:
        return isinstance(block, Mapping) and block.get("type") in ("tool_result", "tool-result")

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return {**block, "id": new_id} if block.get("type") == "tool_use" else {**block, "toolCallId": new_id}

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        if block.get("type") == "tool_result":
            return {**block, "tool_use_id": new_id}
        return {**block, "toolCallId": new_id}

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        if not self.roo:
            return user_blocks(note)
        blocks: list[Any] = []
        for part in note.content if isinstance(note.content, tuple) else (TextPart(text=note.content),):
            if isinstance(part, TextPart):
                blocks.append({"type": "text", "text": part.text})
            elif isinstance(part, ImagePart):
                blocks.append({"type": "image", "image": part.url or f"data:{part.media_type};base64,{part.data}"})
        return blocks

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        text = result.content if isinstance(result.content, str) else ""
        if call.get("type") == "tool-call":
            return [{"type": "tool-result", "toolCallId": result.tool_call_id, "toolName": call.get("toolName"),
                     "output": {"type": "error-text", "value": text}}]
        return [text_result_block(result.tool_call_id or "", text, is_error=True)]

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        data = dict(record.data)
        data["content"] = block_content(blocks, data.get("content"))
        if self.roo and data.get("role") in ("user", "tool"):
            results = any(isinstance(b, Mapping) and b.get("type") == "tool-result" for b in blocks)
            data["role"] = "tool" if results else "user"
        return data

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        results = all(isinstance(b, Mapping) and b.get("type") in ("tool-result", "tool_result") for b in blocks)
        data: dict[str, Any] = {"role": "tool" if self.roo and results else "user", "content": blocks}
        ts = near.data.get("ts")
        if isinstance(ts, (int, float)) and not isinstance(ts, bool):
            data["ts"] = ts + serial if results else ts  # an answer after its call; a note where its result was
        return data


def read_document(value: Any, text: str, fmt: str = NAME) -> Session:
    """A Session from a task's conversation file of format `fmt` (`value`, its parsed JSON, and `text`, its
    content)."""
    if fmt == ROO_NAME:
        if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
            raise InputError("expected Roo Code's message history: {\"version\": 2, \"messages\": [...]}")
        return TaskHistory(value, text, roo=True).session()
    if not isinstance(value, list):
        raise InputError("expected a Cline task's conversation: a JSON list of messages")
    return TaskHistory(value, text, roo=False).session()


def read(path: str | os.PathLike[str]) -> Session:
    """A Session from a task's conversation file on disk, read as the format it holds."""
    value, text = read_json(os.fspath(path))
    return read_document(value, text, holds_session(value) or NAME)


def holds_task(value: object) -> bool:
    """True for a JSON document of Cline's format (Roo Code's version 2 is `roo_code`'s)."""
    return holds_session(value) == NAME


FORMAT = FileFormat(NAME, "Cline (and older Roo Code) tasks (.../tasks/<id>/api_conversation_history.json)",
                    order=90, read_document=read_document, holds_document=holds_task)
"""The format table's entry."""
