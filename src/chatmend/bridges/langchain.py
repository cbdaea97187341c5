"""LangChain / LangGraph: repair a `list[BaseMessage]` in LangChain's own types, and a middleware for `create_agent`.

    from chatmend.bridges.langchain import RepairMiddleware, repair

    messages = repair(messages)                                          # list[BaseMessage] -> list[BaseMessage]
    agent = create_agent(model, tools, middleware=[RepairMiddleware()])  # each model call sees a valid history
    agent = create_react_agent(model, tools, pre_model_hook=pre_model_hook)  # langgraph's prebuilt agent

A message repair leaves alone is the very same object; a changed one is a `model_copy` with only what changed
(so `additional_kwargs`, `response_metadata`, `id`, `artifact` and the other content blocks stay). Calls are an
AIMessage's `tool_calls` and `invalid_tool_calls` (a provider sends both back as calls, so both need results) and
the call blocks of its content, which the integrations send as calls even when `tool_calls` is empty: v1 standard
`tool_call` / `invalid_tool_call` blocks, Responses-style `function_call`, `custom_tool_call` and `computer_call`
blocks (by `call_id`), Anthropic-style `tool_use` blocks. A block and a `tool_calls` entry under one id are one
call (renamed together). They are answered by ToolMessages (`tool_call_id`); a synthetic answer to a
`custom_tool_call` carries a `custom_tool_call_output` block and one to a `computer_call` the Responses
adapter's `computer_call_output` (as a `non_standard` block), which is how langchain-openai sends each. A v1
`tool_call` block with no `tool_calls` entry gets one (as `AIMessage(content_blocks=...)` makes it): without it
langchain-openai drops the call on Chat Completions and sends it without arguments on Responses. The
provider-native blocks stay content only: their own integration sends them as they are.

The middleware repairs the model request, never the stored state: the checkpointed history stays as it was
written. A synthetic result is a ToolMessage with `status="error"` and
`response_metadata={"chatmend_synthesized": True}`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import invalid_tool_call, tool_call

from chatmend import providers
from chatmend.bridges import call_arguments, rebuilt
from chatmend.messages import ChatMessage, ToolCall, text_of
from chatmend.repair import IsReadOnly, Wording, repair_history

__all__ = ["SYNTHESIZED", "RepairMiddleware", "pre_model_hook", "repair"]

SYNTHESIZED = "chatmend_synthesized"
"""The `response_metadata` key of a ToolMessage chatmend made (its value is True)."""


def repair(messages: Sequence[BaseMessage], *, is_read_only: IsReadOnly | None = None,
           wording: Wording | None = None) -> list[BaseMessage]:
    """The history made valid by `repair_history`'s rules, in LangChain's types (the input is not changed)."""
    neutral = [_neutral(m) for m in messages]
    result = repair_history(neutral, is_read_only=is_read_only, wording=wording)
    repaired = messages
    if result.changed:
        repaired = rebuilt(messages, neutral, result, synthetic=_synthetic, note=_note, renamed=_renamed)
    return [_synced(m) if isinstance(m, AIMessage) else m for m in repaired]


def pre_model_hook(state: dict[str, Any]) -> dict[str, Any]:
    """langgraph's prebuilt `create_react_agent(pre_model_hook=...)`: the model gets the repaired messages
    (`llm_input_messages`), the graph state keeps its own."""
    return {"llm_input_messages": repair(state["messages"])}


class RepairMiddleware(AgentMiddleware):
    """`create_agent(..., middleware=[RepairMiddleware()])`: every model call gets the repaired history."""

    def __init__(self, *, is_read_only: IsReadOnly | None = None, wording: Wording | None = None) -> None:
        super().__init__()
        self._is_read_only = is_read_only
        self._wording = wording

    def _repaired(self, request: ModelRequest) -> ModelRequest:
        fixed = repair(request.messages, is_read_only=self._is_read_only, wording=self._wording)
        if all(a is b for a, b in zip(fixed, request.messages)) and len(fixed) == len(request.messages):
            return request
        return request.override(messages=cast("Any", fixed))  # LangChain's message union, as it came in

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        return handler(self._repaired(request))

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        return await handler(self._repaired(request))


# The content blocks an integration sends as calls: type -> (id key, name key, arguments key)
_CALL_BLOCKS: dict[str, tuple[str, str | None, str]] = {
    "tool_call": ("id", "name", "args"),  # v1 standard blocks
    "invalid_tool_call": ("id", "name", "args"),
    "function_call": ("call_id", "name", "arguments"),  # Responses items kept as blocks (langchain-openai)
    "custom_tool_call": ("call_id", "name", "input"),
    "computer_call": ("call_id", None, "action"),
    "tool_use": ("id", "name", "input"),  # Anthropic's own blocks (langchain-anthropic)
}


_V1_CALLS = ("tool_call", "invalid_tool_call")


class _Call:
    """One call of an AIMessage: where it is (a content block, a `tool_calls` or `invalid_tool_calls` entry),
    its kind (the block type, or "tool_call" for the lists), id, name and arguments."""

    __slots__ = ("arguments", "id", "kind", "name")

    def __init__(self, kind: str, id: str, name: str, arguments: Any) -> None:
        self.kind, self.id, self.name, self.arguments = kind, id, name, arguments


def _calls(message: AIMessage) -> list[_Call]:
    """The message's calls in the order they go on the wire: its content's call blocks, then the `tool_calls` and
    `invalid_tool_calls` entries no block stands for (under the same id)."""
    calls: list[_Call] = []
    if isinstance(message.content, list):
        for block in message.content:
            keys = _CALL_BLOCKS.get(block.get("type", "")) if isinstance(block, dict) else None
            if keys is not None:
                assert isinstance(block, dict)
                id_key, name_key, args_key = keys
                name = block.get(name_key) if name_key else "computer"
                calls.append(_Call(block["type"], block.get(id_key) or "", name or "tool", block.get(args_key)))
    in_blocks = {c.id for c in calls if c.id}
    unnamed = sum(1 for c in calls if not c.id and c.kind in _V1_CALLS)  # id-less v1 blocks: entries without id
    for entry in [*message.tool_calls, *message.invalid_tool_calls]:
        if not entry.get("id") and unnamed:
            unnamed -= 1  # the block's own entry, in order (as content_blocks= makes them)
        elif not entry.get("id") or entry.get("id") not in in_blocks:
            calls.append(_Call("tool_call", entry.get("id") or "", entry.get("name") or "tool", entry.get("args")))
    return calls


def _neutral(message: BaseMessage) -> ChatMessage:
    """What repair needs of a message: its role, its calls or the call it answers, and whether it says anything."""
    if isinstance(message, AIMessage):
        calls = tuple(ToolCall(id=c.id, name=c.name, arguments=call_arguments(c.arguments))
                      for c in _calls(message))
        return ChatMessage(role="assistant", content=_reply_text(message.content), tool_calls=calls)
    if isinstance(message, ToolMessage):
        return ChatMessage(role="tool", tool_call_id=message.tool_call_id, tool_name=message.name,
                        content=_text(message.content), is_error=message.status == "error")
    if isinstance(message, SystemMessage):
        return ChatMessage(role="system", content=_text(message.content))
    return ChatMessage(role="user", content=_text(message.content) or f"[{message.type}]")


def _reply_text(content: Any) -> str:
    """An AIMessage's content as repair reads it: its text, any other block that is not a call as a mark (rule 1
    drops a reply with no calls and nothing but whitespace)."""
    if isinstance(content, str):
        return content
    texts = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") not in _CALL_BLOCKS:
            kind = block.get("type")
            texts.append(block.get("text") or "" if kind in ("text", "output_text") else f"[{kind}]")
    return "\n".join(texts)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in content]
    return "\n".join(t for t in texts if t)


def _synthetic(message: ChatMessage, reply: BaseMessage, index: int) -> ToolMessage:
    """The ToolMessage answering a call repair found unanswered (the `index`th of `reply`), in the form its call's
    kind is answered in."""
    assert isinstance(reply, AIMessage)
    call = _calls(reply)[index]
    text = text_of(message.content)
    content: Any = text
    if call.kind == "custom_tool_call":
        content = [{"type": "custom_tool_call_output", "output": text}]
    elif call.kind == "computer_call":  # its output is a screenshot: the Responses adapter's, for a call without one
        block = {"type": "computer_call", "call_id": message.tool_call_id, "action": call.arguments or {}}
        items = providers.get("openai_responses").repair_body({"input": [block]}).body["input"]
        content = [{"type": "non_standard", "value": items[-1]}]
    return ToolMessage(content=content, tool_call_id=message.tool_call_id or "", name=message.tool_name,
                       status="error", response_metadata={SYNTHESIZED: True})


def _note(message: ChatMessage, orphan: BaseMessage) -> BaseMessage:
    return HumanMessage(content=text_of(message.content))


def _renamed(original: BaseMessage, message: ChatMessage) -> BaseMessage:
    """A copy of the original under the final ids repair gave (rule 5): in `tool_calls`, `invalid_tool_calls`
    and the content's call blocks alike."""
    if isinstance(original, ToolMessage):
        old = original.tool_call_id
        new = message.tool_call_id or ""
        update: dict[str, Any] = {"tool_call_id": new}
        if isinstance(original.content, list):
            update["content"] = [_with_call_id(b, old, new) for b in original.content]
        return original.model_copy(update=update)
    assert isinstance(original, AIMessage)
    new_ids = iter(c.id for c in message.tool_calls)
    update = {}
    by_old: dict[str, str] = {}  # a block's old id -> its new one, for the list entry under the same id
    unnamed: list[str] = []  # the new ids of id-less v1 blocks, for the id-less entries, in order
    if isinstance(original.content, list):
        content: list[Any] = []
        for block in original.content:
            keys = _CALL_BLOCKS.get(block.get("type", "")) if isinstance(block, dict) else None
            if keys is None:
                content.append(block)
                continue
            assert isinstance(block, dict)
            new = next(new_ids)
            if block.get(keys[0]):
                by_old.setdefault(block[keys[0]], new)
            elif block["type"] in _V1_CALLS:
                unnamed.append(new)
            content.append({**block, keys[0]: new})
        update["content"] = content

    def entry_id(entry: Any) -> str:
        if not entry.get("id") and unnamed:
            return unnamed.pop(0)
        return by_old[entry["id"]] if entry.get("id") in by_old else next(new_ids)

    def entries(listed: list[Any]) -> list[Any]:
        return [{**c, "id": entry_id(c)} for c in listed]

    update["tool_calls"] = entries(original.tool_calls)
    update["invalid_tool_calls"] = entries(original.invalid_tool_calls)
    return original.model_copy(update=update)


