"""Encode cost of every provider adapter, as ratios measured in one process.

    python bench/encode.py             # 100k messages, every registered provider, two workloads

For each provider and workload: the time of `to_request` on a 100,000-message history (repair, id mapping
and encoding included) divided by the time of one `json.dumps` of the body it produced. Target: at most
2.0. Workloads (bench/workloads.py): `mixed`, a messy history where one reply in ten restarts its ids, and
`kimi`, the worst case where every reply restarts them (Kimi's `functions.search:0`), so every call after
the first reply is renamed. The two are timed in interleaved rounds on the process's CPU clock; each cell
is measured in several fresh processes (3 unless told), since how a fresh process lays out its heap moved
json.dumps by up to 2x here; the figure is the median of the per-round ratios of all of them, with the
middle half in brackets (bench/timing.py).

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
from timing import in_fresh_process, interleaved, interpreter, median, round_ratios, summarize
from workloads import kimi_messy, mixed_messy, one_turn

WORKLOADS = {"mixed": mixed_messy, "kimi": kimi_messy}


def encode_ratios(
    provider: Provider, history: list[ChatMessage], rounds: int
) -> tuple[float, list[float], list[float]]:
    """(median to_request time, its per-round ratios to one json.dumps of the body it produced, and the same
    ratios for a session that keeps a Repairer and appends one turn before each send)."""
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
    return (median(times["to_request"]), round_ratios(times["to_request"], times["json.dumps"]),
            round_ratios(times["session"], times["json.dumps"]))


def cell(provider_name: str, workload: str, messages: int, rounds: int) -> dict[str, Any]:
    """One process's share of a cell of the table, measured in this (fresh) process."""
    t_encode, ratios, session = encode_ratios(providers.get(provider_name), WORKLOADS[workload](messages), rounds)
    return {"to_request": t_encode, "ratios": ratios, "session": session}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds in each process")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes for each cell")
    parser.add_argument("--provider", action="append", help="only these providers (repeatable)")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS), help="only these (repeatable)")
    parser.add_argument("--cell", nargs=2, metavar=("PROVIDER", "WORKLOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        provider_name, workload = args.cell
        print(json.dumps(cell(provider_name, workload, args.messages, args.rounds)))
        return 0

    chosen = args.workload or list(WORKLOADS)
    print(f"{interpreter()}; {args.messages:,} messages; each cell in {args.processes} fresh processes of "
          f"{args.rounds} interleaved rounds; ratio = to_request / json.dumps(body), median of all rounds "
          f"(middle half); target <= 2.0")
    print(f"{'provider':<18}" + "".join(f"{name + ' to_request':>18}{'ratio':>18}{'with Repairer':>18}"
                                         for name in chosen))
    for name in args.provider or providers.names():
        row = f"{name:<18}"
        for workload in chosen:
            got = [in_fresh_process(__file__, name, workload, f"--messages={args.messages}", f"--rounds={args.rounds}")
                   for _ in range(args.processes)]
            ratio = summarize([r for g in got for r in g["ratios"]])
            session = summarize([r for g in got for r in g["session"]])
            row += f"{median([g['to_request'] for g in got]) * 1000:>16.0f}ms{ratio!s:>18}{session!s:>18}"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
