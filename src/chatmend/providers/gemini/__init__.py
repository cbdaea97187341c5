"""Google Gemini `generateContent` (Gemini Developer API v1beta, and Vertex AI with `vertex=True`).

What `to_request` returns is the REST body of `POST models/{model}:generateContent`, camelCase as the REST API
spells it: `contents`, `systemInstruction`, `tools` (`[{"functionDeclarations": [...]}]`), `generationConfig`,
and any other option as a top-level field (`toolConfig`, `safetySettings`, `cachedContent`). The model is in
the URL, not in the body. `send` adds it and calls the official SDK as
`client.models.generate_content(model=..., contents=body["contents"], config=...)`, where `config` holds the
system instruction, the tools, the other top-level fields and the generation config flattened
(`Gemini.sdk_arguments` builds exactly those keyword arguments; the SDK accepts camelCase names).

Choices, each made so that a saved body reads back into the same history:

- Contents alternate by construction: user-side messages between two assistant messages form one `user`
  content; an assistant message is one `model` content. A function-call turn must follow a user or response
  turn and the contents must start with a user turn (GE2): where they would not, a user turn holding only
  `BRIDGE_TEXT` is inserted (never a merge across an assistant message, which would break prefix
  stability). `from_request` drops such bridge turns again.
- A call's string arguments that are not a JSON object travel as `{"_raw": text}` (`args` must be an
  object); `from_request` unwraps them.
- A result is `{"output": text}`, or `{"error": text}` when `is_error`; the steer text follows the
  responses in the same turn.
- Thought signatures go back on the part they came on, byte for byte (GE4): on a call through
  `ToolCall.provider_data["gemini"]["thoughtSignature"]`; on a thought as `ThinkingPart(provider="gemini",
  text=..., signature=...)`; on a plain text or image part as an empty-text `ThinkingPart(provider="gemini",
  signature=...)` right before that part. A signature with no part to sit on, or that is not base64 (the
  API could not decode it), is not sent. Gemini 3 rejects a call turn of the current turn without one: there
  the first call of such a turn gets `SKIP_SIGNATURE` (history from another model), unless told otherwise.
- A result's images go into `functionResponse.parts` for Gemini 3; for older models they follow the
  responses as user parts, after an `IMAGES_LABEL` text naming the call, and `from_request` puts them back.

`check` knows GE1-GE9 of the provider-rules notes, plus GE0 (the body does not parse: a part with no or two
kinds of data, `args` or `response` not an object, bytes that are not base64) and GE10 (INF: images in a
function response for a model before Gemini 3). GE4 needs `model=`, GE8 and a missing role need `vertex=True`.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import ValidationError

from chatmend.exceptions import Problem, ReadError, error_context
from chatmend.incremental import Repairer
from chatmend.messages import ChatMessage, ImagePart, Part, TextPart, ThinkingPart, ToolCall
from chatmend.providers.base import (
    HistoryInput,
    Provider,
    ToolsInput,
    coerce_tools,
    parse_data_url,
    repaired,
)
from chatmend.repair import IsReadOnly, RepairResult, young_collections_only

__all__ = [
    "BRIDGE_TEXT",
    "IMAGES_LABEL",
    "PROVIDER",
    "RAW_ARGUMENTS_KEY",
    "SKIP_SIGNATURE",
    "Gemini",
    "check",
    "from_request",
    "from_response",
    "send",
    "send_async",
    "to_request",
]

BRIDGE_TEXT = "(continue)"
"""The text of a user turn inserted where a turn rule needs one (GE2); `from_request` drops these turns."""
RAW_ARGUMENTS_KEY = "_raw"
"""The key under which call arguments that are not a JSON object travel (`args` must be an object)."""
IMAGES_LABEL = "Images from tool result {id}:"
"""The text before a result's images when they travel after the responses; `from_request` reads it back."""
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The stand-in signature for Gemini 3 calls that never had one (history from another model)."""

_NAME = "gemini"
_IMAGES_LABEL = re.compile(re.escape(IMAGES_LABEL).replace(re.escape("{id}"), "(.+)"))
_AUTO = "auto"
_GEMINI_VERSION = re.compile(r"gemini-(\d+)")
# fmt: off
_DATA_FIELDS = ("text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
                "codeExecutionResult", "toolCall", "toolResponse")
# fmt: on
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")
# fmt: off
_GENERATION_FIELDS = frozenset((
    "audioTimestamp", "audioTranscriptionConfig", "candidateCount", "enableAffectiveDialog",
    "enableEnhancedCivicAnswers", "frequencyPenalty", "imageConfig", "logprobs", "maxOutputTokens",
    "mediaResolution", "modelSelectionConfig", "presencePenalty", "responseFormat", "responseJsonSchema",
    "responseLogprobs", "responseMimeType", "responseModalities", "responseSchema", "routingConfig", "seed",
    "speechConfig", "stopSequences", "temperature", "thinkingConfig", "topK", "topP", "translationConfig",
))
# fmt: on


def _camel(name: str) -> str:
    """`max_output_tokens` as the REST API spells it, `maxOutputTokens`."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _snake(name: str) -> str:
    """`inlineData` as the SDK sometimes sends it, `inline_data` (the API accepts both)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


_SNAKE = {
    name: _snake(name)
    for name in (
        *_DATA_FIELDS,
        "thoughtSignature",
        "mimeType",
        "fileUri",
        "systemInstruction",
        "displayName",
        "functionDeclarations",
    )
}


def _get(data: Mapping[str, Any], name: str) -> Any:
    """A field by its camelCase name, or by its snake_case twin (the API and the SDK accept both)."""
    value = data.get(name)
    if value is None:
        snake = _SNAKE.get(name)
        if snake is not None:
            value = data.get(snake)
    return value


def is_base64(text: object) -> bool:
    """True when the API can decode `text` as bytes (standard or URL-safe base64, padding optional)."""
    return isinstance(text, str) and len(text.rstrip("=")) % 4 != 1 and _BASE64.fullmatch(text) is not None


def is_gemini3(model: str | None) -> bool:
    """True for Gemini 3 and later: they enforce thought signatures (GE4) and take images in responses."""
    found = _GEMINI_VERSION.match(str(model or "").rsplit("/", 1)[-1])
    return found is not None and int(found.group(1)) >= 3


# ---------------------------------------------------------------------------------------------------------
# Writing


@dataclass(frozen=True)
class _Options:
    """What the writer needs to know beyond the history."""

    vertex: bool
    """Vertex AI rejects `id` on calls and responses (GE8)."""
    multimodal: bool
    """The model takes images inside `functionResponse.parts` (Gemini 3)."""
    fallback: str | None
    """The signature for a call turn that has none (Gemini 3 rejects it otherwise, GE4)."""


def _image(part: ImagePart) -> dict[str, Any]:
    """An image as an `inlineData` part (base64 bytes) or a `fileData` part (a URI)."""
    if part.data is None and part.url is not None and part.url.startswith("data:"):
        part = parse_data_url(part.url)
    if part.data is not None:
        return {"inlineData": {"mimeType": part.media_type, "data": part.data}}
    url = part.url or ""
    mime = part.media_type or mimetypes.guess_type(url)[0]
    return {"fileData": {"mimeType": mime, "fileUri": url} if mime else {"fileUri": url}}


def _user_parts(content: str | tuple[Part, ...]) -> list[dict[str, Any]]:
    """A user or system message's parts; empty texts are left out (GE6)."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    out: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, ImagePart):
            out.append(_image(part))
        elif part.text:  # a thinking part in a user message is just text here
            out.append({"text": part.text})
    return out


