"""The real clients against a fake provider: break a session by killing the client while its tool runs, resume it
as is, repair it with chatmend, resume again, and record what the client sent (issue #46).

    python bench/real_clients/driver.py install qwen            # the pinned version, into $RC_ROOT/npm-qwen
    python bench/real_clients/driver.py run qwen --case slow    # interrupt, resume, repair, resume (one case)
    python bench/real_clients/driver.py run all --case all
    python bench/real_clients/driver.py report                  # the table of every result so far

Clients (pinned): `copilot` (@github/copilot), `qwen` (@qwen-code/qwen-code), `kilo` (@kilocode/cli). Each is
pointed at `fake_provider.py` on 127.0.0.1 through its own settings for an OpenAI-compatible endpoint, with a fake
key and a scratch HOME. Cases (the prompt's `rc-case:`): `slow` (SIGINT to the client's process group while a
60 s shell command runs, as Ctrl-C in a terminal does), `sigkill` (SIGKILL of the client process alone, a crash),
`parallel` (two 60 s calls in one reply, SIGINT), `round` (a completed `echo` round, then the 60 s call, SIGKILL).

Phases of `run`: **interrupt** (the prompt; the kill once the command's process is among the client's
descendants, after 2 s), **as is** (the client resumes the session with the prompt `rc-resume: continue`), **healed**
(`chatmend check` and `repair --in-place` of what the client left after that resume, then a resume again: a client
that heals a session itself must not be harmed by chatmend), **repair** (`chatmend check`, then `chatmend repair
--in-place` of the session in its store, from the copy of HOME saved right after the interrupt), **after repair**
(the client resumes again). For each resume the fake provider
says whether every body it got was valid by Chat Completions' rules, and which tool calls the first body carrying
the resume prompt holds, each with its result or none. Results: `$RC_ROOT/runs/<client>/<case>/result.json`.

Nothing reaches the network: the driver re-runs itself in a fresh network namespace that has only loopback
(`unshare -n`, then `ip link set lo up`; root), installs happen outside it. Every wait is bounded; every process
started is stopped by its PID (its process group, then each descendant seen, checked by start time). Not in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
ROOT = Path(os.environ.get("RC_ROOT", os.path.join(tempfile.gettempdir(), "chatmend-real-clients")))
CHATMEND = os.environ.get("CHATMEND", str(PROJECT / ".venv" / "bin" / "chatmend"))
PROMPT = "rc-case:{case} Please run the shell command you are given and then say done."
RESUME_PROMPT = "rc-resume: continue"
CASES = ("slow", "sigkill", "parallel", "round")
SIGKILLED = ("sigkill", "round")
START_TIMEOUT = 150.0
RESUME_TIMEOUT = 150.0
GRACE = 8.0
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb", "NO_COLOR": "1", "CI": "1"}


# --- processes -----------------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    rest = text[text.rfind(")") + 2:].split()
    return int(rest[1]), int(rest[19])


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return [a.decode("utf-8", "replace") for a in handle.read().split(b"\0") if a]
    except OSError:
        return []


def descendants(root: int) -> dict[int, int]:
    """pid -> start time of every live descendant of `root`."""
    parents: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (st := _stat(int(name))) is not None:
            parents[int(name)] = st
    found: dict[int, int] = {}
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child, (parent, start) in parents.items():
            if parent == pid and child not in found:
                found[child] = start
                frontier.append(child)
    return found


@dataclass
class Proc:
    """A process started in a session of its own; every descendant seen is remembered, to be stopped by PID."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    out: Path
    popen: subprocess.Popen[bytes] | None = None
    seen: dict[int, int] = field(default_factory=dict)
    signals: list[str] = field(default_factory=list)
    started: float = 0.0

    def start(self) -> None:
        self.started = time.time()
        with open(self.out, "wb") as out, open(self.out.with_suffix(".err"), "wb") as err:
            self.popen = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL,
                                          stdout=out, stderr=err, start_new_session=True)
        if (st := _stat(self.popen.pid)) is not None:
            self.seen[self.popen.pid] = st[1]

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def scan(self) -> dict[int, int]:
        found = descendants(self.pid) if self.alive() else {}
        self.seen.update(found)
        return found

    def signal(self, sig: signal.Signals, *, group: bool) -> None:
        self.signals.append(f"{time.time() - self.started:.1f}s {sig.name} {'group' if group else 'client'}")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig) if group else os.kill(self.pid, sig)

    def wait(self, timeout: float) -> int | None:
        assert self.popen is not None
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """SIGKILL whatever is left: the group, then every descendant seen that is still the same process."""
        if self.popen is None:
            return
        if self.alive():
            self.scan()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        for pid, start in self.seen.items():
            st = _stat(pid)
            if st is not None and st[1] == start:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self.wait(5)


