"""The Chat Completions wire: its words, the fields the neutral model names, small pure helpers on its dicts,
and the class flags every layer of the adapter reads (`ChatWire`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from chatmend.messages import ChatMessage, FilePart, ImagePart, NativePart, Part, TextPart, ThinkingPart, ToolCall
from chatmend.providers.base import Provider, image_data_url
from chatmend.providers.kept import kept_fields

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
NO_TEXT_FOR_IMAGES = "(image result: see the next message)"
OWN_PART_TYPES = frozenset({"image_url", "input_audio", "file"})
"""Part types of Chat Completions that no other chat shape has (detection)."""
OWN_FIELDS = frozenset({"reasoning_content", "refusal", "name", "function_call"})
"""Message fields of Chat Completions (and the providers speaking it) that no other chat shape has."""
# The API's words for an image URL it cannot use (an empty one is neither an https URL nor a data URL).
EMPTY_IMAGE_URL = ("Invalid image URL: expected an https URL or a base64-encoded data URL with an image MIME type "
                    "(e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got an empty string")
UNKNOWN_PART = ("Invalid value: {kind}. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', "
                 "'audio', and 'file'.")
"""OpenAI's 400 for a part type it does not know, listing the SDK's part types of every role and `audio`: what
`check` says of an empty type (a type not known here passes: providers add some every month)."""
CONTENT_FIELDS = frozenset({"role", "content"})
"""The fields a system, developer or user message's model names (`name` and the rest are kept verbatim)."""
ASSISTANT_FIELDS = frozenset({"role", "content", "tool_calls", "function_call", "refusal", "audio",
                               "reasoning_content"})
WITHIN: WireMessage = {"role": "user", "content": ""}
"""What a run of `repair_body` is written after (`_write_messages(within=True)`): a message, as in a body."""
OMITTED = object()
"""`_wire_content` of a content the wire did not have."""
CALL_FIELDS = frozenset({"id", "type", "function"})
PLAIN_ASSISTANT = frozenset({"role", "content", "tool_calls"})
AUDIO_MEDIA = {"mp3": "audio/mpeg", "wav": "audio/wav"}
AUDIO_FORMAT = {"audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/wav": "wav", "audio/x-wav": "wav"}

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
"""OpenAI's 400 texts per rule (docs/rules.md §1), verbatim with their variable parts as fields."""


def named_function(call: Any) -> Mapping[str, Any] | None:
    """A tool call's `function` object when it names its tool (a non-empty string), else None: what reading and
    checking a call both need first."""
    function = call.get("function") if isinstance(call, Mapping) else None
    if isinstance(function, Mapping) and isinstance(function.get("name"), str) and function["name"]:
        return function
    return None


def stated_call_type(call: Mapping[str, Any]) -> str | None:
    """A call's type as written (`function` when it names none), or None when its `type` is not a non-empty string
    (an empty one names no kind of call: the API answers "Invalid value: ''")."""
    kind = call.get("type", "function")
    return kind if isinstance(kind, str) and kind else None


def with_raw_arguments(message: ChatMessage, item: Mapping[str, Any]) -> ChatMessage:
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
        function = raw.get("function") if isinstance(raw, Mapping) and stated_call_type(raw) == "function" else None
        text = function.get("arguments") if isinstance(function, Mapping) else None
        kept.append(replace(call, raw_arguments=text) if isinstance(text, str) else call)
    return replace(message, tool_calls=tuple(kept))


def thinking_text(parts: Sequence[Part]) -> str:
    """The readable text of a message's thinking parts, joined (redacted thinking has none)."""
    return "\n".join(p.text for p in parts if isinstance(p, ThinkingPart) and p.text)


def image_url_part(part: ImagePart) -> dict[str, Any]:
    """An `image_url` content part."""
    return {"type": "image_url", "image_url": {"url": image_data_url(part)}}