def _model_parts(content: str | tuple[Part, ...]) -> list[dict[str, Any]]:
    """An assistant message's content parts, thought signatures on the part they came on (GE4)."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    out: list[dict[str, Any]] = []
    pending: str | None = None  # a signature that belongs on the next text or image part
    for part in content:
        signature, pending = pending, None
        if isinstance(part, ThinkingPart):
            own = part.signature if part.provider == _NAME and is_base64(part.signature) else None
            if part.text:
                thought: dict[str, Any] = {"text": part.text, "thought": True}
                if own is not None:
                    thought["thoughtSignature"] = own
                out.append(thought)
            else:
                pending = own
            continue
        if isinstance(part, ImagePart):
            item = _image(part)
        elif part.text:
            item = {"text": part.text}
        else:
            continue
        if signature is not None:
            item["thoughtSignature"] = signature
        out.append(item)
    return out


def call_signature(call: ToolCall) -> str | None:
    """The Gemini thought signature a call came with, when it is one the API can decode."""
    data = (call.provider_data or {}).get(_NAME)
    signature = data.get("thoughtSignature") if isinstance(data, Mapping) else None
    return signature if is_base64(signature) else None


def _json_copy(value: Any) -> Any:
    """A copy of JSON data, so a caller editing the body never edits the (frozen) history."""
    if isinstance(value, dict):
        copy = dict(value)  # atomic values (the usual arguments) need nothing more
        for key, item in copy.items():
            if isinstance(item, (dict, list)):
                copy[key] = _json_copy(item)
        return copy
    if isinstance(value, list):
        return [_json_copy(v) for v in value]
    return value


def _add_call_parts(
    parts: list[dict[str, Any]], calls: Sequence[ToolCall], ids: Sequence[str], opts: _Options
) -> None:
    """Append the `functionCall` parts of one model turn, the calls' final ids `ids`, to `parts`; `args` is
    always an object."""
    vertex = opts.vertex
    for index, (call, call_id) in enumerate(zip(calls, ids)):
        arguments = call.arguments
        args = _json_copy(arguments) if isinstance(arguments, dict) else {RAW_ARGUMENTS_KEY: arguments}
        fc: dict[str, Any] = (
            {"name": call.name, "args": args} if vertex else {"id": call_id, "name": call.name, "args": args}
        )  # GE8: Vertex rejects `id`
        signature = call_signature(call) if call.provider_data else None
        if signature is None and index == 0:
            signature = opts.fallback  # GE4: each step's first call needs one on Gemini 3
        parts.append({"functionCall": fc} if signature is None else {"functionCall": fc, "thoughtSignature": signature})


def _add_responses(
    parts: list[dict[str, Any]],
    calls: Sequence[ToolCall],
    ids: Sequence[str],
    results: Sequence[ChatMessage],
    opts: _Options,
) -> None:
    """Append a `functionResponse` part per call and its result, then the images that must travel outside them.

    A response is `{"output": text}` (`{"error": text}` when `is_error`), its text the result's text parts
    joined by newlines. Images go into `functionResponse.parts` when the model takes them there; otherwise
    they follow all the responses, each result's after an IMAGES_LABEL text naming its call.
    """
    vertex, multimodal = opts.vertex, opts.multimodal
    moved: list[dict[str, Any]] = []
    for call, call_id, result in zip(calls, ids, results):
        content = result.content
        images: list[ImagePart] = []
        if isinstance(content, str):
            text = content
        else:
            text = "\n".join(p.text for p in content if not isinstance(p, ImagePart) and p.text)
            images = [p for p in content if isinstance(p, ImagePart)]
        response = {"error": text} if result.is_error else {"output": text}
        fr: dict[str, Any] = (
            {"name": call.name, "response": response}
            if vertex
            else {"id": call_id, "name": call.name, "response": response}
        )  # GE8: Vertex rejects `id`
        if images:
            if multimodal:
                fr["parts"] = [_image(p) for p in images]
            else:
                moved.append({"text": IMAGES_LABEL.format(id=call_id)})
                moved.extend(_image(p) for p in images)
        parts.append({"functionResponse": fr})
    parts.extend(moved)


def _bridge() -> dict[str, Any]:
    """A user turn standing between two turns that may not meet (GE2)."""
    return {"role": "user", "parts": [{"text": BRIDGE_TEXT}]}


def _contents(
    messages: Sequence[ChatMessage], final_ids: Sequence[str], start: int, opts: _Options
) -> list[dict[str, Any]]:
    """The `contents` list: one linear pass over a repaired history from `start`, its calls' ids taken in
    order from `final_ids`."""
    contents: list[dict[str, Any]] = []
    written = 0  # calls written so far: the next call's id is final_ids[written]
    open_user: list[dict[str, Any]] | None = None  # parts of the user turn still taking messages
    i, n = start, len(messages)
    while i < n:
        msg = messages[i]
        i += 1
        content = msg.content
        if msg.role != "assistant":
            # A later system message is user text in place; a stray tool message (repair leaves none) too.
            parts = _user_parts(content)
            if not parts:
                continue
            if open_user is None:
                open_user = parts
                contents.append({"role": "user", "parts": open_user})
            else:
                open_user.extend(parts)
            continue
        open_user = None  # an assistant message always ends the user turn, even when it sends nothing
        if not contents:
            # GE2: start with a user turn. Added even when this message sends nothing, so that the contents
            # of a shorter history stay a prefix (prefix stability).
            contents.append(_bridge())
        parts = _model_parts(content)
        calls = msg.tool_calls
        if not calls:
            if parts:
                contents.append({"role": "model", "parts": parts})
            continue
        if contents[-1]["role"] != "user":
            contents.append(_bridge())  # GE2: a call turn follows a user or response turn
        ids = final_ids[written : written + len(calls)]
        written += len(calls)
        _add_call_parts(parts, calls, ids, opts)
        contents.append({"role": "model", "parts": parts})
        # GE1/GE3: repair put exactly one result per call right after it, in call order.
        open_user = []
        _add_responses(open_user, calls, ids, messages[i : i + len(calls)], opts)
        i += len(calls)
        contents.append({"role": "user", "parts": open_user})
    if not contents:
        contents.append(_bridge())  # GE6: contents must not be empty
    return contents


def _system_instruction(messages: Sequence[ChatMessage], system: str | None) -> tuple[list[dict[str, Any]], int]:
    """The `systemInstruction` parts (option, then leading system messages) and where contents start."""
    parts: list[dict[str, Any]] = [{"text": system}] if system else []
    start = 0
    for msg in messages:
        if msg.role != "system" or (
            not isinstance(msg.content, str) and any(isinstance(p, ImagePart) for p in msg.content)
        ):
            break  # a system message with an image stays in place as user content
        parts.extend(_user_parts(msg.content))
        start += 1
    return parts, start


def _write(
    repair: RepairResult, system: str | None, opts: _Options
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The `systemInstruction` parts and the `contents` of a repaired history.

    The repaired history dies when this returns, while only young collections run: no older generation's
    collection ever scans the messages repair made.
    """
    system_parts, start = _system_instruction(repair.messages, system)
    return system_parts, _contents(repair.messages, repair.final_ids, start, opts)


