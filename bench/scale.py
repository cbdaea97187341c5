"""Speed at scale (issue #20): pydantic-ai and the incremental step against their targets, then scaling and memory.

    python bench/scale.py              # the targets, then scaling at 10k and 100k messages (about 2 minutes)
    python bench/scale.py --million    # scaling at 1M messages too (building that history takes a minute or two)
    python bench/scale.py --orders     # only issue #48's figure: 1.'s messy history, in call order and reversed

1. pydantic-ai's public `repair_messages` on the same 20,000-message history with unique ids, built in
   both models. Target: chatmend at least 4 times faster on the messy history; already valid, without target.
2. Incremental: a `Repairer` that repaired a 100,000-message history gets it back with one more turn
   appended (a reply with two calls, their results), vs a full `repair_history` of it. Target: at most
   1/100, pooled over `--processes` fresh processes (a step is more sensitive than a full repair to the
   heap's layout, which differs from one process to the next). Beside it, without target: a step whose
   result's `messages` are read (a result makes each field's list when it is first read).
3. Scaling, without target: time per message at 10k and 100k (and 1M) messages, each size's over 10k's,
   timed in the same round of the same process; the median of those ratios over `--processes` processes.
4. Memory, without target: repairing an already valid 100,000-message history allocates no new message
   (tracemalloc) and returns the input's own objects.

With `--orders`, only issue #48's figure: `repair_history` against `repair_messages` on 1.'s messy history,
timed with chatmend called first in every round, then with pydantic-ai first (no rotation), each order in its own
fresh process. Target: at least 2 times faster in both orders.

Times are CPU time of this process (`--clock wall` for elapsed time). What is compared is timed in
`--runs` interleaved rounds; figures are medians, ratios the median of per-round ratios with the middle
half of them in brackets (bench/timing.py). Each figure is measured in fresh processes.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import sys
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import ChatMessage, ImagePart, TextPart, repair_history
from chatmend.incremental import Repairer
from chatmend.jsonl import message_to_dict
from timing import CLOCKS, Ratio, best_of, in_fresh_process, interleaved, interpreter, median, paired_ratio, summarize
from workloads import mixed_messy, one_turn, unique_messy, valid_unique

PYDANTIC_AI_TARGET = 4.0
"""chatmend at least this many times faster than pydantic-ai on the messy history."""
INCREMENTAL_TARGET = 100
"""A Repairer step at most 1/this of a full repair."""
ORDERS_TARGET = 2.0
"""Issue #48: chatmend at least this many times faster than pydantic-ai, in call order and reversed."""

Clock = Callable[[], float]


def incremental_times(runs: int, clock: Clock) -> dict[str, list[float]]:
    """2., in one process: the times of steps (one turn appended, repaired by a Repairer) and of full repairs.

    The messy workload: on the every-reply-restarts one, collections of the older generations take most of a
    full repair at 100,000 messages (bench/README.md), which would flatter the ratio.
    """
    history = mixed_messy(100_000)
    repairer = Repairer()
    repairer.repair(history)
    turns = max(runs * 5, 25)  # a step takes a fraction of a millisecond: many of them, for a steady median
    steps = []
    for turn in range(turns):
        history.extend(one_turn(turn))  # the agent's list grows in place, as it would
        steps.append(best_of(lambda: repairer.repair(history), 1, clock))
    reads = []
    for turn in range(turns, 2 * turns):
        history.extend(one_turn(turn))
        reads.append(best_of(lambda: repairer.repair(history).messages, 1, clock))
    fulls = [best_of(lambda: repair_history(history), 1, clock) for _ in range(runs)]
    assert repairer.repair(history).messages == repair_history(history).messages
    return {"steps": steps, "reads": reads, "fulls": fulls}


def incremental(cells: list[dict[str, list[float]]]) -> None:
    """2. One turn appended and repaired by a Repairer vs a full repair, pooled over fresh processes.

    A step is short, which makes it more sensitive than the full repair to how a process laid out its heap:
    when it copied the output lists (pointers to 100,000 messages), the same step took 3x longer in some
    processes than in others here. Each process's own ratio is printed too. Reading the result's `messages`
    makes that list (the pointer copy of 100,000 messages): printed beside it, without target.
    """
    print(f"2. incremental: one turn appended to 100,000 messages (mixed), Repairer vs full repair "
          f"(target <= 1/{INCREMENTAL_TARGET})")
    # Each step against the full repair of its own process; the figure is the median of all those ratios.
    speedups = [median(cell["fulls"]) / step for cell in cells for step in cell["steps"]]
    t_step = median([t for cell in cells for t in cell["steps"]])
    t_full = median([t for cell in cells for t in cell["fulls"]])
    each = ", ".join(f"1/{median(cell['fulls']) / median(cell['steps']):.0f}" for cell in cells)
    verdict = "met" if median(speedups) >= INCREMENTAL_TARGET else "MISSED"
    print(f"   Repairer.repair {t_step * 1e3:.2f} ms, full {t_full * 1e3:.1f} ms (medians of {len(cells)} "
          f"processes): ratio 1/{median(speedups):.0f}, {verdict} (each process: {each})")
    read_speedups = [median(cell["fulls"]) / read for cell in cells for read in cell["reads"]]
    t_read = median([t for cell in cells for t in cell["reads"]])
    print(f"   Repairer.repair(...).messages (the result's messages read) {t_read * 1e3:.2f} ms: ratio "
          f"1/{median(read_speedups):.0f} (without target)")


