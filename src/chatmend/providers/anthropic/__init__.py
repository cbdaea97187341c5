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

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from pydantic import ValidationError

from chatmend.exceptions import Problem, ReadError, UnsupportedError, error_context
from chatmend.ids import digest, wire_ids
from chatmend.incremental import Repairer
from chatmend.messages import ChatMessage, ImagePart, Part, TextPart, ThinkingPart, ToolCall
from chatmend.providers.base import (
    SHAPE,
    HistoryInput,
    Provider,
    ToolsInput,
    coerce_tools,
    parse_data_url,
    repaired,
    to_plain,
)
from chatmend.repair import IsReadOnly, RepairResult, young_collections_only

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

Block = dict[str, Any]
WireMessage = dict[str, Any]

DEFAULT_MAX_TOKENS = 4096
"""`max_tokens` when the caller gives none (the API requires it); raised above a thinking budget."""
RAW_ARGUMENTS = "_raw_arguments"
"""The `input` key that carries arguments which are not a JSON object, verbatim."""
ID_MAX_LENGTH = 64
MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_MEDIA_ALIASES = {"image/jpg": "image/jpeg"}
_ID = re.compile(r"[a-zA-Z0-9_-]+")  # AN5
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_SAFE_RUN = re.compile(r"[a-zA-Z0-9_-]*")
_ASCII_SAFE = bytes(c if chr(c).isalnum() or chr(c) in "_-" else ord("_") for c in range(128)) + bytes(128)
"""A bytes.translate table for ASCII ids: AN5's characters kept, every other one `_` (bytes >= 128 never occur)."""
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # AN8
_THINKING = ("thinking", "redacted_thinking")
_THINKING_OPEN, _THINKING_CLOSE = "<thinking>\n", "\n</thinking>"
_SYSTEM_OPEN, _SYSTEM_CLOSE = "<system>\n", "\n</system>"
_ASSISTANT_IMAGES = "Images from the assistant:"
_RESULT_CONTENT = ("text", "image", "document", "search_result", "tool_reference", "browser_state")

TEXTS: dict[str, str] = {
    "AN1": "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
           "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    "AN2": "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
           "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    "AN3": "messages.{n}: Did not find {count} `tool_result` block(s) at the beginning of this message. "
           "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
    "AN5": "messages.{n}.content.{m}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    "AN6": "messages.{n}.content.{m}: `tool_use` ids must be unique",
    "AN7": "messages.{n}.content.{m}: each tool_use must have a single result. Found multiple `tool_result` "
           "blocks with id: {id}",
    "AN8": "tools.{n}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'",
    "AN8u": "tools: Tool names must be unique.",
    "AN9": "messages.{n}: all messages must have non-empty content except for the optional final assistant "
           "message",
    "AN9e": "messages: text content blocks must be non-empty",
    "AN9w": "messages: text content blocks must contain non-whitespace text",
    "AT1": "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
           "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
           "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
           "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please "
           "consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking",
    "AT2": "messages.{n}.content.0: If an assistant message contains any thinking blocks, the first block "
           "must be thinking or redacted_thinking. Found {found}.",
    "AT4": "messages.{n}.content.{m}.thinking.signature: Field required",
    "AT6": "messages.{n}.content.0: When thinking is disabled, an `assistant` message in the final position "
           "cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.",
    "AT7": "messages.{n}: The final block in an assistant message cannot be `{kind}`.",
}
"""Anthropic's 400 texts per rule (provider-rules §3), verbatim with their variable parts as fields.

AN7's tail after "each tool_use must have a single result" is ours (the full text was never captured).
"""


def _blank(text: str) -> bool:
    """True for text the API refuses as a text block (AN9: empty or whitespace only)."""
    return not text or text.isspace()


def _text(text: str) -> Block:
    """A text block."""
    return {"type": "text", "text": text}


def _wrap(text: str, opening: str, closing: str) -> str | None:
    """The text between tag lines, or None when `text` is wrapped that way."""
    if text.startswith(opening) and text.endswith(closing) and len(text) >= len(opening) + len(closing):
        return text[len(opening): len(text) - len(closing)]
    return None


def _image(part: ImagePart) -> Block:
    """An image block: base64 source for inline data (and `data:` URIs), url source otherwise."""
    if part.data is None:
        url = part.url or ""
        if not url.startswith("data:"):
            return {"type": "image", "source": {"type": "url", "url": url}}
        part = parse_data_url(url)
        if part.data is None:
            raise UnsupportedError("a data: URI image must be base64-encoded", provider=Anthropic.name,
                                   feature="image")
    media = part.media_type or ""
    media = _MEDIA_ALIASES.get(media, media)
    if media not in MEDIA_TYPES:
        raise UnsupportedError(f"image media type {media!r} is not accepted; expected one of "
                               f"{', '.join(sorted(MEDIA_TYPES))}", provider=Anthropic.name, feature="image")
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": part.data}}