class Provider:
    """`fake_provider.py` on a free port of 127.0.0.1, logging into `log_dir`."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        log_dir.mkdir(parents=True, exist_ok=True)
        port_file = log_dir / "port"
        with open(log_dir / "server.err", "wb") as err:
            self.popen = subprocess.Popen(
                [sys.executable, str(HERE / "fake_provider.py"), "--log-dir", str(log_dir), "--port-file",
                 str(port_file), "--max-seconds", "900"], stdin=subprocess.DEVNULL, stdout=err, stderr=err)
        deadline = time.time() + 10
        while not port_file.exists():
            if time.time() > deadline or self.popen.poll() is not None:
                raise RuntimeError(f"the fake provider did not start: {(log_dir / 'server.err').read_text()}")
            time.sleep(0.05)
        self.port = int(port_file.read_text())

    def stop(self) -> None:
        self.popen.terminate()
        try:
            self.popen.wait(5)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(5)

    def requests(self) -> list[dict[str, Any]]:
        out = []
        for path in sorted(self.log_dir.glob("[0-9]*.json")):
            with contextlib.suppress(OSError, ValueError):
                out.append(json.loads(path.read_text()))
        return out


def calls_with_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool call of a Chat Completions body, with the start of the result sent for it (None: no result)."""
    results: dict[str, str] = {}
    calls: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        for call in message.get("tool_calls") or []:
            calls.append({"id": call.get("id"), "name": (call.get("function") or {}).get("name")})
        if message.get("role") == "tool":
            content = message.get("content")
            results[str(message.get("tool_call_id"))] = (content if isinstance(content, str)
                                                         else json.dumps(content))[:120]
    return [{**c, "result": results.get(str(c["id"]))} for c in calls]