def versus_pydantic_ai(runs: int, clock: Clock) -> None:
    """1. pydantic-ai's repair_messages on the same history (one ModelRequest or ModelResponse a message)."""
    from pydantic_ai.messages import repair_messages

    from chatmend.bridges.pydantic_ai import repair as bridge_repair

    print(f"1. vs pydantic-ai repair_messages, 20,000 messages with unique ids (target: messy >= "
          f"{PYDANTIC_AI_TARGET:.0f}x faster)")
    for name, build, target in (("messy (missing, reordered, orphans)", unique_messy, PYDANTIC_AI_TARGET),
                                ("already valid", valid_unique, None)):
        history = build(20_000)
        theirs = [to_pydantic_ai(m) for m in history]
        times = interleaved({"chatmend": partial(repair_history, history),
                             "pydantic-ai": partial(repair_messages, theirs),
                             "bridge": partial(bridge_repair, theirs)}, runs, clock)
        faster = paired_ratio(times["pydantic-ai"], times["chatmend"])
        verdict = "" if target is None else (", met" if faster.median >= target else ", MISSED")
        print(f"   {name:36} chatmend {median(times['chatmend']) * 1e3:5.1f} ms, "
              f"pydantic-ai {median(times['pydantic-ai']) * 1e3:5.1f} ms: {faster}x faster{verdict}", flush=True)
        # chatmend.bridges.pydantic_ai: the same repair on pydantic-ai's own messages, in and out (no target)
        bridge = paired_ratio(times["pydantic-ai"], times["bridge"])
        print(f"   {'':36} the bridge on pydantic-ai's messages {median(times['bridge']) * 1e3:5.1f} ms: "
              f"{bridge}x faster than repair_messages", flush=True)


def versus_pydantic_ai_in_order(runs: int, clock: Clock, reverse: bool) -> None:
    """`--orders`: 1.'s messy history, every round calling chatmend then pydantic-ai (`reverse`: the other way)."""
    from pydantic_ai.messages import repair_messages

    history = unique_messy(20_000)
    theirs = [to_pydantic_ai(m) for m in history]
    calls: list[tuple[str, Callable[[], object]]] = [("chatmend", partial(repair_history, history)),
                                                     ("pydantic-ai", partial(repair_messages, theirs))]
    if reverse:
        calls.reverse()
    times: dict[str, list[float]] = {name: [] for name, _ in calls}
    for _ in range(runs):
        for name, call in calls:  # the same order in every round (`interleaved` rotates it)
            start = clock()
            result = call()
            times[name].append(clock() - start)
            del result  # freed outside the clock
    faster = paired_ratio(times["pydantic-ai"], times["chatmend"])
    verdict = "met" if faster.median >= ORDERS_TARGET else "MISSED"
    order = " then ".join(name for name, _ in calls)
    print(f"   {order:24} chatmend {median(times['chatmend']) * 1e3:5.1f} ms, pydantic-ai "
          f"{median(times['pydantic-ai']) * 1e3:5.1f} ms: {faster}x faster, {verdict}", flush=True)


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


def scaling_times(runs: int, clock: Clock, sizes: tuple[int, ...]) -> dict[str, dict[str, list[float]]]:
    """3., in one process: the times of full repairs and of `json.dumps` at each size, in interleaved rounds."""
    histories = {n: mixed_messy(n) for n in sizes}
    plain = {n: [message_to_dict(m) for m in history] for n, history in histories.items()}
    candidates: dict[str, Callable[[], object]] = {}
    for n in sizes:
        candidates[f"repair {n}"] = partial(repair_history, histories[n])
        candidates[f"json.dumps {n}"] = partial(json.dumps, plain[n])
    times = interleaved(candidates, runs, clock)
    return {what: {str(n): times[f"{what} {n}"] for n in sizes} for what in ("repair", "json.dumps")}