def _content_blocks(parts: Sequence[Part]) -> list[Block]:
    """User or tool-result parts as blocks: no blank text (AN9), thinking as tagged text (no signature)."""
    blocks: list[Block] = []
    for part in parts:
        if isinstance(part, ImagePart):
            blocks.append(_image(part))
        elif not _blank(part.text):
            text = part.text if isinstance(part, TextPart) else _THINKING_OPEN + part.text + _THINKING_CLOSE
            blocks.append(_text(text))
    return blocks


def _signed(part: ThinkingPart) -> Block | None:
    """The part as a thinking or redacted_thinking block when Anthropic made it (AT3), else None."""
    if part.provider != Anthropic.name:
        return None  # AT3: another provider's signature (or none) fails verification
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.data} if part.data else None
    if part.signature:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}  # AT4
    return None


def _input(arguments: dict[str, Any] | str) -> dict[str, Any]:
    """`tool_use.input`: the object, or verbatim text under RAW_ARGUMENTS (input must be an object)."""
    if isinstance(arguments, dict):
        return arguments
    return {} if _blank(arguments) else {RAW_ARGUMENTS: arguments}


def _wire_id(tool_id: str, attempt: int) -> str:
    """A `make` for `wire_ids` (AN5): each character outside [a-zA-Z0-9_-] replaced by `_`, cut to 64.

    A valid id comes back as it is. `wire_ids` asks again (attempt > 0) when that id is taken; then a digest of
    the id tells them apart. The common case costs one byte translation (a table for ASCII ids, a regex for
    others), no hashing.
    """
    safe = tool_id.encode().translate(_ASCII_SAFE).decode() if tool_id.isascii() else _UNSAFE.sub("_", tool_id)
    if attempt == 0:
        return safe[:ID_MAX_LENGTH] or "call"
    stem = safe[: ID_MAX_LENGTH - 11] or "call"
    return f"{stem}_{digest(f'{tool_id}#{attempt}', 10)}"


def _produces(message: ChatMessage) -> bool:
    """True when a message puts at least one block on the wire.

    An assistant message of Anthropic thinking alone sends nothing: AT7 strips thinking that nothing follows.
    """
    if message.role == "tool" or message.tool_calls:
        return True
    content = message.content
    if isinstance(content, str):
        return not _blank(content)
    if message.role == "assistant":
        return any(isinstance(p, ImagePart) or (not _blank(p.text) and (
            isinstance(p, TextPart) or _signed(p) is None)) for p in content)
    return any(isinstance(p, ImagePart) or not _blank(p.text) for p in content)


