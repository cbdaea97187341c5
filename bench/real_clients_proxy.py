"""The real clients through `chatmend proxy` (issue #23): an interrupted session resumed with no `chatmend repair`.

    RC_ROOT=/tmp/rc-me CHATMEND=.venv/bin/chatmend python bench/real_clients_proxy.py claude:mixed codex:sigkill
    python bench/real_clients_proxy.py --report

It drives `../shared/real-clients/rc.py` (read there how each client is installed and pointed at the fake
provider) without changing it: its `Server` is wrapped so that every phase starts the fake provider and a
`chatmend proxy` in front of it (`--upstream` for every family to the fake's port), and the client is given the
proxy's port as its base URL. The client is interrupted as rc.py does it (through the proxy: the user runs it
there all along); then, from the same interrupted folder, the session is resumed

- directly against the fake provider (the control: what the client sends on its own, usually a 400), and
- through the proxy, with the session file left as the client left it: the proxy repairs the body in flight.

Each resume records what the fake provider received (`all_valid`: every conversation body it checked passed, in
the provider's own rules; `proceeded`: the client got its answer and exited 0; the tool calls of the first resumed
body and whether each has a result) and the proxy's `repaired` log lines. Results go to
`$RC_ROOT/proxy-runs/<client>/<case>.json`; `--report` prints the table. Like rc.py, everything runs in a fresh
network namespace with only loopback (root), and every process started is stopped by its PID. Not in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

HARNESS = Path(__file__).resolve().parents[2] / "shared" / "real-clients"
if not HARNESS.exists():  # run from a worktree: ../shared beside the project root
    HARNESS = Path.cwd().parent / "shared" / "real-clients"


def _load_rc() -> Any:
    spec = importlib.util.spec_from_file_location("rc", HARNESS / "rc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rc"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def proxied_server(rc: Any, log: list[dict[str, Any]]) -> type:
    """rc's `Server` with a `chatmend proxy` in front: `.port` is the proxy's, `.fake_port` the provider's."""

    class ProxiedServer(rc.Server):  # type: ignore[misc]
        def __init__(self, log_dir: Path, stall_seconds: float = 90) -> None:
            super().__init__(log_dir, stall_seconds)
            fake_port: int = self.__dict__["port"]  # the fake provider's, as rc's Server set it
            self.fake_port = fake_port
            self.port = _free_port()
            fake = f"http://127.0.0.1:{self.fake_port}"
            argv = [rc.CHATMEND, "proxy", "--port", str(self.port), "--log-json", "--grace-seconds", "2",
                    "--upstream", f"anthropic={fake}", "--upstream", f"openai={fake}/v1",
                    "--upstream", f"gemini={fake}"]
            self.proxy_err = log_dir / "proxy.err"
            with open(self.proxy_err, "wb") as err:  # the child keeps its own descriptor
                self.proxy = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
            deadline = time.time() + 20
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=1).close()
                    break
                except OSError:
                    if time.time() > deadline or self.proxy.poll() is not None:
                        self.stop()
                        raise RuntimeError(f"chatmend proxy did not start: {self.proxy_err.read_text()}") from None
                    time.sleep(0.1)

        def stop(self) -> None:
            if self.proxy.poll() is None:
                self.proxy.terminate()
                try:
                    self.proxy.wait(10)
                except subprocess.TimeoutExpired:
                    self.proxy.kill()
                    self.proxy.wait(5)
            log.append({"log_dir": str(self.log_dir), "events": _events(self.proxy_err)})
            super().stop()

    return ProxiedServer


