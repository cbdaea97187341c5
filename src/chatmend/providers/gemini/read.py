"""Reading a saved body, or a response, back into neutral messages."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from chatmend import strict_json as strict_json
from chatmend.exceptions import ReadError
from chatmend.messages import (
    ChatMessage,
    FilePart,
    ImagePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCall,
    plainest_content,
)
from chatmend.providers.gemini.wire import (
    BRIDGE_TEXT,
    IMAGES_LABEL,
    NAME,
    RAW_ARGUMENTS_KEY,
    either_spelling,
    media_type_of_uri,
    response_text,
    spellings,
)
from chatmend.providers.kept import kept_field, native, unnamed_fields

_IMAGES_LABEL = re.compile(re.escape(IMAGES_LABEL).replace(re.escape("{id}"), "(.+)"))


def plain(value: Any) -> Any:
    """An SDK object as JSON-shaped data; its bytes as standard base64, as the REST API sends them. Copied by
    `copy_tree` (a stack, not recursion): arguments nested as deep as the JSON reader takes convert too."""
    return strict_json.copy_tree(value, leaf=_plain_leaf)


def _plain_leaf(value: Any) -> Any:
    """A value as `plain` takes it: bytes as base64 text, an SDK object as its dump, a mapping as a dict, anything
    else as it is."""
    while True:
        if isinstance(value, (bytes, bytearray)):
            return base64.b64encode(bytes(value)).decode("ascii")
        if isinstance(value, (dict, list, tuple, str)):
            return value
        if isinstance(value, Mapping):
            return dict(value)
        dump = getattr(value, "model_dump", None)
        if not callable(dump):
            return value
        value = dump(mode="python", exclude_none=True)


def as_mapping(value: Any, path: str) -> Mapping[str, Any]:
    """`value` as a mapping, or a ReadError saying where the object was expected."""
    if not isinstance(value, Mapping):
        raise ReadError(f"expected an object, got {type(value).__name__}", path=path)
    return value


def as_list(value: Any, path: str) -> list[Any]:
    """`value` as a list (None as an empty one), or a ReadError."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ReadError(f"expected a list, got {type(value).__name__}", path=path)
    return list(value)


def _optional_string(data: Mapping[str, Any], key: str, path: str) -> str | None:
    """The string field `key` (either spelling), None when absent, or a ReadError saying where."""
    value = either_spelling(data, key)
    if value is not None and not isinstance(value, str):
        raise ReadError(f"'{key}' must be a string, got {type(value).__name__}", path=f"{path}.{key}")
    return value


# The keys each reader models; every other key of a part or an object is kept in `provider_data`.
_BLOB_KEYS = {"inlineData": spellings("mimeType", "data"), "fileData": spellings("mimeType", "fileUri")}
_MEDIA_PART_KEYS = {key: spellings(key) for key in _BLOB_KEYS}
_SIGNED_MEDIA_KEYS = {key: spellings(key, "thoughtSignature") for key in _BLOB_KEYS}
_USER_TEXT_KEYS = frozenset({"text"})
_MODEL_TEXT_KEYS = spellings("text", "thoughtSignature")
_THOUGHT_KEYS = spellings("text", "thought", "thoughtSignature")
_CALL_PART_KEYS = spellings("functionCall", "thoughtSignature")
_CALL_KEYS = frozenset({"id", "name", "args"})
_RESPONSE_PART_KEYS = spellings("functionResponse")
_RESPONSE_KEYS = frozenset({"id", "name", "response", "parts"})
_CONTENT_KEYS = frozenset({"role", "parts"})
_READ_KINDS = ("text", "inlineData", "fileData", "functionCall", "functionResponse")


def _extras(data: Mapping[str, Any], modelled: frozenset[str]) -> dict[str, Any] | None:
    """The fields of `data` the neutral model does not name (None when there are none)."""
    if len(data) == 1 and next(iter(data)) in modelled:  # the usual part: nothing beside its data
        return None
    return unnamed_fields(data, modelled) or None


def _keep_extras(kept: dict[str, Any], key: str, data: Mapping[str, Any], modelled: frozenset[str]) -> None:
    """Put the fields of `data` the neutral model does not name (`_extras`) under `key` of `kept`, if any."""
    extras = _extras(data, modelled)
    if extras:
        kept[key] = extras


def _kind(part: Mapping[str, Any]) -> str | None:
    """The part's data field chatmend reads (`text`, `inlineData`, ...), camelCase; None for any other kind
    (`executableCode`, `codeExecutionResult`, a kind added last month), kept as a native part."""
    for name in _READ_KINDS:
        if either_spelling(part, name) is not None:
            return name
    return None


