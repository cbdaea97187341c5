"""OpenAI Responses API (`POST /v1/responses`): input items, function-call pairs and reasoning replay.

Rule ids OR1-OR9 are those of section 2 of the provider-rules notes. Three more are this module's own, for
errors the notes do not number: OR0 (the body's shape and types, in OpenAI's generic `invalid_type`,
`invalid_value` and `missing_required_parameter` wording), OR10 (one `call_id` on two calls or two outputs)
and OR11 (a user, system or developer message between a `function_call` and its output; INF).

Wire shape: the leading system message becomes `instructions` (later ones stay system items in place);
each step is the assistant's text, its `function_call` items (`call_id` at most 64 characters, `arguments`
a JSON string), their `function_call_output` items in call order (images stay inside the output, which
says a failure with `ERROR_MARK`), then whatever the user typed meanwhile.

Reasoning replay: a reasoning item goes back only with its encrypted content and together with the item
ids it was produced with, in the original order; an assistant message that cannot be replayed that way is
sent without reasoning items and without any item id (OR7/OR8: never one without the other). What replay
needs is kept in the neutral model's `provider_data` under "openai_responses":

- `ThinkingPart(provider="openai_responses", data=<encrypted_content>, text=<summary texts joined>,
  provider_data={"openai_responses": {"id": "rs_...", "summary": [...]}})`
- `ToolCall.provider_data = {"openai_responses": {"id": "fc_..."}}`
- `ChatMessage.provider_data = {"openai_responses": {"id": "msg_...", "phase": ..., "items": [...]}}`, where
  the optional `items` records the original output order: `{"type": "reasoning" | "message" |
  "function_call", "id": ..., "parts": n, "phase": ...}` (`parts` and `phase` for messages only).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from typing_extensions import assert_never

from chatmend.exceptions import Problem, ReadError
from chatmend.ids import digest, wire_ids
from chatmend.incremental import Repairer
from chatmend.messages import ChatMessage, ImagePart, Part, TextPart, ThinkingPart, ToolCall
from chatmend.providers.base import (
    HistoryInput,
    Provider,
    ToolsInput,
    arguments_text,
    coerce_tools,
    image_data_url,
    parse_data_url,
    repaired,
    to_plain,
)
from chatmend.repair import IsReadOnly, RepairResult, young_collections_only

__all__ = [
    "ERROR_MARK",
    "PROVIDER",
    "OpenAIResponses",
    "check",
    "from_request",
    "from_response",
    "send",
    "send_async",
    "to_request",
]

NAME = "openai_responses"
CALL_ID_MAX = 64
"""OR3: the longest `call_id` the API accepts."""
ERROR_MARK = "[error]"
"""Opens the output text of a failed tool: the Responses API has no error flag on outputs."""
_KEEP = CALL_ID_MAX - 11  # room for "_" and a 10-character digest
_ITEM_ID = re.compile(r"[A-Za-z0-9_-]+")
_ID_PREFIX = {"function_call": "fc", "reasoning": "rs", "message": "msg"}
_PHASES = ("commentary", "final_answer")
_ROLES = ("user", "assistant", "system", "developer")
_OUTPUT_PART_TYPES = ("input_text", "input_image", "input_file")
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5(?!-chat)|codex)")
_Json = dict[str, Any]
_NOT_PERSISTED = ("Item with id '{}' not found. Items are not persisted when `store` is set to false. "
                  "Try again with `store` set to true, or remove this item from your input.")
_DUPLICATE = ("Duplicate {} for call_id '{}'. "
              "Each function_call must have exactly one matching function_call_output")


def _call_id(tool_id: str, attempt: int) -> str:
    """A `call_id` proposal for `wire_ids`: the id itself when it fits (OR3), else a stem and a stable digest."""
    if attempt == 0 and 0 < len(tool_id) <= CALL_ID_MAX:
        return tool_id
    salt = tool_id if attempt == 0 else f"{tool_id}#{attempt}"
    return f"{tool_id[:_KEEP]}_{digest(salt)}"


def _own(provider_data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """This provider's entry of a `provider_data` (empty when there is none)."""
    if not provider_data:
        return {}
    mine = provider_data.get(NAME)
    return mine if isinstance(mine, Mapping) else {}


def _item_id(value: object, kind: str) -> str | None:
    """`value` when it is a valid item id of this kind (OR4: prefix, OR5: charset), else None."""
    if isinstance(value, str) and value.startswith(_ID_PREFIX[kind]) and _ITEM_ID.fullmatch(value):
        return value
    return None


