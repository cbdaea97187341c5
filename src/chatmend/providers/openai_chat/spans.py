"""Chat Completions' stubs for `repair_body`'s stub route (`chatmend.planner`).

Most messages of an agent's saved body are of a handful of plain shapes: a user, system or tool message with
string content, an assistant message with string (or null) content and function calls whose `arguments` are
JSON text. `stubs` takes exactly those shapes (the same keys, the same JSON types; a tool message with its tool's
`name` for a dialect that names results): a list of them, repaired, keeps OpenAI's rules OC1-OC6, so the
assembled list needs no `check` (`plain_lists_valid`). Anything else (another key, a content list, a `developer`
message) goes the neutral route.
"""

from __future__ import annotations

from typing import Any

from chatmend.planner import BLANK, CALLS, OTHER, REPLY, RESULT, Stubs

__all__ = ["stubs"]


def stubs(items: list[Any], *, named: bool = False) -> Stubs | None:
    """The stubs of `repair_body`'s stub route (`chatmend.planner`), one per message: None unless every item is of a
    plain shape (and a user note's text parts), so that the repaired list keeps OpenAI's rules, and repair of the
    stubs is repair of what the reader reads. With `named`, a tool message may carry its tool's `name`."""
    out = Stubs()
    add = out.add
    for item in items:
        if type(item) is not dict:
            return None
        role = item.get("role")
        content = item.get("content")
        if content == "":
            return None  # a spelling the reader records: not plain
        size = len(item)
        if role == "tool":
            call_id = item.get("tool_call_id")
            if named and size == 4 and type(item.get("name")) is str:
                size = 3
            if size != 3 or type(content) is not str or type(call_id) is not str:
                return None
            add(RESULT, call_id)
        elif role == "assistant":
            if "content" not in item or (content is not None and type(content) is not str):
                return None
            calls = item.get("tool_calls")
            if calls is None:
                if size != 2:
                    return None
                add(REPLY if content and not content.isspace() else BLANK)
                continue
            if size != 3 or type(calls) is not list or not calls:
                return None
            call_ids = []
            for call in calls:
                if not _plain_call_shape(call):
                    return None
                call_ids.append(call["id"])
            add(CALLS, call_ids)
        elif role == "user" or role == "system":
            if size != 2 or (type(content) is not str and not (role == "user" and content and _text_parts(content))):
                return None  # (an empty list is not a note's: the writer would write it otherwise)
            add(OTHER)
        else:
            return None
    return out.end()


def _text_parts(content: Any) -> bool:
    """True when a content is a list of `{"type": "text", "text": ...}` parts (how a user note is written)."""
    return type(content) is list and all(
        type(part) is dict and len(part) == 2 and part.get("type") == "text" and type(part.get("text")) is str
        for part in content)


def _plain_call_shape(call: Any) -> bool:
    """True for a function call `{"id", "type": "function", "function": {"name", "arguments"}}` with JSON text
    arguments."""
    if type(call) is not dict or len(call) != 3 or call.get("type") != "function":
        return False
    function = call.get("function")
    if type(call.get("id")) is not str or type(function) is not dict or len(function) != 2:
        return False
    name = function.get("name")
    return type(name) is str and bool(name) and type(function.get("arguments")) is str
