"""Writing a history as the body of `generateContent`: system instruction, contents, tools, options."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chatmend import _json as strict_json
from chatmend.messages import ChatMessage, ImagePart, Part, TextPart, ThinkingPart, Tool, ToolCall
from chatmend.providers.base import IdAssigner, parse_data_url
from chatmend.providers.gemini.wire import BRIDGE_TEXT, IMAGES_LABEL, NAME, RAW_ARGUMENTS_KEY, is_base64
from chatmend.repair import RepairResult

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


@dataclass(frozen=True)
class Options:
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
        elif isinstance(part, (TextPart, ThinkingPart)) and part.text:  # thinking in a user message is text
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
            own = part.signature if part.provider == NAME and is_base64(part.signature) else None
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
        elif isinstance(part, TextPart) and part.text:
            item = {"text": part.text}
        else:
            continue
        if signature is not None:
            item["thoughtSignature"] = signature
        out.append(item)
    return out


def call_signature(call: ToolCall) -> str | None:
    """The Gemini thought signature a call came with, when it is one the API can decode."""
    data = (call.provider_data or {}).get(NAME)
    signature = data.get("thoughtSignature") if isinstance(data, Mapping) else None
    return signature if is_base64(signature) else None


def _json_copy(value: Any) -> Any:
    """A copy of JSON data, so a caller editing the body never edits the (frozen) history."""
    if isinstance(value, dict) and not any(isinstance(v, (dict, list)) for v in value.values()):
        return dict(value)  # atomic values (the usual arguments) need nothing more
    return strict_json.copy_tree(value)  # a stack, not recursion: any depth read is copied


def _add_call_parts(
    parts: list[dict[str, Any]], calls: tuple[ToolCall, ...], ids: list[str], opts: Options
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
    calls: tuple[ToolCall, ...],
    ids: list[str],
    results: list[ChatMessage],
    opts: Options,
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
            text = "\n".join(p.text for p in content if isinstance(p, (TextPart, ThinkingPart)) and p.text)
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
    messages: list[ChatMessage], wire_ids: IdAssigner, start: int, opts: Options
) -> list[dict[str, Any]]:
    """The `contents` list: one linear pass over a repaired history from `start`, its calls' ids taken in
    order from `wire_ids`."""
    contents: list[dict[str, Any]] = []
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
        ids = wire_ids.next_ids(calls)
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


def _system_instruction(messages: list[ChatMessage], system: str | None) -> tuple[list[dict[str, Any]], int]:
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


def write_history(
    repair: RepairResult, ids: IdAssigner, system: str | None, opts: Options
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The `systemInstruction` parts and the `contents` of a repaired history.

    The repaired history dies when this returns, while only young collections run: no older generation's
    collection ever scans the messages repair made.
    """
    system_parts, start = _system_instruction(repair.messages, system)
    return system_parts, _contents(repair.messages, ids, start, opts)


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
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


def tool_declarations(tools: list[Tool]) -> list[dict[str, Any]]:
    """Tools as one `functionDeclarations` entry; the schema goes as full JSON Schema."""
    declarations = []
    for tool in tools:
        decl: dict[str, Any] = {"name": tool.name}
        if tool.description:
            decl["description"] = tool.description
        decl["parametersJsonSchema"] = _json_copy(tool.parameters)
        declarations.append(decl)
    return [{"functionDeclarations": declarations}] if declarations else []
