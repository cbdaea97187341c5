"""pydantic-ai: repair a `list[ModelMessage]` in pydantic-ai's own types, and a history processor for its agents.

    from chatmend.bridges.pydantic_ai import repair, capability

    history = repair(history)                          # list[ModelMessage] -> list[ModelMessage]
    agent = Agent(model, capabilities=[capability()])  # the history a run is given, and every request, repaired

(`history_processor` is the plain function, for `ProcessHistory` or older releases' `history_processors=`; it runs
after pydantic-ai's own repair of the history a run is given, so it only sees what that left.)

The capability repairs the history a run is given before pydantic-ai's own repair does (which drops orphan results
and answers missing ones in its own words), when the run's first node starts; the calls of a last reply a run given
no new prompt will still run, or answer from `deferred_tool_results`, are left open for it. Then it repairs every
request again, before it is sent.

Only what repair must change is new: a message it leaves alone is the very same object, a part it leaves alone
too; every field pydantic-ai has and chatmend does not model (timestamps, `provider_details`, `metadata`,
`run_id`, ...) stays. Calls are `ToolCallPart`s (and their subclasses), answered by `ToolReturnPart`s or a
`RetryPromptPart` naming the call; pydantic-ai's native (server-side) tool parts are content kept in place.

Where it differs from pydantic-ai's own `repair_messages` (which runs before every model request): an orphan
result becomes a user note that keeps its text (pydantic-ai drops it); ids repeated across replies are renamed
(pydantic-ai never renames, and two calls under one id are then answered once); a synthetic result says the call
was interrupted, and for a tool in `is_read_only` that it is safe to run again. It carries
`outcome="interrupted"` and `metadata={"chatmend_synthesized_tool_return": True}`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from pydantic_ai import UserPromptNode
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from chatmend.bridges import call_arguments, rebuilt
from chatmend.messages import ChatMessage, ToolCall, text_of
from chatmend.repair import IsReadOnly, Wording, repair_history
from chatmend.results import RepairResult

__all__ = ["SYNTHESIZED", "RepairCapability", "capability", "history_processor", "repair"]

SYNTHESIZED = "chatmend_synthesized_tool_return"
"""The `metadata` key of a result chatmend made (its value is True)."""

_Source = tuple[int, int]  # (message index, part index) of the part a neutral message stands for
_Item = ModelResponse | ModelRequestPart  # what a neutral message stands for: a reply, or a part of a request


def repair(messages: Sequence[ModelMessage], *, is_read_only: IsReadOnly | None = None,
           wording: Wording | None = None, leave_open_last: bool = False) -> list[ModelMessage]:
    """The history made valid by `repair_history`'s rules, in pydantic-ai's types (the input is not changed).

    `leave_open_last=True` leaves the last reply's unanswered calls open, as `repair_history`'s option of that name
    (pydantic-ai's `repair_last_response=False`)."""
    if _already_valid(messages, leave_open_last=leave_open_last):
        return list(messages)
    neutral, sources = _to_neutral(messages)
    result = repair_history(neutral, is_read_only=is_read_only, wording=wording, leave_open_last=leave_open_last)
    if not result.changed:
        return list(messages)
    return _rebuild(messages, neutral, sources, result)


def history_processor(messages: list[ModelMessage]) -> list[ModelMessage]:
    """`repair` as a pydantic-ai history processor: `Agent(..., history_processors=[history_processor])`."""
    return repair(messages)


def capability(*, is_read_only: IsReadOnly | None = None, wording: Wording | None = None) -> RepairCapability:
    """A pydantic-ai capability that repairs the history a run is given, and again before every model request."""
    return RepairCapability(id="chatmend-repair", description="chatmend: repair the history",
                            is_read_only=is_read_only, wording=wording)


@dataclasses.dataclass
class RepairCapability(AbstractCapability[Any]):
    """chatmend's repair in pydantic-ai's agent loop (built by `capability()`)."""

    is_read_only: IsReadOnly | None = None
    wording: Wording | None = None

    async def before_node_run(self, ctx: RunContext[Any], *, node: Any) -> Any:
        # The run's first node hands the given history to pydantic-ai's own repair: ours must come first.
        if isinstance(node, UserPromptNode):
            will_answer_last = node.user_prompt is None or node.deferred_tool_results is not None
            ctx.messages[:] = repair(ctx.messages, is_read_only=self.is_read_only, wording=self.wording,
                                     leave_open_last=will_answer_last)
        return node

    async def before_model_request(self, ctx: RunContext[Any],
                                   request_context: ModelRequestContext) -> ModelRequestContext:
        messages = repair(request_context.messages, is_read_only=self.is_read_only, wording=self.wording)
        request_context.messages = messages.copy()
        ctx.messages[:] = messages  # the run's history keeps the repair, as pydantic-ai's ProcessHistory does
        return request_context


# ------------------------------------------------------------------------------------------------- reading

def _already_valid(messages: Sequence[ModelMessage], *, leave_open_last: bool = False) -> bool:
    """True when repair would change nothing, told from the objects themselves (the common case, on every
    request of an agent loop, costs one pass and no conversion). Sound, not complete: False sends the history
    through the full repair, which then may change nothing."""
    seen: set[str] = set()
    expected: list[str] = []  # the ids the next request must answer first, in call order
    for message in messages:
        if isinstance(message, ModelResponse):
            if expected:
                return False  # calls left without results
            expected = [p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)]
            if not expected and _blank(message):
                return False  # rule 1 drops it
            for call_id in expected:
                if not call_id or call_id in seen:
                    return False  # rule 5 renames it
                seen.add(call_id)
            continue
        for part in message.parts:  # results may come one request each, but in call order and nothing between
            answers = _answer_id(part)
            if answers is None:
                if expected:
                    return False  # a steer among the results: repair moves it after them
            elif not expected or answers != expected[0]:
                return False  # an orphan, or a result out of call order
            else:
                del expected[0]
    return not expected or leave_open_last


