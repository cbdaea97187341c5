"""Writing a history as the body of `generateContent`: system instruction, contents, tools, options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from chatmend import strict_json as strict_json
from chatmend.exceptions import UnsupportedError
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
)
from chatmend.providers.base import IdAssigner, parse_data_url
from chatmend.providers.gemini.wire import (
    BRIDGE_TEXT,
    IMAGES_LABEL,
    NAME,
    RAW_ARGUMENTS_KEY,
    is_base64,
    media_type_of_uri,
    response_text,
)
from chatmend.providers.kept import kept_field, kept_fields
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


def _with_kept(item: dict[str, Any], kind: str, kept: dict[str, Any] | None) -> dict[str, Any]:
    """A written part with the fields its reader kept: the part's own beside the data, the data object's
    (`kind`'s) in it."""
    if kept is None:
        return item
    inner = kept.get(kind)
    if inner:
        item[kind] = {**item[kind], **inner}
    extras = kept.get("part")
    if extras:
        item.update(extras)
    return item


def _media(part: ImagePart | FilePart) -> dict[str, Any]:
    """An image or file as an `inlineData` part (base64 bytes) or a `fileData` part (a URI; a Gemini file by
    its URI), with the fields its reader kept."""
    if part.data is None and part.url is not None and part.url.startswith("data:"):
        inline = parse_data_url(part.url)
        part = replace(part, url=None, data=inline.data, media_type=part.media_type or inline.media_type)
    if part.data is not None:
        return _with_kept({"inlineData": {"mimeType": part.media_type, "data": part.data}}, "inlineData",
                          kept_fields(part.provider_data, NAME))
    url = part.url
    if url is None:  # a FilePart by file_id: a Gemini file's id is its URI
        assert isinstance(part, FilePart)
        if part.provider not in (None, NAME):
            raise UnsupportedError(f"a file uploaded to {part.provider} ({part.file_id!r}) is not a Gemini file",
                                   provider=NAME, feature="file_id")
        url = part.file_id or ""
    mime = part.media_type or media_type_of_uri(url)
    blob = {"mimeType": mime, "fileUri": url} if mime else {"fileUri": url}
    return _with_kept({"fileData": blob}, "fileData", kept_fields(part.provider_data, NAME))


def _text(part: TextPart) -> dict[str, Any]:
    """A text part with the fields its reader kept (`thought`, `videoMetadata`, `partMetadata`, ...)."""
    return _with_kept({"text": part.text}, "text", kept_fields(part.provider_data, NAME))


def _native(part: NativePart) -> dict[str, Any]:
    """A Gemini part chatmend does not model, as it was (a copy: the body is the caller's to edit)."""
    copied: dict[str, Any] = strict_json.copy_tree(part.data)
    return copied


def _user_parts(content: str | tuple[Part, ...]) -> list[dict[str, Any]]:
    """A user or system message's parts; empty texts are left out (GE6) unless their reader kept them."""
    if isinstance(content, str):
        return [{"text": content}] if content else []
    out: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextPart):
            if part.provider_data is None:
                if part.text:
                    out.append({"text": part.text})
            else:
                out.append(_text(part))
        elif isinstance(part, (ImagePart, FilePart)):
            out.append(_media(part))
        elif isinstance(part, NativePart):
            out.append(_native(part))
        elif part.text:  # thinking in a user message is text
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
                kept = kept_fields(part.provider_data, NAME) if part.provider == NAME else None
                out.append(_with_kept(thought, "text", kept))
            else:
                pending = own
            continue
        if isinstance(part, NativePart):
            out.append(_native(part))
            continue
        if isinstance(part, (ImagePart, FilePart)):
            item = _media(part)
        elif part.provider_data is not None:
            item = _text(part)
        elif part.text or signature is not None:  # an empty text carries a signature (Gemini 3 sends them)
            item = {"text": part.text}
        else:
            continue
        if signature is not None:
            item["thoughtSignature"] = signature
        out.append(item)
    return out


def call_signature(call: ToolCall) -> str | None:
    """The Gemini thought signature a call came with, when it is one the API can decode."""
    signature = kept_field(call.provider_data, NAME, "thoughtSignature")
    return signature if is_base64(signature) else None


def _without_id(call: ToolCall) -> bool:
    """True when the call came without an id, and goes back without one (its responses too)."""
    kept = kept_fields(call.provider_data, NAME)
    return kept is not None and bool(kept.get("noId"))