def _split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Options as (generationConfig fields, other top-level body fields), camelCase."""
    generation: dict[str, Any] = {}
    top: dict[str, Any] = {}
    for key, value in options.items():
        name = _camel(key)
        if name == "generationConfig":
            generation.update(value)
        elif name in _GENERATION_FIELDS:
            generation[name] = value
        else:
            top[name] = value
    return generation, top


def _tool_declarations(tools: ToolsInput) -> list[dict[str, Any]]:
    """Tools as one `functionDeclarations` entry; the schema goes as full JSON Schema."""
    declarations = []
    for tool in coerce_tools(tools):
        decl: dict[str, Any] = {"name": tool.name}
        if tool.description:
            decl["description"] = tool.description
        decl["parametersJsonSchema"] = _json_copy(tool.parameters)
        declarations.append(decl)
    return [{"functionDeclarations": declarations}] if declarations else []


# ---------------------------------------------------------------------------------------------------------
# Reading


def _plain(value: Any) -> Any:
    """An SDK object as JSON-shaped data; its bytes as standard base64, as the REST API sends them."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump(mode="python", exclude_none=True))
    return value


def _as_mapping(value: Any, path: str) -> Mapping[str, Any]:
    """`value` as a mapping, or a ReadError saying where the object was expected."""
    if not isinstance(value, Mapping):
        raise ReadError(f"expected an object, got {type(value).__name__}", path=path)
    return value


