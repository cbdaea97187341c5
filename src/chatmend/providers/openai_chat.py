"""OpenAI Chat Completions (`POST /v1/chat/completions`): write, read, check and send.

Rules are those of `shared/notes/provider-rules.md` §1 (ids OC1-OC7). Kimi and Mistral speak the same shape
and subclass `OpenAIChat`: they set the class flags and override hooks (writing: `_id_assigner`, `_wire_ids`
of the base, and `_wire_name`, `_append_turn`, `_on_assistant`, `_finish`; checking: `_check_shape`,
`_check_messages`, `_check_assistant`, and the rule codes `unanswered_code`, `image_code`).

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
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from chatmend._json import brief
from chatmend.exceptions import Problem, ReadError, error_context
from chatmend.messages import (
    ChatMessage,
    FilePart,
    ImagePart,
    NativePart,
    Part,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCall,
    replace_field,
)
from chatmend.providers import _chat_fast
from chatmend.providers._spans import ANSWER, CALL, KEEP, SYNTHETIC, SpanPlan, Stubs
from chatmend.providers.base import (
    SHAPE,
    CheckContext,
    IdAssigner,
    Provider,
    arguments_json,
    arguments_text,
    image_data_url,
    parse_data_url,
    text_field,
    to_plain,
)
from chatmend.repair import IsReadOnly, RepairResult, orphan_note, reads_only, synthetic_result

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
    "check",
    "from_request",
    "from_response",
    "repair_body",
    "send",
    "send_async",
    "to_request",
]

Body = dict[str, Any]
WireMessage = dict[str, Any]
Waiting = deque[tuple[str, str]]
"""(wire id, wire name) of each call written whose result is still to come, in call order; the wire id is
`LEGACY_ID` for a legacy `function_call`, answered by a `role:"function"` message."""

ERROR_PREFIX = "Error: "
"""Chat Completions has no error flag on a tool message: a failed result says so in its text."""
FORM = "form"
"""The reserved key of `provider_data[name]`: how the wire spelled what the neutral model names (module doc)."""
LEGACY_ID = ""
"""The wire id a legacy `function_call` waits under: it has none (and repair gives every other call one)."""
_NO_TEXT_FOR_IMAGES = "(image result: see the next message)"
_OWN_PART_TYPES = frozenset({"image_url", "input_audio", "file"})
"""Part types of Chat Completions that no other chat shape has (detection)."""
_OWN_FIELDS = frozenset({"reasoning_content", "refusal", "name", "function_call"})
"""Message fields of Chat Completions (and the providers speaking it) that no other chat shape has."""
# The API's words for an image URL it cannot use (an empty one is neither an https URL nor a data URL).
_EMPTY_IMAGE_URL = ("Invalid image URL: expected an https URL or a base64-encoded data URL with an image MIME type "
                    "(e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an empty string")
_UNKNOWN_PART = ("Invalid value: {kind}. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', "
                 "'audio', and 'file'.")
"""OpenAI's 400 for a part type it does not know, listing the SDK's part types of every role and `audio`: what
`check` says of an empty type (a type not known here passes: providers add some every month)."""
_CONTENT_FIELDS = frozenset({"role", "content"})
"""The fields a system, developer or user message's model names (`name` and the rest are kept verbatim)."""
_ASSISTANT_FIELDS = frozenset({"role", "content", "tool_calls", "function_call", "refusal", "audio",
                               "reasoning_content"})
_WITHIN: WireMessage = {"role": "user", "content": ""}
"""What a run of `repair_body` is written after (`_write_messages(within=True)`): a message, as in a body."""
_OMITTED = object()
"""`_wire_content` of a content the wire did not have."""
_CALL_FIELDS = frozenset({"id", "type", "function"})
_PLAIN_ASSISTANT = frozenset({"role", "content", "tool_calls"})
_AUDIO_MEDIA = {"mp3": "audio/mpeg", "wav": "audio/wav"}
_AUDIO_FORMAT = {"audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/wav": "wav", "audio/x-wav": "wav"}

TEXTS: dict[str, str] = {
    "OC1": "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
           "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
    "OC2": "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
           "'tool_calls'.",
    "OC3": "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message.",
    "OC4": "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in {first} and {second}.",
    "OC5": "Invalid '{where}': string too long. Expected a string with maximum length {limit}, but got a "
           "string with length {length} instead.",
    "OC6": "Invalid type for '{where}': expected a string, but got {kind} instead.",
    "OC7": "Invalid 'messages[{index}]'. Image URLs are only allowed for messages with role 'user', but this "
           "message with role '{role}' contains an image URL.",
}
"""OpenAI's 400 texts per rule (provider-rules §1), verbatim with their variable parts as fields."""


_READERS = ("_read_message", "_read_assistant", "_read_call", "_read_content", "_read_part", "_read_groups")
"""The reading hooks whose plain-shape case `_chat_fast.read_plain` stands in for."""
_WRITERS = ("_write_messages", "_write_assistant", "_write_calls", "_write_result", "_write_items", "_write_list",
            "_wire_name", "_append_turn", "_on_assistant", "_finish", "_user_parts")
"""The writing hooks whose output on plain messages `_assemble` writes itself (or calls, unchanged)."""
_CHECKERS = ("_check", "_check_shape", "_part_problem", "_check_messages", "_check_calls", "_check_assistant",
             "_check_images", "_list_valid")
"""The checking hooks whose verdict on plain lists `_chat_fast.list_valid` stands in for."""


def _named_function(call: Any) -> Mapping[str, Any] | None:
    """A tool call's `function` object when it names its tool (a non-empty string), else None: what reading and
    checking a call both need first."""
    function = call.get("function") if isinstance(call, Mapping) else None
    if isinstance(function, Mapping) and isinstance(function.get("name"), str) and function["name"]:
        return function
    return None


def _call_kind(call: Mapping[str, Any]) -> str | None:
    """A call's type as written (`function` when it names none), or None when its `type` is not a non-empty string
    (an empty one names no kind of call: the API answers "Invalid value: ''")."""
    kind = call.get("type", "function")
    return kind if isinstance(kind, str) and kind else None


def _with_raw_arguments(message: ChatMessage, item: Mapping[str, Any]) -> ChatMessage:
    """The message with each function call's arguments text kept as it came (`repair_body` writes it back byte for
    byte); custom calls and the legacy `function_call` keep theirs already."""
    calls = message.tool_calls
    if not calls:
        return message
    wire = item.get("tool_calls")
    wire_calls = wire if isinstance(wire, list) else []
    kept = []
    for k, call in enumerate(calls):
        raw = wire_calls[k] if k < len(wire_calls) else None
        function = raw.get("function") if isinstance(raw, Mapping) and _call_kind(raw) == "function" else None
        text = function.get("arguments") if isinstance(function, Mapping) else None
        kept.append(replace_field(call, "raw_arguments", text) if isinstance(text, str) else call)
    return replace_field(message, "tool_calls", tuple(kept))


def _thinking_text(parts: Sequence[Part]) -> str:
    """The readable text of a message's thinking parts, joined (redacted thinking has none)."""
    return "\n".join(p.text for p in parts if isinstance(p, ThinkingPart) and p.text)


def _split(content: str | tuple[Part, ...]) -> tuple[str, list[ImagePart]]:
    """A content's text parts joined by newlines, and its images."""
    if isinstance(content, str):
        return content, []
    texts = [p.text for p in content if isinstance(p, TextPart)]
    return "\n".join(texts), [p for p in content if isinstance(p, ImagePart)]


def _image(part: ImagePart) -> dict[str, Any]:
    """An `image_url` content part."""
    return {"type": "image_url", "image_url": {"url": image_data_url(part)}}


def _rest(item: Mapping[str, Any], named: frozenset[str] | tuple[str, ...]) -> dict[str, Any]:
    """The fields of a wire object that the model does not name, verbatim."""
    return {k: v for k, v in item.items() if k not in named}


