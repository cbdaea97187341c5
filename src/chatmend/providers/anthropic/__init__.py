"""Anthropic Messages (`POST /v1/messages`): write, read, check and send.

Rules are those of `docs/rules.md` §3 (ids AN1-AN9, AT1-AT7). Anthropic merges consecutive
turns of one role before it validates, so the writer emits one wire message per history message (prefix
stable) and keeps every rule true of the merged turns; `check` merges first, then judges.

Choices where the wire has no place for something:
- Thinking produced by another provider (or with no provider named) is never sent as a signed `thinking`
  block: its signature would fail AT3. Its text goes as a text block wrapped in `<thinking>` tags, which
  `from_request` reads back as a ThinkingPart.
- A system message after the first message that reaches the wire becomes user text in place, in `<system>` tags.
- Arguments that are not a JSON object (a stream cut off mid-call) travel as `{"_raw_arguments": text}`:
  `input` must be an object.
- Images of an assistant message move to a user message right after it (after the results when it made calls).
- Anthropic thinking goes first in its turn (AT2) and is dropped where no rule lets it stay: after the last
  other block of a turn without calls (AT7), in a turn merged onto one that opened with text (AT2), and, with
  thinking off, in a turn that may end the body (AT6). Past-turn thinking may be dropped (§3, roles).
- With `thinking` enabled, a tool loop whose assistant turn carries no Anthropic thinking cannot be continued
  (AT1): the request is sent with thinking off for that one call.
- Blank text is never sent (AN9): a blank message is left out, a blank tool result goes without `content`.

The whole request vocabulary is read and written back losslessly (README, "Anthropic vocabulary"): a `document`
is a FilePart, any block the neutral model does not name (`server_tool_use` and its `*_tool_result`,
`mcp_tool_use` / `mcp_tool_result`, `container_upload`, `search_result`, a type added last month) a NativePart
kept in place, and the fields of a block it does not name (`cache_control`, `citations`, `caller`, ...) its
`provider_data`. Server tool uses and their results live in the assistant turn as native blocks: repair never
takes them for calls, never splits them, never answers them (an unpaired `server_tool_use` or `mcp_tool_use` is
what a `pause_turn` reply ends with, sent back as it is to let the turn go on).

Thinking policy (`thinking_policy=` on `to_request` and `repair_body`): a signed thinking block is bound to the
conversation before it; when repair changes something before it (a synthetic or moved result, a renamed id),
models that check the binding reject it ("The block is bound to a different conversation"). `"drop"` leaves
out the signed thinking of every assistant turn after the first change except the last assistant turn, whose
thinking is sent byte for byte (AT1, AT5), and reports each drop; `"keep"` sends it all as it was; `repair_body`
also takes `"server"`: blocks kept, and the body's `thinking` config gets `block_binding:
{"prefix_mismatch_behavior": "drop_block"}` (beta), so the API drops what fails the check. Defaults:
`repair_body` "drop" (the proxy's path: what is sent must be accepted), `to_request` "keep" (its bodies are
prefix-stable, which "drop" is not: what it drops depends on which assistant turn is the last).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from chatmend.exceptions import Problem, ReadError, UnsupportedError, error_context
from chatmend.messages import ChatMessage, Tool
from chatmend.planner import Stubs
from chatmend.providers.anthropic import checker, spans
from chatmend.providers.anthropic.checker import TEXTS
from chatmend.providers.anthropic.read import read_assistant, read_message, read_system
from chatmend.providers.anthropic.wire import (
    ID_ALPHABET,
    ID_MAX_LENGTH,
    PROVIDER_NAME,
    RAW_ARGUMENTS,
    SIGNED_THINKING,
    TOOL_NAME,
)
from chatmend.providers.anthropic.write import (
    final_turn_lacks_thinking,
    last_assistant_run,
    thinking_enabled,
    write_history,
    write_items,
)
from chatmend.providers.base import (
    SHAPE,
    BodyRepair,
    CheckContext,
    Dropped,
    EntryPoints,
    IdAssigner,
    Provider,
    text_field,
    to_plain,
)
from chatmend.repair import IsReadOnly, RepairResult

__all__ = ["DEFAULT_MAX_TOKENS", "PROVIDER", "RAW_ARGUMENTS", "SHAPE", "Anthropic", *EntryPoints._fields]

DEFAULT_MAX_TOKENS = 4096
"""`max_tokens` when the caller gives none (the API requires it); raised above a thinking budget."""


_OWN_BLOCK_TYPES = frozenset({
    "tool_use", "tool_result", "redacted_thinking", "document", "server_tool_use", "search_result",
    "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
    "advisor_tool_result", "mcp_tool_use", "mcp_tool_result", "container_upload", "mcp_tool_listing"})
"""Content block types of Messages that no other chat shape has (detection)."""

BodyThinkingPolicy = Literal["drop", "keep", "server"]
"""`repair_body`'s thinking policies: the writer's two, and `"server"` (the API's `block_binding` drops)."""


class Anthropic(Provider):
    """Messages bodies: top-level `system`, `tool_use` in assistant turns, `tool_result` in user turns."""

    name: ClassVar[str] = PROVIDER_NAME
    id_max_length: ClassVar[int | None] = ID_MAX_LENGTH  # AN5
    id_alphabet: ClassVar[str | None] = ID_ALPHABET  # AN5
    error_field: ClassVar[bool] = True  # tool_result `is_error: true`
    names_results: ClassVar[bool] = True  # a tool_result is read under the name of the last tool_use of its id
    blocks_key: ClassVar[str | None] = "content"  # a user turn: tool_result blocks and the user's blocks
    sdk_modules: ClassVar[tuple[str, ...]] = ("anthropic.types",)
    texts: ClassVar[dict[str, str]] = TEXTS
    title: ClassVar[str] = "Anthropic Messages"
    description: ClassVar[str] = "Anthropic Messages: a body or its messages list"
    history_keys: ClassVar[tuple[str, ...]] = ("messages", "system")
    required_fields: ClassVar[Mapping[str, Any]] = {"max_tokens": DEFAULT_MAX_TOKENS}
    model_prefixes: ClassVar[tuple[str, ...]] = ("claude",)
    roles: ClassVar[frozenset[str]] = frozenset({"user", "assistant"})
    writes_parts: ClassVar[frozenset[str]] = frozenset({"text", "image", "thinking", "file", "native"})
    # `system` is a field of its own: system text alone leaves `messages` empty, which the API refuses
    # (OBS Helicone/helicone#5257)
    empty_list_error: ClassVar[str | None] = "messages: messages must have at least one element"
    # a lone high half: OBS anthropics/claude-code#1939, #3277, #60394; a low half alone: OBS
    # anthropics/claude-code#1762 ("invalid high surrogate")
    lone_surrogate_errors: ClassVar[tuple[str, str]] = (
        "The request body is not valid JSON: no low surrogate in string: line 1 column {column} (char {char})",
        "The request body is not valid JSON: invalid high surrogate in string: line 1 column {column} "
        "(char {char})",
    )

    # ---------------------------------------------------------------------------------------- detect

    def marks(self, item: Mapping[str, Any]) -> bool:
        """Signs only a Messages turn has: Anthropic's own block types, and images with a `source`."""
        content = item.get("content")
        return isinstance(content, list) and any(
            isinstance(p, Mapping) and (text_field(p) in _OWN_BLOCK_TYPES or (p.get("type") == "image"
                                                                              and "source" in p))
            for p in content)

    def marks_body(self, body: Mapping[str, Any]) -> bool:
        """A top-level `system` (Chat Completions puts system text in a message), unless its blocks are typeless
        (Bedrock Converse's `{"text": ...}` blocks)."""
        system = body.get("system")
        if isinstance(system, list) and system and all(isinstance(b, Mapping) and "type" not in b for b in system):
            return False
        return "system" in body

    # ----------------------------------------------------------------------------------------- write

    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        """The Messages body: one linear pass over the repaired history, plain dicts only.

        `max_tokens` defaults to DEFAULT_MAX_TOKENS (above the thinking budget when one is given); other
        options (`thinking`, `temperature`, `tool_choice`, ...) go into the body as they are, but for
        `thinking_policy` ("drop" or "keep", module docstring) and `on_thinking_dropped`, called with a
        `Dropped` for each signed thinking block the policy leaves out.
        """
        policy = options.pop("thinking_policy", "keep")
        if policy not in ("drop", "keep"):
            raise ValueError(f"thinking_policy must be 'drop' or 'keep', not {policy!r}")
        on_drop: Callable[[Dropped], object] | None = options.pop("on_thinking_dropped", None)
        thinking_on = thinking_enabled(options)
        system_blocks, messages = write_history(result, ids, system, thinking_on, policy, on_drop)
        body: dict[str, Any] = {"model": model, "max_tokens": options.pop("max_tokens", None)}
        if body["max_tokens"] is None:
            body["max_tokens"] = _default_max_tokens(options)
        if system_blocks:
            body["system"] = system_blocks
        body["messages"] = messages
        if tools:
            body["tools"] = [self._write_tool(t.name, t.description, t.parameters) for t in tools]
            if len({t.name for t in tools}) < len(tools):
                raise UnsupportedError("tool names must be unique", feature="tool name")  # AN8
        body.update(options)
        if thinking_on and final_turn_lacks_thinking(messages):
            del body["thinking"]  # AT1: the tool loop has no thinking to continue from
        return body

    def _write_tool(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        """A custom tool definition; a name the API refuses (AN8) is an error here, not a 400 later."""
        if not TOOL_NAME.fullmatch(name):
            raise UnsupportedError(f"tool name {name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$",
                                   feature="tool name")
        tool: dict[str, Any] = {"name": name}
        if description:
            tool["description"] = description
        tool["input_schema"] = parameters
        return tool

    # ------------------------------------------------------------------------------------------ read

    def _sdk_item(self, item: Any) -> Any:
        """A `Message` (a response, `type: "message"`) as the assistant turn it holds; its id, model, stop
        reason and usage are the reply's metadata, not history (as `from_response` reads it)."""
        if isinstance(item, Mapping) and item.get("type") == "message" and "content" in item:
            return {"role": item.get("role", "assistant"), "content": item["content"]}
        return item

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """The history of a saved body (top-level `system` first) or of its `messages` list."""
        return super().from_request(self._plain_request(data))  # SDK objects (a `Message`, blocks) as their dicts

    def _read_system(self, body: Mapping[str, Any]) -> list[ChatMessage]:
        """The top-level `system`."""
        with error_context(path="system"):
            return read_system(body.get("system"))

    def _read_groups(self, items: list[Any]) -> list[list[ChatMessage]]:
        """The neutral messages of each wire message, as `from_request` reads them (a user turn of several
        tool_result blocks and text is several messages)."""
        with error_context(provider=self.name):
            names: dict[str, str] = {}
            groups = []
            for i, item in enumerate(items):
                with error_context(path=f"messages[{i}]"):
                    groups.append(read_message(item, names))
            return groups

    def _write_items(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner], lead: int) -> list[Any]:
        """A run in place: nothing moves into the top-level system, no wire message is shared with the lead,
        and the run's user blocks stay one wire message (a user turn with a synthetic result is one turn)."""
        result = RepairResult(messages=messages, interrupted=[], final_ids=[c.id for m in messages
                                                                            for c in m.tool_calls])
        return write_items(result, ids(), lead)

    def _takes_stubs(self, body: Mapping[str, Any]) -> bool:
        """Bodies with thinking off (with it on, AT1 judges the last turn: the neutral route)."""
        return not thinking_enabled(body)

    def _stubs(self, items: list[Any]) -> Stubs | None:
        """Plain turns (`spans.stubs`)."""
        return spans.stubs(items)

    def _renamed_calls(self, items: list[Any], final_ids: Sequence[str]) -> list[Any]:
        """The assistant turn with its tool_use blocks under their new ids."""
        return [spans.renamed_calls(items[0], final_ids)]

    def _renamed_result(self, piece: Any, final_id: str) -> list[Any]:
        """The tool_result block under its call's new id."""
        return [{**piece, "tool_use_id": final_id}]

    def _synthetic_result(self, calls: list[Any], k: int, final_id: str,
                          is_read_only: IsReadOnly | None) -> list[Any]:
        """The tool_result block of call `k`'s synthetic result, flagged `is_error`."""
        return [spans.synthetic_block(calls[0], k, final_id, is_read_only)]

    def _note(self, piece: Any, caller: list[Any] | None) -> list[Any]:
        """The text block of rule 7's note, named after the caller's tool."""
        return [spans.note_block(piece, caller[0] if caller is not None else None)]

    def _after_repair(self, body: Mapping[str, Any], repaired: BodyRepair, **options: Any) -> BodyRepair:
        """The thinking policy (module docstring) on the assistant messages after the first one that changed:
        `repair_body(body, thinking_policy=...)`, `"drop"` (default), `"keep"` or `"server"`."""
        policy: BodyThinkingPolicy = options.pop("thinking_policy", "drop")
        repaired = super()._after_repair(body, repaired, **options)  # (any other option is a TypeError)
        if policy not in ("drop", "keep", "server"):
            raise ValueError(f"thinking_policy must be 'drop', 'keep' or 'server', not {policy!r}")
        if policy == "keep" or not repaired.changed or repaired.from_spans:
            return repaired  # (the stub route takes no thinking blocks: the policy has nothing to drop)
        return _apply_thinking_policy(self, body[self.list_key], repaired, policy)

    def from_response(self, response: Any) -> ChatMessage:
        """The reply as an assistant message: text, thinking with signatures, tool calls."""
        with error_context(provider=self.name):
            data = to_plain(response, provider=self.name)
            if data.get("type") == "error":
                raise ReadError(f"the response is an error: {data.get('error')!r}")
            content = data.get("content")
            if not isinstance(content, list):
                raise ReadError("a response needs a 'content' list", path="content")
            return read_assistant(content, {})

    # ------------------------------------------------------------------------------------------ send

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.messages.create(**body)` with an `anthropic.Anthropic` client (or `AsyncAnthropic`)."""
        return client.messages.create(**body)

    # ----------------------------------------------------------------------------------------- check

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """The 400s Anthropic would answer with, judged on merged turns; a malformed body is reported."""
        return checker.check(body, context)


def _apply_thinking_policy(provider: Anthropic, before: list[Any], repaired: BodyRepair,
                           policy: BodyThinkingPolicy) -> BodyRepair:
    """The repaired body with signed thinking after the first changed message dropped (`"drop"`) or left to the
    API's `block_binding` (`"server"`); as it was when that would break a rule `check` knows."""
    items: list[Any] = repaired.body["messages"]
    first = next((q for q, item in enumerate(items) if q >= len(before) or item is not before[q]), None)
    if first is None:
        return repaired
    protected = last_assistant_run(items, lambda item: isinstance(item, Mapping) and item.get("role") == "assistant")
    bound = [q for q in range(first + 1, protected) if _signed_thinking_at(items[q])]
    if policy == "server":
        thinking = repaired.body.get("thinking")
        if not (bound or (protected > first and protected < len(items) and _signed_thinking_at(items[protected]))) \
                or not isinstance(thinking, Mapping) or not thinking_enabled(repaired.body):
            return repaired
        binding = {**(thinking.get("block_binding") or {}), "prefix_mismatch_behavior": "drop_block"}
        return repaired.replace(body={**repaired.body, "thinking": {**thinking, "block_binding": binding}},
                                block_binding=True)
    if not bound:
        return repaired
    new_items = list(items)
    dropped: list[Dropped] = []
    for q in bound:
        content = items[q]["content"]
        kept = [b for b in content if not (isinstance(b, Mapping) and b.get("type") in SIGNED_THINKING)]
        if not kept:
            continue  # thinking alone (AT7 breaks it anyway): nothing would be left to send
        dropped.extend(Dropped(PROVIDER_NAME, b["type"], f"messages[{q}].content[{j}]")
                       for j, b in enumerate(content) if isinstance(b, Mapping) and b.get("type") in SIGNED_THINKING)
        new_items[q] = {**items[q], "content": kept}
    if not dropped:
        return repaired
    body = {**repaired.body, "messages": new_items}
    if provider._list_problems(body):
        return repaired  # a rule the drop would break (a merged turn's thinking no longer first, ...)
    rewritten = sorted({*repaired.rewritten, *(q for q in bound if new_items[q] is not items[q])})
    return repaired.replace(body=body, rewritten=rewritten, thinking_dropped=dropped)


def _signed_thinking_at(item: Any) -> bool:
    """True for an assistant wire message holding a thinking or redacted_thinking block."""
    # (asked of every turn after the first change: a dict is told apart before the slower Mapping check)
    if not isinstance(item, (dict, Mapping)) or item.get("role") != "assistant":
        return False
    content = item.get("content")
    return isinstance(content, list) and any(
        isinstance(b, (dict, Mapping)) and b.get("type") in SIGNED_THINKING for b in content)


def _default_max_tokens(options: Mapping[str, Any]) -> int:
    """DEFAULT_MAX_TOKENS, or more when a thinking budget needs room (max_tokens must exceed it)."""
    thinking = options.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None
    if isinstance(budget, int) and not isinstance(budget, bool) and budget >= DEFAULT_MAX_TOKENS:
        return budget + DEFAULT_MAX_TOKENS
    return DEFAULT_MAX_TOKENS


PROVIDER = Anthropic()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
