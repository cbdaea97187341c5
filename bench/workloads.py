"""Named benchmark workloads: large histories built deterministically, as agents produce them."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from chatmend import ChatMessage, ImagePart, TextPart, ToolCall

__all__ = ["anthropic_messy_body", "chat_messy_body", "kimi_messy", "mixed_messy", "one_turn", "unique_messy",
           "valid_unique"]

_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

IdFor = Callable[[random.Random, int, int], str]
"""The id of call `i` of reply `turn`."""


def kimi_messy(n_messages: int, seed: int = 7) -> list[ChatMessage]:
    """A messy history where every reply restarts its ids (Kimi's functions.search:0): the worst case."""
    return _messy(n_messages, seed, lambda rng, turn, i: f"functions.search:{i}")


def mixed_messy(n_messages: int, seed: int = 7, restart_share: float = 0.1) -> list[ChatMessage]:
    """A messy history where some replies restart their ids (a Kimi or Gemini model) and most do not."""

    def id_for(rng: random.Random, turn: int, i: int) -> str:
        # One draw per reply decides (seeded by the turn, so every call of a reply agrees).
        restarts = random.Random(seed * 1_000_003 + turn).random() < restart_share
        return f"functions.search:{i}" if restarts else f"call_{turn:06d}_{i}"

    return _messy(n_messages, seed, id_for)


def unique_messy(n_messages: int, seed: int = 7) -> list[ChatMessage]:
    """A messy history with unique ids (missing, reordered and orphan results, steers, placeholders)."""
    return _messy(n_messages, seed, lambda rng, turn, i: f"call_{turn:06d}_{i}")


def _messy(n_messages: int, seed: int, id_for: IdFor) -> list[ChatMessage]:
    """Results missing (Ctrl-C) or in completion order, steers typed while tools ran, orphan screenshots."""
    rng = random.Random(seed)
    out: list[ChatMessage] = [ChatMessage(role="system", content="You are a careful coding agent.")]
    turn = 0
    while len(out) < n_messages:
        turn += 1
        out.append(ChatMessage(role="user", content=f"step {turn}: look at the failing test and fix it"))
        n_calls = rng.choice((1, 1, 2, 3))
        calls = tuple(
            ToolCall(id=id_for(rng, turn, i), name="search", arguments={"q": f"term {turn}.{i}", "limit": 5})
            for i in range(n_calls)
        )
        out.append(ChatMessage(role="assistant", content="Let me look.", tool_calls=calls))
        results = [
            ChatMessage(role="tool", tool_call_id=c.id, tool_name=c.name, content=f"{turn}: 3 hits in src/")
            for c in calls
            if rng.random() > 0.1  # one result in ten is missing (Ctrl-C, a crash)
        ]
        if rng.random() < 0.2:
            rng.shuffle(results)  # results saved in completion order
        if rng.random() < 0.1:  # the user typed while the tools ran
            results.insert(rng.randrange(len(results) + 1), ChatMessage(role="user", content="also check docs"))
        if rng.random() < 0.05:
            results.append(ChatMessage(role="tool", tool_call_id="shot", content=(
                TextPart(text="screenshot"), ImagePart(media_type="image/png", data=_PNG))))
        out.extend(results)
        if rng.random() < 0.05:
            out.append(ChatMessage(role="assistant", content=" "))  # a placeholder saved before tools ran
        out.append(ChatMessage(role="assistant", content=f"Done with step {turn}."))
    return out[:n_messages]


def valid_unique(n_messages: int, seed: int = 11) -> list[ChatMessage]:
    """An already valid history with unique ids: every call answered right after it, in order."""
    rng = random.Random(seed)
    out: list[ChatMessage] = [ChatMessage(role="system", content="You are a careful coding agent.")]
    turn = 0
    while len(out) < n_messages:
        turn += 1
        out.append(ChatMessage(role="user", content=f"step {turn}: run the tests"))
        calls = tuple(
            ToolCall(id=f"call_{turn}_{i}", name="shell", arguments={"cmd": f"pytest -k t{turn}"})
            for i in range(rng.choice((1, 2)))
        )
        out.append(ChatMessage(role="assistant", content="", tool_calls=calls))
        out.extend(ChatMessage(role="tool", tool_call_id=c.id, tool_name=c.name, content="1 passed") for c in calls)
        out.append(ChatMessage(role="assistant", content=f"Step {turn} passes."))
    # Cut only where the history stays valid: never between a call and its results.
    while out[-1].role == "tool" or out[-1].tool_calls:
        out.pop()
    return out


def one_turn(turn: int) -> list[ChatMessage]:
    """What an agent appends in one turn: a reply with two calls (Kimi-style ids) and their results."""
    calls = tuple(ToolCall(id=f"functions.read:{i}", name="read", arguments={"path": f"src/f{turn}_{i}.py"})
                  for i in range(2))
    results = [ChatMessage(role="tool", tool_call_id=c.id, tool_name=c.name, content="def f(): ...") for c in calls]
    return [ChatMessage(role="assistant", content="Reading both files.", tool_calls=calls), *results]


# --- request bodies as saved by agents (dicts in a provider's wire format), for `repair_body` -------------------


def chat_messy_body(n_messages: int, seed: int = 5, reuse: float = 0.02) -> dict[str, Any]:
    """An OpenAI Chat Completions body of `n_messages` messages as a messy agent log saves it: interrupted turns
    (no result at all), results missing or in completion order, orphan results, steers typed while tools ran,
    and call ids used twice (`reuse`: the share of calls under an id an earlier turn used, as a retried turn replayed
    under the same ids)."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding agent."}]
    used: list[str] = []
    turn = 0
    while len(items) < n_messages:
        turn += 1
        items.append({"role": "user", "content": f"step {turn}: look at the failing test and fix it"})
        ids = [_next_id(rng, used, turn, i, reuse) for i in range(rng.choice((1, 1, 2, 3)))]
        items.append({"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "search", "arguments": f'{{"q": "term {turn}.{i}", "limit": 5}}'}}
            for i, call_id in enumerate(ids)]})
        results: list[dict[str, Any]] = []
        if rng.random() > 0.03:  # 3% of turns interrupted before any result (Ctrl-C)
            results = [{"role": "tool", "tool_call_id": call_id, "content": f"{turn}: 3 hits in src/"}
                       for call_id in ids if rng.random() > 0.1]  # one result in ten lost
        _mess_up(rng, results, {"role": "user", "content": "also check docs"},
                 {"role": "tool", "tool_call_id": f"gone_{turn}", "content": "a result of a call trimmed away"})
        items.extend(results)
        items.append({"role": "assistant", "content": f"Done with step {turn}."})
    return {"model": "gpt-4.1", "messages": items[:n_messages], "temperature": 0}


def anthropic_messy_body(n_messages: int, seed: int = 5, reuse: float = 0.02) -> dict[str, Any]:
    """An Anthropic Messages body of `n_messages` messages, as messy as `chat_messy_body`: a user turn holds the
    results of the turn before (missing ones, orphans, results after the text of a steer), some turns were
    interrupted (no results), and some ids were used twice."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    used: list[str] = []
    turn = 0
    pending: list[dict[str, Any]] = [{"type": "text", "text": "look at the failing test and fix it"}]
    while len(items) < n_messages:
        turn += 1
        items.append({"role": "user", "content": pending})
        ids = [_next_id(rng, used, turn, i, reuse) for i in range(rng.choice((1, 1, 2, 3)))]
        items.append({"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            *({"type": "tool_use", "id": call_id, "name": "search", "input": {"q": f"term {turn}.{i}", "limit": 5}}
              for i, call_id in enumerate(ids))]})
        blocks: list[dict[str, Any]] = []
        if rng.random() > 0.03:  # interrupted: the next user turn has no results
            blocks = [{"type": "tool_result", "tool_use_id": call_id, "content": f"{turn}: 3 hits in src/"}
                      for call_id in ids if rng.random() > 0.1]
        _mess_up(rng, blocks, {"type": "text", "text": "also check docs"},
                 {"type": "tool_result", "tool_use_id": f"gone_{turn}", "content": "a result of a call trimmed away"})
        pending = [*blocks, {"type": "text", "text": f"step {turn + 1}: next"}]
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "You are a careful coding agent.",
            "messages": items[:n_messages]}


def _next_id(rng: random.Random, used: list[str], turn: int, i: int, reuse: float) -> str:
    """A call's id: a new one, or (a share `reuse` of them) one an earlier turn already used."""
    if used and rng.random() < reuse:
        return rng.choice(used)
    call_id = f"call_{turn:06d}_{i}"
    used.append(call_id)
    return call_id


def _mess_up(rng: random.Random, results: list[dict[str, Any]], steer: dict[str, Any],
             orphan: dict[str, Any]) -> None:
    """Results in completion order (20%), a steer among them (10%), an orphan result (5%)."""
    if rng.random() < 0.2:
        rng.shuffle(results)
    if rng.random() < 0.1:
        results.insert(rng.randrange(len(results) + 1), steer)
    if rng.random() < 0.05:
        results.append(orphan)
