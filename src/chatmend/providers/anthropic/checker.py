"""The offline checker: the 400s Anthropic would answer a body with (AN and AT rules), judged on merged turns."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from chatmend.exceptions import Problem
from chatmend.providers.anthropic.wire import ID_ALPHABET, MEDIA_TYPES, PROVIDER_NAME, THINKING, TOOL_NAME
from chatmend.providers.base import SHAPE, CheckContext, CheckPass
from chatmend.strict_json import brief

_ID = re.compile(f"[{ID_ALPHABET}]+")  # AN5

_NOT_IN_RESULT = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
                            "mcp_tool_use", "mcp_tool_result", "container_upload"})
"""Block types of Messages a tool_result's content never holds (the SDK's `ToolResultBlockParam`)."""

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
"""Anthropic's 400 texts per rule (docs/rules.md §3), verbatim with their variable parts as fields.

AN7's tail after "each tool_use must have a single result" is ours (the full text was never captured).
"""


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


def check(body: Any, context: CheckContext) -> list[Problem]:
    """The 400s Anthropic would answer `body` with, judged on merged turns; a malformed body is reported."""
    return _Pass().run(body)


class _Pass(CheckPass):
    """One `check` pass: shapes first, then the rules on merged turns."""

    def __init__(self) -> None:
        super().__init__(PROVIDER_NAME, TEXTS)

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
        for t, turn in enumerate(turns):
            if turn.role == "assistant":
                # AN6 within the (merged) turn only: an id repeated in a later turn was accepted with 200
                # (a pydantic-ai cassette, issue #43)
                self.assistant(turn, set())
                self.answered(turn, turns[t + 1] if t + 1 < len(turns) else None)
            elif turn.role == "user":
                previous = turns[t - 1] if t > 0 else None
                self.user(turn, previous if previous is not None and previous.role == "assistant" else None)
        self.final(turns, thinking_on)
        return self.problems

    def top(self, body: Mapping[str, Any]) -> None:
        """model, max_tokens, system and tools."""
        # Bedrock's InvokeModel and Vertex AI take the model in the URL and `anthropic_version` in the body
        if not isinstance(body.get("model"), str) and "anthropic_version" not in body:
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
                                          f"not {brief(kind)}")
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
            if name is None and tool.get("type") not in (None, "custom"):
                continue  # a toolset (`mcp_toolset`) names no tool
            if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
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
            elif not source["url"]:  # the API validates it as a URL (the neutral model refuses it too)
                self.add(SHAPE, f"{path}.source.url",
                         f"{path}.source.url.url: Input should be a valid URL, input is empty")
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
        if has_thinking and turn.blocks and turn.blocks[0][2]["type"] not in THINKING:
            self.rule("AT2", _where(turn.first, 0), n=turn.first, found=turn.blocks[0][2]["type"])
        if turn.blocks and turn.blocks[-1][2]["type"] in THINKING:
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
            elif not isinstance(inner, Mapping):
                self.add(SHAPE, where, f"{where}: expected a content block object")
            elif isinstance(kind, str) and kind in _NOT_IN_RESULT:  # (a type the SDK does not know yet passes)
                self.add(SHAPE, where, f"{where}: a tool_result holds text, image, document or search_result "
                                       f"blocks, not {brief(kind)}")

    def final(self, turns: list[_Turn], thinking_on: bool) -> None:
        """AT1 (thinking on: the last tool-use turn opens with thinking) and AT6 (off: no final thinking)."""
        assistants = [t for t in turns if t.role == "assistant" and t.blocks]
        if not assistants:
            return
        last = assistants[-1]
        first_kind = last.blocks[0][2]["type"]
        if thinking_on:
            if any(b["type"] == "tool_use" for _, _, b in last.blocks) and first_kind not in THINKING:
                self.rule("AT1", f"{_where(last.first, 0)}.type", n=last.first, found=first_kind)
        elif turns[-1] is last and any(b["type"] in THINKING for _, _, b in last.blocks):
            self.rule("AT6", _where(last.first, 0), n=last.first)

