"""Reading: Responses `input` items and replies back to neutral messages.

Every item type reads (never "unsupported"): messages as messages, client-side calls (`CALL_OUTPUTS`) as
ToolCalls whose `provider_data` names their item type, their outputs as tool messages, and any other item
(hosted tool calls, MCP items, references, types added later) as a `NativePart` holding the item's exact JSON,
inside the assistant turn where it stood (or, for items the caller writes, `INPUT_SIDE`, a user message).
`Reader.sources` gives, for each message read, the items it came from (what `repair_body` keeps or rewrites,
and what the writer sends back verbatim when the default shape would differ).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from chatmend.exceptions import ReadError, model_rejections_at
from chatmend.messages import (
    ChatMessage,
    FilePart,
    NativePart,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from chatmend.providers.base import arguments_text, parse_data_url, split_data_url
from chatmend.providers.kept import kept_field, native
from chatmend.providers.openai_responses.wire import (
    CALL_META,
    ERROR_MARK,
    INPUT_SIDE,
    NAME,
    PHASES,
    ROLES,
    TOOL_NAMES,
    Json,
    answered_id,
    is_client_call,
    is_client_output,
)
from chatmend.strict_json import brief

Content = Part


def read_error(message: str, path: str) -> ReadError:
    """A ReadError located in the body read."""
    return ReadError(message, provider=NAME, path=path)


def _read_file(part: Mapping[str, Any]) -> FilePart | NativePart:
    """An `input_file` part: by `file_id`, inline `file_data` (a data URL) or `file_url`."""
    filename = part.get("filename") if isinstance(part.get("filename"), str) else None
    file_id, data, url = part.get("file_id"), part.get("file_data"), part.get("file_url")
    if isinstance(file_id, str):
        return FilePart(file_id=file_id, filename=filename, provider=NAME)
    if isinstance(data, str):
        inline = split_data_url(data)
        if inline is not None:
            return FilePart(data=inline[1], media_type=inline[0] or "application/octet-stream", filename=filename)
        return FilePart(data=data, media_type="application/octet-stream", filename=filename)
    if isinstance(url, str):
        return FilePart(url=url, filename=filename)
    return native(NAME, part)


def _read_part(part: object, path: str) -> Content | None:
    """A content part as a neutral part (None for parts that carry nothing readable, like empty refusals)."""
    if not isinstance(part, Mapping):
        raise read_error(f"expected a content part object, got {type(part).__name__}", path)
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text"):
        text = part.get("text")
        if not isinstance(text, str):
            raise read_error("a text part needs a string 'text'", path)
        return TextPart(text=text)
    if kind == "refusal":
        refusal = part.get("refusal")
        return TextPart(text=refusal) if isinstance(refusal, str) else native(NAME, part)
    if kind in ("input_image", "computer_screenshot"):
        url = part.get("image_url")
        if url is None:
            return native(NAME, part)  # by file_id: kept as it is
        if not isinstance(url, str):
            raise read_error(f"'image_url' must be a string, got {type(url).__name__}", f"{path}.image_url")
        with model_rejections_at(f"{path}.image_url"):  # an empty url
            return parse_data_url(url)
    if kind == "input_file":
        return _read_file(part)
    if kind == "input_audio":
        audio = part.get("input_audio")
        if isinstance(audio, Mapping) and isinstance(audio.get("data"), str) and isinstance(audio.get("format"), str):
            return FilePart(data=audio["data"], media_type=f"audio/{audio['format']}")
    return native(NAME, part)


def _read_parts(content: object, path: str) -> list[Content]:
    """A content list as neutral parts."""
    if not isinstance(content, list):
        raise read_error(f"expected a string or a list of parts, got {type(content).__name__}", path)
    out = []
    for j, part in enumerate(content):
        read = _read_part(part, f"{path}[{j}]")
        if read is not None:
            out.append(read)
    return out


def read_content(content: object, path: str) -> str | tuple[Content, ...]:
    """A message's content, or a call output's: a string stays a string, a list of parts becomes neutral parts
    (stores hand their Responses content here)."""
    if isinstance(content, str):
        return content
    return tuple(_read_parts(content, path))


def _read_output(output: object, path: str) -> tuple[bool, str | tuple[Content, ...]]:
    """A function_call_output's `output` as (is_error, content), undoing the error mark of `_output`."""
    if isinstance(output, str):
        if output == ERROR_MARK:
            return True, ""
        if output.startswith(ERROR_MARK + " "):
            return True, output[len(ERROR_MARK) + 1:]
        return False, output
    if isinstance(output, Mapping):
        return False, (native(NAME, output),)  # not an output the API takes (older Codex rollouts): kept as it is
    parts = _read_parts(output, path)
    if parts and isinstance(parts[0], TextPart) and parts[0].text == ERROR_MARK:
        return True, tuple(parts[1:])
    return False, tuple(parts)


