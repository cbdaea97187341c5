"""`trim_history`: fit a history into a budget by dropping whole turns from the oldest end.

A cut is only ever made where nothing depends on what came before it: at a user message that no tool
result of an earlier call follows (so no call is split from its result, and the kept history starts with
a user message after its system messages, as every provider accepts). Trimming does not repair: what the
kept part holds is repaired as it would be in the whole history (the same results paired, the same calls
answered as interrupted), and `repair_history` or an adapter's `to_request` does that on the way out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chatmend.jsonl import dump_line
from chatmend.messages import ChatMessage, coerce_history
from chatmend.repair import is_placeholder

__all__ = ["TokenCounter", "TrimResult", "cut_points", "rough_tokens", "trim_history"]

TokenCounter = Callable[[ChatMessage], int]
"""Counts the tokens of one message (a non-negative int)."""


def rough_tokens(message: ChatMessage) -> int:
    """The default counter: a quarter of the characters of the message's canonical JSON line, rounded up.

    Rough by design (English text runs about four characters a token; JSON keys and base64 images make it
    overcount, which errs on the side of fitting). For exact figures pass a real counter as `count=`.
    """
    return (len(dump_line(message)) + 3) // 4


@dataclass(frozen=True)
class TrimResult:
    """What `trim_history` kept and dropped: `kept` is `messages[:head] + messages[start:]`, `dropped` is
    `messages[head:start]` (so the two partition the input, each in its order)."""

    kept: list[ChatMessage]
    """The history to send: the pinned head, then every message from `start` on."""
    dropped: list[ChatMessage]
    """The messages left out, oldest first."""
    start: int
    """The cut: the input index of the first message kept after the head (`head` when nothing was dropped).
    Pass the result (or this index) as `previous` next turn so the cut stays put."""
    head: int
    """How many leading messages are always kept: the system messages at the top (with `keep_system`), and the
    first user message after them (with `keep_first_user`)."""
    fits: bool
    """False when even the last turn alone is over budget: it is kept anyway (never an invalid history)."""
    tokens: int
    """The count of `kept`, by the counter used."""


def cut_points(messages: Sequence[ChatMessage], head: int = 0) -> list[int]:
    """Every index at or after `head` where a history may be cut: `head` itself (nothing dropped), then each
    user message that no result of a still-open call follows.

    A span (an assistant message with calls, up to the next assistant message that is not a placeholder) may
    hold a user message typed while the tools ran, with results after it: cutting there would orphan them.
    """
    n = len(messages)
    # tool_ahead[i]: a tool message stands in [i, next non-placeholder assistant message).
    tool_ahead = [False] * (n + 1)
    ahead = False
    for i in range(n - 1, -1, -1):
        message = messages[i]
        if message.role == "tool":
            ahead = True
        elif message.role == "assistant" and not is_placeholder(message):
            ahead = False
        tool_ahead[i] = ahead
    points = [head]
    open_span = False
    for i in range(n):
        message = messages[i]
        if message.role == "assistant" and not is_placeholder(message):
            open_span = bool(message.tool_calls)
        elif i > head and message.role == "user" and not (open_span and tool_ahead[i]):
            points.append(i)
    return points


def trim_history(
    messages: Sequence[ChatMessage | dict[str, object]] | Sequence[object],
    *,
    max_tokens: int | None = None,
    max_messages: int | None = None,
    count: TokenCounter = rough_tokens,
    keep_system: bool = True,
    keep_first_user: bool = False,
    previous: TrimResult | int | None = None,
    headroom: float = 0.0,
) -> TrimResult:
    """Drop whole turns from the oldest end until the history fits `max_tokens` (by `count`, summed over the kept
    messages) and `max_messages`; a limit left at None does not limit.

    The cut is the earliest `cut_points` index that fits: a turn is never split, a call never loses its result,
    and the kept history never starts (after its head) with a tool result or an assistant message. When not
    even the last turn fits, it is kept anyway and `fits` is False. The head is never dropped: the system
    messages at the top (`keep_system`) and, with `keep_first_user`, the user message right after them (the
    task an agent was given).

    Turn after turn, pass the last result as `previous`: the cut never moves back (except in the one case where
    it must: a result that arrived after a user message typed while its tool ran, with no later user message to
    cut at), and it stays where it was as long as the history fits from there, so the kept history grows only at
    its end and the provider's prompt cache keeps hitting.
    `headroom` (0 to 1) is how far past the need a cut moves when it has to: it then cuts until the kept part
    uses at most `(1 - headroom)` of each limit, so that the next turns fit without moving it again (the cache
    is lost once per move, not once per turn).

    `count` is any callable taking a ChatMessage, e.g. with tiktoken::

        enc = tiktoken.get_encoding("o200k_base")
        trim_history(history, max_tokens=100_000, count=lambda m: len(enc.encode(chatmend.jsonl.dump_line(m))))

    It is called once per message, in order, and must return a non-negative int.

    Deterministic (the same input, limits and `previous` give the same cut) and pure: the input is not
    mutated, and `kept` and `dropped` hold the input's own ChatMessage objects (dicts are validated into
    ChatMessages). Trimming a kept history again with the same limits keeps it whole when `fits` is True.
    """
    history = coerce_history(messages)
    if max_tokens is not None and max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")
    if max_messages is not None and max_messages < 0:
        raise ValueError(f"max_messages must be >= 0, got {max_messages}")
    if not 0.0 <= headroom < 1.0:
        raise ValueError(f"headroom must be in [0, 1), got {headroom}")
    n = len(history)
    head = 0
    if keep_system:
        while head < n and history[head].role == "system":
            head += 1
    if keep_first_user and head < n and history[head].role == "user":
        head += 1
    tokens = []
    for i, message in enumerate(history):
        value = count(message)
        if type(value) is not int or value < 0:
            raise ValueError(f"count returned {value!r} for message {i}; expected a non-negative int")
        tokens.append(value)
    # suffix[i]: the tokens of history[i:].
    suffix = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + tokens[i]
    head_tokens = suffix[0] - suffix[head]

    def size(start: int) -> tuple[int, int]:
        return head_tokens + suffix[start], head + n - start

    def within(start: int, scale: float) -> bool:
        used, length = size(start)
        return ((max_tokens is None or used <= max_tokens * scale)
                and (max_messages is None or length <= max_messages * scale))

    floor = previous.start if isinstance(previous, TrimResult) else (previous or 0)
    every = cut_points(history, head)
    # With no cut point left at or after the previous cut (a result that arrived after a user message typed
    # while its tool ran, making that cut split a call from its result; or another history), the last one.
    points = [p for p in every if p >= floor] or every[-1:]
    start = points[0]
    if not within(start, 1.0):
        # The cut has to move: as far as the headroom asks, or to the last turn.
        start = next((p for p in points if within(p, 1.0 - headroom)), points[-1])
    return TrimResult(kept=history[:head] + history[start:], dropped=history[head:start], start=start, head=head,
                      fits=within(start, 1.0), tokens=size(start)[0])
