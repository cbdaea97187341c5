"""Each provider adapter's `to_request` vs one `json.dumps` of the body it produced, as ratios (issue #20).

    python bench/encode.py                      # the targets: 10,000 messages, every registered provider
    python bench/encode.py --messages 100000    # the 100k row, without targets

For each provider and workload: the time of `to_request` on the history (repair, id mapping and encoding
included) divided by the time of one `json.dumps` of the body it produced. Target at 10,000 messages: at
most 2.0, for both workloads (bench/workloads.py): `mixed`, the messy history where one reply in ten
restarts its ids, and `kimi`, where every reply restarts them (Kimi's `functions.search:0`), so every call
after the first reply is renamed. The two are timed in interleaved rounds on the process's CPU clock; each
cell is measured in several fresh processes (3 unless told), since how a fresh process lays out its heap
moved json.dumps by up to 2x here; the figure is the median of the per-round ratios of all of them, with
the middle half in brackets (bench/timing.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from chatmend import ChatMessage, providers
from chatmend.providers.base import Dropped, Provider
from timing import in_fresh_process, interleaved, interpreter, median, round_ratios, summarize
from workloads import kimi_messy, mixed_messy

WORKLOADS = {"mixed": mixed_messy, "kimi": kimi_messy}
TARGET, TARGET_MESSAGES = 2.0, 10_000


def _left_out(dropped: Dropped) -> None:
    """What a format has no place for (DeepSeek takes no images) is left out, as a caller's `on_unsupported=`
    would leave it: the other formats never call it."""


def encode_ratios(provider: Provider, history: list[ChatMessage], rounds: int) -> tuple[float, list[float]]:
    """(median to_request time, its per-round ratios to one json.dumps of the body it produced)."""
    write = partial(provider.to_request, history, model="bench-model", on_unsupported=_left_out)
    body = write()
    times = interleaved({"to_request": write, "json.dumps": partial(json.dumps, body)}, rounds)
    return median(times["to_request"]), round_ratios(times["to_request"], times["json.dumps"])


def cell(provider_name: str, workload: str, messages: int, rounds: int) -> dict[str, Any]:
    """One process's share of a cell of the table, measured in this (fresh) process."""
    t_encode, ratios = encode_ratios(providers.get(provider_name), WORKLOADS[workload](messages), rounds)
    return {"to_request": t_encode, "ratios": ratios}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=TARGET_MESSAGES)
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
    targeted = args.messages == TARGET_MESSAGES
    print(f"{interpreter()}; {args.messages:,} messages; each cell in {args.processes} fresh processes of "
          f"{args.rounds} interleaved rounds; ratio = to_request / json.dumps(body), median of all rounds "
          f"(middle half); " + (f"target <= {TARGET}" if targeted else f"targets are for {TARGET_MESSAGES:,}"))
    print(f"{'provider':<18}" + "".join(f"{name + ' to_request':>18}{'ratio':>18}{'':>8}" for name in chosen))
    for name in args.provider or providers.names():
        row = f"{name:<18}"
        for workload in chosen:
            got = [in_fresh_process(__file__, name, workload, f"--messages={args.messages}", f"--rounds={args.rounds}")
                   for _ in range(args.processes)]
            ratio = summarize([r for g in got for r in g["ratios"]])
            verdict = ("met" if ratio.median <= TARGET else "MISSED") if targeted else ""
            row += f"{median([g['to_request'] for g in got]) * 1000:>16.1f}ms{ratio!s:>18}{verdict:>8}"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