def _answer_id(part: ModelRequestPart) -> str | None:
    """The call id a request part answers, if it answers one."""
    if isinstance(part, ToolReturnPart) or (isinstance(part, RetryPromptPart) and part.tool_name is not None):
        return part.tool_call_id
    return None


def _blank(response: ModelResponse) -> bool:
    return all(isinstance(p, TextPart) and not p.content.strip() for p in response.parts)


def _to_neutral(messages: Sequence[ModelMessage]) -> tuple[list[ChatMessage], list[_Source]]:
    """One neutral message per request part and per response; what repair needs, nothing more."""
    neutral: list[ChatMessage] = []
    sources: list[_Source] = []
    for i, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            neutral.append(_assistant(message))
            sources.append((i, -1))
            continue
        for j, part in enumerate(message.parts):
            neutral.append(_request_part(part))
            sources.append((i, j))
    return neutral, sources


def _assistant(response: ModelResponse) -> ChatMessage:
    calls = tuple(ToolCall(id=p.tool_call_id, name=p.tool_name or "tool", arguments=call_arguments(p.args))
                  for p in response.parts if isinstance(p, ToolCallPart))
    # rule 1 drops a reply of whitespace alone; any other part (thinking, files, native tools) is content
    texts = [p.content if isinstance(p, TextPart) else f"[{p.part_kind}]" for p in response.parts
             if not isinstance(p, ToolCallPart)]
    return ChatMessage(role="assistant", content="\n".join(texts), tool_calls=calls)


