"""Writing: repaired neutral messages to Responses `input` items (the body writer), tools and instructions.

A message read from a body whose items the default shape would not reproduce (a `developer` role, annotations,
an item's `status`, a `custom_tool_call`'s fields, ...) carries those items in `provider_data["openai_responses"]
["wire"]`: the writer sends them back verbatim, only the call ids put in, while the message still reads as they
do (`_fits`); otherwise it writes the default shape of each part and call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from typing_extensions import assert_never

from chatmend import strict_json as strict_json
from chatmend.exceptions import ReadError
from chatmend.messages import (
    ChatMessage,
    FilePart,
    ImagePart,
    NativePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
    text_of,
)
from chatmend.providers.base import IdAssigner, arguments_json, arguments_text, image_data_url
from chatmend.providers.kept import kept_field, kept_fields
from chatmend.providers.openai_responses.read import Reader, call_item_type
from chatmend.providers.openai_responses.wire import (
    CALL_OUTPUTS,
    ERROR_MARK,
    ID_PREFIX,
    ITEM_ID,
    NAME,
    PHASES,
    RESPONSES_ITEM_TYPES,
    Json,
    is_client_call,
    sent_ids,
)

BLANK_PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6k"
             "gAAAABJRU5ErkJggg==")
"""The screenshot of a `computer_call_output` written for a result with no image (a synthetic one): the output
type holds a screenshot and nothing else, so a blank 1x1 PNG answers the call."""


def _item_id(value: object, kind: str) -> str | None:
    """`value` when it is a valid item id of this kind (OR4: prefix, OR5: charset), else None."""
    if isinstance(value, str) and value.startswith(ID_PREFIX[kind]) and ITEM_ID.fullmatch(value):
        return value
    return None


def _image(part: ImagePart) -> Json:
    """An `input_image` part; `detail` is Required in the SDK type, "auto" is the API's default."""
    return {"type": "input_image", "image_url": image_data_url(part), "detail": "auto"}


def _file(part: FilePart) -> Json:
    """An `input_file` part: by file id, inline as a data URL, or by URL."""
    out: Json = {"type": "input_file"}
    if part.file_id is not None:
        out["file_id"] = part.file_id
    elif part.data is not None:
        out["file_data"] = f"data:{part.media_type};base64,{part.data}"
    else:
        out["file_url"] = part.url
    if part.filename is not None:
        out["filename"] = part.filename
    return out


def _input_parts(content: Sequence[Part]) -> list[Json]:
    """Text, image, file and native parts as input content; thinking is never sent in an input message."""
    out: list[Json] = []
    for part in content:
        if isinstance(part, TextPart):
            out.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            out.append(_image(part))
        elif isinstance(part, FilePart):
            out.append(_file(part))
        elif isinstance(part, NativePart):
            out.append(dict(part.data))
    return out


def _input_message(role: str, content: tuple[Part, ...]) -> Json:
    """A user or system message item of parts (a string content is the item's `content` as it is)."""
    parts = _input_parts(content)
    return {"role": role, "content": parts if parts else ""}


def function_call_output(call_id: str, message: ChatMessage) -> Json:
    """The `function_call_output` item of a result of a function call that carries nothing of its own to write back
    (`provider_data`): what `Writer.write` writes for it, and `repair_body`'s stub route for a synthetic result."""
    content = message.content
    # the common case, a plain text that succeeded, is the output as it is
    output = content if isinstance(content, str) and not message.is_error else _output(message)
    return {"type": "function_call_output", "call_id": call_id, "output": output}


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


def _text_output(message: ChatMessage) -> str:
    """A result as one string (for the output types that take only text), error-marked like `_output`."""
    output = _output(message)
    return output if isinstance(output, str) else text_of([TextPart(text=p["text"]) for p in output
                                                           if p.get("type") == "input_text"])


def _screenshot(message: ChatMessage) -> Json:
    """A computer_call_output's screenshot: the result's first image (or native screenshot), else a blank one."""
    if not isinstance(message.content, str):
        for part in message.content:
            if isinstance(part, ImagePart):
                return {"type": "computer_screenshot", "image_url": image_data_url(part)}
            if isinstance(part, NativePart) and part.native_type == "computer_screenshot":
                return dict(part.data)
    return {"type": "computer_screenshot", "image_url": BLANK_PNG}


def _found_tools(message: ChatMessage) -> list[Any]:
    """The tools of a client tool search's result, as the reader wrote them in its text (else none)."""
    try:
        found = strict_json.loads(text_of(message.content))
    except ValueError:
        return []
    tools = found.get("tools") if isinstance(found, dict) else None
    return tools if isinstance(tools, list) else []


