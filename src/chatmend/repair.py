"""`repair_history`: make any saved, resumed or interrupted history valid to send.

The specification is `docs/rules.md`. Rules 1 to 5 are decided once, on stubs of the messages, by the planner
(`chatmend.planner`, which `repair_body` runs on a body's items too); here the neutral messages are stubbed
(`stub_history`), and the plan is applied to them (`HistoryRepair`), writing what rules 6 and 7 say:

1. drop first ............. `is_placeholder` (a BLANK stub)
6. synthetic result ....... `synthetic_result`, with the options `wording` and `mark`
7. user note .............. `orphan_note`
9. bad input .............. `chatmend.messages.coerce_history` (SDK objects first: `sdk_reader.read_sdk_objects`)

Messages the plan keeps are the input's own objects, and changed ones are copies (`messages.replace_unchecked`). Each
output message records where it came from (`RepairResult.origin_runs`). `chatmend.incremental.Repairer` goes on
with a repair as its history grows; `repair_for_writers` is the same repair for provider writers, which take ids
from `final_ids`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from typing import Any, Literal, NamedTuple

from chatmend.ids import FinalIds
from chatmend.messages import (
    ChatMessage,
    Part,
    TextPart,
    ToolCall,
    coerce_history,
    replace_unchecked,
)
from chatmend.planner import (
    ANSWER,
    BLANK,
    BLANK_CALLS,
    CALL,
    CALLS,
    KEEP,
    OTHER,
    REPLY,
    RESULT,
    SYNTHETIC,
    PlanMark,
    Planner,
    last_open_span,
)
from chatmend.results import NOTE_SOURCE, SYNTHETIC_SOURCE, Origin, RenamedId, RepairResult, SharedList
from chatmend.sdk_reader import read_sdk_objects

__all__ = [
    "DEFAULT_OPTIONS",
    "Checkpoint",
    "HistoryRepair",
    "IsReadOnly",
    "Mark",
    "OnMissing",
    "Origin",
    "RenamedId",
    "RepairOptions",
    "RepairResult",
    "Wording",
    "is_placeholder",
    "orphan_note",
    "orphan_note_text",
    "reads_only",
    "repair_following",
    "repair_for_writers",
    "repair_history",
    "repair_options",
    "stub_history",
    "synthetic_result",
    "synthetic_text",
]

IsReadOnly = Callable[[str], bool]
"""Tells whether a tool only reads (safe to run again) from its name."""
Wording = Callable[[str], str | None] | Mapping[str, str]
"""A synthetic result's text per tool name: a callable (None: the default wording) or a mapping (a name not in it:
the default wording)."""

READ_ONLY_WORDING = (
    "Interrupted: the call to {name} was cut off before it returned a result. "
    "The tool only reads, so it is safe to run it again."
)
MAY_HAVE_RUN_WORDING = (
    "Interrupted: the call to {name} was cut off before it returned a result. "
    "The tool may have partly run: check its effects before running it again."
)


OnMissing = Literal["answer", "strip"]
"""What repair does with a call that has no result: answer it as interrupted (the spec), or strip it."""
Mark = Literal["error", "field", "none"]
"""How a synthetic result says it is one: see `repair_history`'s `mark`."""


@dataclass(frozen=True)
class RepairOptions:
    """`repair_history`'s options, as one value (`Repairer` and `Provider.to_request` take the same ones)."""

    wording: Wording | None = None
    leave_open_last: bool = False
    on_missing: OnMissing = "answer"
    mark: Mark = "error"

    def __post_init__(self) -> None:
        if self.on_missing not in ("answer", "strip"):
            raise ValueError(f"on_missing must be 'answer' or 'strip', not {self.on_missing!r}")
        if self.mark not in ("error", "field", "none"):
            raise ValueError(f"mark must be 'error', 'field' or 'none', not {self.mark!r}")
        if not isinstance(self.leave_open_last, bool):
            raise TypeError(f"leave_open_last must be a bool, not {type(self.leave_open_last).__name__}")


DEFAULT_OPTIONS = RepairOptions()


