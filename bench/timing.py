"""Timing helpers shared by the benchmarks: interleaved rounds and paired ratios, on the process's CPU clock.

This machine is noisy (a shared VM): a figure taken as one best-of-N against a baseline timed minutes
later moves ±30%. So candidates are timed in interleaved rounds (each once per round, in rotating order,
so a busy spell or drift hits all of them alike), a ratio is taken within each round, and the median of
those per-round ratios is the figure, with the middle half of them as its spread.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

CLOCKS: dict[str, Callable[[], float]] = {"process": time.process_time, "wall": time.perf_counter}
"""`process`: CPU time of this process (other processes on a busy machine barely move it); `wall`: elapsed."""


def interpreter() -> str:
    """The Python that measures, for the first line of a report: json.dumps itself was twice as fast on CPython
    3.13 as on 3.11 here, so every ratio to it depends on the version."""
    judged = "" if sys.version_info[:2] == (3, 11) else " (the targets are judged on CPython 3.11: none applies here)"
    return f"{platform.python_implementation()} {platform.python_version()}{judged}"


def best_of(fn: Callable[[], object], runs: int, clock: Callable[[], float] = time.process_time) -> float:
    """The fastest of `runs` timings of fn(), in seconds. The result is freed after the clock stops."""
    best = float("inf")
    for _ in range(runs):
        start = clock()
        result = fn()
        best = min(best, clock() - start)
        del result
    return best


def interleaved(
    candidates: Mapping[str, Callable[[], object]], rounds: int, clock: Callable[[], float] = time.process_time
) -> dict[str, list[float]]:
    """Each candidate's time in every round (seconds); within a round each runs once, the order rotating."""
    names = list(candidates)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            start = clock()
            result = candidates[name]()
            times[name].append(clock() - start)
            del result  # freed outside the clock
    return times


@dataclass(frozen=True)
class Ratio:
    """The median of per-round ratios, with the middle half of them (first to third quartile)."""

    median: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.median:.2f} ({self.low:.2f}-{self.high:.2f})"

    def to_json(self) -> list[float]:
        """The three figures, for a cell measured in another process."""
        return list(astuple(self))

    @classmethod
    def from_json(cls, data: Sequence[float]) -> Ratio:
        """A Ratio sent back by `to_json`."""
        return cls(*data)


def round_ratios(numerator: Sequence[float], denominator: Sequence[float]) -> list[float]:
    """The ratio of two candidates timed in the same rounds, round by round."""
    return [a / b for a, b in zip(numerator, denominator, strict=True)]


def summarize(ratios: Sequence[float]) -> Ratio:
    """The median of per-round ratios and their middle half (rounds of several processes may be pooled)."""
    ordered = sorted(ratios)
    return Ratio(quantile(ordered, 0.5), quantile(ordered, 0.25), quantile(ordered, 0.75))


def paired_ratio(numerator: Sequence[float], denominator: Sequence[float]) -> Ratio:
    """The ratio of two candidates timed in the same rounds: the median of the per-round ratios."""
    return summarize(round_ratios(numerator, denominator))


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated linearly."""
    position = q * (len(sorted_values) - 1)
    below = int(position)
    above = min(below + 1, len(sorted_values) - 1)
    return sorted_values[below] + (sorted_values[above] - sorted_values[below]) * (position - below)


def median(values: Sequence[float]) -> float:
    """The median of the values."""
    return quantile(sorted(values), 0.5)


def in_fresh_process(script: str | Path, *args: str) -> Any:
    """Run `python script --cell ARGS` in a new interpreter and return the JSON its last line prints.

    Each cell of a table is measured on a fresh heap: in a process that built and freed other histories
    before, a new one is laid out differently, which moved a candidate and its baseline by up to 2x here.
    The candidate and its baseline still run side by side in that one process.
    """
    done = subprocess.run([sys.executable, str(script), "--cell", *args], check=True, capture_output=True,
                          text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])