def _as_list(value: Any, path: str) -> list[Any]:
    """`value` as a list (None as an empty one), or a ReadError."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise ReadError(f"expected a list, got {type(value).__name__}", path=path)
    return list(value)


def _read_image(part: Mapping[str, Any], path: str) -> ImagePart | None:
    """An ImagePart from an `inlineData` or `fileData` part (None for any other part)."""
    inline = _get(part, "inlineData")
    if inline is not None:
        inline = _as_mapping(inline, path + ".inlineData")
        return ImagePart(
            media_type=_get(inline, "mimeType") or "application/octet-stream",
            data=str(inline.get("data") or ""),
        )
    file = _get(part, "fileData")
    if file is not None:
        file = _as_mapping(file, path + ".fileData")
        return ImagePart(url=str(_get(file, "fileUri") or ""), media_type=_get(file, "mimeType"))
    return None


def _neutral(parts: list[Part]) -> str | tuple[Part, ...]:
    """Content as the neutral model writes it most simply: one text (or nothing) is a string."""
    if not parts:
        return ""
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return tuple(parts)


def _read_plain(part: Mapping[str, Any], path: str) -> TextPart | ImagePart | None:
    """A user-side text or image part (None for an empty text or a part of another kind)."""
    image = _read_image(part, path)
    if image is not None:
        return image
    text = part.get("text")
    return TextPart(text=text) if isinstance(text, str) and text else None


def _response_images(parts: Any, path: str) -> list[ImagePart]:
    """The images inside `functionResponse.parts` (Gemini 3 multimodal responses)."""
    out = []
    for q, raw in enumerate(_as_list(parts, path)):
        image = _read_image(_as_mapping(raw, f"{path}[{q}]"), f"{path}[{q}]")
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
            parsed = json.loads(raw)
        except ValueError:
            return str(raw)
        if not isinstance(parsed, dict):
            return str(raw)
    return dict(args)


def _read_model(parts: list[Any], path: str) -> ChatMessage:
    """A model content as an assistant message, signatures kept where they will go back (GE4)."""
    content: list[Part] = []
    calls: list[ToolCall] = []
    for j, raw in enumerate(parts):
        where = f"{path}.parts[{j}]"
        part = _as_mapping(raw, where)
        signature = _get(part, "thoughtSignature")
        fc = _get(part, "functionCall")
        if fc is not None:
            fc = _as_mapping(fc, where + ".functionCall")
            name = fc.get("name")
            if not isinstance(name, str) or not name:
                raise ReadError("a functionCall needs a name", path=where + ".functionCall.name")
            calls.append(
                ToolCall(
                    id=str(fc.get("id") or ""),
                    name=name,
                    arguments=_unwrap_args(fc.get("args")),
                    provider_data={_NAME: {"thoughtSignature": signature}} if signature else None,
                )
            )
            continue
        text = part.get("text")
        if part.get("thought"):
            content.append(ThinkingPart(text=str(text or ""), signature=signature, provider=_NAME))
            continue
        item: Part | None = _read_image(part, where)
        if item is None and isinstance(text, str) and text:
            item = TextPart(text=text)
        if signature:  # a signature on a plain part: carried by an empty thinking part right before it
            content.append(ThinkingPart(signature=signature, provider=_NAME))
        if item is not None:
            content.append(item)
    return ChatMessage(role="assistant", content=_neutral(content), tool_calls=tuple(calls))


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
        part = _as_mapping(raw, where)
        fr = _get(part, "functionResponse")
        if fr is not None:
            fr = _as_mapping(fr, where + ".functionResponse")
            k = len(results)
            call_id = str(fr.get("id") or (calls[k].id if k < len(calls) else ""))  # GE1: no ids: by order
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
        item = _read_plain(part, where)
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
        out.append(ChatMessage(role="user", content=_neutral(rest)))
    return out


def _is_image(part: Any) -> bool:
    """True for an inlineData or fileData part."""
    return isinstance(part, Mapping) and (_get(part, "inlineData") is not None or _get(part, "fileData") is not None)


def _read_content(
    contents: list[Any], index: int, calls: Sequence[ToolCall]
) -> tuple[list[ChatMessage], Sequence[ToolCall]]:
    """The messages of one content, and the calls that the next content's responses answer."""
    path = f"contents[{index}]"
    content = _as_mapping(contents[index], path)
    parts = _as_list(content.get("parts"), path + ".parts")
    role = content.get("role") or "user"
    if role == "model":
        message = _read_model(parts, path)
        return ([message] if message.content or message.tool_calls else []), message.tool_calls
    if _is_bridge(contents, index):
        return [], ()
    read = _read_user(parts, path, calls)
    if role == "system":  # not valid on the wire (GE7), but its meaning is plain
        read = [ChatMessage(role="system", content=m.content) if m.role == "user" else m for m in read]
    return read, ()