def repair_history(
    messages: Sequence[ChatMessage | dict[str, object]] | Sequence[object],
    *,
    is_read_only: IsReadOnly | None = None,
    wording: Wording | None = None,
    leave_open_last: bool = False,
    on_missing: OnMissing = "answer",
    mark: Mark = "error",
) -> RepairResult:
    """Make a history valid to send: every call has exactly one result, right after it, under a unique id.

    Pure and deterministic; the input is not mutated; repairing the result (with the same options) changes
    nothing. `messages` are ChatMessages, dicts of their JSON shape, or the official SDKs' own message objects
    (an `anthropic.types.Message`, OpenAI's `ChatCompletionMessage`, a google-genai `types.Content`, ...), each
    read by its provider's `from_request` (indices in the result are then positions in the history they read as:
    one SDK message may hold several results).

    `wording` gives a synthetic result your own text, per tool: `wording(name)` (None: the default wording) or
    `wording[name]` (a name not in the mapping: the default). It should be pure: the guarantees hold as long as
    the same name always gets the same text. It is asked only for calls answered as interrupted.

    `leave_open_last=True` leaves the calls of the last reply that have no result open, for the caller to run
    (pydantic-ai's `repair_last_response=False`): when the history ends in the span of a reply with calls, its
    unanswered calls get no synthetic result (and are not in `interrupted`); everything else is repaired as
    usual, and the results it has are put right after it in call order. What it gives up: the output is not
    valid to send while those calls are open, and prefix stability at the last span (a longer history answers
    that span's missing calls as interrupted, once it is no longer the last). It stays deterministic and
    idempotent (repairing the output with the same option changes nothing).

    `on_missing="strip"` removes a call that has no result instead of answering it (for a caller that runs it
    again): the call leaves its assistant message (listed in `stripped`, as it was, at `stripped_at`), takes no
    final id, and an assistant message left with no calls and no content but whitespace is dropped as rule 1
    drops a placeholder (listed in `dropped`). Results, steers and notes of its span stay as they would. With
    `leave_open_last`, the last reply's calls stay open instead. It keeps every guarantee: spans still end where
    the input's assistant messages stand, so the output of a span depends only on the history up to its end.

    `mark` is how a synthetic result says it is not the tool's own: `"error"` (the default) makes it an error
    result (`is_error`), which each wire format says in its own way: Anthropic's `is_error: true`, Gemini's
    `response: {"error": ...}`, a prefix to the text where the format has no error field (`Error: ` in OpenAI
    Chat, Kimi and Mistral, `[error] ` in Responses). `"field"` is the same here; a provider's `to_request` then
    marks it only where its format has a field for it (`Provider.error_field`), the text as worded elsewhere.
    `"none"`: a plain result, which only its wording tells apart. Every guarantee holds with each.
    """
    options = repair_options(wording, leave_open_last, on_missing, mark)
    return HistoryRepair(is_read_only, options).whole(_read(messages))


def repair_options(wording: Wording | None, leave_open_last: bool, on_missing: OnMissing, mark: Mark,
                   ) -> RepairOptions:
    """`repair_history`'s options as one value (the default one when nothing is asked for: the common case builds
    nothing)."""
    if wording is None and not leave_open_last and on_missing == "answer" and mark == "error":
        return DEFAULT_OPTIONS
    return RepairOptions(wording, leave_open_last, on_missing, mark)


def repair_for_writers(
    messages: Sequence[ChatMessage | dict[str, object]] | Sequence[object],
    *,
    is_read_only: IsReadOnly | None = None,
    assign_ids: bool = True,
    renames: bool = True,
    options: RepairOptions = DEFAULT_OPTIONS,
) -> RepairResult:
    """`repair_history` for a provider writer, which takes every call's id from `final_ids` (the k-th call
    of the output has the k-th final id) and each result's from the calls it answers (the tool messages after
    an assistant message answer its calls in order).

    The one difference: a renamed call's assistant message and results are not copied to carry the new id,
    they keep their original ids (Kimi's ids restart every reply: this spares two copies per call). The
    rest of the result is exactly `repair_history`'s (with `options`, its keyword options). With
    `assign_ids=False`, for a writer that mints every wire id from the call's position (Kimi's
    `functions.{name}:{n}`), rule 5 is left out: no final ids, no renames, every call keeps its original id
    (pairing never depended on rule 5). With `renames=False`, `renamed` is left empty: a writer reads every
    final id from `final_ids`, so a record per renamed call (Kimi's ids restart every reply: nearly every call)
    would be work for nothing.
    """
    repair = HistoryRepair(is_read_only, options, copies=False, assign_ids=assign_ids, renames=renames)
    return repair.whole(_read(messages))


