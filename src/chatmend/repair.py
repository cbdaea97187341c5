"""`repair_history`: make any saved, resumed or interrupted history valid to send.

The specification is `shared/spec/repair_history.md`; each rule of its Part 2 has one function here:

1. drop first ............. `is_placeholder`
2. spans .................. `_Pass.run`
3. pairing ................ `_pair_results`
4. span output ............ `_Pass.close_span`

5. final ids .............. `chatmend.ids.FinalIds`
6. synthetic result ....... `interrupted_result`
7. user note .............. `orphan_note`
9. bad input .............. `chatmend.messages.coerce_history`

One pass over the history; messages that need no change are the input's own objects.
"""

from __future__ import annotations

import gc
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

from chatmend.ids import FinalIds
from chatmend.messages import (
    ChatMessage,
    ImagePart,
    TextPart,
    ThinkingPart,
    ToolCall,
    coerce_history,
    replace_field,
)

__all__ = [
    "IsReadOnly",
    "RenamedId",
    "RepairResult",
    "interrupted_result",
    "is_placeholder",
    "orphan_note",
    "paused_gc",
    "repair_history",
]

_tuple_new = tuple.__new__

IsReadOnly = Callable[[str], bool]
"""Tells whether a tool only reads (safe to run again) from its name."""

READ_ONLY_WORDING = (
    "Interrupted: the call to {name} was cut off before it returned a result. "
    "The tool only reads, so it is safe to run it again."
)
MAY_HAVE_RUN_WORDING = (
    "Interrupted: the call to {name} was cut off before it returned a result. "
    "The tool may have partly run: check its effects before running it again."
)


class RenamedId(NamedTuple):
    """A call whose id changed: the assistant message's input index, the call's index in it, old and new id."""

    message_index: int
    call_index: int
    old: str
    new: str


@dataclass(frozen=True)
class RepairResult:
    """What `repair_history` returns: the valid history and the calls answered as interrupted.

    The other fields report what changed (indices are positions in the input list), for tools like the CLI.
    """

    messages: list[ChatMessage]
    """The repaired history."""
    interrupted: list[ToolCall]
    """Calls that had no result and got a synthetic one, under their final ids, in history order."""
    dropped: list[int] = field(default_factory=list)
    """Whitespace-only assistant messages without calls that were removed."""
    moved: list[int] = field(default_factory=list)
    """Results that were moved to just after their call."""
    notes: list[int] = field(default_factory=list)
    """Tool results with no call in their span, turned into user notes."""
    renamed: list[RenamedId] = field(default_factory=list)
    """Calls whose id was empty or already used."""

    @property
    def changed(self) -> bool:
        """True when the repaired history differs from the input."""
        return bool(self.interrupted or self.dropped or self.moved or self.notes or self.renamed)


def repair_history(
    messages: Sequence[ChatMessage | dict[str, object]] | Sequence[object],
    *,
    is_read_only: IsReadOnly | None = None,
) -> RepairResult:
    """Make a history valid to send: every call has exactly one result, right after it, under a unique id.

    Pure and deterministic; the input is not mutated; repairing the result changes nothing.
    """
    with paused_gc():
        history = coerce_history(messages)
        repair = _Pass(is_read_only)
        repair.run(history)
        return repair.result()


