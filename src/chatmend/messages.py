"""The provider-neutral history model: immutable messages, tool calls and content parts.

Every class is a frozen pydantic v2 model. Build one by keyword (`ChatMessage(role="user", content="hi")`)
or validate it from the documented JSON shape (`ChatMessage.model_validate(d)`); `chatmend.jsonl` reads and
writes the canonical JSON Lines form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chatmend import _json as strict_json
from chatmend.exceptions import HistoryError

__all__ = [
    "ChatMessage",
    "FilePart",
    "ImagePart",
    "NativePart",
    "Part",
    "Role",
    "TextPart",
    "ThinkingPart",
    "Tool",
    "ToolCall",
    "coerce_history",
    "coerce_message",
    "evolve",
    "from_template",
    "replace_field",
    "text_of",
]

Role = Literal["system", "user", "assistant", "tool"]
ProviderData = dict[str, Any]


class _Value(BaseModel):
    """Shared config: immutable, strict about unknown fields, field docs reach the JSON Schema."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class TextPart(_Value):
    """Plain text."""

    type: Literal["text"] = "text"
    """Tag of the part."""
    text: str
    """The text, kept byte for byte."""
    provider_data: ProviderData | None = None
    """Fields of the provider's text block that the model does not name (Anthropic's `cache_control` and
    `citations`, a Responses `annotations` list), keyed by provider name, written back only to that provider."""


class ImagePart(_Value):
    """An image, inline as base64 `data` with its `media_type`, or by `url`."""

    type: Literal["image"] = "image"
    """Tag of the part."""
    media_type: str | None = None
    """MIME type, e.g. `image/png`; required with `data`."""
    data: str | None = None
    """Base64 bytes of the image (no `data:` prefix)."""
    url: str | None = None
    """An https URL or a `data:` URI, when the image is not inline."""
    provider_data: ProviderData | None = None
    """Fields of the provider's image block that the model does not name (`cache_control`, `detail`), keyed by
    provider name, written back only to that provider."""

    @model_validator(mode="after")
    def _one_source(self) -> ImagePart:
        if (self.data is None) == (self.url is None):
            raise ValueError("an image needs exactly one of 'data' (base64) or 'url'")
        if self.data is not None and not self.media_type:
            raise ValueError("an image with 'data' needs its 'media_type', e.g. 'image/png'")
        if self.url is not None and not self.url.strip():
            # every provider rejects an image without an address; a body written with one would fail its check
            raise ValueError("an image's 'url' is empty; expected an https URL or a data: URI")
        return self


class ThinkingPart(_Value):
    """Model reasoning, kept byte for byte: providers reject a modified signature.

    Redacted thinking (Anthropic's `redacted_thinking`, an encrypted Responses reasoning item) carries no
    readable text, only opaque `data`.
    """

    type: Literal["thinking"] = "thinking"
    """Tag of the part."""
    text: str = ""
    """The readable reasoning text (empty when redacted)."""
    signature: str | None = None
    """The provider's signature over the text; sent back unchanged."""
    redacted: bool = False
    """True when the reasoning is only available as opaque `data`."""
    data: str | None = None
    """Opaque reasoning bytes (redacted thinking, encrypted content), sent back unchanged."""
    provider: str | None = None
    """The provider that produced it: signature and data are only valid there."""
    provider_data: ProviderData | None = None
    """Provider-specific fields (item ids, summaries), copied back only to `provider`."""


class FilePart(_Value):
    """A document, file or audio clip (Anthropic's `document`, Chat's `file` and `input_audio`, Responses'
    `input_file`, Gemini's non-image `inlineData` / `fileData`): inline base64 `data`, a `url`, or a provider's
    `file_id`. What maps between providers; the rest of a provider's block stays in `provider_data`."""

    type: Literal["file"] = "file"
    """Tag of the part."""
    media_type: str | None = None
    """MIME type (`application/pdf`, `audio/wav`, `text/plain`); required with `data`."""
    data: str | None = None
    """Base64 bytes of the file (no `data:` prefix)."""
    url: str | None = None
    """An https URL (or a provider's file URI) when the file is not inline."""
    file_id: str | None = None
    """A file uploaded to the provider, by its id: valid only at `provider`."""
    filename: str | None = None
    """The file's name, where the wire format carries one."""
    provider: str | None = None
    """The provider a `file_id` belongs to."""
    provider_data: ProviderData | None = None
    """Fields of the provider's block the model does not name (`title`, `context`, `citations`), keyed by provider."""

    @model_validator(mode="after")
    def _one_source(self) -> FilePart:
        if sum(x is not None for x in (self.data, self.url, self.file_id)) != 1:
            raise ValueError("a file needs exactly one of 'data' (base64), 'url' or 'file_id'")
        if self.data is not None and not self.media_type:
            raise ValueError("a file with 'data' needs its 'media_type', e.g. 'application/pdf'")
        return self


