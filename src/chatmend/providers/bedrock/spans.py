"""Bedrock Converse's stubs for `repair_body`'s stub route (`chatmend.planner`).

An assistant turn is one neutral message; a user turn is one message per `toolResult` block, then one for the text
after them, as `read.read_message` reads it. The stubs take the plain shapes of an agent's traffic: text, `toolUse`
with an object `input`, `toolResult` with text content and no status, results before the user's words, turns
alternating from a user turn (BR3, BR4). A list with anything else (media, reasoning, JSON results, tagged system or
thinking text, fillers, two turns of one role, which the writer merges) goes the neutral way.
"""

from __future__ import annotations

from typing import Any

from chatmend.planner import CALLS, OTHER, REPLY, RESULT, Stubs
from chatmend.providers.anthropic.wire import SYSTEM_TAGS, THINKING_TAGS
from chatmend.providers.bedrock.wire import ASSISTANT_FILLER, USER_FILLER

__all__ = ["stubs"]

_USE_KEYS = frozenset({"toolUseId", "name", "input"})
_RESULT_KEYS = frozenset({"toolUseId", "content"})


def stubs(items: list[Any]) -> Stubs | None:
    """One stub per neutral message of a messages list of plain turns; None for any other list."""
    out = Stubs(items=True)
    add = out.add
    role_before = "assistant"  # the list opens with a user turn (BR4)
    for item in items:
        if type(item) is not dict or len(item) != 2:
            return None
        role, content = item.get("role"), item.get("content")
        if role == role_before or role not in ("user", "assistant") or type(content) is not list or not content:
            return None
        role_before = role
        if role == "assistant":
            ids = _call_ids(content)
            if ids is None:
                return None
            add(CALLS if ids else REPLY, ids or None)
            continue
        said = False
        for at, block in enumerate(content):
            if type(block) is not dict or len(block) != 1:
                return None
            if _plain_text(block.get("text")):
                if not said:
                    add(OTHER, None, at)
                said = True
                continue
            result = block.get("toolResult")
            if said or type(result) is not dict or result.keys() != _RESULT_KEYS or \
                    type(result["toolUseId"]) is not str or not _text_blocks(result["content"]):
                return None
            add(RESULT, result["toolUseId"], at)
    return out.end()


def _call_ids(content: list[Any]) -> list[str] | None:
    """The toolUseIds of an assistant turn of text then calls; None for any other turn."""
    ids: list[str] = []
    for block in content:
        if type(block) is not dict or len(block) != 1:
            return None
        if _plain_text(block.get("text")):
            if ids:
                return None
            continue
        use = block.get("toolUse")
        if type(use) is not dict or use.keys() != _USE_KEYS or type(use["toolUseId"]) is not str or \
                type(use["name"]) is not str or not use["name"] or type(use["input"]) is not dict:
            return None
        ids.append(use["toolUseId"])
    return ids


def _plain_text(text: Any) -> bool:
    """Text that is read as the text it is: not blank (BR8), no tags, no filler."""
    return type(text) is str and bool(text) and not text.isspace() and not text.startswith(
        (SYSTEM_TAGS[0], THINKING_TAGS[0])) and text not in (USER_FILLER, ASSISTANT_FILLER)


def _text_blocks(content: Any) -> bool:
    """A result's content of plain text blocks, at least one."""
    return type(content) is list and bool(content) and all(
        type(block) is dict and len(block) == 1 and _plain_text(block.get("text")) for block in content)