def _media(part: Mapping[str, Any], kind: str, path: str, modelled: frozenset[str]) -> ImagePart | FilePart:
    """An `inlineData` or `fileData` part: an image as an ImagePart, anything else (documents, audio, video)
    as a FilePart; the blob's and the part's other fields (`displayName`, `videoMetadata`) in
    `provider_data`."""
    where = f"{path}.{kind}"
    blob = as_mapping(either_spelling(part, kind), where)
    mime = _optional_string(blob, "mimeType", where)
    kept: dict[str, Any] = {}
    _keep_extras(kept, "part", part, modelled)
    _keep_extras(kept, kind, blob, _BLOB_KEYS[kind])
    data = {NAME: kept} if kept else None
    if kind == "inlineData":
        media_type = mime or "application/octet-stream"
        payload = _optional_string(blob, "data", where) or ""
        if media_type.startswith("image/"):
            return ImagePart(media_type=media_type, data=payload, provider_data=data)
        name = blob.get("displayName", blob.get("display_name"))
        return FilePart(media_type=media_type, data=payload, provider_data=data,
                        filename=name if isinstance(name, str) else None)
    uri = _optional_string(blob, "fileUri", where) or ""
    if (mime or media_type_of_uri(uri) or "").startswith("image/"):
        return ImagePart(url=uri, media_type=mime, provider_data=data)
    name = blob.get("displayName", blob.get("display_name"))
    return FilePart(url=uri, media_type=mime, provider_data=data, filename=name if isinstance(name, str) else None)


def _read_image(part: Mapping[str, Any], path: str) -> ImagePart | FilePart | None:
    """An ImagePart or FilePart from an `inlineData` or `fileData` part (None for any other part)."""
    for kind in _BLOB_KEYS:
        if either_spelling(part, kind) is not None:
            return _media(part, kind, path, _MEDIA_PART_KEYS[kind])
    return None


def _text_part(part: Mapping[str, Any], path: str, modelled: frozenset[str],
               keep_empty: bool = False) -> TextPart | None:
    """A text part, its other fields in `provider_data`; None for an empty text carrying nothing else, unless
    `keep_empty` (a `{}` in `provider_data` then says to write it back)."""
    text = _optional_string(part, "text", path) or ""
    extras = _extras(part, modelled)
    if not text and not extras:
        return TextPart(text="", provider_data={NAME: {}}) if keep_empty else None
    return TextPart(text=text, provider_data={NAME: {"part": extras}} if extras else None)


def read_plain(part: Mapping[str, Any], path: str, keep_empty: bool = False) -> Part | None:
    """A user-side part: text, image or file (every other field, `thought` too, kept in `provider_data`),
    a NativePart for a kind chatmend does not model; None for an empty text unless `keep_empty`."""
    kind = _kind(part)
    if kind == "text":
        return _text_part(part, path, _USER_TEXT_KEYS, keep_empty)
    if kind in _BLOB_KEYS:
        return _media(part, kind, path, _MEDIA_PART_KEYS[kind])
    return native(NAME, part)


def _response_parts(parts: Any, path: str) -> list[Part]:
    """The media inside `functionResponse.parts` (Gemini 3 multimodal responses); any other part verbatim."""
    out: list[Part] = []
    for q, raw in enumerate(as_list(parts, path)):
        part = as_mapping(raw, f"{path}[{q}]")
        out.append(_read_image(part, f"{path}[{q}]") or native(NAME, part))
    return out


def _unwrap_args(args: Any) -> dict[str, Any] | str:
    """A call's arguments; `{"_raw": text}` back to its text (only when that text is not an object)."""
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        return json.dumps(args, ensure_ascii=False)
    if len(args) == 1 and isinstance(args.get(RAW_ARGUMENTS_KEY), str):
        raw = args[RAW_ARGUMENTS_KEY]
        try:
            parsed = strict_json.loads(raw)
        except ValueError:
            return str(raw)
        if not isinstance(parsed, dict):
            return str(raw)
    return dict(args)


MintId = Callable[[int], str]
"""Makes an id for the k-th call of a turn that has none (`repair_body` pairs calls by id; None: leave it empty)."""


def _read_call(part: Mapping[str, Any], where: str, signature: Any, mint: MintId | None, k: int) -> ToolCall:
    """A `functionCall` part as a ToolCall; its signature and every other field in `provider_data`."""
    fc = as_mapping(either_spelling(part, "functionCall"), where + ".functionCall")
    name = fc.get("name")
    if not isinstance(name, str) or not name:
        raise ReadError("a functionCall needs a name", path=where + ".functionCall.name")
    call_id = _optional_string(fc, "id", where + ".functionCall") or ""
    kept: dict[str, Any] = {"thoughtSignature": signature} if signature else {}
    _keep_extras(kept, "part", part, _CALL_PART_KEYS)
    _keep_extras(kept, "functionCall", fc, _CALL_KEYS)
    if not call_id and mint is not None:
        call_id = mint(k)
        kept["noId"] = True  # written back without one
    return ToolCall(id=call_id, name=name, arguments=_unwrap_args(fc.get("args")),
                    provider_data={NAME: kept} if kept else None)


