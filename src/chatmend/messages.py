"""The provider-neutral history model: immutable messages, tool calls and content parts.

Every class is a frozen, slotted dataclass that checks its own fields when built, so a value read from a
provider that does not fit (a number where a name goes, a tool message without the id it answers) is a
`HistoryError` naming the field. Build one by keyword (`ChatMessage(role="user", content="hi")`), copy one with
`dataclasses.replace`, and read the documented JSON shape at the edges: `coerce_message` / `coerce_history`
(located errors), or pydantic's `TypeAdapter` for any class through `type_adapter(ChatMessage)` (`validate_python`,
`validate_json`, `dump_python`, `json_schema`). `chatmend.jsonl` reads and writes the canonical JSON Lines form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, Union

from chatmend import strict_json as strict_json
from chatmend.exceptions import HistoryError

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter, ValidationError
    from pydantic_core import CoreSchema

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
    "plainest_content",
    "replace_unchecked",
    "text_of",
    "type_adapter",
]

Role = Literal["system", "user", "assistant", "tool"]
ProviderData = dict[str, Any]

_ROLES = ("system", "user", "assistant", "tool")
_CONFIG: dict[str, Any] = {"extra": "forbid", "use_attribute_docstrings": True}
"""pydantic's config for every class (read from `__pydantic_config__`, its documented hook for dataclasses):
unknown fields are errors, and field docs reach the JSON Schema."""


def _expected(name: str, what: str, value: object) -> HistoryError:
    """The error of a field whose value is not what it holds."""
    return HistoryError(f"expected {what}, got {type(value).__name__}", field=name)


def _check_optional(model: Any, strings: tuple[str, ...]) -> None:
    """A part's optional fields: each of `strings` a string or null, its `provider_data` an object or null."""
    for name in strings:
        value = getattr(model, name)
        if value is not None and not isinstance(value, str):
            raise _expected(name, "a string or null", value)
    if model.provider_data is not None and not isinstance(model.provider_data, dict):
        raise _expected("provider_data", "an object or null", model.provider_data)


def _as_tuple(model: object, name: str, value: Sequence[Any], kinds: type | tuple[type, ...], what: str) -> None:
    """Store a sequence field as a tuple of `kinds`: a list becomes a tuple, and an item given as a mapping of the
    JSON shape is built, as the constructor of a part or a call builds it."""
    if type(value) is not tuple:
        if not isinstance(value, (list, tuple)):
            raise HistoryError(f"expected a list of {what}, got {type(value).__name__}", field=name)
        value = tuple(value)
        object.__setattr__(model, name, value)  # a frozen dataclass sets its own fields this way
    for item in value:
        if not isinstance(item, kinds):
            built = tuple(_built(x, f"{name}.{i}", kinds, what) for i, x in enumerate(value))
            object.__setattr__(model, name, built)
            return


def _built(item: object, where: str, kinds: type | tuple[type, ...], what: str) -> Any:
    """An item of a sequence field: itself when it is one of `kinds`, else built from a mapping of the JSON shape."""
    if isinstance(item, kinds):
        return item
    if isinstance(item, Mapping):
        kind = ToolCall if kinds is ToolCall else _PART_BY_TAG.get(item.get("type"))
        if kind is not None:
            try:
                return kind(**item)
            except HistoryError as exc:
                raise HistoryError(exc.reason, field=f"{where}.{exc.field}" if exc.field else where) from None
            except TypeError as exc:  # a field the class does not have, or one it needs
                raise HistoryError(str(exc).split(".__init__() ")[-1], field=where) from None
    raise HistoryError(f"expected {what}, got {type(item).__name__}", field=where)


