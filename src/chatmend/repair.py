"""`repair_history`: make any saved, resumed or interrupted history valid to send.

The specification is `docs/rules.md`; each rule of its Part 2 has one function here:

1. drop first ............. `is_placeholder`
2. spans .................. `_Pass.run` (and where a span ends: `_Pass._pair_results`)
3. pairing ................ `_Pass._pair_results` (its common case, results already in place: `_Pass.span`)
4. span output ............ `_Pass.span`

5. final ids .............. `chatmend.ids.FinalIds` (its common case inlined in `_Pass.span`)
6. synthetic result ....... `interrupted_result`
7. user note .............. `orphan_note`
9. bad input .............. `chatmend.messages.coerce_history` (SDK objects first: `read_sdk_objects`)

The options (`RepairOptions`, #27): `wording` in `_worded`, `leave_open_last` and `mark` where `_Pass.span` answers
a call, `on_missing="strip"` in `_Pass._strip_unanswered` (and `_Pass._kept_calls`: rule 5 for the calls kept).

One pass over the history; messages that need no change are the input's own objects, and changed ones
are copies (`dataclasses.replace`). Each output message records where it came from
(`RepairResult.origin_runs`). `chatmend.incremental.Repairer` resumes a pass;
`repair_for_writers` is the same pass for provider writers, which take ids from `final_ids`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from chatmend.ids import FinalIds
from chatmend.messages import (
    ChatMessage,
    Part,
    TextPart,
    ToolCall,
    coerce_history,
)
from chatmend.results import NOTE_SOURCE, SYNTHETIC_SOURCE, Origin, RenamedId, RepairResult, SharedList
from chatmend.sdk_reader import read_sdk_history

__all__ = [
    "DEFAULT_OPTIONS",
    "IsReadOnly",
    "Mark",
    "OnMissing",
    "Origin",
    "RenamedId",
    "RepairOptions",
    "RepairResult",
    "Wording",
    "holds_sdk_object",
    "interrupted_result",
    "is_placeholder",
    "is_sdk_object",
    "orphan_note",
    "orphan_note_text",
    "read_sdk_objects",
    "reads_only",
    "repair_following",
    "repair_for_writers",
    "repair_history",
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

    @property
    def is_default(self) -> bool:
        """True when every option is left as it is by default (the spec's own repair)."""
        return self == DEFAULT_OPTIONS


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
    options = _options(wording, leave_open_last, on_missing, mark)
    return _one_pass(messages, _Pass(is_read_only, options=options))


def _options(wording: Wording | None, leave_open_last: bool, on_missing: OnMissing, mark: Mark) -> RepairOptions:
    """The options as one value (the default one when nothing is asked for: the common case builds nothing)."""
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
    return _one_pass(messages, _Pass(is_read_only, copies=False, assign_ids=assign_ids, renames=renames,
                                     options=options))


def repair_following(messages: list[ChatMessage], ids: FinalIds, *, is_read_only: IsReadOnly | None = None,
                     ) -> RepairResult:
    """`repair_history` of the part of a history that follows a part already repaired, whose calls took the final
    ids `ids` (which this part's calls join): a history read part by part (a large transcript, streamed) is
    repaired exactly as whole when each part starts at a kept assistant message (rule 2's spans stop there,
    and prefix stability holds) and no call has an empty id (rule 5 would name it by its index in the part).
    Indices in the result are positions in `messages`."""
    repair = _Pass(is_read_only)
    repair.ids = ids
    repair.run(messages)
    return repair.result()


def _one_pass(messages: Sequence[object] | object, repair: _Pass) -> RepairResult:
    """`repair` run over the whole history."""
    repair.run(_read(messages))
    return repair.result()


def _read(messages: Sequence[object] | object) -> list[ChatMessage]:
    """The history as ChatMessages: the caller's own list when it holds nothing else (a pass only reads it).

    Checking the types costs less than copying the list would (with the copy's share of the next collection).
    """
    if type(messages) is list and list(map(type, messages)).count(ChatMessage) == len(messages):
        return messages
    return coerce_history(read_sdk_objects(messages))


def read_sdk_objects(messages: Sequence[object] | object) -> Sequence[object] | object:
    """`messages` with the official SDKs' message objects read by their provider (`chatmend.sdk_reader.
    read_sdk_history`); a history holding none comes back as it is."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        return messages  # not a history: `coerce_history` says so
    if any(map(holds_sdk_object, messages)):
        return read_sdk_history(messages)
    return messages


def holds_sdk_object(item: object) -> bool:
    """True for an SDK's message object, or a message dict whose `content` list holds one (the Anthropic SDK's
    idiom, `{"role": "assistant", "content": response.content}`)."""
    if isinstance(item, Mapping):
        content = item.get("content")
        return isinstance(content, list) and any(map(is_sdk_object, content))
    return is_sdk_object(item)


def is_sdk_object(value: object) -> bool:
    """True for an object an SDK made: it dumps itself to JSON-shaped data (`model_dump`, `to_dict`), and is
    none of chatmend's own models (which dump themselves too)."""
    if isinstance(value, (ChatMessage, Mapping, str, bytes, list, tuple)):
        return False
    if type(value).__module__.startswith("chatmend."):
        return False
    return callable(getattr(value, "model_dump", None)) or callable(getattr(value, "to_dict", None))