@contextmanager
def _located(path: str) -> Iterator[None]:
    """A value the neutral model rejects (a number where a name goes) as a ReadError saying where."""
    try:
        yield
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = ".".join(str(x) for x in error["loc"])
        raise ReadError(f"{field}: {error['msg']}" if field else error["msg"], path=path) from None


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


# ---------------------------------------------------------------------------------------------------------
# Checking


def _problem(code: str, path: str, message: str) -> Problem:
    """A Gemini problem."""
    return Problem(code=code, path=path, message=message, provider=_NAME)


def _api_path(path: str) -> str:
    """A body path as the API names fields in its errors (snake_case)."""
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), path)


def _refs(value: Any) -> Iterator[str]:
    """Every `{"$ref": name}` inside a response object (GE9)."""
    if isinstance(value, Mapping):
        ref = value.get("$ref")
        if isinstance(ref, str):
            yield ref
        for v in value.values():
            yield from _refs(v)
    elif isinstance(value, list):
        for v in value:
            yield from _refs(v)


@dataclass
class _Turn:
    """What the turn rules need to know about one content."""

    role: Any
    calls: list[tuple[str | None, str]]  # (id, name) of each functionCall part
    call_signed: list[bool]
    responses: list[str | None]  # id of each functionResponse part
    standard: bool  # has a part other than a function response


