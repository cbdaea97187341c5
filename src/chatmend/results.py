"""What a repair returns: plain values that pickle, copy and subclass as any dataclass does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from chatmend.messages import ChatMessage, ToolCall

__all__ = ["RenamedId", "RepairResult"]


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
    final_ids: list[str] = field(default_factory=list)
    """The final id of every call in the repaired history, in history order (rule 5: no two alike)."""

    @property
    def changed(self) -> bool:
        """True when the repaired history differs from the input."""
        return bool(self.interrupted or self.dropped or self.moved or self.notes or self.renamed)
