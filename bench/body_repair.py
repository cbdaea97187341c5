"""Repairing a saved request body in its own format (issue #22): chatmend's `repair_body` against the PyPI
libraries that repair such dicts, side by side in one process.

    pip install -e '.[dev,bench]'
    python bench/body_repair.py              # 20,000-message messy OpenAI Chat and Anthropic bodies
    python bench/body_repair.py --messages 2000 --runs 5

Each body is built by `bench/workloads.py` (`chat_messy_body`, `anthropic_messy_body`): interrupted turns, lost
results, results in completion order, orphan results, steers among results, call ids used twice. Every
candidate repairs the same dict; each runs once per round, in rotating order, and a ratio (its time over
chatmend's) is taken within each round: the figure is the median of those ratios, with their middle half in
brackets (bench/timing.py). CPU time of this process (`--clock wall` for elapsed time).

After timing, each output is checked: "left" counts the problems chatmend's `check` of the same provider finds
in it (the body's own list replaced by the output); pydantic-ai repairs its own message objects, which are
written as the Chat list they stand for, one message a message, and checked with Chat's rules.

Target: chatmend at least 2x faster than the fastest candidate that leaves no problem, leaving none itself.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import providers
from timing import CLOCKS, interleaved, interpreter, median, paired_ratio
from workloads import anthropic_messy_body, chat_messy_body

TARGET = 2.0
"""chatmend at least this many times faster than the fastest candidate that leaves no problem."""

WIRE = {"openai_chat": "openai", "anthropic": "anthropic"}
"""The provider names the candidates use for the two formats."""

Candidate = Callable[[], Any]


def candidates(provider: str, body: dict[str, Any]) -> tuple[dict[str, Candidate], dict[str, str]]:
    """What repairs `body` (a `provider` body), each as a call; and, for each that cannot run, why not."""
    adapter = providers.get(provider)
    items = body["messages"]
    wire = WIRE[provider]
    found: dict[str, Candidate] = {"chatmend": partial(adapter.repair_body, body)}
    missing: dict[str, str] = {}
    try:
        import toolrepair

        found["tool-call-repair"] = partial(toolrepair.repair, items, format=wire, strategy="synthesize")
    except ImportError as exc:
        missing["tool-call-repair"] = f"not installed ({exc})"
    try:
        import turnsafe

        found["turnsafe"] = partial(turnsafe.repair, items, wire)
    except ImportError as exc:
        missing["turnsafe"] = f"not installed ({exc})"
    try:
        import toolpatch

        if provider == "openai_chat":
            found["toolpatch"] = partial(toolpatch.normalize_chat_request, body)
        else:
            missing["toolpatch"] = "OpenAI Chat requests only (normalize_chat_request)"
    except ImportError as exc:
        missing["toolpatch"] = f"not installed ({exc})"
    try:
        import tessera

        found["tessera-transcript"] = partial(tessera.repair, items, adapter=wire)
    except ImportError as exc:
        missing["tessera-transcript"] = f"not installed ({exc})"
    try:
        from pydantic_ai.messages import repair_messages

        from scale import to_pydantic_ai

        theirs = [to_pydantic_ai(m) for m in adapter.from_request(body)]
        found["pydantic-ai"] = partial(repair_messages, theirs)
    except ImportError as exc:
        missing["pydantic-ai"] = f"not installed ({exc})"
    return found, missing


def refusals(found: dict[str, Candidate]) -> dict[str, str]:
    """The candidates that raise on the body (tessera refuses ids used twice), with what they said."""
    refused = {}
    for name, run in found.items():
        try:
            run()
        except Exception as exc:  # a candidate's own error: reported, not timed
            refused[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    return refused


def problems_left(provider: str, body: dict[str, Any], name: str, output: Any) -> int:
    """How many problems chatmend's check finds in a candidate's output."""
    if name == "chatmend":
        repaired: dict[str, Any] = output.body
    elif name == "toolpatch":
        repaired = output[0]
    elif name == "tessera-transcript":
        repaired = {**body, "messages": list(output.transcript)}
    elif name == "pydantic-ai":
        repaired, provider = {"model": "gpt-4.1", "messages": chat_list_of_pydantic_ai(output)}, "openai_chat"
    else:
        repaired = {**body, "messages": output}
    return len(providers.get(provider).check(repaired))


def chat_list_of_pydantic_ai(messages: list[Any]) -> list[dict[str, Any]]:
    """pydantic-ai's messages as the Chat Completions list they stand for, one wire message a part (no repair)."""
    from pydantic_ai import messages as pa

    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, pa.ModelResponse):
            calls = [{"id": p.tool_call_id, "type": "function",
                      "function": {"name": p.tool_name, "arguments": p.args_as_json_str()}}
                     for p in message.parts if isinstance(p, pa.ToolCallPart)]
            text = "".join(p.content for p in message.parts if isinstance(p, pa.TextPart))
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        for part in message.parts:
            if isinstance(part, (pa.ToolReturnPart, pa.RetryPromptPart)) and part.tool_call_id:
                out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": str(part.content)})
            elif isinstance(part, pa.SystemPromptPart):
                out.append({"role": "system", "content": part.content})
            else:
                out.append({"role": "user", "content": str(getattr(part, "content", ""))})
    return out


def measure(provider: str, body: dict[str, Any], runs: int, clock: Callable[[], float], label: str) -> None:
    """One body: every candidate timed in the same rounds, its ratio to chatmend and the problems it leaves."""
    found, missing = candidates(provider, body)
    refused = refusals(found)
    timed = {name: run for name, run in found.items() if name not in refused}
    times = interleaved(timed, runs, clock)
    before = len(providers.get(provider).check(body))
    print(f"{label}: {len(body['messages']):,} messages, {before:,} problems before repair")
    ours = median(times["chatmend"])
    rows = []
    for name, run in timed.items():
        left = problems_left(provider, body, name, run())
        ratio = paired_ratio(times[name], times["chatmend"])
        rows.append((name, median(times[name]), ratio, left))
    for name, took, ratio, left in sorted(rows, key=lambda row: row[1]):
        versus = "" if name == "chatmend" else f"  its time / chatmend's: {ratio}"
        print(f"   {name:20} {took * 1e3:8.1f} ms  leaves {left:5,} problems{versus}")
    for name, why in {**refused, **missing}.items():
        print(f"   {name:20} not timed: {why}")
    clean = [(ratio, name) for name, _, ratio, left in rows if name != "chatmend" and left == 0]
    if clean:
        ratio, name = min(clean, key=lambda pair: pair[0].median)
        ok = ratio.median >= TARGET and next(left for n, _, _, left in rows if n == "chatmend") == 0
        print(f"   fastest that leaves no problem: {name}, its time / chatmend's {ratio} "
              f"(target >= {TARGET:.0f}): {'met' if ok else 'MISSED'}; chatmend {ours * 1e3:.1f} ms")
    print(flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="process")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    print(f"{interpreter()}; {args.runs} interleaved rounds; clock: {args.clock}; one process")
    n = args.messages
    measure("openai_chat", chat_messy_body(n), args.runs, clock, "OpenAI Chat, messy")
    measure("anthropic", anthropic_messy_body(n), args.runs, clock, "Anthropic, messy")
    # tessera-transcript refuses a body with an id used twice: the same bodies without, for it
    measure("openai_chat", chat_messy_body(n, reuse=0), args.runs, clock, "OpenAI Chat, messy, no id used twice")
    measure("anthropic", anthropic_messy_body(n, reuse=0), args.runs, clock, "Anthropic, messy, no id used twice")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