class _Writer:
    """The state of one `to_request` pass: wire ids, output, and the assistant turn being merged."""

    __slots__ = ("history", "in_run", "next_wire", "out", "run_thinking", "thinking_on")

    def __init__(self, repair: RepairResult, thinking_on: bool) -> None:
        self.history = repair.messages
        self.thinking_on = thinking_on
        self.next_wire = iter(wire_ids(_wire_id, repair.final_ids, ID_MAX_LENGTH, _SAFE_RUN)).__next__
        """The wire id of the next call written (AN5: ^[a-zA-Z0-9_-]+$, at most 64; calls are written in
        history order, results by position)."""
        self.out: list[WireMessage] = []
        self.in_run = False
        """True when the last wire message is an assistant one: the next assistant message merges into it."""
        self.run_thinking = False
        """True when the assistant turn being merged opens with a thinking block."""

    def emit_user(self, content: str | list[Block]) -> None:
        """Append a user message; it closes any assistant turn."""
        self.out.append({"role": "user", "content": content})
        self.in_run = False

    def system_blocks(self, system: str | None) -> tuple[list[Block], int]:
        """The top-level system (the option, then text-only system messages before anything else is sent)."""
        blocks = [_text(system)] if system is not None and not _blank(system) else []
        history = self.history
        i = 0
        while i < len(history):
            if history[i].role != "system":
                if _produces(history[i]):
                    break
                i += 1  # a message that sends nothing: the system after it still leads
                continue
            content = history[i].content
            if isinstance(content, str):
                if not _blank(content):
                    blocks.append(_text(content))
            elif all(isinstance(p, TextPart) for p in content):
                blocks.extend(_text(p.text) for p in content
                              if isinstance(p, TextPart) and not _blank(p.text))
            else:
                break  # images cannot go in the top-level system: this one goes in place
            i += 1
        return blocks, i

    def run(self, start: int) -> None:
        """Write every message from `start` on, in one pass."""
        history = self.history
        n = len(history)
        i = start
        while i < n:
            message = history[i]
            role = message.role
            if role == "assistant":
                i = self.assistant(i)
                continue
            if role == "user":
                content = message.content
                if isinstance(content, str):
                    if not _blank(content):  # AN9: a blank message is not sent at all
                        self.emit_user(content)
                else:
                    blocks = _content_blocks(content)
                    if blocks:
                        self.emit_user(blocks)
            elif role == "system":
                self.system_in_place(message)
            else:
                # unreachable after repair (orphans become notes, results follow their calls); check reports it
                self.results(i, [message.tool_call_id or ""])
            i += 1

    def system_in_place(self, message: ChatMessage) -> None:
        """A later system message as user text in place, tagged so the model knows whose words these are."""
        content = message.content
        if isinstance(content, str):
            if not _blank(content):
                self.emit_user(_SYSTEM_OPEN + content + _SYSTEM_CLOSE)
            return
        text = "\n".join(p.text for p in content if isinstance(p, TextPart))
        blocks = [_text(_SYSTEM_OPEN + text + _SYSTEM_CLOSE)] if not _blank(text) else []
        blocks.extend(_image(p) for p in content if isinstance(p, ImagePart))
        if blocks:
            self.emit_user(blocks)

    def assistant(self, i: int) -> int:
        """Write the assistant message at `i`, its results and moved images; the index after them."""
        message = self.history[i]
        calls = message.tool_calls
        content = message.content
        images: list[ImagePart] = []
        has_thinking = False
        if isinstance(content, str):
            blocks: list[Block] = [{"type": "text", "text": content}] if content and not content.isspace() else []
        else:
            blocks = []
            for part in content:
                if isinstance(part, TextPart):
                    if not _blank(part.text):
                        blocks.append(_text(part.text))
                elif isinstance(part, ImagePart):
                    images.append(part)
                else:
                    signed = _signed(part)
                    if signed is not None:
                        blocks.append(signed)
                        has_thinking = True
                    elif not _blank(part.text):  # another provider's thinking: its text only
                        blocks.append(_text(_THINKING_OPEN + part.text + _THINKING_CLOSE))
        if has_thinking:
            blocks = self.place_thinking(blocks, i, bool(calls), bool(images))
        if calls:
            next_wire = self.next_wire
            call_ids = [next_wire() for _ in calls]
            for c, wire_id in zip(calls, call_ids):  # AN4: nothing follows the tool_use blocks in the turn.
                arguments = c.arguments
                blocks.append({"type": "tool_use", "id": wire_id, "name": c.name,
                               "input": arguments if type(arguments) is dict else _input(arguments)})
        if blocks:
            plain = isinstance(content, str) and not calls
            self.out.append({"role": "assistant", "content": content if plain else blocks})
            if not self.in_run:
                # Only a signed block can be thinking, and place_thinking puts any it keeps first.
                self.run_thinking = has_thinking and blocks[0]["type"] in _THINKING
                self.in_run = True
        j = i + 1
        if calls:
            j = self.results(j, call_ids)
        if images:  # assistant turns carry no images: they follow, labelled, in a user message
            self.emit_user([_text(_ASSISTANT_IMAGES), *(_image(p) for p in images)])
        return j

    def place_thinking(self, blocks: list[Block], i: int, calls: bool, images: bool) -> list[Block]:
        """The blocks with Anthropic thinking placed where the rules allow it, dropped where they forbid it.

        Each decision depends only on this message and what came before, or on whether the turn may go on
        (the next kept message is an assistant one, or there is none): prefix-stable either way.
        """
        if self.in_run and not self.run_thinking:
            # AT2: merged into a turn that opened without thinking, its thinking could not come first.
            return [b for b in blocks if b["type"] not in _THINKING]
        if not self.thinking_on and not calls and not images and self.may_end(i):
            # AT6: with thinking off, a turn in the final position cannot carry thinking.
            return [b for b in blocks if b["type"] not in _THINKING]
        if not self.in_run and blocks[0]["type"] not in _THINKING:
            # AT2: thinking first in the turn, each kind keeping its order.
            blocks = [b for b in blocks if b["type"] in _THINKING] + [
                b for b in blocks if b["type"] not in _THINKING]
        if not calls:
            # AT7: a turn cannot end on thinking (tool_use blocks follow when there are calls).
            while blocks and blocks[-1]["type"] in _THINKING:
                blocks.pop()
        return blocks

    def may_end(self, i: int) -> bool:
        """True unless a message that reaches the wire follows `i` before the next assistant message."""
        history = self.history
        for k in range(i + 1, len(history)):
            later = history[k]
            if later.role == "assistant":
                return True
            if _produces(later):
                return False
        return True

    def results(self, start: int, call_ids: list[str]) -> int:
        """The tool messages from `start` on, which answer calls with wire ids `call_ids` in order, as one user
        message of tool_result blocks; returns the index after them.

        A result's images stay inside its block; `is_error` only when set.
        """
        history = self.history
        blocks: list[Block] = []
        k = start
        for wire_id in call_ids:
            message = history[k]
            k += 1
            content = message.content
            if isinstance(content, str):
                sent: str | list[Block] = content if content and not content.isspace() else ""  # AN9
            else:
                sent = _content_blocks(content)
            # AN9: a blank result is sent without content.
            block: Block = ({"type": "tool_result", "tool_use_id": wire_id, "content": sent} if sent
                            else {"type": "tool_result", "tool_use_id": wire_id})
            if message.is_error:
                block["is_error"] = True
            blocks.append(block)
        if blocks:
            self.emit_user(blocks)  # AN1, AN3: the results open the next user turn
        return k


