"""The offline checker: the 400s (`ValidationException`) Converse would answer a request with, in its words.

Rules are docs/rules.md §8 (BR1-BR8) and the ones below; every text is quoted from a report of the live error:
- BR1 `Expected toolResult blocks at messages.N.content for the following Ids: ...` (agno-agi/agno#6698,
  zeroclaw-labs/zeroclaw#1476);
- BR1x `The number of toolResult blocks at messages.N.content exceeds the number of toolUse blocks of previous
  turn.` (Just-Curieous/Curie#16, langgenius/dify-official-plugins#765, pydantic/pydantic-ai#2327);
- BR2 duplicate toolUse ids (bvcyber/Cyber-AutoAgent-ng#72); BR3 alternation (langchain-ai/langchainjs#6724,
  Portkey-AI/gateway#748); BR4 user first (langgenius/dify#12340); BR5 toolConfig (langgenius/dify#17545);
- BR6 `The content field at messages.N.content.0.toolResult cannot be empty when status value is error.`
  (aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15); BR7 json objects only (sigoden/aichat#1550);
- BR8 `The text field in the ContentBlock object at messages.N.content.0 is blank. ...` and the empty message
  (aws-samples/bedrock-engineer#8, earendil-works/pi#3443);
- BR11/BR12 `toolUseId` and tool names outside botocore's patterns and lengths, in the wording of AWS's request
  validation (`1 validation error detected: Value ... at '...' failed to satisfy constraint: ...`; INF for the
  `toolUseId` paths; the tool name's at `toolConfig.tools.N.member.toolSpec.name` and
  `messages.N.member.content.M.member.toolUse.name` are OBS aws-samples/remote-swe-agents#457,
  RooCodeInc/Roo-Code#10022, openclaw/openclaw#12892);
- BR13 media in an assistant turn: "You can only include images and documents if the role is user."
  (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Message.html; our wording is the doc's).
The model-dependent rules, checked when the model is known (`check(body, model=...)`, or the body's `modelId`):
- BR9 (the models of `wire.UNMIXED_MARKS`): `messages.N.content: Conversation blocks and tool result blocks cannot
  be provided in the same turn.` (langchain-ai/langchain-aws#141, strands-agents/harness-sdk#1223 with
  llama4-maverick), and `... tool use blocks ...` for an assistant turn (quarkiverse/quarkus-langchain4j#1983);
  a cachePoint is not a conversation block (INF);
- BR10 (a Claude model): Anthropic's own rules, passed through as `The model returned the following errors: ...`
  (anomalyco/opencode#3077, NousResearch/hermes-agent#61318): a `toolUseId` outside `^[a-zA-Z0-9_-]+$` (Anthropic's
  AN5: botocore's pattern also lets `.` and `:` through), and with thinking on
  (`additionalModelRequestFields.thinking.type` `enabled` or `adaptive`) the last assistant turn with a toolUse
  opening with its reasoning (AT1). Blank text (Anthropic's "must contain non-whitespace text") is BR8 already.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatmend.exceptions import Problem
from chatmend.providers.anthropic.checker import TEXTS as ANTHROPIC_TEXTS
from chatmend.providers.base import SHAPE, CheckContext, CheckPass
from chatmend.providers.bedrock.wire import (
    ID,
    ID_ALPHABET,
    ID_MAX_LENGTH,
    PROVIDER_NAME,
    STRICT_ID,
    TOOL_NAME,
    model_family,
)

_VALIDATION = "1 validation error detected: Value '{value}' at '{where}' failed to satisfy constraint: {constraint}"

TEXTS: dict[str, str] = {
    "BR1": "Expected toolResult blocks at messages.{n}.content for the following Ids: {ids}",
    "BR1x": "The number of toolResult blocks at messages.{n}.content exceeds the number of toolUse blocks of "
            "previous turn.",
    "BR2": "The toolUse blocks at messages.{n}.content contain duplicate Ids: {ids}",
    "BR3": "A conversation must alternate between user and assistant roles. Make sure the conversation alternates "
           "between user and assistant roles and try again.",
    "BR4": "A conversation must start with a user message. Try again with a conversation that starts with a user "
           "message.",
    "BR5": "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
    "BR6": "The content field at messages.{n}.content.{m}.toolResult cannot be empty when status value is error.",
    "BR7": "The format of the value at messages.{n}.content.{m}.toolResult.content.{k}.json is invalid. Provide a "
           "json object for the field and try again.",
    "BR8": "The text field in the ContentBlock object at messages.{n}.content.{m} is blank. Add text to the text "
           "field, and try again.",
    "BR8e": "The content field in the Message object at messages.{n} is empty. Add a ContentBlock object to the "
            "content field and try again.",
    "BR13": "messages.{n}.content.{m}: You can only include images and documents if the role is user.",
    "BR9": "messages.{n}.content: Conversation blocks and tool result blocks cannot be provided in the same turn.",
    "BR9u": "messages.{n}.content: Conversation blocks and tool use blocks cannot be provided in the same turn.",
    "BR10": "The model returned the following errors: {error}",
}
"""Converse's 400 texts per rule, verbatim with their variable parts as fields (BR13: the documented sentence)."""