def repair_following(messages: list[ChatMessage], ids: FinalIds, *, is_read_only: IsReadOnly | None = None,
                     ) -> RepairResult:
    """`repair_history` of the part of a history that follows a part already repaired, whose calls took the final
    ids `ids` (which this part's calls join): a history read part by part (a large transcript, streamed) is
    repaired exactly as whole when each part starts at a kept assistant message (rule 2's spans stop there,
    and prefix stability holds) and no call has an empty id (rule 5 would name it by its index in the part).
    Indices in the result are positions in `messages`."""
    return HistoryRepair(is_read_only, ids=ids).whole(messages)


def _read(messages: Sequence[object] | object) -> list[ChatMessage]:
    """The history as ChatMessages: the caller's own list when it holds nothing else (a pass only reads it).

    Checking the types costs less than copying the list would (with the copy's share of the next collection).
    """
    if type(messages) is list and list(map(type, messages)).count(ChatMessage) == len(messages):
        return messages
    return coerce_history(read_sdk_objects(messages))


def is_placeholder(message: ChatMessage) -> bool:
    """Rule 1: an assistant message with no calls whose content is empty or whitespace-only text."""
    return message.role == "assistant" and not message.tool_calls and _says_nothing(message.content)


def _says_nothing(content: str | Sequence[Part]) -> bool:
    """True for content that is empty or whitespace-only text (rule 1's test of an assistant message)."""
    if type(content) is str:
        return not content or content.isspace()
    return all(type(part) is TextPart and (not part.text or part.text.isspace()) for part in content)


def synthetic_result(call_id: str, name: str, *, read_only: bool, wording: Wording | None = None,
                     is_error: bool = True) -> ChatMessage:
    """Rule 6's result for the call `call_id` to tool `name` (a body's repair knows no ToolCall), with
    `repair_history`'s options: its text from `wording`, `is_error=False` for `mark="none"`."""
    return ChatMessage(role="tool", tool_call_id=call_id, tool_name=name, is_error=is_error,
                       content=synthetic_text(name, read_only=read_only, wording=wording))


def reads_only(is_read_only: IsReadOnly | None, name: str) -> bool:
    """Rule 6's choice of wording: True when `is_read_only` is given and says tool `name` only reads."""
    return is_read_only is not None and bool(is_read_only(name))


def synthetic_text(name: str, *, read_only: bool, wording: Wording | None = None) -> str:
    """Rule 6's text for a call to tool `name`: the caller's text for it when `wording` has one, else the spec's."""
    if wording is not None:
        text = wording.get(name) if isinstance(wording, Mapping) else wording(name)
        if text is not None:
            if not isinstance(text, str):
                raise TypeError(f"wording for {name!r} must be a str (or None for the default), got "
                                f"{type(text).__name__}")
            return text
    return _wording(name, read_only)


@lru_cache(maxsize=256)
def _wording(name: str, read_only: bool) -> str:
    """Rule 6's text for a tool (cached: a session calls a few tools many times)."""
    return (READ_ONLY_WORDING if read_only else MAY_HAVE_RUN_WORDING).format(name=name)


def orphan_note(result: ChatMessage) -> ChatMessage:
    """Rule 7: a tool result with no call to answer, as a user note that loses nothing of it."""
    content = result.content
    others: list[Part] = []
    if isinstance(content, str):
        text = content
    else:
        texts = []
        for part in content:
            if isinstance(part, TextPart):
                texts.append(part.text)
            else:
                others.append(part)
        text = "\n".join(texts)
    note = orphan_note_text(result.tool_name, result.tool_call_id, result.is_error, text, more=bool(others))
    return ChatMessage(role="user", content=(TextPart(text=note), *others))


def orphan_note_text(tool_name: str | None, call_id: str | None, is_error: bool, output: str, *,
                     more: bool = False) -> str:
    """The text of rule 7's note of a result with this text output (`more`: it had other parts too)."""
    tool = f"tool: {tool_name}, " if tool_name else ""
    header = (f"A tool result arrived with no matching tool call "
              f"({tool}id: {call_id or '(empty)'}, error: {'yes' if is_error else 'no'}).")
    return f"{header} Its output follows.\n{output}" if output or more else f"{header} It had no output."


def stub_history(messages: Sequence[ChatMessage]) -> tuple[list[int], list[Any]]:
    """The planner's stubs of neutral messages (`chatmend.planner.Stubs`): each one's kind, and the ids repair
    pairs it by."""
    kinds: list[int] = []
    refs: list[Any] = []
    kind, ref = kinds.append, refs.append
    for message in messages:
        role = message.role
        if role != "assistant":
            kind(RESULT if role == "tool" else OTHER)
            ref(message.tool_call_id)  # (None but for a tool message)
            continue
        content = message.content  # (string content, most replies, tested inline)
        blank = (not content or content.isspace()) if type(content) is str else _says_nothing(content)
        if calls := message.tool_calls:
            kind(BLANK_CALLS if blank else CALLS)
            ref(tuple(map(_call_id, calls)))
        else:
            kind(BLANK if blank else REPLY)
            ref(None)
    return kinds, refs