def verdict(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """What the fake provider saw of one phase: every conversation body valid or not, and the calls of the first
    body that carries the resume prompt."""
    bodies = [r for r in requests if r.get("method") == "POST" and isinstance(r.get("body"), dict)]
    resumed = next((r for r in bodies if RESUME_PROMPT in json.dumps(r["body"])), None)
    return {
        "requests": len(bodies),
        "invalid": [{"seq": r["seq"], "violations": r["violations"]} for r in bodies if r.get("violations")],
        "valid": bool(bodies) and not any(r.get("violations") for r in bodies),
        "resume_calls": calls_with_results(resumed["body"]) if resumed else None,
        "answered": [r.get("answer") for r in bodies],
    }


# --- clients -------------------------------------------------------------------------------------------------


class Client:
    """One agent CLI: its npm package at a pinned version, how it is pointed at the provider, started, resumed."""

    name = ""
    package = ""
    version = ""

    def __init__(self, run: Path) -> None:
        self.run = run
        self.home = run / "home"
        self.work = run / "work"
        self.npm = ROOT / f"npm-{self.name}-{self.version}"

    @property
    def bin(self) -> Path:
        return self.npm / "node_modules" / ".bin"

    def install(self) -> None:
        self.npm.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(self.npm), "--no-audit", "--no-fund",
                        f"{self.package}@{self.version}"], check=True)

    def installed(self) -> str | None:
        try:
            data = json.loads((self.npm / "node_modules" / self.package / "package.json").read_text())
        except (OSError, ValueError):
            return None
        version = data.get("version")
        return version if isinstance(version, str) else None

    def prepare(self, port: int) -> None:
        """Settings that point the client at the provider on `port` (written before every phase)."""

    def env(self, port: int) -> dict[str, str]:
        return dict(BASE_ENV, HOME=str(self.home), TMPDIR=str(self.run / "tmp"),
                    PATH=f"{self.bin}:{Path(shutil.which('node') or '/usr/bin/node').parent}:{BASE_ENV['PATH']}")

    def start_argv(self, prompt: str, sid: str) -> list[str]:
        raise NotImplementedError

    def resume_argv(self, prompt: str, sid: str) -> list[str]:
        raise NotImplementedError

    def session_id(self, sid: str) -> str:
        """The session's id once the client ran (`sid` the one it was given, if it takes one)."""
        return sid

    def store(self, sid: str) -> Path | None:
        """What chatmend repairs: the session's file, or the store holding it."""
        raise NotImplementedError

    def repair_args(self, sid: str) -> list[str]:
        return []


class Copilot(Client):
    """GitHub Copilot CLI: BYOK with `COPILOT_PROVIDER_BASE_URL` (OpenAI Chat Completions), offline mode."""

    name = "copilot"
    package = "@github/copilot"
    version = "1.0.102"

    def env(self, port: int) -> dict[str, str]:
        return dict(super().env(port), COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{port}/v1",
                    COPILOT_PROVIDER_TYPE="openai", COPILOT_PROVIDER_API_KEY="sk-rc-fake-key",
                    COPILOT_MODEL="rc-model", COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false",
                    COPILOT_ALLOW_ALL="1")

    def start_argv(self, prompt: str, sid: str) -> list[str]:
        return [str(self.bin / "copilot"), "-p", prompt, "--session-id", sid, "--allow-all-tools", "--no-auto-update"]

    def resume_argv(self, prompt: str, sid: str) -> list[str]:
        return [str(self.bin / "copilot"), "-p", prompt, "--resume", sid, "--allow-all-tools", "--no-auto-update"]

    def store(self, sid: str) -> Path | None:
        path = self.home / ".copilot" / "session-state" / sid / "events.jsonl"
        return path if path.exists() else None


class Qwen(Client):
    """Qwen Code: auth type `openai` with `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL`."""

    name = "qwen"
    package = "@qwen-code/qwen-code"
    version = "0.24.4"

    def prepare(self, port: int) -> None:
        folder = self.home / ".qwen"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }, indent=1))

    def env(self, port: int) -> dict[str, str]:
        return dict(super().env(port), OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="sk-rc-fake-key",
                    OPENAI_MODEL="rc-model")

    def _argv(self) -> list[str]:
        return ["node", str(self.npm / "node_modules" / "@qwen-code" / "qwen-code" / "cli.js")]

    def start_argv(self, prompt: str, sid: str) -> list[str]:
        return [*self._argv(), prompt, "--session-id", sid, "--yolo", "--auth-type", "openai", "-m", "rc-model",
                "-o", "stream-json"]

    def resume_argv(self, prompt: str, sid: str) -> list[str]:
        return [*self._argv(), prompt, "--resume", sid, "--yolo", "--auth-type", "openai", "-m", "rc-model",
                "-o", "stream-json"]

    def store(self, sid: str) -> Path | None:
        found = glob.glob(str(self.home / ".qwen" / "projects" / "*" / "chats" / f"{sid}.jsonl"))
        return Path(found[0]) if found else None


