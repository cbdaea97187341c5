"""Timing helpers shared by the benchmarks: best-of-N, on a clock the other processes disturb least."""

from __future__ import annotations

import time
from collections.abc import Callable

CLOCKS: dict[str, Callable[[], float]] = {"process": time.process_time, "wall": time.perf_counter}
"""`process`: CPU time of this process (other processes on a busy machine barely move it); `wall`: elapsed."""


def best_of(fn: Callable[[], object], runs: int, clock: Callable[[], float] = time.process_time) -> float:
    """The fastest of `runs` timings of fn(), in seconds. The result is freed after the clock stops."""
    best = float("inf")
    for _ in range(runs):
        start = clock()
        result = fn()
        best = min(best, clock() - start)
        del result
    return best
