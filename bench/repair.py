"""Full repair vs one `json.dumps` of the same history, as ratios measured in one process (issue #20).

    python bench/repair.py                       # the targets: 10,000 messages
    python bench/repair.py --messages 100000     # the 100k row (1000000 for the 1M row), without targets

For each workload (bench/workloads.py): the time of `repair_history` on the history divided by the time of
one `json.dumps` of the same history as plain dicts. Targets at 10,000 messages: `mixed` (the messy workload:
missing, reordered and orphan results, steers, placeholders; one reply in ten restarts its ids) at most 1.0,
`kimi` (the same, but every reply restarts its ids, so nearly every call is renamed) at most 2.0;
`already-valid` is shown without target. The two are timed in interleaved rounds on the process's CPU clock;
the figure is the median of the per-round ratios, the middle half of them in brackets (bench/timing.py);
each row is measured in a fresh process.

The last column is the share of the repair's time spent in collections of the older generations (1 and 2)
of CPython's cyclic collector, and how many full (generation 2) collections a repair set off: a pass that
allocates many objects triggers them, and a full one walks the whole heap. It is measured in separate rounds
after the timed ones, with a `gc.callbacks` hook that only observes.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import ChatMessage, repair_history
from chatmend.jsonl import message_to_dict
from timing import CLOCKS, Ratio, in_fresh_process, interleaved, interpreter, median, paired_ratio
from workloads import kimi_messy, mixed_messy, valid_unique

WORKLOADS: dict[str, tuple[Callable[[int], list[ChatMessage]], float | None]] = {
    "mixed": (mixed_messy, 1.0),
    "kimi": (kimi_messy, 2.0),
    "already-valid": (valid_unique, None),
}
"""Each workload's builder and its target at 10,000 messages (None: shown without target)."""

TARGET_MESSAGES = 10_000


def ratio_to_dumps(history: list[ChatMessage], rounds: int, clock: Callable[[], float]) -> tuple[float, float, Ratio]:
    """(median repair time, median json.dumps time, their paired ratio) of one history, in interleaved rounds."""
    plain = [message_to_dict(m) for m in history]
    times = interleaved({"repair": partial(repair_history, history), "json.dumps": partial(json.dumps, plain)},
                        rounds, clock)
    return median(times["repair"]), median(times["json.dumps"]), paired_ratio(times["repair"], times["json.dumps"])


def older_collections(history: list[ChatMessage], rounds: int, clock: Callable[[], float]) -> tuple[float, float]:
    """(median share of a repair's time spent collecting generations 1 and 2, full collections per repair)."""
    spent = [0.0]
    full = [0]
    started = [0.0]

    def observe(phase: str, info: dict[str, Any]) -> None:
        if info["generation"] == 0:
            return  # young collections are not what changed
        if phase == "start":
            started[0] = clock()
        else:
            spent[0] += clock() - started[0]
            full[0] += info["generation"] == 2

    shares = []
    gc.callbacks.append(observe)
    try:
        for _ in range(rounds):
            spent[0] = 0.0
            start = clock()
            result = repair_history(history)
            shares.append(spent[0] / (clock() - start))
            del result
    finally:
        gc.callbacks.remove(observe)
    return median(shares), full[0] / rounds


def cell(workload: str, messages: int, rounds: int, clock: Callable[[], float]) -> str:
    """One row of the table, measured in this (fresh) process."""
    build, target = WORKLOADS[workload]
    history = build(messages)
    t_repair, t_dumps, ratio = ratio_to_dumps(history, rounds, clock)
    gc_share, full = older_collections(history, rounds, clock)
    if target is None or messages != TARGET_MESSAGES:
        verdict = ""
    else:
        verdict = f"<= {target:.1f} {'met' if ratio.median <= target else 'MISSED'}"
    return (f"{workload:14} {t_repair * 1e3:8.1f}ms {t_dumps * 1e3:9.1f}ms {ratio!s:>18}  {verdict:13}"
            f"  {gc_share:5.1%} ({full:.1f} full)")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=TARGET_MESSAGES)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="process")
    parser.add_argument("--cell", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        print(json.dumps(cell(args.cell, args.messages, args.rounds, CLOCKS[args.clock])))
        return 0
    print(f"{interpreter()}; {args.messages:,} messages; {args.rounds} interleaved rounds, medians, each row in a "
          f"fresh process; clock: {args.clock}")
    if args.messages != TARGET_MESSAGES:
        print(f"(the targets are for {TARGET_MESSAGES:,} messages: none shown)")
    print(f"{'workload':14} {'repair':>10} {'json.dumps':>11} {'ratio (middle half)':>18}  {'target':13}"
          f"  gc gen 1-2")
    for name in WORKLOADS:
        print(in_fresh_process(__file__, name, f"--messages={args.messages}", f"--rounds={args.rounds}",
                               f"--clock={args.clock}"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
