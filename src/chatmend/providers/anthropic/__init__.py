"""Anthropic Messages (`POST /v1/messages`): write, read, check and send.

Rules are those of `shared/notes/provider-rules.md` §3 (ids AN1-AN9, AT1-AT7). Anthropic merges consecutive
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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from chatmend.exceptions import Problem, ReadError, UnsupportedError, error_context
from chatmend.messages import ChatMessage, Tool
from chatmend.providers.anthropic.checker import TEXTS, Checker
from chatmend.providers.anthropic.read import read_assistant, read_message, read_system
from chatmend.providers.anthropic.wire import (
    ID_ALPHABET,
    ID_MAX_LENGTH,
    PROVIDER_NAME,
    RAW_ARGUMENTS,
    TOOL_NAME,
)
from chatmend.providers.anthropic.write import final_turn_lacks_thinking, thinking_enabled, write_history
from chatmend.providers.base import SHAPE, CheckContext, IdAssigner, Provider, text_field, to_plain
from chatmend.repair import RepairResult

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "PROVIDER",
    "RAW_ARGUMENTS",
    "SHAPE",
    "Anthropic",
    "check",
    "from_request",
    "from_response",
    "send",
    "send_async",
    "to_request",
]

DEFAULT_MAX_TOKENS = 4096
"""`max_tokens` when the caller gives none (the API requires it); raised above a thinking budget."""


_OWN_BLOCK_TYPES = frozenset({"tool_use", "tool_result", "redacted_thinking", "document", "server_tool_use",
                              "web_search_tool_result", "search_result"})
"""Content block types of Messages that no other chat shape has (detection)."""


class Anthropic(Provider):
    """Messages bodies: top-level `system`, `tool_use` in assistant turns, `tool_result` in user turns."""

    name: ClassVar[str] = PROVIDER_NAME
    id_max_length: ClassVar[int | None] = ID_MAX_LENGTH  # AN5
    id_alphabet: ClassVar[str | None] = ID_ALPHABET  # AN5
    texts: ClassVar[dict[str, str]] = TEXTS
    title: ClassVar[str] = "Anthropic Messages"
    description: ClassVar[str] = "Anthropic Messages: a body or its messages list"
    history_keys: ClassVar[tuple[str, ...]] = ("messages", "system")
    required_fields: ClassVar[Mapping[str, Any]] = {"max_tokens": DEFAULT_MAX_TOKENS}
    model_prefixes: ClassVar[tuple[str, ...]] = ("claude",)
    roles: ClassVar[frozenset[str]] = frozenset({"user", "assistant"})

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
        options (`thinking`, `temperature`, `tool_choice`, ...) go into the body as they are.
        """
        thinking_on = thinking_enabled(options)
        system_blocks, messages = write_history(result, ids, system, thinking_on)
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

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """The history of a saved body (top-level `system` first) or of its `messages` list."""
        with error_context(provider=self.name):
            history: list[ChatMessage] = []
            if isinstance(data, Mapping):
                items = data.get("messages")
                if not isinstance(items, list):
                    raise ReadError("a request body needs a 'messages' list", path="messages")
                with error_context(path="system"):
                    history.extend(read_system(data.get("system")))
            elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
                items = list(data)
            else:
                raise ReadError(f"expected a request body or a message list, got {type(data).__name__}")
            names: dict[str, str] = {}
            for i, item in enumerate(items):
                with error_context(path=f"messages[{i}]"):
                    history.extend(read_message(item, names))
            return history

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
        return Checker(self.name).run(body)


def _default_max_tokens(options: Mapping[str, Any]) -> int:
    """DEFAULT_MAX_TOKENS, or more when a thinking budget needs room (max_tokens must exceed it)."""
    thinking = options.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None
    if isinstance(budget, int) and not isinstance(budget, bool) and budget >= DEFAULT_MAX_TOKENS:
        return budget + DEFAULT_MAX_TOKENS
    return DEFAULT_MAX_TOKENS


PROVIDER = Anthropic()
to_request = PROVIDER.to_request
from_request = PROVIDER.from_request
from_response = PROVIDER.from_response
check = PROVIDER.check
send = PROVIDER.send
send_async = PROVIDER.send_async