def _image(part: ImagePart) -> _Json:
    """An `input_image` part; `detail` is Required in the SDK type, "auto" is the API's default."""
    return {"type": "input_image", "image_url": image_data_url(part), "detail": "auto"}


def _input_parts(content: Sequence[Part]) -> list[_Json]:
    """Text and image parts as input content; thinking is never sent in an input message."""
    out: list[_Json] = []
    for part in content:
        if isinstance(part, TextPart):
            out.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            out.append(_image(part))
    return out


def _input_message(role: str, content: tuple[Part, ...]) -> _Json:
    """A user or system message item of parts (a string content is the item's `content` as it is)."""
    parts = _input_parts(content)
    return {"role": role, "content": parts if parts else ""}


def _output(message: ChatMessage) -> str | list[_Json]:
    """A function_call_output's `output`: a string, or input parts when there are parts (images stay here)."""
    content = message.content
    if isinstance(content, str):
        if message.is_error:
            return f"{ERROR_MARK} {content}" if content else ERROR_MARK
        return content
    parts = _input_parts(content)
    if message.is_error:
        parts.insert(0, {"type": "input_text", "text": ERROR_MARK})
    return parts if parts else ""


def _summary(part: ThinkingPart) -> list[_Json]:
    """The reasoning summary as received, else one summary_text of the part's text."""
    stored = _own(part.provider_data).get("summary")
    if isinstance(stored, list) and all(
        isinstance(s, Mapping) and isinstance(s.get("text"), str) for s in stored
    ):
        return [{"type": "summary_text", "text": s["text"]} for s in stored]
    return [{"type": "summary_text", "text": part.text}] if part.text else []


@dataclass
class _Split:
    """An assistant message's content sorted by what becomes of it on the wire."""

    texts: list[str] = field(default_factory=list)
    thinking: list[ThinkingPart] = field(default_factory=list)
    images: list[ImagePart] = field(default_factory=list)
    order: list[Part] = field(default_factory=list)

    @classmethod
    def of(cls, content: str | tuple[Part, ...]) -> _Split:
        """Split one content; other providers' thinking is left out (never sent here)."""
        split = cls()
        if isinstance(content, str):
            if content:
                split.texts.append(content)
            return split
        for part in content:
            if isinstance(part, TextPart):
                split.texts.append(part.text)
                split.order.append(part)
            elif isinstance(part, ImagePart):
                split.images.append(part)
            elif isinstance(part, ThinkingPart):
                if part.provider == NAME:
                    split.thinking.append(part)
                    split.order.append(part)
            else:
                assert_never(part)
        return split


# A replay plan: ("reasoning", part, id) / ("message", id, phase, texts) / ("function_call", call, id).
_Step = tuple[Any, ...]


def _default_layout(message: ChatMessage, split: _Split) -> list[_Step] | None:
    """Replay order without a recorded layout: content order (one message item), then the calls."""
    mine = _own(message.provider_data)
    plan: list[_Step] = []
    text_placed = False
    for part in split.order:
        if isinstance(part, ThinkingPart):
            plan.append(("reasoning", part, _item_id(_own(part.provider_data).get("id"), "reasoning")))
        elif not text_placed:
            text_placed = True
            phase = mine.get("phase") if mine.get("phase") in _PHASES else None
            plan.append(("message", _item_id(mine.get("id"), "message"), phase, split.texts))
    if split.texts and not text_placed:
        return None
    for call in message.tool_calls:
        plan.append(("function_call", call, _item_id(_own(call.provider_data).get("id"), "function_call")))
    return plan


def _recorded_layout(message: ChatMessage, split: _Split, items: object) -> list[_Step] | None:
    """Replay order from the recorded `items`, when it still describes this message exactly."""
    if not isinstance(items, list):
        return None
    thinking = iter(split.thinking)
    calls = iter(message.tool_calls)
    texts = iter(split.texts)
    plan: list[_Step] = []
    used_texts = 0
    for entry in items:
        if not isinstance(entry, Mapping):
            return None
        kind = entry.get("type")
        if kind == "reasoning":
            part = next(thinking, None)
            if part is None or _own(part.provider_data).get("id") != entry.get("id"):
                return None
            plan.append(("reasoning", part, _item_id(entry.get("id"), "reasoning")))
        elif kind == "function_call":
            call = next(calls, None)
            if call is None or _own(call.provider_data).get("id") != entry.get("id"):
                return None
            plan.append(("function_call", call, _item_id(entry.get("id"), "function_call")))
        elif kind == "message":
            count = entry.get("parts")
            if not isinstance(count, int) or count < 0 or used_texts + count > len(split.texts):
                return None
            used_texts += count
            phase = entry.get("phase") if entry.get("phase") in _PHASES else None
            plan.append(("message", _item_id(entry.get("id"), "message"), phase,
                         [next(texts) for _ in range(count)]))
        else:
            return None
    if next(thinking, None) is not None or next(calls, None) is not None or used_texts != len(split.texts):
        return None
    return plan