class _Checker:
    """Collects the problems of one body."""

    def __init__(self, model: str | None, vertex: bool) -> None:
        self.model = model
        self.vertex = vertex
        self.problems: list[Problem] = []

    def add(self, code: str, path: str, message: str) -> None:
        """Record one problem."""
        self.problems.append(_problem(code, path, message))

    def bytes_field(self, value: Any, path: str) -> None:
        """GE0: bytes travel as base64 text."""
        if not is_base64(value):
            shown = value if isinstance(value, str) else json.dumps(value, default=str)
            self.add(
                "GE0",
                path,
                f"Invalid value at '{_api_path(path)}' (TYPE_BYTES), Base64 decoding failed for \"{shown[:40]}\"",
            )

    def struct(self, value: Any, path: str) -> bool:
        """GE0: `args` and `response` are JSON objects (protobuf Struct)."""
        if isinstance(value, Mapping):
            return True
        self.add(
            "GE0",
            path,
            f"Invalid value at '{_api_path(path)}' (type.googleapis.com/google.protobuf.Struct), "
            f"{json.dumps(value, default=str)[:40]}",
        )
        return False

    def blob(self, part: Mapping[str, Any], path: str) -> None:
        """An inlineData or fileData part: mimeType and data (base64) or fileUri."""
        inline = _get(part, "inlineData")
        if inline is not None:
            if not isinstance(inline, Mapping):
                self.add("GE0", path + ".inlineData", "Invalid JSON payload received. Expected an object.")
                return
            self.bytes_field(inline.get("data"), path + ".inlineData.data")
            if not _get(inline, "mimeType"):
                self.add(
                    "GE0",
                    path + ".inlineData.mimeType",
                    f"* GenerateContentRequest.{_api_path(path)}.inline_data.mime_type: mime_type must be specified.",
                )
        file = _get(part, "fileData")
        if file is not None and not (isinstance(file, Mapping) and _get(file, "fileUri")):
            self.add(
                "GE0",
                path + ".fileData",
                f"* GenerateContentRequest.{_api_path(path)}.file_data.file_uri: file_uri must be specified.",
            )

    def part(self, part: Any, path: str, turn: _Turn) -> None:
        """One part: exactly one kind of data, well-formed calls and responses."""
        if not isinstance(part, Mapping):
            self.add("GE0", path, f"Invalid value at '{_api_path(path)}', expected an object.")
            return
        kinds = [k for k in _DATA_FIELDS if _get(part, k) is not None]
        if not kinds:
            self.add(
                "GE0",
                path,
                f"* GenerateContentRequest.{_api_path(path)}.data: "
                "required oneof field 'data' must have one initialized field",
            )
            return
        if len(kinds) > 1:
            self.add(
                "GE0",
                path,
                f"Invalid JSON payload received. Oneof field 'data' is already set. Cannot set '{kinds[1]}'",
            )
        signature = _get(part, "thoughtSignature")
        if signature is not None:
            self.bytes_field(signature, path + ".thoughtSignature")
        kind = kinds[0]
        if kind == "text" and not isinstance(part.get("text"), str):
            self.add("GE0", path + ".text", f"Invalid value at '{_api_path(path)}.text' (TYPE_STRING)")
        elif kind in ("inlineData", "fileData"):
            self.blob(part, path)
        elif kind == "functionCall":
            self.function_call(_get(part, kind), path + ".functionCall", turn, signature is not None)
        elif kind == "functionResponse":
            self.function_response(_get(part, kind), path + ".functionResponse", turn)
        if kind != "functionResponse":
            turn.standard = True

    def function_part(self, part: Any, path: str, payload: str) -> Mapping[str, Any]:
        """What a `functionCall` and a `functionResponse` share: an object (GE0) with a name (GE5), an object
        `payload` (`args` or `response`, GE0), no `id` on Vertex (GE8). The part, or {} when it is not one."""
        checked: Mapping[str, Any] = part if isinstance(part, Mapping) else {}
        if checked is not part:
            self.add("GE0", path, f"Invalid value at '{_api_path(path)}', expected an object.")
        name = checked.get("name")
        if not isinstance(name, str) or not name:
            self.add(
                "GE5",
                path + ".name",
                f"* GenerateContentRequest.{_api_path(path)}.name: Name cannot be empty.",
            )
        if payload in checked:
            self.struct(checked[payload], f"{path}.{payload}")
        if "id" in checked and self.vertex:  # GE8
            self.add(
                "GE8",
                path + ".id",
                f"Invalid JSON payload received. Unknown name \"id\" at '{_api_path(path)}': Cannot find field.",
            )
        return checked

    def function_call(self, fc: Any, path: str, turn: _Turn, signed: bool) -> None:
        """A `functionCall` (`function_part` with `args`), recorded in its turn."""
        fc = self.function_part(fc, path, "args")
        call_id, name = fc.get("id"), fc.get("name")
        turn.calls.append((call_id if isinstance(call_id, str) and call_id else None, str(name or "")))
        turn.call_signed.append(signed)

    def function_response(self, fr: Any, path: str, turn: _Turn) -> None:
        """A `functionResponse` (`function_part` with `response`) and its parts."""
        fr = self.function_part(fr, path, "response")
        response = fr.get("response")
        inner = fr.get("parts")
        names: set[str] = set()
        if inner is not None:
            if not isinstance(inner, list):
                self.add("GE0", path + ".parts", f"Invalid value at '{_api_path(path)}.parts', expected a list.")
                inner = []
            elif inner and self.model and not is_gemini3(self.model):  # GE10 (INF)
                self.add(
                    "GE10",
                    path + ".parts",
                    f"Multimodal function response parts are not supported by model {self.model}.",
                )
            for q, item in enumerate(inner):
                where = f"{path}.parts[{q}]"
                if not isinstance(item, Mapping) or (
                    _get(item, "inlineData") is None and _get(item, "fileData") is None
                ):
                    self.add(
                        "GE0",
                        where,
                        f"* GenerateContentRequest.{_api_path(where)}.data: "
                        "required oneof field 'data' must have one initialized field",
                    )
                    continue
                self.blob(item, where)
                for blob in (_get(item, "inlineData"), _get(item, "fileData")):
                    if isinstance(blob, Mapping) and isinstance(_get(blob, "displayName"), str):
                        names.add(_get(blob, "displayName"))
        for ref in _refs(response):  # GE9
            if ref not in names:
                self.add(
                    "GE9",
                    path + ".response",
                    f"The referenced name {ref} in function_response.response "
                    "does not match to a display_name in the function_response.parts.",
                )
        response_id = fr.get("id")
        turn.responses.append(response_id if isinstance(response_id, str) and response_id else None)

    def content(self, content: Any, path: str) -> _Turn:
        """One content: a valid role (GE7), parts (GE6), each part; what the turn rules need of it."""
        turn = _Turn(role=None, calls=[], call_signed=[], responses=[], standard=False)
        if not isinstance(content, Mapping):
            self.add("GE0", path, f"Invalid value at '{_api_path(path)}', expected an object.")
            return turn
        role = content.get("role")
        turn.role = role
        if role is None:
            turn.role = "user"  # the Developer API defaults a missing role to user; Vertex rejects it (GE7)
            if self.vertex:
                self.add("GE7", path + ".role", "Please use a valid role: user, model.")
        elif role == "system":
            self.add("GE7", path + ".role", "Content with system role is not supported.")
        elif role not in ("user", "model"):
            self.add("GE7", path + ".role", "Please use a valid role: user, model.")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:  # GE6
            self.add(
                "GE6",
                path + ".parts",
                f"* GenerateContentRequest.{_api_path(path)}.parts: contents.parts must not be empty.",
            )
            return turn
        for j, part in enumerate(parts):
            self.part(part, f"{path}.parts[{j}]", turn)
        return turn

    def pairing(self, turns: list[_Turn]) -> None:
        """GE1-GE3: call turns after user turns, each answered by the next turn, one response per call."""
        for i, turn in enumerate(turns):
            path = f"contents[{i}]"
            before = turns[i - 1] if i else None
            if turn.calls:
                if before is None or before.role != "user":  # GE2
                    self.add(
                        "GE2",
                        path,
                        "Please ensure that function call turn comes immediately after a user "
                        "turn or after a function response turn.",
                    )
                after = turns[i + 1] if i + 1 < len(turns) else None
                if after is None or not after.responses:  # GE1: a call turn with no responses at all
                    self.add("GE1", f"contents[{i + 1}]" if after else path, _GE1)
            if turn.responses:
                if before is None or not before.calls:  # GE3
                    self.add(
                        "GE3",
                        path,
                        "Please ensure that function response turn comes immediately after a function call turn.",
                    )
                else:
                    self.matched(before, turn, path)

    def matched(self, calls: _Turn, responses: _Turn, path: str) -> None:
        """GE1: as many responses as calls; when ids are sent, each call answered once under its id."""
        if len(responses.responses) != len(calls.calls):
            self.add("GE1", path, _GE1)
            return
        call_ids = [c for c, _ in calls.calls]
        # Ids pair calls and responses only when both sides carry them; otherwise order does (INF).
        if all(call_ids) and all(responses.responses):
            paired = len(set(call_ids)) == len(call_ids) and set(call_ids) == set(responses.responses)
            if not paired:
                self.add("GE1", path, _GE1 + " Function response ids must match the function call ids of that turn.")

    def signatures(self, turns: list[_Turn]) -> None:
        """GE4 (Gemini 3): the first call of each step of the current turn carries its thought signature."""
        start = 0
        for i, turn in enumerate(turns):
            if turn.role == "user" and turn.standard:
                start = i
        for i in range(start, len(turns)):
            turn = turns[i]
            if turn.role == "model" and turn.calls and not turn.call_signed[0]:
                name = turn.calls[0][1]
                self.add("GE4", f"contents[{i}]", _GE4.format(name=name, position=i))

    def body(self, body: Any) -> list[Problem]:
        """Every problem of a body (or a bare contents list), never raising."""
        if isinstance(body, Sequence) and not isinstance(body, (str, bytes)):
            body = {"contents": body}
        if not isinstance(body, Mapping):
            self.add("GE0", "", "Invalid JSON payload received. Expected an object.")
            return self.problems
        system = _get(body, "systemInstruction")
        if system is not None:
            parts = system.get("parts") if isinstance(system, Mapping) else None
            if not isinstance(parts, list) or not parts:  # GE6
                self.add(
                    "GE6",
                    "systemInstruction.parts",
                    "* GenerateContentRequest.system_instruction.parts: contents.parts must not be empty.",
                )
            else:
                for j, part in enumerate(parts):
                    self.part(part, f"systemInstruction.parts[{j}]", _Turn(None, [], [], [], False))
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:  # GE6
            self.add("GE6", "contents", "* GenerateContentRequest.contents: contents is not specified")
            return self.problems
        turns = [self.content(c, f"contents[{i}]") for i, c in enumerate(contents)]
        self.pairing(turns)
        if is_gemini3(self.model):
            self.signatures(turns)
        return self.problems


