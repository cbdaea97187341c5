"""Encode cost of every provider adapter, as ratios measured in one process.

    python bench/encode.py             # 100k messages, every registered provider, two workloads

For each provider and workload: the time of `to_request` on a 100,000-message history (repair, id mapping
and encoding included) divided by the time of one `json.dumps` of the body it produced. Target: at most
2.0. Workloads (bench/workloads.py): `mixed`, a messy history where one reply in ten restarts its ids, and
`kimi`, the worst case where every reply restarts them (Kimi's `functions.search:0`), so every call after
the first reply is renamed. The two are timed in interleaved rounds on the process's CPU clock; the figure
is the median of the per-round ratios, with the middle half of them in brackets (bench/timing.py).
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
from timing import Ratio, interleaved, median, paired_ratio
from workloads import kimi_messy, mixed_messy

WORKLOADS = {"mixed": mixed_messy, "kimi": kimi_messy}


def encode_ratio(provider: Provider, history: list[ChatMessage], rounds: int) -> tuple[float, Ratio]:
    """(median to_request time, its ratio to one json.dumps of the body it produced)."""
    body = provider.to_request(history, model="bench-model")
    times = interleaved({"to_request": partial(provider.to_request, history, model="bench-model"),
                         "json.dumps": partial(json.dumps, body)}, rounds)
    return median(times["to_request"]), paired_ratio(times["to_request"], times["json.dumps"])


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--provider", action="append", help="only these providers (repeatable)")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS), help="only these (repeatable)")
    args = parser.parse_args()

    chosen = args.workload or list(WORKLOADS)
    print(f"{args.messages:,} messages; {args.rounds} interleaved rounds; ratio = to_request / json.dumps(body), "
          f"median (middle half); target <= 2.0")
    print(f"{'provider':<18}" + "".join(f"{name + ' to_request':>18}{'ratio':>18}" for name in chosen))
    histories = {name: WORKLOADS[name](args.messages) for name in chosen}
    for name in args.provider or providers.names():
        provider = providers.get(name)
        row = f"{name:<18}"
        for history in histories.values():
            t_encode, ratio = encode_ratio(provider, history, args.rounds)
            row += f"{t_encode * 1000:>16.0f}ms{ratio!s:>18}"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
