"""What `repair_body` returns, and how its neutral route keeps the items repair leaves alone.

An adapter reads its conversation list as groups: the neutral messages each wire item holds (an Anthropic user
turn with three `tool_result` blocks and a text block is four messages; a Chat message is one). After the neutral
repair, a wire item whose messages all come out as they went in, in place, under the ids they had, is kept as the
very same JSON object (byte for byte when written back). Only the rest is written anew, by the adapter's writer,
in runs; a run that answers a call kept in place (a synthetic or moved result) has the item of that call as its
lead, which the writer writes first for context and leaves out: a writer always sees a call before its results.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from typing_extensions import Self

from chatmend.messages import ChatMessage, NativePart
from chatmend.results import RepairResult

__all__ = ["BodyRepair", "BodyReport", "Dropped", "Run", "kept_items", "plan_rewrite", "unwritable_parts"]


@dataclass(frozen=True)
class Dropped:
    """A provider-native part left out of a body written for another provider (`on_unsupported=`)."""

    provider: str
    """The provider the part belongs to."""
    type: str
    """Its type in that provider's wire format (`server_tool_use`, `executableCode`, ...)."""
    path: str
    """Where it stood in the neutral history: `messages[3].content[1]`."""


@dataclass(frozen=True)
class BodyReport:
    """What a body repair did, in counts: what the proxy's header and log say, known without the neutral model."""

    interrupted: list[str]
    """The final ids of the calls answered as interrupted, in history order."""
    moved: int = 0
    notes: int = 0
    renamed: int = 0
    dropped: int = 0

    @property
    def changed(self) -> bool:
        """True when the repair changed the conversation."""
        return bool(self.interrupted or self.moved or self.notes or self.renamed or self.dropped)

    @classmethod
    def of(cls, result: RepairResult) -> BodyReport:
        """The counts of a neutral repair."""
        return cls([c.id for c in result.interrupted], len(result.moved), len(result.notes), len(result.renamed),
                   len(result.dropped) + len(result.stripped))


NeutralSide = tuple[RepairResult, list[ChatMessage], list[int]]
"""A body repair's neutral side: the repair result, the history it read, and each message's item."""


class BodyRepair:
    """What `Provider.repair_body` returns: the body, repaired in its own format, and what changed.

    The neutral side (`result`, `history`, `item_of`) is what the repair of the body's history gives. The stub
    route (`Provider._stub_repair`) repairs without it and leaves it to be worked out on first use, by the neutral
    route, which writes the same body: the proxy, which reads only `report`, never pays for it.
    """

    def __init__(self, body: dict[str, Any], result: RepairResult | None = None, rewritten: list[int] | None = None,
                 history: list[ChatMessage] | None = None, item_of: list[int] | None = None, *,
                 report: BodyReport | None = None, neutral: Callable[[], NeutralSide] | None = None) -> None:
        if result is None and neutral is None:
            raise TypeError("a BodyRepair needs its result, or how to work it out")
        self.body = body
        """The repaired body: the input's top-level fields as they were, its list with only the changed items
        new."""
        self.rewritten = rewritten if rewritten is not None else []
        """Positions, in the output list, of the items written anew; every other item is the input's own object."""
        self._neutral_side = None if result is None else (result, history or [], item_of or [])
        self._neutral = neutral
        self._report = report
        self.from_spans = False
        """True when the stub route made it (`Provider._stub_repair`): every item of the list was of a plain shape
        of the adapter's stubs."""
        self.mended: list[str] = []
        """The paths of the strings whose lone surrogates were replaced by U+FFFD (`JSON`), in document order."""
        self.thinking_dropped: list[Dropped] = []
        """The signed thinking blocks Anthropic's thinking policy left out (`"drop"`), each at its place in the input
        body's `messages`."""
        self.block_binding = False
        """True when Anthropic's thinking policy `"server"` set `thinking.block_binding.prefix_mismatch_behavior` to
        `"drop_block"`."""

    def _side(self) -> NeutralSide:
        if self._neutral_side is None:
            assert self._neutral is not None
            self._neutral_side = self._neutral()  # (two threads asking at once work it out twice, alike)
        return self._neutral_side

    @property
    def result(self) -> RepairResult:
        """The neutral repair behind it (what was interrupted, moved, renamed, turned into notes)."""
        return self._side()[0]

    @property
    def history(self) -> list[ChatMessage]:
        """The neutral messages read from the list, the repair's input: `result`'s indices are positions in it."""
        return self._side()[1]

    @property
    def item_of(self) -> list[int]:
        """For each message of `history`, the index of the input list item it was read from (empty when the
        adapter reads several items as one message: `_units`)."""
        return self._side()[2]

    @property
    def report(self) -> BodyReport:
        """The repair in counts."""
        if self._report is None:
            self._report = BodyReport.of(self.result)
        return self._report

    @property
    def changed(self) -> bool:
        """True when the body differs from the input."""
        return bool(self.rewritten) or bool(self.mended) or self.report.changed

    def replace(self, **changes: Any) -> Self:
        """A copy with some attributes changed (`body`, `rewritten`, or a subclass's own)."""
        copied = copy.copy(self)
        for name, value in changes.items():
            if not hasattr(copied, name) or name.startswith("_"):
                raise AttributeError(f"{type(self).__name__} has no attribute {name!r} to replace")
            setattr(copied, name, value)
        return copied

    def __repr__(self) -> str:
        mended = f", mended={self.mended!r}" if self.mended else ""
        return f"{type(self).__name__}(rewritten={self.rewritten!r}, report={self.report!r}{mended})"