def _read_shell_output(output: object) -> tuple[bool, str]:
    """A shell_call_output's chunks as text (stdout, then stderr), failed when a chunk did not exit with 0."""
    if not isinstance(output, list):
        return False, ""
    texts: list[str] = []
    failed = False
    for chunk in output:
        if not isinstance(chunk, Mapping):
            continue
        texts.extend(s for s in (chunk.get("stdout"), chunk.get("stderr")) if isinstance(s, str) and s)
        outcome = chunk.get("outcome")
        if isinstance(outcome, Mapping) and (outcome.get("type") != "exit" or outcome.get("exit_code") != 0):
            failed = True
    return failed, "\n".join(texts)


def read_result(item: Mapping[str, Any], kind: str, path: str) -> tuple[bool, str | tuple[Content, ...]]:
    """The (is_error, content) of a client output item of any type."""
    output = item.get("output")
    if kind == "shell_call_output":
        return _read_shell_output(output)
    if kind == "apply_patch_call_output":
        return item.get("status") == "failed", output if isinstance(output, str) else ""
    if kind == "computer_call_output":
        if isinstance(output, Mapping):
            part = _read_part(output, f"{path}.output")
            return False, (part,) if part is not None else ""
        return False, ""
    if kind == "tool_search_output":
        tools = item.get("tools")
        return False, arguments_text({"tools": tools}) if isinstance(tools, list) else ""
    return _read_output(output if output is not None else "", f"{path}.output")


def _read_reasoning(item: Mapping[str, Any], path: str) -> ThinkingPart:
    """A reasoning item as a thinking part that carries what its replay needs."""
    summary = item.get("summary") or []
    if not isinstance(summary, list):
        raise read_error("a reasoning item's 'summary' must be a list", path)
    texts = [s["text"] for s in summary if isinstance(s, Mapping) and isinstance(s.get("text"), str)]
    data = item.get("encrypted_content")
    text = "\n\n".join(texts)
    mine: Json = {"summary": [{"type": "summary_text", "text": t} for t in texts]}
    if isinstance(item.get("id"), str):
        mine = {"id": item["id"], **mine}
    return ThinkingPart(text=text, data=data if isinstance(data, str) else None,
                        redacted=not text and isinstance(data, str), provider=NAME,
                        provider_data={NAME: mine})


def _read_call(item: Mapping[str, Any], path: str) -> ToolCall:
    """A function_call item as a ToolCall, keeping its item id for replay."""
    name, call_id, arguments = item.get("name"), item.get("call_id"), item.get("arguments")
    if arguments is None:
        arguments = ""  # absent, or null (Codex rollouts): no arguments
    if not isinstance(name, str) or not name:
        raise read_error("a function_call needs a non-empty 'name'", path)
    if not isinstance(call_id, str):
        raise read_error("a function_call needs a string 'call_id'", path)
    if not isinstance(arguments, (str, dict)):
        raise read_error("a function_call's 'arguments' must be a JSON string", path)
    item_id = item.get("id")
    call = ToolCall(id=call_id, name=name, arguments=arguments,
                    provider_data={NAME: {"id": item_id}} if isinstance(item_id, str) else None)
    if isinstance(arguments, str) and arguments_text(call.arguments) != arguments:
        # text the writer would not make of the parsed arguments (`{"city": "Rome"}`): kept byte for byte
        call = replace(call, raw_arguments=arguments)
    return call


