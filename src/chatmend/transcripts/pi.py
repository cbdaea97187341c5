"""pi sessions (`@earendil-works/pi-coding-agent`, formerly `@mariozechner/pi-coding-agent`) and the sessions of
OpenClaw before its SQLite store, which runs pi's session manager: `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`
and `~/.openclaw/agents/<agent>/sessions/<id>.jsonl`.

A header line (`type: "session"`, `version`, `id`, `cwd`), then one entry a line, each with an `id` and the
`parentId` of the entry it follows: a tree. pi resumes from the leaf, the file's last entry, and walks `parentId`
back to the root; from the latest `compaction` on that path it sends its summary, the entries from its
`firstKeptEntryId`, then what follows it. A `message` entry holds a pi-ai message: `user`, `assistant` (content of
`text`, `thinking` and `toolCall` blocks; an assistant message that ended in `error` or `aborted` is not sent),
`toolResult` (`toolCallId`, `toolName`, `isError`), and pi's own `bashExecution`, `custom` and `system` messages.
`custom_message` and `branch_summary` entries are sent as user text; a `context_edit` replaces (or removes) the
content of the entry it targets. Everything else (model and thinking-level changes, labels, abandoned branches,
what a compaction left behind) is kept unread.

pi answers a call left without a result itself when it sends ("No result provided", pi-ai's
`transformMessages`), but not in the file, and it sends a result whose call is gone, which the provider refuses.
A repair writes each changed entry where it stands, with its own id and parent; a synthetic result is a
`toolResult` message entry (`isError: true`) after its call's other results, and the entry that followed takes
it as its parent, so the path pi walks passes it. Every other line is kept byte for byte.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from chatmend import ChatMessage, ImagePart, RepairResult, TextPart, ThinkingPart
from chatmend.files.io import InputError, first_line
from chatmend.files.session import Session
from chatmend.messages import Part, plainest_content
from chatmend.transcripts._records import (
    Record,
    TranscriptFormat,
    errors_at_line,
    expect,
    fresh_id,
    joined_text,
    optional_text,
    parse_records,
    read_call,
    relink_chain,
)
from chatmend.transcripts.stores import FileFormat, home

__all__ = [
    "FORMAT", "NAME", "OPENCLAW", "TOOL", "default_locations", "holds_records", "is_record", "is_session_file",
    "openclaw_locations", "read", "resume_command", "session_id",
]

NAME = "pi"
"""The format's name (`--from pi`)."""
TOOL = "pi"
"""The tool's name, as a person knows it."""
OPENCLAW = "OpenClaw"
"""The other tool that writes this format (its sessions before the SQLite store)."""
_WHAT = "one pi session entry a line (a session header, then entries with an id and a parentId)"

# pi's wording for the text it sends in place of its own entries (pi-coding-agent's core/messages.ts)
_COMPACTION_PREFIX = ("The conversation history before this point was compacted into the following summary:\n\n"
                      "<summary>\n")
_COMPACTION_SUFFIX = "\n</summary>"
_BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
_BRANCH_SUFFIX = "</summary>"
_NOT_SENT = ("error", "aborted")
"""The stop reasons of an assistant message pi-ai's `transformMessages` leaves out of what it sends."""
_PROVIDERS = {
    "anthropic-messages": "anthropic", "bedrock-converse-stream": "bedrock", "openai-completions": "openai_chat",
    "openai-responses": "openai_responses", "azure-openai-responses": "openai_responses",
    "openai-codex-responses": "openai_responses", "google-generative-ai": "gemini", "google-vertex": "gemini",
    "google-gemini-cli": "gemini", "mistral-conversations": "mistral",
}
"""A pi-ai `api` name to the provider whose rules `check` applies."""


# --- what a doctor needs -------------------------------------------------------------------------------------


