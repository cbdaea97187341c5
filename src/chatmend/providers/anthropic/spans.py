"""Anthropic's stubs and assembly for `repair_body`'s span path (`providers._spans`).

An assistant turn is one neutral message; a user turn is one message per `tool_result` block and one per run of
the other blocks between them, as `read.read_message` reads it. The stubs take the plain shapes of an agent's
traffic (text, `tool_use`, `tool_result` with text, images in user turns, `cache_control`); a body with anything
else (thinking, whose place the writer judges; a server tool, a document, a system message in `messages`, blank
text the writer would leave out) goes the neutral way, and so does a body with thinking on (AT1).

Assembly keeps every turn whose messages all come out in place, as it was; the user blocks between two kept turns
that repair changed (a result moved, renamed or answered as interrupted, a note) are one new user turn, blocks
kept as they were and the new ones written by the writer (`write.result_block`, `write.user_blocks`): what the
neutral path's writer writes of such a run.
"""

from __future__ import annotations

import bisect
from typing import Any, NamedTuple

from chatmend.providers._spans import (
    ANSWER,
    BLANK,
    CALL,
    CALLS,
    KEEP,
    NOTE,
    OTHER,
    REPLY,
    RESULT,
    SYNTHETIC,
    SpanPlan,
    Stubs,
)
from chatmend.providers.anthropic.read import _read_result
from chatmend.providers.anthropic.write import result_block, user_blocks
from chatmend.repair import IsReadOnly, orphan_note, synthetic_result

__all__ = ["assemble", "stubs"]

_CACHED = "cache_control"


def stubs(items: list[Any]) -> Stubs | None:
    """One stub per neutral message of a Messages list of plain turns; None for any other list."""
    kinds: list[int] = []
    refs: list[Any] = []
    places = _Places([], [])
    for r, item in enumerate(items):
        if type(item) is not dict or len(item) != 2:
            return None
        role, content = item.get("role"), item.get("content")
        if role == "assistant":
            stub = _assistant_stub(content)
            if stub is None:
                return None
            kinds.append(stub[0])
            refs.append(stub[1])
            places.add(r, 0, 0)
        elif role == "user":
            if not _user_stubs(r, content, kinds, refs, places):
                return None
        else:
            return None  # a system message inside `messages`, or not a turn
    return Stubs(kinds, refs, places.items, places.blocks)


def _assistant_stub(content: Any) -> tuple[int, list[str] | None] | None:
    """An assistant turn's kind and call ids (None: not plain)."""
    if type(content) is str:
        return (REPLY, None) if content and not content.isspace() else (BLANK, None)
    if type(content) is not list:
        return None
    ids: list[str] = []
    blank = said = False  # a blank text block, a block that says something
    for block in content:
        if type(block) is not dict:
            return None
        kind = block.get("type")
        size = len(block) - (_CACHED in block)
        if kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if size != 4 or type(call_id) is not str or type(name) is not str or not name or \
                    type(block.get("input")) is not dict:
                return None
            ids.append(call_id)
            said = True
        elif kind == "text":
            text = block.get("text")
            if size != 2 or type(text) is not str or ids:
                return None  # (text after a call: the writer puts the calls last)
            if not text or text.isspace():
                blank = True
            else:
                said = True
        else:
            return None  # thinking too: where it may stand (AT2, AT6, AT7) is the writer's to judge
    if blank and said:
        return None  # AN9: the writer leaves the blank block out of a turn that says something
    if ids:
        return CALLS, ids
    return (REPLY if said else BLANK), None


class _Places(NamedTuple):
    """Where each message stands: its turn, and its blocks in the turn (`Stubs.items`, `Stubs.blocks`)."""

    items: list[int]
    blocks: list[int]

    def add(self, r: int, lo: int, hi: int) -> None:
        self.items.append(r)
        self.blocks.append(lo)
        self.blocks.append(hi)


def _user_stubs(r: int, content: Any, kinds: list[int], refs: list[Any], places: _Places) -> bool:
    """The stubs of user turn `r`, appended; False when it is not plain."""
    if type(content) is str:
        if not content or content.isspace():
            return False  # AN9: the writer leaves a blank turn out
        kinds.append(OTHER)
        refs.append(None)
        places.add(r, 0, 0)
        return True
    if type(content) is not list or not content:
        return False
    group = 0  # where the run of other blocks began
    for j, block in enumerate(content):
        if type(block) is not dict:
            return False
        kind = block.get("type")
        if kind == "tool_result":
            if not _plain_result(block):
                return False
            if j > group:
                kinds.append(OTHER)
                refs.append(None)
                places.add(r, group, j)
            kinds.append(RESULT)
            refs.append(block["tool_use_id"])
            places.add(r, j, j + 1)
            group = j + 1
        elif not _plain_user_block(kind, block):
            return False
    if group < len(content):
        kinds.append(OTHER)
        refs.append(None)
        places.add(r, group, len(content))
    return True


def _plain_result(block: dict[str, Any]) -> bool:
    """A tool_result with a non-blank text (or text blocks), maybe an error flag and a cache breakpoint."""
    if type(block.get("tool_use_id")) is not str:
        return False
    size = len(block) - (_CACHED in block) - ("is_error" in block)
    if size != 3 or ("is_error" in block and type(block["is_error"]) is not bool):
        return False
    content = block.get("content")
    if type(content) is str:
        return bool(content) and not content.isspace()
    return type(content) is list and bool(content) and all(
        type(part) is dict and _plain_user_block(part.get("type"), part) and part.get("type") == "text"
        for part in content)


