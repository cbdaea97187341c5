"""Encode cost of every provider adapter, as ratios measured in one process.

    python bench/encode.py             # 100k messages, every registered provider, two workloads

For each provider and workload: the time of `to_request` on a 100,000-message history (repair, id mapping
and encoding included) divided by the time of one `json.dumps` of the body it produced. Target: at most
2.0. Workloads (bench/workloads.py): `mixed`, a messy history where one reply in ten restarts its ids, and
`kimi`, the worst case where every reply restarts them (Kimi's `functions.search:0`), so every call after
the first reply is renamed. The two are timed in interleaved rounds on the process's CPU clock; the figure
is the median of the per-round ratios, with the middle half of them in brackets (bench/timing.py). Each
cell is measured in a fresh process, so that every cell sees a heap of the same shape.

`with Repairer`: the same ratio for an agent's session that keeps a `chatmend.Repairer` and passes it to
`to_request(..., repairer=...)`, appending one turn (a reply with two calls, their results) before each
send: the repair then costs only the new turn, the encoding still the whole body.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import ChatMessage, Repairer, providers
from chatmend.providers.base import Provider
from timing import Ratio, in_fresh_process, interleaved, median, paired_ratio
from workloads import kimi_messy, mixed_messy, one_turn

WORKLOADS = {"mixed": mixed_messy, "kimi": kimi_messy}


def encode_ratio(provider: Provider, history: list[ChatMessage], rounds: int) -> tuple[float, Ratio, Ratio]:
    """(median to_request time, its ratio to one json.dumps of the body it produced, and the same ratio for a
    session that keeps a Repairer and appends one turn before each send)."""
    body = provider.to_request(history, model="bench-model")
    session = list(history)
    repairer = Repairer()
    provider.to_request(session, model="bench-model", repairer=repairer)
    turns = iter(range(1_000_000))

    def send_next_turn() -> dict[str, Any]:
        session.extend(one_turn(next(turns)))  # the agent's list grows in place
        return provider.to_request(session, model="bench-model", repairer=repairer)

    times = interleaved({"to_request": partial(provider.to_request, history, model="bench-model"),
                         "json.dumps": partial(json.dumps, body), "session": send_next_turn}, rounds)
    return (median(times["to_request"]), paired_ratio(times["to_request"], times["json.dumps"]),
            paired_ratio(times["session"], times["json.dumps"]))


def cell(provider_name: str, workload: str, messages: int, rounds: int) -> dict[str, Any]:
    """One cell of the table, measured in this (fresh) process."""
    t_encode, ratio, session = encode_ratio(providers.get(provider_name), WORKLOADS[workload](messages), rounds)
    return {"to_request": t_encode, "ratio": ratio.to_json(), "session": session.to_json()}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--provider", action="append", help="only these providers (repeatable)")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS), help="only these (repeatable)")
    parser.add_argument("--cell", nargs=2, metavar=("PROVIDER", "WORKLOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        provider_name, workload = args.cell
        print(json.dumps(cell(provider_name, workload, args.messages, args.rounds)))
        return 0

    chosen = args.workload or list(WORKLOADS)
    print(f"{args.messages:,} messages; {args.rounds} interleaved rounds, each cell in a fresh process; "
          f"ratio = to_request / json.dumps(body), median (middle half); target <= 2.0")
    print(f"{'provider':<18}" + "".join(f"{name + ' to_request':>18}{'ratio':>18}{'with Repairer':>18}"
                                         for name in chosen))
    for name in args.provider or providers.names():
        row = f"{name:<18}"
        for workload in chosen:
            got = in_fresh_process(__file__, name, workload, f"--messages={args.messages}", f"--rounds={args.rounds}")
            ratio, session = Ratio.from_json(got["ratio"]), Ratio.from_json(got["session"])
            row += f"{got['to_request'] * 1000:>16.0f}ms{ratio!s:>18}{session!s:>18}"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