def result_item(message: ChatMessage, call_id: str, kind: str) -> Json:
    """The output item of a tool result answering a call of item type `kind`, in that call's output type."""
    output_kind = CALL_OUTPUTS.get(kind, "function_call_output")
    if output_kind == "local_shell_call_output":
        return {"type": output_kind, "id": call_id, "output": _text_output(message)}  # the SDK's type names it id
    if output_kind == "shell_call_output":
        text, failed = text_of(message.content), message.is_error
        return {"type": output_kind, "call_id": call_id, "output": [
            {"stdout": "" if failed else text, "stderr": text if failed else "",
             "outcome": {"type": "exit", "exit_code": 1 if failed else 0}}]}
    if output_kind == "apply_patch_call_output":
        return {"type": output_kind, "call_id": call_id, "status": "failed" if message.is_error else "completed",
                "output": text_of(message.content)}
    if output_kind == "computer_call_output":
        return {"type": output_kind, "call_id": call_id, "output": _screenshot(message)}
    if output_kind == "tool_search_output":
        return {"type": output_kind, "call_id": call_id, "execution": "client", "tools": _found_tools(message)}
    return {"type": output_kind, "call_id": call_id, "output": _output(message)}


def call_item(call: ToolCall, call_id: str, kind: str, item_id: str | None = None) -> Json:
    """The item of a client call of item type `kind`: its payload (`arguments`) in the type's own fields."""
    if kind == "function_call":
        item: Json = {"type": "function_call"}
        if item_id is not None:
            item["id"] = item_id
        item.update(call_id=call_id, name=call.name, arguments=arguments_json(call))
        return item
    mine = kept_fields(call.provider_data, NAME) or {}
    arguments = call.arguments if isinstance(call.arguments, dict) else {"input": call.arguments}
    item = {"type": kind}
    if isinstance(mine.get("id"), str):
        item["id"] = mine["id"]
    item["call_id"] = call_id
    if kind == "custom_tool_call":
        text = arguments.get("input")
        item.update(name=call.name, input=text if isinstance(text, str) else arguments_text(arguments))
    elif kind == "tool_search_call":
        item.update(arguments=arguments, execution="client")
    else:
        item.update(arguments)
    if isinstance(mine.get("status"), str):
        item["status"] = mine["status"]
    elif kind in ("local_shell_call", "apply_patch_call", "computer_call"):
        item["status"] = "completed"  # Required in the SDK's types
    return item


def _fits(message: ChatMessage, wire: list[Any]) -> bool:
    """Whether recorded items still read as the message: its content and calls (their ids aside) unchanged."""
    reader = Reader()
    try:
        for item in wire:
            reader.read(item, "")
        reader.flush()
    except (ReadError, ValueError, TypeError):
        return False
    if len(reader.messages) != 1:
        return False
    back = reader.messages[0]
    return (back.role == message.role and back.content == message.content and back.is_error == message.is_error
            and [(c.name, c.arguments, call_item_type(c)) for c in back.tool_calls]
            == [(c.name, c.arguments, call_item_type(c)) for c in message.tool_calls])


def _summary(part: ThinkingPart) -> list[Json]:
    """The reasoning summary as received, else one summary_text of the part's text."""
    stored = kept_field(part.provider_data, NAME, "summary")
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
    images: list[ImagePart | FilePart] = field(default_factory=list)
    natives: list[NativePart] = field(default_factory=list)
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
            elif isinstance(part, (ImagePart, FilePart)):
                split.images.append(part)
            elif isinstance(part, NativePart):
                split.natives.append(part)
                split.order.append(part)
            elif isinstance(part, ThinkingPart) and part.provider == NAME:
                split.thinking.append(part)
                split.order.append(part)
        return split


# A replay plan: ("reasoning", part, id) / ("message", id, phase, texts) / ("function_call", call, id) /
# ("native", part, None).
_Step = tuple[Any, ...]


def _default_layout(message: ChatMessage, split: _Split) -> list[_Step] | None:
    """Replay order without a recorded layout: content order (one message item), then the calls."""
    mine = kept_fields(message.provider_data, NAME) or {}
    plan: list[_Step] = []
    text_placed = False
    for part in split.order:
        if isinstance(part, ThinkingPart):
            plan.append(("reasoning", part, _item_id(kept_field(part.provider_data, NAME, "id"), "reasoning")))
        elif isinstance(part, NativePart):
            plan.append(("native", part, None))
        elif not text_placed:
            text_placed = True
            phase = mine.get("phase") if mine.get("phase") in PHASES else None
            plan.append(("message", _item_id(mine.get("id"), "message"), phase, split.texts))
    if split.texts and not text_placed:
        return None
    for call in message.tool_calls:
        plan.append(("function_call", call, _item_id(kept_field(call.provider_data, NAME, "id"), "function_call")))
    return plan


