"""The Session every reader returns: the neutral history and how to write one back in the same format."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chatmend import ChatMessage, RepairResult, repair_history
from chatmend.files.io import FileBytes
from chatmend.repair import IsReadOnly

__all__ = ["InFormat", "RepairSummary", "Session", "Streamed", "StreamedRepair", "Writer"]

Writer = Callable[[Sequence[ChatMessage]], Iterator[str]]


@dataclass(frozen=True)
class InFormat:
    """A repair done in the file's own format: a provider's body repaired by its adapter's `repair_body`, every
    item repair left alone kept as it was."""

    result: RepairResult
    """The neutral repair behind it."""
    chunks: Iterator[str]
    """The repaired file's text."""
    messages: list[ChatMessage]
    """The history the repair read (the result's indices are positions in it)."""
    where: list[str]
    """For each of those messages, where it was read from."""
    rewritten: list[str]
    """Where each item written anew stands in the output (`messages[3]`, `line 4`)."""


@dataclass
class RepairSummary:
    """What a repair changed, located in the input: `repair`'s report of a file repaired part by part (a large
    transcript streamed), where no whole result exists."""

    changed: bool = False
    messages: int = 0
    """How many messages the repaired history holds."""
    moved: list[tuple[str, str | None]] = field(default_factory=list)
    """(where, call id) of each result moved to just after its call."""
    interrupted: list[tuple[str, str]] = field(default_factory=list)
    """(id, name) of each call answered as interrupted."""
    notes: list[tuple[str, str | None]] = field(default_factory=list)
    """(where, call id) of each orphan result turned into a note."""
    renamed: list[tuple[str, str, str]] = field(default_factory=list)
    """(where, old id, new id) of each renamed call."""
    dropped: list[str] = field(default_factory=list)
    """Where each placeholder dropped stood."""
    interrupted_as_read: list[str] = field(default_factory=list)
    """The id each call answered as interrupted had as read (before rule 5 renamed it)."""
    fixes: list[str] = field(default_factory=list)
    """What the repair changed in the store beyond the history (records relinked), as `Session.fixes`."""

    @classmethod
    def of(cls, messages: Sequence[ChatMessage], where: Sequence[str], result: RepairResult) -> RepairSummary:
        """The summary of a repair of `messages` (`where`: where each was read)."""

        def at(index: int) -> str:
            return where[index] if index < len(where) else f"message {index}"

        return cls(
            changed=result.changed, messages=len(result.messages),
            moved=[(at(i), messages[i].tool_call_id) for i in result.moved],
            interrupted=[(c.id, c.name) for c in result.interrupted],
            notes=[(at(i), messages[i].tool_call_id) for i in result.notes],
            renamed=[(at(r.message_index), r.old, r.new) for r in result.renamed],
            dropped=[at(i) for i in result.dropped],
            interrupted_as_read=[messages[mi].tool_calls[ci].id for mi, ci in result.interrupted_at])

    def add(self, other: RepairSummary) -> None:
        """`other`'s changes after this one's (a part repaired after the parts before it)."""
        self.changed = self.changed or other.changed
        self.messages += other.messages
        self.moved += other.moved
        self.interrupted += other.interrupted
        self.notes += other.notes
        self.renamed += other.renamed
        self.dropped += other.dropped
        self.interrupted_as_read += other.interrupted_as_read


@dataclass
class Session:
    """A history read from a file, and how to write one back in the same format."""

    format: str
    """The format's name, as `--from` spells it."""
    messages: list[ChatMessage]
    """The neutral history."""
    where: list[str]
    """For each message, where it was read from (`line 4`, `messages[3]`), for reports."""
    write: Writer
    """The text of a history in this format, in chunks (keeps what the reader did not use)."""
    provider: str | None = None
    """The provider whose rules `check` applies with no `--provider` (None: the neutral rules)."""
    body: dict[str, Any] | None = None
    """The saved request body as read (for `check`), when the file is one."""
    model: str | None = None
    """The model the file names, if any."""
    item_lines: list[int] = field(default_factory=list)
    """For JSON Lines of a body's list: the line of each item (so `messages[3]` can say `line 7`)."""
    warnings: list[str] = field(default_factory=list)
    """What the reader kept without reading it and a person should know (a half-written line), located."""
    problems: list[str] = field(default_factory=list)
    """What the store holds that the provider refuses beyond the history (an item id of the wrong prefix), each
    located (`line 4: payload.id: OR4: ...`): `check` reports them, `repair` fixes them (`fixes`)."""
    fixes: list[str] = field(default_factory=list)
    """What a session store's repair fixed beyond the history (a response stored twice), filled by `repair`."""
    repair_and_write: Callable[[IsReadOnly | None], tuple[RepairResult, Iterator[str]]] | None = field(default=None)
    """What `repaired` returns, made by the format itself, for formats whose writer needs the repair: transcripts
    trace each message to its source records by its origin, provider bodies write through the Repairer that made it."""

    repair_in_format: Callable[[IsReadOnly | None], InFormat] | None = field(default=None)
    """For a provider's body (or its list): the repair in its own format, which changes only what repair must
    (`Provider.repair_body`); `repair_and_write` writes the whole list anew."""

    def repaired(self, is_read_only: IsReadOnly | None) -> tuple[RepairResult, Iterator[str]]:
        """The repair result and the repaired file's text in this format."""
        if self.repair_and_write is not None:
            return self.repair_and_write(is_read_only)
        result = repair_history(self.messages, is_read_only=is_read_only)
        return result, self.write(result.messages)


@dataclass
class StreamedRepair:
    """A repair written a part at a time: `chunks` is the repaired file's bytes (what repair leaves as it is, the
    file's own bytes as `FileBytes`, never read into memory where the writer copies file to file), and `summary`
    is complete once they have all been taken."""

    summary: RepairSummary
    chunks: Iterator[bytes | FileBytes]


class Streamed(Protocol):
    """A file its format's reader checks and repairs a part at a time, holding only what each record links
    (`formats.streamed`): what comes out is what reading it whole (`Session`) gives."""

    format: str
    provider: str

    def check(self) -> list[str] | None:
        """`check`'s problem lines by the provider's rules, or None when the file must be read whole for them."""

    def findings(self) -> tuple[list[str], RepairSummary]:
        """The neutral rules' problem lines (whatever the blocks hold) and what repair would change."""

    def repair(self, is_read_only: IsReadOnly | None) -> StreamedRepair:
        """The repaired file and its summary."""

    def still_as_read(self) -> bool:
        """True when the file holds the bytes the first pass read (read again as it is repaired, it must)."""
