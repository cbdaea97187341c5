"""Each provider adapter's `to_request` vs one `json.dumps` of the body it produced, as ratios (issue #20).

    python bench/encode.py                      # the targets: 10,000 messages, every registered provider
    python bench/encode.py --messages 100000    # the 100k row, without targets
    python bench/encode.py --collections        # also which timed calls ran a full collection, and the floor

For each provider and workload: the time of `to_request` on the history (repair, id mapping and encoding
included) divided by the time of one `json.dumps` of the body it produced. Target at 10,000 messages: at
most 2.0, for both workloads (bench/workloads.py): `mixed`, the messy history where one reply in ten
restarts its ids, and `kimi`, where every reply restarts them (Kimi's `functions.search:0`), so every call
after the first reply is renamed. The two are timed in interleaved rounds on the process's CPU clock; each
cell is measured in several fresh processes (3 unless told), since how a fresh process lays out its heap
moved json.dumps by up to 2x here; the figure is the median of the per-round ratios of all of them, with
the middle half in brackets (bench/timing.py).

With `--collections`, each cell also times the floor in the same way: `json.loads` of the body's own JSON (the
fastest way CPython has to build the same dicts and lists) against the same `json.dumps`, with its own pattern of
full collections: what any writer of that body pays for the collector, whatever its code.
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

from chatmend import ChatMessage, providers
from chatmend.providers.base import Dropped, Provider
from timing import in_fresh_process, interleaved, interpreter, median, round_ratios, summarize
from workloads import kimi_messy, mixed_messy

WORKLOADS = {"mixed": mixed_messy, "kimi": kimi_messy}
TARGET, TARGET_MESSAGES = 2.0, 10_000


def _left_out(dropped: Dropped) -> None:
    """What a format has no place for (DeepSeek takes no images) is left out, as a caller's `on_unsupported=`
    would leave it: the other formats never call it."""


class FullCollections:
    """Which calls of a function ran a full collection (generation 2), seen through `gc.callbacks`: it only
    observes the collector, for `--collections`; the targets' runs do not register it."""

    def __init__(self) -> None:
        self.seen = 0
        self.calls: list[bool] = []

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            self.seen += 1

    def observing(self, fn: Callable[[], object]) -> Callable[[], object]:
        """fn, recording for each call whether a full collection ran during it."""

        def observed() -> object:
            before = self.seen
            result = fn()
            self.calls.append(self.seen > before)
            return result

        return observed

    def pattern(self) -> str:
        """The calls in order: F for one that ran a full collection, . for one that did not."""
        return "".join("F" if full else "." for full in self.calls)


def encode_ratios(provider: Provider, history: list[ChatMessage], rounds: int,
                  fulls: FullCollections | None = None) -> tuple[float, list[float]]:
    """(median to_request time, its per-round ratios to one json.dumps of the body it produced); with `fulls`,
    the timed calls are observed."""
    write = partial(provider.to_request, history, model="bench-model", on_unsupported=_left_out)
    body = write()
    timed = write if fulls is None else fulls.observing(write)
    times = interleaved({"to_request": timed, "json.dumps": partial(json.dumps, body)}, rounds)
    return median(times["to_request"]), round_ratios(times["to_request"], times["json.dumps"])


def floor_ratios(provider: Provider, history: list[ChatMessage], rounds: int,
                 fulls: FullCollections) -> list[float]:
    """The per-round ratios of `json.loads` of the body's JSON to one `json.dumps` of the body, observed."""
    body = provider.to_request(history, model="bench-model", on_unsupported=_left_out)
    times = interleaved({"json.loads": fulls.observing(partial(json.loads, json.dumps(body))),
                         "json.dumps": partial(json.dumps, body)}, rounds)
    return round_ratios(times["json.loads"], times["json.dumps"])


def cell(provider_name: str, workload: str, messages: int, rounds: int, collections: bool) -> dict[str, Any]:
    """One process's share of a cell of the table, measured in this (fresh) process."""
    provider, history = providers.get(provider_name), WORKLOADS[workload](messages)
    if not collections:
        t_encode, ratios = encode_ratios(provider, history, rounds)
        return {"to_request": t_encode, "ratios": ratios, "fulls": ""}
    fulls, floor = FullCollections(), FullCollections()
    gc.callbacks.append(fulls)
    t_encode, ratios = encode_ratios(provider, history, rounds, fulls)
    gc.callbacks.remove(fulls)
    gc.callbacks.append(floor)
    floors = floor_ratios(provider, history, rounds, floor)
    return {"to_request": t_encode, "ratios": ratios, "fulls": fulls.pattern(),
            "floor": floors, "floor_fulls": floor.pattern()}


def _pattern(patterns: list[str]) -> str:
    """How many of the timed calls of a cell's processes ran a full collection, and which."""
    full = sum(p.count("F") for p in patterns)
    return f"{full} of {sum(map(len, patterns))} timed calls ({' '.join(patterns)}, per process)"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=TARGET_MESSAGES)
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds in each process")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes for each cell")
    parser.add_argument("--provider", action="append", help="only these providers (repeatable)")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS), help="only these (repeatable)")
    parser.add_argument("--collections", action="store_true",
                        help="also print, for each cell, which timed to_request calls ran a full collection")
    parser.add_argument("--cell", nargs=2, metavar=("PROVIDER", "WORKLOAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cell:
        provider_name, workload = args.cell
        print(json.dumps(cell(provider_name, workload, args.messages, args.rounds, args.collections)))
        return 0

    chosen = args.workload or list(WORKLOADS)
    targeted = args.messages == TARGET_MESSAGES
    print(f"{interpreter()}; {args.messages:,} messages; each cell in {args.processes} fresh processes of "
          f"{args.rounds} interleaved rounds; ratio = to_request / json.dumps(body), median of all rounds "
          f"(middle half); " + (f"target <= {TARGET}" if targeted else f"targets are for {TARGET_MESSAGES:,}"))
    print(f"{'provider':<18}" + "".join(f"{name + ' to_request':>18}{'ratio':>18}{'':>8}" for name in chosen))
    observe = ["--collections"] if args.collections else []
    for name in args.provider or providers.names():
        row = f"{name:<18}"
        seen = []
        for workload in chosen:
            got = [in_fresh_process(__file__, name, workload, f"--messages={args.messages}", f"--rounds={args.rounds}",
                                    *observe)
                   for _ in range(args.processes)]
            ratio = summarize([r for g in got for r in g["ratios"]])
            verdict = ("met" if ratio.median <= TARGET else "MISSED") if targeted else ""
            row += f"{median([g['to_request'] for g in got]) * 1000:>16.1f}ms{ratio!s:>18}{verdict:>8}"
            if args.collections:
                seen.append(f"  {workload}: a full collection in {_pattern([g['fulls'] for g in got])}; floor "
                            f"(json.loads of the body's JSON) {summarize([r for g in got for r in g['floor']])}, "
                            f"a full collection in {_pattern([g['floor_fulls'] for g in got])}")
        print(row, flush=True)
        if args.collections:
            print("\n".join(seen), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
