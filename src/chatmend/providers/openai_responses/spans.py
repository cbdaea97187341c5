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
    kinds: list[int] = []
    refs: list[Any] = []
    starts: list[int] = []
    calls: list[str] | None = None  # the call ids of the turn being read
    for item in items:
        if type(item) is not dict:
            return None
        kind = item.get("type")
        if kind == "function_call":
            call_id, name = item.get("call_id"), item.get("name")
            if len(item) != 4 or type(call_id) is not str or type(name) is not str or not name or \
                    type(item.get("arguments")) is not str:
                return None
            if calls is None:
                calls = []
                kinds.append(CALLS)
                refs.append(None)
            starts.append(len(kinds) - 1)
            calls.append(call_id)
            refs[-1] = tuple(calls)
            continue
        calls = None
        starts.append(len(kinds))
        if kind == "function_call_output":
            call_id = item.get("call_id")
            if len(item) != 3 or type(call_id) is not str or type(item.get("output")) is not str:
                return None
            kinds.append(RESULT)
            refs.append(call_id)
        elif kind is None and len(item) == 2 and item.get("role") in _ROLES:
            content = item.get("content")
            if type(content) is not str or not content:
                return None
            kinds.append(OTHER)
            refs.append(None)
        else:
            return None
    starts.append(len(kinds))
    return Stubs(kinds, refs, starts)
