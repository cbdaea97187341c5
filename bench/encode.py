"""Encode cost of every provider adapter, as ratios measured in one process.

    python bench/encode.py             # 100k messages, every registered provider, two workloads

For each provider and workload: the time of `to_request` on a 100,000-message history (repair, id mapping
and encoding included) divided by the time of one `json.dumps` of the body it produced. Target: at most
2.0. Workloads (bench/workloads.py): `mixed`, a messy history where one reply in ten restarts its ids, and
`kimi`, the worst case where every reply restarts them (Kimi's `functions.search:0`), so every call after
the first reply is renamed. Timings are the best of several runs on the process's CPU clock.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import ChatMessage, providers
from chatmend.providers.base import Provider
from timing import best_of
from workloads import kimi_messy, mixed_messy

WORKLOADS = {"mixed": mixed_messy, "kimi": kimi_messy}


def ratio(provider: Provider, history: list[ChatMessage], runs: int) -> tuple[float, float]:
    """(to_request time, its ratio to one json.dumps of the body it produced)."""
    body = provider.to_request(history, model="bench-model")
    t_encode = best_of(partial(provider.to_request, history, model="bench-model"), runs)
    t_dumps = best_of(partial(json.dumps, body), runs)
    return t_encode, t_encode / t_dumps


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--provider", action="append", help="only these providers (repeatable)")
    args = parser.parse_args()

    histories = {name: build(args.messages) for name, build in WORKLOADS.items()}
    print(f"{args.messages:,} messages; best of {args.runs}; ratio = to_request / json.dumps(body); target <= 2.0")
    print(f"{'provider':<18}" + "".join(f"{name + ' to_request':>18}{'ratio':>7}" for name in WORKLOADS))
    for name in args.provider or providers.names():
        provider = providers.get(name)
        row = f"{name:<18}"
        for history in histories.values():
            t_encode, r = ratio(provider, history, args.runs)
            row += f"{t_encode * 1000:>16.0f}ms{r:>7.2f}"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
