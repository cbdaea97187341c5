"""Reading: Responses `input` items and replies back to neutral messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chatmend._json import brief
from chatmend.exceptions import ReadError, model_rejections_at
from chatmend.messages import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall
from chatmend.providers.base import parse_data_url
from chatmend.providers.openai_responses.wire import ERROR_MARK, NAME, PHASES, ROLES, Json


def read_error(message: str, path: str) -> ReadError:
    """A ReadError located in the body read."""
    return ReadError(message, provider=NAME, path=path)


def _read_part(part: object, path: str) -> TextPart | ImagePart | None:
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
        return TextPart(text=refusal) if isinstance(refusal, str) else None
    if kind == "input_image":
        url = part.get("image_url")
        if url is None:
            raise read_error("only images given by 'image_url' can be read (not by 'file_id')", path)
        if not isinstance(url, str):
            raise read_error(f"'image_url' must be a string, got {type(url).__name__}", f"{path}.image_url")
        with model_rejections_at(f"{path}.image_url"):  # an empty url
            return parse_data_url(url)
    raise read_error(f"unsupported content part type {brief(kind)}", path)


def _read_parts(content: object, path: str) -> list[TextPart | ImagePart]:
    """A content list as neutral parts."""
    if not isinstance(content, list):
        raise read_error(f"expected a string or a list of parts, got {type(content).__name__}", path)
    out = []
    for j, part in enumerate(content):
        read = _read_part(part, f"{path}[{j}]")
        if read is not None:
            out.append(read)
    return out


def _read_content(content: object, path: str) -> str | tuple[TextPart | ImagePart, ...]:
    """A message's content: a string stays a string, a list becomes parts."""
    if isinstance(content, str):
        return content
    return tuple(_read_parts(content, path))


def _read_output(output: object, path: str) -> tuple[bool, str | tuple[TextPart | ImagePart, ...]]:
    """A function_call_output's `output` as (is_error, content), undoing the error mark of `_output`."""
    if isinstance(output, str):
        if output == ERROR_MARK:
            return True, ""
        if output.startswith(ERROR_MARK + " "):
            return True, output[len(ERROR_MARK) + 1:]
        return False, output
    parts = _read_parts(output, path)
    if parts and isinstance(parts[0], TextPart) and parts[0].text == ERROR_MARK:
        return True, tuple(parts[1:])
    return False, tuple(parts)


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
    name, call_id, arguments = item.get("name"), item.get("call_id"), item.get("arguments", "")
    if not isinstance(name, str) or not name:
        raise read_error("a function_call needs a non-empty 'name'", path)
    if not isinstance(call_id, str):
        raise read_error("a function_call needs a string 'call_id'", path)
    if not isinstance(arguments, (str, dict)):
        raise read_error("a function_call's 'arguments' must be a JSON string", path)
    item_id = item.get("id")
    return ToolCall(id=call_id, name=name, arguments=arguments,
                    provider_data={NAME: {"id": item_id}} if isinstance(item_id, str) else None)


@dataclass
class Turn:
    """The output items of one assistant turn being gathered into one ChatMessage."""

    parts: list[TextPart | ImagePart | ThinkingPart] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    layout: list[Json] = field(default_factory=list)
    all_ids: bool = True
    messages: int = 0
    message_id: str | None = None
    phase: str | None = None

    def joins(self, item: Mapping[str, Any]) -> bool:
        """Whether an item continues this turn: replayed items (with ids) and plain ones are never mixed."""
        has_id = isinstance(item.get("id"), str)
        if self.layout and has_id != self.all_ids:
            return False
        if item.get("type", "message") == "message" and not has_id:
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
            parts: list[TextPart | ImagePart] = [TextPart(text=content)]
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

    def add_call(self, item: Mapping[str, Any], path: str) -> None:
        """Add a function_call item."""
        self.calls.append(_read_call(item, path))
        self.all_ids = self.all_ids and isinstance(item.get("id"), str)
        self.layout.append({"type": "function_call", "id": item.get("id")})

    def message(self) -> ChatMessage:
        """The turn as one assistant message."""
        content: str | tuple[TextPart | ImagePart | ThinkingPart, ...]
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

    def __init__(self) -> None:
        self.messages: list[ChatMessage] = []
        self.turn: Turn | None = None
        self.names: dict[str, str] = {}

    def flush(self) -> None:
        """Close the assistant turn being gathered."""
        if self.turn is not None:
            self.messages.append(self.turn.message())
            self.turn = None

    def current(self, item: Mapping[str, Any]) -> Turn:
        """The assistant turn that `item` continues, a new one when it continues none."""
        if self.turn is not None and not self.turn.joins(item):
            self.flush()
        if self.turn is None:
            self.turn = Turn()
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
                self.flush()
                neutral_role = "user" if role == "user" else "system"
                content = _read_content(item.get("content", ""), f"{path}.content")
                self.messages.append(ChatMessage(role=neutral_role, content=content))
            else:
                raise read_error(f"unknown role {brief(role)}; expected one of {', '.join(ROLES)}", path)
        elif kind == "reasoning":
            self.current(item).add_reasoning(item, path)
        elif kind == "function_call":
            call = _read_call(item, path)
            self.names[call.id] = call.name
            self.current(item).add_call(item, path)
        elif kind == "function_call_output":
            self.flush()
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise read_error("a function_call_output needs a string 'call_id'", path)
            is_error, output = _read_output(item.get("output", ""), f"{path}.output")
            self.messages.append(ChatMessage(role="tool", tool_call_id=call_id, is_error=is_error,
                                             tool_name=self.names.get(call_id), content=output))
        else:
            raise read_error(f"unsupported input item type {brief(kind)}", path)
