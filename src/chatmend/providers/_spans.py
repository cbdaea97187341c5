"""The fast path of `repair_body`: the spec's rules decided on stubs of the wire items, building no model.

A body an agent sends is mostly plain messages whose spans are already valid; the neutral repair would read every
one of them into the model only to give each back unchanged. Here an adapter reduces each neutral message its list
holds to a stub (what kind of message it is, and the ids repair pairs by), and `plan_spans` runs rules 1 to 7 on
the stubs alone: it says which stretches of messages are kept as they are, and what stands between them (a call
under new ids, a result moved or renamed, a synthetic result, a note). The adapter then assembles its list from
that plan, writing only the new messages with its own writer (`Provider._fast_repair`).

`plan_spans` mirrors `repair._Pass` step for step (with its default options), so that the body assembled from a
plan is the body the neutral path writes: tests/providers/test_repair_body_spans.py compares both on generated
bodies of every shape the stubs accept. An adapter gives no stubs (None) for a list holding anything else, and the
neutral path decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from chatmend.ids import FinalIds
from chatmend.repair import next_with_same_id

__all__ = ["ANSWER", "BLANK", "CALL", "CALLS", "KEEP", "NOTE", "OTHER", "REPLY", "RESULT", "SYNTHETIC", "SpanPlan",
           "Stubs", "plan_spans"]

# The kinds of stubs: one per neutral message of the list.
OTHER = 0
"""A user, system or developer message: never changed by repair, kept where it stands."""
REPLY = 1
"""An assistant message with no calls that is not blank: it ends a span."""
CALLS = 2
"""An assistant message with calls (its stub's ids: the calls' ids as written)."""
RESULT = 3
"""A tool result (its stub's id: the call id it answers)."""
BLANK = 4
"""An assistant message with no calls and only whitespace: rule 1 drops it."""

# The steps of a plan, each `(step, index, argument)`; indices are positions of stubs (neutral messages).
KEEP = 0
"""Messages `index` to `argument` (excluded) kept as they are, in order."""
CALL = 1
"""The assistant message at `index` under new final ids (`argument`: every call's final id)."""
ANSWER = 2
"""The result at `index`, written anew under `argument`, the final id of the call it answers (a renamed call's
results are written with it, as the neutral path's writer writes them: in one turn with the call's other
results)."""
SYNTHETIC = 3
"""A synthetic result for call `argument[0]` of the assistant message at `index`, under final id `argument[1]`."""
NOTE = 4
"""The result at `index` turned into a user note (rule 7); `argument`: the last assistant message before it with a
call of the id it answers (-1: none, or not asked for: `plan_spans(name_notes=)`), whose tool a reader names the
result after (Anthropic's)."""

Step = tuple[int, int, Any]


class Stubs(NamedTuple):
    """An adapter's stubs of a conversation list: one kind and one ref per neutral message, and where each message
    stands in the list (None when message i is item i)."""

    kinds: list[int]
    refs: list[Any]
    """A CALLS stub's call ids (a tuple of strings: the collector soon stops following it, and a body has many), a
    RESULT stub's call id, None for the others (only a RESULT's ref is a string)."""
    starts: list[int] | None = None
    """The first message of each item, and after them the number of messages (None when message i is item i: an
    Anthropic user turn holds several messages)."""
    offsets: list[int] | None = None
    """Where each message's parts begin in its item's content (with `starts`; a message ends where the next
    message of the same item begins, or with the content)."""


@dataclass
class SpanPlan:
    """What the spec's repair makes of a list of stubs: the steps, the final ids and the report's counts."""

    steps: list[Step] = field(default_factory=list)
    final_ids: list[str] = field(default_factory=list)
    """Every call's final id, in history order."""
    interrupted: list[str] = field(default_factory=list)
    """The final ids of the calls answered as interrupted, in history order."""
    moved: int = 0
    notes: int = 0
    renamed: int = 0
    dropped: int = 0

    @property
    def unchanged(self) -> bool:
        """True when the plan keeps every message as it is, in place."""
        return len(self.steps) <= 1 and not self.dropped and all(step[0] == KEEP for step in self.steps)


def plan_spans(kinds: list[int], refs: list[Any], *, name_notes: bool = False) -> SpanPlan:
    """Rules 1 to 7 on stubs: `kinds[i]` is message i's kind, `refs[i]` its ids (`Stubs`); with `name_notes`,
    each NOTE says which assistant message last called the id it answers (for a reader that names results)."""
    return _Planner(kinds, refs, name_notes).run()


class _Planner:
    """One pass over the stubs, as `repair._Pass.run` walks a history: a stretch of messages kept as they are
    stays open (`self.kept_from` to the current message) until something else must be said."""

    def __init__(self, kinds: list[int], refs: list[Any], name_notes: bool) -> None:
        self.kinds, self.refs = kinds, refs
        self.plan = SpanPlan()
        self.ids = FinalIds()
        self.plan.final_ids = self.ids.in_order
        self.caller: dict[str, int] | None = {} if name_notes else None
        """For each call id, the last assistant message so far with a call of it (`name_notes`)."""
        self.kept_from = 0
        self.kept_to = 0  # the open stretch is kinds[kept_from:kept_to]; it reaches the message `run` is at

    def run(self) -> SpanPlan:
        kinds, n = self.kinds, len(self.kinds)
        i = 0
        while i < n:
            kind = kinds[i]
            if kind == CALLS:
                i = self.span(i)
                continue
            if kind == BLANK:
                self.plan.dropped += 1  # rule 1
                self.skip_to(i + 1)
            elif kind == RESULT:
                self.plan.notes += 1  # rule 7: nothing before it in its span waits for a result
                self.say(NOTE, i, self.caller_of(i))
                self.skip_to(i + 1)
            else:
                self.kept_to = i + 1
            i += 1
        self.flush()
        return self.plan

    def caller_of(self, result: int) -> int:
        """The last assistant message before `result` with a call of the id it answers (-1: none, or not asked)."""
        return -1 if self.caller is None else self.caller.get(self.refs[result], -1)

    # the open stretch of kept messages

    def keep(self, index: int) -> None:
        """Message `index` comes next, as it is."""
        if index != self.kept_to:
            self.flush()
            self.kept_from = index
        self.kept_to = index + 1

    def say(self, step: int, index: int, argument: Any) -> None:
        """A step other than keeping comes next."""
        self.flush()
        self.plan.steps.append((step, index, argument))

    def skip_to(self, index: int) -> None:
        """Go on at message `index`, the stretch so far closed unless it ends just there."""
        if self.kept_to != index:
            self.flush()
            self.kept_from = self.kept_to = index

    def flush(self) -> None:
        if self.kept_to > self.kept_from:
            self.plan.steps.append((KEEP, self.kept_from, self.kept_to))
        self.kept_from = self.kept_to

    # one span (`_Pass.span`)

    def span(self, start: int) -> int:
        """Rules 3 and 4 for the span at `start` (rule 5 for its calls); returns where the pass goes on."""
        kinds, refs, n = self.kinds, self.refs, len(self.kinds)
        calls: tuple[str, ...] = refs[start]
        caller = self.caller
        if caller is not None:
            for call_id in calls:
                caller[call_id] = start
        finals = None
        used, in_order = self.ids.used, self.ids.in_order
        for ci, call_id in enumerate(calls):  # rule 5, FinalIds.allocate's common case inlined (as `_Pass.span`)
            if not call_id or call_id in used:
                finals = self.final_ids(start, calls, ci)
                break
            used.add(call_id)
            in_order.append(call_id)
        index = first = start + 1
        for call_id in calls:  # rule 3's common case: the results right after the calls, in call order
            if index == n or refs[index] != call_id:  # (only a result's ref is a string)
                break
            index += 1
        in_place, n_calls = index - first, len(calls)
        if in_place == n_calls and finals is None:
            self.kept_to = index  # the common case: the open stretch (it reaches `start`) goes on over the span
            return index
        results = [*range(first, index), *[-1] * (n_calls - in_place)]
        rest: list[int] = []
        if in_place < n_calls and index < n and kinds[index] not in (CALLS, REPLY):
            index, rest = self.pair_results(calls, index, results, in_place)
        if finals is None:
            self.kept_to = first + in_place  # the open stretch (it reaches `start`) goes on over the results in place
            for ci in range(in_place, n_calls):
                at = results[ci]
                if at < 0:
                    self.synthetic(start, ci, calls[ci])
                else:
                    self.keep(at)
        else:
            self.say(CALL, start, finals)
            for ci, at in enumerate(results):
                if at < 0:
                    self.synthetic(start, ci, finals[ci])
                else:
                    self.say(ANSWER, at, finals[ci])  # a renamed call's results are written with it, renamed or not
        for at in rest:
            if at < 0:
                self.say(NOTE, -1 - at, self.caller_of(-1 - at))
            else:
                self.keep(at)
        self.skip_to(index)
        return index

    def synthetic(self, start: int, ci: int, final: str) -> None:
        """Rule 4: call `ci` of the assistant message at `start` answered as interrupted."""
        self.plan.interrupted.append(final)
        self.say(SYNTHETIC, start, (ci, final))

    def final_ids(self, start: int, calls: tuple[str, ...], ci: int) -> list[str]:
        """Rule 5 for the calls of the assistant message at `start` from call `ci` on, the first that cannot keep
        its id (empty or used: it takes another), the calls before it kept theirs."""
        finals = list(calls[:ci])
        for cj in range(ci, len(calls)):
            final = self.ids.allocate(calls[cj], start, cj)
            if final != calls[cj]:
                self.plan.renamed += 1
            finals.append(final)
        return finals

    def pair_results(self, calls: tuple[str, ...], index: int, results: list[int],
                     first_open: int) -> tuple[int, list[int]]:
        """Rule 3 (`_Pass._pair_results`): each result takes the first unanswered call with its original id (calls
        `first_open` on wait); returns where the span ends and its other messages (`-1 - index` for a result that
        becomes a note)."""
        kinds, refs, n = self.kinds, self.refs, len(self.kinds)
        n_calls = len(calls)
        waiting: dict[str, int] = {}
        for ci in range(n_calls - 1, first_open - 1, -1):
            waiting[calls[ci]] = ci
        later = next_with_same_id(calls) if len(waiting) < n_calls - first_open else None
        rest: list[int] = []
        in_place, last = True, first_open - 1
        while index < n:
            kind = kinds[index]
            if kind == RESULT:
                call_id = refs[index]
                ci = waiting.pop(call_id, -1)
                if ci >= 0:
                    results[ci] = index
                    if later is not None and later[ci] >= 0:
                        waiting[call_id] = later[ci]
                    if in_place and ci > last:
                        last = ci
                    else:
                        self.plan.moved += 1
                else:
                    self.plan.notes += 1
                    rest.append(-1 - index)
                    in_place = False
            elif kind in (CALLS, REPLY):
                break  # the next span, or a reply: this span ends here
            elif kind == BLANK:
                self.plan.dropped += 1  # a placeholder (rule 1)
            else:
                in_place = False
                rest.append(index)
            index += 1
        return index, rest