def own_fields(own: Mapping[str, Any], exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The verbatim wire fields of a provider_data entry (all but its `form`, and `exclude`)."""
    return {k: v for k, v in own.items() if k != FORM and k not in exclude}


def form_of(own: Mapping[str, Any] | None) -> Mapping[str, str]:
    """The `form` of a provider_data entry (empty when none)."""
    form = own.get(FORM) if own is not None else None
    return form if isinstance(form, Mapping) else {}


def moves_to_user(part: Part) -> bool:
    """True for the parts only a user message carries (images, files): elsewhere they move to one (OC7)."""
    return type(part) is ImagePart or type(part) is FilePart


def chunks_text(chunks: list[Any]) -> str:
    """The text of Mistral's thinking chunks, joined."""
    return "".join(t for c in chunks if isinstance(c, Mapping) and isinstance(t := c.get("text", ""), str))


def file_media_type(file: Mapping[str, Any]) -> str:
    """The media type of a `file` part's inline bytes given without a `data:` prefix (the wire names none)."""
    name = file.get("filename")
    return "application/pdf" if isinstance(name, str) and name.lower().endswith(".pdf") else "application/octet-stream"


def call_problem(call: Any) -> tuple[str, str] | None:
    """What is malformed in one tool call (the field's path below the call, and why), or None; a call of a type
    not known here is left to the provider."""
    if not isinstance(call, Mapping):
        return "", "a tool call needs a 'function' object with a non-empty string 'name'"
    kind = stated_call_type(call)
    if kind is None:
        return ".type", "a tool call's 'type' must be a non-empty string"
    if kind == "function" and named_function(call) is None:
        return "", "a tool call needs a 'function' object with a non-empty string 'name'"
    if kind == "custom":
        custom = call.get("custom")
        if not isinstance(custom, Mapping) or not (isinstance(custom.get("name"), str) and custom["name"]) \
                or not isinstance(custom.get("input"), str):
            return ".custom", "a custom tool call needs a 'custom' object with a non-empty 'name' and a string 'input'"
    return None


def chat_json_type(value: Any) -> str:
    """How Chat Completions names a JSON value's type in its errors (any number is "a number")."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else "a value"


class ChatWire(Provider):
    """The flags of Chat Completions and of the dialects speaking it, which its writer, reader and checker read
    (each dialect sets its own)."""

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
    unknown_part_text: ClassVar[str] = UNKNOWN_PART
    """The provider's words for a part of a type it does not know (`{kind}`: the type, quoted)."""

    # ------------------------------------------------------------ what the writer, reader and checker share

    def _wire_name(self, name: str) -> str:
        """A tool name as the provider accepts it (hook: Mistral restricts names)."""
        return name

    def _is_field(self, part: Part) -> bool:
        """True for a text part that is the assistant's `refusal` field, not a part of its content."""
        return type(part) is TextPart and form_of(kept_fields(part.provider_data, self.name)).get("field") == "refusal"

    def _text_and_moved(self, content: Sequence[Part]) -> tuple[str, list[ImagePart | FilePart]]:
        """A content's text parts joined by newlines (the refusal field aside), and its images and files."""
        texts = [p.text for p in content if isinstance(p, TextPart) and not self._is_field(p)]
        return "\n".join(texts), [p for p in content if isinstance(p, (ImagePart, FilePart))]

    def _is_chunk(self, part: ThinkingPart) -> bool:
        """True when a thinking part is one of this provider's `thinking` content parts (Mistral's chunks)."""
        if not self.thinking_parts or part.provider != self.name:
            return False
        return form_of(kept_fields(part.provider_data, self.name)).get("field") != "reasoning_content"

    def _needs_list(self, content: Sequence[Part]) -> bool:
        """True when a system, assistant or tool content cannot be written as a string without losing a part:
        a refusal part, a text part with fields of its own, a part kept verbatim, a thinking chunk."""
        for p in content:
            if isinstance(p, NativePart):
                if "type" in p.data:
                    return True
            elif isinstance(p, TextPart):
                if kept_fields(p.provider_data, self.name) is not None and not self._is_field(p):
                    return True
            elif isinstance(p, ThinkingPart) and self._is_chunk(p):
                return True
        return False

    def _is_legacy(self, call: ToolCall) -> bool:
        """True for the call of an assistant message's legacy `function_call` field."""
        return form_of(kept_fields(call.provider_data, self.name)).get("field") == "function_call"

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
                return (".image_url", EMPTY_IMAGE_URL) if not image else None
            if not isinstance(image, Mapping) or not isinstance(image.get("url"), str):
                return ".image_url", "an 'image_url' part needs an 'image_url' object with a string 'url'"
            if not image["url"]:
                return ".image_url.url", EMPTY_IMAGE_URL
        return None
