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
from typing import Any

from chatmend.providers._spans import (
    ANSWER,
    BLANK,
    CALL,
    CALLS,
    KEEP,
    OTHER,
    REPLY,
    RESULT,
    SYNTHETIC,
    SpanPlan,
    Stubs,
)
from chatmend.providers.anthropic.write import text_result_block
from chatmend.repair import IsReadOnly, orphan_note_text, reads_only, synthetic_text

__all__ = ["assemble", "stubs"]

_CACHED = "cache_control"


def stubs(items: list[Any]) -> Stubs | None:
    """One stub per neutral message of a Messages list of plain turns; None for any other list."""
    kinds: list[int] = []
    refs: list[Any] = []
    starts: list[int] = []
    offsets: list[int] = []
    kind_of, ref_of, start_at, offset_of = kinds.append, refs.append, starts.append, offsets.append
    for item in items:
        if type(item) is not dict or len(item) != 2:
            return None
        start_at(len(kinds))
        role, content = item.get("role"), item.get("content")
        if role == "assistant":
            kind, ids = _assistant_stub(content)
            if kind < 0:
                return None
            kind_of(kind)
            ref_of(ids)
            offset_of(0)
            continue
        if role != "user":
            return None  # a system message inside `messages`, or not a turn
        if type(content) is str:
            if not content or content.isspace():
                return None  # AN9: the writer leaves a blank turn out
            kind_of(OTHER)
            ref_of(None)
            offset_of(0)
            continue
        if type(content) is not list or not content:
            return None
        others = False  # in a run of blocks other than results (one message)
        for at, block in enumerate(content):
            if type(block) is not dict:
                return None
            block_type = block.get("type")
            if block_type == "tool_result":
                call_id = _result_id(block)
                if call_id is None:
                    return None
                kind_of(RESULT)
                ref_of(call_id)
                offset_of(at)
                others = False
                continue
            if not _plain_user_block(block_type, block):
                return None
            if not others:
                kind_of(OTHER)
                ref_of(None)
                offset_of(at)
                others = True
    start_at(len(kinds))
    return Stubs(kinds, refs, starts, offsets)


_NOT_PLAIN = (-1, None)


def _assistant_stub(content: Any) -> tuple[int, tuple[str, ...] | None]:
    """An assistant turn's kind and call ids (kind -1: not plain)."""
    if type(content) is str:
        return (REPLY, None) if content and not content.isspace() else (BLANK, None)
    if type(content) is not list:
        return _NOT_PLAIN
    ids: list[str] = []
    blank = said = False  # a blank text block, a text block that says something
    for block in content:
        if type(block) is not dict:
            return _NOT_PLAIN
        kind = block.get("type")
        size = len(block) - (_CACHED in block)
        if kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if size != 4 or type(call_id) is not str or type(name) is not str or not name or \
                    type(block.get("input")) is not dict:
                return _NOT_PLAIN
            ids.append(call_id)
        elif kind == "text":
            text = block.get("text")
            if size != 2 or type(text) is not str or ids:
                return _NOT_PLAIN  # (text after a call: the writer puts the calls last)
            if not text or text.isspace():
                blank = True
            else:
                said = True
        else:
            return _NOT_PLAIN  # thinking too: where it may stand (AT2, AT6, AT7) is the writer's to judge
    if ids:
        # AN9: the writer leaves a blank text block out of a turn that says something (calls do)
        return _NOT_PLAIN if blank else (CALLS, tuple(ids))
    if blank and said:
        return _NOT_PLAIN
    return (REPLY if said else BLANK), None