class Kilo(Client):
    """Kilo Code's CLI (opencode's fork): a provider `rc` with `@ai-sdk/openai-compatible` in its config."""

    name = "kilo"
    package = "@kilocode/cli"
    version = "7.7.7"  # the newest whose Linux binary is published (7.8.1's @kilocode/cli-linux-x64 is not)

    def prepare(self, port: int) -> None:
        folder = self.home / ".config" / "kilo"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "kilo.json").write_text(json.dumps({
            "$schema": "https://app.kilo.ai/config.json", "autoupdate": False, "share": "disabled",
            "model": "rc/rc-model", "small_model": "rc/rc-model",
            "provider": {"rc": {"npm": "@ai-sdk/openai-compatible", "name": "rc fake provider",
                                "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "sk-rc-fake-key"},
                                "models": {"rc-model": {"name": "rc model", "tool_call": True,
                                                        "limit": {"context": 200000, "output": 8192}}}}},
            "permission": {"bash": "allow", "edit": "allow", "external_directory": "allow"},
        }, indent=1))

    def env(self, port: int) -> dict[str, str]:
        return dict(super().env(port), KILO_DISABLE_AUTOUPDATE="1", KILO_DISABLE_MODELS_FETCH="1",
                    KILO_DISABLE_LSP_DOWNLOAD="1", KILO_DISABLE_DEFAULT_PLUGINS="1", KILO_DISABLE_SHARE="1",
                    KILO_DISABLE_SESSION_INGEST="1", KILO_DISABLE_PRESENCE="1", KILO_PURE="1")

    def start_argv(self, prompt: str, sid: str) -> list[str]:
        return [str(self.bin / "kilo"), "run", "--format", "json", prompt]

    def resume_argv(self, prompt: str, sid: str) -> list[str]:
        return [str(self.bin / "kilo"), "run", "--format", "json", "--session", sid, prompt]

    @property
    def db(self) -> Path:
        return self.home / ".local" / "share" / "kilo" / "kilo.db"

    def session_id(self, sid: str) -> str:
        if not self.db.exists():
            return sid
        connection = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            row = connection.execute("SELECT id FROM session ORDER BY time_created DESC LIMIT 1").fetchone()
        finally:
            connection.close()
        return str(row[0]) if row else sid

    def store(self, sid: str) -> Path | None:
        return self.db if self.db.exists() else None

    def repair_args(self, sid: str) -> list[str]:
        return ["--session", sid]


CLIENTS: dict[str, type[Client]] = {c.name: c for c in (Copilot, Qwen, Kilo)}


# --- phases --------------------------------------------------------------------------------------------------


def _commands(proc: Proc) -> int:
    """How many of the fake provider's slow commands run among the client's descendants."""
    return sum(1 for pid in proc.scan() if (argv := _cmdline(pid))[:1] == ["timeout"] and "tail" in argv)


def _tail(path: Path, size: int = 2000) -> str:
    try:
        return path.read_bytes()[-size:].decode("utf-8", "replace")
    except OSError:
        return ""


def chatmend(args: list[str]) -> dict[str, Any]:
    try:
        done = subprocess.run([CHATMEND, *args], capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"args": args, "error": repr(exc)}
    return {"args": [a.replace(str(ROOT), "$RC_ROOT") for a in args], "rc": done.returncode,
            "stdout": done.stdout.decode("utf-8", "replace")[-3000:].replace(str(ROOT), "$RC_ROOT"),
            "stderr": done.stderr.decode("utf-8", "replace")[-3000:].replace(str(ROOT), "$RC_ROOT")}


