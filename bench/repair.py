"""Speed of repair_history, as ratios measured in one process (these machines are noisy).

    python bench/repair.py            # 100k messages; prints the ratio to one json.dumps, and scaling

Figures: time of `repair_history` on a 100,000-message messy history divided by the time of one
`json.dumps` of the same history as plain dicts (target: at most 1.0); and the 10k-to-100k time ratio
(linear means about 10). Each timing is the best of several runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import kimi_messy  # noqa: E402

from chatmend import repair_history  # noqa: E402
from chatmend.jsonl import message_to_dict  # noqa: E402


def best_of(fn: Callable[[], object], runs: int) -> float:
    """The fastest of `runs` timings of fn(), in seconds."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    big = kimi_messy(args.messages)
    small = kimi_messy(args.messages // 10)
    plain = [message_to_dict(m) for m in big]

    t_dumps = best_of(lambda: json.dumps(plain), args.runs)
    t_repair = best_of(lambda: repair_history(big), args.runs)
    t_small = best_of(lambda: repair_history(small), args.runs)
    result = repair_history(big)

    print(f"history: {len(big):,} messages, {len(result.interrupted):,} interrupted, "
          f"{len(result.moved):,} moved, {len(result.renamed):,} renamed, {len(result.notes):,} notes")
    print(f"json.dumps (baseline):  {t_dumps * 1000:8.1f} ms")
    print(f"repair_history:         {t_repair * 1000:8.1f} ms")
    print(f"ratio repair/json.dumps: {t_repair / t_dumps:.2f}   (target <= 1.0)")
    print(f"scaling {len(small):,} -> {len(big):,}: x{t_repair / t_small:.1f}   (linear ~ 10)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
