"""Reading a saved body, or a response, back into neutral messages."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from chatmend import _json as strict_json
from chatmend.exceptions import ReadError
from chatmend.messages import ChatMessage, ImagePart, Part, TextPart, ThinkingPart, ToolCall
from chatmend.providers.gemini.wire import BRIDGE_TEXT, IMAGES_LABEL, NAME, RAW_ARGUMENTS_KEY, get

_IMAGES_LABEL = re.compile(re.escape(IMAGES_LABEL).replace(re.escape("{id}"), "(.+)"))


def plain(value: Any) -> Any:
    """An SDK object as JSON-shaped data; its bytes as standard base64, as the REST API sends them. Built with a
    stack, not recursion: arguments nested as deep as the JSON reader takes convert too."""
    value = _plain_leaf(value)
    if not isinstance(value, (Mapping, list, tuple)):
        return value
    top: Any = {} if isinstance(value, Mapping) else []
    stack: list[tuple[Any, Any]] = [(value, top)]
    while stack:
        source, target = stack.pop()
        for key, item in source.items() if isinstance(source, Mapping) else enumerate(source):
            item = _plain_leaf(item)
            if isinstance(item, (Mapping, list, tuple)):
                inner: Any = {} if isinstance(item, Mapping) else []
                stack.append((item, inner))
                item = inner
            if isinstance(target, dict):
                target[key] = item
            else:
                target.append(item)
    return top


def _plain_leaf(value: Any) -> Any:
    """A value as `plain` takes it: bytes as base64 text, an SDK object as its dump, anything else as it is."""
    while True:
        if isinstance(value, (bytes, bytearray)):
            return base64.b64encode(bytes(value)).decode("ascii")
        if isinstance(value, (Mapping, list, tuple, str)):
            return value
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
    value = get(data, key)
    if value is not None and not isinstance(value, str):
        raise ReadError(f"'{key}' must be a string, got {type(value).__name__}", path=f"{path}.{key}")
    return value


def _read_image(part: Mapping[str, Any], path: str) -> ImagePart | None:
    """An ImagePart from an `inlineData` or `fileData` part (None for any other part)."""
    inline = get(part, "inlineData")
    if inline is not None:
        where = path + ".inlineData"
        inline = as_mapping(inline, where)
        return ImagePart(
            media_type=_optional_string(inline, "mimeType", where) or "application/octet-stream",
            data=_optional_string(inline, "data", where) or "",
        )
    file = get(part, "fileData")
    if file is not None:
        where = path + ".fileData"
        file = as_mapping(file, where)
        return ImagePart(url=_optional_string(file, "fileUri", where) or "",
                         media_type=_optional_string(file, "mimeType", where))
    return None


def neutral(parts: list[Part]) -> str | tuple[Part, ...]:
    """Content as the neutral model writes it most simply: one text (or nothing) is a string."""
    if not parts:
        return ""
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return tuple(parts)


def read_plain(part: Mapping[str, Any], path: str) -> TextPart | ImagePart | None:
    """A user-side text or image part (None for an empty text or a part of another kind)."""
    image = _read_image(part, path)
    if image is not None:
        return image
    text = part.get("text")
    return TextPart(text=text) if isinstance(text, str) and text else None


def _response_images(parts: Any, path: str) -> list[ImagePart]:
    """The images inside `functionResponse.parts` (Gemini 3 multimodal responses)."""
    out = []
    for q, raw in enumerate(as_list(parts, path)):
        image = _read_image(as_mapping(raw, f"{path}[{q}]"), f"{path}[{q}]")
        if image is not None:
            out.append(image)
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


def read_model(parts: list[Any], path: str) -> ChatMessage:
    """A model content as an assistant message, signatures kept where they will go back (GE4)."""
    content: list[Part] = []
    calls: list[ToolCall] = []
    for j, raw in enumerate(parts):
        where = f"{path}.parts[{j}]"
        part = as_mapping(raw, where)
        signature = get(part, "thoughtSignature")
        fc = get(part, "functionCall")
        if fc is not None:
            fc = as_mapping(fc, where + ".functionCall")
            name = fc.get("name")
            if not isinstance(name, str) or not name:
                raise ReadError("a functionCall needs a name", path=where + ".functionCall.name")
            calls.append(
                ToolCall(
                    id=_optional_string(fc, "id", where + ".functionCall") or "",
                    name=name,
                    arguments=_unwrap_args(fc.get("args")),
                    provider_data={NAME: {"thoughtSignature": signature}} if signature else None,
                )
            )
            continue
        text = part.get("text")
        if part.get("thought"):
            content.append(ThinkingPart(text=_optional_string(part, "text", where) or "", signature=signature,
                                        provider=NAME))
            continue
        item: Part | None = _read_image(part, where)
        if item is None and isinstance(text, str) and text:
            item = TextPart(text=text)
        if signature:  # a signature on a plain part: carried by an empty thinking part right before it
            content.append(ThinkingPart(signature=signature, provider=NAME))
        if item is not None:
            content.append(item)
    return ChatMessage(role="assistant", content=neutral(content), tool_calls=tuple(calls))


def _result_content(response: Any, images: list[ImagePart]) -> tuple[str | tuple[Part, ...], bool]:
    """A functionResponse's `response` (and images) as tool message content, and whether it is an error."""
    is_error = False
    value: Any = response
    if isinstance(response, Mapping) and len(response) == 1 and ("output" in response or "error" in response):
        is_error = "error" in response
        value = response["error"] if is_error else response["output"]
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if not images:
        return text, is_error
    parts: list[Part] = [TextPart(text=text)] if text else []
    return (*parts, *images), is_error