def interrupt(client: Client, case: str, sid: str) -> dict[str, Any]:
    """Run the prompt and kill the client while its command runs; HOME is kept as `home.interrupted`."""
    provider = Provider(client.run / "log-interrupt")
    try:
        client.prepare(provider.port)
        proc = Proc(client.start_argv(PROMPT.format(case="slow" if case == "sigkill" else case), sid),
                    client.env(provider.port), client.work, client.run / "interrupt.out")
        proc.start()
        want = 2 if case == "parallel" else 1
        deadline = time.time() + START_TIMEOUT
        running = 0
        first_seen: float | None = None
        while time.time() < deadline and proc.alive() and (running := _commands(proc)) < want:
            first_seen = first_seen or (time.time() if running else None)
            if first_seen and time.time() - first_seen > 8:
                break  # a client that runs parallel calls one at a time: killed during the first
            time.sleep(0.25)
        result: dict[str, Any] = {"commands_running": running, "exited_before_kill": not proc.alive()}
        if running:
            time.sleep(2.0)  # let the client write what it writes while a tool runs
            proc.scan()
            if case in SIGKILLED:
                proc.signal(signal.SIGKILL, group=False)
                code = proc.wait(GRACE)
            else:
                proc.signal(signal.SIGINT, group=True)
                code = proc.wait(GRACE)
                if code is None:
                    proc.signal(signal.SIGINT, group=True)
                    code = proc.wait(GRACE)
            result["exit_code"] = code
        result["signals"] = proc.signals
        proc.stop()
        result["provider"] = verdict(provider.requests())
        result["stderr_tail"] = _tail(client.run / "interrupt.err")
    finally:
        provider.stop()
    shutil.copytree(client.home, client.run / "home.interrupted", symlinks=True)
    return result


def resume(client: Client, sid: str, label: str) -> dict[str, Any]:
    """Resume the session with the resume prompt; what the provider saw and how the client ended."""
    provider = Provider(client.run / f"log-{label}")
    try:
        client.prepare(provider.port)
        proc = Proc(client.resume_argv(RESUME_PROMPT, sid), client.env(provider.port), client.work,
                    client.run / f"{label}.out")
        proc.start()
        deadline = time.time() + RESUME_TIMEOUT
        while time.time() < deadline and proc.alive():
            proc.scan()
            time.sleep(0.25)
        timed_out = proc.alive()
        if timed_out:
            proc.signal(signal.SIGINT, group=True)
            proc.wait(GRACE)
        code = proc.wait(1)
        proc.stop()
        seen = verdict(provider.requests())
        return {"exit_code": code, "timed_out": timed_out, "provider": seen,
                "went_on": seen["valid"] and code == 0 and "text" in seen["answered"],
                "stdout_tail": _tail(client.run / f"{label}.out"), "stderr_tail": _tail(client.run / f"{label}.err")}
    finally:
        provider.stop()


def restore(client: Client) -> None:
    """HOME as it was right after the interrupt."""
    shutil.rmtree(client.home, ignore_errors=True)
    shutil.copytree(client.run / "home.interrupted", client.home, symlinks=True)


def run_case(name: str, case: str) -> dict[str, Any]:
    run = ROOT / "runs" / name / case
    shutil.rmtree(run, ignore_errors=True)
    for folder in ("home", "work", "tmp"):
        (run / folder).mkdir(parents=True)
    client = CLIENTS[name](run)
    result: dict[str, Any] = {"client": name, "version": client.installed(), "case": case}
    sid = str(uuid.uuid4())
    result["interrupt"] = interrupt(client, case, sid)
    sid = client.session_id(sid)
    result["session_id"] = sid
    restore(client)
    result["as_is"] = resume(client, sid, "resume")
    target = client.store(sid)
    if target is not None:  # the session as the client left it after healing it itself: chatmend must not harm it
        extra = client.repair_args(sid)
        result["healed_check"] = chatmend(["check", str(target), *extra])
        result["healed_repair"] = chatmend(["repair", str(target), *extra, "--in-place"])
        if result["healed_repair"].get("rc") == 0:
            result["healed_then_repaired"] = resume(client, sid, "resume-healed")
    restore(client)  # the repair works on the session as the kill left it
    target = client.store(sid)
    if target is not None:
        extra = client.repair_args(sid)
        result["check"] = chatmend(["check", str(target), *extra])
        result["repair"] = chatmend(["repair", str(target), *extra, "--in-place"])
        result["check_after"] = chatmend(["check", str(target), *extra])
        if result["repair"].get("rc") == 0:
            result["after_repair"] = resume(client, sid, "resume-repaired")
    else:
        result["repair"] = {"error": "no session file or store found"}
    (run / "result.json").write_text(json.dumps(result, indent=1))
    return result