class _Writer:
    """One linear pass from repaired messages to input items, with the request's id state."""

    def __init__(self, final_ids: Sequence[str]) -> None:
        self.next_wire = iter(wire_ids(_call_id, final_ids, CALL_ID_MAX)).__next__
        """The call_id of the next call written (OR3; calls are written in history order)."""
        self.waiting: deque[str] = deque()
        """The call_id of each call written whose output is still to come: the outputs after a message's calls
        answer them in order."""
        self.item_ids: set[str] = set()
        self.items: list[_Json] = []

    def write(self, messages: Iterable[ChatMessage]) -> None:
        """Append the items of every message (one loop with its lookups bound once: this is the hot path)."""
        append = self.items.append
        answered = self.waiting.popleft
        plain_assistant = self.plain_assistant
        for message in messages:
            role = message.role
            if role == "tool":
                content = message.content
                append({
                    "type": "function_call_output",
                    "call_id": answered(),
                    # the common case, a plain text that succeeded, is the output as it is
                    "output": content if isinstance(content, str) and not message.is_error else _output(message),
                })
            elif role == "assistant":
                content = message.content
                if type(content) is str and content and not message.tool_calls and message.provider_data is None:
                    append({"role": "assistant", "content": content})  # a plain reply: `plain_assistant`'s result
                elif isinstance(content, str):  # no thinking, nothing to replay
                    plain_assistant(message, content, ())
                else:
                    self.assistant(message, content)
            elif role == "user" or role == "system":
                content = message.content
                append({"role": role, "content": content} if isinstance(content, str)
                       else _input_message(role, content))
            else:
                assert_never(role)

    def assistant(self, message: ChatMessage, content: tuple[Part, ...]) -> None:
        """The items of an assistant message with parts: replayed with reasoning and ids when possible."""
        split = _Split.of(content)
        plan = self.replay_plan(message, split)
        if plan is None:
            self.plain_assistant(message, "\n".join(split.texts), split.images)
            return
        for step in plan:
            if step[0] == "reasoning":
                part: ThinkingPart = step[1]
                self.items.append({"type": "reasoning", "id": step[2], "summary": _summary(part),
                                   "encrypted_content": part.data})
            elif step[0] == "message":
                item: _Json = {
                    "type": "message", "id": step[1], "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": t, "annotations": []} for t in step[3]],
                }
                if step[2] is not None:
                    item["phase"] = step[2]
                self.items.append(item)
            else:
                call: ToolCall = step[1]
                self.items.append({"type": "function_call", "id": step[2], "call_id": self.call_id(),
                                   "name": call.name, "arguments": arguments_text(call.arguments)})

    def call_id(self) -> str:
        """The call_id of the next call written, remembered for its output."""
        call_id = self.next_wire()
        self.waiting.append(call_id)
        return call_id

    def replay_plan(self, message: ChatMessage, split: _Split) -> list[_Step] | None:
        """The items to replay in original order, or None when reasoning cannot go back with its ids."""
        # OR7/OR8: reasoning and item ids travel together or not at all; only encrypted reasoning replays.
        if not split.thinking or split.images or any(not p.data for p in split.thinking):
            return None
        mine = _own(message.provider_data)
        plan = _recorded_layout(message, split, mine.get("items")) if "items" in mine else None
        if plan is None:
            plan = _default_layout(message, split)
        if plan is None or plan[-1][0] == "reasoning":
            return None  # OR7: a reasoning item needs the item it produced after it
        ids = [step[2] if step[0] != "message" else step[1] for step in plan]
        if any(i is None for i in ids) or len(set(ids)) != len(ids) or not self.item_ids.isdisjoint(ids):
            return None  # OR4/OR5: a missing or malformed id; OR6: an id already sent in this request
        self.item_ids.update(ids)
        return plan

    def plain_assistant(self, message: ChatMessage, text: str, images: Sequence[ImagePart]) -> None:
        """The assistant's text as a plain message, its images in a user message, then its calls (no ids)."""
        items = self.items
        if text:
            item: _Json = {"role": "assistant", "content": text}
            if message.provider_data is not None:
                phase = _own(message.provider_data).get("phase")
                if phase in _PHASES:
                    item["phase"] = phase
            items.append(item)
        if images:
            # Assistant content takes only output_text and refusal parts (OR0): images go to a user message.
            items.append({"role": "user", "content": [_image(p) for p in images]})
        next_wire, wait = self.next_wire, self.waiting.append  # `call_id`, inlined: a reply's calls are the hot path
        append = items.append
        for call in message.tool_calls:
            call_id = next_wire()
            wait(call_id)
            append({"type": "function_call", "call_id": call_id, "name": call.name,
                    "arguments": arguments_text(call.arguments)})