_MEDIA = ("image", "document", "video", "audio")


def _member_path(n: int, m: int, field: str) -> str:
    """AWS's validation path of a content block's field (1-based list members)."""
    return f"messages.{n + 1}.member.content.{m + 1}.member.{field}"


_NOT_CONVERSATION = frozenset({"toolUse", "toolResult", "cachePoint"})
_ANTHROPIC_KIND = {"text": "text", "toolUse": "tool_use", "reasoningContent": "thinking", "image": "image",
                   "document": "document"}


def check(body: Any, context: CheckContext) -> list[Problem]:
    """The 400s Converse would answer `body` with (BR9 and BR10 by the family of the model: `context.family`, else
    told by `context.model` or the body's `modelId`); a malformed body is reported, never raised."""
    model = context.model or (body.get("modelId") if isinstance(body, Mapping) else None)
    return _Pass(context.family or model_family(model)).run(body)


class _Pass(CheckPass):
    """One `check` pass over a request: its shape first, then the rules (`family`: the model's, for BR9/BR10)."""

    def __init__(self, family: str | None = None) -> None:
        super().__init__(PROVIDER_NAME, TEXTS)
        self.family = family

    def run(self, body: Any) -> list[Problem]:
        """Every problem of the request."""
        if not isinstance(body, Mapping):
            self.add(SHAPE, "", f"expected a JSON object body, got {type(body).__name__}")
            return self.problems
        messages = body.get("messages")
        if not isinstance(messages, list):
            self.add(SHAPE, "messages", "messages: a list of Message objects is required")
            return self.problems
        self.system(body.get("system"))
        if not self.shapes(messages):
            return self.problems
        uses_tools = False
        for n, message in enumerate(messages):
            role = message["role"]
            if n == 0 and role != "user":
                self.rule("BR4", "messages[0].role")
            elif n > 0 and role == messages[n - 1]["role"]:
                self.rule("BR3", f"messages[{n}].role")
            if not message["content"]:
                self.rule("BR8e", f"messages[{n}].content", n=n)
            uses = self.blocks(n, message)
            uses_tools = uses_tools or bool(uses) or any("toolResult" in b for b in message["content"])
            if uses:
                self.results_for(messages, n, uses)
            if role == "user":
                self.unexpected_results(messages, n)
        if uses_tools and not isinstance(body.get("toolConfig"), Mapping):
            self.rule("BR5", "toolConfig")
        self.tools(body.get("toolConfig"))
        if self.family == "unmixed":
            self.unmixed(messages)
        elif self.family == "claude":
            self.claude(messages, body.get("additionalModelRequestFields"))
        return self.problems

    def unmixed(self, messages: list[Any]) -> None:
        """BR9: no conversation block (text, media, reasoning) beside toolResult or toolUse blocks in one turn."""
        for n, message in enumerate(messages):
            kinds = {next(iter(b)) for b in message["content"]}
            if kinds - _NOT_CONVERSATION:
                if "toolResult" in kinds:
                    self.rule("BR9", f"messages[{n}].content", n=n)
                elif "toolUse" in kinds:
                    self.rule("BR9u", f"messages[{n}].content", n=n)

    def claude(self, messages: list[Any], fields: Any) -> None:
        """BR10: the Anthropic rules a Claude model adds (its ids, AT1), in Bedrock's wrapper."""
        for n, message in enumerate(messages):
            for m, block in enumerate(message["content"]):
                if "toolUse" in block and not STRICT_ID.fullmatch(block["toolUse"]["toolUseId"]):
                    self.rule("BR10", f"messages[{n}].content[{m}].toolUse.toolUseId",
                              error=ANTHROPIC_TEXTS["AN5"].format(n=n, m=m))
        thinking = fields.get("thinking") if isinstance(fields, Mapping) else None
        if not (isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")):
            return
        last = next((n for n in range(len(messages) - 1, -1, -1)
                     if messages[n]["role"] == "assistant" and messages[n]["content"]), None)
        if last is None:
            return
        content = messages[last]["content"]
        first = next(iter(content[0]))
        if any("toolUse" in b for b in content) and first != "reasoningContent":
            found = _ANTHROPIC_KIND.get(first, first)
            self.rule("BR10", f"messages[{last}].content[0]",
                      error=ANTHROPIC_TEXTS["AT1"].format(n=last, found=found))

    def system(self, system: Any) -> None:
        """The top-level system blocks: a list of one-key blocks, text not blank."""
        if system is None:
            return
        if not isinstance(system, list):
            self.add(SHAPE, "system", "system: a list of SystemContentBlock objects is expected")
            return
        for j, block in enumerate(system):
            if not isinstance(block, Mapping) or len(block) != 1:
                self.add(SHAPE, f"system[{j}]", "a SystemContentBlock sets exactly one of its members")
            elif "text" in block and (not isinstance(block["text"], str) or not block["text"]):
                self.add(SHAPE, f"system[{j}].text", "system text must be a non-empty string")

    def shapes(self, messages: list[Any]) -> bool:
        """Structural problems, before any rule can be judged; True when there are none."""
        ok = True
        for n, message in enumerate(messages):
            path = f"messages[{n}]"
            if not isinstance(message, Mapping):
                self.add(SHAPE, path, "expected a Message object")
                ok = False
                continue
            if message.get("role") not in ("user", "assistant"):
                self.add(SHAPE, f"{path}.role", f"role must be user or assistant, got {message.get('role')!r}")
                ok = False
            content = message.get("content")
            if not isinstance(content, list):
                self.add(SHAPE, f"{path}.content", "content must be a list of ContentBlock objects")
                ok = False
                continue
            for m, block in enumerate(content):
                problem = _block_problem(block)
                if problem is not None:
                    self.add(SHAPE, f"{path}.content[{m}]", problem)
                    ok = False
        return ok

    def blocks(self, n: int, message: Mapping[str, Any]) -> list[str]:
        """BR2, BR6-BR8, BR11-BR13 over one message's blocks; returns its toolUse ids in order."""
        uses: list[str] = []
        role = message["role"]
        for m, block in enumerate(message["content"]):
            path = f"messages[{n}].content[{m}]"
            if "text" in block and not block["text"].strip():
                self.rule("BR8", f"{path}.text", n=n, m=m)
            elif "toolUse" in block:
                use = block["toolUse"]
                self.id_rule(use["toolUseId"], f"{path}.toolUse.toolUseId", _member_path(n, m, "toolUse.toolUseId"))
                self.name_rule(use["name"], f"{path}.toolUse.name", _member_path(n, m, "toolUse.name"))
                uses.append(use["toolUseId"])
            elif "toolResult" in block:
                result = block["toolResult"]
                self.id_rule(result["toolUseId"], f"{path}.toolResult.toolUseId",
                             _member_path(n, m, "toolResult.toolUseId"))
                if result.get("status") == "error" and not result["content"]:
                    self.rule("BR6", f"{path}.toolResult.content", n=n, m=m)
                for k, item in enumerate(result["content"]):
                    if isinstance(item, Mapping) and "json" in item and not isinstance(item["json"], Mapping):
                        self.rule("BR7", f"{path}.toolResult.content[{k}].json", n=n, m=m, k=k)
            elif role == "assistant" and any(kind in block for kind in _MEDIA[:2]):
                self.rule("BR13", path, n=n, m=m)
        duplicates = sorted({u for u in uses if uses.count(u) > 1})
        if duplicates:
            self.rule("BR2", f"messages[{n}].content", n=n, ids=", ".join(duplicates))
        return uses

    def id_rule(self, value: str, path: str, where: str) -> None:
        """BR11: a `toolUseId` of 1-64 characters of botocore's pattern."""
        if ID.fullmatch(value):
            return
        constraint = (f"Member must have length less than or equal to {ID_MAX_LENGTH}" if len(value) > ID_MAX_LENGTH
                      else "Member must have length greater than or equal to 1" if not value
                      else f"Member must satisfy regular expression pattern: [{ID_ALPHABET}]+")
        self.add("BR11", path, _VALIDATION.format(value=value, where=where, constraint=constraint))

    def name_rule(self, value: str, path: str, where: str) -> None:
        """BR12: a tool name of 1-64 characters of `[a-zA-Z0-9_-]`."""
        if not TOOL_NAME.fullmatch(value):
            constraint = ("Member must have length less than or equal to 64" if len(value) > 64
                          else "Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+")
            self.add("BR12", path, _VALIDATION.format(value=value, where=where, constraint=constraint))

    def results_for(self, messages: list[Any], n: int, uses: list[str]) -> None:
        """BR1: the user turn after a toolUse turn holds a toolResult for each of its ids."""
        after = n + 1
        got = [b["toolResult"]["toolUseId"] for b in messages[after]["content"] if "toolResult" in b] if (
            after < len(messages) and messages[after]["role"] == "user") else []
        missing = [u for u in dict.fromkeys(uses) if u not in got]
        if missing:
            path = f"messages[{after}].content" if after < len(messages) else f"messages[{n}]"
            self.rule("BR1", path, n=after, ids=", ".join(missing))

    def unexpected_results(self, messages: list[Any], n: int) -> None:
        """BR1x: a user turn holds no more toolResult blocks than the turn before it has toolUse blocks."""
        results = sum(1 for b in messages[n]["content"] if "toolResult" in b)
        if not results:
            return
        before = messages[n - 1] if n > 0 and messages[n - 1]["role"] == "assistant" else None
        uses = sum(1 for b in before["content"] if "toolUse" in b) if before is not None else 0
        if results > uses:
            self.rule("BR1x", f"messages[{n}].content", n=n)

    def tools(self, config: Any) -> None:
        """The shape of `toolConfig.tools` and its names (BR12)."""
        if config is None:
            return
        tools = config.get("tools") if isinstance(config, Mapping) else None
        if not isinstance(tools, list):
            self.add(SHAPE, "toolConfig.tools", "toolConfig needs a 'tools' list")
            return
        for t, tool in enumerate(tools):
            spec = tool.get("toolSpec") if isinstance(tool, Mapping) else None
            if isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
                self.name_rule(spec["name"], f"toolConfig.tools[{t}].toolSpec.name",
                               f"toolConfig.tools.{t + 1}.member.toolSpec.name")


def _block_problem(block: Any) -> str | None:
    """What is malformed in one content block (a union: exactly one member set), or None."""
    if not isinstance(block, Mapping) or len(block) != 1:
        return "a ContentBlock sets exactly one of its members"
    (kind, value), = block.items()
    if kind == "text" and not isinstance(value, str):
        return "a text block holds a string"
    if kind == "toolUse" and (not isinstance(value, Mapping) or not isinstance(value.get("toolUseId"), str)
                              or not isinstance(value.get("name"), str) or "input" not in value):
        return "a toolUse block needs a string 'toolUseId' and 'name', and an 'input'"
    if kind == "toolResult":
        if not isinstance(value, Mapping) or not isinstance(value.get("toolUseId"), str) or not isinstance(
                value.get("content"), list):
            return "a toolResult block needs a string 'toolUseId' and a 'content' list"
        if value.get("status") not in (None, "success", "error"):
            return "a toolResult's status is success or error"
        if not all(isinstance(item, Mapping) and len(item) == 1 for item in value["content"]):
            return "a toolResult's content blocks set exactly one of their members"
    return None
