"""Neutral messages for a bridge, built from a framework's own typed objects without validation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatmend.messages import ChatMessage, ToolCall, from_template

__all__ = ["neutral_makers"]

# Templates with every field a bridge sets given explicitly, so `from_template` can share their fields-set.
_TEMPLATES = {
    "assistant": ChatMessage(role="assistant", content="", tool_calls=()),
    "tool": ChatMessage(role="tool", content="", tool_call_id="", tool_name=None, is_error=False),
    "system": ChatMessage(role="system", content=""),
    "user": ChatMessage(role="user", content=""),
}
_CALL = ToolCall(id="", name="t", arguments={})


def _message(*, role: str, **fields: Any) -> ChatMessage:
    return from_template(_TEMPLATES[role], fields)


def _call(**fields: Any) -> ToolCall:
    return from_template(_CALL, fields)


def neutral_makers() -> tuple[Callable[..., ChatMessage], Callable[..., ToolCall]]:
    """(make a message, make a call), by keyword, like the models' constructors but unvalidated: for values that
    come from a framework's typed objects (a string id, a dict or text of arguments). What repair reads of them is
    what validation would have given."""
    return _message, _call