def _read_other_call(item: Mapping[str, Any], kind: str) -> ToolCall:
    """A client call of another type (custom tool, shell, patch, computer, client tool search) as a ToolCall:
    its payload as arguments, its type (and id, status) in `provider_data` for the writer."""
    name = item.get("name")
    if not isinstance(name, str) or not name:
        name = TOOL_NAMES.get(kind, kind)
    if kind == "custom_tool_call":
        arguments: dict[str, Any] = {"input": item.get("input")}
    elif kind == "tool_search_call" and isinstance(item.get("arguments"), dict):
        arguments = dict(item["arguments"])
    else:
        arguments = {k: v for k, v in item.items() if k not in CALL_META}
    mine: Json = {"type": kind}
    for key in ("id", "status"):
        if isinstance(item.get(key), str):
            mine[key] = item[key]
    return ToolCall(id=item["call_id"], name=name, arguments=arguments, provider_data={NAME: mine})


def call_item_type(call: ToolCall) -> str:
    """The item type a call is written as (`function_call` unless its `provider_data` names another)."""
    kind = kept_field(call.provider_data, NAME, "type")
    return kind if isinstance(kind, str) else "function_call"


@dataclass
class Turn:
    """The output items of one assistant turn being gathered into one ChatMessage."""

    parts: list[Content] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    layout: list[Json] = field(default_factory=list)
    items: list[Any] = field(default_factory=list)
    all_ids: bool = True
    messages: int = 0
    message_id: str | None = None
    phase: str | None = None

    def joins(self, item: Mapping[str, Any]) -> bool:
        """Whether an item continues this turn: replayed items (with ids) and plain ones are never mixed."""
        kind = item.get("type", "message")
        if kind != "message" and kind != "reasoning" and not is_client_call(item, kind):
            return True  # a hosted tool's item stays in the turn where it stood
        has_id = isinstance(item.get("id"), str)
        if self.layout and has_id != self.all_ids and any(e["type"] != "native" for e in self.layout):
            return False
        if kind == "message" and not has_id:
            # Plain text after calls, or a second plain message, starts a new assistant message; replayed
            # items (all with ids) stay one turn in any order: the writer replays a recorded layout as it was.
            return not self.calls and not self.messages
        return True

    def add_message(self, item: Mapping[str, Any], path: str) -> None:
        """Add an assistant message item."""
        content = item.get("content", "")
        item_id = item.get("id") if isinstance(item.get("id"), str) else None
        phase = item.get("phase") if item.get("phase") in PHASES else None
        self.messages += 1
        if isinstance(content, str):
            parts: list[Content] = [TextPart(text=content)]
        else:
            parts = _read_parts(content, f"{path}.content")
        self.parts.extend(parts)
        if item_id is None:
            self.all_ids = False
        if self.message_id is None and item_id is not None:
            self.message_id = item_id
        if self.phase is None:
            self.phase = phase
        entry: Json = {"type": "message", "id": item_id, "parts": len(parts)}
        if phase is not None:
            entry["phase"] = phase
        self.layout.append(entry)

    def add_reasoning(self, item: Mapping[str, Any], path: str) -> None:
        """Add a reasoning item."""
        self.parts.append(_read_reasoning(item, path))
        self.all_ids = self.all_ids and isinstance(item.get("id"), str)
        self.layout.append({"type": "reasoning", "id": item.get("id")})

    def add_call(self, item: Mapping[str, Any], path: str, kind: str) -> ToolCall:
        """Add a client call item (a function_call or another type)."""
        call = _read_call(item, path) if kind == "function_call" else _read_other_call(item, kind)
        self.calls.append(call)
        self.all_ids = self.all_ids and isinstance(item.get("id"), str)
        self.layout.append({"type": "function_call", "id": item.get("id")})
        return call

    def add_native(self, item: Mapping[str, Any]) -> None:
        """Add an item the neutral model does not name (a hosted tool's call, an MCP listing, ...), in place."""
        self.parts.append(native(NAME, item))
        self.layout.append({"type": "native", "id": item.get("id")})

    def message(self) -> ChatMessage:
        """The turn as one assistant message."""
        content: str | tuple[Content, ...]
        has_thinking = any(isinstance(p, ThinkingPart) for p in self.parts)
        if len(self.parts) == 1 and isinstance(self.parts[0], TextPart):
            content = self.parts[0].text  # one plain text reads back as a string
        else:
            content = tuple(self.parts) if self.parts else ""
        mine: Json = {}
        if self.message_id is not None:
            mine["id"] = self.message_id
        if self.phase is not None:
            mine["phase"] = self.phase
        if self.all_ids and has_thinking:
            mine["items"] = self.layout  # the original order, for replay
        return ChatMessage(role="assistant", content=content, tool_calls=tuple(self.calls),
                           provider_data={NAME: mine} if mine else None)