def _instructions(content: str | tuple[Part, ...]) -> str | None:
    """The text of a system message that can become `instructions` (a string), None when it has images."""
    if isinstance(content, str):
        return content
    if any(isinstance(p, ImagePart) for p in content):
        return None
    return "\n".join(p.text for p in content if isinstance(p, TextPart))


def _tool(name: str, description: str, parameters: Mapping[str, Any]) -> _Json:
    """A function tool; `strict` is Required in the SDK type, False keeps any JSON Schema acceptable."""
    return {"type": "function", "name": name, "description": description, "parameters": dict(parameters),
            "strict": False}


# --- reading -----------------------------------------------------------------------------------------


def _read_error(message: str, path: str) -> ReadError:
    """A ReadError located in the body read."""
    return ReadError(message, provider=NAME, path=path)


def _read_part(part: object, path: str) -> TextPart | ImagePart | None:
    """A content part as a neutral part (None for parts that carry nothing readable, like empty refusals)."""
    if not isinstance(part, Mapping):
        raise _read_error(f"expected a content part object, got {type(part).__name__}", path)
    kind = part.get("type")
    if kind in ("input_text", "output_text", "text"):
        text = part.get("text")
        if not isinstance(text, str):
            raise _read_error("a text part needs a string 'text'", path)
        return TextPart(text=text)
    if kind == "refusal":
        refusal = part.get("refusal")
        return TextPart(text=refusal) if isinstance(refusal, str) else None
    if kind == "input_image":
        url = part.get("image_url")
        if not isinstance(url, str):
            raise _read_error("only images given by 'image_url' can be read (not by 'file_id')", path)
        return parse_data_url(url)
    raise _read_error(f"unsupported content part type {kind!r}", path)


def _read_parts(content: object, path: str) -> list[TextPart | ImagePart]:
    """A content list as neutral parts."""
    if not isinstance(content, list):
        raise _read_error(f"expected a string or a list of parts, got {type(content).__name__}", path)
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
        raise _read_error("a reasoning item's 'summary' must be a list", path)
    texts = [s["text"] for s in summary if isinstance(s, Mapping) and isinstance(s.get("text"), str)]
    data = item.get("encrypted_content")
    text = "\n\n".join(texts)
    mine: _Json = {"summary": [{"type": "summary_text", "text": t} for t in texts]}
    if isinstance(item.get("id"), str):
        mine = {"id": item["id"], **mine}
    return ThinkingPart(text=text, data=data if isinstance(data, str) else None,
                        redacted=not text and isinstance(data, str), provider=NAME,
                        provider_data={NAME: mine})


def _read_call(item: Mapping[str, Any], path: str) -> ToolCall:
    """A function_call item as a ToolCall, keeping its item id for replay."""
    name, call_id, arguments = item.get("name"), item.get("call_id"), item.get("arguments", "")
    if not isinstance(name, str) or not name:
        raise _read_error("a function_call needs a non-empty 'name'", path)
    if not isinstance(call_id, str):
        raise _read_error("a function_call needs a string 'call_id'", path)
    if not isinstance(arguments, (str, dict)):
        raise _read_error("a function_call's 'arguments' must be a JSON string", path)
    item_id = item.get("id")
    return ToolCall(id=call_id, name=name, arguments=arguments,
                    provider_data={NAME: {"id": item_id}} if isinstance(item_id, str) else None)


@dataclass
class _Turn:
    """The output items of one assistant turn being gathered into one ChatMessage."""

    parts: list[TextPart | ImagePart | ThinkingPart] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    layout: list[_Json] = field(default_factory=list)
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
        phase = item.get("phase") if item.get("phase") in _PHASES else None
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
        entry: _Json = {"type": "message", "id": item_id, "parts": len(parts)}
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
        mine: _Json = {}
        if self.message_id is not None:
            mine["id"] = self.message_id
        if self.phase is not None:
            mine["phase"] = self.phase
        if self.all_ids and has_thinking:
            mine["items"] = self.layout  # the original order, for replay
        return ChatMessage(role="assistant", content=content, tool_calls=tuple(self.calls),
                           provider_data={NAME: mine} if mine else None)


