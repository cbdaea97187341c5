"""Repairing leaves the process's garbage collector alone, so a server that repairs on threads keeps its memory.

`repair_history`, `Repairer.repair` and every provider's `to_request` once set the collector's thresholds so
that generations 1 and 2 never collected while a pass ran, and overlapping passes (on a thread pool) shared
that setting. With passes overlapping nearly all the time, the oldest generation was never collected: the
cyclic garbage of the rest of the process piled up (measured: 4.1 times the memory of the same process without
the repairing threads, after 10 s, growing without bound). Two tests:

* the collector's settings are the same before, during (seen from an `is_read_only` callback, which a pass
  calls for an interrupted call) and after each kind of pass;
* the threaded load itself, in fresh subprocesses (not this process's collector, nor other tests' memory):
  a loop making short-lived cyclic garbage, alone and then while three threads repair and write requests,
  must collect the oldest generation and keep its peak memory near the one it has alone.

This file is also the subprocesses' script: `python test_no_side_effects.py baseline|loaded` prints one JSON
object of what the run measured.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import TypedDict

import pytest

import chatmend
from chatmend import Repairer, providers, repair_history
from chatmend.repair import IsReadOnly

THREADS = 3
"""Threads repairing during the loaded run (a small thread pool)."""
ITERATIONS = 150_000
"""Requests the garbage loop makes, in either run (the same garbage: only the collector's work differs)."""
WINDOW = 5_000
"""Requests alive at a time: each one outlives several young collections, and reaches the oldest generation,
before it dies."""
PAYLOAD = 250
"""Bytes each request holds besides its containers (memory freed only with the request's cycles)."""
MAX_GROWTH_RATIO = 1.5
"""The loaded run's memory growth may be at most this times the baseline's."""

STATUS = Path("/proc/self/status")


class Measured(TypedDict):
    """What a subprocess's run measured: its peak memory over the one at the start of the garbage loop, the
    collections of the oldest generation and the seconds the loop took, and the repairing threads' rounds."""

    growth_mb: float
    full_collections: int
    seconds: float
    rounds: list[int]


def messy_history(turns: int) -> list[dict[str, object]]:
    """A history in neutral shape with work for repair: calls without results, results out of place, orphans."""
    history: list[dict[str, object]] = [{"role": "system", "content": "You search and summarize."}]
    for turn in range(turns):
        calls = [{"id": f"c{turn}_{i}", "name": "search", "arguments": {"q": f"x {turn} {i}"}} for i in range(3)]
        history.append({"role": "user", "content": f"question {turn}"})
        history.append({"role": "assistant", "content": "", "tool_calls": calls})
        if turn % 4 == 1:
            history.append({"role": "user", "content": "also check the docs"})  # a steer before the results
        answered = calls[:1] if turn % 3 == 0 else calls  # every third reply was cut off after its first call
        history += [{"role": "tool", "tool_call_id": c["id"], "content": f"result {c['id']} " * 8} for c in answered]
        if turn % 5 == 2:
            history.append({"role": "tool", "tool_call_id": "gone", "content": "late"})  # an orphan result
        if turn % 7 == 3:
            history.append({"role": "assistant", "content": " "})  # a placeholder
        history.append({"role": "assistant", "content": f"summary {turn}"})
    return history


def interrupted_history() -> list[dict[str, object]]:
    """A short history whose one call never got a result: its pass calls `is_read_only` for it."""
    return [
        {"role": "user", "content": "find x"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "search", "arguments": {"q": "x"}}]},
        {"role": "user", "content": "go on"},
    ]


def collector_settings() -> tuple[bool, tuple[int, int, int]]:
    """Whether the collector is on, and its thresholds."""
    return gc.isenabled(), gc.get_threshold()


def run_pass(kind: str, history: list[dict[str, object]], is_read_only: IsReadOnly) -> object:
    """One pass of the given kind: `repair_history`, `Repairer.repair`, or a provider's `to_request`."""
    if kind == "repair_history":
        return repair_history(history, is_read_only=is_read_only)
    if kind == "Repairer.repair":
        return Repairer(is_read_only=is_read_only).repair(history)
    return providers.get(kind).to_request(history, model="m", is_read_only=is_read_only)


@pytest.mark.parametrize("kind", ["repair_history", "Repairer.repair", *providers.names()])
def test_a_pass_leaves_the_collector_as_it_found_it(kind: str) -> None:
    before = collector_settings()
    during: list[tuple[bool, tuple[int, int, int]]] = []

    def is_read_only(name: str) -> bool:  # called mid-pass, for the interrupted call
        during.append(collector_settings())
        return True

    run_pass(kind, interrupted_history(), is_read_only)
    after = collector_settings()
    assert during, f"{kind}: is_read_only was never called, so the pass was not observed from inside"
    assert set(during) == {before}, f"{kind}: (enabled, thresholds) were {before} before the pass, {during} in it"
    assert after == before, f"{kind}: (enabled, thresholds) were {before} before the pass, {after} after it"