@dataclass(frozen=True, slots=True, kw_only=True)
class TextPart:
    """Plain text."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

    type: Literal["text"] = "text"
    """Tag of the part."""
    text: str
    """The text, kept byte for byte."""
    provider_data: ProviderData | None = None
    """Fields of the provider's text block that the model does not name (Anthropic's `cache_control` and
    `citations`, a Responses `annotations` list), keyed by provider name, written back only to that provider."""

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise _expected("text", "a string", self.text)
        if self.provider_data is not None and not isinstance(self.provider_data, dict):
            raise _expected("provider_data", "an object or null", self.provider_data)


@dataclass(frozen=True, slots=True, kw_only=True)
class ImagePart:
    """An image, inline as base64 `data` with its `media_type`, or by `url`."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

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

    def __post_init__(self) -> None:
        _check_optional(self, ("media_type", "data", "url"))
        if (self.data is None) == (self.url is None):
            raise HistoryError("an image needs exactly one of 'data' (base64) or 'url'")
        if self.data is not None and not self.media_type:
            raise HistoryError("an image with 'data' needs its 'media_type', e.g. 'image/png'", field="media_type")
        if self.url is not None and not self.url.strip():
            # every provider rejects an image without an address; a body written with one would fail its check
            raise HistoryError("an image's 'url' is empty; expected an https URL or a data: URI")  # names its field


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingPart:
    """Model reasoning, kept byte for byte: providers reject a modified signature.

    Redacted thinking (Anthropic's `redacted_thinking`, an encrypted Responses reasoning item) carries no
    readable text, only opaque `data`.
    """

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

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

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise _expected("text", "a string", self.text)
        _check_optional(self, ("signature", "data", "provider"))
        if not isinstance(self.redacted, bool):
            raise _expected("redacted", "true or false", self.redacted)


@dataclass(frozen=True, slots=True, kw_only=True)
class FilePart:
    """A document, file or audio clip (Anthropic's `document`, Chat's `file` and `input_audio`, Responses'
    `input_file`, Gemini's non-image `inlineData` / `fileData`): inline base64 `data`, a `url`, or a provider's
    `file_id`. What maps between providers; the rest of a provider's block stays in `provider_data`."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

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

    def __post_init__(self) -> None:
        _check_optional(self, ("media_type", "data", "url", "file_id", "filename", "provider"))
        if sum(x is not None for x in (self.data, self.url, self.file_id)) != 1:
            raise HistoryError("a file needs exactly one of 'data' (base64), 'url' or 'file_id'")
        if self.data is not None and not self.media_type:
            raise HistoryError("a file with 'data' needs its 'media_type', e.g. 'application/pdf'",
                               field="media_type")


@dataclass(frozen=True, slots=True, kw_only=True)
class NativePart:
    """A block, part or item of one provider's wire format that the neutral model does not name (a
    `server_tool_use`, an `executableCode` part, a Responses `web_search_call` item, a type added last month),
    kept where it stood as its exact JSON and written back verbatim to the same provider.

    To another provider it is unsupported: `to_request` raises `UnsupportedError` naming its type and path, or,
    with `on_unsupported=`, drops it and reports the drop.
    """

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

    type: Literal["native"] = "native"
    """Tag of the part."""
    provider: str
    """The provider whose wire format `data` is in (its registry name)."""
    data: dict[str, Any]
    """The block, part or item exactly as the provider's JSON has it."""

    def __post_init__(self) -> None:
        if not isinstance(self.provider, str):
            raise _expected("provider", "a string", self.provider)
        if not isinstance(self.data, dict):
            raise _expected("data", "an object", self.data)

    @property
    def native_type(self) -> str:
        """The provider's own type name of the block (its `type` field, or for Gemini its one key)."""
        kind = self.data.get("type")
        if isinstance(kind, str):
            return kind
        return next((k for k in self.data if k not in ("thought", "thoughtSignature")), "?")


