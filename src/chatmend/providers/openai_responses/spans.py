"""OpenAI Responses' stubs for `repair_body`'s stub route (`chatmend.planner`).

The reader folds an assistant turn's items into one neutral message: here a run of plain `function_call` items is
one CALLS stub, a `function_call_output` with text output one RESULT stub, a user, system or developer message with
text content one OTHER stub. A list with anything else (assistant text, reasoning, hosted tools' items, item ids,
references to stored items) goes the neutral way.
"""

from __future__ import annotations

from typing import Any

from chatmend.planner import CALLS, OTHER, RESULT, Stubs

__all__ = ["stubs"]

_ROLES = ("user", "system", "developer")  # (a tuple: a role may be any JSON, a list too)


def stubs(items: list[Any]) -> Stubs | None:
    """One stub per neutral message of an input list of plain items; None for any other list. `starts` holds the
    message each item belongs to (the calls of one turn share theirs)."""
    out = Stubs(items=True)
    add = out.add
    in_calls = False  # the item before is a call: a call joins its turn
    for item in items:
        if type(item) is not dict:
            return None
        kind = item.get("type")
        if kind == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if len(item) != 4 or type(call_id) is not str or type(name) is not str or not name or \
                    type(item.get("arguments")) is not str:
                return None
            if in_calls:
                out.join(call_id)
            else:
                add(CALLS, [call_id])
                in_calls = True
            continue
        in_calls = False
        if kind == "function_call_output":
            call_id = item.get("call_id")
            if len(item) != 3 or type(call_id) is not str or type(item.get("output")) is not str:
                return None
            add(RESULT, call_id)
        elif kind is None and len(item) == 2 and item.get("role") in _ROLES:
            content = item.get("content")
            if type(content) is not str or not content:
                return None
            add(OTHER)
        else:
            return None
    return out.end()