def _result_id(block: dict[str, Any]) -> str | None:
    """The call id of a tool_result with a non-blank text (or text blocks), maybe an error flag and a cache
    breakpoint; None for any other tool_result."""
    call_id, content = block.get("tool_use_id"), block.get("content")
    if type(call_id) is not str:
        return None
    if len(block) == 3 and type(content) is str and content and not content.isspace():
        return call_id  # (the common case: no flag, no breakpoint)
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
        assert stubs.starts is not None and stubs.offsets is not None
        self.items, self.plan, self.is_read_only = items, plan, is_read_only
        self.refs, self.offsets = stubs.refs, stubs.offsets
        self.starts = [*stubs.starts, stubs.starts[-1] + 1]  # (one more: `item_of` looks a turn past the end)
        self.near = 0  # the turn `item_of` gave last
        self.out: list[Any] = []
        self.rewritten: list[int] = []
        self.blocks: list[Any] = []

    def item_of(self, m: int) -> int:
        """The turn message `m` was read from (`len(items)` for the end of the list).

        A plan's steps mostly go a turn or so at a time: the turns next to the last one given are looked at before
        a bisect, which compares ints as objects (some fifteen times in a long list)."""
        starts, r = self.starts, self.near
        if m < starts[r]:
            r = r - 1 if starts[r - 1] <= m else bisect.bisect_right(starts, m, 0, r) - 1
        elif m >= starts[r + 1]:
            r = r + 1 if m < starts[r + 2] else bisect.bisect_right(starts, m, r) - 1
        self.near = r
        return r

    def block(self, m: int) -> dict[str, Any]:
        """The tool_result block of message `m` (a result)."""
        block: dict[str, Any] = self.items[self.item_of(m)]["content"][self.offsets[m]]
        return block

    def call_name(self, m: int, ci: int) -> str:
        """The tool call `ci` of assistant message `m` names (the stubs take only text before the calls: they are
        the turn's last blocks)."""
        content: list[Any] = self.items[self.item_of(m)]["content"]
        name: str = content[len(content) - len(self.refs[m]) + ci]["name"]
        return name

    def blocks_of(self, r: int, m: int, stop: int) -> list[Any]:
        """The blocks of messages `m` to `stop` (excluded) of user turn `r`."""
        content: list[Any] = self.items[r]["content"]
        return content[self.offsets[m]:self.offsets[stop] if stop < self.starts[r + 1] else len(content)]

    def run(self) -> tuple[list[Any], list[int]]:
        items = self.items
        for step, index, argument in self.plan.steps:
            if step == KEEP:
                self.keep(index, argument)
                continue
            if step == CALL:
                self.new_turn(_renamed_calls(items[self.item_of(index)], argument))
            elif step == ANSWER:
                self.blocks.append({**self.block(index), "tool_use_id": argument})
            elif step == SYNTHETIC:
                ci, final = argument
                name = self.call_name(index, ci)
                text = synthetic_text(name, read_only=reads_only(self.is_read_only, name))
                self.blocks.append(text_result_block(final, text, is_error=True))
            else:  # NOTE
                block = self.block(index)
                self.blocks.append(_note_block(block, self.name_of(block["tool_use_id"], argument)))
        self.close()
        return self.out, self.rewritten

    def keep(self, start: int, end: int) -> None:
        """Messages `start` to `end` as they were: whole turns kept, parts of a turn gathered into the new one."""
        starts = self.starts
        r = self.item_of(start)
        if start != starts[r]:  # it begins inside a user turn: that turn's blocks from there on
            stop = min(end, starts[r + 1])
            self.blocks += self.blocks_of(r, start, stop)
            if stop == end:
                return
            r += 1
        last = self.item_of(end)  # the turns before it are kept whole; from it, the blocks before `end`
        if last > r:
            self.close()
            self.out += self.items[r:last]
        if starts[last] < end:
            self.blocks += self.blocks_of(last, starts[last], end)

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

    def name_of(self, call_id: str, caller: int) -> str | None:
        """The tool the last call with this id names (in the assistant message `caller`, -1: none), as the reader
        names a result after it."""
        if caller < 0:
            return None
        names: list[str] = [b["name"] for b in self.items[self.item_of(caller)]["content"]
                            if b.get("type") == "tool_use" and b["id"] == call_id]
        return names[-1]


def _note_block(result: dict[str, Any], tool_name: str | None) -> dict[str, Any]:
    """Rule 7's note of a plain tool_result as the neutral path writes it (read, `orphan_note`, written): one text
    block, the result's text parts joined, no cache breakpoint (the note keeps only the text)."""
    content = result["content"]
    output = content if type(content) is str else "\n".join(part["text"] for part in content)
    is_error = result.get("is_error") is True
    return {"type": "text", "text": orphan_note_text(tool_name, result["tool_use_id"], is_error, output)}


def _renamed_calls(item: dict[str, Any], finals: list[str]) -> dict[str, Any]:
    """An assistant turn with its tool_use blocks under their final ids, every other block as it was."""
    final_ids = iter(finals)
    return {**item, "content": [{**b, "id": next(final_ids)} if b.get("type") == "tool_use" else b
                                for b in item["content"]]}