def _expand(path: str, env: Mapping[str, str]) -> Path:
    """A path as pi and OpenClaw expand it: a leading `~` is the home directory."""
    if path == "~" or path.startswith("~/"):
        return Path(home(env)) / path[2:]
    return Path(path)


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where pi keeps its sessions: `$PI_CODING_AGENT_SESSION_DIR`, else `$PI_CODING_AGENT_DIR/sessions`, else
    `~/.pi/agent/sessions` (pi-coding-agent's config.ts and main.ts)."""
    env = os.environ if env is None else env
    sessions = env.get("PI_CODING_AGENT_SESSION_DIR", "").strip()
    if sessions:
        return [_expand(sessions, env)]
    agent = env.get("PI_CODING_AGENT_DIR", "").strip()
    return [(_expand(agent, env) if agent else Path(home(env)) / ".pi" / "agent") / "sessions"]


def openclaw_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where OpenClaw kept its sessions as files: `$OPENCLAW_STATE_DIR`, else `$OPENCLAW_HOME/.openclaw`, else
    `~/.openclaw`, then `agents/<agent>/sessions`. One folder a location (the caller walks it)."""
    env = os.environ if env is None else env
    state = env.get("OPENCLAW_STATE_DIR", "").strip()
    openclaw_home = env.get("OPENCLAW_HOME", "").strip()
    root = _expand(state, env) if state else (
        _expand(openclaw_home, env) if openclaw_home else Path(home(env))) / ".openclaw"
    agents = root / "agents"
    try:
        names = sorted(p.name for p in agents.iterdir() if p.is_dir())
    except OSError:
        return []
    return [agents / name / "sessions" for name in names]


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a session file: a `.jsonl` whose first line is a pi session header (as pi lists them)."""
    file = Path(path)
    if file.suffix != ".jsonl":
        return False
    head = first_line(file, 4096)
    if head is None:
        return False
    return head.startswith(b"{") and b'"type":"session"' in head.replace(b" ", b"")


def session_id(path: str | os.PathLike[str]) -> str:
    """The session's id: pi names its files `<time>_<id>.jsonl`, OpenClaw `<id>.jsonl`."""
    stem = Path(path).stem
    return stem.rsplit("_", 1)[-1]


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume the session: pi opens a session by its file (`pi --session PATH`); an OpenClaw session is
    resumed by its id."""
    file = Path(path)
    if ".openclaw" in file.parts or "agents" in file.parts[-4:-2]:
        return f"openclaw agent --agent {file.parent.parent.name} --session-id {session_id(file)}"
    return f"pi --session {file}"


# --- detection -----------------------------------------------------------------------------------------------


def is_record(value: Mapping[str, Any]) -> bool:
    """True for a pi session header (`type: "session"` with a `version` and an `id`) or a pi message entry
    (`type: "message"` with an `id`, a `parentId` and a `message`)."""
    kind = value.get("type")
    if kind == "session":
        return isinstance(value.get("id"), str) and "cwd" in value
    return kind == "message" and "parentId" in value and isinstance(value.get("message"), Mapping)


# --- reading -------------------------------------------------------------------------------------------------


def _parts(record: Record, path: str, content: object, *, assistant: bool) -> list[Part]:
    """pi-ai content (a string, or text / image / thinking blocks) as neutral parts; tool calls are read apart."""
    if content is None:
        return []
    if isinstance(content, str):
        return [TextPart(text=content)]
    expect(record, path, content, (list,), "a string or a list of content blocks")
    assert isinstance(content, list)
    parts: list[Part] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(TextPart(text=block["text"]))
        elif kind == "image" and isinstance(block.get("data"), str):
            parts.append(ImagePart(media_type=str(block.get("mimeType") or "image/png"), data=block["data"]))
        elif kind == "thinking" and assistant:
            signature = block.get("thinkingSignature")
            parts.append(ThinkingPart(text=str(block.get("thinking") or ""), redacted=bool(block.get("redacted")),
                                      signature=signature if isinstance(signature, str) else None))
    return parts


def _bash_text(message: Mapping[str, Any]) -> str:
    """A `bashExecution` message as the user text pi sends for it (`bashExecutionToText`)."""
    text = f"Ran `{message.get('command')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message.get('fullOutputPath')}]"
    return text


class Pi(TranscriptFormat):
    """A pi session file: the messages pi sends when it resumes, and how a repair is written back."""

    name = NAME
    provider = "anthropic"

    def __init__(self, records: list[Record]) -> None:
        super().__init__(records)
        header = records[0].data
        if header.get("type") != "session" or not isinstance(header.get("id"), str):
            raise InputError("the first line is not a pi session header ({\"type\":\"session\",\"id\":...}): pi "
                             "reads such a file as no session", line=records[0].line)
        version = header.get("version")
        self.version: int = version if isinstance(version, int) else 1
        self.ids: set[str] = {r.data["id"] for r in records if isinstance(r.data.get("id"), str)}
        self.path = self._path()
        self.on_path = {id(records[k]) for k in self.path}
        self.edited: set[int] = set()
        """Records whose content a `context_edit` replaced: read as edited, never written back."""
        self.compaction: int | None = None
        """The record of the compaction whose summary pi sends first (it stays where it stands in the file)."""
        self._read_context()

    def _path(self) -> list[int]:
        """The records pi walks: from the leaf (the last entry) by `parentId` to the root, in file order."""
        entries = [k for k, r in enumerate(self.records) if k > 0 and r.data and r.data.get("type") != "session"]
        if not entries:
            return []
        if self.version < 2:
            return entries  # a version-1 session is a list: pi migrates it to a chain in file order
        by_id = {self.records[k].data.get("id"): k for k in entries}
        path: list[int] = []
        seen: set[int] = set()
        k: int | None = entries[-1]
        while k is not None:
            if k in seen:
                raise InputError("the parentId links form a loop: pi cannot resume this session",
                                 line=self.records[k].line)
            seen.add(k)
            path.append(k)
            parent = self.records[k].data.get("parentId")
            k = by_id.get(parent) if isinstance(parent, str) else None
        return path[::-1]

    def _read_context(self) -> None:
        """The entries pi sends, as its `buildSessionContext` picks them (the latest compaction first)."""
        path = self.path
        compactions = [i for i, k in enumerate(path) if self.records[k].data.get("type") == "compaction"]
        if compactions:
            at = compactions[-1]
            first = self.records[path[at]].data.get("firstKeptEntryId")
            kept = [i for i, k in enumerate(path[:at]) if self.records[k].data.get("id") == first]
            before = path[kept[0]:at] if kept else []
            context = [path[at]] + [k for k in before if not self._is_system(k)] + path[at + 1:]
        else:
            context = path
        edits: dict[str, Mapping[str, Any]] = {}
        for k in context:
            data = self.records[k].data
            if data.get("type") == "context_edit" and isinstance(data.get("targetId"), str):
                edits[data["targetId"]] = data
        for n, k in enumerate(context):
            record = self.records[k]
            with errors_at_line(record, _WHAT):
                uid = record.data.get("id")
                self._read(k, record, edits.get(uid) if isinstance(uid, str) else None, first=n == 0)
        self._provider()

    def _is_system(self, k: int) -> bool:
        data = self.records[k].data
        message = data.get("message")
        return data.get("type") == "message" and isinstance(message, Mapping) and message.get("role") == "system"

    def _provider(self) -> None:
        """The provider and model of the path's last assistant message or model change, as pi resumes them."""
        for k in reversed(self.path):
            data = self.records[k].data
            message = data.get("message")
            if data.get("type") == "message" and isinstance(message, Mapping) and message.get("role") == "assistant":
                api = message.get("api")
                if isinstance(api, str) and api in _PROVIDERS:
                    self.provider = _PROVIDERS[api]
                if isinstance(message.get("model"), str):
                    self.model = message["model"]
                return
            if data.get("type") == "model_change" and isinstance(data.get("modelId"), str):
                self.model = data["modelId"]
                return

    def _read(self, k: int, record: Record, edit: Mapping[str, Any] | None, *, first: bool) -> None:
        data = record.data
        kind = data.get("type")
        if edit is not None:
            replacement = edit.get("replacement")
            if replacement is None:
                return  # removed from what pi sends by a context edit
            self.edited.add(k)
        blocks_at = [(k, 0)]
        if kind == "compaction":
            if not first:
                return  # an older compaction inside the kept range: pi sends only the latest one's summary
            self.compaction = k
            system = data.get("systemMessage")
            if isinstance(system, Mapping):
                record.blocks = [("message", None), ("message", None)]
                self.add(ChatMessage(role="system", content=plainest_content(
                    _parts(record, "systemMessage.content", system.get("content"), assistant=False))), blocks_at)
                blocks_at = [(k, 1)]
            else:
                record.blocks = [("message", None)]
            summary = optional_text(record, "summary", data.get("summary"))
            self.add(ChatMessage(role="user", content=_COMPACTION_PREFIX + summary + _COMPACTION_SUFFIX), blocks_at)
        elif kind == "branch_summary" and data.get("summary"):
            record.blocks = [("message", None)]
            summary = optional_text(record, "summary", data.get("summary"))
            self.add(ChatMessage(role="user", content=_BRANCH_PREFIX + summary + _BRANCH_SUFFIX), blocks_at)
        elif kind == "custom_message":
            record.blocks = [("message", None)]
            self.add(ChatMessage(role="user", content=plainest_content(
                _parts(record, "content", data.get("content"), assistant=False))), blocks_at)
        elif kind == "message":
            message = data.get("message")
            expect(record, "message", message, (dict,), "a pi-ai message (an object with a role)")
            assert isinstance(message, dict)
            if edit is not None:
                replacement = edit["replacement"]
                content = replacement.get("content") if isinstance(replacement, Mapping) else None
                if isinstance(content, str) and message.get("role") in ("assistant", "toolResult"):
                    content = [{"type": "text", "text": content}]
                message = {**message, "content": content}
            self._read_message(k, record, message)

    def _read_message(self, k: int, record: Record, message: Mapping[str, Any]) -> None:
        role = message.get("role")
        content = message.get("content")
        if role == "assistant":
            if message.get("stopReason") in _NOT_SENT:
                return  # pi-ai leaves an errored or aborted reply out of what it sends; kept unread
            items = [] if content is None else content
            expect(record, "message.content", items, (list,), "a list of content blocks")
            record.blocks = [("content", b) for b in items] or [("empty", None)]
            calls = []
            for n, block in enumerate(items):
                if isinstance(block, Mapping) and block.get("type") == "toolCall":
                    calls.append(read_call(record, f"message.content[{n}].", block, id="id", name="name",
                                           arguments="arguments", expected="an object (the call's arguments)"))
            parts = _parts(record, "message.content", items, assistant=True)
            self.add_reply(ChatMessage(role="assistant", content=plainest_content(parts), tool_calls=tuple(calls)),
                           [(k, b) for b in range(len(record.blocks))])
        elif role == "toolResult":
            record.blocks = [("result", message)]
            call_id = optional_text(record, "message.toolCallId", message.get("toolCallId"))
            name = self.tool_name(call_id) or optional_text(record, "message.toolName", message.get("toolName"))
            self.add(ChatMessage(role="tool", tool_call_id=call_id, tool_name=name or None,
                                 is_error=message.get("isError") is True,
                                 content=plainest_content(_parts(record, "message.content", content, assistant=False))),
                     [(k, 0)])
        elif role in ("user", "custom", "system"):
            record.blocks = [("message", None)]
            self.add(ChatMessage(role="system" if role == "system" else "user", content=plainest_content(
                _parts(record, "message.content", content, assistant=False))), [(k, 0)])
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                return
            record.blocks = [("message", None)]
            self.add(ChatMessage(role="user", content=_bash_text(message)), [(k, 0)])
        # any other role pi's convertToLlm leaves out: kept unread

    # --- writing -------------------------------------------------------------------------------------------

    def is_call(self, block: Any) -> bool:
        return bool(block[0] == "content" and isinstance(block[1], Mapping) and block[1].get("type") == "toolCall")

    def patch_call_id(self, block: Any, new_id: str) -> Any:
        return ("content", {**block[1], "id": new_id})

    def patch_result_id(self, block: Any, new_id: str) -> Any:
        return ("result", {**block[1], "toolCallId": new_id})

    def note_blocks(self, note: ChatMessage, orphan: Any) -> list[Any]:
        message: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": joined_text(note.content)}]}
        if isinstance(orphan[1], Mapping) and "timestamp" in orphan[1]:
            message["timestamp"] = orphan[1]["timestamp"]
        return [("note", message)]

    def result_blocks(self, result: ChatMessage, call: Any) -> list[Any]:
        return [("result", {"role": "toolResult", "toolCallId": result.tool_call_id,
                            "toolName": call[1].get("name") or result.tool_name,
                            "content": [{"type": "text", "text": joined_text(result.content)}], "isError": True})]

    def pieces(self, result: RepairResult) -> list[tuple[int | None, Any]]:
        """The output's blocks in file order: the compaction pi reads first stays after the entries it keeps."""
        pieces = super().pieces(result)
        if self.compaction is None:
            return pieces
        own = [p for p in pieces if p[0] == self.compaction]
        rest = [p for p in pieces if p[0] != self.compaction]

        def source(k: int | None) -> int:
            return -1 if k is None else (k if k >= 0 else -1 - k)

        at = next((i for i, (k, _) in enumerate(rest) if source(k) > self.compaction), len(rest))
        return rest[:at] + own + rest[at:]

    def render(self, record: Record, blocks: list[Any], copy: int) -> dict[str, Any]:
        k = self.records.index(record)
        if k in self.edited:
            raise InputError("repair would change an entry a context_edit entry replaces in what pi sends; not "
                             "written back (use --to chatmend or a provider)", line=record.line)
        data = dict(record.whole())
        if copy and isinstance(data.get("id"), str):
            data["id"] = fresh_id(f"{data['id']}:{copy}", self.ids, _entry_id)
        kind = blocks[0][0]
        if kind in ("note", "result"):
            data["message"] = blocks[0][1]
        elif kind in ("content", "empty"):
            data["message"] = {**data["message"], "content": [b[1] for b in blocks if b[0] == "content"]}
        return data

    def new_record(self, near: Record, blocks: list[Any], serial: int) -> dict[str, Any]:
        call_message = near.data.get("message")
        stamp = call_message.get("timestamp") if isinstance(call_message, Mapping) else None
        message = dict(blocks[0][1])
        if isinstance(stamp, (int, float)):
            message["timestamp"] = stamp
        data: dict[str, Any] = {"type": "message"}
        if self.version >= 2:
            data["id"] = fresh_id(f"{near.data.get('id')}:{message.get('toolCallId')}:{serial}", self.ids,
                                  _entry_id)
            data["parentId"] = near.data.get("id")
        if "timestamp" in near.data:
            data["timestamp"] = near.data["timestamp"]
        data["message"] = message
        return data

    def relink(self, out: list[tuple[Record | None, dict[str, Any] | None]]) -> None:
        """Make the path pi walks pass every entry of it that is written, and every new one, in file order
        (`relink_chain`); entries off the path (abandoned branches) keep their parents."""
        if not self.as_read(out) and self.version >= 2:
            relink_chain(out, self.on_path, "id", "parentId")


def _entry_id(seed: str) -> str:
    """An entry id in pi's shape (8 hex characters) made from `seed`."""
    return hashlib.sha256(seed.encode()).hexdigest()[:8]


def read(lines: Iterable[str]) -> Session:
    """A Session from a pi (or OpenClaw) session file (a torn last line is kept and warned about)."""
    warnings: list[str] = []
    return Pi(parse_records(lines, what=_WHAT, warnings=warnings)).session(warnings)


def holds_records(records: Sequence[Mapping[str, Any]]) -> bool:
    """True for a pi session file's first records: a pi file begins with its header, and more pi records follow."""
    return is_record(records[0]) and any(is_record(r) for r in records[1:])


FORMAT = FileFormat(NAME, "pi and OpenClaw sessions (~/.pi/agent/sessions/*/*.jsonl, "
                    "~/.openclaw/agents/*/sessions/*.jsonl)", order=50, read_lines=read, holds_records=holds_records)
"""The format table's entry."""
