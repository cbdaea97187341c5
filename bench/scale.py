"""Speed at scale (issue 6): five figures, each measured side by side in one process.

    python bench/scale.py            # everything (building the 1M-message history takes a minute or two)
    python bench/scale.py --quick    # without the 1M-message history

1. Full repair of a 100,000-message messy history vs one `json.dumps` of it (target: at most 1.0), for the
   worst case (every reply restarts its ids, Kimi-style) and a mixed one (one reply in ten does).
2. Incremental: a `Repairer` that repaired a 100,000-message history gets it back with one more turn
   appended (a reply with two calls, their results), vs a full `repair_history` of it (target: 1/100).
3. pydantic-ai's public `repair_messages` on the same 20,000-message history with unique ids, built in
   both models (target: chatmend at least 5 times faster), messy and already valid.
4. Scaling: time per message at 10k, 100k and 1M messages (target: flat within 20%).
5. Memory: repairing an already valid 100,000-message history allocates no new message (tracemalloc)
   and returns the input's own objects.

Times are CPU time of this process (`--clock wall` for elapsed time), best of `--runs`.
"""

from __future__ import annotations

import argparse
import base64
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import ChatMessage, ImagePart, TextPart, repair_history
from chatmend.incremental import Repairer
from repair import ratio_to_dumps
from timing import CLOCKS, best_of
from workloads import kimi_messy, mixed_messy, one_turn, unique_messy, valid_unique

Clock = Callable[[], float]


def full_vs_dumps(runs: int, clock: Clock) -> None:
    """1. Full repair vs json.dumps."""
    print("1. full repair of 100,000 messages vs one json.dumps of them (target <= 1.0)")
    for name, build in (("kimi-every-reply", kimi_messy), ("mixed (1 reply in 10 restarts ids)", mixed_messy)):
        t_repair, t_dumps = ratio_to_dumps(build(100_000), runs, clock)
        print(f"   {name:36} repair {t_repair * 1e3:6.1f} ms, json.dumps {t_dumps * 1e3:6.1f} ms: "
              f"ratio {t_repair / t_dumps:.2f}")


def incremental(runs: int, clock: Clock) -> None:
    """2. One turn appended and repaired by a Repairer vs a full repair."""
    print("2. incremental: one turn appended to 100,000 messages, Repairer vs full repair (target <= 1/100)")
    history = kimi_messy(100_000)
    repairer = Repairer()
    repairer.repair(history)
    steps = []
    for turn in range(max(runs, 5)):
        history.extend(one_turn(turn))  # the agent's list grows in place, as it would
        steps.append(best_of(lambda: repairer.repair(history), 1, clock))
    t_full = best_of(lambda: repair_history(history), runs, clock)
    assert repairer.repair(history).messages == repair_history(history).messages
    steps.sort()
    t_step, t_median = steps[0], steps[len(steps) // 2]
    print(f"   Repairer.repair {t_step * 1e3:.2f} ms (median {t_median * 1e3:.2f}), full {t_full * 1e3:.1f} ms: "
          f"ratio 1/{t_full / t_step:.0f} (median 1/{t_full / t_median:.0f})")


def versus_pydantic_ai(runs: int, clock: Clock) -> None:
    """3. pydantic-ai's repair_messages on the same history (one ModelRequest or ModelResponse a message)."""
    from pydantic_ai.messages import repair_messages

    print("3. vs pydantic-ai repair_messages, 20,000 messages with unique ids (target: >= 5x faster)")
    for name, build in (("messy (missing, reordered, orphans)", unique_messy), ("already valid", valid_unique)):
        history = build(20_000)
        theirs = [to_pydantic_ai(m) for m in history]
        t_ours = t_theirs = float("inf")
        for _ in range(runs):
            t_ours = min(t_ours, best_of(lambda: repair_history(history), 1, clock))  # noqa: B023
            t_theirs = min(t_theirs, best_of(lambda: repair_messages(theirs), 1, clock))  # noqa: B023
        print(f"   {name:36} chatmend {t_ours * 1e3:5.1f} ms, pydantic-ai {t_theirs * 1e3:5.1f} ms: "
              f"{t_theirs / t_ours:.1f}x faster")


def to_pydantic_ai(message: ChatMessage) -> Any:
    """The same message in pydantic-ai's model (one ModelRequest or ModelResponse per message)."""
    from pydantic_ai import messages as pa

    def content(value: Any) -> Any:
        if isinstance(value, str):
            return value
        return [p.text if isinstance(p, TextPart) else
                pa.BinaryContent(data=base64.b64decode(p.data or ""), media_type=p.media_type or "image/png")
                for p in value if isinstance(p, (TextPart, ImagePart))]

    if message.role == "system":
        return pa.ModelRequest(parts=[pa.SystemPromptPart(content=message.content)])  # type: ignore[arg-type]
    if message.role == "user":
        return pa.ModelRequest(parts=[pa.UserPromptPart(content=content(message.content))])
    if message.role == "tool":
        return pa.ModelRequest(parts=[pa.ToolReturnPart(tool_name=message.tool_name or "unknown",
                                                        content=content(message.content),
                                                        tool_call_id=message.tool_call_id or "")])
    parts: list[Any] = [pa.TextPart(content=message.content)] if isinstance(message.content, str) else []
    parts += [pa.ToolCallPart(tool_name=c.name, args=c.arguments, tool_call_id=c.id) for c in message.tool_calls]
    return pa.ModelResponse(parts=parts)


def scaling(runs: int, clock: Clock, sizes: tuple[int, ...]) -> None:
    """4. Time per message at growing sizes, next to json.dumps's (a linear pass over the same data)."""
    print("4. scaling, mixed workload: time per message (target: flat within 20%)")
    per_message = {}
    for n in sizes:
        history = mixed_messy(n)
        t_repair, t_dumps = ratio_to_dumps(history, runs if n < 1_000_000 else 3, clock)
        per_message[n] = t_repair / n
        print(f"   {n:>9,} messages: repair {per_message[n] * 1e6:.3f} us per message "
              f"(json.dumps {t_dumps / n * 1e6:.3f} us, ratio {t_repair / t_dumps:.2f})")
    spread = max(per_message.values()) / min(per_message.values()) - 1
    print(f"   spread of repair's time per message: {spread:.0%}")


def memory() -> None:
    """5. A valid history: no new messages, the input's own objects."""
    print("5. memory: repairing an already valid 100,000-message history")
    history = valid_unique(100_000)
    tracemalloc.start(25)
    before = tracemalloc.take_snapshot()
    result = repair_history(history)
    after = tracemalloc.take_snapshot()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    new = [s for s in after.compare_to(before, "traceback") if s.count_diff > 0]
    in_models = sum(s.count_diff for s in new if any("pydantic" in f.filename or f.filename.endswith("messages.py")
                                                      for f in s.traceback))
    shared = sum(a is b for a, b in zip(result.messages, history))
    print(f"   output messages that are the input's own objects: {shared:,} of {len(history):,}")
    print(f"   memory blocks allocated by message constructors (pydantic, chatmend.messages): {in_models}")
    print(f"   peak traced during the repair: {peak / 1e6:.1f} MB "
          f"(the output list and the set of ids: {peak / len(history):.0f} bytes per message)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="process")
    parser.add_argument("--quick", action="store_true", help="leave out the 1M-message history")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    print(f"best of {args.runs}; clock: {args.clock}")
    full_vs_dumps(args.runs, clock)
    incremental(args.runs, clock)
    versus_pydantic_ai(args.runs, clock)
    scaling(args.runs, clock, (10_000, 100_000) if args.quick else (10_000, 100_000, 1_000_000))
    memory()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