class NativePart(_Value):
    """A block, part or item of one provider's wire format that the neutral model does not name (a
    `server_tool_use`, an `executableCode` part, a Responses `web_search_call` item, a type added last month),
    kept where it stood as its exact JSON and written back verbatim to the same provider.

    To another provider it is unsupported: `to_request` raises `UnsupportedError` naming its type and path, or,
    with `on_unsupported=`, drops it and reports the drop.
    """

    type: Literal["native"] = "native"
    """Tag of the part."""
    provider: str
    """The provider whose wire format `data` is in (its registry name)."""
    data: dict[str, Any]
    """The block, part or item exactly as the provider's JSON has it."""

    @property
    def native_type(self) -> str:
        """The provider's own type name of the block (its `type` field, or for Gemini its one key)."""
        kind = self.data.get("type")
        if isinstance(kind, str):
            return kind
        return next((k for k in self.data if k not in ("thought", "thoughtSignature")), "?")


Part = Annotated[Union[TextPart, ImagePart, ThinkingPart, FilePart, NativePart],  # noqa: UP007
                 Field(discriminator="type")]


class ToolCall(_Value):
    """One call the assistant asked for."""

    id: str = ""
    """The call's id, as the provider gave it (may be empty or repeated before repair)."""
    name: str = Field(min_length=1)
    """The tool's name."""
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """The arguments: a JSON object, or the raw text when it is not valid JSON (a stream cut off mid-call)."""
    raw_arguments: str | None = None
    """The arguments exactly as the provider sent them, when it sent JSON text (Chat, Responses): writers of a
    text-arguments format send this text verbatim, so a repaired body keeps every call byte for byte."""
    provider_data: ProviderData | None = None
    """Provider-specific fields, keyed by provider name (a Gemini thought signature, a Responses item id)."""

    @field_validator("arguments", mode="before")
    @classmethod
    def _parse_json_text(cls, value: Any) -> Any:
        # A JSON object given as text is data in its parsed form; anything else stays verbatim.
        if isinstance(value, str):
            try:
                parsed = strict_json.loads(value)
            except ValueError:
                return value
            return parsed if isinstance(parsed, dict) else value
        return value


class ChatMessage(_Value):
    """One message of a history."""

    role: Role
    """Who speaks: `system`, `user`, `assistant` or `tool`."""
    content: str | tuple[Part, ...] = ""
    """A string, or a list of parts."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Assistant only: the calls this reply asks for, in order."""
    tool_call_id: str | None = None
    """Tool only, required: the id of the call this result answers."""
    tool_name: str | None = None
    """Tool only: the name of the tool that produced this result."""
    is_error: bool = False
    """Tool only: the tool failed and this is its error."""
    provider_data: ProviderData | None = None
    """Provider-specific fields, keyed by provider name (a Responses message id, a phase)."""

    @model_validator(mode="after")
    def _fields_fit_role(self) -> ChatMessage:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only assistant messages carry 'tool_calls', not {self.role} messages")
        if self.role == "tool":
            if self.tool_call_id is None:
                raise ValueError("a tool message needs 'tool_call_id', the id of the call it answers")
        else:
            for name in ("tool_call_id", "tool_name"):
                if getattr(self, name) is not None:
                    raise ValueError(f"only tool messages carry {name!r}, not {self.role} messages")
            if self.is_error:
                raise ValueError(f"only tool messages carry 'is_error', not {self.role} messages")
        return self