def _read_user(parts: list[Any], path: str, calls: Sequence[ToolCall]) -> list[ChatMessage]:
    """A user content: its function responses as tool messages, then the rest as one user message.

    Images after an `IMAGES_LABEL` text go back into the result they were moved out of.
    """
    results: list[dict[str, Any]] = []  # ChatMessage fields of each tool message, images still growing
    by_id: dict[str, int] = {}
    rest: list[Part] = []
    attach: int | None = None  # the result that the images being read belong to
    for j, raw in enumerate(parts):
        where = f"{path}.parts[{j}]"
        part = as_mapping(raw, where)
        fr = get(part, "functionResponse")
        if fr is not None:
            fr = as_mapping(fr, where + ".functionResponse")
            k = len(results)
            call_id = _optional_string(fr, "id", where + ".functionResponse") or (
                calls[k].id if k < len(calls) else "")  # GE1: no ids: by order
            by_id.setdefault(call_id, k)
            results.append(
                {
                    "tool_call_id": call_id,
                    "tool_name": fr.get("name") or None,
                    "response": fr.get("response"),
                    "images": _response_images(fr.get("parts"), where + ".functionResponse.parts"),
                }
            )
            continue
        item = read_plain(part, where)
        if isinstance(item, ImagePart) and attach is not None:
            results[attach]["images"].append(item)
            continue
        attach = None
        label = _IMAGES_LABEL.fullmatch(item.text) if isinstance(item, TextPart) else None
        if label and label.group(1) in by_id and j + 1 < len(parts) and _is_image(parts[j + 1]):
            attach = by_id[label.group(1)]
            continue
        if item is not None:
            rest.append(item)
    out = []
    for r in results:
        content, is_error = _result_content(r["response"], r["images"])
        out.append(
            ChatMessage(
                role="tool",
                tool_call_id=r["tool_call_id"],
                tool_name=r["tool_name"],
                is_error=is_error,
                content=content,
            )
        )
    if rest:
        out.append(ChatMessage(role="user", content=neutral(rest)))
    return out


def _is_image(part: Any) -> bool:
    """True for an inlineData or fileData part."""
    return isinstance(part, Mapping) and (get(part, "inlineData") is not None or get(part, "fileData") is not None)


def read_content(
    contents: list[Any], index: int, calls: Sequence[ToolCall]
) -> tuple[list[ChatMessage], Sequence[ToolCall]]:
    """The messages of one content, and the calls that the next content's responses answer."""
    path = f"contents[{index}]"
    content = as_mapping(contents[index], path)
    parts = as_list(content.get("parts"), path + ".parts")
    role = content.get("role") or "user"
    if role == "model":
        message = read_model(parts, path)
        return ([message] if message.content or message.tool_calls else []), message.tool_calls
    if _is_bridge(contents, index):
        return [], ()
    read = _read_user(parts, path, calls)
    if role == "system":  # not valid on the wire (GE7), but its meaning is plain
        read = [ChatMessage(role="system", content=m.content) if m.role == "user" else m for m in read]
    return read, ()


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