def _fields(own: Mapping[str, Any], exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The verbatim wire fields of a provider_data entry (all but its `form`, and `exclude`)."""
    return {k: v for k, v in own.items() if k != FORM and k not in exclude}


def _form(own: Mapping[str, Any] | None) -> Mapping[str, str]:
    """The `form` of a provider_data entry (empty when none)."""
    form = own.get(FORM) if own is not None else None
    return form if isinstance(form, Mapping) else {}


def _moved(part: Part) -> bool:
    """True for the parts only a user message carries (images, files): elsewhere they move to one (OC7)."""
    return type(part) is ImagePart or type(part) is FilePart


def _chunks_text(chunks: list[Any]) -> str:
    """The text of Mistral's thinking chunks, joined."""
    return "".join(t for c in chunks if isinstance(c, Mapping) and isinstance(t := c.get("text", ""), str))


def _data_url(url: str) -> tuple[str, str] | None:
    """(media type, base64 data) of a base64 `data:` URI that the neutral form writes back the same, else None."""
    if not url.startswith("data:") or ";base64," not in url:
        return None
    head, data = url[5:].split(";base64,", 1)
    return (head, data) if head else None


def _media_of(file: Mapping[str, Any]) -> str:
    """The media type of a `file` part's inline bytes given without a `data:` prefix (the wire names none)."""
    name = file.get("filename")
    return "application/pdf" if isinstance(name, str) and name.lower().endswith(".pdf") else "application/octet-stream"


class OpenAIChat(Provider):
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
    tool_message_name: ClassVar[bool] = False
    """True when tool messages carry the tool's `name` (not a field of OpenAI's own type)."""
    reasoning_provider: ClassVar[str | None] = None
    """The provider whose `reasoning_content` field carries every provider's thinking (Kimi); None: only this
    provider's own thinking goes back in it (DeepSeek-style `reasoning_content`, read from its own bodies)."""
    thinking_parts: ClassVar[bool] = False
    """True when thinking is a content part of the assistant (Mistral's `thinking` chunks); else such a part is
    one the provider does not know, kept verbatim."""
    developer_role: ClassVar[bool] = True
    """True when the provider knows the `developer` role (Mistral does not: a developer message goes as system)."""
    texts: ClassVar[dict[str, str]] = TEXTS
    """The provider's 400 text per rule code."""
    unanswered_code: ClassVar[str] = "OC1"
    """The rule a call left without its result breaks (Kimi words it as KI1)."""
    image_code: ClassVar[str] = "OC7"
    """The rule an image outside a user message breaks (Mistral words it as MI11)."""
    image_url_as_string: ClassVar[bool] = False
    """Whether an `image_url` part may hold its URL as a bare string (Mistral's may; OpenAI's needs an object)."""
    part_types: ClassVar[tuple[str, ...] | None] = None
    """The content part types the provider rejects all others of (None: a type not known here is left to the
    provider, as new ones come every month: only an empty type is reported)."""
    unknown_part_text: ClassVar[str] = _UNKNOWN_PART
    """The provider's words for a part of a type it does not know (`{kind}`: the type, quoted)."""

    # ---------------------------------------------------------------------------------------- detect

    def marks(self, item: Mapping[str, Any]) -> bool:
        """Signs only a Chat Completions message has: OpenAI's own part types, roles and fields, and calls
        with a `function` or `custom` object."""
        content = item.get("content")
        if isinstance(content, list) and any(
                isinstance(p, Mapping) and text_field(p) in _OWN_PART_TYPES for p in content):
            return True
        if text_field(item, "role") in ("developer", "function") or not _OWN_FIELDS.isdisjoint(item):
            return True
        calls = item.get("tool_calls")
        return isinstance(calls, list) and bool(calls) and all(
            isinstance(c, Mapping) and ("function" in c or "custom" in c) for c in calls)

    # ----------------------------------------------------------------------------------------- write

    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        """The Chat Completions body: one linear pass over the repaired history, plain dicts only."""
        body: Body = {"model": model, "messages": self._write_messages(result.messages, system, ids)}
        if tools:
            body["tools"] = [self._write_tool(t.name, t.description, t.parameters) for t in tools]
        body.update(options)
        return body

    def _write_messages(self, messages: list[ChatMessage], system: str | None, ids: IdAssigner, *,
                        within: bool = False) -> list[WireMessage]:
        """The wire message list of a repaired history, its calls' wire ids given by `ids`; `within` a body (a run
        of `repair_body`), as they are written after a message of the body, and not finished as a body ends."""
        waiting: Waiting = deque()  # the tool messages after an assistant message answer its calls in order
        out: list[WireMessage] = [_WITHIN] if within else []
        images: list[dict[str, Any]] = []  # OC7: image parts waiting for the run of tool messages to end
        named = self.tool_message_name
        # a dialect with its own `_write_assistant` gets every assistant message through it
        as_base = _chat_fast.inherits(type(self), OpenAIChat, ("_write_assistant",))
        # User and system messages go through `_append_turn` (a provider may move or precede them); assistant and tool
        # messages stand where they are written: `out.append`.
        if system is not None:
            self._append_turn(out, {"role": "system", "content": system})
        for message in messages:
            role = message.role
            if images and role != "tool":
                self._append_turn(out, {"role": "user", "content": images})
                images = []
            if role == "tool":
                content = message.content
                if type(content) is str and not message.is_error and message.provider_data is None \
                                and waiting and waiting[0][0]:  # a plain result: `_write_result`'s result
                    call_id, wire_name = waiting.popleft()
                    out.append({"role": "tool", "tool_call_id": call_id, "name": wire_name, "content": content}
                               if named else {"role": "tool", "tool_call_id": call_id, "content": content})
                else:
                    out.append(self._write_result(message, waiting, images))
            elif role == "assistant":
                self._on_assistant(out)
                content = message.content
                if type(content) is not str or message.provider_data is not None or not as_base:
                    self._write_assistant(message, ids, waiting, images, out)
                elif not message.tool_calls:
                    if content:
                        out.append({"role": "assistant", "content": content})  # as `_write_assistant` writes a reply
                elif self.reasoning_provider is None:  # text and calls as `_write_assistant` writes them (no reasoning)
                    turn: WireMessage = {"role": "assistant", "content": content or None}
                    self._write_calls(message.tool_calls, ids, waiting, turn)
                    out.append(turn)
                else:
                    self._write_assistant(message, ids, waiting, images, out)
            elif role == "user":
                content = message.content
                if message.provider_data is None or self.name not in message.provider_data:
                    wire: WireMessage = {"role": "user", "content": content if isinstance(content, str)
                                         else self._user_parts(content) or ""}  # thinking only: nothing to send
                else:
                    wire = self._write_own("user", message, self._user_parts)
                self._append_turn(out, wire)
            else:
                self._write_system(message, out)
        if images:
            self._append_turn(out, {"role": "user", "content": images})
        if within:
            return out[1:]  # (the body's own end is `_finish`'s, and `check`'s after a repair: base.repair_body)
        self._finish(out)
        return out

    def _write_list(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner]) -> list[Any]:
        """The whole message list of `repair_body` written anew, as a body's (its start and end Mistral's too)."""
        return self._write_messages(messages, None, ids())

    def _write_items(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner], lead: int) -> list[Any]:
        """A run of `repair_body` written as it stands inside the body: after a message, so that no turn is put
        before it (Mistral's role order), and not finished as if the body ended with it."""
        written = self._write_messages(messages, None, ids(), within=True)
        if not lead:
            return written
        return written[len(self._write_messages(messages[:lead], None, ids(), within=True)):]

    def _user_parts(self, content: Sequence[Part]) -> list[dict[str, Any]]:
        """A user message's content parts: all but thinking, which a user message has no place for."""
        out = []
        for p in content:
            kind = type(p)
            if kind is TextPart and p.provider_data is None:  # type: ignore[union-attr]
                out.append({"type": "text", "text": p.text})  # type: ignore[union-attr]
            elif kind is ImagePart and p.provider_data is None:  # type: ignore[union-attr]
                out.append(_image(p))  # type: ignore[arg-type]
            elif kind is not ThinkingPart:
                part = self._write_part(p)
                if part is not None:
                    out.append(part)
        return out

    def _write_system(self, message: ChatMessage, out: list[WireMessage]) -> None:
        """A system (or developer) message; its images and files follow in a user message (OC7)."""
        own = self._own(message.provider_data)
        content = message.content
        split = (content, []) if isinstance(content, str) else self._split_plain(content)
        plain = split is not None
        text, pics = split if split is not None else self._text_and_moved(content)  # type: ignore[arg-type]
        if own is None and (plain or not (isinstance(content, tuple) and self._needs_list(content))):
            self._append_turn(out, {"role": "system", "content": text})
        else:
            wire = self._write_own("system", message, self._listed)
            if wire.get("role") == "developer" and not self.developer_role:
                wire["role"] = "system"
            self._append_turn(out, wire)
        if pics:  # OC7: a system message carries no images
            self._append_turn(out, {"role": "user", "content": self._labelled("the system message", pics)})

    def _listed(self, content: Sequence[Part]) -> list[dict[str, Any]]:
        """The parts a system, tool or assistant message keeps in its own content list (text, refusals, parts
        kept verbatim, Mistral's thinking chunks), written."""
        out = []
        for p in content:
            if _moved(p) or self._is_field(p):
                continue
            if isinstance(p, ThinkingPart):
                if self._is_chunk(p):
                    out.append(self._write_chunk(p))
                continue
            part = self._write_part(p)
            if part is not None:
                out.append(part)
        return out

    def _write_own(self, role: str, message: ChatMessage,
                   parts: Callable[[Sequence[Part]], list[dict[str, Any]]]) -> WireMessage:
        """A system, developer or user message read from this provider's own body: as it was spelled."""
        own = self._own(message.provider_data) or {}
        form = own.get(FORM) or {}
        wire: WireMessage = {"role": form.get("role", role)}
        value = self._wire_content(role, message.content, form.get("content"), parts)
        if value is not _OMITTED:
            wire["content"] = value
        wire.update(_fields(own))
        return wire

    def _wire_content(self, role: str, content: str | tuple[Part, ...], spelled: str | None,
                      parts: Callable[[Sequence[Part]], list[dict[str, Any]]]) -> Any:
        """A message's `content` as the wire spelled it (`spelled`, the form's `content`; None: as the writer
        does: a user's list as a list, any other as a string, an assistant's empty one as null), or `_OMITTED`.
        What `_content_form` reads back."""
        as_list = spelled == "list" or (spelled is None and not isinstance(content, str) and (
            role == "user" or self._needs_list(content)))
        if not as_list:
            text = content if isinstance(content, str) else self._text_and_moved(content)[0]
            empty = not text and (isinstance(content, str) or not self._needs_list(content))
            if empty and spelled == "omitted":
                return _OMITTED
            if empty and (spelled == "null" or (role == "assistant" and spelled != "string")):
                return None
            return text
        if isinstance(content, str):
            return [{"type": "text", "text": content}] if content else []
        return parts(content)

    def _wire_name(self, name: str) -> str:
        """A tool name as the provider accepts it (hook: Mistral restricts names)."""
        return name

    def _append_turn(self, out: list[WireMessage], message: WireMessage) -> None:
        """Append a user or system message to `out` (hook: Mistral inserts turns where its role order needs them,
        and sends a later system message as user text)."""
        out.append(message)

    def _on_assistant(self, out: list[WireMessage]) -> None:
        """Called before every kept assistant message, written or not (hook for Mistral's role order)."""

    def _finish(self, out: list[WireMessage]) -> None:
        """Called once after the last message (hook: Mistral never ends on an assistant message)."""

    def _labelled(self, source: str, pics: Sequence[ImagePart | FilePart]) -> list[dict[str, Any]]:
        """Image (and file) parts moved out of a non-user message, after a line that says where they come from."""
        out: list[dict[str, Any]] = [{"type": "text", "text": f"Images from {source}:"}]
        for p in pics:
            part = _image(p) if isinstance(p, ImagePart) and p.provider_data is None else self._write_part(p)
            if part is not None:
                out.append(part)
        return out

    def _write_assistant(
        self,
        message: ChatMessage,
        ids: IdAssigner,
        waiting: Waiting,
        images: list[dict[str, Any]],
        out: list[WireMessage],
    ) -> None:
        """The assistant message (appended to `out`), its calls with wire ids; its images queue for after the
        tool run (a user message with its images alone goes through `_append_turn`)."""
        content = message.content
        own = self._own(message.provider_data) if message.provider_data is not None else None
        calls = message.tool_calls
        fields: dict[str, Any] = {}  # message fields held in the content (the refusal, audio)
        reasoning = ""
        pics: Sequence[ImagePart | FilePart] | None
        value: Any
        split = None if own is not None else (content, None) if isinstance(content, str) else \
            self._split_plain(content)
        if split is not None:  # the common case: text and images
            text, pics = split
            value = text or None
        else:
            pics = None if isinstance(content, str) else self._text_and_moved(content)[1]
            if not isinstance(content, str):
                fields = self._content_fields(content)
                reasoning = self._own_reasoning(content)
            value = self._wire_content("assistant", content, _form(own).get("content"), self._listed)
        if not calls and not value and not fields and not reasoning and not own:
            if pics:
                # OC7: an assistant message carries no images; nothing else is left of it to send.
                self._append_turn(out, {"role": "user", "content": self._labelled("the assistant", pics)})
            return  # thinking only: Chat Completions has no field for it (KI3: empty is rejected)
        wire: WireMessage = {"role": "assistant"}
        if value is not _OMITTED:
            wire["content"] = value
        wire.update(fields)
        if self.reasoning_provider is not None:
            # Any provider's thinking goes back as its text only (signatures are valid only where made).
            thinking = "" if isinstance(content, str) else _thinking_text(content)
            if thinking or (calls and (calls[0].provider_data is None or any(not self._is_legacy(c) for c in calls))):
                # KI2: every tool-call message carries it, "" when the history has no thinking to give back
                wire["reasoning_content"] = thinking
        elif reasoning:
            wire["reasoning_content"] = reasoning  # DeepSeek-style: this provider's own, sent back
        if calls:
            self._write_calls(calls, ids, waiting, wire)
        if own:
            wire.update(_fields(own))
        out.append(wire)
        if pics:
            label = self._labelled("the assistant", pics)
            if calls:
                images.extend(label)  # OC1: tool messages come right after the calls
            else:
                self._append_turn(out, {"role": "user", "content": label})

    def _write_calls(self, calls: Sequence[ToolCall], ids: IdAssigner, waiting: Waiting, wire: WireMessage) -> None:
        """An assistant message's calls into `wire` (its `tool_calls`, or the legacy `function_call`), with wire
        ids; each call's (wire id, wire name) queues in `waiting` for the tool message that answers it."""
        wire_calls = []
        for call in calls:
            name = call.name
            wire_name = self._wire_name(name)
            call_id = ids.next_id(name)
            if call.provider_data is None or self.name not in call.provider_data:
                waiting.append((call_id, wire_name))
                wire_calls.append({
                    "id": call_id,
                    "type": "function",
                    "function": {"name": wire_name, "arguments": arguments_json(call)},  # OC6
                })
                continue
            written = self._write_call(call, call_id, wire_name)
            if written is None:  # the legacy `function_call` field
                waiting.append((LEGACY_ID, wire_name))
                wire["function_call"] = self._write_function_call(call, wire_name)
            else:
                waiting.append((call_id, wire_name))
                wire_calls.append(written)
        if wire_calls:
            wire["tool_calls"] = wire_calls

    def _write_call(self, call: ToolCall, call_id: str, wire_name: str) -> dict[str, Any] | None:
        """A call read from this provider's own body, as it was spelled (None: the legacy `function_call`)."""
        own = self._own(call.provider_data) or {}
        form = _form(own)
        if form.get("field") == "function_call":
            return None
        rest = _fields(own, ("function", "custom"))
        kind = form.get("type", "function")
        if kind == "custom":
            custom = {"name": wire_name, "input": arguments_json(call), **(own.get("custom") or {})}
            return {"id": call_id, "type": "custom", "custom": custom, **rest}
        if kind not in ("function", "omitted"):  # a type not known here: kept as it was, under its wire id
            return {"id": call_id, "type": kind, **_fields(own)}
        arguments: Any = arguments_json(call)
        if form.get("arguments") == "object" and call.raw_arguments is None and isinstance(call.arguments, dict):
            arguments = call.arguments
        function = {"name": wire_name, "arguments": arguments, **(own.get("function") or {})}
        if form.get("arguments") == "omitted" and call.arguments == {} and call.raw_arguments is None:
            del function["arguments"]
        if kind == "omitted":
            return {"id": call_id, "function": function, **rest}
        return {"id": call_id, "type": "function", "function": function, **rest}

    def _write_function_call(self, call: ToolCall, wire_name: str) -> dict[str, Any]:
        """The legacy `function_call` field of an assistant message."""
        own = self._own(call.provider_data) or {}
        return {"name": wire_name, "arguments": arguments_json(call), **_fields(own)}

    def _write_result(self, message: ChatMessage, waiting: Waiting, images: list[dict[str, Any]]) -> WireMessage:
        """A `role:"tool"` message answering the first call still waiting, with text only; its images queue for a
        user message after the run. A legacy `function_call`'s result is a `role:"function"` message."""
        call_id, wire_name = waiting.popleft()
        content = message.content
        split = (content, []) if isinstance(content, str) else self._split_plain(content)
        plain = split is not None
        text, pics = split if split is not None else self._text_and_moved(content)  # type: ignore[arg-type]
        own = self._own(message.provider_data)
        if pics:
            images.extend(self._labelled(f"tool result {call_id or wire_name}", pics))  # OC7
            text = text or _NO_TEXT_FOR_IMAGES
        if message.is_error:
            text = ERROR_PREFIX + text  # no error flag in Chat Completions
        if call_id == LEGACY_ID:
            wire: WireMessage = {"role": "function", "name": wire_name, "content": text}
        elif self.tool_message_name:
            wire = {"role": "tool", "tool_call_id": call_id, "name": wire_name, "content": text}
        else:
            wire = {"role": "tool", "tool_call_id": call_id, "content": text}
        if own is None and (plain or not (isinstance(content, tuple) and self._needs_list(content))):
            return wire
        form = _form(own)
        if not message.is_error and not pics:  # (an error's prefix, a moved image's note: a string)
            value = self._wire_content("tool", content, form.get("content"), self._listed)
            if value is _OMITTED:
                del wire["content"]
            else:
                wire["content"] = value
        if form.get("name") == "omitted":
            wire.pop("name", None)
        if own:
            wire.update(_fields(own))
        return wire

    def _write_tool(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        """A function tool definition."""
        function: dict[str, Any] = {"name": self._wire_name(name)}
        if description:
            function["description"] = description
        function["parameters"] = parameters
        return {"type": "function", "function": function}

    # ------------------------------------------------------------------------------- write: parts and forms

    def _own(self, provider_data: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """This provider's entry of a `provider_data` (None when it has none)."""
        if provider_data is None:
            return None
        own = provider_data.get(self.name)
        return own if isinstance(own, dict) else None

    def _split_plain(self, content: Sequence[Part]) -> tuple[str, list[ImagePart]] | None:
        """`_split` of a content of text, images and others' thinking with nothing kept for this provider (what the
        writer writes as it always did, in one pass), or None for any other content."""
        texts: list[str] = []
        pics: list[ImagePart] = []
        own_thinking = self.name if self.reasoning_provider is None else None
        for p in content:
            kind = type(p)
            if kind is TextPart:
                if p.provider_data is not None:  # type: ignore[union-attr]
                    return None
                texts.append(p.text)  # type: ignore[union-attr]
            elif kind is ImagePart:
                if p.provider_data is not None:  # type: ignore[union-attr]
                    return None
                pics.append(p)  # type: ignore[arg-type]
            elif kind is not ThinkingPart or (
                    own_thinking is not None and p.provider == own_thinking):  # type: ignore[union-attr]
                return None  # a file, a part kept verbatim, this provider's own reasoning
        return "\n".join(texts), pics

    def _is_field(self, part: Part) -> bool:
        """True for a text part that is the assistant's `refusal` field, not a part of its content."""
        return type(part) is TextPart and _form(self._own(part.provider_data)).get("field") == "refusal"

    def _text_and_moved(self, content: Sequence[Part]) -> tuple[str, list[ImagePart | FilePart]]:
        """A content's text parts joined by newlines (the refusal field aside), and its images and files."""
        texts = [p.text for p in content if isinstance(p, TextPart) and not self._is_field(p)]
        return "\n".join(texts), [p for p in content if isinstance(p, (ImagePart, FilePart))]

    def _is_chunk(self, part: ThinkingPart) -> bool:
        """True when a thinking part is one of this provider's `thinking` content parts (Mistral's chunks)."""
        if not self.thinking_parts or part.provider != self.name:
            return False
        return _form(self._own(part.provider_data)).get("field") != "reasoning_content"

    def _own_reasoning(self, content: Sequence[Part]) -> str:
        """This provider's own `reasoning_content` text in a content (DeepSeek-style), joined."""
        return "\n".join(p.text for p in content if isinstance(p, ThinkingPart) and p.provider == self.name
                         and p.text and not self._is_chunk(p))

    def _needs_list(self, content: Sequence[Part]) -> bool:
        """True when a system, assistant or tool content cannot be written as a string without losing a part:
        a refusal part, a text part with fields of its own, a part kept verbatim, a thinking chunk."""
        for p in content:
            if isinstance(p, NativePart):
                if "type" in p.data:
                    return True
            elif isinstance(p, TextPart):
                if p.provider_data is not None and self._own(p.provider_data) is not None and not self._is_field(p):
                    return True
            elif isinstance(p, ThinkingPart) and self._is_chunk(p):
                return True
        return False

    def _content_fields(self, content: Sequence[Part]) -> dict[str, Any]:
        """The message fields a content holds: the assistant's `refusal` text, and fields kept verbatim (`audio`)."""
        fields: dict[str, Any] = {}
        for p in content:
            if type(p) is NativePart and "type" not in p.data:
                fields.update(p.data)
            elif isinstance(p, TextPart) and self._is_field(p):
                fields["refusal"] = p.text
        return fields

    def _write_part(self, part: Part) -> dict[str, Any] | None:
        """One content part as this provider writes it (None: thinking, which goes elsewhere or nowhere)."""
        if type(part) is TextPart:
            own = self._own(part.provider_data)
            if own is None:
                return {"type": "text", "text": part.text}
            if _form(own).get("type") == "refusal":
                return {"type": "refusal", "refusal": part.text, **_fields(own)}
            return {"type": "text", "text": part.text, **_fields(own)}
        if type(part) is ImagePart:
            own = self._own(part.provider_data)
            if own is None:
                return _image(part)
            url = image_data_url(part)
            if _form(own).get("image_url") == "string":
                return {"type": "image_url", "image_url": url, **_fields(own, ("image_url",))}
            inner = {"url": url, **(own.get("image_url") or {})}
            return {"type": "image_url", "image_url": inner, **_fields(own, ("image_url",))}
        if type(part) is FilePart:
            return self._write_file(part)
        if type(part) is NativePart:
            return dict(part.data) if "type" in part.data else None  # (message fields: `_content_fields`)
        return None

    def _write_file(self, part: FilePart) -> dict[str, Any]:
        """A file: inline audio as `input_audio`, the rest as a `file` part; a file Chat cannot carry (by URL, or
        uploaded to another provider) as a line of text naming it."""
        own = self._own(part.provider_data) or {}
        form = _form(own)
        media = part.media_type or ""
        audio = form.get("type") == "input_audio" or (
            not own and part.data is not None and media.startswith("audio/"))
        if audio and part.data is not None:
            inner = {"data": part.data, "format": _AUDIO_FORMAT.get(media, media.removeprefix("audio/")),
                     **(own.get("input_audio") or {})}
            return {"type": "input_audio", "input_audio": inner, **_fields(own, ("input_audio",))}
        file: dict[str, Any] = {}
        if part.data is not None:
            file["file_data"] = part.data if form.get("file_data") == "base64" else f"data:{media};base64,{part.data}"
        elif part.file_id is not None and (part.provider is None or self.accepts_native(part.provider)):
            file["file_id"] = part.file_id
        else:
            where = part.url if part.url is not None else f"file id {part.file_id} at {part.provider}"
            named = f" {part.filename}" if part.filename else ""
            return {"type": "text", "text": f"[file{named}: {where}]"}
        if part.filename is not None:
            file["filename"] = part.filename
        file.update(own.get("file") or {})
        return {"type": "file", "file": file, **_fields(own, ("file",))}

    def _write_chunk(self, part: ThinkingPart) -> dict[str, Any]:
        """One of Mistral's `thinking` chunks, as it came when its text is unchanged."""
        own = self._own(part.provider_data) or {}
        chunks = own.get("thinking")
        if not (isinstance(chunks, list) and _chunks_text(chunks) == part.text) and not (
                isinstance(chunks, str) and chunks == part.text):
            chunks = [{"type": "text", "text": part.text}]
        wire: dict[str, Any] = {"type": "thinking", "thinking": chunks}
        if part.signature is not None:
            wire["signature"] = part.signature
        wire.update(_fields(own, ("thinking",)))
        return wire

    # ------------------------------------------------------------------------------------------ read

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """The history of a saved body (or its `messages` list); the body's `tools` are not history."""
        data = self._plain_request(data)  # SDK objects (a `ChatCompletionMessage`) as their dicts
        with error_context(provider=self.name):
            if isinstance(data, Mapping):
                items = data.get("messages")
                if not isinstance(items, list):
                    raise ReadError("a request body needs a 'messages' list", path="messages")
            elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
                items = list(data)
            else:
                raise ReadError(f"expected a request body or a message list, got {type(data).__name__}")
            return self._read_items(items, raw=False)

    def _sdk_item(self, item: Any) -> Any:
        """An SDK message's dict as the wire has it: its `content=None` is the wire's null, which `model_dump`
        (exclude_none) leaves out, and the reader tells a null content from an omitted one."""
        if isinstance(item, dict) and item.get("role") == "assistant" and "content" not in item:
            item = {"role": "assistant", "content": None, **{k: v for k, v in item.items() if k != "role"}}
        return super()._sdk_item(item)

    def _read_groups(self, items: list[Any]) -> list[list[ChatMessage]]:
        """One neutral message per wire message (`repair_body` keeps each one repair leaves alone); a message of a
        plain shape is read unvalidated (`_chat_fast.read_plain`), unless a subclass reads otherwise."""
        # a tool message named by its call (`tool_message_name`) is read with its call at hand: not by the fast one
        fast = _chat_fast.inherits(type(self), OpenAIChat, _READERS) and not self.tool_message_name
        plain = _chat_fast.read_plain if fast else None
        with error_context(provider=self.name):
            return [[m] for m in self._read_items(items, raw=True, plain=plain)]

    def _read_items(self, items: list[Any], *, raw: bool,
                    plain: Callable[[Any], ChatMessage | None] | None = None) -> list[ChatMessage]:
        """Every wire message as a ChatMessage, in order (with `raw`, each function call keeps its arguments text;
        with `plain`, a message of a plain shape is read by it, unvalidated).

        A legacy `function_call` has no id: it gets `call_{i}_{k}`, the id repair gives an empty one, and the
        `role:"function"` messages after it answer it under that id."""
        history = []
        legacy = ""  # the id of the last assistant message's legacy call
        calls: dict[str, str] = {}  # the last assistant message's call ids, each to its tool's name
        for i, item in enumerate(items):
            fast = plain(item) if plain is not None else None
            if fast is not None:
                if fast.role == "assistant":
                    legacy, calls = "", {c.id: c.name for c in fast.tool_calls}
                history.append(fast)
                continue
            with error_context(path=f"messages[{i}]"):
                role = item.get("role") if isinstance(item, Mapping) else None
                if role == "function":
                    message = self._read_function_result(item, legacy)
                elif role == "assistant":
                    message = self._read_assistant(item, at=i)
                    legacy = next((c.id for c in message.tool_calls if self._is_legacy(c)), "")
                    calls = {c.id: c.name for c in message.tool_calls}
                    if raw:
                        message = _with_raw_arguments(message, item)
                else:
                    message = self._read_message(item)
                    if role == "tool" and self.tool_message_name:
                        message = self._named_result(message, item, calls)
                history.append(message)
        return history

    def _stubs(self, items: list[Any]) -> Stubs | None:
        """The fast path of `repair_body` (`providers._spans`) on lists of plain messages (`_chat_fast.stubs`), for
        this class and the dialects that read, check and write as it does."""
        if self.tool_message_name or self.reasoning_provider is not None or \
                not _chat_fast.inherits(type(self), OpenAIChat, _READERS + _CHECKERS + _WRITERS):
            return None
        return _chat_fast.stubs(items)

    def _assemble(self, items: list[Any], stubs: Stubs, plan: SpanPlan,
                  is_read_only: IsReadOnly | None) -> tuple[list[Any], list[int]]:
        """The list the plan makes of plain messages: what is kept as it was, a renamed call or result as a copy
        under its new id (what the writer writes of a plain message), synthetic results and notes by the writer."""
        out: list[Any] = []
        rewritten: list[int] = []
        for step, index, argument in plan.steps:
            if step == KEEP:
                out += items[index:argument]
                continue
            rewritten.append(len(out))
            item = items[index]
            if step == CALL:
                out.append({**item, "tool_calls": [{**call, "id": final}
                                                   for call, final in zip(item["tool_calls"], argument)]})
            elif step == ANSWER:
                out.append({**item, "tool_call_id": argument})
            elif step == SYNTHETIC:
                ci, final = argument
                name = item["tool_calls"][ci]["function"]["name"]
                result = synthetic_result(final, name, read_only=reads_only(is_read_only, name))
                out.append(self._write_result(result, deque([(final, name)]), []))
            else:  # NOTE: a plain tool message, read as the reader reads it
                note = orphan_note(_chat_fast.read_plain(item))  # type: ignore[arg-type]
                out += self._write_messages([note], None, IdAssigner([]), within=True)
        return out, rewritten

    def _list_valid(self, items: list[Any]) -> bool:
        """`repair_body`'s fast re-check: a list of plain messages judged in one pass (`_chat_fast.list_valid`),
        unless a subclass checks more rules (Kimi, Mistral)."""
        return _chat_fast.inherits(type(self), OpenAIChat, _CHECKERS) and _chat_fast.list_valid(
            items, self.id_max_length)

    def from_response(self, response: Any) -> ChatMessage:
        """The reply's first choice as an assistant message: text, calls (arguments parsed), thinking."""
        with error_context(provider=self.name):
            data = to_plain(response, provider=self.name)
            choices = data.get("choices")
            if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
                raise ReadError("a response needs a non-empty 'choices' list", path="choices")
            message = choices[0].get("message")
            if not isinstance(message, Mapping):
                raise ReadError("the first choice has no 'message'", path="choices[0].message")
            with error_context(path="choices[0].message"):
                return self._read_assistant(message, reply=True)

    def _pd(self, rest: dict[str, Any], form: Mapping[str, str] | None = None) -> dict[str, Any] | None:
        """A `provider_data` of this provider from a wire object's other fields and its spelling (None: neither)."""
        if form:
            rest = {**rest, FORM: dict(form)}
        return {self.name: rest} if rest else None

    def _read_message(self, item: Any) -> ChatMessage:
        """One wire message as a ChatMessage."""
        if not isinstance(item, Mapping):
            raise ReadError(f"expected a message object, got {type(item).__name__}")
        role = item.get("role")
        if role in ("system", "developer", "user"):
            content = self._read_content(item.get("content"))
            neutral = "user" if role == "user" else "system"
            if len(item) == 2 and isinstance(item.get("content"), str) and role != "developer":
                return ChatMessage(role=neutral, content=content)  # the common case: nothing else to keep
            form: dict[str, str] = {"role": "developer"} if role == "developer" else {}
            spelled = self._content_form(item, content, neutral)
            if spelled is not None:
                form["content"] = spelled
            return ChatMessage(role=neutral, content=content,
                               provider_data=self._pd(_rest(item, _CONTENT_FIELDS), form))
        if role == "assistant":
            return self._read_assistant(item)
        if role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str):
                raise ReadError("a tool message needs a string 'tool_call_id'", path="tool_call_id")
            name = item.get("name")
            tool_name = name if isinstance(name, str) else None
            content = self._read_content(item.get("content"))
            named = ("role", "tool_call_id", "content", "name") if self.tool_message_name and tool_name else \
                ("role", "tool_call_id", "content")
            rest = _rest(item, named) if len(item) != len(named) or "content" not in item else {}
            spelled = self._content_form(item, content, "tool")
            return ChatMessage(role="tool", tool_call_id=call_id, tool_name=tool_name, content=content,
                               provider_data=self._pd(rest, {"content": spelled} if spelled else None))
        if role == "function":
            return self._read_function_result(item, "")
        raise ReadError(f"unsupported role {brief(role)}; expected system, developer, user, assistant, tool or "
                        "function", path="role")

    def _named_result(self, message: ChatMessage, item: Mapping[str, Any], calls: Mapping[str, str]) -> ChatMessage:
        """A tool message of a provider that names results (Kimi, Mistral), with the name kept when it is not the
        one the writer gives (its call's), or the lack of one."""
        name = item.get("name")
        if isinstance(name, str) and name == self._wire_name(calls.get(message.tool_call_id or "", name)):
            return message
        own = dict(self._own(message.provider_data) or {})
        if name is None:
            own[FORM] = {**_form(own), "name": "omitted"}
        else:
            own["name"] = name
        return replace_field(message, "provider_data", {**(message.provider_data or {}), self.name: own})

    def _read_function_result(self, item: Mapping[str, Any], answering: str) -> ChatMessage:
        """A legacy `role:"function"` message: the result of the legacy `function_call` before it."""
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ReadError("a function message needs a string 'name'", path="name")
        content = self._read_content(item.get("content"))
        spelled = self._content_form(item, content, "tool")
        return ChatMessage(role="tool", tool_call_id=answering, tool_name=name, content=content,
                           provider_data=self._pd(_rest(item, ("role", "name", "content")),
                                                  {"content": spelled} if spelled else None))

    def _content_form(self, item: Mapping[str, Any], content: str | tuple[Part, ...], role: str) -> str | None:
        """How the wire spelled a message's content, when `_wire_content` would spell the neutral one otherwise
        (None: alike)."""
        if "content" not in item:
            return "omitted"
        wire = item["content"]
        if isinstance(content, str):
            as_list, text = False, content
        else:
            as_list = role == "user" or self._needs_list(content)
            text = self._text_and_moved(content)[0]
        if wire is None:
            return None if role == "assistant" and not as_list and not text else "null"
        if isinstance(wire, str):
            return "string" if as_list or (role == "assistant" and not wire) else None
        return None if as_list else "list"

    def _read_assistant(self, item: Mapping[str, Any], at: int = 0, *, reply: bool = False) -> ChatMessage:
        """An assistant message (of a body or a reply) with its calls, its refusal, audio and reasoning; `at` is
        its index in the body (a legacy `function_call`'s id). Of a `reply`, only what it says is kept: not how
        its content was spelled, nor its empty fields (`refusal: null`, `annotations: []`)."""
        content = self._read_content(item.get("content"))
        calls = item.get("tool_calls")
        if calls is None:
            calls = []
        if not isinstance(calls, list):
            raise ReadError("'tool_calls' must be a list", path="tool_calls")
        tool_calls = [self._read_call(c, k) for k, c in enumerate(calls)]
        if item.keys() <= _PLAIN_ASSISTANT and (calls or "tool_calls" not in item) and (
                reply or self._content_form(item, content, "assistant") is None):
            return ChatMessage(role="assistant", content=content, tool_calls=tuple(tool_calls))  # the common case
        function_call = item.get("function_call")
        if function_call is not None:
            tool_calls.append(self._read_function_call(function_call, f"call_{at}_{len(tool_calls)}"))
        rest = _rest(item, _ASSISTANT_FIELDS)
        extra: list[Part] = []  # parts of the message fields that hold content
        reasoning = item.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            field = {self.name: {FORM: {"field": "reasoning_content"}}} if self.thinking_parts else None
            extra.append(ThinkingPart(text=reasoning, provider=self.name, provider_data=field))
        elif "reasoning_content" in item and not (self.reasoning_provider and reasoning == "" and calls):
            rest["reasoning_content"] = reasoning  # (Kimi writes "" on every message with tool calls: KI2)
        refusal = item.get("refusal")
        if isinstance(refusal, str) and refusal:
            extra.append(TextPart(text=refusal, provider_data={self.name: {FORM: {"field": "refusal"}}}))
        elif "refusal" in item:
            rest["refusal"] = refusal
        audio = item.get("audio")
        if audio is not None:
            extra.append(NativePart(provider=self.name, data={"audio": audio}))
        elif "audio" in item:
            rest["audio"] = None
        if "function_call" in item and function_call is None:
            rest["function_call"] = None
        if "tool_calls" in item and not calls:
            rest["tool_calls"] = calls
        if extra:
            wire_parts = list(content) if not isinstance(content, str) else (
                [TextPart(text=content)] if content else [])
            thinking = [p for p in extra if isinstance(p, ThinkingPart)]
            content = (*thinking, *wire_parts, *(p for p in extra if not isinstance(p, ThinkingPart)))
        spelled = None if reply else self._content_form(item, content, "assistant")
        form = {"content": spelled} if spelled else {}
        if reply:
            rest = {k: v for k, v in rest.items() if v is not None and v != []}
        return ChatMessage(role="assistant", content=content, tool_calls=tuple(tool_calls),
                           provider_data=self._pd(rest, form))

    def _read_call(self, call: Any, k: int) -> ToolCall:
        """A function or custom tool call (a call of a type not known here is kept as it was, under its id and a
        name); JSON-text arguments become an object when they parse."""
        path = f"tool_calls[{k}]"
        if not isinstance(call, Mapping):
            raise ReadError("a tool call needs a 'function' with a non-empty 'name'", path=path)
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):  # (`check`: SHAPE)
            raise ReadError(f"'id' must be a string, got {type(call_id).__name__}", path=f"{path}.id")
        kind = _call_kind(call)
        if kind == "custom":
            return self._read_custom_call(call, call_id or "", path)
        if kind != "function":
            if kind is None:
                raise ReadError("a tool call's 'type' must be a non-empty string", path=f"{path}.type")
            payload = call.get(kind)
            name = payload.get("name") if isinstance(payload, Mapping) else None
            return ToolCall(id=call_id or "", name=name if isinstance(name, str) and name else kind,
                            provider_data=self._pd(_rest(call, ("id", "type")), {"type": kind}))
        function = _named_function(call)
        if function is None:
            raise ReadError("a tool call needs a 'function' with a non-empty 'name'", path=path)
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, (str, dict)):  # (`check`: OC6)
            raise ReadError(f"'arguments' must be JSON text (or an object), got {type(arguments).__name__}",
                            path=f"{path}.function.arguments")
        parsed = arguments if arguments is not None else {}
        if call.keys() == _CALL_FIELDS and len(function) == 2 and isinstance(arguments, str):
            return ToolCall(id=call_id or "", name=function["name"], arguments=parsed)  # the common case
        rest = _rest(call, _CALL_FIELDS)
        inner = _rest(function, ("name", "arguments"))
        form = {}
        if "type" not in call:
            form["type"] = "omitted"
        if isinstance(arguments, dict):
            form["arguments"] = "object"
        elif "arguments" not in function:
            form["arguments"] = "omitted"
        elif arguments is None:
            inner["arguments"] = None
        if inner:
            rest["function"] = inner
        return ToolCall(id=call_id or "", name=function["name"], arguments=parsed,
                        provider_data=self._pd(rest, form))

    def _read_custom_call(self, call: Mapping[str, Any], call_id: str, path: str) -> ToolCall:
        """A custom tool call: free-text `input` for a custom tool, answered by a tool message like any call."""
        custom = call.get("custom")
        name = custom.get("name") if isinstance(custom, Mapping) else None
        text = custom.get("input") if isinstance(custom, Mapping) else None
        if not isinstance(custom, Mapping) or not isinstance(name, str) or not name or not isinstance(text, str):
            raise ReadError("a custom tool call needs a 'custom' object with a non-empty 'name' and a string 'input'",
                            path=f"{path}.custom")
        rest = _rest(call, ("id", "type", "custom"))
        inner = _rest(custom, ("name", "input"))
        if inner:
            rest["custom"] = inner
        return ToolCall(id=call_id, name=name, arguments=text, raw_arguments=text,
                        provider_data=self._pd(rest, {"type": "custom"}))

    def _read_function_call(self, function_call: Any, call_id: str) -> ToolCall:
        """The legacy `function_call` field of an assistant message, as a call under `call_id`."""
        name = function_call.get("name") if isinstance(function_call, Mapping) else None
        arguments = function_call.get("arguments") if isinstance(function_call, Mapping) else None
        if not isinstance(function_call, Mapping) or not isinstance(name, str) or not name or \
                not isinstance(arguments, str):
            raise ReadError("'function_call' needs a non-empty 'name' and string 'arguments'", path="function_call")
        return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=arguments,
                        provider_data=self._pd(_rest(function_call, ("name", "arguments")),
                                               {"field": "function_call"}))

    def _is_legacy(self, call: ToolCall) -> bool:
        """True for the call of an assistant message's legacy `function_call` field."""
        return _form(self._own(call.provider_data)).get("field") == "function_call"

    def _read_content(self, content: Any) -> str | tuple[Part, ...]:
        """A string, null, or a list of parts."""
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        if not isinstance(content, list):
            raise ReadError(f"content must be a string or a list of parts, got {type(content).__name__}",
                            path="content")
        return tuple(self._read_part(part, j) for j, part in enumerate(content))

    def _read_part(self, part: Any, j: int) -> Part:
        """One content part: text, refusal, image, file and audio parts modelled, any other kept verbatim."""
        path = f"content[{j}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            if len(part) == 2:
                return TextPart(text=part["text"])
            return TextPart(text=part["text"], provider_data=self._pd(_rest(part, ("type", "text"))))
        if kind == "refusal" and isinstance(part.get("refusal"), str):
            return TextPart(text=part["refusal"],
                            provider_data=self._pd(_rest(part, ("type", "refusal")), {"type": "refusal"}))
        if kind == "image_url":
            image = self._read_image(part)
            if image is not None:
                return image
        if kind == "input_audio" or kind == "file":
            file = self._read_file(part, kind)
            return file if file is not None else NativePart(provider=self.name, data=part)
        if kind == "thinking" and self.thinking_parts:
            return self._read_chunk(part)
        problem = self._part_problem(part) if kind in ("text", "refusal", "image_url") or not kind or \
            not isinstance(kind, str) else None
        if problem is not None:  # a kind read here with a malformed field: what `check` says of it
            field, text = problem
            raise ReadError(text, path=path + field)
        return NativePart(provider=self.name, data=part)  # a type the model does not name: kept as it is

    def _read_image(self, part: Mapping[str, Any]) -> ImagePart | None:
        """An `image_url` part (its `detail` and other fields kept), or None when it holds no URL."""
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        if not isinstance(url, str) or not url:
            return None  # malformed: `_part_problem` says where
        parsed = parse_data_url(url)
        if parsed.data is not None and image_data_url(parsed) != url:
            parsed = ImagePart(url=url)  # a data URI the neutral form would spell otherwise: kept as a URL
        rest = _rest(part, ("type", "image_url"))
        form = None
        if isinstance(image, Mapping):
            inner = _rest(image, ("url",))
            if inner:
                rest["image_url"] = inner
        else:
            form = {"image_url": "string"}
        if not rest and form is None:
            return parsed
        return ImagePart(media_type=parsed.media_type, data=parsed.data, url=parsed.url,
                         provider_data=self._pd(rest, form))

    def _read_file(self, part: Mapping[str, Any], kind: str) -> FilePart | None:
        """An `input_audio` or `file` part as a FilePart (its other fields kept), or None when it does not map."""
        inner = part.get(kind)
        if not isinstance(inner, Mapping):
            return None
        rest = _rest(part, ("type", kind))
        if kind == "input_audio":
            data, fmt = inner.get("data"), inner.get("format")
            if not isinstance(data, str) or not isinstance(fmt, str) or not fmt:
                return None
            media = _AUDIO_MEDIA.get(fmt, f"audio/{fmt}")
            kept = _rest(inner, ("data", "format"))
            if _AUDIO_FORMAT.get(media, media.removeprefix("audio/")) != fmt:
                kept["format"] = fmt
            if kept:
                rest["input_audio"] = kept
            return FilePart(data=data, media_type=media, provider_data=self._pd(rest, {"type": "input_audio"}))
        data, file_id, filename = inner.get("file_data"), inner.get("file_id"), inner.get("filename")
        if (data is None) == (file_id is None) or not isinstance(data or file_id, str) or (
                filename is not None and not isinstance(filename, str)):
            return None
        kept = _rest(inner, ("file_data", "file_id", "filename"))
        if kept:
            rest["file"] = kept
        if file_id is not None:
            return FilePart(file_id=file_id, filename=filename, provider=self.name, provider_data=self._pd(rest))
        assert isinstance(data, str)
        inline = _data_url(data)
        if inline is None:  # bare base64, as the SDK's docstring has it
            return FilePart(data=data, media_type=_media_of(inner), filename=filename,
                            provider_data=self._pd(rest, {"file_data": "base64"}))
        return FilePart(data=inline[1], media_type=inline[0], filename=filename, provider_data=self._pd(rest))

    def _read_chunk(self, part: Mapping[str, Any]) -> ThinkingPart:
        """One of Mistral's `thinking` chunks: its text, signature, and its chunks when not plain."""
        chunks = part.get("thinking")
        text = _chunks_text(chunks) if isinstance(chunks, list) else str(chunks or "")
        signature = part.get("signature")
        rest = _rest(part, ("type", "thinking", "signature") if isinstance(signature, str) else ("type", "thinking"))
        if chunks != [{"type": "text", "text": text}]:
            rest["thinking"] = chunks
        return ThinkingPart(text=text, signature=signature if isinstance(signature, str) else None,
                            provider=self.name, provider_data=self._pd(rest))

    # ----------------------------------------------------------------------------------------- check

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """The 400s the provider would answer with; a malformed body is reported, never raised."""
        if not isinstance(body, Mapping):
            return [self._problem(SHAPE, "", f"expected a JSON object body, got {type(body).__name__}")]
        messages = body.get("messages")
        if not isinstance(messages, list):
            return [self._problem(SHAPE, "messages", "'messages' must be a list of message objects")]
        problems: list[Problem] = []
        for i, message in enumerate(messages):
            problems.extend(self._check_shape(message, f"messages[{i}]"))
        if problems:
            return problems
        problems.extend(self._check_messages(messages, body))
        return problems

    def _problem(self, code: str, path: str, message: str) -> Problem:
        """A Problem of this provider."""
        return Problem(code=code, path=path, message=message, provider=self.name)

    def _check_shape(self, message: Any, path: str) -> list[Problem]:
        """Structural problems of one message, before any rule can be judged."""
        if not isinstance(message, Mapping):
            return [self._problem(SHAPE, path, "expected a message object")]
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool", "function"):
            return [self._problem(SHAPE, f"{path}.role", f"unknown role {brief(role)}")]
        if role == "function" and not (isinstance(message.get("name"), str) and message["name"]):
            return [self._problem(SHAPE, f"{path}.name", "a function message needs a string 'name'")]
        out: list[Problem] = []
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            out.append(self._problem(SHAPE, f"{path}.content", "content must be a string, a list or null"))
        if isinstance(content, list):
            for j, part in enumerate(content):
                problem = self._part_problem(part)
                if problem is not None:
                    field, text = problem
                    out.append(self._problem(SHAPE, f"{path}.content[{j}]{field}", text))
        if role == "tool" and "tool_call_id" in message and not isinstance(message["tool_call_id"], str):
            out.append(self._problem(SHAPE, f"{path}.tool_call_id", "'tool_call_id' must be a string"))
        calls = message.get("tool_calls")
        if calls is not None:
            if role != "assistant" or not isinstance(calls, list):
                return [*out, self._problem(SHAPE, f"{path}.tool_calls",
                                            "'tool_calls' is a list on assistant messages")]
            for k, call in enumerate(calls):
                problem = _call_problem(call)
                if problem is not None:
                    out.append(self._problem(SHAPE, f"{path}.tool_calls[{k}]{problem[0]}", problem[1]))
                elif "id" in call and not isinstance(call["id"], str):
                    out.append(self._problem(SHAPE, f"{path}.tool_calls[{k}].id", "'id' must be a string"))
        function_call = message.get("function_call")
        if function_call is not None and (role != "assistant" or not isinstance(function_call, Mapping) or not (
                isinstance(function_call.get("name"), str) and function_call["name"]
                and isinstance(function_call.get("arguments"), str))):
            out.append(self._problem(SHAPE, f"{path}.function_call",
                                     "'function_call' is an object with a non-empty 'name' and string 'arguments', "
                                     "on assistant messages"))
        return out

    def _part_problem(self, part: Any) -> tuple[str, str] | None:
        """What is malformed in one content part (the field's path below the part, and why), or None. A part
        of a type not known here is left to the provider (it is read and written back verbatim)."""
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            return "", "expected a content part object"
        kind = part["type"]
        if not kind or (self.part_types is not None and kind not in self.part_types):
            return ".type", self.unknown_part_text.format(kind=repr(kind))
        if kind in ("text", "refusal") and not isinstance(part.get(kind), str):
            return f".{kind}", f"a {kind!r} part needs a string {kind!r}"
        if kind == "image_url":
            image = part.get("image_url")
            if isinstance(image, str) and self.image_url_as_string:
                return (".image_url", _EMPTY_IMAGE_URL) if not image else None
            if not isinstance(image, Mapping) or not isinstance(image.get("url"), str):
                return ".image_url", "an 'image_url' part needs an 'image_url' object with a string 'url'"
            if not image["url"]:
                return ".image_url.url", _EMPTY_IMAGE_URL
        return None

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """OC1-OC7 over a well-shaped message list (hook: Mistral has its own rules)."""
        out: list[Problem] = []
        pending: dict[str, int] = {}  # unanswered call ids of the current assistant message -> call index
        answered: dict[str, int] = {}  # answered id -> index of its tool message
        calls_at = -1  # index of the assistant message whose tool run is open (-1: none)
        for i, message in enumerate(messages):
            role = message["role"]
            path = f"messages[{i}]"
            if role == "tool":
                call_id = message.get("tool_call_id", "")
                if calls_at < 0:  # OC2
                    out.append(self._say("OC2", f"{path}.role"))
                elif call_id in answered:  # OC4
                    out.append(self._say("OC4", f"{path}.tool_call_id", id=call_id,
                                         first=f"messages[{answered[call_id]}]", second=path))
                elif call_id not in pending:  # OC3
                    out.append(self._say("OC3", f"{path}.tool_call_id", id=call_id))
                else:
                    del pending[call_id]
                    answered[call_id] = i
            else:
                if pending:
                    out.append(self._unanswered(calls_at, list(pending)))
                pending, answered, calls_at = {}, {}, -1
                if role == "assistant":
                    out.extend(self._check_assistant(message, i, body))
                    if message.get("tool_calls"):
                        calls_at = i
                        pending = self._check_calls(message["tool_calls"], path, out)
            out.extend(self._check_images(message, i))
        if pending:
            out.append(self._unanswered(calls_at, list(pending)))
        return out

    def _say(self, code: str, path: str, **fields: Any) -> Problem:
        """A Problem with the provider's own text for `code`, its variable parts filled in."""
        return self._problem(code, path, self.texts[code].format(**fields))

    def _unanswered(self, index: int, ids: list[str]) -> Problem:
        """OC1 (KI1 for Kimi): calls of messages[index] left without a tool message."""
        return self._say(self.unanswered_code, f"messages[{index}].role", ids=", ".join(ids))

    def _check_calls(self, calls: list[Any], path: str, out: list[Problem]) -> dict[str, int]:
        """OC4-OC6 on one assistant message's calls; returns its ids, each to its call index."""
        ids: dict[str, int] = {}
        for k, call in enumerate(calls):
            call_id = call.get("id", "")
            here = f"{path}.tool_calls[{k}]"
            if call_id in ids:  # OC4: a second call under one id cannot get its own result
                first = f"{path}.tool_calls[{ids[call_id]}]"
                out.append(self._say("OC4", f"{here}.id", id=call_id, first=first, second=here))
            ids.setdefault(call_id, k)
            limit = self.id_max_length
            if limit is not None and len(call_id) > limit:  # OC5
                where = f"{here}.id"
                out.append(self._say("OC5", where, where=where, limit=limit, length=len(call_id)))
            function = call.get("function") if _call_kind(call) == "function" else None
            arguments = function.get("arguments") if isinstance(function, Mapping) else ""
            if not isinstance(arguments, str):  # OC6
                out.append(self._say("OC6", f"{here}.function.arguments", where=f"{here}.function.arguments",
                                     kind=_json_type(arguments)))
        return ids

    def _check_assistant(self, message: Mapping[str, Any], i: int, body: Mapping[str, Any]) -> list[Problem]:
        """Rules on one assistant message beyond its calls (hook: Kimi's KI2 and KI3)."""
        return []

    def _check_images(self, message: Mapping[str, Any], i: int) -> list[Problem]:
        """OC7 (Mistral's MI11): image parts only in user messages."""
        role = message["role"]
        content = message.get("content")
        if role == "user" or not isinstance(content, list):
            return []
        for j, part in enumerate(content):
            if part.get("type") == "image_url":  # one problem per message, as the API reports it
                return [self._say(self.image_code, f"messages[{i}].content[{j}]", index=i, role=role)]
        return []



    # ------------------------------------------------------------------------------------------ send

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.chat.completions.create(**body)` with an `openai.OpenAI` client (or `AsyncOpenAI`)."""
        create = client.chat.completions.create
        return create(**_sdk_kwargs(create, body))


def _call_problem(call: Any) -> tuple[str, str] | None:
    """What is malformed in one tool call (the field's path below the call, and why), or None; a call of a type
    not known here is left to the provider."""
    if not isinstance(call, Mapping):
        return "", "a tool call needs a 'function' object with a non-empty string 'name'"
    kind = _call_kind(call)
    if kind is None:
        return ".type", "a tool call's 'type' must be a non-empty string"
    if kind == "function" and _named_function(call) is None:
        return "", "a tool call needs a 'function' object with a non-empty string 'name'"
    if kind == "custom":
        custom = call.get("custom")
        if not isinstance(custom, Mapping) or not (isinstance(custom.get("name"), str) and custom["name"]) \
                or not isinstance(custom.get("input"), str):
            return ".custom", "a custom tool call needs a 'custom' object with a non-empty 'name' and a string 'input'"
    return None


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


def _json_type(value: Any) -> str:
    """How OpenAI names a JSON value's type in its errors."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else "a value"


PROVIDER = OpenAIChat()
to_request = PROVIDER.to_request
from_request = PROVIDER.from_request
from_response = PROVIDER.from_response
check = PROVIDER.check
repair_body = PROVIDER.repair_body
send = PROVIDER.send
send_async = PROVIDER.send_async
