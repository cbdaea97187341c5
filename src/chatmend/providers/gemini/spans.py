"""Gemini's stubs for `repair_body`'s stub route (`chatmend.planner`).

A model content is one neutral message; a user content is one message per `functionResponse` part, then one for its
other parts, as `read.read_content` reads it (a response without an id answers the call at its position in the
content before). The stubs take the plain shapes of an agent's traffic: text, `functionCall` with object `args`,
`functionResponse` with `{"output": text}` or `{"error": text}`, responses before the user's words. A list with
anything else (signatures, media, a call turn that opens the list or follows a model turn, GE2, which the writer
bridges) goes the neutral way.
"""

from __future__ import annotations

from typing import Any

from chatmend.planner import CALLS, OTHER, REPLY, RESULT, Stubs

__all__ = ["minted_id", "stubs"]

_CALL_KEYS = ({"name", "args"}, {"id", "name", "args"})


def minted_id(index: int, k: int) -> str:
    """The id `repair_body` reads call `k` of content `index` under when it has none (it goes back without one)."""
    return f"~gemini:{index}.{k}"


def stubs(items: list[Any]) -> Stubs | None:
    """One stub per neutral message of a contents list of plain turns; None for any other list."""
    out = Stubs(items=True)
    add = out.add
    calls: list[str] = []  # the call ids of the content before, when it is a model turn
    after_model = True  # a call turn needs a user turn before it (GE2): none before the first content
    for i, item in enumerate(items):
        if type(item) is not dict or len(item) != 2:
            return None
        role, parts = item.get("role"), item.get("parts")
        if type(parts) is not list or not parts:
            return None
        if role == "model":
            ids = _model_ids(parts, i)
            if ids is None or (ids and after_model):
                return None
            add(CALLS if ids else REPLY, ids or None)
            calls, after_model = ids, True
            continue
        if role != "user":
            return None
        said = False  # a text part met: no response may follow it (the reader puts responses first)
        k = 0
        for at, part in enumerate(parts):
            if type(part) is not dict or len(part) != 1:
                return None
            text = part.get("text")
            if type(text) is str:
                if not text or text.isspace():
                    return None
                if not said:
                    add(OTHER, None, at)
                said = True
                continue
            response = _response_id(part.get("functionResponse"))
            if response is None or said:
                return None
            call_id = response or (calls[k] if k < len(calls) else "")
            if call_id not in calls or \
                    _call_name(items[i - 1], calls.index(call_id)) != part["functionResponse"]["name"]:
                return None  # the writer writes a response under its call's name, in its call's turn
            add(RESULT, call_id, at)
            k += 1
        calls, after_model = [], False
    return out.end()


def _model_ids(parts: list[Any], index: int) -> list[str] | None:
    """The ids of a model turn's calls (each without one under the id `repair_body`'s reader mints); None when the
    turn is not of text then calls."""
    ids: list[str] = []
    for part in parts:
        if type(part) is not dict or len(part) != 1:
            return None
        text = part.get("text")
        if type(text) is str:
            if not text or text.isspace() or ids:
                return None
            continue
        call = part.get("functionCall")
        if type(call) is not dict or set(call) not in _CALL_KEYS:
            return None
        name, call_id = call.get("name"), call.get("id", "")
        if type(name) is not str or not name or type(call.get("args")) is not dict or type(call_id) is not str:
            return None
        ids.append(call_id or minted_id(index, len(ids)))
    return ids


def _call_name(content: dict[str, Any], k: int) -> str:
    """The name call `k` of a plain model turn calls."""
    name: str = [part["functionCall"] for part in content["parts"] if "functionCall" in part][k]["name"]
    return name


def _response_id(response: Any) -> str | None:
    """A plain functionResponse's own id ("" without one); None for anything else."""
    if type(response) is not dict or set(response) not in _RESPONSE_KEYS:
        return None
    name, value, own = response.get("name"), response.get("response"), response.get("id", "")
    if type(name) is not str or not name or type(own) is not str or type(value) is not dict or len(value) != 1:
        return None
    text = value.get("output", value.get("error"))
    return own if type(text) is str else None


_RESPONSE_KEYS = ({"name", "response"}, {"id", "name", "response"})