class Reader:
    """Input items back to neutral messages, gathering each assistant turn's items into one message."""

    def __init__(self, items: list[Any] | tuple[Any, ...] = ()) -> None:
        self.referenced = _answerable_elsewhere(items)
        """With `item_reference`s in the list, an output whose call is not in it answers a stored call: the call ids
        of the list's own calls (None without references)."""
        self.messages: list[ChatMessage] = []
        self.sources: list[list[Any]] = []
        """The input items each message was read from (one list per message, in order)."""
        self.turn: Turn | None = None
        self.names: dict[str, str] = {}
        self.kinds: dict[str, str] = {}
        """The item type of each client call read, by call_id (what its output must be)."""

    def flush(self) -> None:
        """Close the assistant turn being gathered."""
        if self.turn is not None:
            self.messages.append(self.turn.message())
            self.sources.append(self.turn.items)
            self.turn = None

    def add(self, message: ChatMessage, item: Any) -> None:
        """A message read from one item."""
        self.flush()
        self.messages.append(message)
        self.sources.append([item])

    def current(self, item: Mapping[str, Any]) -> Turn:
        """The assistant turn that `item` continues, a new one when it continues none."""
        if self.turn is not None and not self.turn.joins(item):
            self.flush()
        if self.turn is None:
            self.turn = Turn()
        self.turn.items.append(item)
        return self.turn

    def read(self, item: object, path: str) -> None:
        """Read one input item."""
        if not isinstance(item, Mapping):
            raise read_error(f"expected an input item object, got {type(item).__name__}", path)
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role == "assistant":
                self.current(item).add_message(item, path)
            elif role in ("user", "system", "developer"):
                neutral_role: Role = "user" if role == "user" else "system"
                content = read_content(item.get("content", ""), f"{path}.content")
                self.add(ChatMessage(role=neutral_role, content=content), item)
            else:
                raise read_error(f"unknown role {brief(role)}; expected one of {', '.join(ROLES)}", path)
        elif kind == "reasoning":
            self.current(item).add_reasoning(item, path)
        elif kind == "function_call" or is_client_call(item, kind):
            call = self.current(item).add_call(item, path, kind)
            self.names[call.id] = call.name
            if kind != "function_call":
                self.kinds[call.id] = kind
        elif kind == "function_call_output" or is_client_output(item, kind):
            call_id = answered_id(item)
            if not isinstance(call_id, str):
                raise read_error(f"a {kind} needs a string 'call_id'", path)
            if self.referenced is not None and call_id not in self.referenced:
                self.add(ChatMessage(role="user", content=(native(NAME, item),)), item)  # answers a referenced call
                return
            is_error, output = read_result(item, kind, path)
            self.add(ChatMessage(role="tool", tool_call_id=call_id, is_error=is_error,
                                 tool_name=self.names.get(call_id), content=output), item)
        elif not isinstance(kind, str):
            raise read_error(f"an item's 'type' must be a string, got {type(kind).__name__}", f"{path}.type")
        elif kind in INPUT_SIDE:
            self.add(ChatMessage(role="user", content=(native(NAME, item),)), item)
        else:
            self.current(item).add_native(item)


def _answerable_elsewhere(items: list[Any] | tuple[Any, ...]) -> set[str] | None:
    """The call ids of the list's calls when it references stored items (`item_reference`), else None."""
    if not any(isinstance(item, Mapping) and item.get("type") == "item_reference" for item in items):
        return None
    return {item["call_id"] for item in items
            if isinstance(item, Mapping) and is_client_call(item, item.get("type", "message"))}