def _synced(message: AIMessage) -> AIMessage:
    """The message with a `tool_calls` (`invalid_tool_calls`) entry for each v1 `tool_call` (`invalid_tool_call`)
    block that has none under its id, as `AIMessage(content_blocks=...)` makes them: without one, langchain-openai's
    Chat Completions path drops the call and its Responses path sends it without arguments. The same object when
    every block has its entry."""
    if not isinstance(message.content, list):
        return message
    listed = {c.get("id") for c in [*message.tool_calls, *message.invalid_tool_calls]}
    missing = [b for b in message.content if isinstance(b, dict)
               and b.get("type") in ("tool_call", "invalid_tool_call") and b.get("id") not in listed]
    if not missing:
        return message
    calls = list(message.tool_calls)
    invalid = list(message.invalid_tool_calls)
    for block in missing:
        if block["type"] == "tool_call":
            args = block.get("args")
            calls.append(tool_call(name=block.get("name") or "tool", args=args if isinstance(args, dict) else {},
                                   id=block.get("id")))
        else:
            invalid.append(invalid_tool_call(name=block.get("name"), args=block.get("args"), id=block.get("id"),
                                             error=block.get("error")))
    return message.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})


def _with_call_id(block: Any, old: str, new: str) -> Any:
    """A ToolMessage content block with the call id it carries renamed (a Responses output item kept as a block,
    or inside a `non_standard` one)."""
    if not isinstance(block, dict):
        return block
    if block.get("call_id") == old:
        return {**block, "call_id": new}
    value = block.get("value")
    if block.get("type") == "non_standard" and isinstance(value, dict) and value.get("call_id") == old:
        return {**block, "value": {**value, "call_id": new}}
    return block