class _Reader:
    """Input items back to neutral messages, gathering each assistant turn's items into one message."""

    def __init__(self) -> None:
        self.messages: list[ChatMessage] = []
        self.turn: _Turn | None = None
        self.names: dict[str, str] = {}

    def flush(self) -> None:
        """Close the assistant turn being gathered."""
        if self.turn is not None:
            self.messages.append(self.turn.message())
            self.turn = None

    def current(self, item: Mapping[str, Any]) -> _Turn:
        """The assistant turn that `item` continues, a new one when it continues none."""
        if self.turn is not None and not self.turn.joins(item):
            self.flush()
        if self.turn is None:
            self.turn = _Turn()
        return self.turn

    def read(self, item: object, path: str) -> None:
        """Read one input item."""
        if not isinstance(item, Mapping):
            raise _read_error(f"expected an input item object, got {type(item).__name__}", path)
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
                raise _read_error(f"unknown role {role!r}; expected one of {', '.join(_ROLES)}", path)
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
                raise _read_error("a function_call_output needs a string 'call_id'", path)
            is_error, output = _read_output(item.get("output", ""), f"{path}.output")
            self.messages.append(ChatMessage(role="tool", tool_call_id=call_id, is_error=is_error,
                                             tool_name=self.names.get(call_id), content=output))
        else:
            raise _read_error(f"unsupported input item type {kind!r}", path)


# --- checking ----------------------------------------------------------------------------------------