def _plain_user_block(kind: Any, block: dict[str, Any]) -> bool:
    """A text block with non-blank text, or an image, maybe with a cache breakpoint."""
    size = len(block) - (_CACHED in block)
    if kind == "text":
        text = block.get("text")
        return size == 2 and type(text) is str and bool(text) and not text.isspace()
    return kind == "image" and size == 2 and type(block.get("source")) is dict


def assemble(items: list[Any], stubs: Stubs, plan: SpanPlan,
             is_read_only: IsReadOnly | None) -> tuple[list[Any], list[int]]:
    """The list the plan makes: turns kept whole as they were, changed user blocks gathered into new turns."""
    return _Assembly(items, stubs, plan, is_read_only).run()


class _Assembly:
    """The output list being made, and the user blocks of the new turn being gathered."""

    def __init__(self, items: list[Any], stubs: Stubs, plan: SpanPlan, is_read_only: IsReadOnly | None) -> None:
        assert stubs.items is not None and stubs.blocks is not None
        self.items, self.plan, self.is_read_only = items, plan, is_read_only
        self.kinds, self.refs, self.item_of, self.block_at = stubs.kinds, stubs.refs, stubs.items, stubs.blocks
        item_of = self.item_of
        self.out: list[Any] = []
        self.rewritten: list[int] = []
        self.blocks: list[Any] = []
        self.calls: dict[str, list[tuple[int, str]]] | None = None
        """For each call id, the turns that call it and the tool they name, in order."""
        # the first message of each item (and the count after the last): a kept stretch keeps whole turns
        self.starts = [0] * (len(items) + 1)
        for m in range(len(item_of) - 1, -1, -1):
            self.starts[item_of[m]] = m
        self.starts[len(items)] = len(item_of)

    def run(self) -> tuple[list[Any], list[int]]:
        items = self.items
        for step, index, argument in self.plan.steps:
            if step == KEEP:
                self.keep(index, argument)
                continue
            r, lo = self.item_of[index], self.block_at[2 * index]
            if step == CALL:
                self.new_turn(_renamed_calls(items[r], argument))
            elif step == ANSWER:
                self.blocks.append({**items[r]["content"][lo], "tool_use_id": argument})
            elif step == SYNTHETIC:
                ci, final = argument
                name = [b for b in items[r]["content"] if b.get("type") == "tool_use"][ci]["name"]
                read_only = self.is_read_only is not None and bool(self.is_read_only(name))
                self.blocks.append(result_block(synthetic_result(final, name, read_only=read_only), final))
            else:  # NOTE
                block = items[r]["content"][lo]
                name = self.name_of(block["tool_use_id"], r)
                names = {block["tool_use_id"]: name} if name is not None else {}
                self.blocks.extend(user_blocks(orphan_note(_read_result(block, names))))
        self.close()
        return self.out, self.rewritten

    def keep(self, start: int, end: int) -> None:
        """Messages `start` to `end` as they were: whole turns kept, parts of a turn gathered into the new one."""
        items, item_of, block_at, starts = self.items, self.item_of, self.block_at, self.starts
        m = start
        while m < end:
            r = item_of[m]
            if m == starts[r] and starts[r + 1] <= end:
                self.close()
                self.out.append(items[r])
                m = starts[r + 1]
                continue
            # (a part of a user turn: an assistant turn is one message)
            self.blocks.extend(items[r]["content"][block_at[2 * m]:block_at[2 * m + 1]])
            m += 1

    def new_turn(self, item: dict[str, Any]) -> None:
        self.close()
        self.rewritten.append(len(self.out))
        self.out.append(item)

    def close(self) -> None:
        """The gathered user blocks as one new turn."""
        if self.blocks:
            self.rewritten.append(len(self.out))
            self.out.append({"role": "user", "content": self.blocks})
            self.blocks = []

    def name_of(self, call_id: str, before: int) -> str | None:
        """The tool of the last call with this id before turn `before`, as the reader names a result."""
        if self.calls is None:  # (the turns that call the notes' ids, found on the first note: most bodies have none)
            self.calls = {}
            wanted = {self.items[self.item_of[m]]["content"][self.block_at[2 * m]]["tool_use_id"]
                      for step, m, _ in self.plan.steps if step == NOTE}
            for m, ids in enumerate(self.refs):
                if self.kinds[m] == CALLS and not wanted.isdisjoint(ids):
                    r = self.item_of[m]
                    for block in self.items[r]["content"]:
                        if block.get("type") == "tool_use" and block["id"] in wanted:
                            self.calls.setdefault(block["id"], []).append((r, block["name"]))
        named = self.calls.get(call_id, [])
        k = bisect.bisect_left(named, (before,))
        return named[k - 1][1] if k else None


def _renamed_calls(item: dict[str, Any], finals: list[str]) -> dict[str, Any]:
    """An assistant turn with its tool_use blocks under their final ids, every other block as it was."""
    final_ids = iter(finals)
    return {**item, "content": [{**b, "id": next(final_ids)} if b.get("type") == "tool_use" else b
                                for b in item["content"]]}