def _add_call_parts(
    parts: list[dict[str, Any]], calls: tuple[ToolCall, ...], ids: list[str], opts: Options
) -> None:
    """Append the `functionCall` parts of one model turn, the calls' final ids `ids`, to `parts`; `args` is
    always an object."""
    vertex = opts.vertex
    for index, (call, call_id) in enumerate(zip(calls, ids)):
        arguments = call.arguments
        args = strict_json.copy_json(arguments) if isinstance(arguments, dict) else {RAW_ARGUMENTS_KEY: arguments}
        kept = kept_fields(call.provider_data, NAME) if call.provider_data else None
        fc: dict[str, Any] = (
            {"name": call.name, "args": args} if vertex or (kept is not None and kept.get("noId"))
            else {"id": call_id, "name": call.name, "args": args}
        )  # GE8: Vertex rejects `id`
        signature = call_signature(call) if call.provider_data else None
        if signature is None and index == 0:
            signature = opts.fallback  # GE4: each step's first call needs one on Gemini 3
        part = {"functionCall": fc} if signature is None else {"functionCall": fc, "thoughtSignature": signature}
        parts.append(part if kept is None else _with_kept(part, "functionCall", kept))


def _response(result: ChatMessage, text: str, original: Any) -> dict[str, Any] | None:
    """The `response` object a result was read with, when its text is still that one's (kept whole, not
    rewritten as `{"output": text}`; None for a response that had none), else `{"output": text}`
    (`{"error": text}` when `is_error`)."""
    if response_text(original) == (text, result.is_error):
        return None if original is None else strict_json.copy_json(original)
    return {"error": text} if result.is_error else {"output": text}


def response_parts(calls: tuple[ToolCall, ...], ids: list[str], results: list[ChatMessage]) -> list[dict[str, Any]]:
    """The parts `_add_responses` writes for `results` of `calls` under wire ids `ids`, outside Vertex, for a model
    that takes no images in responses (`repair_body`'s stub route, for synthetic results)."""
    parts: list[dict[str, Any]] = []
    _add_responses(parts, calls, ids, results, Options(vertex=False, multimodal=False, fallback=None))
    return parts


def _add_responses(
    parts: list[dict[str, Any]],
    calls: tuple[ToolCall, ...],
    ids: list[str],
    results: list[ChatMessage],
    opts: Options,
) -> None:
    """Append a `functionResponse` part per call and its result, then the images that must travel outside them.

    A response is `{"output": text}` (`{"error": text}` when `is_error`), its text the result's text parts
    joined by newlines, unless the result was read from Gemini with another `response` object (kept as it
    was). Images and files go into `functionResponse.parts` when the model takes them there, or the response
    had them there; otherwise they follow all the responses, each result's after an IMAGES_LABEL text naming
    its call.
    """
    vertex, multimodal = opts.vertex, opts.multimodal
    moved: list[dict[str, Any]] = []
    for call, call_id, result in zip(calls, ids, results):
        content = result.content
        media: list[Part] = []
        if isinstance(content, str):
            text = content
        else:
            text = "\n".join(p.text for p in content if isinstance(p, (TextPart, ThinkingPart)) and p.text)
            media = [p for p in content if isinstance(p, (ImagePart, FilePart, NativePart))]
        kept = kept_fields(result.provider_data, NAME) if result.provider_data is not None else None
        fr: dict[str, Any] = (
            {"name": call.name}
            if vertex or (kept is not None and kept.get("noId")) or (call.provider_data and _without_id(call))
            else {"id": call_id, "name": call.name}
        )  # GE8: Vertex rejects `id`
        if kept is not None and "response" in kept:
            response = _response(result, text, kept["response"])
            if response is not None:
                fr["response"] = response
        else:
            fr["response"] = {"error": text} if result.is_error else {"output": text}
        if media:
            if multimodal or (kept is not None and kept.get("inParts")):
                fr["parts"] = [_native(p) if isinstance(p, NativePart) else _media(p)  # type: ignore[arg-type]
                               for p in media]
            else:
                moved.append({"text": IMAGES_LABEL.format(id=call_id)})
                moved.extend(_native(p) if isinstance(p, NativePart) else _media(p)  # type: ignore[arg-type]
                             for p in media)
        elif kept is not None and kept.get("inParts"):
            fr["parts"] = []
        part = {"functionResponse": fr}
        parts.append(part if kept is None else _with_kept(part, "functionResponse", kept))
    parts.extend(moved)


@dataclass
class RunOrigins:
    """Where a run `repair_body` writes anew after items it keeps begins, and which message opened each content
    written for it (`providers.body.Run` is the run itself): the messages before `boundary` are
    written for context only (the calls the run answers, or the message before), never merged into the run's
    contents; nothing is written for a run that sends nothing."""

    boundary: int
    """The first message of the run proper: a user turn open before it is closed there."""
    origins: list[int] = field(default_factory=list)
    """For each content written, the index of the message that opened it."""


