"""LlamaIndex: repair a `list[ChatMessage]` in LlamaIndex's own types, and a memory whose history comes back repaired.

    from chatmend.bridges.llama_index import RepairedMemory, repair

    messages = repair(messages)                                   # list[ChatMessage] -> list[ChatMessage]
    memory = RepairedMemory(memory=ChatMemoryBuffer.from_defaults())
    await FunctionAgent(llm=llm, tools=tools).run("go on", memory=memory)  # each model call: a valid history

A message repair leaves alone is the very same object; a changed one is a `model_copy` with only the ids changed
(its other blocks, `additional_kwargs` and everything else stay). An assistant's calls are its `ToolCallBlock`s, or
when it has none the entries of `additional_kwargs["tool_calls"]` (the older form, which llama-index-llms-openai
sends only then: OpenAI's `{"id", "function": ...}` dicts or SDK objects, Responses'
`{"type": "function_call", "call_id", ...}`, Anthropic's `{"id", "name", "input"}`). A reply read from OpenAI
holds both, under the same ids: an entry is renamed with the block of its id. A result is a `tool` message
naming its call in `additional_kwargs["tool_call_id"]` (or `"call_id"`). A synthetic result is a `tool` message with
`additional_kwargs={"tool_call_id": ..., "name": ..., "chatmend_synthesized": True}` (the integrations send only
the id of a tool message's `additional_kwargs`).

`RepairedMemory` wraps any `BaseMemory` (`Memory`, `ChatMemoryBuffer`, ...): `get` / `aget` return what it
returns, repaired (so a token limit that cuts a call from its result leaves no orphan); what is stored is never
rewritten (`put`, `set`, `reset`, `get_all` go to the wrapped memory as they are).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.bridge.pydantic import PrivateAttr, SerializeAsAny
from llama_index.core.memory import BaseMemory, Memory

from chatmend.bridges import call_arguments, rebuilt
from chatmend.messages import ChatMessage as NeutralMessage
from chatmend.messages import ToolCall, text_of
from chatmend.repair import IsReadOnly, Wording, repair_history

__all__ = ["SYNTHESIZED", "RepairedMemory", "repair"]

SYNTHESIZED = "chatmend_synthesized"
"""The `additional_kwargs` key of a tool message chatmend made (its value is True)."""


_ASSISTANT = {MessageRole.ASSISTANT, MessageRole.CHATBOT, MessageRole.MODEL}  # Cohere's and Gemini's names too
_SYSTEM = {MessageRole.SYSTEM, MessageRole.DEVELOPER}


def repair(messages: Sequence[ChatMessage], *, is_read_only: IsReadOnly | None = None,
           wording: Wording | None = None) -> list[ChatMessage]:
    """The history made valid by `repair_history`'s rules, in LlamaIndex's types (the input is not changed)."""
    neutral = [_neutral(m) for m in messages]
    result = repair_history(neutral, is_read_only=is_read_only, wording=wording)
    if not result.changed:
        return list(messages)
    return rebuilt(messages, neutral, result, synthetic=_synthetic, note=_note, renamed=_renamed)


class RepairedMemory(BaseMemory):
    """Any LlamaIndex memory, whose `get` / `aget` return the history repaired; storage is never rewritten."""

    memory: SerializeAsAny[BaseMemory]
    """The memory that stores the history."""

    _is_read_only: IsReadOnly | None = PrivateAttr(default=None)

    def __init__(self, *, memory: BaseMemory, is_read_only: IsReadOnly | None = None) -> None:
        super().__init__(memory=memory)
        self._is_read_only = is_read_only

    @classmethod
    def class_name(cls) -> str:
        return "RepairedMemory"

    @classmethod
    def from_defaults(cls, **kwargs: Any) -> RepairedMemory:
        """Over `memory=` when given, else over `Memory.from_defaults(**kwargs)` (`is_read_only=` is this
        wrapper's)."""
        is_read_only = kwargs.pop("is_read_only", None)
        memory = kwargs.pop("memory", None)
        return cls(memory=memory if memory is not None else Memory.from_defaults(**kwargs), is_read_only=is_read_only)

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        return repair(self.memory.get(input=input, **kwargs), is_read_only=self._is_read_only)

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        return repair(await self.memory.aget(input=input, **kwargs), is_read_only=self._is_read_only)

    def get_all(self) -> list[ChatMessage]:
        """Everything stored, as stored."""
        return self.memory.get_all()

    async def aget_all(self) -> list[ChatMessage]:
        return await self.memory.aget_all()

    def put(self, message: ChatMessage) -> None:
        self.memory.put(message)

    async def aput(self, message: ChatMessage) -> None:
        await self.memory.aput(message)

    def put_messages(self, messages: list[ChatMessage]) -> None:
        self.memory.put_messages(messages)

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        await self.memory.aput_messages(messages)

    def set(self, messages: list[ChatMessage]) -> None:
        self.memory.set(messages)

    async def aset(self, messages: list[ChatMessage]) -> None:
        await self.memory.aset(messages)

    def reset(self) -> None:
        self.memory.reset()

    async def areset(self) -> None:
        await self.memory.areset()


# ------------------------------------------------------------------------------------------------- reading

def _field(entry: Any, key: str) -> Any:
    """A field of a `tool_calls` entry: a dict, or an SDK object (`ChatCompletionMessageToolCall`)."""
    return entry.get(key) if isinstance(entry, dict) else getattr(entry, key, None)


def _entry_id(entry: Any) -> str:
    """The call id of a `tool_calls` entry (a Responses `function_call` item's is its `call_id`)."""
    key = "call_id" if _field(entry, "call_id") is not None else "id"
    return _field(entry, key) or ""


def _entry_call(entry: Any) -> tuple[str, Any]:
    """(name, arguments) of a `tool_calls` entry, in any of its forms."""
    function = _field(entry, "function")
    if function is not None:
        return _field(function, "name") or "tool", _field(function, "arguments")
    arguments = _field(entry, "input")
    return _field(entry, "name") or "tool", arguments if arguments is not None else _field(entry, "arguments")


def _entries(message: ChatMessage) -> list[Any]:
    """The `additional_kwargs["tool_calls"]` entries (none when that is not a list)."""
    listed = message.additional_kwargs.get("tool_calls")
    return listed if isinstance(listed, list) else []


def _neutral(message: ChatMessage) -> NeutralMessage:
    """What repair needs of a message: its role, its calls or the call it answers, and whether it says anything."""
    role = message.role
    if role in _ASSISTANT:
        calls = [ToolCall(id=b.tool_call_id or "", name=b.tool_name or "tool", arguments=call_arguments(b.tool_kwargs))
                 for b in message.blocks if isinstance(b, ToolCallBlock)]
        if not calls:
            for entry in _entries(message):
                name, arguments = _entry_call(entry)
                calls.append(ToolCall(id=_entry_id(entry), name=name, arguments=call_arguments(arguments)))
        return NeutralMessage(role="assistant", content=_text(message, calls=True), tool_calls=tuple(calls))
    if role == MessageRole.TOOL:
        kwargs = message.additional_kwargs
        call_id = kwargs.get("tool_call_id", kwargs.get("call_id"))
        return NeutralMessage(role="tool", tool_call_id=call_id if isinstance(call_id, str) else "",
                        tool_name=kwargs.get("name") if isinstance(kwargs.get("name"), str) else None,
                        content=_text(message), is_error=False)
    if role in _SYSTEM:
        return NeutralMessage(role="system", content=_text(message))
    return NeutralMessage(role="user", content=_text(message) or f"[{role.value}]")


def _text(message: ChatMessage, *, calls: bool = False) -> str:
    """The message's text blocks, any other block (image, thinking, ...) as a mark; an assistant's calls are not
    content (rule 1 drops a reply with no calls and nothing but whitespace)."""
    texts = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif not (calls and isinstance(block, ToolCallBlock)):
            texts.append(f"[{block.block_type}]")
    return "\n".join(texts)


# ------------------------------------------------------------------------------------------------- writing

def _synthetic(message: NeutralMessage, reply: ChatMessage, index: int) -> ChatMessage:
    return ChatMessage(role=MessageRole.TOOL, content=text_of(message.content), additional_kwargs={
        "tool_call_id": message.tool_call_id or "", "name": message.tool_name, SYNTHESIZED: True})


def _note(message: NeutralMessage, orphan: ChatMessage) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text_of(message.content))