def _events(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def _short(r: dict[str, Any]) -> dict[str, Any]:
    server = r.get("server") or {}
    calls = server.get("resume_body_calls")
    return {
        "all_valid": r.get("valid"), "proceeded": r.get("proceeded"), "exit_code": r.get("exit_code"),
        "timed_out": r.get("timed_out"), "conversation_requests": server.get("conversation_requests"),
        "first_violation": next((x["violations"][0] for x in server.get("invalid", [])), None),
        "resume_calls": None if calls is None else f"{sum(1 for c in calls if c.get('result') is not None)}/"
                                                   f"{len(calls)} answered",
    }


def run_case(rc: Any, client: str, case: str) -> dict[str, Any]:
    log: list[dict[str, Any]] = []
    direct_server = rc.Server
    rc.Server = proxied_server(rc, log)
    try:
        first = rc.interrupt(client, case)
    finally:
        rc.Server = direct_server
    run = rc.RUNS / client / case
    result: dict[str, Any] = {"client": client, "version": first.get("version"), "case": case,
                              "trigger": first.get("trigger"), "signals": first.get("signals"),
                              "check_interrupted": (first.get("chatmend_check") or {}).get("rc")}
    if not first.get("session_files"):
        result["error"] = "no session file after the interrupt"
        return result
    c = rc.make_client(client, run)
    sid = first["session_id"]
    rc._restore(c)
    result["direct"] = _short(rc._resume_once(c, sid, "direct-resume"))
    rc._restore(c)
    log.clear()
    rc.Server = proxied_server(rc, log)
    try:
        through = rc._resume_once(c, sid, "proxy-resume")
    finally:
        rc.Server = direct_server
    result["through_proxy"] = _short(through)
    events = [e for entry in log for e in entry["events"]]
    result["proxy_repaired"] = [{k: e.get(k) for k in ("route", "provider", "interrupted", "moved", "notes",
                                                          "renamed", "rewritten")}
                                for e in events if e.get("event") == "repaired"]
    result["proxy_unreadable"] = [e for e in events if e.get("event") == "unreadable"]
    result["session_untouched"] = True  # no chatmend repair ran on the folder in either resume
    rc._restore(c)
    return result


def report(root: Path) -> str:
    rows = ["| client | case | interrupted file (`chatmend check`) | resume direct | resume through the proxy | "
            "proxy repairs |", "|---|---|---|---|---|---|"]
    for f in sorted((root / "proxy-runs").glob("*/*.json")):
        r = json.loads(f.read_text())

        def cell(x: dict[str, Any] | None) -> str:
            if not x:
                return "—"
            state = (f"400: {x['first_violation'][:60]}" if x.get("first_violation") else
                     "valid" if x.get("all_valid") else f"no request (exit {x.get('exit_code')})")
            return f"{state}, {x.get('resume_calls') or '-'}, {'went on' if x.get('proceeded') else 'did not go on'}"

        broken = {0: "valid", 1: "broken"}.get(r.get("check_interrupted"), "cannot read")
        rows.append(f"| {r['client']} {r.get('version')} | {r['case']} | {broken} | {cell(r.get('direct'))} | "
                    f"{cell(r.get('through_proxy'))} | {len(r.get('proxy_repaired', []))} |")
    return "\n".join(rows) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="CLIENT:CASE, e.g. claude:mixed codex:sigkill gemini:round")
    parser.add_argument("--report", action="store_true", help="print the table of the results so far")
    args = parser.parse_args()
    os.environ.setdefault("RC_NETNS", "0")  # this script made the namespace already
    rc = _load_rc()
    if args.report:
        sys.stdout.write(report(rc.ROOT))
        return 0
    for spec in args.cases:
        client, _, case = spec.partition(":")
        started = time.time()
        result = run_case(rc, client, case or "slow")
        out = rc.ROOT / "proxy-runs" / client / f"{case}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=1))
        print(json.dumps({k: result.get(k) for k in ("client", "case", "direct", "through_proxy")}) +
              f" repairs={len(result.get('proxy_repaired', []))} ({time.time() - started:.0f}s)", flush=True)
    sys.stdout.write(report(rc.ROOT))
    return 0


if __name__ == "__main__":
    if os.environ.get("RC_IN_NETNS") != "1" and shutil.which("unshare") and "--report" not in sys.argv:
        # a fresh network namespace with only loopback, as rc.py makes one: nothing can leave this machine
        inner = 'ip link set lo up && exec "$0" "$@"'
        os.execvpe("unshare", ["unshare", "-n", "sh", "-c", inner, sys.executable, *sys.argv],
                   dict(os.environ, RC_IN_NETNS="1"))
    raise SystemExit(main())
