"""`chatmend doctor` over many sessions: does it scale with cores? (issue #24)

    python bench/doctor.py                    # 1,000 sessions, 1 worker vs 2, 3 interleaved rounds
    python bench/doctor.py --sessions 200 --workers 4 --runs 5

Seeds a temporary HOME with `--sessions` session files: Claude Code, Codex and Gemini CLI sessions (a third
each), each a copy of the shipped broken sample grown to about 200 turns so that reading and checking it is real
work, plus an opencode database of `--sessions / 10` sessions. Then times `chatmend.doctor.doctor` (check
only, nothing written) with 1 worker (in this process, no pool) and with `--workers` (a process pool, its
start-up included), interleaved, and prints each time (wall clock: the pool's work is in other processes) and
the ratio 1 worker / N workers. On an idle machine with 2 cores, a ratio near 2 is scaling with cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.transcripts.opencode_db import FINISH, STEP, assistant, make_db, tool, user  # noqa: E402

from chatmend.doctor import doctor  # noqa: E402

SAMPLES = ROOT / "examples" / "sessions"


def _grown(sample: Path, turns: int) -> str:
    """A sample session with its first records repeated (fresh ids) so it holds about `turns` turns."""
    lines = sample.read_text(encoding="utf-8").splitlines()
    head, body = lines[:1], lines[1:]
    out = list(head)
    for k in range(turns // max(len(body), 1) + 1):
        for line in body:
            out.append(line.replace('"id":"', f'"id":"r{k}-').replace('"uuid":"', f'"uuid":"r{k}-')
                       .replace('"call_id":"', f'"call_id":"r{k}-') if k else line)
    return "\n".join(out) + "\n"


def seed(home: Path, sessions: int) -> None:
    old = time.time() - 3600
    texts = {name: _grown(SAMPLES / name, 200) for name in
             ("claude_code.jsonl", "codex_rollout.jsonl", "gemini_cli_session.jsonl")}
    for n in range(sessions):
        kind = n % 3
        if kind == 0:
            path = home / ".claude" / "projects" / f"-p{n % 17}" / f"{n:08d}-0000-4000-8000-000000000000.jsonl"
            text = texts["claude_code.jsonl"]
        elif kind == 1:
            path = home / ".codex" / "sessions" / "2026" / "12" / f"{n % 28:02d}" / \
                f"rollout-2026-12-01T10-00-00-{n:08d}-0000-7000-8000-000000000000.jsonl"
            text = texts["codex_rollout.jsonl"]
        else:
            path = home / ".gemini" / "tmp" / f"p{n % 13}" / "chats" / f"session-{n:08d}.jsonl"
            text = texts["gemini_cli_session.jsonl"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (old, old))
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    steps = [part for k in range(20) for part in (STEP, tool(f"c{k}", "completed"), FINISH)]
    make_db(db, {f"ses_{s:04d}": [user("go"), assistant(*steps), user("on"), assistant(STEP, tool("x", "running"))]
                 for s in range(max(sessions // 10, 1))})
    for path in (db, Path(f"{db}-wal")):
        if path.exists():
            os.utime(path, (old, old))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="chatmend-doctor-bench-"))
    try:
        seed(home, args.sessions)
        env = {"HOME": str(home)}
        times: dict[int, list[float]] = {1: [], args.workers: []}
        counts = set()
        for _ in range(args.runs):
            for workers in (1, args.workers):
                start = time.perf_counter()
                found = list(doctor(env=env, workers=workers))
                times[workers].append(time.perf_counter() - start)
                counts.add((len(found), sum(f.status == "broken" for f in found)))
        ratios = [a / b for a, b in zip(times[1], times[args.workers])]
        print(json.dumps({
            "sessions": sorted(counts), "cpus": os.cpu_count(),
            "seconds_1_worker": [round(t, 2) for t in times[1]],
            f"seconds_{args.workers}_workers": [round(t, 2) for t in times[args.workers]],
            "ratio": round(statistics.median(ratios), 2),
        }))
    finally:
        shutil.rmtree(home)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
