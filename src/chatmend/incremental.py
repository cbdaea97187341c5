"""Incremental repair: a growing session pays at each send only for what is new since the last one.

The spec's prefix stability ("a span's output and every id depend only on what came before") means that
everything before the last span of a history is final: appending messages can only change the last span
(its results may still arrive). A `Repairer` keeps the repair it ran last (`chatmend.repair.HistoryRepair`: the
stubs, the plan and its output), rolls back just that span, and goes on from there, with the same rules (the one
planner, `chatmend.planner`, not a second implementation).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from typing import cast

from chatmend.messages import ChatMessage, coerce_history
from chatmend.repair import (
    Checkpoint,
    HistoryRepair,
    IsReadOnly,
    Mark,
    OnMissing,
    RepairOptions,
    RepairResult,
    Wording,
    repair_options,
)
from chatmend.sdk_reader import read_sdk_objects

__all__ = ["Repairer"]


class Repairer:
    """Repairs successive versions of one growing history, each exactly as `repair_history` would.

    `repair(history)` on a history that extends the one seen last (the same messages, or equal ones, then
    more) reopens only the last span of the previous history; any other history starts over. A call then
    costs O(new messages), plus one list comparison of the old prefix (identity first). Its result shares the
    Repairer's lists up to that last span, which no later call changes, and makes each field's own list when
    it is first read (`RepairResult._sharing`): the caller may keep or change what it gets, and pays for copying
    only the fields it reads. A result never changes when later calls run. The same history
    again (nothing appended) runs no pass at all: `repairer.repair(history)` then `to_request(history,
    repairer=repairer)` repairs once. Equal but not identical earlier messages count as the same: the output
    keeps the objects seen first. `is_read_only` is asked once per interrupted call, so it should depend on
    the tool's name only. Thread-safe: calls from several threads take turns (a lock), each getting its own
    history's repair; threads that share one Repairer with different histories start over at each call, so give
    each session its own for the speed.

    `wording`, `leave_open_last`, `on_missing` and `mark` are `repair_history`'s options, fixed for the
    Repairer's life (`options`): every result it gives is made under them, and `to_request` refuses other ones
    with it. `leave_open_last` costs nothing here: the last span is the one a Repairer reopens anyway.
    """

    __slots__ = ("_busy", "_is_read_only", "_lock", "_mark", "_pass", "_resume", "_seen", "options")

    def __init__(
        self,
        *,
        is_read_only: IsReadOnly | None = None,
        wording: Wording | None = None,
        leave_open_last: bool = False,
        on_missing: OnMissing = "answer",
        mark: Mark = "error",
    ) -> None:
        self._is_read_only = is_read_only
        self.options: RepairOptions = repair_options(wording, leave_open_last, on_missing, mark)
        """The repair options every result of this Repairer is made under."""
        self._lock = threading.RLock()
        """Held for a whole call: the pass and the history seen are one state (uncontended, it costs little)."""
        self._busy = False
        """True during a call: a call from inside it (`is_read_only` repairing again) is an error, not a deadlock."""
        self._seen: list[ChatMessage] = []
        """The history of the last call, as its own list (the caller's list may grow in place)."""
        self._pass: HistoryRepair | None = None
        self._resume = 0
        """Where the next pass resumes: the start of the last span (reopened), or the end."""
        self._mark: Checkpoint | None = None
        """The pass just before it walked the last span (still open at the end), to roll back to."""

    def repair(self, messages: Sequence[ChatMessage | dict[str, object]] | Sequence[object]) -> RepairResult:
        """The result of `repair_history(messages, is_read_only=..., **options)`, reusing the previous call's work.

        SDK message objects are read as `repair_history` reads them, on every call (the repair is still
        incremental; the reading is not)."""
        with self._lock:
            if self._busy:
                raise RuntimeError("Repairer.repair called again from inside its own call (from is_read_only?): "
                                   "use another Repairer there")
            self._busy = True
            try:
                return self._repair(messages)
            finally:
                self._busy = False

    def _repair(self, messages: Sequence[ChatMessage | dict[str, object]] | Sequence[object]) -> RepairResult:
        """`repair`, the lock held."""
        repair = self._pass
        seen = self._seen
        extends = repair is not None and self._extends(messages)
        if not extends:
            read = read_sdk_objects(messages)  # SDK objects are read in full: the repair stays incremental
            if read is not messages:
                messages = cast("list[ChatMessage]", read)
                extends = repair is not None and self._extends(messages)
        if repair is not None and extends:
            if len(messages) == len(seen):
                return repair.shared_result(self._mark)  # nothing new: the pass holds this history's repair
            tail = messages[len(seen):]
            read_tail = read_sdk_objects(tail)
            # bad input raises before anything changes
            new = coerce_history(messages, start=len(seen)) if read_tail is tail else coerce_history(read_tail)
            if self._mark is not None:
                repair.rollback(self._mark)
            seen.extend(new)
        else:
            seen = self._seen = coerce_history(messages)
            repair = self._pass = HistoryRepair(self._is_read_only, self.options)
            self._resume = 0
        self._mark = None
        try:
            self._mark = repair.run(seen, self._resume, mark_last=True)
            self._resume = len(seen) if self._mark is None else self._mark.plan.at
        except BaseException:  # e.g. from is_read_only: the pass is half done, so forget it
            self._forget()
            raise
        return repair.shared_result(self._mark)

    def reset(self) -> None:
        """Forget the last history: the next call starts over."""
        with self._lock:
            if self._busy:
                raise RuntimeError("Repairer.reset called from inside its own repair (from is_read_only?)")
            self._forget()

    def __getstate__(self) -> dict[str, object]:
        """What pickle and copy take: every field but the lock (each copy gets its own)."""
        with self._lock:
            return {name: getattr(self, name) for name in self.__slots__ if name not in ("_lock", "_busy")}

    def __copy__(self) -> Repairer:
        """A Repairer that goes on by itself: a deep copy. A shallow one would share the pass and the history seen,
        and a step of either would roll the pass back to a mark the other had moved past (a wrong repair, and the
        lists of results already handed out changed)."""
        return copy.deepcopy(self)

    def __setstate__(self, state: dict[str, object]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        self._lock = threading.RLock()
        self._busy = False

    def _forget(self) -> None:
        """`reset`, the lock held."""
        self._seen, self._pass, self._resume, self._mark = [], None, 0, None

    def _extends(self, messages: object) -> bool:
        """True when `messages` starts with the history seen last (the same or equal messages)."""
        seen = self._seen
        k = len(seen)
        if not isinstance(messages, (list, tuple)) or len(messages) < k:
            return False
        if type(messages) is not list:
            return list(messages[:k]) == seen
        # Compare whole lists, `seen` lent the new items for a moment: list equality checks identity first
        # without touching the messages, where slicing the prefix would update every reference count.
        seen.extend(messages[k:])
        try:
            return seen == messages
        finally:
            del seen[k:]