_call_id = attrgetter("id")


class Checkpoint(NamedTuple):
    """Where a repair stood between two runs: its plan's mark, and how far it had applied the plan."""

    plan: PlanMark
    out: int
    runs: int
    last_source: int
    follows: int
    interrupted: int
    stripped: int


class HistoryRepair:
    """A history's repair: its stubs, the plan of them (`chatmend.planner.Planner`), and the messages the plan makes.

    `run` applies each new step of the plan as it comes: a KEEP step takes the input's own messages, the others
    are written here. A repair can go on over messages appended since its last run, or roll back to the `mark`
    taken before the last span (which those may still answer) and go on from there (incremental repair).
    """

    def __init__(self, is_read_only: IsReadOnly | None, options: RepairOptions = DEFAULT_OPTIONS, *,
                 copies: bool = True, assign_ids: bool = True, renames: bool = True, ids: FinalIds | None = None,
                 ) -> None:
        self.planner = Planner(leave_open_last=options.leave_open_last, strip=options.on_missing == "strip",
                               ids=ids, assign_ids=assign_ids, renames=renames, rewrites_ids=copies)
        self.plan = self.planner.plan
        self.is_read_only = is_read_only
        self.wording = options.wording
        self.unmarked = options.mark == "none"
        """`mark="none"`: synthetic results are not errors."""
        self.copies = copies
        """False: the messages of renamed calls keep their original ids (`repair_for_writers`)."""
        self.kinds: list[int] = []
        self.refs: list[Any] = []
        self.out: list[ChatMessage] = []
        self.runs: list[int] = [0, 0]
        """`RepairResult.origin_runs`: its last run says where the next output message comes from if it is the
        next one of the input (`_source` starts a new run where that is not so)."""
        self.follows = 0
        """The input message the last run gives the next output message (-1: none, after a note or a synthetic)."""
        self.applied = 0
        """How many steps of the plan are applied."""
        self.interrupted: list[ToolCall] = []
        self.stripped: list[ToolCall] = []

    def whole(self, history: list[ChatMessage]) -> RepairResult:
        """The repair of `history`, in one run."""
        self.run(history)
        return self.result()

    def run(self, history: list[ChatMessage], start: int = 0, *, mark_last: bool = False) -> Checkpoint | None:
        """Repair `history[start:]` (`start`: 0, or where the last run ended or its mark was taken). With
        `mark_last`, returns the mark taken just before the last span when the history ends inside it."""
        if start:
            kinds, refs = stub_history(history[start:])
            del self.kinds[start:], self.refs[start:]
            self.kinds += kinds
            self.refs += refs
        else:
            self.kinds, self.refs = stub_history(history)
        mark = None
        last = last_open_span(self.kinds, start) if mark_last else None
        if last is not None:
            self.planner.run(self.kinds, self.refs, start, last)
            self._apply(history)
            mark = self.mark()
            start = last
        self.planner.run(self.kinds, self.refs, start)
        self._apply(history)
        if self.follows != len(history):
            self._source(len(history))  # the run that goes on over what may be appended
            self.follows = len(history)
        return mark

    def _apply(self, history: list[ChatMessage]) -> None:
        """Apply the steps planned since the last call: the output messages, and where they come from."""
        out, steps, follows = self.out, self.plan.steps, self.follows
        for k in range(self.applied, len(steps)):
            step, index, argument = steps[k]
            if step == KEEP:
                if index != follows:
                    self._source(index)
                if argument == index + 1:
                    out.append(history[index])  # (a result moved, most often: no slice for one message)
                else:
                    out += history[index:argument]
                follows = argument
            elif step in (CALL, ANSWER):
                if index != follows:
                    self._source(index)
                message = history[index]
                out.append(self._with_calls(message, argument) if step == CALL else self._answer(message, argument))
                follows = index + 1
            else:
                self._source(SYNTHETIC_SOURCE if step == SYNTHETIC else NOTE_SOURCE)
                out.append(self._synthetic(history[index], *argument) if step == SYNTHETIC
                           else orphan_note(history[index]))
                follows = -1
        self.follows = follows
        self.applied = len(steps)
        self.stripped += (history[m].tool_calls[c] for m, c in self.plan.stripped_at[len(self.stripped):])

    def _source(self, source: int) -> None:
        """The next output message starts a run: it comes from input message `source` (then the ones after it), or
        it is one note or synthetic result (`NOTE_SOURCE`, `SYNTHETIC_SOURCE`)."""
        runs = self.runs
        if runs[-2] == len(self.out):
            runs[-1] = source  # the last run holds no message yet
        else:
            runs += len(self.out), source

    def _with_calls(self, assistant: ChatMessage, finals: list[str | None]) -> ChatMessage:
        """A CALL step: the assistant message with its calls under their final ids, without those stripped (None).
        Without copies the calls keep their ids (the plan then has a CALL step only where calls were stripped)."""
        calls = assistant.tool_calls
        if self.copies:
            kept = tuple([call if final == call.id else replace_unchecked(call, id=final)
                          for call, final in zip(calls, finals) if final is not None])
        else:
            kept = tuple([call for call, final in zip(calls, finals) if final is not None])
        return replace_unchecked(assistant, tool_calls=kept)

    def _answer(self, result: ChatMessage, final: str) -> ChatMessage:
        """An ANSWER step: the result under the final id of its call (without copies, as it is)."""
        if not self.copies or result.tool_call_id == final:
            return result
        return replace_unchecked(result, tool_call_id=final)

    def _synthetic(self, assistant: ChatMessage, call_index: int, final: str) -> ChatMessage:
        """A SYNTHETIC step: the result of a call answered as interrupted (rule 6), with the options' wording and
        mark; the call goes to `interrupted`, under its final id."""
        call = assistant.tool_calls[call_index]
        if call.id != final:
            call = replace_unchecked(call, id=final)
        self.interrupted.append(call)
        return synthetic_result(final, call.name, read_only=reads_only(self.is_read_only, call.name),
                                wording=self.wording, is_error=not self.unmarked)

    def mark(self) -> Checkpoint:
        """Where the repair stands, to roll back to (taken between two runs of the planner)."""
        return self.position()._replace(plan=self.planner.mark())

    def position(self) -> Checkpoint:
        """Where the repair stands, as `mark` says it, without readying the ids to roll back."""
        return Checkpoint(self.planner.position(), len(self.out), len(self.runs), self.runs[-1], self.follows,
                     len(self.interrupted), len(self.stripped))

    def rollback(self, mark: Checkpoint) -> None:
        """Forget everything the repair did after `mark`."""
        self.planner.rollback(mark.plan)
        del self.out[mark.out:], self.runs[mark.runs:], self.interrupted[mark.interrupted:]
        del self.stripped[mark.stripped:]
        self.runs[-1] = mark.last_source  # (`_source` may have filled the run that was empty)
        self.follows, self.applied = mark.follows, len(self.plan.steps)

    def result(self) -> RepairResult:
        """The repaired history and the report: the repair's own lists (for a repair that ends here)."""
        plan = self.plan
        return RepairResult(self.out, self.interrupted, dropped=plan.dropped, moved=plan.moved, notes=plan.notes,
                            renamed=plan.renamed, final_ids=plan.final_ids, interrupted_at=plan.interrupted_at,
                            origin_runs=self.runs, stripped=self.stripped, stripped_at=plan.stripped_at)

    def shared_result(self, stable: Checkpoint | None) -> RepairResult:
        """The result so far, for a caller to keep while the repair goes on (incremental repair), at the cost of
        what follows `stable`: the mark the repair may roll back to next (None: it will only append).

        The repair never changes its lists before that mark (it appends, and rolls back no further), so the result
        shares them up to it and copies the rest (and the last item of `runs` before the mark, which `_source` may
        still overwrite).
        """
        at = self.position() if stable is None else stable
        plan = self.plan

        def kept(items: list[Any], length: int) -> SharedList[Any]:
            return SharedList(items, length, tuple(items[length:]))

        report = {name: kept(getattr(plan, name), length) for name, length in zip(plan.LISTS, at.plan.lengths)
                  if name in _REPORTED}
        return RepairResult._sharing(
            messages=kept(self.out, at.out), interrupted=kept(self.interrupted, at.interrupted),
            final_ids=kept(plan.final_ids, at.plan.ids), origin_runs=kept(self.runs, at.runs - 1),
            stripped=kept(self.stripped, at.stripped), **report)


_REPORTED = ("interrupted_at", "dropped", "moved", "notes", "renamed", "stripped_at")
"""The plan's lists a result reports as they are (its `interrupted` are final ids; the result's, the calls)."""