_GE4 = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
    "function call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
_GE1 = (
    "Please ensure that the number of function response parts is equal to the number of function call parts "
    "of the function call turn."
)


# ---------------------------------------------------------------------------------------------------------
# The adapter


class Gemini(Provider):
    """Google Gemini `generateContent`: `user` and `model` turns, function call and response parts."""

    name: ClassVar[str] = _NAME
    id_max_length: ClassVar[int | None] = None  # ids are free text; Vertex takes none (GE8)
    id_pattern: ClassVar[str | None] = None
    arguments_as_string: ClassVar[bool] = False  # `args` is an object
    images_in_tool_results: ClassVar[bool] = False  # only Gemini 3, with multimodal_function_response

    def to_request(
        self,
        history: HistoryInput,
        *,
        model: str,
        tools: ToolsInput = None,
        system: str | None = None,
        is_read_only: IsReadOnly | None = None,
        repairer: Repairer | None = None,
        vertex: bool = False,
        multimodal_function_response: bool | None = None,
        thought_signature_fallback: str | None = _AUTO,
        **options: Any,
    ) -> dict[str, Any]:
        """The REST body of `models/{model}:generateContent` (the model is in the URL, not the body).

        `vertex=True` leaves call ids out (GE8). `multimodal_function_response` puts tool-result images into
        `functionResponse.parts` (default: for Gemini 3 models); otherwise they follow the responses as user
        parts. `thought_signature_fallback` goes on the first call of a turn that has no signature (default:
        `SKIP_SIGNATURE` for Gemini 3, which rejects such turns, else nothing). Generation options
        (`temperature`, `max_output_tokens`, `thinking_config`, or a whole `generation_config`) go into
        `generationConfig`; other options become top-level camelCase fields (`tool_config` -> `toolConfig`).
        """
        gemini3 = is_gemini3(model)
        opts = _Options(
            vertex=vertex,
            multimodal=gemini3 if multimodal_function_response is None else multimodal_function_response,
            fallback=(SKIP_SIGNATURE if gemini3 else None)
            if thought_signature_fallback == _AUTO
            else thought_signature_fallback,
        )
        with young_collections_only():
            system_parts, contents = _write(repaired(history, is_read_only, repairer), system, opts)
            body: dict[str, Any] = {"contents": contents}
        if system_parts:
            body["systemInstruction"] = {"parts": system_parts}
        declarations = _tool_declarations(tools)
        if declarations:
            body["tools"] = declarations
        generation, top = _split_options(options)
        if generation:
            body["generationConfig"] = generation
        body.update(top)
        return body

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """A history from a saved body (or its `contents` list); bridge turns dropped, `_raw` unwrapped."""
        with error_context(provider=_NAME):
            data = _plain(data)
            out: list[ChatMessage] = []
            if isinstance(data, Mapping):
                if "contents" not in data:
                    raise ReadError("expected a generateContent body with 'contents', or a contents list")
                system = _get(data, "systemInstruction")
                if system is not None:
                    system = _as_mapping(system, "systemInstruction")
                    for j, part in enumerate(_as_list(system.get("parts"), "systemInstruction.parts")):
                        item = _read_plain(
                            _as_mapping(part, f"systemInstruction.parts[{j}]"),
                            f"systemInstruction.parts[{j}]",
                        )
                        if item is not None:
                            with _located(f"systemInstruction.parts[{j}]"):
                                out.append(ChatMessage(role="system", content=_neutral([item])))
                contents = _as_list(data["contents"], "contents")
            else:
                contents = _as_list(data, "contents")
            calls: Sequence[ToolCall] = ()
            for i in range(len(contents)):
                with _located(f"contents[{i}]"):
                    read, calls = _read_content(contents, i, calls)
                out.extend(read)
            return out

    def from_response(self, response: Any) -> ChatMessage:
        """The first candidate's content as an assistant message (ids, signatures and thoughts kept)."""
        with error_context(provider=_NAME):
            data = _as_mapping(_plain(response), "response")
            candidates = _as_list(data.get("candidates"), "candidates")
            if not candidates:
                feedback = _get(data, "promptFeedback") or data.get("prompt_feedback") or {}
                reason = (
                    feedback.get("blockReason") or feedback.get("block_reason")
                    if isinstance(feedback, Mapping)
                    else None
                )
                raise ReadError(
                    f"the response has no candidates (blocked: {reason})"
                    if reason
                    else "the response has no candidates",
                    path="candidates",
                )
            candidate = _as_mapping(candidates[0], "candidates[0]")
            content = candidate.get("content") or {}
            content = _as_mapping(content, "candidates[0].content")
            with _located("candidates[0].content"):
                return _read_model(
                    _as_list(content.get("parts"), "candidates[0].content.parts"), "candidates[0].content"
                )

    def check(self, body: Mapping[str, Any], *, model: str | None = None, vertex: bool = False) -> list[Problem]:
        """The 400s Gemini would answer, predicted offline (GE0-GE10; GE4 needs `model`, GE8 `vertex=True`).

        Field names may be camelCase or snake_case, as the API accepts both.
        """
        return _Checker(model, vertex).body(body)

    def sdk_arguments(self, body: Mapping[str, Any], *, model: str) -> dict[str, Any]:
        """The keyword arguments of `client.models.generate_content` for a body from `to_request`."""
        config: dict[str, Any] = {}
        for key, value in body.items():
            if key == "generationConfig":
                config.update(value)
            elif key not in ("contents", "model"):
                config[key] = value
        return {"model": model, "contents": body["contents"], "config": config}

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.models.generate_content` with a body that also names its `model` (as `send` passes it)."""
        arguments = self.sdk_arguments(body, model=_model_of(body))
        return client.models.generate_content(**arguments)

    async def _create_async(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.aio.models.generate_content`, the SDK's async twin."""
        arguments = self.sdk_arguments(body, model=_model_of(body))
        return await client.aio.models.generate_content(**arguments)

    def send(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        """Send with a `google.genai.Client`; the model goes beside the body, not in it."""
        body = self.to_request(history, **kwargs)
        return self.from_response(self._create(client, {**body, "model": kwargs["model"]}))

    async def send_async(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        """`send` through `client.aio`."""
        body = self.to_request(history, **kwargs)
        return self.from_response(await self._create_async(client, {**body, "model": kwargs["model"]}))


def _model_of(body: Mapping[str, Any]) -> str:
    """The model a body for `_create` names."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError("Gemini takes the model beside the body: pass {'model': ..., **body}")
    return model


PROVIDER = Gemini()
to_request = PROVIDER.to_request
from_request = PROVIDER.from_request
from_response = PROVIDER.from_response
check = PROVIDER.check
send = PROVIDER.send
send_async = PROVIDER.send_async