def is_placeholder(message: ChatMessage) -> bool:
    """Rule 1: an assistant message with no calls whose content is empty or whitespace-only text."""
    if message.role != "assistant" or message.tool_calls:
        return False
    content = message.content
    if isinstance(content, str):
        return not content or content.isspace()
    return all(type(part) is TextPart and (not part.text or part.text.isspace()) for part in content)


def _is_blank(message: ChatMessage) -> bool:
    """`is_placeholder` for an assistant message without calls, quicker for string content (most replies)."""
    content = message.content
    return (not content or content.isspace()) if type(content) is str else is_placeholder(message)


def interrupted_result(call: ToolCall, *, read_only: bool) -> ChatMessage:
    """Rule 6: the synthetic result of a call that never got one."""
    return synthetic_result(call.id, call.name, read_only=read_only)


def synthetic_result(call_id: str, name: str, *, read_only: bool) -> ChatMessage:
    """Rule 6's result for the call `call_id` to tool `name` (a body's fast repair knows no ToolCall)."""
    return ChatMessage(role="tool", tool_call_id=call_id, tool_name=name, is_error=True,
                       content=_wording(name, read_only))


def reads_only(is_read_only: IsReadOnly | None, name: str) -> bool:
    """Rule 6's choice of wording: True when `is_read_only` is given and says tool `name` only reads."""
    return is_read_only is not None and bool(is_read_only(name))


def synthetic_text(name: str, *, read_only: bool) -> str:
    """Rule 6's text for a call to tool `name`: what `synthetic_result` says (an error result)."""
    return _wording(name, read_only)


@lru_cache(maxsize=256)
def _wording(name: str, read_only: bool) -> str:
    """Rule 6's text for a tool (cached: a session calls a few tools many times)."""
    return (READ_ONLY_WORDING if read_only else MAY_HAVE_RUN_WORDING).format(name=name)


def _worded(synthetic: ChatMessage, name: str, wording: Wording) -> ChatMessage:
    """A synthetic result with the caller's text for `name`, when `wording` has one."""
    text = wording.get(name) if isinstance(wording, Mapping) else wording(name)
    if text is None:
        return synthetic
    if not isinstance(text, str):
        raise TypeError(f"wording for {name!r} must be a str (or None for the default), got {type(text).__name__}")
    return replace(synthetic, content=text)


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


class _Mark(NamedTuple):
    """How far a pass had got: the lengths of its output lists and the mark of its ids."""

    out: int
    runs: int
    interrupted: int
    dropped: int
    moved: int
    notes: int
    renamed: int
    stripped: int
    ids: int