_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector while a pass runs; restore it as it was.

    A pass allocates a few objects per changed message and creates no reference cycles, yet those
    allocations trigger full collections that walk the caller's whole heap (a 100k-message history is
    about a million objects): measured, two full collections cost more than the pass itself. Nested and
    concurrent passes share one pause (a counter under a lock), so the collector comes back on exactly
    when the last one ends, and only if it was on before the first.
    """
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()


def is_placeholder(message: ChatMessage) -> bool:
    """Rule 1: an assistant message with no calls whose content is empty or whitespace-only text."""
    if message.role != "assistant" or message.tool_calls:
        return False
    content = message.content
    if isinstance(content, str):
        return not content or content.isspace()
    return all(type(part) is TextPart and (not part.text or part.text.isspace()) for part in content)


def interrupted_result(call: ToolCall, *, read_only: bool) -> ChatMessage:
    """Rule 6: the synthetic result of a call that never got one."""
    wording = READ_ONLY_WORDING if read_only else MAY_HAVE_RUN_WORDING
    return ChatMessage(
        role="tool",
        tool_call_id=call.id,
        tool_name=call.name,
        is_error=True,
        content=wording.format(name=call.name),
    )


def orphan_note(result: ChatMessage) -> ChatMessage:
    """Rule 7: a tool result with no call to answer, as a user note that loses nothing of it."""
    details = []
    if result.tool_name:
        details.append(f"tool: {result.tool_name}")
    details.append(f"id: {result.tool_call_id}" if result.tool_call_id else "id: (empty)")
    details.append(f"error: {'yes' if result.is_error else 'no'}")
    header = f"A tool result arrived with no matching tool call ({', '.join(details)})."
    content = result.content
    if isinstance(content, str):
        text, others = content, ()
    else:
        text = "\n".join(p.text for p in content if isinstance(p, TextPart))
        others = tuple(p for p in content if not isinstance(p, TextPart))
    note = f"{header} Its output follows.\n{text}" if text or others else f"{header} It had no output."
    parts: tuple[TextPart | ImagePart | ThinkingPart, ...] = (TextPart(text=note), *others)
    return ChatMessage(role="user", content=parts)


class _Pass:
    """One repair pass over a history: the output so far, the ids used so far, and the report.

    A span is handled as the index range `[start, end)` of the history, so routing a message costs no
    allocation; `run` can resume at any span start (incremental repair keeps a pass and resumes it).
    """

    def __init__(self, is_read_only: IsReadOnly | None) -> None:
        self.is_read_only = is_read_only
        self.ids = FinalIds()
        self.out: list[ChatMessage] = []
        self.interrupted: list[ToolCall] = []
        self.dropped: list[int] = []
        self.moved: list[int] = []
        self.notes: list[int] = []
        self.renamed: list[RenamedId] = []

    def run(self, history: Sequence[ChatMessage], start: int = 0) -> int | None:
        """Rule 2: repair `history[start:]` into `out`; returns where the last span starts (None: no span)."""
        out = self.out
        span_start: int | None = None
        for index in range(start, len(history)):
            message = history[index]
            role = message.role
            if role == "assistant":
                if not message.tool_calls and is_placeholder(message):
                    if span_start is None:
                        self.dropped.append(index)
                    continue  # inside a span, close_span skips (and reports) it
                if span_start is not None:
                    self.close_span(history, span_start, index)
                if message.tool_calls:
                    span_start = index
                    continue
                span_start = None
                out.append(message)
            elif span_start is not None:
                continue  # collected by close_span
            elif role == "tool":
                self.notes.append(index)
                out.append(orphan_note(message))
            else:
                out.append(message)
        if span_start is not None:
            self.close_span(history, span_start, len(history))
        return span_start

    def close_span(self, history: Sequence[ChatMessage], start: int, end: int) -> None:
        """Rule 4: the assistant message with final ids, one result per call in call order, then the rest."""
        assistant = history[start]
        calls = self._final_calls(start, assistant.tool_calls)
        results, rest = self._pair_results(history, start, end)
        out = self.out
        out.append(assistant if calls is assistant.tool_calls else replace_field(assistant, "tool_calls", calls))
        for call, result in zip(calls, results):
            if result is None:
                read_only = self.is_read_only is not None and bool(self.is_read_only(call.name))
                out.append(interrupted_result(call, read_only=read_only))
                self.interrupted.append(call)
            elif result.tool_call_id != call.id:
                out.append(replace_field(result, "tool_call_id", call.id))
            else:
                out.append(result)
        out.extend(rest)

    def _final_calls(self, index: int, original: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
        """Rule 5: the calls under their final ids (the same tuple when no id changes)."""
        used = self.ids.used
        calls: tuple[ToolCall, ...] | list[ToolCall] = original
        for ci, call in enumerate(original):
            raw = call.id
            if raw and raw not in used:  # the common case, FinalIds.allocate's first branch inlined
                used.add(raw)
                continue
            final = self.ids.allocate(raw, index, ci)
            if calls is original:
                calls = list(original)
            calls[ci] = replace_field(call, "id", final)  # type: ignore[index]
            self.renamed.append(_tuple_new(RenamedId, (index, ci, raw, final)))
        return original if calls is original else tuple(calls)

    def _pair_results(
        self, history: Sequence[ChatMessage], start: int, end: int
    ) -> tuple[list[ChatMessage | None], list[ChatMessage]]:
        """Rule 3: each tool message takes the first unanswered call with its original id; others become notes."""
        calls = history[start].tool_calls
        n = len(calls)
        # Fast path: the results already stand right after the calls, in call order, under their ids. By
        # rule 3 each of them takes its own call, so pairing is a comparison per call.
        first = start + 1
        if end - first >= n:
            results: list[ChatMessage | None] = history[first:first + n]  # type: ignore[assignment]
            if all(r.role == "tool" and r.tool_call_id == c.id for r, c in zip(results, calls)):  # type: ignore[union-attr]
                rest = self._rest(history, first + n, end) if first + n < end else []
                return results, rest
        results = [None] * n
        rest = []
        waiting: dict[str, deque[int]] = {}
        for ci, call in enumerate(calls):
            waiting.setdefault(call.id, deque()).append(ci)
        in_place, last = True, -1
        for index in range(first, end):
            message = history[index]
            role = message.role
            if role == "tool":
                queue = waiting.get(message.tool_call_id or "")
                if queue:
                    ci = queue.popleft()
                    results[ci] = message
                    if in_place and ci > last:
                        last = ci
                    else:
                        self.moved.append(index)
                    continue
                self.notes.append(index)
                message = orphan_note(message)
            elif role == "assistant":  # a placeholder (rule 1): any other assistant message ends the span
                self.dropped.append(index)
                continue
            in_place = False
            rest.append(message)
        return results, rest

    def _rest(self, history: Sequence[ChatMessage], first: int, end: int) -> list[ChatMessage]:
        """The span's messages after its answered calls: tool messages there pair with nothing (notes)."""
        rest = []
        for index in range(first, end):
            message = history[index]
            if message.role == "tool":
                self.notes.append(index)
                message = orphan_note(message)
            elif message.role == "assistant":
                self.dropped.append(index)
                continue
            rest.append(message)
        return rest

    def result(self) -> RepairResult:
        """The repaired history and the report."""
        return RepairResult(
            messages=self.out,
            interrupted=self.interrupted,
            dropped=sorted(self.dropped),
            moved=self.moved,
            notes=self.notes,
            renamed=self.renamed,
        )
