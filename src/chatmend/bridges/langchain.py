"""LangChain / LangGraph: repair a `list[BaseMessage]` in LangChain's own types, and a middleware for `create_agent`.

    from chatmend.bridges.langchain import RepairMiddleware, repair

    messages = repair(messages)                                          # list[BaseMessage] -> list[BaseMessage]
    agent = create_agent(model, tools, middleware=[RepairMiddleware()])  # each model call sees a valid history
    agent = create_react_agent(model, tools, pre_model_hook=pre_model_hook)  # langgraph's prebuilt agent

A message repair leaves alone is the very same object; a changed one is a `model_copy` with only what changed
(so `additional_kwargs`, `response_metadata`, `id`, `artifact` and the v1 content blocks stay). Calls are an
AIMessage's `tool_calls` and `invalid_tool_calls` (a provider sends both back as calls, so both need results),
answered by ToolMessages. The middleware repairs the model request, never the stored state: the checkpointed
history stays as it was written. A synthetic result is a ToolMessage with `status="error"` and
`response_metadata={"chatmend_synthesized": True}`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from chatmend.bridges._neutral import neutral_makers
from chatmend.messages import ChatMessage, text_of
from chatmend.repair import IsReadOnly, Wording, repair_history

__all__ = ["SYNTHESIZED", "RepairMiddleware", "pre_model_hook", "repair"]

SYNTHESIZED = "chatmend_synthesized"
"""The `response_metadata` key of a ToolMessage chatmend made (its value is True)."""

_message, _call = neutral_makers()  # unvalidated: the fields come from LangChain's own typed messages


def repair(messages: Sequence[BaseMessage], *, is_read_only: IsReadOnly | None = None,
           wording: Wording | None = None) -> list[BaseMessage]:
    """The history made valid by `repair_history`'s rules, in LangChain's types (the input is not changed)."""
    neutral = [_neutral(m) for m in messages]
    result = repair_history(neutral, is_read_only=is_read_only, wording=wording)
    if not result.changed:
        return list(messages)
    out: list[BaseMessage] = []
    for message, origin in zip(result.messages, result.origins()):
        if origin.kind == "synthetic":
            out.append(ToolMessage(content=text_of(message.content), tool_call_id=message.tool_call_id or "",
                                   name=message.tool_name, status="error", response_metadata={SYNTHESIZED: True}))
        elif origin.kind == "note":
            out.append(HumanMessage(content=text_of(message.content)))
        elif message is neutral[origin.message_index]:
            out.append(messages[origin.message_index])
        else:
            out.append(_renamed(messages[origin.message_index], message))
    return out


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


def _neutral(message: BaseMessage) -> ChatMessage:
    """What repair needs of a message: its role, its calls or the call it answers, and whether it says anything."""
    if isinstance(message, AIMessage):
        calls = [_call(id=c.get("id") or "", name=c.get("name") or "tool", arguments=c.get("args") or {})
                 for c in message.tool_calls]
        calls += [_call(id=c.get("id") or "", name=c.get("name") or "tool", arguments=c.get("args") or "")
                  for c in message.invalid_tool_calls]
        text = message.content if isinstance(message.content, str) else "[content]" if message.content else ""
        return _message(role="assistant", content=text, tool_calls=tuple(calls))
    if isinstance(message, ToolMessage):
        return _message(role="tool", tool_call_id=message.tool_call_id, tool_name=message.name,
                        content=_text(message.content), is_error=message.status == "error")
    if isinstance(message, SystemMessage):
        return _message(role="system", content=_text(message.content))
    return _message(role="user", content=_text(message.content) or f"[{message.type}]")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in content]
    return "\n".join(t for t in texts if t)



def _renamed(original: BaseMessage, message: ChatMessage) -> BaseMessage:
    """A copy of the original under the final ids repair gave (rule 5)."""
    if isinstance(original, ToolMessage):
        return original.model_copy(update={"tool_call_id": message.tool_call_id})
    assert isinstance(original, AIMessage)
    ids = iter(c.id for c in message.tool_calls)
    calls = [{**c, "id": next(ids)} for c in original.tool_calls]
    invalid = [{**c, "id": next(ids)} for c in original.invalid_tool_calls]
    return original.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})