class _Pass:
    """One repair pass over a history: the output so far, the ids used so far, and the report.

    A span is walked once, from its assistant message to the next kept assistant message: its messages are
    read where they stand in the history. `run` can resume at any span start (incremental repair keeps a
    pass, rolls it back to the mark taken before its last span, and resumes there).
    """

    __slots__ = ("assign_ids", "copies", "dropped", "ids", "interrupted", "interrupted_at", "is_read_only",
                 "last_mark", "leave_open_last", "moved", "notes", "out", "renamed", "renames", "runs", "strip",
                 "stripped", "stripped_at", "unmarked", "wording")

    def __init__(
        self, is_read_only: IsReadOnly | None, *, copies: bool = True, assign_ids: bool = True, renames: bool = True,
        options: RepairOptions = DEFAULT_OPTIONS,
    ) -> None:
        self.is_read_only = is_read_only
        self.wording = options.wording
        """`repair_history`'s `wording` (None: the spec's two wordings)."""
        self.leave_open_last = options.leave_open_last
        """`repair_history`'s `leave_open_last`."""
        self.strip = options.on_missing == "strip"
        """`repair_history`'s `on_missing="strip"`."""
        self.unmarked = options.mark == "none"
        """`repair_history`'s `mark="none"`: synthetic results are not errors."""
        self.copies = copies
        """False: renamed calls' messages keep their original ids (`repair_for_writers`)."""
        self.assign_ids = assign_ids
        """False: rule 5 is left out (`repair_for_writers` for a writer that mints ids by position)."""
        self.renames = renames
        """False: renamed calls are not listed in `renamed` (`repair_for_writers` for a writer)."""
        self.ids = FinalIds()
        self.out: list[ChatMessage] = []
        self.runs: list[int] = [0, 0]
        """`RepairResult.origin_runs` (flat ints: no tuple for the garbage collector to count); its last run
        always says where the next message of `out` comes from if it is the next one of the history (`_from`
        starts a new run where that is not so)."""
        self.interrupted: list[ToolCall] = []
        self.interrupted_at: list[tuple[int, int]] = []
        self.dropped: list[int] = []
        self.moved: list[int] = []
        self.notes: list[int] = []
        self.renamed: list[RenamedId] = []
        self.stripped: list[ToolCall] = []
        self.stripped_at: list[tuple[int, int]] = []
        self.last_mark: _Mark | None = None

    def run(self, history: list[ChatMessage], start: int = 0, *, mark_spans: bool = False) -> int | None:
        """Rule 2: repair `history[start:]` into `out`; returns where the last span starts if the history
        ends inside it (None otherwise).

        With `mark_spans`, `last_mark` is the pass just before the span that started last (incremental
        repair rolls back to it to reopen that span).
        """
        out = self.out
        n = len(history)
        index, last_span = start, None
        while index < n:
            message = history[index]
            role = message.role
            if role == "assistant":
                if message.tool_calls:
                    if mark_spans:
                        self.last_mark = self.mark()
                    last_span, index = index, self.span(history, index)
                    continue
                content = message.content
                if (content and not content.isspace()) if type(content) is str else not is_placeholder(message):
                    last_span = None  # a reply: the span (if any) ended
                    out.append(message)
                else:
                    self.dropped.append(index)  # rule 1
                    self._from(len(out), index + 1)
            elif role == "tool":
                self.notes.append(index)  # rule 7: nothing before it in its span waits for a result
                self._from(len(out), NOTE_SOURCE)
                out.append(orphan_note(message))
                self._from(len(out), index + 1)
            else:
                out.append(message)
            index += 1
        return last_span

    def span(self, history: list[ChatMessage], start: int) -> int:
        """Rules 3 and 4 for the span that starts at `start`: output it, and return where `run` goes on.

        The span ends at the next assistant message that is not a placeholder, or at the end of the history.
        When every call is answered right after it, `run` goes on just after the results: what else the span
        holds pairs with nothing, and `run` treats it as it treats any message outside a span.
        """
        assistant = history[start]
        calls = final_calls = assistant.tool_calls
        strip = self.strip  # on_missing="strip": the calls to keep are known only after pairing, ids too
        if self.assign_ids and not strip:
            ids = self.ids
            used, in_order = ids.used, ids.in_order
            before = len(in_order)
            for call in calls:  # rule 5, FinalIds.allocate's common case inlined: a new, non-empty id
                raw = call.id
                if raw and raw not in used:
                    used.add(raw)
                    in_order.append(raw)
                else:
                    final_calls = self._renamed_calls(start, calls, len(in_order) - before)
                    break
        out = self.out
        # Rule 3's common case: the results stand right after the calls, in call order, under their ids. Each
        # of them then pairs with its own call (every earlier call already has its result).
        index = first = start + 1
        n = len(history)
        for call in calls:
            if index == n:
                break
            message = history[index]
            if message.role != "tool" or message.tool_call_id != call.id:
                break
            index += 1
        in_place, n_calls = index - first, len(calls)
        if in_place == n_calls:
            if strip:
                final_calls = self._kept_calls(start, calls, range(n_calls))
            copies = final_calls is not calls and self.copies  # else every message stays as it is
            out.append(replace(assistant, tool_calls=final_calls) if copies else assistant)
            if not copies:
                out.extend(history[first:index])  # already valid, or a pass that makes no copies
            else:
                for call, result in zip(final_calls, history[first:index]):
                    out.append(result if result.tool_call_id == call.id else
                               replace(result, tool_call_id=call.id))
            return index  # what follows (steers, orphans, placeholders) `run` reads as it reads any message
        # The input index of each call's result (-1: none yet).
        results = [*range(first, index), *[-1] * (n_calls - in_place)]
        rest: list[int] = []
        if index < n:
            following = history[index]
            if following.role != "assistant" or (not following.tool_calls and _is_blank(following)):
                index, rest = self._pair_results(history, start, index, results)
        # (else the span ends right after the calls answered in place, as when a session was cut off while the
        # other calls ran: those never got a result)
        leave_open = self.leave_open_last and index == n  # the history ends in this span
        follows = start + 1  # the input index the last run gives the next output message (-1: none)
        if strip:
            final_calls, results = self._strip_unanswered(start, calls, results, leave_open)
        copies = final_calls is not calls and self.copies
        if not strip or final_calls:
            out.append(replace(assistant, tool_calls=final_calls) if final_calls is not calls else assistant)
        elif is_placeholder(kept := replace(assistant, tool_calls=())):
            bisect.insort(self.dropped, start)  # every call stripped, nothing else said: as rule 1 drops it
            follows = start
        else:
            out.append(kept)
        # `_from` inlined: a run starts wherever an output message is not the input message after the last one.
        runs = self.runs
        for ci, (call, at) in enumerate(zip(final_calls, results)):
            if at < 0:
                if leave_open:
                    continue
                if not self.copies:
                    call = self._final_call(ci, call, n_calls)  # the synthetic result carries the final id
                read_only = reads_only(self.is_read_only, call.name)
                runs += len(out), SYNTHETIC_SOURCE
                follows = -1
                synthetic = interrupted_result(call, read_only=read_only)
                if self.wording is not None:
                    synthetic = _worded(synthetic, call.name, self.wording)
                if self.unmarked:
                    synthetic = replace(synthetic, is_error=False)
                out.append(synthetic)
                self.interrupted.append(call)
                self.interrupted_at.append((start, ci))
                continue
            if at != follows:
                runs += len(out), at
            follows = at + 1
            found = history[at]
            out.append(replace(found, tool_call_id=call.id) if copies and found.tool_call_id != call.id
                       else found)
        for at in rest:
            if at < 0:
                runs += len(out), NOTE_SOURCE
                follows = -1
                out.append(orphan_note(history[-1 - at]))
                continue
            if at != follows:
                runs += len(out), at
            follows = at + 1
            out.append(history[at])
        if index != follows:
            runs += len(out), index  # what `run` outputs next as it stands
        return index

    def _from(self, position: int, source: int) -> None:
        """Output message `position` comes from `source` (an input index, or a marker for one note or synthetic
        result) and, with an input index, what follows it from the input messages after it."""
        runs = self.runs
        start, first = runs[-2], runs[-1]
        if start == position:
            runs[-1] = source  # the last run holds no message yet
        elif first < 0 or first + position - start != source:
            runs += position, source

    def _strip_unanswered(
        self, start: int, calls: tuple[ToolCall, ...], results: list[int], leave_open: bool
    ) -> tuple[tuple[ToolCall, ...], list[int]]:
        """`on_missing="strip"`: the span's answered calls under final ids (rule 5 for them alone, so that a
        stripped call takes no id) and their results; the others go to `stripped`. With `leave_open`, no call
        is stripped (the last reply's calls stay open)."""
        if leave_open or -1 not in results:
            return self._kept_calls(start, calls, range(len(calls))), results
        keep = [ci for ci, at in enumerate(results) if at >= 0]
        for ci, at in enumerate(results):
            if at < 0:
                self.stripped.append(calls[ci])
                self.stripped_at.append((start, ci))
        return self._kept_calls(start, calls, keep), [results[ci] for ci in keep]

    def _kept_calls(self, start: int, calls: tuple[ToolCall, ...], keep: Sequence[int]) -> tuple[ToolCall, ...]:
        """Rule 5 for the calls at `keep` of the assistant message at `start` (the original tuple when all are
        kept under their own ids; without copies, the calls keep their original ids)."""
        if not self.assign_ids:
            return calls if len(keep) == len(calls) else tuple(calls[ci] for ci in keep)
        ids, renamed = self.ids, self.renamed if self.renames else None
        kept: list[ToolCall] = []
        for ci in keep:
            call = calls[ci]
            final = ids.allocate(call.id, start, ci)
            if final != call.id:
                if renamed is not None:
                    renamed.append(RenamedId(start, ci, call.id, final))
                if self.copies:
                    call = replace(call, id=final)
            kept.append(call)
        if len(kept) == len(calls) and all(a is b for a, b in zip(kept, calls)):
            return calls
        return tuple(kept)

    def _renamed_calls(self, index: int, original: tuple[ToolCall, ...], first: int) -> tuple[ToolCall, ...]:
        """Rule 5 from call `first` on, the first one whose id is empty or already used: the calls under their
        final ids (without copies, the originals: the renames are in `renamed` and `ids`)."""
        ids = self.ids
        renamed = self.renamed if self.renames else None
        calls = list(original) if self.copies else None
        for ci in range(first, len(original)):
            call = original[ci]
            raw = call.id
            final = ids.allocate(raw, index, ci)
            if final != raw:
                if calls is not None:
                    calls[ci] = replace(call, id=final)
                if renamed is not None:
                    renamed.append(RenamedId(index, ci, raw, final))
        return original if calls is None else tuple(calls)

    def _final_call(self, call_index: int, call: ToolCall, n_calls: int) -> ToolCall:
        """A call of the span being output under its final id, when the pass makes no copies: rule 5 gave the
        span's `n_calls` calls the latest final ids, in order."""
        if not self.assign_ids:
            return call
        final = self.ids.in_order[call_index - n_calls]
        return call if final == call.id else replace(call, id=final)

    def _pair_results(
        self, history: list[ChatMessage], start: int, index: int, results: list[int]
    ) -> tuple[int, list[int]]:
        """Rule 3: each tool message takes the first unanswered call with its original id; others become notes.

        `results` holds the input index of each call's result, those answered in place so far (then -1); walks
        the span on from `index` and returns where it ends, and the span's other messages in their order: the
        index of each steer, `-1 - index` of each tool message that becomes a note.
        """
        calls = history[start].tool_calls
        n, first_open = len(calls), results.index(-1)
        # The first unanswered call of each original id (filled backwards, so the first index wins), and when
        # a reply repeats an id (Gemini's call_0 twice), after each call the next one with its id.
        waiting: dict[str, int] = {}
        for ci in range(n - 1, first_open - 1, -1):
            waiting[calls[ci].id] = ci
        later = next_with_same_id([c.id for c in calls]) if len(waiting) < n - first_open else None
        rest: list[int] = []
        in_place, last = True, first_open - 1
        end = len(history)
        while index < end:
            message = history[index]
            role = message.role
            if role == "tool":
                call_id = message.tool_call_id or ""
                ci = waiting.pop(call_id, -1)
                if ci >= 0:
                    results[ci] = index
                    if later is not None and later[ci] >= 0:
                        waiting[call_id] = later[ci]
                    if in_place and ci > last:
                        last = ci
                    else:
                        self.moved.append(index)
                    index += 1
                    continue
                self.notes.append(index)
                rest.append(-1 - index)
                in_place = False
                index += 1
                continue
            if role == "assistant":
                if message.tool_calls or not _is_blank(message):
                    break  # the next span, or a reply: this span ends here
                self.dropped.append(index)  # a placeholder (rule 1)
                index += 1
                continue
            in_place = False
            rest.append(index)
            index += 1
        return index, rest

    def mark(self) -> _Mark:
        """Where the pass is now, to roll back to (incremental repair reopens its last span)."""
        return _Mark(len(self.out), len(self.runs), len(self.interrupted), len(self.dropped), len(self.moved),
                     len(self.notes), len(self.renamed), len(self.stripped), self.ids.mark())

    def rollback(self, mark: _Mark) -> None:
        """Forget everything the pass did after `mark`: a mark is taken where `run` reads the next message, and
        from there on the pass only appends runs (`interrupted_at` is parallel to `interrupted`)."""
        del self.out[mark.out:], self.runs[mark.runs:], self.interrupted[mark.interrupted:]
        del self.interrupted_at[mark.interrupted:], self.dropped[mark.dropped:]
        del self.moved[mark.moved:], self.notes[mark.notes:], self.renamed[mark.renamed:]
        del self.stripped[mark.stripped:], self.stripped_at[mark.stripped:]
        self.ids.rollback(mark.ids)

    def result(self) -> RepairResult:
        """The repaired history and the report: the pass's own lists (for a pass that ends here)."""
        return RepairResult(self.out, self.interrupted, dropped=self.dropped, moved=self.moved, notes=self.notes,
                            renamed=self.renamed, final_ids=self.ids.in_order, interrupted_at=self.interrupted_at,
                            origin_runs=self.runs, stripped=self.stripped, stripped_at=self.stripped_at)

    def shared_result(self, stable: _Mark | None) -> RepairResult:
        """The result so far, for a caller to keep while the pass goes on (incremental repair), at the cost of
        what follows `stable`: the mark the pass may roll back to next (None: it will only append).

        The pass never changes its lists before that mark (it appends, and rolls back no further), so the result
        shares them up to it and copies the rest (and the last item of `runs` before the mark, which `_from` may
        still overwrite).
        """
        at = self._lengths() if stable is None else stable

        def kept(items: list[Any], length: int) -> SharedList[Any]:
            return SharedList(items, length, tuple(items[length:]))

        return RepairResult._sharing(
            messages=kept(self.out, at.out), interrupted=kept(self.interrupted, at.interrupted),
            dropped=kept(self.dropped, at.dropped), moved=kept(self.moved, at.moved), notes=kept(self.notes, at.notes),
            renamed=kept(self.renamed, at.renamed), final_ids=kept(self.ids.in_order, at.ids),
            interrupted_at=kept(self.interrupted_at, at.interrupted), origin_runs=kept(self.runs, at.runs - 1),
            stripped=kept(self.stripped, at.stripped), stripped_at=kept(self.stripped_at, at.stripped))

    def _lengths(self) -> _Mark:
        """Where the pass is now, as `mark` says it, without starting a journal of ids to roll back."""
        return _Mark(len(self.out), len(self.runs), len(self.interrupted), len(self.dropped), len(self.moved),
                     len(self.notes), len(self.renamed), len(self.stripped), len(self.ids.in_order))


def next_with_same_id(ids: Sequence[str]) -> list[int]:
    """For each call of one reply (by id), the index of the next call with the same id (-1: none)."""
    later = [-1] * len(ids)
    seen: dict[str, int] = {}
    for ci in range(len(ids) - 1, -1, -1):
        later[ci] = seen.get(ids[ci], -1)
        seen[ids[ci]] = ci
    return later
