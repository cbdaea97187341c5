"""Start-up cost (#48): `chatmend --version` and `import chatmend`, each as the time it adds to a bare interpreter.

    python bench/startup.py               # 30 rounds
    python bench/startup.py --rounds 60

Every run is a fresh process, timed on the wall clock from its start to its exit, and on the CPU time it used
(user and system: what a loaded machine inflates least). A round runs the three commands one after another (a
bare `python -c pass`, `python -c "import chatmend"`, `chatmend --version`), so a load that changes during the
run weighs on all three alike; each figure is the median over the rounds of the command's time less the bare
interpreter's in the same round. Targets, on the wall clock of an idle machine: `chatmend --version` at most
0.10 s more than the bare interpreter, `import chatmend` at most 60 ms more. The load average is printed with them.

`chatmend` is the console script beside this interpreter (`python -m chatmend` where there is none); the
`PYTHONPATH` of the environment reaches every child, so another checkout's `src` can be measured too.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGETS = {"import chatmend": 0.060, "chatmend --version": 0.100}


def commands() -> dict[str, list[str]]:
    """The bare interpreter and the two measured commands."""
    script = Path(sys.executable).with_name("chatmend")
    cli = [str(script), "--version"] if script.is_file() else [sys.executable, "-m", "chatmend", "--version"]
    return {"bare": [sys.executable, "-c", "pass"], "import chatmend": [sys.executable, "-c", "import chatmend"],
            "chatmend --version": cli}


def times(command: list[str]) -> tuple[float, float]:
    """Seconds from starting `command` to its exit, and the CPU seconds it used (its output discarded; a failure
    stops the bench)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def added_times(rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    """For each measured command, its wall and CPU times less the bare interpreter's of the same round."""
    runs = commands()
    added: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in runs if name != "bare"}
    for command in runs.values():
        times(command)  # warm the file cache before the first round
    for _ in range(rounds):
        bare_wall, bare_cpu = times(runs["bare"])
        for name, (walls, cpus) in added.items():
            wall, cpu = times(runs[name])
            walls.append(wall - bare_wall)
            cpus.append(cpu - bare_cpu)
    return added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds of the three commands (default 30)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    added = added_times(args.rounds)
    print(f"added to a bare interpreter, median of {args.rounds} fresh processes ({sys.executable}; "
          f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after):")
    for name, (walls, cpus) in added.items():
        wall, target = statistics.median(walls), TARGETS[name]
        low, _, high = statistics.quantiles(walls, n=4)
        verdict = "ok" if wall <= target else "over"
        print(f"  {name:<20} wall {wall * 1000:6.1f} ms (middle half {low * 1000:.1f}-{high * 1000:.1f}), "
              f"CPU {statistics.median(cpus) * 1000:6.1f} ms; target <= {target * 1000:.0f} ms: {verdict}")


if __name__ == "__main__":
    main()