def _renamed(original: ChatMessage, message: NeutralMessage) -> ChatMessage:
    """A copy of the original under the final ids repair gave (rule 5): its blocks and `tool_calls` entries
    alike, or the id its result names."""
    if original.role == MessageRole.TOOL:
        kwargs = dict(original.additional_kwargs)
        kwargs["tool_call_id" if "tool_call_id" in kwargs or "call_id" not in kwargs else "call_id"] = (
            message.tool_call_id or "")
        return original.model_copy(update={"additional_kwargs": kwargs})
    new_ids = iter(c.id for c in message.tool_calls)
    by_old: dict[str, str] = {}  # a block's old id -> its new one, for the entry under the same id
    blocks: list[Any] = []
    for block in original.blocks:
        if isinstance(block, ToolCallBlock):
            new = next(new_ids)
            by_old.setdefault(block.tool_call_id or "", new)
            block = block.model_copy(update={"tool_call_id": new})
        blocks.append(block)
    update: dict[str, Any] = {"blocks": blocks}
    if "tool_calls" in original.additional_kwargs and _entries(original):
        entries = [_with_id(e, by_old.get(_entry_id(e), _entry_id(e)) if by_old else next(new_ids))
                   for e in _entries(original)]
        update["additional_kwargs"] = {**original.additional_kwargs, "tool_calls": entries}
    return original.model_copy(update=update)


def _with_id(entry: Any, new: str) -> Any:
    """A `tool_calls` entry under a new call id (the same entry when its id is already that)."""
    key = "call_id" if _field(entry, "call_id") is not None else "id"
    if _field(entry, key) == new:
        return entry
    if isinstance(entry, dict):
        return {**entry, key: new}
    return entry.model_copy(update={key: new})