@pytest.mark.skipif(not STATUS.exists(), reason="reads the resident set size from /proc/self/status (Linux)")
def test_repairing_threads_let_the_oldest_generation_be_collected() -> None:
    runs = {mode: start_run(mode) for mode in ("baseline", "loaded")}  # both at once: half the wall time
    baseline, loaded = (finish_run(mode, process) for mode, process in runs.items())
    ratio = loaded["growth_mb"] / baseline["growth_mb"]
    figures = (f"alone: peak {baseline['growth_mb']:.1f} MB over the start, {baseline['full_collections']} "
               f"generation-2 collections in {baseline['seconds']:.2f} s; with {THREADS} repairing threads: peak "
               f"{loaded['growth_mb']:.1f} MB ({ratio:.2f} times as much), {loaded['full_collections']} "
               f"generation-2 collections in {loaded['seconds']:.2f} s, rounds per thread {loaded['rounds']}")
    assert len(loaded["rounds"]) == THREADS and min(loaded["rounds"]) >= 1, (
        f"a repairing thread did no round while the loop ran ({figures})"
    )
    assert baseline["full_collections"] >= 1, f"the garbage loop alone never collected generation 2 ({figures})"
    assert ratio <= MAX_GROWTH_RATIO, (
        f"repairing threads made the garbage loop's peak memory more than {MAX_GROWTH_RATIO} times the one it has "
        f"alone: {figures}"
    )
    assert loaded["full_collections"] >= 1, f"generation 2 was never collected while threads repaired ({figures})"


def start_run(mode: str) -> subprocess.Popen[str]:
    """This file as a script, in a fresh interpreter importing the chatmend under test."""
    source = str(Path(chatmend.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen([sys.executable, __file__, mode], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish_run(mode: str, process: subprocess.Popen[str]) -> Measured:
    """What the run printed, once it ended."""
    try:
        out, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    assert process.returncode == 0, f"the {mode} run failed ({process.returncode}):\n{err[-3000:]}"
    measured: Measured = json.loads(out)
    return measured


# --- the subprocess ------------------------------------------------------------------------------------------


def memory_status(field: str) -> int:
    """A memory figure of this process, in bytes: `VmRSS` (resident now) or `VmHWM` (the highest resident)."""
    for line in STATUS.read_text().splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return int(value.split()[0]) * 1024  # in kB
    raise LookupError(f"no {field} in {STATUS}")


def make_garbage() -> None:
    """The workload: `ITERATIONS` requests, each a few containers that refer to one another (cycles: only the
    collector frees them), each kept alive while the next `WINDOW` are made."""
    recent: deque[dict[str, object]] = deque(maxlen=WINDOW)
    for _ in range(ITERATIONS):
        request: dict[str, object] = {"payload": bytes(PAYLOAD)}
        request["parts"] = [{"request": request}, {"request": request}]
        recent.append(request)


def repair_in_a_loop(history: list[dict[str, object]], ready: threading.Barrier, stop: threading.Event,
                     rounds: list[int]) -> None:
    """A thread of the pool: `repair_history` and every provider's `to_request`, round after round."""
    writers = [providers.get(name).to_request for name in providers.names()]

    def one_round() -> None:
        repair_history(history)
        for to_request in writers:
            to_request(history, model="m")

    one_round()  # warmed up before the loop starts
    ready.wait()
    done = 0
    while not stop.is_set():
        one_round()
        done += 1
    rounds.append(done)


def measure(mode: str) -> Measured:
    """The garbage loop alone (`baseline`) or while `THREADS` threads repair (`loaded`); reading the memory
    only before and after it (a read in the loop would wait for the other threads to give the GIL back)."""
    history = messy_history(60)
    ready = threading.Barrier(THREADS + 1)
    stop = threading.Event()
    rounds: list[int] = []
    threads = [threading.Thread(target=repair_in_a_loop, args=(history, ready, stop, rounds))
               for _ in range(THREADS if mode == "loaded" else 0)]
    for thread in threads:
        thread.start()
    if threads:
        ready.wait()
    gc.collect()
    start, full_before = memory_status("VmRSS"), gc.get_stats()[2]["collections"]
    began = time.perf_counter()
    make_garbage()
    seconds = time.perf_counter() - began
    peak, full_collections = memory_status("VmHWM"), gc.get_stats()[2]["collections"] - full_before
    stop.set()
    for thread in threads:
        thread.join()
    return {"growth_mb": (peak - start) / 2**20, "full_collections": full_collections, "seconds": seconds,
            "rounds": rounds}


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))


EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "ctrl_c_during_tools.jsonl"


def test_the_cli_called_from_code_leaves_the_collector_alone(capsys: pytest.CaptureFixture[str]) -> None:
    from chatmend import cli

    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count(), sys.getrecursionlimit())
    assert cli.main(["show", str(EXAMPLE), "--color", "never"]) == 0
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count(), sys.getrecursionlimit()) == before
    assert capsys.readouterr().out


@pytest.mark.parametrize(("limit", "after"), [(1000, 2000), (5000, 5000)])
def test_the_program_tunes_its_own_collector_and_recursion_limit(limit: int, after: int) -> None:
    # Run as `chatmend` (no argv given to main), the CLI owns its process and may tune it (never lowering a limit).
    script = (f"import gc, sys; sys.setrecursionlimit({limit}); from chatmend.cli import main; "
              "sys.argv = ['chatmend', 'show', sys.argv[1]]; code = main(); "
              "print(gc.get_threshold(), gc.get_freeze_count() > 0, sys.getrecursionlimit(), code, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", script, str(EXAMPLE)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"(50000, 20, 10) True {after} 0"
