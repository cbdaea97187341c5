"""Named benchmark workloads: large histories built deterministically, as agents produce them."""

from __future__ import annotations

import random

from chatmend import ChatMessage, ImagePart, TextPart, ToolCall

__all__ = ["kimi_messy", "valid_unique"]

_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def kimi_messy(n_messages: int, seed: int = 7) -> list[ChatMessage]:
    """A messy history: Kimi-style ids restarting every reply, results missing or reordered, steers."""
    rng = random.Random(seed)
    out: list[ChatMessage] = [ChatMessage(role="system", content="You are a careful coding agent.")]
    turn = 0
    while len(out) < n_messages:
        turn += 1
        out.append(ChatMessage(role="user", content=f"step {turn}: look at the failing test and fix it"))
        n_calls = rng.choice((1, 1, 2, 3))
        calls = tuple(
            ToolCall(id=f"functions.search:{i}", name="search", arguments={"q": f"term {turn}.{i}", "limit": 5})
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
