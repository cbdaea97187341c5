"""Speed of repair_history, as ratios measured in one process (issue 2's benchmark).

    python bench/repair.py                 # 100k messages, CPU time, 11 interleaved rounds
    python bench/repair.py --clock wall    # elapsed time instead (noisy when other processes run)

Figures: the time of `repair_history` on a 100,000-message history divided by the time of one `json.dumps`
of the same history as plain dicts (target: at most 1.0), for three workloads. The two are timed in
interleaved rounds; the figure is the median of the per-round ratios, the middle half of them in brackets
(bench/timing.py):

- kimi-every-reply: every reply restarts its ids (Kimi's `functions.search:0`), so almost every call, its
  result and its assistant message are copied under a new id: the worst case;
- mixed: one reply in ten restarts its ids, the others have unique ids;
- already-valid: nothing to change (the output is the input's own objects).

All three also have missing, reordered and orphan results, steers and placeholders (see workloads.py),
except already-valid. Then the 10k-to-100k time ratio (linear means about 10).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import ChatMessage, repair_history
from chatmend.jsonl import message_to_dict
from timing import CLOCKS, Ratio, in_fresh_process, interleaved, interpreter, median, paired_ratio
from workloads import kimi_messy, mixed_messy, valid_unique

WORKLOADS: dict[str, Callable[[int], list[ChatMessage]]] = {
    "kimi-every-reply": kimi_messy,
    "mixed (1 reply in 10 restarts ids)": mixed_messy,
    "already-valid": valid_unique,
}


def ratio_to_dumps(history: list[ChatMessage], rounds: int, clock: Callable[[], float]) -> tuple[float, float, Ratio]:
    """(median repair time, median json.dumps time, their paired ratio) of one history, in interleaved rounds."""
    plain = [message_to_dict(m) for m in history]
    times = interleaved({"repair": partial(repair_history, history), "json.dumps": partial(json.dumps, plain)},
                        rounds, clock)
    return median(times["repair"]), median(times["json.dumps"]), paired_ratio(times["repair"], times["json.dumps"])


def cell(workload: str, messages: int, rounds: int, clock: Callable[[], float]) -> str:
    """One row of the table, measured in this (fresh) process."""
    build = WORKLOADS[workload]
    big, small = build(messages), build(messages // 10)
    plain_big, plain_small = [message_to_dict(m) for m in big], [message_to_dict(m) for m in small]
    times = interleaved({
        "repair": partial(repair_history, big), "json.dumps": partial(json.dumps, plain_big),
        "repair small": partial(repair_history, small), "json.dumps small": partial(json.dumps, plain_small),
    }, rounds, clock)
    t_repair, t_dumps = median(times["repair"]), median(times["json.dumps"])
    ratio = paired_ratio(times["repair"], times["json.dumps"])
    growth = t_repair / median(times["repair small"])
    dumps_growth = t_dumps / median(times["json.dumps small"])
    return (f"{workload:36} {t_repair * 1e3:7.1f}ms {t_dumps * 1e3:9.1f}ms {ratio!s:>20}  "
            f"x{growth:8.1f}  (json.dumps x{dumps_growth:.1f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="process")
    parser.add_argument("--cell", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        print(json.dumps(cell(args.cell, args.messages, args.rounds, CLOCKS[args.clock])))
        return 0
    print(f"{interpreter()}; {args.messages:,} messages; {args.rounds} interleaved rounds, medians, each row in a "
          f"fresh process; clock: {args.clock}")
    print(f"{'workload':36} {'repair':>9} {'json.dumps':>11} {'ratio (middle half)':>20}  {'10k->100k':>9}")
    for name in WORKLOADS:
        print(in_fresh_process(__file__, name, f"--messages={args.messages}", f"--rounds={args.rounds}",
                               f"--clock={args.clock}"), flush=True)
    print("target: ratio <= 1.0; linear scaling ~ x10 (json.dumps's own 10k->100k shows the machine's share)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
