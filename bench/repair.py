"""Speed of repair_history, as ratios measured in one process (issue 2's benchmark).

    python bench/repair.py                 # 100k messages, CPU time, best of 5
    python bench/repair.py --clock wall    # elapsed time instead (noisy when other processes run)

Figures: the time of `repair_history` on a 100,000-message history divided by the time of one `json.dumps`
of the same history as plain dicts (target: at most 1.0), for three workloads:

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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import ChatMessage, repair_history
from chatmend.jsonl import message_to_dict
from timing import CLOCKS, best_of
from workloads import kimi_messy, mixed_messy, valid_unique

WORKLOADS: dict[str, Callable[[int], list[ChatMessage]]] = {
    "kimi-every-reply": kimi_messy,
    "mixed (1 reply in 10 restarts ids)": mixed_messy,
    "already-valid": valid_unique,
}


def ratio_to_dumps(history: list[ChatMessage], runs: int, clock: Callable[[], float]) -> tuple[float, float]:
    """(repair time, json.dumps time) of one history, timed alternately so that drift hits both alike."""
    plain = [message_to_dict(m) for m in history]
    t_repair = t_dumps = float("inf")
    for _ in range(runs):
        t_dumps = min(t_dumps, best_of(lambda: json.dumps(plain), 1, clock))
        t_repair = min(t_repair, best_of(lambda: repair_history(history), 1, clock))
    return t_repair, t_dumps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="process")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    print(f"{args.messages:,} messages; best of {args.runs}; clock: {args.clock}")
    print(f"{'workload':36} {'repair':>9} {'json.dumps':>11} {'ratio':>6}  {'10k->100k':>9}")
    for name, build in WORKLOADS.items():
        big, small = build(args.messages), build(args.messages // 10)
        t_repair = t_dumps = t_small = t_small_dumps = float("inf")
        for _ in range(args.runs):  # alternately, so that a busy spell of the machine hits all four alike
            one_repair, one_dumps = ratio_to_dumps(big, 1, clock)
            small_repair, small_dumps = ratio_to_dumps(small, 3, clock)
            t_repair, t_dumps = min(t_repair, one_repair), min(t_dumps, one_dumps)
            t_small, t_small_dumps = min(t_small, small_repair), min(t_small_dumps, small_dumps)
        print(f"{name:36} {t_repair * 1e3:7.1f}ms {t_dumps * 1e3:9.1f}ms {t_repair / t_dumps:6.2f}  "
              f"x{t_repair / t_small:8.1f}  (json.dumps x{t_dumps / t_small_dumps:.1f})")
    print("target: ratio <= 1.0; linear scaling ~ x10 (json.dumps's own 10k->100k shows the machine's share)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
