"""Anthropic's stubs and new blocks for `repair_body`'s stub route (`chatmend.planner`, `providers.assembly`).

An assistant turn is one neutral message; a user turn is one message per `tool_result` block and one per run of
the other blocks between them, as `read.read_message` reads it. The stubs take the plain shapes of an agent's
traffic (text, `tool_use`, `tool_result` with text, images in user turns, `cache_control`); a body with anything
else (thinking, whose place the writer judges; a server tool, a document, a system message in `messages`, blank
text the writer would leave out) goes the neutral way, and so does a body with thinking on (AT1).

The assembly keeps every turn whose messages all come out in place, as it was; the user blocks between two kept
turns that repair changed (a result moved, renamed or answered as interrupted, a note) are one new user turn, blocks
kept as they were and the new ones written here as the writer writes them (`write.text_result_block`): what the
neutral route's writer writes of such a run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chatmend.planner import BLANK, CALLS, OTHER, REPLY, RESULT, Stubs
from chatmend.providers.anthropic.write import text_result_block
from chatmend.repair import IsReadOnly, orphan_note_text, reads_only, synthetic_text

__all__ = ["note_block", "renamed_calls", "stubs", "synthetic_block"]

_CACHED = "cache_control"


def stubs(items: list[Any]) -> Stubs | None:
    """One stub per neutral message of a Messages list of plain turns; None for any other list."""
    out = Stubs(items=True)
    add = out.add
    for item in items:
        if type(item) is not dict or len(item) != 2:
            return None
        role, content = item.get("role"), item.get("content")
        if role == "assistant":
            if not _assistant_stub(content, add):
                return None
            continue
        if role != "user":
            return None  # a system message inside `messages`, or not a turn
        if type(content) is str:
            if not content or content.isspace():
                return None  # AN9: the writer leaves a blank turn out
            add(OTHER)
            continue
        if type(content) is not list or not content:
            return None
        others = False  # in a run of blocks other than results (one message)
        for at, block in enumerate(content):
            if type(block) is not dict:
                return None
            kind = block.get("type")
            if kind == "tool_result":
                call_id, output = block.get("tool_use_id"), block.get("content")
                if len(block) != 3 or type(output) is not str or not output or output.isspace():
                    call_id = _result_id(block)  # not a plain text result: an error flag, a breakpoint, text blocks
                if type(call_id) is not str:
                    return None
                add(RESULT, call_id, at)
                others = False
            elif not _plain_user_block(kind, block):
                return None
            elif not others:
                add(OTHER, None, at)
                others = True
    return out.end()


def _assistant_stub(content: Any, add: Callable[[int, Any], None]) -> bool:
    """An assistant turn's stub, added by `add`; False (nothing added) when the turn is not plain."""
    if type(content) is str:
        add(REPLY if content and not content.isspace() else BLANK, None)
        return True
    if type(content) is not list:
        return False
    ids: list[str] = []
    blank = said = False  # a blank text block, a text block that says something
    for block in content:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        size = len(block)
        if kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if (size != 4 and size - (_CACHED in block) != 4) or type(call_id) is not str or \
                    type(name) is not str or not name or type(block.get("input")) is not dict:
                return False
            ids.append(call_id)
        elif kind == "text":
            text = block.get("text")
            if (size != 2 and size - (_CACHED in block) != 2) or type(text) is not str or ids:
                return False  # (text after a call: the writer puts the calls last)
            if not text or text.isspace():
                blank = True
            else:
                said = True
        else:
            return False  # thinking too: where it may stand (AT2, AT6, AT7) is the writer's to judge
    if ids:
        if blank:
            return False  # AN9: the writer leaves a blank text block out of a turn that says something (calls do)
        add(CALLS, ids)
    elif blank and said:
        return False
    else:
        add(REPLY if said else BLANK, None)
    return True


def _result_id(block: dict[str, Any]) -> str | None:
    """The call id of a tool_result with a non-blank text (or text blocks), maybe an error flag and a cache
    breakpoint; None for any other tool_result."""
    call_id, content = block.get("tool_use_id"), block.get("content")
    if type(call_id) is not str:
        return None
    size = len(block) - (_CACHED in block) - ("is_error" in block)
    if size != 3 or ("is_error" in block and type(block["is_error"]) is not bool):
        return None
    if type(content) is str:
        plain = bool(content) and not content.isspace()
    else:
        plain = type(content) is list and bool(content) and all(
            type(part) is dict and part.get("type") == "text" and _plain_user_block("text", part) for part in content)
    return call_id if plain else None


def _plain_user_block(kind: Any, block: dict[str, Any]) -> bool:
    """A text block (`kind`: its type) with non-blank text, or an image, maybe with a cache breakpoint."""
    size = len(block)
    if size != 2 and size - (_CACHED in block) != 2:
        return False
    if kind == "text":
        text = block.get("text")
        return type(text) is str and bool(text) and not text.isspace()
    return kind == "image" and type(block.get("source")) is dict


def renamed_calls(item: dict[str, Any], finals: Sequence[str]) -> dict[str, Any]:
    """An assistant turn with its tool_use blocks under their final ids, every other block as it was."""
    final_ids = iter(finals)
    return {**item, "content": [{**b, "id": next(final_ids)} if b.get("type") == "tool_use" else b
                                for b in item["content"]]}


def synthetic_block(item: dict[str, Any], k: int, final_id: str, is_read_only: IsReadOnly | None) -> dict[str, Any]:
    """The tool_result block the writer writes for the synthetic result of call `k` of a plain assistant turn."""
    content = item["content"]
    first = 0  # the turn's first call: the stubs take only text before the calls
    while content[first]["type"] != "tool_use":
        first += 1
    name: str = content[first + k]["name"]
    return text_result_block(final_id, synthetic_text(name, read_only=reads_only(is_read_only, name)), is_error=True)


def note_block(result: dict[str, Any], caller: dict[str, Any] | None) -> dict[str, Any]:
    """Rule 7's note of a plain tool_result, named after the tool the last call of its id (in `caller`) names, as
    the reader names a result."""
    call_id = result["tool_use_id"]
    name = None if caller is None else [b["name"] for b in caller["content"]
                                        if b.get("type") == "tool_use" and b["id"] == call_id][-1]
    return _note_block(result, name)


def _note_block(result: dict[str, Any], tool_name: str | None) -> dict[str, Any]:
    """Rule 7's note of a plain tool_result as the neutral path writes it (read, `orphan_note`, written): one text
    block, the result's text parts joined, no cache breakpoint (the note keeps only the text)."""
    content = result["content"]
    output = content if type(content) is str else "\n".join(part["text"] for part in content)
    is_error = result.get("is_error") is True
    return {"type": "text", "text": orphan_note_text(tool_name, result["tool_use_id"], is_error, output)}
