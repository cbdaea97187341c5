"""Results written in the order their tools finished, where a history lives (a store, a body).

`repair_history` puts every call's result right after it in call order: the neutral model's rule. No provider
asks for that order among the results that answer one turn (each pairs them by id: Anthropic in the one user
turn after the calls, OpenAI Chat in the run of tool messages after them), and agents write parallel results in
the order their tools finished. Where a history lives, such a move is not needed to send it validly, so it is
neither a problem nor a change (the spec's decision on checking and repairing where a history lives):
`keep_answer_order` takes it back out of a repair.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from chatmend.messages import ChatMessage
from chatmend.results import NOTE_SOURCE, SYNTHETIC_SOURCE, Origin, RepairResult

__all__ = ["keep_answer_order", "reordered_only"]


def keep_answer_order(messages: Sequence[ChatMessage], result: RepairResult) -> RepairResult:
    """`result` (the repair of `messages`) with the results it moved only into call order, among the results
    right after their calls, back in the order they were read and no longer counted as moved.

    In each run of results after a reply where repair moved one that stood in the run of tool messages right
    after that reply in the input, those come first, in input order, and what repair brought in (a synthetic
    result, a result moved from further away) follows them, in repair's order. Everything else is as repair left
    it: each turn is decided on its own, so a history repaired part by part gives the same.
    """
    if not result.moved:
        return result
    origins = result.origins()
    order, settled = _answer_order(messages, result, origins)
    moved = [i for i in result.moved if i not in settled]
    if len(moved) == len(result.moved):
        return result
    return dataclasses.replace(
        result, messages=[result.messages[p] for p in order], moved=moved,
        origin_runs=_runs([origins[p] for p in order]))


def reordered_only(messages: Sequence[ChatMessage], result: RepairResult) -> set[int]:
    """The input indices of the results `result` moved only into call order among the results right after
    their calls (what `keep_answer_order` takes back)."""
    if not result.moved:
        return set()
    return _answer_order(messages, result, result.origins())[1] & set(result.moved)


def _answer_order(messages: Sequence[ChatMessage], result: RepairResult, origins: Sequence[Origin],
                  ) -> tuple[list[int], set[int]]:
    """The output positions in the order `keep_answer_order` puts them, and the input indices of the results
    that stood right after their reply in the input too (`origins`: the result's)."""
    out = result.messages
    moved = set(result.moved)
    order = list(range(len(out)))
    settled: set[int] = set()
    p = 0
    while p < len(out):
        q = p + 1
        while q < len(out) and out[q].role == "tool":
            q += 1
        origin = origins[p]
        if q > p + 1 and out[p].role == "assistant" and origin.kind == "input":
            reply = origin.message_index
            end = reply + 1
            while end < len(messages) and messages[end].role == "tool":
                end += 1  # the run of tool messages right after the reply, as read
            kept = sorted((r for r in range(p + 1, q)
                           if origins[r].kind == "input" and reply < origins[r].message_index < end),
                          key=lambda r: origins[r].message_index)
            if any(origins[r].message_index in moved for r in kept):  # else this turn is as repair wrote it
                brought = [r for r in range(p + 1, q) if r not in kept]
                order[p + 1:q] = kept + brought
                settled.update(origins[r].message_index for r in kept)
        p = q
    return order, settled


def _runs(origins: Sequence[Origin]) -> list[int]:
    """`RepairResult.origin_runs` of these origins, in this order."""
    runs: list[int] = []
    previous: int | None = None
    for position, origin in enumerate(origins):
        if origin.kind == "input":
            if previous is None or origin.message_index != previous + 1:
                runs += [position, origin.message_index]
            previous = origin.message_index
        else:
            runs += [position, NOTE_SOURCE if origin.kind == "note" else SYNTHETIC_SOURCE]
            previous = None
    return runs or [0, 0]
