"""Bridges to the frameworks agents are built with: repair their own message objects, in their own hooks.

Each bridge is a module importing its framework (`chatmend.bridges.pydantic_ai` needs `chatmend[pydantic-ai]`):
importing `chatmend` or this package costs none of them. What they share is here: reading a call's arguments,
and turning a repair of their messages read as neutral ones back into their own objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from chatmend.messages import ChatMessage
from chatmend.results import RepairResult

__all__ = ["call_arguments", "rebuilt"]

_Message = TypeVar("_Message")


def call_arguments(args: Any) -> dict[str, Any] | str:
    """A framework call's arguments as a neutral ToolCall takes them: an object or a string ("" for anything else)."""
    if isinstance(args, dict):
        return args
    return args if isinstance(args, str) else ""


def rebuilt(messages: Sequence[_Message], neutral: Sequence[ChatMessage], result: RepairResult, *,
            synthetic: Callable[[ChatMessage, _Message, int], _Message],
            note: Callable[[ChatMessage, _Message], _Message],
            renamed: Callable[[_Message, ChatMessage], _Message]) -> list[_Message]:
    """The repair of `neutral` (`messages` read one for one) in the framework's objects: a message repair left
    alone is the input's own object, one it renamed is `renamed(original, message)`, a synthetic result is
    `synthetic(result, the reply of its call, the call's index in it)` and a note `note(note, the orphan result
    it stands for)`."""
    out: list[_Message] = []
    for message, origin in zip(result.messages, result.origins()):
        if origin.kind == "synthetic":
            assert origin.call_index is not None  # a synthetic result always answers a call
            out.append(synthetic(message, messages[origin.message_index], origin.call_index))
        elif origin.kind == "note":
            out.append(note(message, messages[origin.message_index]))
        elif message is neutral[origin.message_index]:
            out.append(messages[origin.message_index])
        else:
            out.append(renamed(messages[origin.message_index], message))
    return out