def scaling(cells: list[dict[str, dict[str, list[float]]]]) -> None:
    """3. Time per message at growing sizes, next to json.dumps's (a linear pass over the same data).

    The figure is, as every other one, a ratio to a baseline timed beside it: in each round, a size's time per
    message over the smallest size's, in the same round of the same process; for each size the median of those
    ratios over the rounds of all processes, and the spread is the largest of them over the smallest. Printed
    beside it: the medians of the absolute times pooled over the processes (their spread also holds how fast
    each process was as a whole: its heap's layout, the neighbours' load) and each process's own spread (a
    10k-message repair takes a few milliseconds: one process's figure moves with its heap and the load).
    """
    print("3. scaling, mixed workload: time per message (without target)")
    sizes = list(cells[0]["repair"])
    base = sizes[0]

    def per_message(what: str, cell_list: list[dict[str, dict[str, list[float]]]]) -> dict[str, float]:
        return {n: median([t for cell in cell_list for t in cell[what][n]]) / int(n) for n in sizes}

    def relative(what: str) -> dict[str, Ratio]:
        """Each size's time per message over the smallest size's, round by round, pooled over processes."""
        return {n: summarize([(t / int(n)) / (b / int(base)) for cell in cells
                              for t, b in zip(cell[what][n], cell[what][base], strict=True)]) for n in sizes}

    def spread(values: dict[str, float]) -> float:
        return max(values.values()) / min(values.values()) - 1

    repair, dumps = per_message("repair", cells), per_message("json.dumps", cells)
    repair_relative, dumps_relative = relative("repair"), relative("json.dumps")
    for n in sizes:
        print(f"   {int(n):>9,} messages: repair {repair[n] * 1e6:.3f} us per message, {repair_relative[n]} of "
              f"{int(base):,}'s (json.dumps {dumps[n] * 1e6:.3f} us, {dumps_relative[n]})")
    figure = spread({n: r.median for n, r in repair_relative.items()})
    dumps_figure = spread({n: r.median for n, r in dumps_relative.items()})
    each = ", ".join(f"{spread(per_message('repair', [cell])):.0%}" for cell in cells)
    print(f"   spread of repair's time per message: {figure:.0%} (per-round ratios to {int(base):,} messages, "
          f"{len(cells)} processes; json.dumps's: {dumps_figure:.0%})")
    print(f"   of the pooled absolute medians: {spread(repair):.0%} (json.dumps's: {spread(dumps):.0%}); "
          f"each process's own: {each}", flush=True)


def memory() -> None:
    """4. A valid history: no new messages, the input's own objects."""
    print("4. memory: repairing an already valid 100,000-message history")
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
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="process")
    parser.add_argument("--million", action="store_true", help="scale to a 1M-message history too")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes pooled for figures 2 and 3")
    parser.add_argument("--orders", action="store_true",
                        help="only issue #48's figure: vs pydantic-ai in call order and reversed")
    parser.add_argument("--cell", type=int, choices=range(1, 7), help=argparse.SUPPRESS)
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    sizes = (10_000, 100_000, 1_000_000) if args.million else (10_000, 100_000)
    if args.cell == 2:  # the times themselves: main pools the processes'
        print(json.dumps(incremental_times(args.runs, clock)))
        return 0
    if args.cell == 3:
        print(json.dumps(scaling_times(args.runs, clock, sizes)))
        return 0
    sections: dict[int, Callable[[], None]] = {1: partial(versus_pydantic_ai, args.runs, clock), 4: memory,
                                               5: partial(versus_pydantic_ai_in_order, args.runs, clock, False),
                                               6: partial(versus_pydantic_ai_in_order, args.runs, clock, True)}
    if args.cell:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            sections[args.cell]()
        print(json.dumps(printed.getvalue()))
        return 0
    print(f"{interpreter()}; {args.runs} interleaved rounds; clock: {args.clock}; each figure in a fresh process "
          f"(figures 2 and 3 in {args.processes})")
    flags = [f"--runs={args.runs}", f"--clock={args.clock}", *(["--million"] if args.million else [])]
    if args.orders:
        print(f"vs pydantic-ai repair_messages, 20,000 messages with unique ids, messy, in call order and reversed "
              f"(issue #48's target: >= {ORDERS_TARGET:.0f}x faster in both)")
        for cell in ("5", "6"):
            print(in_fresh_process(__file__, cell, *flags), end="", flush=True)
        return 0
    print(in_fresh_process(__file__, "1", *flags), end="", flush=True)
    incremental([in_fresh_process(__file__, "2", *flags) for _ in range(args.processes)])
    scaling([in_fresh_process(__file__, "3", *flags) for _ in range(args.processes)])
    print(in_fresh_process(__file__, "4", *flags), end="", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
