"""Encode cost of every provider adapter, as ratios measured in one process.

    python bench/encode.py             # 100k messages, every registered provider

For each provider: the time of `to_request` on a 100,000-message messy history (repair, id mapping and
encoding included) divided by the time of one `json.dumps` of the body it produced. Target: at most 2.0.
Each timing is the best of several runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import providers
from timing import best_of
from workloads import kimi_messy


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--provider", action="append", help="only these providers (repeatable)")
    args = parser.parse_args()

    history = kimi_messy(args.messages)
    print(f"history: {len(history):,} messages (bench/workloads.py kimi_messy)")
    print(f"{'provider':<18}{'to_request':>12}{'json.dumps':>12}{'ratio':>8}   (target <= 2.0)")
    worst = 0.0
    for name in args.provider or providers.names():
        provider = providers.get(name)
        body = provider.to_request(history, model="bench-model")
        t_encode = best_of(partial(provider.to_request, history, model="bench-model"), args.runs)
        t_dumps = best_of(partial(json.dumps, body), args.runs)
        ratio = t_encode / t_dumps
        worst = max(worst, ratio)
        print(f"{name:<18}{t_encode * 1000:>10.0f}ms{t_dumps * 1000:>10.0f}ms{ratio:>8.2f}")
    print(f"worst ratio: {worst:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
