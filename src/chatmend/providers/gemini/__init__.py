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
  responses in the same turn. A result read from Gemini with another `response` object is sent back with
  that object, unchanged, while its text is what it was read as.
- Every other field of google-genai's `Part` is read and written back as it was: non-image `inlineData` and
  `fileData` are `FilePart`s; `executableCode`, `codeExecutionResult`, `toolCall`, `toolResponse` and any
  kind newer than chatmend are `NativePart(provider="gemini")`s kept in place; the fields chatmend does not
  name (`videoMetadata`, `displayName`, `willContinue`, a content's own keys, ...) stay in the
  `provider_data["gemini"]` of the part, call or message they came on.
- Thought signatures go back on the part they came on, byte for byte (GE4): on a call through
  `ToolCall.provider_data["gemini"]["thoughtSignature"]`; on a thought as `ThinkingPart(provider="gemini",
  text=..., signature=...)`; on a plain text or image part as an empty-text `ThinkingPart(provider="gemini",
  signature=...)` right before that part. A signature with no part to sit on, or that is not base64 (the
  API could not decode it), is not sent. Gemini 3 rejects a call turn of the current turn without one: there
  the first call of such a turn gets `SKIP_SIGNATURE` (history from another model), unless told otherwise.
- A result's images go into `functionResponse.parts` for Gemini 3; for older models they follow the
  responses as user parts, after an `IMAGES_LABEL` text naming the call, and `from_request` puts them back.

`check` knows GE1-GE9 of the rules page (docs/rules.md), plus GE0 (the body does not parse: a part with no or two
kinds of data, `args` or `response` not an object, bytes that are not base64) and GE10 (INF: images in a
function response for a model before Gemini 3). GE4 needs `model=`, GE8 and a missing role `platform="vertex"`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar

from chatmend.exceptions import Problem, ReadError, error_context, model_rejections_at
from chatmend.messages import ChatMessage, Tool, ToolCall, plainest_content
from chatmend.planner import Stubs
from chatmend.providers.base import CheckContext, EntryPoints, IdAssigner, Provider
from chatmend.providers.body import Run, plan_rewrite
from chatmend.providers.gemini import checker, spans
from chatmend.providers.gemini.read import (
    as_list,
    as_mapping,
    plain,
    read_content,
    read_model,
    read_plain,
)
from chatmend.providers.gemini.wire import BRIDGE_TEXT, IMAGES_LABEL, NAME, RAW_ARGUMENTS_KEY, either_spelling
from chatmend.providers.gemini.wire import is_base64 as is_base64
from chatmend.providers.gemini.wire import is_gemini3 as is_gemini3
from chatmend.providers.gemini.write import (
    Options,
    opens_turn,
    response_parts,
    split_options,
    tool_declarations,
    write_history,
    write_run,
)
from chatmend.providers.gemini.write import call_signature as call_signature
from chatmend.repair import IsReadOnly, RepairResult, reads_only, synthetic_result

__all__ = [
    "BRIDGE_TEXT",
    "IMAGES_LABEL",
    "PROVIDER",
    "RAW_ARGUMENTS_KEY",
    "SKIP_SIGNATURE",
    "Gemini",
    *EntryPoints._fields,
]

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The stand-in signature for Gemini 3 calls that never had one (history from another model)."""
_AUTO = "auto"


class Gemini(Provider):
    """Google Gemini `generateContent`: `user` and `model` turns, function call and response parts.

    `to_request` takes three options of Gemini's own: `vertex=True` (or `platform="vertex"`, as `check` names
    it) leaves call ids out (GE8);
    `multimodal_function_response` puts tool-result images into `functionResponse.parts` (default: for Gemini 3
    models), otherwise they follow the responses as user parts; `thought_signature_fallback` goes on the first
    call of a turn that has no signature (default: `SKIP_SIGNATURE` for Gemini 3, which rejects such turns, else
    nothing). Generation options (`temperature`, `max_output_tokens`, `thinking_config`, or a whole
    `generation_config`) go into `generationConfig`; other options become top-level camelCase fields
    (`tool_config` -> `toolConfig`).
    """

    name: ClassVar[str] = NAME
    id_max_length: ClassVar[int | None] = None  # ids are free text; Vertex takes none (GE8)
    error_field: ClassVar[bool] = True  # functionResponse `response: {"error": ...}`
    blocks_key: ClassVar[str | None] = "parts"  # a user content: functionResponse parts, then the user's
    joins_turns: ClassVar[bool] = True  # GE1: a call turn's responses are one user content
    sdk_modules: ClassVar[tuple[str, ...]] = ("google.genai.types",)  # read by `plain`, bytes as base64
    title: ClassVar[str] = "Gemini generateContent"
    description: ClassVar[str] = "Gemini generateContent: a body or its contents list"
    list_key: ClassVar[str] = "contents"
    history_keys: ClassVar[tuple[str, ...]] = ("contents", "systemInstruction", "system_instruction")
    model_in_body: ClassVar[bool] = False  # the model is in the URL
    model_prefixes: ClassVar[tuple[str, ...]] = ("gemini",)
    platforms: ClassVar[tuple[str, ...]] = ("vertex",)  # Vertex AI: no call ids (GE8), a role on every content
    roles: ClassVar[frozenset[str]] = frozenset({"user", "model"})

    writes_parts: ClassVar[frozenset[str]] = frozenset({"text", "image", "thinking", "file", "native"})

    def marks(self, item: Mapping[str, Any]) -> bool:
        """A content with a `parts` list."""
        return isinstance(item.get("parts"), list)

    def _read_groups(self, items: list[Any]) -> list[list[ChatMessage]]:
        """The messages of each content, as `from_request` reads them, except that a call without an id gets
        one (`repair_body` pairs by id; it goes back without) and a bridge turn is the user message it is."""
        with error_context(provider=NAME):
            groups: list[list[ChatMessage]] = []
            calls: Sequence[ToolCall] = ()
            for i in range(len(items)):
                with model_rejections_at(f"contents[{i}]"):
                    read, calls = read_content(items, i, calls, _minter(i))
                groups.append(read)
            return groups

    def _takes_stubs(self, body: Mapping[str, Any]) -> bool:
        """Bodies that name no model (a model's own rules, GE4 and GE10, are `check`'s to judge: the neutral
        route)."""
        return "model" not in body

    def _stubs(self, items: list[Any]) -> Stubs | None:
        """Plain contents (`spans.stubs`)."""
        return spans.stubs(items)

    def _synthetic_result(self, calls: list[Any], k: int, final_id: str,
                          is_read_only: IsReadOnly | None) -> list[Any]:
        """The `functionResponse` the writer's `_add_responses` writes for call `k`'s synthetic result (a call
        without an id answered without one)."""
        call = [part["functionCall"] for part in calls[0]["parts"] if "functionCall" in part][k]
        name = call["name"]
        tool_call = ToolCall(id=final_id, name=name, arguments={},
                             provider_data=None if call.get("id") else {NAME: {"noId": True}})
        result = synthetic_result(final_id, name, read_only=reads_only(is_read_only, name))
        return response_parts((tool_call,), [final_id], [result])

    def _write_items(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner], lead: int) -> list[Any]:
        """The contents of a run, none of the lead's (the default's count of the lead's items is wrong here:
        the results of a lead's calls open a turn of the run)."""
        return write_run(messages, ids(), lead)

    def _rebuild(self, items: list[Any], out: list[ChatMessage], kept: list[int | None],
                 runs: list[Run], wire_ids: list[str]) -> tuple[list[Any], list[int]]:
        """`Provider._rebuild`, where the results of a call turn are written together when any of them is new:
        they are one user turn on the wire (GE1), so a kept one cannot stand apart from a new one. A run that
        needs no lead gets the message before it as one."""
        whole = whole_response_turns(out, kept)
        if whole is not kept:
            runs = plan_rewrite(out, whole)
        # a run with no lead is written after the message before it, which tells the writer whether a call
        # turn there needs a bridge (GE2)
        runs = [Run(run.start - 1, run.start, run.end) if run.lead == run.start > 0 else run for run in runs]
        return super()._rebuild(items, out, whole, runs, wire_ids)

    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        """The REST body of `models/{model}:generateContent` (the model is in the URL, not the body), with
        Gemini's own options (the class's docstring) taken out of `options`."""
        gemini3 = is_gemini3(model)
        multimodal = options.pop("multimodal_function_response", None)
        fallback = options.pop("thought_signature_fallback", _AUTO)
        opts = Options(
            vertex=bool(options.pop("vertex", False)) or options.pop("platform", None) == "vertex",
            multimodal=gemini3 if multimodal is None else multimodal,
            fallback=(SKIP_SIGNATURE if gemini3 else None) if fallback == _AUTO else fallback,
        )
        system_parts, contents = write_history(result, ids, system, opts)
        body: dict[str, Any] = {"contents": contents}
        if system_parts:
            body["systemInstruction"] = {"parts": system_parts}
        declarations = tool_declarations(tools)
        if declarations:
            body["tools"] = declarations
        generation, top = split_options(options)
        if generation:
            body["generationConfig"] = generation
        body.update(top)
        return body

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """A history from a saved body (or its `contents` list); bridge turns dropped, `_raw` unwrapped."""
        with error_context(provider=NAME):
            data = plain(data)
            out: list[ChatMessage] = []
            if isinstance(data, Mapping):
                if "contents" not in data:
                    raise ReadError("expected a generateContent body with 'contents', or a contents list")
                system = either_spelling(data, "systemInstruction")
                if system is not None:
                    system = as_mapping(system, "systemInstruction")
                    for j, part in enumerate(as_list(system.get("parts"), "systemInstruction.parts")):
                        item = read_plain(
                            as_mapping(part, f"systemInstruction.parts[{j}]"),
                            f"systemInstruction.parts[{j}]",
                        )
                        if item is not None:
                            with model_rejections_at(f"systemInstruction.parts[{j}]"):
                                out.append(ChatMessage(role="system", content=plainest_content([item])))
                contents = as_list(data["contents"], "contents")
            else:
                contents = as_list(data, "contents")
            calls: Sequence[ToolCall] = ()
            for i in range(len(contents)):
                with model_rejections_at(f"contents[{i}]"):
                    read, calls = read_content(contents, i, calls)
                out.extend(read)
            return out

    def from_response(self, response: Any) -> ChatMessage:
        """The first candidate's content as an assistant message (ids, signatures and thoughts kept)."""
        with error_context(provider=NAME):
            data = as_mapping(plain(response), "response")
            candidates = as_list(data.get("candidates"), "candidates")
            if not candidates:
                feedback = either_spelling(data, "promptFeedback") or data.get("prompt_feedback") or {}
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
            candidate = as_mapping(candidates[0], "candidates[0]")
            content = candidate.get("content") or {}
            content = as_mapping(content, "candidates[0].content")
            with model_rejections_at("candidates[0].content"):
                return read_model(
                    as_list(content.get("parts"), "candidates[0].content.parts"), "candidates[0].content"
                )

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """The 400s Gemini would answer, predicted offline (GE0-GE10; GE4 needs the model, GE8 the platform
        `vertex`). Field names may be camelCase or snake_case, as the API accepts both."""
        return checker.check(body, context)

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

    def _create_async(self, client: Any, body: dict[str, Any]) -> Awaitable[Any]:
        """`_create` on the SDK's async client, `client.aio` (`client.aio.models.generate_content`), not awaited."""
        return super()._create_async(client.aio, body)

    def _sdk_body(self, body: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """`send` with a `google.genai.Client` (or through `client.aio`): the model goes beside the body, not
        in it."""
        return {**body, "model": kwargs["model"]}


def _minter(index: int) -> Callable[[int], str]:
    """Ids for the calls without one of content `index`: unlikely to meet a real one (a clash only renames)."""
    return lambda k: spans.minted_id(index, k)


def whole_response_turns(out: Sequence[ChatMessage], kept: list[int | None]) -> list[int | None]:
    """`kept` without the items to write again with a call turn's new results: they are one user turn on the
    wire (GE1), so the items holding its other results are written with them; when none is left, the user
    turn right after the call turn is where they go (they open it, as the API wants them). `kept` itself when
    there is no such item."""
    dropped: set[int] = set()
    for p, message in enumerate(out):
        n = len(message.tool_calls)
        answers = kept[p + 1 : p + 1 + n]
        if None not in answers:
            continue
        held = {r for r in answers if r is not None}
        dropped.update(held)
        after = p + 1 + n
        if (not held and after < len(out) and kept[after] is not None and out[after].role in ("user", "system")
                and not opens_turn(out[after])):  # a turn of its own after the (now empty) results turn
            dropped.add(kept[after])  # type: ignore[arg-type]
    if not dropped:
        return kept
    return [None if r in dropped else r for r in kept]


def _model_of(body: Mapping[str, Any]) -> str:
    """The model a body for `_create` names."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError("Gemini takes the model beside the body: pass {'model': ..., **body}")
    return model


PROVIDER = Gemini()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