def _bridge() -> dict[str, Any]:
    """A user turn standing between two turns that may not meet (GE2)."""
    return {"role": "user", "parts": [{"text": BRIDGE_TEXT}]}


def opens_turn(msg: ChatMessage) -> bool:
    """True for the first message of a user turn read right after another one: it opens its own again."""
    if msg.provider_data is None:
        return False
    kept = kept_fields(msg.provider_data, NAME)
    return kept is not None and bool(kept.get("turn"))


def _turn(role: str, parts: list[dict[str, Any]], msg: ChatMessage) -> dict[str, Any]:
    """A content opened by `msg`, with the content's own fields its reader kept (callers test
    `msg.provider_data` first: most messages have none, and this is once a content)."""
    turn = {"role": role, "parts": parts}
    kept = kept_fields(msg.provider_data, NAME)
    if kept is not None and kept.get("content"):
        turn.update(kept["content"])
    return turn


def _contents(
    messages: list[ChatMessage], wire_ids: IdAssigner, start: int, opts: Options,
    run: RunOrigins | None = None,
) -> list[dict[str, Any]]:
    """The `contents` list: one linear pass over a repaired history from `start`, its calls' ids taken in
    order from `wire_ids`; with `run`, the contents of a run of `repair_body` (`RunOrigins`)."""
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
            if open_user is None or (run is not None and i - 1 == run.boundary) or (
                    msg.provider_data is not None and opens_turn(msg)):
                open_user = parts
                contents.append({"role": "user", "parts": open_user} if msg.provider_data is None
                                else _turn("user", open_user, msg))
                if run is not None:
                    run.origins.append(i - 1)
            else:
                open_user.extend(parts)
            continue
        open_user = None  # an assistant message always ends the user turn, even when it sends nothing
        if not contents:
            # GE2: start with a user turn. Added even when this message sends nothing, so that the contents
            # of a shorter history stay a prefix (prefix stability).
            contents.append(_bridge())
            if run is not None:
                run.origins.append(i - 1)
        parts = _model_parts(content)
        calls = msg.tool_calls
        if not calls:
            if parts:
                contents.append({"role": "model", "parts": parts} if msg.provider_data is None
                                else _turn("model", parts, msg))
                if run is not None:
                    run.origins.append(i - 1)
            continue
        if contents and contents[-1]["role"] != "user":
            contents.append(_bridge())  # GE2: a call turn follows a user or response turn
            if run is not None:
                run.origins.append(i - 1)
        ids = wire_ids.next_ids(calls)
        _add_call_parts(parts, calls, ids, opts)
        contents.append({"role": "model", "parts": parts} if msg.provider_data is None
                        else _turn("model", parts, msg))
        if run is not None:
            run.origins.append(i - 1)
        # GE1/GE3: repair put exactly one result per call right after it, in call order.
        open_user = []
        results = messages[i : i + len(calls)]
        _add_responses(open_user, calls, ids, results, opts)
        i += len(calls)
        first = results[0] if results else msg
        contents.append({"role": "user", "parts": open_user} if first.provider_data is None
                        else _turn("user", open_user, first))
        if run is not None:
            run.origins.append(i - len(calls))
    return contents


def _system_instruction(messages: list[ChatMessage], system: str | None) -> tuple[list[dict[str, Any]], int]:
    """The `systemInstruction` parts (option, then leading system messages) and where contents start."""
    parts: list[dict[str, Any]] = [{"text": system}] if system else []
    start = 0
    for msg in messages:
        if msg.role != "system" or (
            not isinstance(msg.content, str) and any(not isinstance(p, (TextPart, ThinkingPart)) for p in msg.content)
        ):
            break  # a system message with an image or a file stays in place as user content
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
    contents = _contents(repair.messages, ids, start, opts)
    if not contents and (system_parts or not repair.messages):
        # GE6: contents must not be empty. Not for messages that all send nothing: to_request refuses those.
        contents.append(_bridge())
    return system_parts, contents


def write_run(messages: list[ChatMessage], ids: IdAssigner, lead: int) -> list[dict[str, Any]]:
    """The contents of `messages[lead:]`, a run `repair_body` writes anew; the first `lead` messages (kept,
    the calls the run answers or the message before it) are written for context and left out. A system
    message stays in the list, where it was read."""
    opts = Options(vertex=False, multimodal=False, fallback=None)
    if not lead:
        return _contents(messages, ids, 0, opts) or [_bridge()]  # GE6: the list must not be left empty
    run = RunOrigins(boundary=lead)
    contents = _contents(messages, ids, 0, opts, run)
    return [content for content, origin in zip(contents, run.origins) if origin >= lead]


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
        decl["parametersJsonSchema"] = strict_json.copy_json(tool.parameters)
        declarations.append(decl)
    return [{"functionDeclarations": declarations}] if declarations else []