def _recorded_layout(message: ChatMessage, split: _Split, items: object) -> list[_Step] | None:
    """Replay order from the recorded `items`, when it still describes this message exactly."""
    if not isinstance(items, list):
        return None
    thinking = iter(split.thinking)
    natives = iter(split.natives)
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
            if part is None or kept_field(part.provider_data, NAME, "id") != entry.get("id"):
                return None
            plan.append(("reasoning", part, _item_id(entry.get("id"), "reasoning")))
        elif kind == "function_call":
            call = next(calls, None)
            if call is None or kept_field(call.provider_data, NAME, "id") != entry.get("id"):
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
        elif kind == "native":
            native = next(natives, None)
            if native is None:
                return None
            plan.append(("native", native, None))
        else:
            return None
    if next(natives, None) is not None:
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
        self.kinds: dict[str, str] = {}
        """The item type of each call written that is not a function_call, by call_id (its output's type)."""
        self.item_ids: set[str] = set()
        """The item ids of the items written (OR6: each is sent once), whichever shape wrote them."""
        self.items: list[Json] = []

    def write(self, messages: list[ChatMessage]) -> None:
        """Append the items of every message (the hot path)."""
        items = self.items
        answered = self.waiting.popleft
        kinds = self.kinds  # the calls of other types than function_call (filled as they are written)
        for message in messages:
            role = message.role
            if role == "tool":
                call_id = answered()
                if message.provider_data is not None or (kinds and call_id in kinds):
                    self.result(message, call_id)
                    continue
                items.append(function_call_output(call_id, message))
            elif role == "assistant":
                content = message.content
                if message.provider_data is None:
                    if type(content) is str and content and not message.tool_calls:
                        items.append({"role": "assistant", "content": content})  # as `plain_assistant` writes
                        continue
                elif self.verbatim(message, None):
                    continue
                if isinstance(content, str):  # no thinking, nothing to replay
                    self.plain_assistant(message, content, ())
                else:
                    self.assistant(message, content)
            elif role == "user" or role == "system":
                content = message.content
                if message.provider_data is not None and self.verbatim(message, None):
                    continue
                if isinstance(content, str):
                    items.append({"role": role, "content": content})
                elif len(content) == 1 and isinstance(content[0], NativePart) and _is_item(content[0]):
                    self.native(content[0])  # the caller's own item (an item_reference, ...)
                else:
                    items.append(_input_message(role, content))
            else:
                assert_never(role)

    def result(self, message: ChatMessage, call_id: str) -> None:
        """A tool result answering `call_id`: its recorded item when it still fits, else its call's output type."""
        if not self.verbatim(message, call_id):
            self.items.append(result_item(message, call_id, self.kinds.get(call_id, "function_call")))

    def verbatim(self, message: ChatMessage, answers: str | None) -> bool:
        """Write the message's recorded items (`wire`) as they were, the call ids put in; False when it has none
        that still fit (or their item ids were already sent in this request, OR6)."""
        wire = kept_field(message.provider_data, NAME, "wire")
        if not isinstance(wire, list) or not wire or not _fits(message, wire):
            return False
        if answers is None and isinstance(wire[-1], Mapping) and wire[-1].get("type") == "reasoning":
            return False  # OR7: a reasoning item whose item is gone is not sent (the default shape leaves it out)
        ids = {i for item in wire for i in sent_ids(item)}
        if not self.item_ids.isdisjoint(ids):
            return False
        if answers is not None:
            (item,) = wire
            expected = CALL_OUTPUTS.get(self.kinds.get(answers, "function_call"))
            if item.get("type") != expected:
                return False
            copy = dict(item)
            copy["id" if expected == "local_shell_call_output" and "call_id" not in item else "call_id"] = answers
            self.items.append(copy)
            return True
        self.item_ids.update(ids)
        for item in wire:
            kind = item.get("type", "message")
            copy = dict(item)
            if kind == "function_call" or is_client_call(item, kind):
                copy["call_id"] = call_id = self.call_id(item.get("name", ""))
                if kind != "function_call":
                    self.kinds[call_id] = kind
            self.items.append(copy)
        return True

    def assistant(self, message: ChatMessage, content: tuple[Part, ...]) -> None:
        """The items of an assistant message with parts: replayed with reasoning and ids when possible."""
        split = _Split.of(content)
        plan = self.replay_plan(message, split)
        if plan is None:
            self.plain_assistant(message, "\n".join(split.texts), split.images, split.natives)
            return
        for step in plan:
            if step[0] == "reasoning":
                part: ThinkingPart = step[1]
                self.items.append({"type": "reasoning", "id": step[2], "summary": _summary(part),
                                   "encrypted_content": part.data})
            elif step[0] == "native":
                self.native(step[1])
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
                kind = call_item_type(call)
                call_id = self.call_id(call.name)
                if kind != "function_call":
                    self.kinds[call_id] = kind
                self.items.append(call_item(call, call_id, kind, step[2]))

    def native(self, part: NativePart) -> None:
        """An item the neutral model does not name, as it was; its item id counted as sent (OR6)."""
        item = dict(part.data)
        self.item_ids.update(sent_ids(item))
        self.items.append(item)

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
        mine = kept_fields(message.provider_data, NAME) or {}
        plan = _recorded_layout(message, split, mine.get("items")) if "items" in mine else None
        if plan is None:
            plan = _default_layout(message, split)
        if plan is None or plan[-1][0] == "reasoning":
            return None  # OR7: a reasoning item needs the item it produced after it
        ids = [step[2] if step[0] != "message" else step[1] for step in plan if step[0] != "native"]
        if any(i is None for i in ids) or len(set(ids)) != len(ids) or not self.item_ids.isdisjoint(ids):
            return None  # OR4/OR5: a missing or malformed id; OR6: an id already sent in this request
        self.item_ids.update(ids)
        return plan

    def plain_assistant(self, message: ChatMessage, text: str, images: Sequence[ImagePart | FilePart],
                        natives: Sequence[NativePart] = ()) -> None:
        """The assistant's text as a plain message, its native items, its images and files in a user message,
        then its calls (no ids)."""
        items = self.items
        if text:
            item: Json = {"role": "assistant", "content": text}
            if message.provider_data is not None:
                phase = kept_field(message.provider_data, NAME, "phase")
                if phase in PHASES:
                    item["phase"] = phase
            items.append(item)
        for native in natives:
            self.native(native)
        if images:
            # Assistant content takes only output_text and refusal parts (OR0): images go to a user message.
            items.append({"role": "user", "content": _input_parts(images)})
        for call in message.tool_calls:
            call_id = self.call_id(call.name)
            if call.provider_data is not None and call_item_type(call) != "function_call":
                self.kinds[call_id] = kind = call_item_type(call)
                item = call_item(call, call_id, kind)
                self.item_ids.update(sent_ids(item))  # (a computer call's own item id, say)
                items.append(item)
                continue
            items.append({"type": "function_call", "call_id": call_id, "name": call.name,
                          "arguments": arguments_json(call)})


