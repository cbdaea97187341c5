"""Writing: repaired neutral messages to Responses `input` items (the body writer), tools and instructions."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import assert_never

from chatmend.messages import ChatMessage, ImagePart, Part, TextPart, ThinkingPart, ToolCall
from chatmend.providers.base import IdAssigner, arguments_text, image_data_url
from chatmend.providers.openai_responses.wire import ERROR_MARK, ID_PREFIX, ITEM_ID, NAME, PHASES, Json


def _own(provider_data: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """This provider's entry of a `provider_data` (empty when there is none)."""
    if not provider_data:
        return {}
    mine = provider_data.get(NAME)
    return mine if isinstance(mine, Mapping) else {}


def _item_id(value: object, kind: str) -> str | None:
    """`value` when it is a valid item id of this kind (OR4: prefix, OR5: charset), else None."""
    if isinstance(value, str) and value.startswith(ID_PREFIX[kind]) and ITEM_ID.fullmatch(value):
        return value
    return None


def _image(part: ImagePart) -> Json:
    """An `input_image` part; `detail` is Required in the SDK type, "auto" is the API's default."""
    return {"type": "input_image", "image_url": image_data_url(part), "detail": "auto"}


def _input_parts(content: Sequence[Part]) -> list[Json]:
    """Text and image parts as input content; thinking is never sent in an input message."""
    out: list[Json] = []
    for part in content:
        if isinstance(part, TextPart):
            out.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            out.append(_image(part))
    return out


def _input_message(role: str, content: tuple[Part, ...]) -> Json:
    """A user or system message item of parts (a string content is the item's `content` as it is)."""
    parts = _input_parts(content)
    return {"role": role, "content": parts if parts else ""}


def _output(message: ChatMessage) -> str | list[Json]:
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


def _summary(part: ThinkingPart) -> list[Json]:
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
            elif isinstance(part, ThinkingPart) and part.provider == NAME:
                split.thinking.append(part)
                split.order.append(part)
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
            phase = mine.get("phase") if mine.get("phase") in PHASES else None
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
            phase = entry.get("phase") if entry.get("phase") in PHASES else None
            plan.append(("message", _item_id(entry.get("id"), "message"), phase,
                         [next(texts) for _ in range(count)]))
        else:
            return None
    if next(thinking, None) is not None or next(calls, None) is not None or used_texts != len(split.texts):
        return None
    return plan


class Writer:
    """One linear pass from repaired messages to input items, with the request's id state."""

    def __init__(self, ids: IdAssigner) -> None:
        self.ids = ids
        """The call_ids of the calls, in order (OR3, mapped by `Provider._wire_ids`; calls are written in history
        order)."""
        self.waiting: deque[str] = deque()
        """The call_id of each call written whose output is still to come: the outputs after a message's calls
        answer them in order."""
        self.item_ids: set[str] = set()
        self.items: list[Json] = []

    def write(self, messages: list[ChatMessage]) -> None:
        """Append the items of every message (the hot path)."""
        items = self.items
        answered = self.waiting.popleft
        for message in messages:
            role = message.role
            if role == "tool":
                content = message.content
                items.append({
                    "type": "function_call_output",
                    "call_id": answered(),
                    # the common case, a plain text that succeeded, is the output as it is
                    "output": content if isinstance(content, str) and not message.is_error else _output(message),
                })
            elif role == "assistant":
                content = message.content
                if type(content) is str and content and not message.tool_calls and message.provider_data is None:
                    items.append({"role": "assistant", "content": content})  # as `plain_assistant` writes a reply
                elif isinstance(content, str):  # no thinking, nothing to replay
                    self.plain_assistant(message, content, ())
                else:
                    self.assistant(message, content)
            elif role == "user" or role == "system":
                content = message.content
                items.append({"role": role, "content": content} if isinstance(content, str)
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
                item: Json = {
                    "type": "message", "id": step[1], "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": t, "annotations": []} for t in step[3]],
                }
                if step[2] is not None:
                    item["phase"] = step[2]
                self.items.append(item)
            else:
                call: ToolCall = step[1]
                self.items.append({"type": "function_call", "id": step[2], "call_id": self.call_id(call.name),
                                   "name": call.name, "arguments": arguments_text(call.arguments)})

    def call_id(self, name: str) -> str:
        """The call_id of the next call written (a call of tool `name`), remembered for its output."""
        call_id = self.ids.next_id(name)
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
            item: Json = {"role": "assistant", "content": text}
            if message.provider_data is not None:
                phase = _own(message.provider_data).get("phase")
                if phase in PHASES:
                    item["phase"] = phase
            items.append(item)
        if images:
            # Assistant content takes only output_text and refusal parts (OR0): images go to a user message.
            items.append({"role": "user", "content": [_image(p) for p in images]})
        ids, wait = self.ids, self.waiting.append  # `call_id`, inlined: a reply's calls are the hot path
        for call in message.tool_calls:
            name = call.name
            call_id = ids.next_id(name)
            wait(call_id)
            items.append({"type": "function_call", "call_id": call_id, "name": name,
                          "arguments": arguments_text(call.arguments)})


def instructions(content: str | tuple[Part, ...]) -> str | None:
    """The text of a system message that can become `instructions` (a string), None when it has images."""
    if isinstance(content, str):
        return content
    if any(isinstance(p, ImagePart) for p in content):
        return None
    return "\n".join(p.text for p in content if isinstance(p, TextPart))


def tool(name: str, description: str, parameters: Mapping[str, Any]) -> Json:
    """A function tool; `strict` is Required in the SDK type, False keeps any JSON Schema acceptable."""
    return {"type": "function", "name": name, "description": description, "parameters": dict(parameters),
            "strict": False}
