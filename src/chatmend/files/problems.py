"""What `check` says of a session read from a file or a store, by the neutral rules (each would make any
provider answer with a 400), located where each message was read."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chatmend import ChatMessage, RepairResult
from chatmend.answer_order import keep_answer_order
from chatmend.files.bodies import adapter
from chatmend.files.session import Session

__all__ = ["as_sent", "body_problems", "neutral_problems", "problems_of"]

_ITEM = re.compile(r"^[a-z]+\[(\d+)\]")


def body_problems(session: Session, *, model: str | None = None, platform: str | None = None) -> list[str]:
    """What the provider would refuse in a body read from a file (`session.body`), in its words, each at its path
    in the body (and its line, where the body's list was read from JSON Lines)."""
    assert session.body is not None and session.provider is not None
    return [f"{p.path}: {p.code}: {p.message}{_item_line(session, p.path)}"
            for p in adapter(session.provider).check(session.body, model=model, platform=platform)]


def _item_line(session: Session, path: str) -> str:
    """` (line N)` for a problem in JSON Lines of a body's list, naming the line of its item."""
    match = _ITEM.match(path)
    if not match or not session.item_lines or int(match.group(1)) >= len(session.item_lines):
        return ""
    return f" (line {session.item_lines[int(match.group(1))]})"


def neutral_problems(session: Session, result: RepairResult) -> list[str]:
    """What repair would change (`result`, the session's repair), as problems: each would make any provider
    answer with a 400. Where the history lives in a store or a body, results written in the order their tools
    finished are not one (`keep_answer_order`)."""
    return problems_of(session.messages, session.where, as_sent(session, result))


def as_sent(session: Session, result: RepairResult) -> RepairResult:
    """The session's repair (`result`) as a store or body repair makes it: the results its client wrote in the
    order their tools finished left so (`keep_answer_order`); the neutral JSON Lines keep the neutral rules."""
    return result if session.format == "chatmend" else keep_answer_order(session.messages, result)


def problems_of(messages: Sequence[ChatMessage], located: Sequence[str], result: RepairResult, offset: int = 0,
                ) -> list[str]:
    """`neutral_problems` of a history (`located`: where each message was read) or of a part of one that starts
    at message `offset` of the whole (a transcript repaired part by part), numbered in the whole."""
    found: list[tuple[int, int, str]] = []

    def line(index: int) -> str:
        where = located[index] if index < len(located) else ""
        return f" ({where})" if where.startswith("line ") else ""

    for i in result.dropped:
        found.append((i, -1, f"messages[{offset + i}]: R1: a whitespace-only assistant message without calls "
                             f"(a placeholder) ends the span of the calls before it{line(i)}"))
    for i in result.moved:
        found.append((i, -1, f"messages[{offset + i}]: R4: the result for call {messages[i].tool_call_id} is "
                             f"not right after its call, in call order{line(i)}"))
    for i in result.notes:
        orphan = messages[i].tool_call_id or "(empty id)"
        found.append((i, -1, f"messages[{offset + i}]: R3: a tool result for {orphan} has no call in its span"
                             f"{line(i)}"))
    for r in result.renamed:
        why = "is empty" if not r.old else "is already used by an earlier call"
        found.append((r.message_index, r.call_index,
                      f"messages[{offset + r.message_index}].tool_calls[{r.call_index}]: R5: the call id "
                      f"{r.old!r} {why}{line(r.message_index)}"))
    for call, (mi, ci) in zip(result.interrupted, result.interrupted_at):
        found.append((mi, ci, f"messages[{offset + mi}].tool_calls[{ci}]: R6: the call {call.id} ({call.name}) "
                              f"has no result{line(mi)}"))
    return [text for _, _, text in sorted(found)]
