"""OpenAI Chat Completions (`POST /v1/chat/completions`): write, read, check and send.

Rules are those of `docs/rules.md` §1 (ids OC1-OC7). Kimi and Mistral speak the same shape
and subclass `OpenAIChat`: they set the class flags and override hooks (writing: `_id_assigner`, `_wire_ids`
of the base, and `_wire_name`, `_append_turn`, `_on_assistant`, `_finish`; checking: `_check_shape`,
`_check_messages`, `_check_assistant`, and the rule codes `unanswered_code`, `image_code`).

The class is one set of hooks per job, a module each, over `wire` (`ChatWire`: the API's words, the fields the
model names, the flags and the few readings every job shares): `write` (`ChatWriting`), `read` (`ChatReading`),
`checker` (`ChatChecking`), and `spans` (the stubs of `repair_body`'s route); `OpenAIChat` puts them together and
adds detection, `repair_body`'s hooks and sending.

Choices where the wire has no place for something:
- a tool result's images go in a user message right after the run of tool messages (OC7), after a line
  naming the result (`Images from tool result <id>:`); an assistant's or system message's images likewise
  (and files: `file` and `input_audio` parts are user content only);
- `is_error` becomes `ERROR_PREFIX` at the start of the result's text (there is no error flag);
- thinking of other providers is not sent (no field for it), except by Kimi as `reasoning_content`; an
  assistant message left with nothing to send (thinking only) is left out;
- a system message stays a system message where it stands; the `system` option adds one first.

The whole request vocabulary of the SDK's `ChatCompletionMessageParam` is read and written back unchanged
(README, "OpenAI Chat"): what the neutral model names is modelled, the rest is kept under the provider's name
(`provider_data[name]`): every wire field the model does not name, verbatim, and under the reserved key `form`
how the wire spelled what the model does name, where the writer would otherwise spell it differently:
- on a message: `role` (`developer`, or `function` for a legacy function result), `content` (`null`,
  `string`, `list`, `omitted`), `name` (`omitted`: a tool message without it, for providers that name results);
- on a call: `type` (`custom`, or `omitted`), `field` (`function_call`: the legacy `function_call` field, not
  a `tool_calls` item), `arguments` (`object`: Mistral's arguments as a JSON object, not text);
- on a part: `type` (`refusal`, `input_audio`), `field` (`refusal`: the assistant's `refusal` field),
  `image_url` (`string`: Mistral's and Kimi's bare URL), `file_data` (`base64`: no `data:` prefix).
A part of a type the model has no place for (or of a type added last month) is a `NativePart`, written back
verbatim where it stood; a `NativePart` without a `type` holds message fields (the assistant's `audio`), which
is how they stay in the content that repair sees.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from chatmend.messages import ChatMessage, TextPart
from chatmend.planner import Stubs
from chatmend.providers.base import SHAPE, EntryPoints, IdAssigner, arguments_text, text_field
from chatmend.providers.openai_chat import spans
from chatmend.providers.openai_chat.checker import ChatChecking
from chatmend.providers.openai_chat.read import ChatReading
from chatmend.providers.openai_chat.wire import ERROR_PREFIX, FORM, OWN_FIELDS, OWN_PART_TYPES, TEXTS, WireMessage
from chatmend.providers.openai_chat.write import ChatWriting
from chatmend.repair import IsReadOnly, orphan_note_text, reads_only, synthetic_text

__all__ = [
    "ERROR_PREFIX",
    "FORM",
    "PROVIDER",
    "SHAPE",
    "TEXTS",
    "IdAssigner",
    "OpenAIChat",
    "WireMessage",
    "arguments_text",
    *EntryPoints._fields,
]


class OpenAIChat(ChatReading, ChatWriting, ChatChecking):
    """Chat Completions bodies: `messages` with `tool_calls` on the assistant and `role:"tool"` results."""

    name: ClassVar[str] = "openai_chat"
    id_max_length: ClassVar[int | None] = 40  # OC5
    title: ClassVar[str] = "OpenAI Chat"
    description: ClassVar[str] = "OpenAI Chat Completions: a body, its messages list, or JSON Lines of messages"
    model_prefixes: ClassVar[tuple[str, ...]] = ("gpt-", "gpt4", "o1", "o3", "o4", "chatgpt")
    roles: ClassVar[frozenset[str]] = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
    plain_default: ClassVar[bool] = True
    sdk_modules: ClassVar[tuple[str, ...]] = ("openai.types.chat",)  # Kimi and Mistral do not inherit it
    # OBS CopilotKit/CopilotKit#529 (`code: empty_array`); Kimi and Mistral, OpenAI-compatible, refuse it too
    empty_list_error: ClassVar[str | None] = ("Invalid 'messages': empty array. Expected an array with minimum "
                                              "length 1, but got an empty array instead.")
    writes_parts: ClassVar[frozenset[str]] = frozenset({"text", "image", "thinking", "file", "native"})

    # ---------------------------------------------------------------------------------------- detect

    def marks(self, item: Mapping[str, Any]) -> bool:
        """Signs only a Chat Completions message has: OpenAI's own part types, roles and fields, and calls
        with a `function` or `custom` object."""
        content = item.get("content")
        if isinstance(content, list) and any(
                isinstance(p, Mapping) and text_field(p) in OWN_PART_TYPES for p in content):
            return True
        if text_field(item, "role") in ("developer", "function") or not OWN_FIELDS.isdisjoint(item):
            return True
        calls = item.get("tool_calls")
        return isinstance(calls, list) and bool(calls) and all(
            isinstance(c, Mapping) and ("function" in c or "custom" in c) for c in calls)

    # -------------------------------------------------------------------------- repair_body's stub route

    def _stubs(self, items: list[Any]) -> Stubs | None:
        """Lists of plain messages (`spans.stubs`)."""
        return spans.stubs(items, named=self.tool_message_name)

    def _renamed_calls(self, items: list[Any], final_ids: Sequence[str]) -> list[Any] | None:
        """A plain assistant message as a copy under its new ids, what the writer writes of it; None for a dialect
        that writes reasoning on every message with calls (the writer's, not a copy's)."""
        if self.reasoning_provider is not None:
            return None
        item = items[0]
        return [{**item, "tool_calls": [{**call, "id": final} for call, final in zip(item["tool_calls"], final_ids)]}]

    def _renamed_result(self, piece: Any, final_id: str) -> list[Any]:
        """A plain tool message as a copy under its call's new id."""
        return [{**piece, "tool_call_id": final_id}]

    def _synthetic_result(self, calls: list[Any], k: int, final_id: str,
                          is_read_only: IsReadOnly | None) -> list[Any]:
        """The tool message the writer writes for call `k`'s synthetic result."""
        name = calls[0]["tool_calls"][k]["function"]["name"]
        text = synthetic_text(name, read_only=reads_only(is_read_only, name))
        return [self._text_result(final_id, self._wire_name(name), text, is_error=True)]

    def _note(self, piece: Any, caller: list[Any] | None) -> list[Any]:
        """The user note the writer writes of a plain tool message (`orphan_note` of what the reader reads: its text,
        its call id, the tool it names)."""
        name = piece.get("name")
        text = orphan_note_text(name if isinstance(name, str) else None, piece["tool_call_id"], False, piece["content"])
        note = ChatMessage(role="user", content=(TextPart(text=text),))
        return self._write_messages([note], None, IdAssigner([]), within=True)

    # ------------------------------------------------------------------------------------------ send

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.chat.completions.create(**body)` with an `openai.OpenAI` client (or `AsyncOpenAI`)."""
        create = client.chat.completions.create
        return create(**_sdk_kwargs(create, body))


def _sdk_kwargs(create: Callable[..., Any], body: dict[str, Any]) -> dict[str, Any]:
    """The body as keyword arguments; fields the SDK does not name (Kimi's `thinking`) go in `extra_body`.

    The request on the wire is the same body either way: the SDK merges `extra_body` into the JSON.
    """
    try:
        known = inspect.signature(create).parameters
    except (TypeError, ValueError):  # a callable without a signature: pass everything by name
        return body
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in known.values()):
        return body
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = {**extra, **kwargs.get("extra_body", {})}
    return kwargs


PROVIDER = OpenAIChat()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