class Tool(_Value):
    """A tool the model may call, described once for every provider."""

    name: str = Field(min_length=1)
    """The tool's name."""
    description: str = ""
    """What the tool does, for the model."""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the arguments object."""


_M = TypeVar("_M", bound=BaseModel)
_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def evolve(model: _M, **changes: Any) -> _M:
    """A copy of a frozen model with some fields replaced, without validation (trusted, hot-path values).

    pydantic's `model_copy` copies its bookkeeping too and costs several times more; repair renames ids
    on every reply of a Kimi history, so this is on the hot path.
    """
    new = _new(type(model))
    values = model.__dict__.copy()
    values.update(changes)
    _set_dict(new, values)
    fields_set = model.__pydantic_fields_set__
    _set_fields_set(new, fields_set if fields_set.issuperset(changes) else fields_set | changes.keys())
    _set_extra(new, None)
    _set_private(new, None)
    return new


def from_template(template: _M, values: dict[str, Any]) -> _M:
    """A copy of `template` with `values` set, unvalidated (trusted, hot-path values), for fields the template
    already set explicitly: its fields-set is shared as it is, which spares `evolve`'s bookkeeping."""
    new = _new(type(template))
    _set_dict(new, {**template.__dict__, **values})
    _set_fields_set(new, template.__pydantic_fields_set__)
    _set_extra(new, None)
    _set_private(new, None)
    return new


def replace_field(model: _M, name: str, value: Any) -> _M:
    """`evolve` for one field: the form repair uses for every renamed id."""
    new = _new(type(model))
    values = model.__dict__.copy()
    values[name] = value
    _set_dict(new, values)
    fields_set = model.__pydantic_fields_set__
    _set_fields_set(new, fields_set if name in fields_set else fields_set | {name})
    _set_extra(new, None)
    _set_private(new, None)
    return new


def text_of(content: str | Sequence[TextPart | ImagePart | ThinkingPart | FilePart | NativePart]) -> str:
    """The text parts of a content joined by newlines (the whole string for string content)."""
    if isinstance(content, str):
        return content
    return "\n".join(p.text for p in content if isinstance(p, TextPart))


_ROLES = ("system", "user", "assistant", "tool")


def coerce_message(item: object, index: int) -> ChatMessage:
    """A ChatMessage from a ChatMessage or a dict of the JSON shape; a located HistoryError otherwise."""
    if isinstance(item, ChatMessage):
        return item
    if not isinstance(item, Mapping):
        raise HistoryError(
            f"expected a message (a mapping with a 'role'), got {type(item).__name__}", index=index
        )
    try:
        return ChatMessage.model_validate(item)
    except ValidationError as exc:
        raise _history_error(exc, item, index) from None


def coerce_history(messages: Sequence[object] | object, *, start: int = 0) -> list[ChatMessage]:
    """Every item of a history (from index `start` on) as a ChatMessage, or a HistoryError naming the first bad one."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise HistoryError(f"expected a list of messages, got {type(messages).__name__}")
    items = messages[start:] if start else messages
    return [item if type(item) is ChatMessage else coerce_message(item, i) for i, item in enumerate(items, start)]


def _history_error(exc: ValidationError, item: Mapping[Any, Any], index: int) -> HistoryError:
    """The first pydantic error as a HistoryError with the message index and a dotted field path."""
    # In a union (content: str | list of parts) the deepest error is the one about what was meant.
    errors = exc.errors(include_url=False)
    err = max(errors, key=lambda e: len(_field_path(e["loc"])))
    loc = _field_path(err["loc"])
    field = ".".join(loc) or None
    role = item.get("role")
    if loc[:1] == ["role"] or (not loc and role not in _ROLES):
        msg = f"unknown role {strict_json.brief(role)}; expected one of {', '.join(_ROLES)}" if "role" in item else \
            "missing 'role'; expected one of " + ", ".join(_ROLES)
        return HistoryError(msg, index=index, field="role")
    text = err["msg"]
    if err["type"] == "union_tag_invalid":
        text = f"unknown part type {err['ctx']['tag']}; expected one of {err['ctx']['expected_tags']}"
    if text.startswith("Value error, "):
        text = text[len("Value error, "):]
    if err["type"] == "missing":
        text = "required field is missing"
    elif err["type"] == "extra_forbidden":
        text = "unknown field"
    elif field == "content" or (field or "").startswith("content."):
        text = f"{text} (content is a string or a list of text, image, thinking, file and native parts)"
    return HistoryError(text, index=index, field=field)


_PART_TAGS = ("text", "image", "thinking", "file", "native")


def _field_path(loc: tuple[int | str, ...]) -> list[str]:
    """pydantic's loc without union branch names ("str", "tuple[...]") and part tags after an index."""
    out: list[str] = []
    prev: int | str | None = None
    for item in loc:
        skip = isinstance(item, str) and (
            item == "str" or "[" in item or (isinstance(prev, int) and item in _PART_TAGS)
        )
        if not skip:
            out.append(str(item))
        prev = item
    return out