def read_model(parts: list[Any], path: str, mint: MintId | None = None) -> ChatMessage:
    """A model content as an assistant message, signatures kept where they will go back (GE4), parts chatmend
    does not model (`executableCode`, `codeExecutionResult`, ...) kept verbatim in place."""
    content: list[Part] = []
    calls: list[ToolCall] = []
    for j, raw in enumerate(parts):
        where = f"{path}.parts[{j}]"
        part = as_mapping(raw, where)
        kind = _kind(part)
        if kind is None or kind == "functionResponse":  # a response in a model turn: kept as it stands
            content.append(native(NAME, part))
            continue
        signature = either_spelling(part, "thoughtSignature")
        if kind == "functionCall":
            calls.append(_read_call(part, where, signature, mint, len(calls)))
            continue
        if kind == "text" and part.get("thought"):
            extras = _extras(part, _THOUGHT_KEYS)
            content.append(ThinkingPart(text=_optional_string(part, "text", where) or "", signature=signature,
                                        provider=NAME, provider_data={NAME: {"part": extras}} if extras else None))
            continue
        item: Part | None
        if kind == "text":
            item = _text_part(part, where, _MODEL_TEXT_KEYS)
            if item is None and signature:  # an empty text that carries a signature (Gemini 3 sends them)
                item = TextPart(text="")
        else:
            item = _media(part, kind, where, _SIGNED_MEDIA_KEYS[kind])
        if signature:  # a signature on a plain part: carried by an empty thinking part right before it
            content.append(ThinkingPart(signature=signature, provider=NAME))
        if item is not None:
            content.append(item)
    return ChatMessage(role="assistant", content=plainest_content(content), tool_calls=tuple(calls))


def _result_content(response: Any, media: list[Part]) -> tuple[str | tuple[Part, ...], bool]:
    """A functionResponse's `response` (and media) as tool message content, and whether it is an error."""
    text, is_error = response_text(response)
    if not media:
        return text, is_error
    parts: list[Part] = [TextPart(text=text)] if text else []
    return (*parts, *media), is_error


def _response_kept(part: Mapping[str, Any], fr: Mapping[str, Any], own_id: str | None,
                   call: ToolCall | None) -> dict[str, Any]:
    """What a functionResponse part holds beyond the neutral tool message: its `response` object unless
    `{"output": text}` (or `error`) says it all, its other fields and the part's, where its media were."""
    kept: dict[str, Any] = {}
    response = fr.get("response")
    if response is None or not (isinstance(response, Mapping) and len(response) == 1
                                and isinstance(response.get("output", response.get("error")), str)):
        kept["response"] = response
    _keep_extras(kept, "functionResponse", fr, _RESPONSE_KEYS)
    _keep_extras(kept, "part", part, _RESPONSE_PART_KEYS)
    if "parts" in fr:
        kept["inParts"] = True  # its media go back inside it
    if not own_id and call is not None and kept_field(call.provider_data, NAME, "noId"):
        kept["noId"] = True
    return kept


def _tool_message(tool_call_id: str, tool_name: str | None, response: Any, media: list[Part],
                  kept: dict[str, Any]) -> ChatMessage:
    """A functionResponse, read into its fields, as a tool message."""
    content, is_error = _result_content(response, media)
    return ChatMessage(role="tool", tool_call_id=tool_call_id, tool_name=tool_name, is_error=is_error,
                       content=content, provider_data={NAME: kept} if kept else None)


def read_response(part: Mapping[str, Any], path: str) -> ChatMessage:
    """A `functionResponse` part as a tool message, on its own (its id as it stands, empty when it has none): what
    a store that keeps responses apart from their contents hands over."""
    where = path + ".functionResponse"
    fr = as_mapping(either_spelling(part, "functionResponse"), where)
    own_id = _optional_string(fr, "id", where)
    return _tool_message(own_id or "", fr.get("name") or None, fr.get("response"),
                         _response_parts(fr.get("parts"), where + ".parts"), _response_kept(part, fr, own_id, None))