def _json_type(value: object) -> str:
    """A JSON value's type as OpenAI's errors name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


class _Checker:
    """Collects the problems of one body."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        self.body = body
        self.problems: list[Problem] = []

    def add(self, code: str, path: str, message: str) -> None:
        """Record one problem."""
        self.problems.append(Problem(code=code, path=path, message=message, provider=NAME))

    def missing(self, path: str) -> None:
        """A required parameter is absent (OR0)."""
        self.add("OR0", path, f"Missing required parameter: '{path}'.")

    def wrong_type(self, path: str, expected: str, value: object) -> None:
        """A value of the wrong JSON type (OR0)."""
        got = _json_type(value)
        self.add("OR0", path, f"Invalid type for '{path}': expected {expected}, but got {got} instead.")

    def run(self) -> list[Problem]:
        """Every problem of the body."""
        body = self.body
        if "model" not in body:
            self.missing("model")
        instructions = body.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            self.wrong_type("instructions", "a string", instructions)
        self.tools(body.get("tools"))
        items = body.get("input")
        if items is None or isinstance(items, str):
            return self.problems
        if not isinstance(items, list):
            self.wrong_type("input", "one of a string or an array of input items", items)
            return self.problems
        for i, item in enumerate(items):
            self.item(item, f"input[{i}]")
        self.ids(items)
        self.pairs(items)
        self.reasoning(items)
        return self.problems

    def tools(self, tools: object) -> None:
        """Function tools need a name."""
        if tools is None:
            return
        if not isinstance(tools, list):
            self.wrong_type("tools", "an array", tools)
            return
        for k, tool in enumerate(tools):
            if not isinstance(tool, Mapping):
                self.wrong_type(f"tools[{k}]", "an object", tool)
            elif tool.get("type") == "function" and not isinstance(tool.get("name"), str):
                self.missing(f"tools[{k}].name")

    def item(self, item: object, path: str) -> None:
        """The shape of one input item."""
        if not isinstance(item, Mapping):
            self.wrong_type(path, "an input item object", item)
            return
        kind = item.get("type", "message")
        if kind == "message":
            self.message(item, path)
        elif kind == "function_call":
            self.call_id(item, path)
            if not isinstance(item.get("name"), str):
                self.missing(f"{path}.name")
            if "arguments" not in item:
                self.missing(f"{path}.arguments")
            elif not isinstance(item["arguments"], str):
                # OR0: arguments travel as a JSON string, never as an object.
                self.wrong_type(f"{path}.arguments", "a string", item["arguments"])
        elif kind == "function_call_output":
            self.call_id(item, path)
            self.output(item, path)
        elif kind == "reasoning":
            if "id" not in item:
                self.missing(f"{path}.id")
            if not isinstance(item.get("summary"), list):
                self.missing(f"{path}.summary")
            if self.body.get("store") is False and not isinstance(item.get("encrypted_content"), str):
                # OR9: with store:false the server would look the item up by id, and it is not persisted.
                self.add("OR9", path, _NOT_PERSISTED.format(item.get("id")))
        elif kind == "item_reference" and self.body.get("store") is False:
            self.add("OR9", path, _NOT_PERSISTED.format(item.get("id")))
        elif not isinstance(kind, str):
            self.wrong_type(f"{path}.type", "a string", kind)

    def message(self, item: Mapping[str, Any], path: str) -> None:
        """Roles and content part types of a message item."""
        role = item.get("role")
        if role not in _ROLES:
            self.add("OR0", f"{path}.role", f"Invalid value: '{role}'. Supported values are: 'assistant', "
                     "'system', 'developer', and 'user'.")
            return
        if "content" not in item:
            self.missing(f"{path}.content")
            return
        content = item["content"]
        if isinstance(content, str):
            return
        if not isinstance(content, list):
            self.wrong_type(f"{path}.content", "one of a string or an array of content parts", content)
            return
        # OR0: an assistant message takes output_text and refusal parts only (no input_text, no images).
        allowed = ("output_text", "refusal") if role == "assistant" else _OUTPUT_PART_TYPES
        self.parts(content, f"{path}.content", allowed)

    def parts(self, parts: list[Any], path: str, allowed: tuple[str, ...]) -> None:
        """Content parts of the allowed types, with their text or image."""
        supported = _listed(allowed)
        for j, part in enumerate(parts):
            where = f"{path}[{j}]"
            if not isinstance(part, Mapping):
                self.wrong_type(where, "an object", part)
                continue
            kind = part.get("type")
            if kind not in allowed:
                self.add("OR0", f"{where}.type",
                         f"Invalid value: '{kind}'. Supported values are: {supported}.")
            elif kind in ("input_text", "output_text") and not isinstance(part.get("text"), str):
                self.missing(f"{where}.text")
            elif kind == "input_image" and not isinstance(part.get("image_url") or part.get("file_id"), str):
                self.missing(f"{where}.image_url")

    def output(self, item: Mapping[str, Any], path: str) -> None:
        """A function_call_output's `output`: a string or input parts (images allowed here)."""
        if "output" not in item:
            self.missing(f"{path}.output")
            return
        output = item["output"]
        if isinstance(output, list):
            self.parts(output, f"{path}.output", _OUTPUT_PART_TYPES)
        elif not isinstance(output, str):
            self.wrong_type(f"{path}.output", "one of a string or an array of output content parts", output)

    def call_id(self, item: Mapping[str, Any], path: str) -> None:
        """A `call_id` is a non-empty string of at most 64 characters."""
        call_id = item.get("call_id")
        where = f"{path}.call_id"
        if call_id is None:
            self.missing(where)
        elif not isinstance(call_id, str):
            self.wrong_type(where, "a string", call_id)
        elif not call_id:
            self.add("OR0", where, f"Invalid '{where}': empty string. Expected a string with minimum length "
                     "1, but got an empty string instead.")
        elif len(call_id) > CALL_ID_MAX:
            # OR3: call_id at most 64 characters.
            self.add("OR3", where, f"Invalid '{where}': string too long. Expected a string with maximum "
                     f"length {CALL_ID_MAX}, but got a string with length {len(call_id)} instead.")

    def ids(self, items: list[Any]) -> None:
        """Item ids: the type's prefix (OR4), their charset (OR5), no two alike (OR6)."""
        seen: set[str] = set()
        for i, item in enumerate(items):
            if not isinstance(item, Mapping) or "id" not in item:
                continue
            kind, item_id, where = item.get("type", "message"), item["id"], f"input[{i}].id"
            if item_id is None and kind in ("function_call", "function_call_output"):
                continue  # Optional in the SDK type: null is the same as leaving it out
            if not isinstance(item_id, str):
                self.wrong_type(where, "a string", item_id)
                continue
            if not _ITEM_ID.fullmatch(item_id):
                self.add("OR5", where, f"Invalid '{where}': '{item_id}'. Expected an ID that contains "
                         "letters, numbers, underscores, or dashes, but this value contained additional "
                         "characters.")
            elif kind in _ID_PREFIX and not item_id.startswith(_ID_PREFIX[kind]):
                self.add("OR4", where, f"Invalid '{where}': '{item_id}'. Expected an ID that begins with "
                         f"'{_ID_PREFIX[kind]}'.")
            if kind == "item_reference":
                continue
            if item_id in seen:
                self.add("OR6", where, f"Duplicate item found with id {item_id}. Remove duplicate items from "
                         "your input and try again.")
            seen.add(item_id)

    def pairs(self, items: list[Any]) -> None:
        """Calls and outputs pair one to one by call_id (OR1, OR2, OR10), with no message between (OR11)."""
        calls: dict[str, int] = {}
        outputs: set[str] = set()
        chained = self.body.get("previous_response_id") is not None
        last_message = -1
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                continue
            kind, call_id = item.get("type", "message"), item.get("call_id")
            if kind == "message" and item.get("role") != "assistant":
                last_message = i
            if not isinstance(call_id, str) or not call_id:
                continue
            if kind == "function_call":
                if call_id in calls:
                    self.add("OR10", f"input[{i}].call_id", _DUPLICATE.format("function_call", call_id))
                else:
                    calls[call_id] = i
            elif kind == "function_call_output":
                if call_id in outputs:
                    where = f"input[{i}].call_id"
                    self.add("OR10", where, _DUPLICATE.format("function_call_output", call_id))
                    continue
                outputs.add(call_id)
                if call_id not in calls:
                    if not chained:  # OR2: the call may be in the previous response's chain
                        self.add("OR2", f"input[{i}]", "No tool call found for function call output with "
                                 f"call_id {call_id}.")
                elif last_message > calls[call_id]:
                    # OR11 (INF): all calls of a step, then all their outputs, before the next message.
                    self.add("OR11", f"input[{i}]", f"The function_call_output for call_id {call_id} is "
                             f"separated from its function_call by the message at input[{last_message}].")
        answered = {c for c in outputs if c in calls}
        for call_id, i in calls.items():
            if call_id not in answered:
                self.add("OR1", f"input[{i}]", f"No tool output found for function call {call_id}.")

    def reasoning(self, items: list[Any]) -> None:
        """A reasoning item is followed by the item it produced (OR7), which needs it in front (OR8)."""
        following: int | None = None
        problems: list[tuple[int, str]] = []
        for i in range(len(items) - 1, -1, -1):
            item = items[i]
            if not isinstance(item, Mapping):
                following = i
                continue
            if item.get("type") != "reasoning":
                following = i
                continue
            nxt = items[following] if following is not None else None
            if not (isinstance(nxt, Mapping) and _is_output_item(nxt) and isinstance(nxt.get("id"), str)):
                problems.append((i, f"Item '{item.get('id')}' of type 'reasoning' was provided without its "
                                 "required following item."))
        for i, message in reversed(problems):
            self.add("OR7", f"input[{i}]", message)
        if not self.expects_reasoning(items):
            return
        turn_has_reasoning = False
        turn: list[int] = []
        for i, item in enumerate([*items, None]):
            if isinstance(item, Mapping) and _is_output_item(item):
                turn.append(i)
                turn_has_reasoning = turn_has_reasoning or item.get("type") == "reasoning"
                continue
            if not turn_has_reasoning:
                for k in turn:
                    produced = items[k]
                    if isinstance(produced.get("id"), str) and produced.get("type", "message") in _ID_PREFIX:
                        kind = produced.get("type", "message")
                        self.add("OR8", f"input[{k}]", f"Item '{produced['id']}' of type '{kind}' was "
                                 "provided without its required 'reasoning' item.")
            turn, turn_has_reasoning = [], False

    def expects_reasoning(self, items: list[Any]) -> bool:
        """Whether the model reasons, so that its item ids come with reasoning items (OR8)."""
        if "reasoning" in self.body:
            return True
        model = self.body.get("model")
        if isinstance(model, str) and _REASONING_MODEL.match(model):
            return True
        return any(isinstance(item, Mapping) and item.get("type") == "reasoning" for item in items)


