"""The spec's rules, decided once: what repair makes of a history, planned on stubs of its messages.

A stub is what the rules read of a message: its kind, and the ids repair pairs by. `plan_spans` walks the stubs
once and returns a `SpanPlan`: which stretches of messages stay as they are, and what stands between them (calls
under new ids, a result under its call's final id, a synthetic result, a note), with the report. Whoever holds the
messages applies the plan: `repair_history` to neutral messages (`chatmend.repair`), `Provider.repair_body` to its
wire items, writing only the new messages with its own writer.

The rules of the spec (docs/rules.md, Part 2), and where each is decided:

1. drop first ............. BLANK stubs, in `Planner.run` and `Planner._pair_results`
2. spans .................. `Planner.run`
3. pairing ................ `Planner._span` (results already in place), `Planner._pair_results` (the rest)
4. span output ............ `Planner._span`
5. final ids .............. `Planner._span`, `Planner._final_ids`, `chatmend.ids.FinalIds` (`take`, `allocate`)

Rules 6 and 7 (the text of a synthetic result, of a note) are written by whoever applies the plan. The options
that change the plan are `leave_open_last` and `strip` (`repair_history`'s `on_missing="strip"`); `wording`,
`mark` and `is_read_only` only change how a synthetic result is written. A writer that takes every id from the
final ids plans with `rewrites_ids=False`: a span that only rule 5 changes is then kept as it is.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from chatmend.ids import FinalIds
from chatmend.results import RenamedId

__all__ = ["ANSWER", "BLANK", "BLANK_CALLS", "CALL", "CALLS", "KEEP", "NOTE", "OTHER", "REPLY", "RESULT",
           "SYNTHETIC", "PlanMark", "Planner", "SpanPlan", "Stubs", "plan_spans"]

# The kinds of stubs, one per message. Ordered: from REPLY on, a kind ends a span; from CALLS on, it starts one.
OTHER = 0
"""A user, system or developer message: never changed by repair, kept where it stands."""
RESULT = 1
"""A tool result (its ref: the call id it answers, a string)."""
BLANK = 2
"""An assistant message with no calls and nothing but whitespace: rule 1 drops it."""
REPLY = 3
"""An assistant message with no calls that is not blank: it ends a span."""
CALLS = 4
"""An assistant message with calls (its ref: the calls' ids as written, a list or a tuple)."""
BLANK_CALLS = 5
"""CALLS whose message says nothing else but whitespace: when `strip` removes all its calls, rule 1 drops it
(a CALLS stub is kept then, without calls)."""

KEPT_IN_PLACE = (OTHER, REPLY)
"""The kinds a walk goes on over: never changed, never the start of a span."""

# The steps of a plan, each `(step, index, argument)`; indices are positions of stubs (messages).
KEEP = 0
"""Messages `index` to `argument` (excluded) kept as they are, in order."""
CALL = 1
"""The assistant message at `index` under new final ids: `argument` lists every call's final id (None for a call
`strip` removed). Its kept calls' results follow it at once, each an ANSWER or a SYNTHETIC step, in call order."""
ANSWER = 2
"""The result at `index` under `argument`, the final id of the call it answers (after a CALL step: every result of
a renamed call's message is written with it, its own id changed or not)."""
SYNTHETIC = 3
"""A synthetic result for call `argument[0]` of the assistant message at `index`, under final id `argument[1]`."""
NOTE = 4
"""The result at `index` turned into a user note (rule 7); `argument`: the last assistant message before it with a
call of the id it answers (-1: none, or not asked for: `plan_spans(name_notes=)`), whose tool a reader names the
result after (Anthropic's)."""

Step = tuple[int, int, Any]


class Stubs:
    """An adapter's stubs of a conversation list, added message by message as its stubber reads the list (`add`):
    one kind and one ref per message and, for a list whose items are not one message each (`Stubs(items=True)`),
    where each item's messages begin and where each message's blocks begin in its item."""

    __slots__ = ("kinds", "offsets", "refs", "starts")

    def __init__(self, *, items: bool = False) -> None:
        self.kinds: list[int] = []
        self.refs: list[Any] = []
        """A CALLS stub's call ids (a sequence of strings), a RESULT stub's call id, None for the others (only a
        RESULT's ref is a string)."""
        self.starts: list[int] | None = [] if items else None
        """The first message of each item, and after them the number of messages (None when message i is item
        i)."""
        self.offsets: list[int] = []
        """Where each message's blocks begin in its item's content (with `starts`; a message ends where the next
        message of the same item begins, or with the content)."""

    def add(self, kind: int, ref: Any = None, at: int = 0) -> None:
        """The next message: its kind, its ref (a CALLS stub's call ids, a RESULT stub's call id) and, with
        `items`, where its blocks begin in its item (0: the message opens an item of its own)."""
        if at:
            self.offsets.append(at)
        elif self.starts is not None:
            self.starts.append(len(self.kinds))
            self.offsets.append(0)
        self.kinds.append(kind)
        self.refs.append(ref)

    def join(self, call_id: str) -> None:
        """The next item holds one more call of the CALLS message added last, whose ids are a list (a call an item:
        Responses')."""
        assert self.starts is not None
        self.starts.append(len(self.kinds) - 1)
        self.refs[-1].append(call_id)

    def end(self) -> Stubs:
        """The stubs, every item read."""
        if self.starts is not None:
            self.starts.append(len(self.kinds))
        return self


@dataclass
class SpanPlan:
    """What the spec's repair makes of a list of stubs: the steps, and the report (indices are stub positions)."""

    steps: list[Step] = field(default_factory=list)
    final_ids: list[str] = field(default_factory=list)
    """Every call's final id, in history order (none when rule 5 is left out: `Planner(assign_ids=False)`)."""
    interrupted: list[str] = field(default_factory=list)
    """The final ids of the calls answered as interrupted, in history order."""
    interrupted_at: list[tuple[int, int]] = field(default_factory=list)
    """Where each of those calls stands: (assistant message, call index)."""
    dropped: list[int] = field(default_factory=list)
    """Blank assistant messages dropped (rule 1), in order."""
    moved: list[int] = field(default_factory=list)
    """Results moved to just after their call."""
    notes: list[int] = field(default_factory=list)
    """Results that pair with no call, turned into notes."""
    renamed: list[RenamedId] = field(default_factory=list)
    """Calls whose id was empty or already used."""
    stripped_at: list[tuple[int, int]] = field(default_factory=list)
    """With `strip`: the calls removed, (assistant message, call index), in history order."""

    @property
    def unchanged(self) -> bool:
        """True when the plan keeps every message as it is, in place."""
        return len(self.steps) <= 1 and not self.dropped and all(step[0] == KEEP for step in self.steps)

    LISTS = ("steps", "interrupted", "interrupted_at", "dropped", "moved", "notes", "renamed", "stripped_at")
    """Every list the plan grows, in the order `PlanMark.lengths` holds their lengths."""

    def lists(self) -> list[list[Any]]:
        return [getattr(self, name) for name in self.LISTS]


class PlanMark(NamedTuple):
    """Where a planner stood between two runs: the message it goes on at, its plan's lists' lengths (in the order
    of `SpanPlan.LISTS`), its ids' mark."""

    at: int
    lengths: tuple[int, ...]
    ids: int


def plan_spans(kinds: list[int], refs: list[Any], *, name_notes: bool = False, leave_open_last: bool = False,
               strip: bool = False) -> SpanPlan:
    """Rules 1 to 5 on stubs: `kinds[i]` is message i's kind, `refs[i]` its ids (`Stubs`). With `name_notes`, each
    NOTE says which assistant message last called the id it answers (for a reader that names results);
    `leave_open_last` and `strip` are `repair_history`'s `leave_open_last` and `on_missing="strip"`."""
    planner = Planner(name_notes=name_notes, leave_open_last=leave_open_last, strip=strip)
    planner.run(kinds, refs)
    return planner.plan


class Planner:
    """One walk over a history's stubs, adding to `plan`. A stretch of messages kept as they are stays open
    (`kept_from` to `kept_to`, which reaches the message the walk is at) until something else must be said.

    `run` may go on in steps, each starting where a span starts (or at the end of the last step), and be rolled
    back to a `mark` taken between two runs: incremental repair reopens the last span of a growing history.
    """

    def __init__(self, *, name_notes: bool = False, leave_open_last: bool = False, strip: bool = False,
                 ids: FinalIds | None = None, assign_ids: bool = True, renames: bool = True,
                 rewrites_ids: bool = True) -> None:
        self.leave_open_last = leave_open_last
        self.strip = strip
        self.assign_ids = assign_ids
        """False: rule 5 is left out, every call keeps its id (a writer that mints ids by position)."""
        self.renames = renames
        """False: renamed calls are not listed in `plan.renamed` (a writer reads every final id anyway)."""
        self.rewrites_ids = rewrites_ids
        """False: a call under a new id leaves its message and its results as they are (a writer takes every id
        from `plan.final_ids`), so a span that only rule 5 changes is kept: CALL steps only for stripped calls."""
        self.ids_first = assign_ids and not strip
        """Rule 5 before pairing (with `strip`, which calls keep an id is known only after it)."""
        self.ids = FinalIds() if ids is None else ids
        """The final ids so far (given: those of a part of the history already repaired, which these calls join)."""
        self.plan = SpanPlan(final_ids=self.ids.in_order)
        self.caller: dict[str, int] | None = {} if name_notes else None
        """For each call id, the last assistant message so far with a call of it (`name_notes`)."""
        self.kinds: list[int] = []
        self.refs: list[Any] = []
        self.kept_from = self.kept_to = 0

    def run(self, kinds: list[int], refs: list[Any], start: int = 0, end: int | None = None) -> None:
        """Rule 2: plan messages `start` to `end` (None: to the end of the list) of the stubs `kinds` and `refs`;
        `start` is 0 or where the last run ended, `end` the list's end or where a span starts."""
        self.kinds, self.refs = kinds, refs
        plan = self.plan
        i, stop = start, len(kinds) if end is None else end
        while i < stop:
            kind = kinds[i]
            if kind in KEPT_IN_PLACE:
                i += 1  # kept where it stands: the open stretch goes on over it
                continue
            self.kept_to = i  # (the open stretch reaches this message)
            if kind >= CALLS:
                i = self._span(i)
                continue
            if kind == BLANK:
                plan.dropped.append(i)  # rule 1
            else:
                plan.notes.append(i)  # rule 7: nothing before it in its span waits for a result
                self._say(NOTE, i, self._caller_of(i))
            i += 1
            self._skip_to(i)
        self.kept_to = i
        self._flush()

    def mark(self) -> PlanMark:
        """Where the planner stands after a run, to roll back to."""
        return self.position()._replace(ids=self.ids.mark())

    def position(self) -> PlanMark:
        """Where the planner stands after a run, as `mark` says it, without readying its ids to roll back."""
        return PlanMark(self.kept_to, tuple(map(len, self.plan.lists())), len(self.ids.in_order))

    def rollback(self, mark: PlanMark) -> None:
        """Forget what the runs after `mark` planned (`caller`, for `name_notes`, is not rolled back)."""
        for items, length in zip(self.plan.lists(), mark.lengths):
            del items[length:]
        self.ids.rollback(mark.ids)
        self.kept_from = self.kept_to = mark.at

    # one span

    def _span(self, start: int) -> int:
        """Rules 3 and 4 for the span at `start` (rule 5 for its calls); returns where the walk goes on.

        The span ends at the next assistant message that is not blank, or at the end of the history. When every
        call is answered right after it, the walk goes on just after the results: what else the span holds pairs
        with nothing, and `run` treats it as it treats any message outside a span.
        """
        kinds, refs, n = self.kinds, self.refs, len(self.kinds)
        calls: Sequence[str] = refs[start]
        if self.caller is not None:
            for call_id in calls:
                self.caller[call_id] = start
        finals: list[str | None] | None = None
        if self.ids_first and (taken := self.ids.take(calls)) < len(calls):
            finals = self._final_ids(start, calls, taken)  # rule 5 for a call whose id is empty or used
        index = first = start + 1
        for call_id in calls:  # rule 3's common case: the results right after the calls, in call order
            if index == n or refs[index] != call_id:  # (only a RESULT's ref is a string)
                break
            index += 1
        in_place, n_calls = index - first, len(calls)
        rewritten = finals is not None and self.rewrites_ids  # (else only the final ids say the new ids)
        if in_place == n_calls and not rewritten and not self.strip:
            self.kept_to = index  # the open stretch (it reaches `start`) goes on over the span
            return index
        results = [*range(first, index), *[-1] * (n_calls - in_place)]
        rest: list[int] = []
        if in_place < n_calls and index < n and kinds[index] < REPLY:
            index, rest = self._pair_results(calls, index, results, in_place)
        # (else the span ends right after the calls answered in place, as when a session was cut off while the
        # other calls ran: those never got a result)
        leave_open = self.leave_open_last and index == n  # the history ends in this span
        if self.strip:
            finals = self._strip_unanswered(start, calls, results, leave_open)
            rewritten = finals is not None
        if finals is not None and rewritten:
            self._renamed_span(start, finals, results, leave_open)
        else:
            # the calls' final ids: their own, or the last ones allocated (rule 5 renamed some, not rewritten)
            named: Sequence[str] = calls if finals is None else self.plan.final_ids[-n_calls:]
            self.kept_to = first + in_place  # the open stretch goes on over the results in place
            for ci in range(in_place, n_calls):
                at = results[ci]
                if at >= 0:
                    self._keep(at)
                elif not leave_open:
                    self._synthetic(start, ci, named[ci])
        for at in rest:
            if at < 0:
                self._say(NOTE, -1 - at, self._caller_of(-1 - at))
            else:
                self._keep(at)
        self._skip_to(index)
        return index

    def _renamed_span(self, start: int, finals: list[str | None], results: list[int], leave_open: bool) -> None:
        """Rule 4 for a span whose calls changed (an id, or a call stripped): the calls, then each kept call's
        result written with them."""
        self._flush()  # every step here is a new message
        steps = self.plan.steps
        if self.kinds[start] == BLANK_CALLS and finals.count(None) == len(finals):
            bisect.insort(self.plan.dropped, start)  # every call stripped, nothing else said: as rule 1 drops it
        else:
            steps.append((CALL, start, finals))
        for ci, at in enumerate(results):
            final = finals[ci]
            if final is None:
                continue
            if at >= 0:
                steps.append((ANSWER, at, final))
            elif not leave_open:
                self._synthetic(start, ci, final)

    def _synthetic(self, start: int, ci: int, final: str) -> None:
        """Call `ci` of the assistant message at `start` answered as interrupted (rule 6)."""
        self.plan.interrupted.append(final)
        self.plan.interrupted_at.append((start, ci))
        self._say(SYNTHETIC, start, (ci, final))

    def _final_ids(self, start: int, calls: Sequence[str], ci: int) -> list[str | None]:
        """Rule 5 for the calls of the assistant message at `start`, from call `ci` on, the first that cannot keep
        its id (empty, or used before): every call's final id."""
        allocate = self._allocate
        finals: list[str | None] = list(calls[:ci])
        for cj in range(ci, len(calls)):
            finals.append(allocate(start, cj, calls[cj]))
        return finals

    def _allocate(self, start: int, ci: int, call_id: str) -> str:
        """Rule 5 for call `ci` of the assistant message at `start`: its final id (listed in `renamed` if new)."""
        final = self.ids.allocate(call_id, start, ci)
        if self.renames and final != call_id:
            self.plan.renamed.append(RenamedId(start, ci, call_id, final))
        return final

    def _strip_unanswered(self, start: int, calls: Sequence[str], results: list[int],
                          leave_open: bool) -> list[str | None] | None:
        """`strip`: the span's calls with no result go (listed in `stripped_at`; with `leave_open` none does, the
        last reply's calls stay open); rule 5 for the others alone, so that a stripped call takes no id. None
        when every call stays, under its own id (or under any id, when the messages keep theirs: `rewrites_ids`)."""
        finals: list[str | None] = []
        for ci, (call_id, at) in enumerate(zip(calls, results)):
            if at < 0 and not leave_open:
                self.plan.stripped_at.append((start, ci))
                finals.append(None)
            else:
                finals.append(self._allocate(start, ci, call_id) if self.assign_ids else call_id)
        if None in finals or (self.rewrites_ids and finals != list(calls)):
            return finals
        return None

    def _pair_results(self, calls: Sequence[str], index: int, results: list[int],
                      first_open: int) -> tuple[int, list[int]]:
        """Rule 3: each result takes the first unanswered call with its original id; others become notes.

        `results` holds the index of each call's result, those answered in place so far (calls `first_open` on
        wait: -1); walks the span on from `index` and returns where it ends, and the span's other messages in
        their order: the index of each steer, `-1 - index` of each result that becomes a note.
        """
        kinds, refs, n, plan = self.kinds, self.refs, len(self.kinds), self.plan
        n_calls = len(calls)
        # The first unanswered call of each original id (filled backwards, so the first index wins), and when
        # a reply repeats an id (Gemini's call_0 twice), after each call the next one with its id.
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
                        plan.moved.append(index)
                else:
                    plan.notes.append(index)
                    rest.append(-1 - index)
                    in_place = False
            elif kind >= REPLY:
                break  # the next span, or a reply: this span ends here
            elif kind == BLANK:
                plan.dropped.append(index)  # a placeholder (rule 1)
            else:
                in_place = False
                rest.append(index)
            index += 1
        return index, rest

    def _caller_of(self, result: int) -> int:
        """The last assistant message before `result` with a call of the id it answers (-1: none, or not asked)."""
        return -1 if self.caller is None else self.caller.get(self.refs[result], -1)

    # the open stretch of kept messages

    def _keep(self, index: int) -> None:
        """Message `index` comes next, as it is."""
        if index != self.kept_to:
            self._flush()
            self.kept_from = index
        self.kept_to = index + 1

    def _say(self, step: int, index: int, argument: Any) -> None:
        """A step other than keeping comes next."""
        self._flush()
        self.plan.steps.append((step, index, argument))

    def _skip_to(self, index: int) -> None:
        """Go on at message `index`, the stretch so far closed unless it ends just there."""
        if self.kept_to != index:
            self._flush()
            self.kept_from = self.kept_to = index

    def _flush(self) -> None:
        if self.kept_to > self.kept_from:
            self.plan.steps.append((KEEP, self.kept_from, self.kept_to))
        self.kept_from = self.kept_to


def next_with_same_id(ids: Sequence[str]) -> list[int]:
    """For each call of one reply (by id), the index of the next call with the same id (-1: none)."""
    later = [-1] * len(ids)
    seen: dict[str, int] = {}
    for ci in range(len(ids) - 1, -1, -1):
        later[ci] = seen.get(ids[ci], -1)
        seen[ids[ci]] = ci
    return later


def last_open_span(kinds: Sequence[int], start: int = 0) -> int | None:
    """Where the last span of `kinds[start:]` starts when the history ends inside it (None: it does not)."""
    for i in range(len(kinds) - 1, start - 1, -1):
        if kinds[i] >= REPLY:
            return i if kinds[i] >= CALLS else None
    return None