def _write(repair: RepairResult, system: str | None, thinking_on: bool) -> tuple[list[Block], list[WireMessage]]:
    """The top-level system blocks and the wire messages of a repaired history.

    The repaired history and the writer die when this returns, while only young collections run: no older
    generation's collection ever scans the messages repair made.
    """
    writer = _Writer(repair, thinking_on)
    system_blocks, start = writer.system_blocks(system)
    writer.run(start)
    return system_blocks, writer.out


def _final_turn_lacks_thinking(out: list[WireMessage]) -> bool:
    """AT1: True when the last assistant turn made calls but does not open with a thinking block."""
    k = len(out) - 1
    while k >= 0 and out[k]["role"] != "assistant":
        k -= 1
    if k < 0:
        return False
    last = out[k]["content"]
    if isinstance(last, str) or last[-1]["type"] != "tool_use":
        return False
    while k > 0 and out[k - 1]["role"] == "assistant":
        k -= 1
    first = out[k]["content"]
    return isinstance(first, str) or first[0]["type"] not in _THINKING


def _thinking_enabled(options: Mapping[str, Any]) -> bool:
    """True when the `thinking` option turns extended or adaptive thinking on."""
    thinking = options.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")


class Anthropic(Provider):
    """Messages bodies: top-level `system`, `tool_use` in assistant turns, `tool_result` in user turns."""

    name: ClassVar[str] = "anthropic"
    id_max_length: ClassVar[int | None] = ID_MAX_LENGTH
    id_pattern: ClassVar[str | None] = r"^[a-zA-Z0-9_-]+$"  # AN5
    arguments_as_string: ClassVar[bool] = False  # `input` is an object
    images_in_tool_results: ClassVar[bool] = True
    texts: ClassVar[dict[str, str]] = TEXTS

    # ----------------------------------------------------------------------------------------- write

    def to_request(
        self,
        history: HistoryInput,
        *,
        model: str,
        tools: ToolsInput = None,
        system: str | None = None,
        is_read_only: IsReadOnly | None = None,
        repairer: Repairer | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """The Messages body: one linear pass over the repaired history, plain dicts only.

        `max_tokens` defaults to DEFAULT_MAX_TOKENS (above the thinking budget when one is given); other
        options (`thinking`, `temperature`, `tool_choice`, ...) go into the body as they are.
        """
        with error_context(provider=self.name), young_collections_only():
            thinking_on = _thinking_enabled(options)
            system_blocks, messages = _write(repaired(history, is_read_only, repairer), system, thinking_on)
            body: dict[str, Any] = {"model": model, "max_tokens": options.pop("max_tokens", None)}
            if body["max_tokens"] is None:
                body["max_tokens"] = _default_max_tokens(options)
            if system_blocks:
                body["system"] = system_blocks
            body["messages"] = messages
            tool_list = coerce_tools(tools)
            if tool_list:
                body["tools"] = [self._write_tool(t.name, t.description, t.parameters) for t in tool_list]
                if len({t.name for t in tool_list}) < len(tool_list):
                    raise UnsupportedError("tool names must be unique", feature="tool name")  # AN8
            body.update(options)
            if thinking_on and _final_turn_lacks_thinking(messages):
                del body["thinking"]  # AT1: the tool loop has no thinking to continue from
            return body

    def _write_tool(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        """A custom tool definition; a name the API refuses (AN8) is an error here, not a 400 later."""
        if not _TOOL_NAME.fullmatch(name):
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
                    history.extend(_read_system(data.get("system")))
            elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
                items = list(data)
            else:
                raise ReadError(f"expected a request body or a message list, got {type(data).__name__}")
            names: dict[str, str] = {}
            for i, item in enumerate(items):
                with error_context(path=f"messages[{i}]"):
                    history.extend(_read_message(item, names))
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
            return _read_assistant(content, {})

    # ------------------------------------------------------------------------------------------ send

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.messages.create(**body)` with an `anthropic.Anthropic` client."""
        return client.messages.create(**body)

    async def _create_async(self, client: Any, body: dict[str, Any]) -> Any:
        """`await client.messages.create(**body)` with an `anthropic.AsyncAnthropic` client."""
        return await client.messages.create(**body)

    # ----------------------------------------------------------------------------------------- check

    def check(self, body: Mapping[str, Any]) -> list[Problem]:
        """The 400s Anthropic would answer with, judged on merged turns; a malformed body is reported."""
        return _Checker(self.name).run(body)


def _default_max_tokens(options: Mapping[str, Any]) -> int:
    """DEFAULT_MAX_TOKENS, or more when a thinking budget needs room (max_tokens must exceed it)."""
    thinking = options.get("thinking")
    budget = thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None
    if isinstance(budget, int) and not isinstance(budget, bool) and budget >= DEFAULT_MAX_TOKENS:
        return budget + DEFAULT_MAX_TOKENS
    return DEFAULT_MAX_TOKENS


# ---------------------------------------------------------------------------------------------- reading


def _message(**fields: Any) -> ChatMessage:
    """A ChatMessage, its validation errors as ReadError."""
    try:
        return ChatMessage(**fields)
    except ValidationError as exc:
        raise ReadError(exc.errors(include_url=False)[0]["msg"]) from None


def _read_system(system: Any) -> list[ChatMessage]:
    """The top-level system as system messages: one per text block."""
    if system is None:
        return []
    if isinstance(system, str):
        return [_message(role="system", content=system)]
    if not isinstance(system, list):
        raise ReadError("'system' must be a string or a list of text blocks")
    out = []
    for j, block in enumerate(system):
        if not isinstance(block, Mapping) or block.get("type") != "text" or not isinstance(
                block.get("text"), str):
            raise ReadError("the system prompt takes text blocks only", path=f"system[{j}]")
        out.append(_message(role="system", content=block["text"]))
    return out


def _read_message(item: Any, names: dict[str, str]) -> list[ChatMessage]:
    """One wire message as ChatMessages: a user turn splits into tool results and user text."""
    if not isinstance(item, Mapping):
        raise ReadError(f"expected a message object, got {type(item).__name__}")
    role = item.get("role")
    content = item.get("content")
    if not isinstance(content, (str, list)):
        raise ReadError("content must be a string or a list of blocks", path="content")
    if role == "assistant":
        if isinstance(content, str):
            return [_message(role="assistant", content=content)]
        return [_read_assistant(content, names)]
    if role == "system":
        if isinstance(content, str):
            return [_message(role="system", content=content)]
        return [_message(role="system", content=tuple(_read_part(b, j) for j, b in enumerate(content)))]
    if role != "user":
        raise ReadError(f"unsupported role {role!r}; expected user, assistant or system", path="role")
    if isinstance(content, str):
        inner = _wrap(content, _SYSTEM_OPEN, _SYSTEM_CLOSE)
        return [_message(role="system" if inner is not None else "user",
                         content=inner if inner is not None else content)]
    out: list[ChatMessage] = []
    group: list[Part] = []
    for j, block in enumerate(content):
        if isinstance(block, Mapping) and block.get("type") == "tool_result":
            if group:
                out.append(_user_group(group))
                group = []
            with error_context(path=f"content[{j}]"):
                out.append(_read_result(block, names))
        else:
            group.append(_read_part(block, j))
    if group or not out:
        out.append(_user_group(group))
    return out


def _user_group(parts: list[Part]) -> ChatMessage:
    """User blocks as a user message, or as the system message they were written from."""
    first = parts[0] if parts else None
    if isinstance(first, TextPart):
        inner = _wrap(first.text, _SYSTEM_OPEN, _SYSTEM_CLOSE)
        if inner is not None:
            return _message(role="system", content=(TextPart(text=inner), *parts[1:]))
    return _message(role="user", content=tuple(parts))


def _read_result(block: Mapping[str, Any], names: dict[str, str]) -> ChatMessage:
    """A tool_result block as a tool message (its tool's name from the matching tool_use)."""
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        raise ReadError("a tool_result needs a string 'tool_use_id'", path="tool_use_id")
    raw = block.get("content")
    content: str | tuple[Part, ...]
    if raw is None:
        content = ""
    elif isinstance(raw, str):
        content = raw
    elif isinstance(raw, list):
        content = tuple(_read_part(b, j) for j, b in enumerate(raw))
    else:
        raise ReadError("tool_result content must be a string or a list of blocks", path="content")
    return _message(role="tool", tool_call_id=call_id, tool_name=names.get(call_id),
                    is_error=block.get("is_error") is True, content=content)


def _read_assistant(content: list[Any], names: dict[str, str]) -> ChatMessage:
    """Assistant blocks as one message: text, thinking (signed, Anthropic's), and calls."""
    parts: list[Part] = []
    calls: list[ToolCall] = []
    for j, block in enumerate(content):
        kind = block.get("type") if isinstance(block, Mapping) else None
        with error_context(path=f"content[{j}]"):
            if kind == "tool_use":
                calls.append(_read_call(block))
                names[calls[-1].id] = calls[-1].name
            elif kind == "thinking":
                text, signature = block.get("thinking"), block.get("signature")
                if not isinstance(text, str):
                    raise ReadError("a thinking block needs its 'thinking' text")
                parts.append(ThinkingPart(text=text, provider=Anthropic.name,
                                          signature=signature if isinstance(signature, str) else None))
            elif kind == "redacted_thinking":
                data = block.get("data")
                if not isinstance(data, str):
                    raise ReadError("a redacted_thinking block needs its 'data'")
                parts.append(ThinkingPart(redacted=True, data=data, provider=Anthropic.name))
            else:
                part = _read_part(block, j)
                inner = _wrap(part.text, _THINKING_OPEN, _THINKING_CLOSE) if isinstance(
                    part, TextPart) else None
                parts.append(ThinkingPart(text=inner) if inner is not None else part)
    return _message(role="assistant", content=tuple(parts), tool_calls=tuple(calls))


def _read_call(block: Mapping[str, Any]) -> ToolCall:
    """A tool_use block as a ToolCall; RAW_ARGUMENTS gives back the verbatim text."""
    call_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(name, str) or not name:
        raise ReadError("a tool_use block needs a 'name'")
    if isinstance(arguments, Mapping) and set(arguments) == {RAW_ARGUMENTS}:
        arguments = arguments[RAW_ARGUMENTS]
    if not isinstance(arguments, (str, Mapping)):
        arguments = {}
    try:
        return ToolCall(id=call_id if isinstance(call_id, str) else "", name=name,
                        arguments=arguments if isinstance(arguments, str) else dict(arguments))
    except ValidationError as exc:
        raise ReadError(exc.errors(include_url=False)[0]["msg"]) from None


def _read_part(block: Any, j: int) -> Part:
    """A text or image block."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    if kind == "text" and isinstance(block.get("text"), str):
        return TextPart(text=block["text"])
    if kind == "image":
        source = block.get("source")
        if isinstance(source, Mapping):
            if source.get("type") == "base64" and isinstance(source.get("data"), str):
                return ImagePart(media_type=str(source.get("media_type") or "image/png"), data=source["data"])
            if source.get("type") == "url" and isinstance(source.get("url"), str):
                return ImagePart(url=source["url"])
        raise ReadError("an image needs a base64 or url source", path=f"content[{j}].source")
    raise ReadError(f"unsupported block {kind!r}; expected text, image, thinking, tool_use or tool_result",
                    path=f"content[{j}]")


# ---------------------------------------------------------------------------------------------- checking


class _Turn:
    """Consecutive messages of one role as Anthropic merges them; blocks with their (message, block) index."""

    __slots__ = ("blocks", "first", "last", "role")

    def __init__(self, role: str, first: int) -> None:
        self.role = role
        self.first = first
        self.last = first
        self.blocks: list[tuple[int, int, Mapping[str, Any]]] = []
        """(message index, block index or -1 for string content, block)."""


def _where(n: int, m: int) -> str:
    """The path of a block."""
    return f"messages[{n}].content" if m < 0 else f"messages[{n}].content[{m}]"


class _Checker:
    """One `check` pass: shapes first, then the rules on merged turns."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.problems: list[Problem] = []

    def add(self, code: str, path: str, message: str) -> None:
        """Record a problem."""
        self.problems.append(Problem(code=code, path=path, message=message, provider=self.provider))

    def rule(self, code: str, path: str, key: str | None = None, **fields: Any) -> None:
        """Record a problem worded as Anthropic words it."""
        self.add(code, path, TEXTS[key or code].format(**fields))

    def run(self, body: Any) -> list[Problem]:
        """Every problem of the body."""
        if not isinstance(body, Mapping):
            self.add(SHAPE, "", f"expected a JSON object body, got {type(body).__name__}")
            return self.problems
        self.top(body)
        messages = body.get("messages")
        if not isinstance(messages, (list, tuple)):
            self.add(SHAPE, "messages", "messages: Field required (a list of message objects)")
            return self.problems
        turns = self.turns(messages)
        thinking = body.get("thinking")
        thinking_on = isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
        uses_seen: set[str] = set()
        for t, turn in enumerate(turns):
            if turn.role == "assistant":
                self.assistant(turn, uses_seen)
                self.answered(turn, turns[t + 1] if t + 1 < len(turns) else None)
            elif turn.role == "user":
                previous = turns[t - 1] if t > 0 else None
                self.user(turn, previous if previous is not None and previous.role == "assistant" else None)
        self.final(turns, thinking_on)
        return self.problems

    def top(self, body: Mapping[str, Any]) -> None:
        """model, max_tokens, system and tools."""
        if not isinstance(body.get("model"), str):
            self.add(SHAPE, "model", "model: Field required")
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
            self.add(SHAPE, "max_tokens", "max_tokens: Field required (a non-negative integer)")
        system = body.get("system")
        if isinstance(system, list):
            for j, block in enumerate(system):
                path = f"system[{j}]"
                if not isinstance(block, Mapping) or block.get("type") != "text":
                    kind = block.get("type") if isinstance(block, Mapping) else type(block).__name__
                    self.add(SHAPE, path, f"system.{j}: the system prompt takes text blocks only, "
                                          f"not {kind!r}")
                else:
                    self.text(block, path)
        elif system is not None and not isinstance(system, str):
            self.add(SHAPE, "system", "system: Input should be a valid string or a list of text blocks")
        tools = body.get("tools")
        if tools is None:
            return
        if not isinstance(tools, (list, tuple)):
            self.add(SHAPE, "tools", "tools: Input should be a valid list")
            return
        names: set[str] = set()
        for k, tool in enumerate(tools):
            if not isinstance(tool, Mapping):
                self.add(SHAPE, f"tools[{k}]", f"tools.{k}: Input should be a valid dictionary")
                continue
            name = tool.get("name")
            if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
                self.rule("AN8", f"tools[{k}].name", n=k)
            elif name in names:
                self.rule("AN8", f"tools[{k}].name", "AN8u")
            else:
                names.add(name)
            custom = tool.get("type") in (None, "custom")
            if custom and not isinstance(tool.get("input_schema"), Mapping):
                self.add(SHAPE, f"tools[{k}].input_schema", f"tools.{k}.custom.input_schema: Field required")

    def turns(self, messages: Sequence[Any]) -> list[_Turn]:
        """Messages merged into turns (a system message stands alone); shapes and AN9 on the way."""
        turns: list[_Turn] = []
        last_assistant = max((n for n, m in enumerate(messages)
                              if isinstance(m, Mapping) and m.get("role") == "assistant"), default=-1)
        for n, message in enumerate(messages):
            if not isinstance(message, Mapping):
                self.add(SHAPE, f"messages[{n}]", f"messages.{n}: Input should be a valid dictionary")
                continue
            role = message.get("role")
            if role not in ("user", "assistant", "system"):
                self.add(SHAPE, f"messages[{n}].role",
                         f"messages.{n}.role: Input should be 'user' or 'assistant'")
                continue
            content = message.get("content")
            if not isinstance(content, (str, list, tuple)):
                self.add(SHAPE, f"messages[{n}].content", f"messages.{n}.content: Field required")
                continue
            if not content and not (role == "assistant" and n == last_assistant == len(messages) - 1):
                self.rule("AN9", f"messages[{n}]", n=n)
            if turns and turns[-1].role == role and role != "system":
                turn = turns[-1]
                turn.last = n
            else:
                turn = _Turn(role, n)
                turns.append(turn)
            if isinstance(content, str):
                if content:
                    turn.blocks.append((n, -1, {"type": "text", "text": content}))
                continue
            for m, block in enumerate(content):
                if isinstance(block, Mapping) and isinstance(block.get("type"), str):
                    turn.blocks.append((n, m, block))
                else:
                    self.add(SHAPE, _where(n, m),
                             f"messages.{n}.content.{m}: expected a content block object")
        return turns

    def text(self, block: Mapping[str, Any], path: str) -> None:
        """A text block: a string, not blank (AN9)."""
        text = block.get("text")
        if not isinstance(text, str):
            self.add(SHAPE, path, f"{path}.text: Input should be a valid string")
        elif not text:
            self.rule("AN9", path, "AN9e")
        elif text.isspace():
            self.rule("AN9", path, "AN9w")

    def image(self, block: Mapping[str, Any], path: str) -> None:
        """An image block: a base64 source of an accepted type, a url or a file."""
        source = block.get("source")
        kind = source.get("type") if isinstance(source, Mapping) else None
        if kind == "base64":
            assert isinstance(source, Mapping)
            media_type = source.get("media_type")
            if not isinstance(media_type, str) or media_type not in MEDIA_TYPES:
                self.add(SHAPE, f"{path}.source.media_type",
                         f"{path}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', "
                         f"'image/gif' or 'image/webp'")
            if not isinstance(source.get("data"), str):
                self.add(SHAPE, f"{path}.source.data", f"{path}.source.base64.data: Field required")
        elif kind == "url":
            assert isinstance(source, Mapping)
            if not isinstance(source.get("url"), str):
                self.add(SHAPE, f"{path}.source.url", f"{path}.source.url.url: Field required")
        elif kind != "file":
            self.add(SHAPE, f"{path}.source", f"{path}.source: expected a base64, url or file image source")

    def assistant(self, turn: _Turn, uses_seen: set[str]) -> None:
        """AN4, AN5, AN6, AT2, AT4, AT7 and block shapes of an assistant turn."""
        after_use = False
        has_thinking = False
        for n, m, block in turn.blocks:
            kind = block["type"]
            path = _where(n, m)
            if kind == "tool_use":
                after_use = True
                self.tool_use(block, n, m, uses_seen)
                continue
            if after_use:
                # AN4: a block after a tool_use is rejected with AN1's text, pointing at the next message.
                self.add("AN4", path, TEXTS["AN1"].format(n=turn.last + 1, ids=", ".join(
                    str(b.get("id")) for _, _, b in turn.blocks if b["type"] == "tool_use")))
            if kind == "text":
                self.text(block, path)
            elif kind == "thinking":
                has_thinking = True
                if not isinstance(block.get("signature"), str):
                    self.rule("AT4", path, n=n, m=m)
                if not isinstance(block.get("thinking"), str):
                    self.add(SHAPE, path, f"messages.{n}.content.{m}.thinking.thinking: Field required")
            elif kind == "redacted_thinking":
                has_thinking = True
                if not isinstance(block.get("data"), str):
                    self.add(SHAPE, path, f"messages.{n}.content.{m}.redacted_thinking.data: Field required")
            elif kind in ("image", "document", "tool_result", "search_result"):
                self.add(SHAPE, path, f"messages.{n}.content.{m}: `{kind}` blocks are not allowed in an "
                                      f"`assistant` message")
        if has_thinking and turn.blocks and turn.blocks[0][2]["type"] not in _THINKING:
            self.rule("AT2", _where(turn.first, 0), n=turn.first, found=turn.blocks[0][2]["type"])
        if turn.blocks and turn.blocks[-1][2]["type"] in _THINKING:
            n = turn.blocks[-1][0]
            self.rule("AT7", _where(n, turn.blocks[-1][1]), n=n, kind=turn.blocks[-1][2]["type"])

    def tool_use(self, block: Mapping[str, Any], n: int, m: int, uses_seen: set[str]) -> None:
        """A tool_use block: id pattern (AN5), unique (AN6), a name, an object `input`."""
        path = _where(n, m)
        call_id = block.get("id")
        if not isinstance(call_id, str) or not _ID.fullmatch(call_id):
            self.rule("AN5", f"{path}.id", n=n, m=m)
        elif call_id in uses_seen:
            self.rule("AN6", path, n=n, m=m)
        else:
            uses_seen.add(call_id)
        if not isinstance(block.get("name"), str) or not block.get("name"):
            self.add(SHAPE, f"{path}.name", f"messages.{n}.content.{m}.tool_use.name: Field required")
        if not isinstance(block.get("input"), Mapping):
            self.add(SHAPE, f"{path}.input", f"messages.{n}.content.{m}.tool_use.input: Input should be a "
                                             f"valid dictionary")

    def answered(self, turn: _Turn, following: _Turn | None) -> None:
        """AN1: every tool_use of the turn has its tool_result in the next turn."""
        uses = [b.get("id") for _, _, b in turn.blocks if b["type"] == "tool_use"]
        if not uses:
            return
        results: set[str] = set()
        if following is not None and following.role == "user":
            results = {b["tool_use_id"] for _, _, b in following.blocks
                       if b["type"] == "tool_result" and isinstance(b.get("tool_use_id"), str)}
        missing = [str(u) for u in uses if not isinstance(u, str) or u not in results]
        if missing:
            n = following.first if following is not None else turn.last
            self.rule("AN1", f"messages[{n}]", n=n, ids=", ".join(missing))

    def user(self, turn: _Turn, previous: _Turn | None) -> None:
        """AN2, AN3, AN7 and block shapes of a user turn."""
        uses = {b["id"] for _, _, b in previous.blocks
                if b["type"] == "tool_use" and isinstance(b.get("id"), str)} if previous else set()
        answered: set[str] = set()
        leading = True
        for n, m, block in turn.blocks:
            kind = block["type"]
            path = _where(n, m)
            if kind != "tool_result":
                leading = False
                if kind == "text":
                    self.text(block, path)
                elif kind == "image":
                    self.image(block, path)
                elif kind in ("tool_use", "thinking", "redacted_thinking"):
                    self.add(SHAPE, path, f"messages.{n}.content.{m}: `{kind}` blocks are not allowed in a "
                                          f"`user` message")
                continue
            use_id = block.get("tool_use_id")
            if not isinstance(use_id, str):
                self.add(SHAPE, f"{path}.tool_use_id",
                         f"messages.{n}.content.{m}.tool_result.tool_use_id: Input should be a valid string")
                continue
            if use_id not in uses:
                self.rule("AN2", path, n=n, m=m, id=use_id)
            elif use_id in answered:
                self.rule("AN7", path, n=n, m=m, id=use_id)
            elif not leading:
                self.rule("AN3", path, n=turn.first, count=len(uses))
            answered.add(use_id)
            self.result_content(block, path)

    def result_content(self, block: Mapping[str, Any], path: str) -> None:
        """A tool_result's content: a string, or text, image and document blocks; `is_error` a boolean."""
        if "is_error" in block and not isinstance(block["is_error"], bool):
            self.add(SHAPE, f"{path}.is_error", f"{path}.is_error: Input should be a valid boolean")
        content = block.get("content")
        if content is None or isinstance(content, str):
            return
        if not isinstance(content, (list, tuple)):
            self.add(SHAPE, f"{path}.content", f"{path}.content: Input should be a valid string or list")
            return
        for k, inner in enumerate(content):
            where = f"{path}.content[{k}]"
            kind = inner.get("type") if isinstance(inner, Mapping) else None
            if kind == "text":
                self.text(inner, where)
            elif kind == "image":
                self.image(inner, where)
            elif kind not in _RESULT_CONTENT:
                self.add(SHAPE, where, f"{where}: a tool_result holds text, image, document or search_result "
                                       f"blocks, not {kind!r}")

    def final(self, turns: list[_Turn], thinking_on: bool) -> None:
        """AT1 (thinking on: the last tool-use turn opens with thinking) and AT6 (off: no final thinking)."""
        assistants = [t for t in turns if t.role == "assistant" and t.blocks]
        if not assistants:
            return
        last = assistants[-1]
        first_kind = last.blocks[0][2]["type"]
        if thinking_on:
            if any(b["type"] == "tool_use" for _, _, b in last.blocks) and first_kind not in _THINKING:
                self.rule("AT1", f"{_where(last.first, 0)}.type", n=last.first, found=first_kind)
        elif turns[-1] is last and any(b["type"] in _THINKING for _, _, b in last.blocks):
            self.rule("AT6", _where(last.first, 0), n=last.first)


PROVIDER = Anthropic()
to_request = PROVIDER.to_request
from_request = PROVIDER.from_request
from_response = PROVIDER.from_response
check = PROVIDER.check
send = PROVIDER.send
send_async = PROVIDER.send_async