def _is_item(part: NativePart) -> bool:
    """Whether a native part of a user message is a whole input item (not a content part)."""
    return part.native_type in RESPONSES_ITEM_TYPES


def default_items(message: ChatMessage, answers: str | None) -> list[Json]:
    """The items the writer gives one message in its default shape (no recorded items), its own call ids kept;
    a tool result as the answer to a call of type `answers`."""
    writer = Writer(IdAssigner([c.id for c in message.tool_calls]))
    if message.role == "tool":
        call_id = message.tool_call_id or ""
        writer.waiting.append(call_id)
        if answers is not None and answers != "function_call":
            writer.kinds[call_id] = answers
    writer.write([message])
    return writer.items


def with_wire(message: ChatMessage, items: list[Any], answers: str | None) -> ChatMessage:
    """The message, carrying its items (`wire`) when the default shape would not write them back as they are."""
    if default_items(message, answers) == items:
        return message
    data = dict(message.provider_data or {})
    data[NAME] = {**(kept_fields(data, NAME) or {}), "wire": items}
    return replace(message, provider_data=data)


def instructions(content: str | tuple[Part, ...]) -> str | None:
    """The text of a system message that can become `instructions` (a string), None when it has images."""
    if isinstance(content, str):
        return content
    if any(isinstance(p, (ImagePart, FilePart, NativePart)) for p in content):
        return None
    return "\n".join(p.text for p in content if isinstance(p, TextPart))


def tool(name: str, description: str, parameters: Mapping[str, Any]) -> Json:
    """A function tool; `strict` is Required in the SDK type, False keeps any JSON Schema acceptable."""
    return {"type": "function", "name": name, "description": description, "parameters": dict(parameters),
            "strict": False}
