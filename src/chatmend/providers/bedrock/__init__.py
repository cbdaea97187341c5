"""AWS Bedrock Converse (`bedrock-runtime` `Converse`): write, read, check and send.

Rules are those of `docs/rules.md` §8 (BR1-BR8) and the checker's (BR1x, BR11-BR13), each with
its evidence in `checker.py`. A body is the Converse request as boto3's `client.converse(**body)` takes it, minus
`modelId`, which `send` adds (on the HTTP wire the model is in the URL: `POST /model/{modelId}/converse`); blobs
(image, document, video and audio bytes, redacted reasoning) are base64 text, as in the HTTP JSON, and `send` hands
them to boto3 as bytes. A saved request with `modelId` reads, checks and repairs the same.

Converse does not merge turns: the writer does, and keeps every rule true of what it writes:
- user and assistant turns alternate strictly, starting with a user turn (BR3, BR4): a message's tool results,
  the media moved out of its assistant turn and the user's next words share one user turn; an assistant turn that
  would open the body or follow another gets the user turn `USER_FILLER` before it; an assistant message that puts
  nothing on the wire (images only) becomes `ASSISTANT_FILLER`, so the turns around it stay apart and prefix-stable;
- `toolUseId` is 1-64 characters of `[a-zA-Z0-9_.:-]` (botocore's `ToolUseId`), mapped collision-free by the base;
- a tool name is 1-64 characters of `[a-zA-Z0-9_-]` (BR12): another is mapped, deterministically and
  collision-free, alike in `toolConfig` and every `toolUse` (`names.wire_names`); the body holds only the mapped
  names, which reading it back gives (a body's own list, repaired by `repair_body`, keeps the names it has);
- no blank text (BR8); a failed result has content (BR6: `ERROR_WITHOUT_OUTPUT` when it has none), `status` is sent
  only for a failed one (the field is "only supported by Amazon Nova and Anthropic Claude 3 and 4 models");
- a history with calls and no tools given gets a `toolConfig` naming the tools it called (BR5), each with an
  open object schema: Converse refuses toolUse and toolResult blocks without one;
- only user turns carry images and documents (BR13): an assistant's go to the next user turn, after its results;
- thinking Bedrock returned goes back as `reasoningContent` (text and signature, or redacted bytes); another
  provider's as text in `<thinking>` tags (its signature is not valid here), read back as thinking;
- a later system message is user text in `<system>` tags in place (`system` is top-level only);
- an image by https URL is named in a text block (Converse takes bytes or an S3 location only); a file by URL or
  file id is unsupported (`UnsupportedError`);
- arguments that are not a JSON object travel as `{"_raw_arguments": text}`;
- every block chatmend does not model (cachePoint, guardContent, citationsContent, searchResult, a new type) is a
  `NativePart(provider="bedrock")`, written back verbatim where it stood; the fields of a block chatmend does not
  name are kept in `provider_data["bedrock"]`; the request's other fields (`inferenceConfig`,
  `additionalModelRequestFields`, `guardrailConfig`, ...) are the caller's, kept as they are.

Send with `boto3.client("bedrock-runtime", region_name=...)`: `send` calls `converse`, `send_stream` calls
`converse_stream` with the same body and reads the reply from its event stream (`from_stream`). boto3 has no
async client: `send_async` and `send_stream_async` take one whose calls return awaitables (aioboto3's or
aiobotocore's `bedrock-runtime` client).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, ClassVar

from chatmend.exceptions import Problem, ReadError, UnsupportedError, error_context
from chatmend.messages import ChatMessage, Tool
from chatmend.planner import Stubs
from chatmend.providers.base import (
    SHAPE,
    CheckContext,
    EntryPoints,
    HistoryInput,
    IdAssigner,
    Provider,
    coerce_tools,
    to_plain,
)
from chatmend.providers.bedrock import checker, spans
from chatmend.providers.bedrock.checker import TEXTS
from chatmend.providers.bedrock.names import wire_names
from chatmend.providers.bedrock.read import read_assistant, read_message, read_system
from chatmend.providers.bedrock.stream import converse_response
from chatmend.providers.bedrock.wire import (
    ASSISTANT_FILLER,
    ERROR_WITHOUT_OUTPUT,
    ID_ALPHABET,
    ID_MAX_LENGTH,
    MEDIA_KINDS,
    PROVIDER_NAME,
    RAW_ARGUMENTS,
    STRICT_ID_ALPHABET,
    USER_FILLER,
    model_family,
)
from chatmend.providers.bedrock.write import system_blocks, tool_result, used_tool_names, write_messages
from chatmend.providers.body import Run
from chatmend.repair import IsReadOnly, RepairResult, reads_only, synthetic_result

__all__ = [
    "ASSISTANT_FILLER",
    "ERROR_WITHOUT_OUTPUT",
    "PROVIDER",
    "RAW_ARGUMENTS",
    "SHAPE",
    "TEXTS",
    "USER_FILLER",
    "Bedrock",
    "from_stream",
    "send_stream",
    "send_stream_async",
    *EntryPoints._fields,
]

_OWN_BLOCK_KEYS = frozenset({"toolUse", "toolResult", "reasoningContent", "cachePoint", "guardContent",
                             "citationsContent", "searchResult"})
"""Content block keys of Converse that no other chat shape has (detection)."""
_PLAIN_BLOCK_KEYS = frozenset({"text", *MEDIA_KINDS})
_OWN_FIELDS = frozenset({"toolConfig", "inferenceConfig", "additionalModelRequestFields", "modelId",
                         "guardrailConfig", "additionalModelResponseFieldPaths", "promptVariables"})
"""Top-level request fields of Converse that no other chat body has."""


class Bedrock(Provider):
    """Converse requests: top-level `system`, `toolUse` blocks in assistant turns, `toolResult` blocks in user turns."""

    name: ClassVar[str] = PROVIDER_NAME
    id_max_length: ClassVar[int | None] = ID_MAX_LENGTH  # BR11
    id_alphabet: ClassVar[str | None] = ID_ALPHABET  # BR11
    blocks_key: ClassVar[str | None] = "content"  # a user turn: toolResult blocks, then the user's
    joins_turns: ClassVar[bool] = True  # BR3: Converse does not merge turns of one role
    texts: ClassVar[dict[str, str]] = TEXTS
    title: ClassVar[str] = "Bedrock Converse"
    description: ClassVar[str] = "AWS Bedrock Converse: a request (boto3 converse arguments) or its messages list"
    history_keys: ClassVar[tuple[str, ...]] = ("messages", "system", "toolConfig")
    model_in_body: ClassVar[bool] = False  # `modelId` goes beside the body (in the URL on the wire)
    model_prefixes: ClassVar[tuple[str, ...]] = (
        "anthropic.", "amazon.", "meta.", "mistral.", "cohere.", "ai21.", "deepseek.", "writer.", "qwen.", "openai.",
        "us.", "eu.", "apac.", "global.", "us-gov.",
    )
    roles: ClassVar[frozenset[str]] = frozenset({"user", "assistant"})
    writes_parts: ClassVar[frozenset[str]] = frozenset({"text", "image", "thinking", "file", "native"})
    family: ClassVar[str | None] = None
    """The model family whose rules this instance keeps (BR9 `"unmixed"`, BR10 `"claude"`; None: any model)."""

    # ------------------------------------------------------------------------------------ model rules

    def for_model(self, model: object) -> Bedrock:
        """The adapter for a model's own rules: Claude's (BR10: ids of `[a-zA-Z0-9_-]`, Anthropic's checks), the
        models that take no other block beside tool blocks (BR9: such turns split with fillers), or this one.
        `to_request` and `check` choose by their `model`; `repair_body` (which has none) is the chosen one's."""
        if self.family is not None:
            return self
        family = model_family(model)
        return _FOR_FAMILY[family] if family is not None else self

    def _turns(self, written: list[Any]) -> list[Any]:
        """The written turns, each that mixes tool blocks with others split in two around a filler turn when the
        model refuses such turns (BR9): `[results] (no text) [the user's words]`, `[text] Continue. [calls]`."""
        if self.family != "unmixed":
            return written
        out: list[Any] = []
        for turn in written:
            tools = [b for b in turn["content"] if "toolUse" in b or "toolResult" in b]
            others = [b for b in turn["content"] if "toolUse" not in b and "toolResult" not in b]
            if not tools or not any("cachePoint" not in b for b in others):
                out.append(turn)
                continue
            first, second = (tools, others) if turn["role"] == "user" else (others, tools)
            filler = ASSISTANT_FILLER if turn["role"] == "user" else USER_FILLER
            other_role = "assistant" if turn["role"] == "user" else "user"
            out += [{**turn, "content": first}, {"role": other_role, "content": [{"text": filler}]},
                    {"role": turn["role"], "content": second}]
        return out

    # ---------------------------------------------------------------------------------------- detect

    def marks(self, item: Mapping[str, Any]) -> bool:
        """Signs only a Converse message has: its own block keys, or typeless one-key text and media blocks."""
        content = item.get("content")
        return isinstance(content, list) and any(
            isinstance(b, Mapping) and len(b) == 1 and (not _OWN_BLOCK_KEYS.isdisjoint(b) or (
                not _PLAIN_BLOCK_KEYS.isdisjoint(b) and "type" not in b))
            for b in content)

    def marks_body(self, body: Mapping[str, Any]) -> bool:
        """Converse's own top-level fields (`toolConfig`, `inferenceConfig`, `modelId`, ...)."""
        return not _OWN_FIELDS.isdisjoint(body)

    # ----------------------------------------------------------------------------------------- write

    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        """The Converse request: `messages`, `system`, `toolConfig`, then the other options as they are
        (`inferenceConfig`, `additionalModelRequestFields`, ...). The model is not in it (`send` adds `modelId`).
        A tool name Converse refuses (BR12) is written mapped (`names.wire_names`), alike in `toolConfig` and in
        every `toolUse`."""
        history = result.messages
        if len({t.name for t in tools}) < len(tools):
            raise UnsupportedError("tool names must be unique", feature="tool name")
        config = options.pop("toolConfig", None)
        called = used_tool_names(history)
        names = wire_names([*(t.name for t in tools), *_config_names(config), *called])
        blocks, start = system_blocks(history, system)
        body: dict[str, Any] = {"messages": self._turns(write_messages(history, ids, start=start, names=names))}
        if blocks:
            body["system"] = blocks
        specs = [self._write_tool(t, names[t.name]) for t in tools]
        if isinstance(config, Mapping):
            config = _renamed_config(config, names)
            body["toolConfig"] = {**config, "tools": [*specs, *config.get("tools", [])]} if specs else config
        elif specs:
            body["toolConfig"] = {"tools": specs}
        elif called:
            # BR5: toolUse and toolResult blocks need a toolConfig; the tools the history called existed
            body["toolConfig"] = {"tools": [_open_tool(names[name]) for name in called]}
        body.update(options)
        return body

    def _write_tool(self, tool: Tool, name: str) -> dict[str, Any]:
        """A `toolSpec` under the name Converse is sent (BR12: `name`, the tool's own when it fits)."""
        spec: dict[str, Any] = {"name": name}
        if tool.description:
            spec["description"] = tool.description
        spec["inputSchema"] = {"json": tool.parameters}
        return {"toolSpec": spec}

    def _write_items(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner], lead: int) -> list[Any]:
        """A run of a body's list: its system messages in place (the top-level `system` is the caller's), the
        lead's items left out. A user filler before a run opening with an assistant turn is right at the top of the
        list; inside it the base's re-check finds the two user turns and writes the whole list anew."""
        written = self._turns(write_messages(messages, ids()))
        if not lead:
            return written
        before = self._turns(write_messages(messages[:lead], ids()))
        k = len(before)
        if k and k <= len(written) and len(written[k - 1]["content"]) > len(before[-1]["content"]):
            # the run's first blocks join the lead's last turn (a result after the kept ones): they go as a turn of
            # their own, which `_rebuild` merges with the kept turn
            tail = written[k - 1]["content"][len(before[-1]["content"]):]
            return [{"role": written[k - 1]["role"], "content": tail}, *written[k:]]
        return written[k:]

    def _rebuild(self, items: list[Any], out: list[ChatMessage], kept: list[int | None], runs: list[Run],
                 wire_ids: list[str]) -> tuple[list[Any], list[int]]:
        """The base's new list, with a written turn and the turn of the same role beside it merged into one new
        turn (BR3: Converse does not merge turns itself)."""
        new_items, rewritten = super()._rebuild(items, out, kept, runs, wire_ids)
        fresh = set(rewritten)
        merged: list[Any] = []
        is_new: list[bool] = []
        for k, item in enumerate(new_items):
            if merged and (k in fresh or is_new[-1]) and _same_role_turns(merged[-1], item):
                merged[-1] = {**merged[-1], "content": [*merged[-1]["content"], *item["content"]]}
                is_new[-1] = True
            else:
                merged.append(item)
                is_new.append(k in fresh)
        return merged, [k for k, new in enumerate(is_new) if new]

    def _takes_stubs(self, body: Mapping[str, Any]) -> bool:
        """Bodies that name no model and ask nothing of it (a model's own rules, BR9 and BR10, are `check`'s to
        judge: the neutral route), unless this adapter keeps BR9."""
        return self.family != "unmixed" and "modelId" not in body and "additionalModelRequestFields" not in body

    def _synthetic_result(self, calls: list[Any], k: int, final_id: str,
                          is_read_only: IsReadOnly | None) -> list[Any]:
        """The `toolResult` block the writer writes for call `k`'s synthetic result."""
        name = [block["toolUse"] for block in calls[0]["content"] if "toolUse" in block][k]["name"]
        return [tool_result(synthetic_result(final_id, name, read_only=reads_only(is_read_only, name)), final_id)]

    def _stubs(self, items: list[Any]) -> Stubs | None:
        """Plain turns (`spans.stubs`)."""
        return spans.stubs(items)

    # ------------------------------------------------------------------------------------------ read

    def _read_system(self, body: Mapping[str, Any]) -> list[ChatMessage]:
        """The top-level `system`."""
        with error_context(path="system"):
            return read_system(body.get("system"))

    def _read_groups(self, items: list[Any]) -> list[list[ChatMessage]]:
        """The neutral messages of each wire message (a user turn holds results and the user's words)."""
        with error_context(provider=self.name):
            groups = []
            for i, item in enumerate(items):
                with error_context(path=f"messages[{i}]"):
                    groups.append(read_message(item))
            return groups

    def from_response(self, response: Any) -> ChatMessage:
        """The reply (`output.message`) as an assistant message: text, reasoning, calls."""
        with error_context(provider=self.name):
            data = to_plain(response, provider=self.name)
            output = data.get("output")
            message = output.get("message") if isinstance(output, Mapping) else None
            if not isinstance(message, Mapping):
                if isinstance(data.get("message"), str):  # an error body: {"message": "..."}
                    raise ReadError(f"the response is an error: {data['message']!r}")
                raise ReadError("a response needs an 'output.message'", path="output.message")
            with error_context(path="output.message"):
                return read_assistant(message.get("content"))

    # ------------------------------------------------------------------------------------------ send

    def _sdk_body(self, body: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """`send`'s arguments for `converse`: the model as `modelId`, blobs as the bytes boto3 takes."""
        out = {"modelId": kwargs["model"], **body}
        out["messages"] = [_with_bytes(m) for m in body["messages"]]
        if "system" in body:
            out["system"] = [_block_bytes(b) for b in body["system"]]
        return out

    def _sdk_reply(self, reply: ChatMessage, kwargs: dict[str, Any]) -> ChatMessage:
        """What `send` returns: the reply with each call's name as the caller's tool is named (BR12 may have
        mapped it on the wire)."""
        given = [t.name for t in coerce_tools(kwargs.get("tools"))] + _config_names(kwargs.get("toolConfig"))
        names = {wire: name for name, wire in wire_names(given).items() if wire != name}
        if not any(c.name in names for c in reply.tool_calls):
            return reply
        calls = tuple(replace(c, name=names.get(c.name, c.name)) for c in reply.tool_calls)
        return replace(reply, tool_calls=calls)

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.converse(**body)` with a boto3 `bedrock-runtime` client (a body with `modelId`)."""
        return client.converse(**body)

    def from_stream(self, response: Any) -> ChatMessage:
        """The reply of a `converse_stream` call (its response, or the events of its `stream`) as an assistant
        message, as `from_response` reads `converse`'s: the stream's blocks assembled in order."""
        with error_context(provider=self.name):
            events = response.get("stream") if isinstance(response, Mapping) else response
            if events is None or isinstance(events, (str, bytes, Mapping)):
                raise ReadError("expected a converse_stream response or the events of its 'stream'",
                                path="stream")
            return self.from_response(converse_response(events))

    def send_stream(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        """`send` through `client.converse_stream(...)`: the same body, the reply read from the event stream."""
        body = self._sdk_body(self.to_request(history, **kwargs), kwargs)
        response = client.converse_stream(**body)
        try:
            return self._sdk_reply(self.from_stream(response), kwargs)
        finally:
            stream = response.get("stream") if isinstance(response, Mapping) else None
            close = getattr(stream, "close", None)
            if callable(close):
                close()  # the HTTP connection goes back to the pool, read or not

    async def send_stream_async(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        """`send_stream` with an async client (aiobotocore's): its `converse_stream` is awaited and its `stream`
        iterated with `async for`."""
        body = self._sdk_body(self.to_request(history, **kwargs), kwargs)
        response = await client.converse_stream(**body)
        events = [event async for event in response["stream"]]
        return self._sdk_reply(self.from_stream(events), kwargs)

    # ----------------------------------------------------------------------------------------- check

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """The 400s Converse would answer with; a malformed body is reported, never raised."""
        return checker.check(body, context if self.family is None else replace(context, family=self.family))


def _open_tool(name: str) -> dict[str, Any]:
    """A `toolSpec` for a tool the history called and the caller did not describe: any object is its input."""
    return {"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object", "properties": {}}}}}


def _config_names(config: Any) -> list[str]:
    """The tool names of a caller's own `toolConfig` (its `toolSpec`s, its `toolChoice`)."""
    if not isinstance(config, Mapping):
        return []
    found = [t["toolSpec"]["name"] for t in config.get("tools") or [] if isinstance(t, Mapping)
             and isinstance(t.get("toolSpec"), Mapping) and isinstance(t["toolSpec"].get("name"), str)]
    choice = config.get("toolChoice")
    tool = choice.get("tool") if isinstance(choice, Mapping) else None
    if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
        found.append(tool["name"])
    return found


def _renamed_config(config: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """A caller's `toolConfig` with its tool names as `names` maps them (BR12), all else as it is."""
    out = dict(config)
    tools = config.get("tools")
    if isinstance(tools, list):
        out["tools"] = [
            {**t, "toolSpec": {**t["toolSpec"], "name": names.get(t["toolSpec"]["name"], t["toolSpec"]["name"])}}
            if isinstance(t, Mapping) and isinstance(t.get("toolSpec"), Mapping)
            and isinstance(t["toolSpec"].get("name"), str) else t
            for t in tools]
    choice = config.get("toolChoice")
    tool = choice.get("tool") if isinstance(choice, Mapping) else None
    if isinstance(choice, Mapping) and isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
        out["toolChoice"] = {**choice, "tool": {**tool, "name": names.get(tool["name"], tool["name"])}}
    return out


def _same_role_turns(first: Any, second: Any) -> bool:
    """True for two wire messages of one role with content lists (what Converse refuses side by side)."""
    return (isinstance(first, Mapping) and isinstance(second, Mapping) and first.get("role") == second.get("role")
            and isinstance(first.get("content"), list) and isinstance(second.get("content"), list))


def _decoded(value: Any) -> Any:
    """Base64 text as bytes (boto3 base64-encodes blobs itself); bytes as they are."""
    if isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            return value  # not base64: botocore's validation or the service says so
    return value


def _with_bytes(message: Any) -> Any:
    """A wire message with its blocks' blobs as bytes."""
    if not isinstance(message, Mapping) or not isinstance(message.get("content"), list):
        return message
    return {**message, "content": [_block_bytes(b) for b in message["content"]]}


def _block_bytes(block: Any) -> Any:
    """A content block with its blobs as bytes: media sources, redacted reasoning, a result's media, a guarded image."""
    if not isinstance(block, Mapping) or len(block) != 1:
        return block
    (kind, value), = block.items()
    if not isinstance(value, Mapping):
        return block
    if kind in MEDIA_KINDS:
        source = value.get("source")
        if isinstance(source, Mapping) and "bytes" in source:
            return {kind: {**value, "source": {**source, "bytes": _decoded(source["bytes"])}}}
    elif kind == "reasoningContent" and "redactedContent" in value:
        return {kind: {**value, "redactedContent": _decoded(value["redactedContent"])}}
    elif kind == "toolResult" and isinstance(value.get("content"), list):
        return {kind: {**value, "content": [b if isinstance(b, Mapping) and "json" in b else _block_bytes(b)
                                            for b in value["content"]]}}
    elif kind == "guardContent" and isinstance(value.get("image"), Mapping):
        return {kind: {**value, "image": _block_bytes({"image": value["image"]})["image"]}}
    return block


class _ClaudeBedrock(Bedrock):
    """Converse in front of a Claude model (BR10): Anthropic's id alphabet and rules."""

    id_alphabet: ClassVar[str | None] = STRICT_ID_ALPHABET
    family: ClassVar[str | None] = "claude"


class _UnmixedBedrock(Bedrock):
    """Converse in front of a model that takes no other block beside tool blocks in one turn (BR9)."""

    family: ClassVar[str | None] = "unmixed"


_FOR_FAMILY: dict[str, Bedrock] = {"claude": _ClaudeBedrock(), "unmixed": _UnmixedBedrock()}

PROVIDER = Bedrock()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
from_stream = PROVIDER.from_stream
send_stream = PROVIDER.send_stream
send_stream_async = PROVIDER.send_stream_async