def _read_user(parts: list[Any], path: str, calls: Sequence[ToolCall], keep_empty: bool = False) -> list[ChatMessage]:
    """A user content: its function responses as tool messages, then the rest as one user message.

    Images after an `IMAGES_LABEL` text go back into the result they were moved out of. With `keep_empty`
    (`repair_body`), an empty text is kept to be written back as it was.
    """
    results: list[dict[str, Any]] = []  # ChatMessage fields of each tool message, media still growing
    by_id: dict[str, int] = {}
    rest: list[Part] = []
    attach: int | None = None  # the result that the images being read belong to
    for j, raw in enumerate(parts):
        where = f"{path}.parts[{j}]"
        part = as_mapping(raw, where)
        fr = either_spelling(part, "functionResponse")
        if fr is not None:
            fr = as_mapping(fr, where + ".functionResponse")
            k = len(results)
            own_id = _optional_string(fr, "id", where + ".functionResponse")
            call = calls[k] if k < len(calls) else None
            call_id = own_id or (call.id if call is not None else "")  # GE1: no ids: by order
            by_id.setdefault(call_id, k)
            results.append(
                {
                    "tool_call_id": call_id,
                    "tool_name": fr.get("name") or None,
                    "response": fr.get("response"),
                    "media": _response_parts(fr.get("parts"), where + ".functionResponse.parts"),
                    "kept": _response_kept(part, fr, own_id, call),
                }
            )
            continue
        item = read_plain(part, where, keep_empty)
        if isinstance(item, (ImagePart, FilePart)) and attach is not None:
            results[attach]["media"].append(item)
            continue
        attach = None
        label = _IMAGES_LABEL.fullmatch(item.text) if type(item) is TextPart and not item.provider_data else None
        if label and label.group(1) in by_id and j + 1 < len(parts) and _is_image(parts[j + 1]):
            attach = by_id[label.group(1)]
            continue
        if item is not None:
            rest.append(item)
    out = [_tool_message(**r) for r in results]
    if rest:
        out.append(ChatMessage(role="user", content=plainest_content(rest)))
    return out


def _is_image(part: Any) -> bool:
    """True for an inlineData or fileData part."""
    return isinstance(part, Mapping) and (either_spelling(part, "inlineData") is not None
                                          or either_spelling(part, "fileData") is not None)


def read_content(
    contents: list[Any], index: int, calls: Sequence[ToolCall], mint: MintId | None = None
) -> tuple[list[ChatMessage], Sequence[ToolCall]]:
    """The messages of one content, and the calls that the next content's responses answer.

    With `mint` (what `repair_body` reads), calls without an id get one, and bridge turns are read as the
    user messages they are on the wire.
    """
    path = f"contents[{index}]"
    content = as_mapping(contents[index], path)
    parts = as_list(content.get("parts"), path + ".parts")
    role = content.get("role") or "user"
    if role == "model":
        message = read_model(parts, path, mint)
        read = [message] if message.content or message.tool_calls else []
        return _with_content_fields(read, content), message.tool_calls
    if mint is None and _is_bridge(contents, index):
        return [], ()
    read = _read_user(parts, path, calls, keep_empty=mint is not None)
    if role == "system":  # not valid on the wire (GE7), but its meaning is plain
        read = [ChatMessage(role="system", content=m.content) if m.role == "user" else m for m in read]
    return _with_content_fields(read, content, _follows_user_turn(contents, index)), ()


def _follows_user_turn(contents: list[Any], index: int) -> bool:
    """True when the content before is a user turn too (the writer would merge the two)."""
    if not index:
        return False
    before = contents[index - 1]
    return isinstance(before, Mapping) and before.get("role") != "model"


def _with_content_fields(read: list[ChatMessage], content: Mapping[str, Any],
                         separate: bool = False) -> list[ChatMessage]:
    """The messages of a content, the content's own fields beside `parts` (an unknown key, a role other than
    user and model, like the old `function`) kept on its first message, and that it is a turn of its own
    (`separate`: after another user turn)."""
    fields = _extras(content, _CONTENT_KEYS)
    role = content.get("role")
    if role not in (None, "user", "model", "system"):
        fields = {**(fields or {}), "role": role}
    if not (fields or separate) or not read:
        return read
    first = read[0]
    kept = dict((first.provider_data or {}).get(NAME, {}))
    if fields:
        kept["content"] = fields
    if separate:
        kept["turn"] = True
    return [replace(first, provider_data={**(first.provider_data or {}), NAME: kept}), *read[1:]]


def _is_bridge(contents: list[Any], index: int) -> bool:
    """True for a user turn `to_request` inserted: only `BRIDGE_TEXT`, first, or between model turns."""
    item = contents[index]
    if (
        not isinstance(item, Mapping)
        or item.get("role", "user") != "user"
        or item.get("parts") != [{"text": BRIDGE_TEXT}]
    ):
        return False
    if index == 0:
        return True
    before, after = contents[index - 1], contents[index + 1] if index + 1 < len(contents) else None
    if not isinstance(before, Mapping) or before.get("role") != "model":
        return False
    return after is None or (isinstance(after, Mapping) and after.get("role") == "model")
