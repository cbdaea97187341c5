"""What a repair returns: plain values that pickle, copy and subclass as any dataclass does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeVar

from chatmend.messages import ChatMessage, ToolCall

__all__ = ["NOTE_SOURCE", "SYNTHETIC_SOURCE", "Origin", "RenamedId", "RepairResult"]

NOTE_SOURCE = -1
"""In `RepairResult.origin_runs`: one user note, made from the tool message of the next index of `notes`."""
SYNTHETIC_SOURCE = -2
"""In `RepairResult.origin_runs`: one synthetic result, for the call of the next index of `interrupted_at`."""


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SharedList(Generic[T]):
    """A list's items at one moment, without a copy of them all: the first `shared` items of `items`, a list whose
    owner never changes those again (it may append to it, or remove what follows them), then `rest`."""

    items: list[T]
    shared: int
    rest: tuple[T, ...]

    def to_list(self) -> list[T]:
        """The items as a new list of their own."""
        copied = self.items[: self.shared]
        copied.extend(self.rest)
        return copied


class RenamedId(NamedTuple):
    """A call whose id changed: the assistant message's input index, the call's index in it, old and new id."""

    message_index: int
    call_index: int
    old: str
    new: str


class Origin(NamedTuple):
    """Where one output message came from (`RepairResult.origins`).

    - `input`: it is the input message at `message_index`: the same object, or a copy under final ids (rule 5)
      or without its stripped calls (`on_missing="strip"`);
    - `synthetic`: the synthetic result (rule 6) of call `call_index` of the assistant message at `message_index`;
    - `note`: the user note (rule 7) made from the tool message at `message_index`.
    """

    kind: Literal["input", "synthetic", "note"]
    message_index: int
    """A position in the input list."""
    call_index: int | None = None
    """For `synthetic`: the position of the call answered in its assistant message (None otherwise)."""


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
    """Whitespace-only assistant messages without calls that were removed (with `on_missing="strip"`, also those
    left so by stripping their calls), in input order."""
    moved: list[int] = field(default_factory=list)
    """Results that were moved to just after their call."""
    notes: list[int] = field(default_factory=list)
    """Tool results with no call in their span, turned into user notes (in output order, as in input order)."""
    renamed: list[RenamedId] = field(default_factory=list)
    """Calls whose id was empty or already used."""
    final_ids: list[str] = field(default_factory=list)
    """The final id of every call in the repaired history, in history order (rule 5: no two alike)."""
    interrupted_at: list[tuple[int, int]] = field(default_factory=list)
    """Where each call of `interrupted` stands in the input: (assistant message index, call index)."""
    origin_runs: list[int] = field(default_factory=lambda: [0, 0])
    """Where the output messages came from, compactly (`origins()` spells it out): (output position, input index)
    pairs, flattened, in order, each saying that from that position on, up to the next pair's, every output
    message is the next input message (itself, or a copy under final ids); `NOTE_SOURCE` or `SYNTHETIC_SOURCE` in
    place of the index marks one note or synthetic result. Most histories keep long runs: this costs little to
    record."""
    stripped: list[ToolCall] = field(default_factory=list)
    """With `on_missing="strip"`: the calls that had no result and were removed, as they were in the input (they
    have no final id), in history order."""
    stripped_at: list[tuple[int, int]] = field(default_factory=list)
    """Where each call of `stripped` stood in the input: (assistant message index, call index)."""

    @property
    def changed(self) -> bool:
        """True when the repaired history differs from the input."""
        return bool(self.interrupted or self.dropped or self.moved or self.notes or self.renamed or self.stripped)

    def origins(self) -> list[Origin]:
        """The origin of every output message, in output order (built from `origin_runs` on each call)."""
        notes, calls = iter(self.notes), iter(self.interrupted_at)
        runs = self.origin_runs
        ends = runs[2::2]
        ends.append(len(self.messages))
        out: list[Origin] = []
        for start, source, end in zip(runs[::2], runs[1::2], ends):
            if source >= 0:
                out.extend(Origin("input", i) for i in range(source, source + end - start))
            elif source == NOTE_SOURCE:
                out.extend(Origin("note", next(notes)) for _ in range(start, end))
            else:
                out.extend(Origin("synthetic", *next(calls)) for _ in range(start, end))
        return out

    @classmethod
    def _sharing(cls, **fields: SharedList[Any]) -> RepairResult:
        """A result whose fields are `fields`' lists, each made when it is first read (then kept): an incremental
        step returns its result without copying every list of a long history, and a caller pays for the fields it
        reads. What the result holds is fixed here, as if copied now (each `SharedList` holds its items at this
        moment); pickling or copying it makes every field."""
        result = cls.__new__(cls)
        result.__dict__["_shared"] = fields
        return result

    def _made_field(self, name: str) -> object:
        """A field of a result made by `_sharing`, read for the first time: its own list, kept for the next reads
        (two threads reading it at once both get the one that was stored first)."""
        shared: dict[str, SharedList[Any]] | None = self.__dict__.get("_shared")
        if shared is None or name not in shared:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.__dict__.setdefault(name, shared[name].to_list())

    if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute name
        __getattr__ = _made_field

    def __getstate__(self) -> dict[str, object]:
        """What pickle and copy take: the instance's attributes, every field made (none of them left shared)."""
        state = dict(self.__dict__)
        for name in state.pop("_shared", ()):
            state[name] = getattr(self, name)
        return state