# --- report --------------------------------------------------------------------------------------------------


def cell(phase: dict[str, Any] | None) -> str:
    """A resume in a table cell: valid or the provider's 400, the calls answered, whether the client went on."""
    if not phase:
        return "—"
    seen = phase["provider"]
    text: str
    if seen["invalid"]:
        text = "400: " + str(seen["invalid"][0]["violations"][0])[:70]
    elif not seen["requests"]:
        return f"no request (exit {phase['exit_code']})"
    else:
        text = "valid"
    calls = seen.get("resume_calls")
    if calls is not None:
        text += f", {sum(1 for c in calls if c['result'] is not None)}/{len(calls)} calls answered"
    if not seen["invalid"]:
        text += ", went on" if phase.get("went_on") else ", did not go on"
    return text


def _healed(r: dict[str, Any]) -> str:
    """The session the client healed itself on resume: what chatmend check says of it, and the next resume after
    chatmend repair."""
    check = (r.get("healed_check") or {}).get("rc")
    said = {0: "no problem", 1: "broken"}.get(check, "cannot read") if isinstance(check, int) else "—"
    return f"check: {said}; {cell(r.get('healed_then_repaired'))}"


def report() -> str:
    lines = ["| client | version | case | kill | chatmend check | as is | chatmend repair | after repair | "
             "as is, then repair, resume |", "|---|---|---|---|---|---|---|---|---|"]
    for path in sorted((ROOT / "runs").glob("*/*/result.json")):
        r = json.loads(path.read_text())
        kill = ", ".join(s.split(" ", 1)[1] for s in r["interrupt"].get("signals") or []) or "none"
        code = (r.get("check") or {}).get("rc")
        check = {0: "no problem", 1: "broken"}.get(code, "cannot read") if isinstance(code, int) else "cannot read"
        repair = r.get("repair") or {}
        lines.append(f"| {r['client']} | {r['version']} | {r['case']} | {kill} | {check} | {cell(r.get('as_is'))} | "
                     f"exit {repair.get('rc', '—')} | {cell(r.get('after_repair'))} | "
                     f"{_healed(r)} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["install", "run", "report"])
    parser.add_argument("client", nargs="?", default="all", help="|".join(CLIENTS) + "|all")
    parser.add_argument("--case", default="slow", help="|".join(CASES) + "|all")
    args = parser.parse_args()
    if args.action == "report":
        sys.stdout.write(report())
        return 0
    names = list(CLIENTS) if args.client == "all" else [args.client]
    if any(n not in CLIENTS for n in names):
        parser.error(f"unknown client {args.client}; expected one of {', '.join(CLIENTS)} or all")
    if args.action == "install":
        for n in names:
            CLIENTS[n](ROOT).install()
        return 0
    if os.environ.get("RC_IN_NETNS") != "1":
        # a fresh network namespace with only loopback: nothing the clients do can leave this machine
        os.execvpe("unshare", ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', sys.executable,
                               *sys.argv], dict(os.environ, RC_IN_NETNS="1"))
    for n in names:
        for case in CASES if args.case == "all" else [args.case]:
            started = time.time()
            r = run_case(n, case)
            print(f"[{n}/{case}] kill={r['interrupt'].get('signals')} check={(r.get('check') or {}).get('rc')} "
                  f"as is: {cell(r.get('as_is'))} | repair rc={(r.get('repair') or {}).get('rc')} | after: "
                  f"{cell(r.get('after_repair'))} ({time.time() - started:.0f}s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