class _ByTag:
    """Tells pydantic to validate a part by its `type` tag (a tagged union), when an adapter is first built."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic import Discriminator

        return handler(Annotated[source, Discriminator("type")])


_PARTS = (TextPart, ImagePart, ThinkingPart, FilePart, NativePart)
_PART_BY_TAG: dict[object, type] = {"text": TextPart, "image": ImagePart, "thinking": ThinkingPart, "file": FilePart,
                                    "native": NativePart}
Part = Annotated[Union[TextPart, ImagePart, ThinkingPart, FilePart, NativePart], _ByTag()]  # noqa: UP007


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One call the assistant asked for."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

    id: str = ""
    """The call's id, as the provider gave it (may be empty or repeated before repair)."""
    name: str
    """The tool's name."""
    arguments: dict[str, Any] | str = field(default_factory=dict)
    """The arguments: a JSON object, or the raw text when it is not valid JSON (a stream cut off mid-call)."""
    raw_arguments: str | None = None
    """The arguments exactly as the provider sent them, when it sent JSON text (Chat, Responses): writers of a
    text-arguments format send this text verbatim, so a repaired body keeps every call byte for byte."""
    provider_data: ProviderData | None = None
    """Provider-specific fields, keyed by provider name (a Gemini thought signature, a Responses item id)."""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise _expected("id", "a string", self.id)
        if not isinstance(self.name, str) or not self.name:
            raise _expected("name", "a name of at least 1 character", self.name)
        arguments = self.arguments
        if isinstance(arguments, str):
            # A JSON object given as text is data in its parsed form; anything else stays verbatim.
            try:
                parsed = strict_json.loads(arguments)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                object.__setattr__(self, "arguments", parsed)
        elif not isinstance(arguments, dict):
            raise _expected("arguments", "an object or its JSON text", arguments)
        if self.raw_arguments is not None and not isinstance(self.raw_arguments, str):
            raise _expected("raw_arguments", "a string or null", self.raw_arguments)
        if self.provider_data is not None and not isinstance(self.provider_data, dict):
            raise _expected("provider_data", "an object or null", self.provider_data)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatMessage:
    """One message of a history."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

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

    def __post_init__(self) -> None:
        role = self.role
        if role not in _ROLES:
            raise HistoryError(f"unknown role {strict_json.brief(role)}; expected one of {', '.join(_ROLES)}",
                               field="role")
        if not isinstance(self.content, str):
            _as_tuple(self, "content", self.content, _PARTS, "text, image, thinking, file and native parts")
        if self.tool_calls:
            if role != "assistant":
                raise HistoryError(f"only assistant messages carry 'tool_calls', not {role} messages")
            _as_tuple(self, "tool_calls", self.tool_calls, ToolCall, "tool calls")
        elif type(self.tool_calls) is not tuple:
            _as_tuple(self, "tool_calls", self.tool_calls, ToolCall, "tool calls")
        if role == "tool":
            if self.tool_call_id is None:
                raise HistoryError("a tool message needs 'tool_call_id', the id of the call it answers")
            if not isinstance(self.tool_call_id, str):
                raise _expected("tool_call_id", "a string", self.tool_call_id)
            if self.tool_name is not None and not isinstance(self.tool_name, str):
                raise _expected("tool_name", "a string or null", self.tool_name)
            if not isinstance(self.is_error, bool):
                raise _expected("is_error", "true or false", self.is_error)
        elif self.tool_call_id is not None or self.tool_name is not None or self.is_error is not False:
            name = "tool_call_id" if self.tool_call_id is not None else \
                "tool_name" if self.tool_name is not None else "is_error"
            raise HistoryError(f"only tool messages carry {name!r}, not {role} messages")
        if self.provider_data is not None and not isinstance(self.provider_data, dict):
            raise _expected("provider_data", "an object or null", self.provider_data)


def _default_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A tool the model may call, described once for every provider."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _CONFIG

    name: str
    """The tool's name."""
    description: str = ""
    """What the tool does, for the model."""
    parameters: dict[str, Any] = field(default_factory=_default_parameters)
    """JSON Schema of the arguments object."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise _expected("name", "a name of at least 1 character", self.name)
        if not isinstance(self.description, str):
            raise _expected("description", "a string", self.description)
        if not isinstance(self.parameters, dict):
            raise _expected("parameters", "an object", self.parameters)


_T = TypeVar("_T")


def type_adapter(cls: type[_T]) -> TypeAdapter[_T]:
    """pydantic's `TypeAdapter` for a model class (built on first use, then shared): validation of the JSON
    shape (`validate_python`, `validate_json`), its dump (`dump_python(m, mode="json")`) and `json_schema()`."""
    adapter: TypeAdapter[_T] | None = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter  # imported on first use: `import chatmend` stays light

        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


_ADAPTERS: dict[type, Any] = {}


def replace_unchecked(value: _T, /, **changes: Any) -> _T:
    """`dataclasses.replace` without the checks, for the copies the library makes of values it holds valid (a
    renamed call id, a reply's repaired calls): repair makes one for every renamed call of a long history. What
    comes from outside goes through the constructor, which checks it."""
    kind = type(value)
    fields: tuple[str, ...] = vars(kind)["__slots__"]  # a slotted dataclass's fields, in order
    for name in changes:
        if name not in fields:
            raise TypeError(f"{kind.__name__} has no field {name!r}")
    new = object.__new__(kind)
    for name in fields:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(value, name))
    return new


def text_of(content: str | Sequence[TextPart | ImagePart | ThinkingPart | FilePart | NativePart]) -> str:
    """The text parts of a content joined by newlines (the whole string for string content)."""
    if isinstance(content, str):
        return content
    return "\n".join(p.text for p in content if isinstance(p, TextPart))


def plainest_content(parts: Sequence[Part]) -> str | tuple[Part, ...]:
    """Parts as a content the way readers give it most simply: one plain text part (or none) as a string."""
    if not parts:
        return ""
    if len(parts) == 1 and type(parts[0]) is TextPart and parts[0].provider_data is None:
        return parts[0].text
    return tuple(parts)


def coerce_message(item: object, index: int | None = None) -> ChatMessage:
    """A ChatMessage from a ChatMessage or a dict of the JSON shape; a HistoryError naming the message `index`
    and the field otherwise."""
    if isinstance(item, ChatMessage):
        return item
    if not isinstance(item, Mapping):
        raise HistoryError(
            f"expected a message (a mapping with a 'role'), got {type(item).__name__}", index=index
        )
    from pydantic import ValidationError

    try:
        return type_adapter(ChatMessage).validate_python(item)
    except ValidationError as exc:
        raise _history_error(exc, item, index) from None


def coerce_history(messages: Sequence[object] | object, *, start: int = 0) -> list[ChatMessage]:
    """Every item of a history (from index `start` on) as a ChatMessage, or a HistoryError naming the first bad one."""
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise HistoryError(f"expected a list of messages, got {type(messages).__name__}")
    items = messages[start:] if start else messages
    return [item if type(item) is ChatMessage else coerce_message(item, i) for i, item in enumerate(items, start)]


def _history_error(exc: ValidationError, item: Mapping[Any, Any], index: int | None) -> HistoryError:
    """The first pydantic error as a HistoryError with the message index and a dotted field path."""
    # In a union (content: str | list of parts) the deepest error is the one about what was meant.
    errors = exc.errors(include_url=False)
    err = max(errors, key=lambda e: len(_field_path(e["loc"])))
    loc = _field_path(err["loc"])
    own = err.get("ctx", {}).get("error")
    if isinstance(own, HistoryError):  # a model's own check: its reason, at its field
        if own.field:
            loc.append(own.field)
        text = own.reason
    else:
        text = err["msg"]
    field = ".".join(loc) or None
    role = item.get("role")
    if loc[:1] == ["role"] or (not loc and role not in _ROLES):
        msg = f"unknown role {strict_json.brief(role)}; expected one of {', '.join(_ROLES)}" if "role" in item else \
            "missing 'role'; expected one of " + ", ".join(_ROLES)
        return HistoryError(msg, index=index, field="role")
    if err["type"] == "union_tag_invalid":
        text = f"unknown part type {err['ctx']['tag']}; expected one of {err['ctx']['expected_tags']}"
    if err["type"] == "missing":
        text = "required field is missing"
    elif err["type"] == "unexpected_keyword_argument":
        text = "unknown field"
    elif field == "content" or (field or "").startswith("content."):
        text = f"{text} (content is a string or a list of text, image, thinking, file and native parts)"
    return HistoryError(text, index=index, field=field)


def _field_path(loc: tuple[int | str, ...]) -> list[str]:
    """pydantic's loc without union branch names ("str", "tuple[...]") and part tags after an index."""
    out: list[str] = []
    prev: int | str | None = None
    for item in loc:
        skip = isinstance(item, str) and (
            item == "str" or "[" in item or (isinstance(prev, int) and item in _PART_BY_TAG)
        )
        if not skip:
            out.append(str(item))
        prev = item
    return out
