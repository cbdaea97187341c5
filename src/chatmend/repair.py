"""`repair_history`: make any saved, resumed or interrupted history valid to send.

The specification is `shared/spec/repair_history.md`; each rule of its Part 2 has one function here:

1. drop first ............. `is_placeholder`
2. spans .................. `_Pass.feed`
3. pairing ................ `_pair_results`
4. span output ............ `_Pass.close_span`
5. final ids .............. `chatmend.ids.FinalIds`
6. synthetic result ....... `interrupted_result`
7. user note .............. `orphan_note`
9. bad input .............. `chatmend.messages.coerce_history`

One pass over the history; messages that need no change are the input's own objects.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chatmend.ids import FinalIds
from chatmend.messages import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall, coerce_history

__all__ = [
    "IsReadOnly",
    "RenamedId",
    "RepairResult",
    "interrupted_result",
    "is_placeholder",
    "orphan_note",
    "repair_history",
]

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


@dataclass(frozen=True)
class RenamedId:
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
    history = coerce_history(messages)
    repair = _Pass(is_read_only)
    for index, message in enumerate(history):
        repair.feed(index, message)
    return repair.finish()


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


class _Span:
    """An assistant message with calls and the messages after it, up to the next kept assistant message."""

    __slots__ = ("assistant", "index", "rest")

    def __init__(self, index: int, assistant: ChatMessage) -> None:
        self.index = index
        self.assistant = assistant
        self.rest: list[tuple[int, ChatMessage]] = []


class _Pass:
    """The state of one repair pass: output so far, ids used so far, the open span, the report."""

    def __init__(self, is_read_only: IsReadOnly | None) -> None:
        self.is_read_only = is_read_only
        self.ids = FinalIds()
        self.out: list[ChatMessage] = []
        self.span: _Span | None = None
        self.interrupted: list[ToolCall] = []
        self.dropped: list[int] = []
        self.moved: list[int] = []
        self.notes: list[int] = []
        self.renamed: list[RenamedId] = []

    def feed(self, index: int, message: ChatMessage) -> None:
        """Rule 2: route one input message: drop it, open or close a span, or pass it through."""
        if message.role == "assistant":
            if is_placeholder(message):
                self.dropped.append(index)
                return
            if self.span is not None:
                self.close_span()
            if message.tool_calls:
                self.span = _Span(index, message)
                return
            self.out.append(message)
        elif self.span is not None:
            self.span.rest.append((index, message))
        elif message.role == "tool":
            self.notes.append(index)
            self.out.append(orphan_note(message))
        else:
            self.out.append(message)

    def close_span(self) -> None:
        """Rule 4: the assistant message with final ids, one result per call in call order, then the rest."""
        span = self.span
        assert span is not None
        self.span = None
        calls = self._final_calls(span)
        results, rest = self._pair_results(span)
        out = self.out
        if calls is span.assistant.tool_calls:
            out.append(span.assistant)
        else:
            out.append(span.assistant.model_copy(update={"tool_calls": calls}))
        for call, result in zip(calls, results):
            if result is None:
                read_only = self.is_read_only is not None and bool(self.is_read_only(call.name))
                out.append(interrupted_result(call, read_only=read_only))
                self.interrupted.append(call)
            elif result.tool_call_id != call.id:
                out.append(result.model_copy(update={"tool_call_id": call.id}))
            else:
                out.append(result)
        out.extend(rest)

    def _final_calls(self, span: _Span) -> tuple[ToolCall, ...]:
        """Rule 5: the span's calls under their final ids (the same tuple when no id changes)."""
        original = span.assistant.tool_calls
        allocate = self.ids.allocate
        finals = [allocate(call.id, span.index, ci) for ci, call in enumerate(original)]
        if all(final == call.id for final, call in zip(finals, original)):
            return original
        renamed = []
        for ci, (final, call) in enumerate(zip(finals, original)):
            if final == call.id:
                renamed.append(call)
            else:
                self.renamed.append(RenamedId(span.index, ci, call.id, final))
                renamed.append(call.model_copy(update={"id": final}))
        return tuple(renamed)

    def _pair_results(self, span: _Span) -> tuple[list[ChatMessage | None], list[ChatMessage]]:
        """Rule 3: each tool message takes the first unanswered call with its original id; others become notes."""
        calls = span.assistant.tool_calls
        results: list[ChatMessage | None] = [None] * len(calls)
        rest: list[ChatMessage] = []
        waiting: dict[str, deque[int]] = {}
        for ci, call in enumerate(calls):
            waiting.setdefault(call.id, deque()).append(ci)
        in_place, last = True, -1
        for index, message in span.rest:
            if message.role != "tool":
                in_place = False
                rest.append(message)
                continue
            queue = waiting.get(message.tool_call_id or "")
            if not queue:
                in_place = False
                self.notes.append(index)
                rest.append(orphan_note(message))
                continue
            ci = queue.popleft()
            results[ci] = message
            if in_place and ci > last:
                last = ci
            else:
                self.moved.append(index)
        return results, rest

    def finish(self) -> RepairResult:
        """Close the open span and return the result."""
        if self.span is not None:
            self.close_span()
        return RepairResult(
            messages=self.out,
            interrupted=self.interrupted,
            dropped=self.dropped,
            moved=self.moved,
            notes=self.notes,
            renamed=self.renamed,
        )