def kept_items(
    groups: Sequence[Sequence[ChatMessage]], result: RepairResult, wire_id: Callable[[int], str] | None
) -> list[int | None]:
    """For each output message, the index of the input item it is kept as (None: written anew).

    Every message of a kept item comes out in place: the same object, consecutive, in the item's order, and
    each of its calls under the wire id it already had (`wire_id(k)` is the k-th call's, in history order;
    None when ids are written as they are).
    """
    out = result.messages
    position: dict[int, int] = {}  # id(input message) -> output position
    for p, message in enumerate(out):
        position[id(message)] = p
    kept: list[int | None] = [None] * len(out)
    calls_before = _calls_before(out) if wire_id is not None else []
    for r, group in enumerate(groups):
        if not group:
            continue
        start = position.get(id(group[0]))
        if start is None or start + len(group) > len(out):
            continue
        if all(out[start + k] is m for k, m in enumerate(group)) and _same_ids(group, start, calls_before, wire_id):
            for k in range(len(group)):
                kept[start + k] = r
    return kept


def _calls_before(messages: Sequence[ChatMessage]) -> list[int]:
    """For each message, how many calls come before it in the history."""
    counts, n = [], 0
    for m in messages:
        counts.append(n)
        n += len(m.tool_calls)
    return counts


def _same_ids(group: Sequence[ChatMessage], start: int, calls_before: list[int],
              wire_id: Callable[[int], str] | None) -> bool:
    """True when the wire ids of the group's calls are the ids they already carry."""
    if wire_id is None:
        return True
    for k, message in enumerate(group):
        first = calls_before[start + k]
        for j, call in enumerate(message.tool_calls):
            if wire_id(first + j) != call.id:
                return False
    return True


class Run(NamedTuple):
    """Output messages `start` to `end` are written anew; those from `lead` to `start` are kept items the writer
    writes first, for context only (the calls the run's results answer), and does not return."""

    lead: int
    start: int
    end: int


def plan_rewrite(messages: Sequence[ChatMessage], kept: list[int | None]) -> list[Run]:
    """The runs of output messages to write anew.

    A new call's message is written with its results (they take their wire ids from it); a kept item is kept
    whole or written whole; a new result whose call stands in a kept item has that item as its run's lead.
    """
    caller: dict[str, int] = {}  # call id -> output position of its assistant message
    answers: dict[str, int] = {}  # call id -> output position of its result
    for p, m in enumerate(messages):
        for call in m.tool_calls:
            caller[call.id] = p
        if m.tool_call_id is not None:
            answers[m.tool_call_id] = p
    members: dict[int, list[int]] = {}
    for p, r in enumerate(kept):
        if r is not None:
            members.setdefault(r, []).append(p)
    new = [r is None for r in kept]
    todo = [p for p, is_new in enumerate(new) if is_new]
    while todo:
        p = todo.pop()
        m = messages[p]
        linked = [answers.get(call.id, p) for call in m.tool_calls]
        r = kept[p]
        if r is not None:
            linked.extend(members[r])
        for q in linked:
            for i in range(min(p, q), max(p, q) + 1):
                if not new[i]:
                    new[i] = True
                    todo.append(i)
    runs: list[Run] = []
    p = 0
    while p < len(messages):
        if not new[p]:
            p += 1
            continue
        start = p
        while p < len(messages) and new[p]:
            p += 1
        lead = start
        for m in messages[start:p]:
            q = caller.get(m.tool_call_id, start) if m.tool_call_id is not None else start
            lead = min(lead, q)
        if lead < start:  # from the first message of the item holding the call
            first = members[kept[lead]][0] if kept[lead] is not None else lead  # type: ignore[index]
            lead = min(lead, first)
            while runs and lead < runs[-1].end:
                # the call stands before the end of the previous run (its results around a kept one): one run, the
                # kept items between them written anew, so the writer still sees the call before every result
                previous = runs.pop()
                start, lead = previous.start, min(lead, previous.lead)
        runs.append(Run(lead, start, p))
    return runs


def unwritable_parts(messages: Sequence[ChatMessage], writes: frozenset[str],
                     accepts: Callable[[str], bool]) -> list[tuple[int, int]]:
    """(message index, part index) of every part of a type not in `writes`, or native to a provider `accepts`
    refuses."""
    found = []
    for i, message in enumerate(messages):
        content = message.content
        if isinstance(content, str):
            continue
        for j, part in enumerate(content):
            if part.type not in writes or (type(part) is NativePart and not accepts(part.provider)):
                found.append((i, j))
    return found