def _request_part(part: ModelRequestPart) -> ChatMessage:
    if isinstance(part, ToolReturnPart):
        return ChatMessage(role="tool", tool_call_id=part.tool_call_id, tool_name=part.tool_name,
                        content=_text(part.content), is_error=part.outcome == "failed")
    if isinstance(part, RetryPromptPart) and part.tool_name is not None:
        return ChatMessage(role="tool", tool_call_id=part.tool_call_id, tool_name=part.tool_name,
                        content=_text(part.content), is_error=True)
    if isinstance(part, SystemPromptPart):
        return ChatMessage(role="system", content=part.content)
    if isinstance(part, UserPromptPart):
        return ChatMessage(role="user", content=_text(part.content) or "[user prompt]")
    return ChatMessage(role="user", content=f"[{getattr(part, 'part_kind', type(part).__name__)}]")


def _text(content: Any) -> str:
    """A part's content as text (what a user note made from an orphan result says)."""
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(content)


# ------------------------------------------------------------------------------------------------- writing

def _rebuild(messages: Sequence[ModelMessage], neutral: list[ChatMessage], sources: list[_Source],
             result: RepairResult) -> list[ModelMessage]:
    """The repaired history as pydantic-ai messages, each unchanged message and part the input's own object."""
    originals = [_original(messages, source) for source in sources]
    items = rebuilt(originals, neutral, result, synthetic=_synthetic, note=_note, renamed=_renamed)
    out: list[ModelMessage] = []
    pending: list[tuple[ModelRequestPart, _Source | None]] = []  # request parts of the turn being gathered
    for item, origin in zip(items, result.origins()):
        if isinstance(item, ModelResponse):
            _flush(messages, pending, out)
            out.append(item)
        else:
            kept = item is originals[origin.message_index]
            pending.append((item, sources[origin.message_index] if kept else None))
    _flush(messages, pending, out)
    return out


def _original(messages: Sequence[ModelMessage], source: _Source) -> _Item:
    """The reply, or the request part, a neutral message stands for."""
    message = messages[source[0]]
    return message if isinstance(message, ModelResponse) else message.parts[source[1]]


def _synthetic(message: ChatMessage, reply: _Item, index: int) -> _Item:
    assert isinstance(reply, ModelResponse)
    synthetic = ToolReturnPart(tool_name=message.tool_name or "tool", content=text_of(message.content),
                               tool_call_id=message.tool_call_id or "", outcome="interrupted",
                               metadata={SYNTHESIZED: True})
    if reply.timestamp is not None:  # the call's own time: the same history repairs to equal objects
        synthetic = dataclasses.replace(synthetic, timestamp=reply.timestamp)
    return synthetic


def _note(message: ChatMessage, orphan: _Item) -> _Item:
    note = UserPromptPart(content=text_of(message.content))
    when = getattr(orphan, "timestamp", None)  # the orphan's own time: equal histories repair to equal notes
    return dataclasses.replace(note, timestamp=when) if when is not None else note


def _renamed(original: _Item, message: ChatMessage) -> _Item:
    """A reply's calls, or a result with its call, under the ids repair gave."""
    if isinstance(original, ModelResponse):
        ids = iter(call.id for call in message.tool_calls)  # renamed ids, in call order
        parts: list[ModelResponsePart] = [dataclasses.replace(p, tool_call_id=next(ids))
                                          if isinstance(p, ToolCallPart) else p for p in original.parts]
        return dataclasses.replace(original, parts=parts)
    if isinstance(original, (ToolReturnPart, RetryPromptPart)):
        return dataclasses.replace(original, tool_call_id=message.tool_call_id or "")
    return original


def _flush(messages: Sequence[ModelMessage], pending: list[tuple[ModelRequestPart, _Source | None]],
           out: list[ModelMessage]) -> None:
    """The gathered request parts as one ModelRequest: the input's own when they are exactly its parts."""
    if not pending:
        return
    parts = [part for part, _ in pending]
    first = next((source for _, source in pending if source is not None), None)
    if first is not None:
        original = messages[first[0]]
        assert isinstance(original, ModelRequest)
        if len(parts) == len(original.parts) and all(a is b for a, b in zip(parts, original.parts)):
            out.append(original)
        else:
            out.append(dataclasses.replace(original, parts=parts))
    else:
        out.append(ModelRequest(parts=parts))
    pending.clear()