def _listed(values: tuple[str, ...]) -> str:
    """Values listed as OpenAI's errors do: 'a' and 'b'; 'a', 'b', and 'c'."""
    quoted = [f"'{v}'" for v in values]
    if len(quoted) < 3:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def _is_output_item(item: Mapping[str, Any]) -> bool:
    """Whether an item is something the model produced (reasoning, assistant message, a tool call)."""
    kind = item.get("type", "message")
    if kind == "message":
        return item.get("role") == "assistant"
    if not isinstance(kind, str):
        return False
    return not (kind.endswith("_output") or kind in ("item_reference", "mcp_approval_response"))


# --- the provider ------------------------------------------------------------------------------------


class OpenAIResponses(Provider):
    """OpenAI's Responses API: `input` items, `function_call` / `function_call_output` pairs."""

    name: ClassVar[str] = NAME
    id_max_length: ClassVar[int | None] = CALL_ID_MAX
    arguments_as_string: ClassVar[bool] = True
    images_in_tool_results: ClassVar[bool] = True

    def to_request(
        self,
        history: HistoryInput,
        *,
        model: str,
        tools: ToolsInput = None,
        system: str | None = None,
        is_read_only: IsReadOnly | None = None,
        repairer: Repairer | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """The `responses.create` body: each step as text, calls, outputs in call order, then the steer."""
        with young_collections_only():  # one linear pass making no cycles: full collections would dominate it
            return self._request(repaired(history, is_read_only, repairer), model, tools, system, options)

    def _request(self, repair: RepairResult, model: str, tools: ToolsInput, system: str | None,
                 options: dict[str, Any]) -> dict[str, Any]:
        """The body of `to_request` for the repaired history."""
        messages = repair.messages
        if system is None and isinstance(options.get("instructions"), str):
            system = options.pop("instructions")
        start = 0
        if system is None and messages and messages[0].role == "system":
            # The leading system message becomes `instructions`; later ones stay system items in place.
            system = _instructions(messages[0].content)
            start = 1 if system is not None else 0
        writer = _Writer(repair.final_ids)
        writer.write(messages[start:] if start else messages)
        body: dict[str, Any] = {"model": model}
        if system is not None:
            body["instructions"] = system
        body["input"] = writer.items
        tool_list = coerce_tools(tools)
        if tool_list:
            body["tools"] = [_tool(t.name, t.description, t.parameters) for t in tool_list]
        for key, value in options.items():
            if key not in body:
                body[key] = value
        return body

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """A history from a saved body (`instructions` and `input`), an input list, or an input string."""
        history: list[ChatMessage] = []
        if isinstance(data, Mapping):
            instructions = data.get("instructions")
            if instructions is not None:
                if not isinstance(instructions, str):
                    raise _read_error("'instructions' must be a string", "instructions")
                history.append(ChatMessage(role="system", content=instructions))
            items: object = data.get("input", [])
            base = "input"
        else:
            items, base = data, ""
        if isinstance(items, str):
            return [*history, ChatMessage(role="user", content=items)]
        if not isinstance(items, Sequence):
            raise _read_error(f"expected a string or a list of input items, got {type(items).__name__}", base)
        reader = _Reader()
        for i, item in enumerate(items):
            reader.read(item, f"{base}[{i}]")
        reader.flush()
        return [*history, *reader.messages]

    def from_response(self, response: Any) -> ChatMessage:
        """The reply's output items (reasoning, message, function_call) as one assistant message."""
        data = to_plain(response, provider=NAME)
        output = data.get("output")
        if not isinstance(output, list):
            error = data.get("error")
            detail = f": {error.get('message')}" if isinstance(error, Mapping) else ""
            raise _read_error(f"a Responses reply needs an 'output' list{detail}", "output")
        turn = _Turn()
        for i, item in enumerate(output):
            path = f"output[{i}]"
            if not isinstance(item, Mapping):
                raise _read_error(f"expected an output item object, got {type(item).__name__}", path)
            kind = item.get("type")
            if kind == "reasoning":
                turn.add_reasoning(item, path)
            elif kind == "message" and item.get("role", "assistant") == "assistant":
                turn.add_message(item, path)
            elif kind == "function_call":
                turn.add_call(item, path)
            # Other items (web_search_call, ...) are server-side tools the API runs and replays itself.
        return turn.message()

    def check(self, body: Mapping[str, Any]) -> list[Problem]:
        """The 400s the Responses API would answer this body with (OR0-OR11)."""
        if not isinstance(body, Mapping):
            got = _json_type(body)
            return [Problem(code="OR0", path="", provider=NAME,
                            message=f"Invalid body: expected a JSON object, but got {got} instead.")]
        try:
            return _Checker(body).run()
        except Exception as exc:  # check reports a malformed body, it never raises
            return [Problem(code="OR0", path="", provider=NAME, message=f"Unreadable body: {exc!r}")]

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.responses.create(**body)` on an `openai.OpenAI` client."""
        return client.responses.create(**body)

    async def _create_async(self, client: Any, body: dict[str, Any]) -> Any:
        """`await client.responses.create(**body)` on an `openai.AsyncOpenAI` client."""
        return await client.responses.create(**body)


PROVIDER = OpenAIResponses()
to_request = PROVIDER.to_request
from_request = PROVIDER.from_request
from_response = PROVIDER.from_response
check = PROVIDER.check
send = PROVIDER.send
send_async = PROVIDER.send_async
