"""`repair_body`'s stub route: the list a plan makes, assembled from the input's items and the adapter's writer.

An adapter stubs its wire items (`Provider._stubs`: each neutral message's kind and the ids repair pairs by), the
planner decides what repair does on the stubs alone, and `assemble` carries the plan out: every message the plan
keeps stays as the input's own item (or, in a turn of several messages, as the input's own blocks), and each new
message is written by one of the adapter's hooks (`Provider._renamed_calls`, `_renamed_result`,
`_synthetic_result`, `_note`). Where an item holds several messages (`Provider.blocks_key`: a user turn of tool
results and words), the new and kept blocks of a changed turn are gathered into one new user turn; with
`Provider.joins_turns`, new blocks that stand alone join the user turn just before them, or else the one just
after them (the turn after the calls they answer).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

from chatmend.planner import ANSWER, CALL, KEEP, SYNTHETIC, SpanPlan, Stubs
from chatmend.repair import IsReadOnly

if TYPE_CHECKING:
    from chatmend.providers.base import Provider

__all__ = ["assemble"]


def assemble(adapter: Provider, items: list[Any], stubs: Stubs, plan: SpanPlan,
             is_read_only: IsReadOnly | None) -> tuple[list[Any], list[int]] | None:
    """The list `plan` makes of `items`, and the positions of the items written anew; None when a step is one the
    adapter does not write (a hook said None): the neutral route then repairs the body."""
    return _Assembly(adapter, items, stubs, is_read_only).run(plan)


class _Assembly:
    """The output list being made, and the blocks of the new user turn being gathered."""

    def __init__(self, adapter: Provider, items: list[Any], stubs: Stubs, is_read_only: IsReadOnly | None) -> None:
        self.adapter, self.items, self.is_read_only = adapter, items, is_read_only
        self.key = adapter.blocks_key
        self.joins = adapter.joins_turns
        self.offsets = stubs.offsets
        # (one more start: a lookup past the last item finds the end of the list)
        self.starts = None if stubs.starts is None else [*stubs.starts, stubs.starts[-1] + 1]
        assert self.key is None or self.starts is not None
        self.near = 0  # the item `item_of` gave last
        self.out: list[Any] = []
        self.rewritten: list[int] = []
        self.blocks: list[Any] = []
        self.in_turn = False  # the blocks gathered hold some of an input turn's: they are that turn, rebuilt

    # ------------------------------------------------------------------------------- where messages stand

    def item_of(self, m: int) -> int:
        """The item holding message `m` (with `blocks_key`: an item holds one message or more; `len(items)` for the
        end of the list). A plan's steps mostly go an item or so at a time: the items next to the last one given
        are looked at before a bisect."""
        starts, r = self.starts, self.near
        assert starts is not None
        if m < starts[r]:
            r = r - 1 if starts[r - 1] <= m else bisect_right(starts, m, 0, r) - 1
        elif m >= starts[r + 1]:
            r = r + 1 if m < starts[r + 2] else bisect_right(starts, m, r) - 1
        self.near = r
        return r

    def first_item(self, m: int) -> int:
        """The first item of message `m`, without `blocks_key` (a message may span items: Responses' calls)."""
        return m if self.starts is None else bisect_left(self.starts, m)

    def items_of(self, m: int) -> list[Any]:
        """The items holding message `m`."""
        if self.key is not None:
            return [self.items[self.item_of(m)]]
        if self.starts is None:
            return [self.items[m]]
        return self.items[self.first_item(m):self.first_item(m + 1)]

    def piece_of(self, m: int) -> Any:
        """The wire piece of a result: its block in its turn (with `blocks_key`), else its item."""
        if self.key is None:
            return self.items[self.first_item(m)]
        return self.items[self.item_of(m)][self.key][self.offsets[m]]

    def blocks_of(self, r: int, m: int, stop: int) -> list[Any]:
        """The blocks of messages `m` to `stop` (excluded) of item `r`."""
        assert self.starts is not None and self.key is not None
        content: list[Any] = self.items[r][self.key]
        return content[self.offsets[m]:self.offsets[stop] if stop < self.starts[r + 1] else len(content)]

    # ---------------------------------------------------------------------------------------- the steps

    def run(self, plan: SpanPlan) -> tuple[list[Any], list[int]] | None:
        adapter, items, out, rewritten = self.adapter, self.items, self.out, self.rewritten
        blocks = self.key is not None  # new pieces are blocks of a user turn
        by_index = self.starts is None  # message i is item i: a stretch of messages is a slice of items
        synthetic, is_read_only = adapter._synthetic_result, self.is_read_only
        for step, index, argument in plan.steps:
            if step == KEEP:
                if by_index:
                    out += items[index:argument]
                else:
                    self.keep(index, argument)
                continue
            if step == SYNTHETIC:
                calls = items[index:index + 1] if by_index else self.items_of(index)
                written = synthetic(calls, argument[0], argument[1], is_read_only)
            elif step == CALL:
                written = adapter._renamed_calls(self.items_of(index), argument)
                if written is None:
                    return None
                self.close()
                rewritten += range(len(out), len(out) + len(written))
                out += written
                continue
            elif step == ANSWER:
                written = adapter._renamed_result(self.piece_of(index), argument)
            else:  # NOTE
                written = adapter._note(self.piece_of(index), self.items_of(argument) if argument >= 0 else None)
            if written is None:
                return None
            if blocks:
                self.blocks += written
            else:
                rewritten += range(len(out), len(out) + len(written))
                out += written
        self.close()
        return out, rewritten

    def keep(self, start: int, end: int) -> None:
        """Messages `start` to `end` (excluded) as they were: whole items kept, the blocks of a turn kept in part
        gathered into the new turn."""
        if self.key is None:
            first, last = (start, end) if self.starts is None else (self.first_item(start), self.first_item(end))
            self.out += self.items[first:last]
            return
        starts = self.starts
        assert starts is not None
        r = self.item_of(start)
        if start != starts[r]:  # it begins inside a turn: that turn's blocks from there on
            stop = min(end, starts[r + 1])
            self.blocks += self.blocks_of(r, start, stop)
            self.in_turn = True
            if stop == end:
                return
            r += 1
        last = self.item_of(end)  # the items before it are kept whole; from it, the blocks before `end`
        if last > r and self.blocks and self.joins and not self.in_turn and not self.after_user() \
                and self.items[r].get("role") == "user":
            self.blocks += self.items[r][self.key]  # new blocks after the calls' turn open the user turn after it
            self.in_turn = True
            r += 1
        if last > r:
            self.close()
            self.out += self.items[r:last]
        if starts[last] < end:
            self.blocks += self.blocks_of(last, starts[last], end)
            self.in_turn = True

    def close(self) -> None:
        """The gathered blocks as one new user turn (with `joins_turns`, one with a user turn kept just before)."""
        if not self.blocks:
            return
        key = self.key
        assert key is not None
        out = self.out
        if self.joins and not self.in_turn and self.after_user():
            out[-1] = {**out[-1], key: [*out[-1][key], *self.blocks]}  # new blocks join the user turn before them
            if not self.rewritten or self.rewritten[-1] != len(out) - 1:
                self.rewritten.append(len(out) - 1)
        else:
            self.rewritten.append(len(out))
            out.append({"role": "user", key: self.blocks})
        self.blocks = []
        self.in_turn = False

    def after_user(self) -> bool:
        """True when the last item out is a user turn."""
        return bool(self.out) and self.out[-1].get("role") == "user"
