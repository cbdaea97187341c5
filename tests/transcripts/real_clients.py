"""Sessions written by the real clients of issue #46 (Copilot CLI, Qwen Code, Kilo Code), for the format tests.

Each client is installed from npm at the version `bench/real_clients/driver.py` pins, once, into a cache folder in
the temp folder (a test skips when node, npm or the registry is missing), and is run by that driver against its fake
provider on 127.0.0.1 (a fake key, a scratch HOME): the prompt makes the model call the shell with a 60 s command,
and the client is killed (SIGKILL) while it runs, so the session is the one the client itself left behind.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

DRIVER = Path(__file__).resolve().parents[2] / "bench" / "real_clients" / "driver.py"


def driver() -> ModuleType:
    """The bench's driver module (loaded from its file: bench/ is no package)."""
    module = sys.modules.get("rc_driver")
    if module is None:
        spec = importlib.util.spec_from_file_location("rc_driver", DRIVER)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["rc_driver"] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    return module


def installed(name: str) -> Path:
    """The npm folder of the client called `name`, at its pinned version (installed on first use)."""
    if os.environ.get("CHATMEND_REAL_CLIENTS") != "1":
        pytest.skip("the real-client runs are long (npm installs, a client killed mid-tool): CHATMEND_REAL_CLIENTS=1")
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed to run the real client")
    client = driver().CLIENTS[name]
    cache = Path(tempfile.gettempdir()) / "chatmend-npm-cache" / f"{name}-{client.version}"
    if not (cache / "node_modules" / client.package / "package.json").exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{name}-install-", dir=cache.parent))
        try:
            done = subprocess.run(["npm", "install", "--prefix", str(staging), "--no-audit", "--no-fund",
                                   f"{client.package}@{client.version}"], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            shutil.rmtree(staging, ignore_errors=True)
            pytest.skip(f"npm could not install {client.package}@{client.version} in 300 s")
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            pytest.skip(f"npm could not install {client.package}@{client.version} (no registry?): "
                        f"{done.stderr[-300:]}")
        if cache.exists():
            shutil.rmtree(staging, ignore_errors=True)  # another run installed it meanwhile
        else:
            staging.rename(cache)
    return cache


def interrupted(name: str, run: Path, case: str = "sigkill") -> tuple[Any, str, dict[str, Any]]:
    """Run the client `name` in `run` (its HOME is `run/home`) and kill it while its shell command runs: the client,
    the session's id, and what the driver saw."""
    rc = driver()
    npm = installed(name)
    for folder in ("home", "work", "tmp"):
        (run / folder).mkdir(parents=True, exist_ok=True)
    client = rc.CLIENTS[name](run)
    client.npm = npm
    sid = str(uuid.uuid4())
    seen = rc.interrupt(client, case, sid)
    if seen["commands_running"] < 1:
        pytest.skip(f"{name} did not start the shell command: {seen.get('stderr_tail', '')[-300:]}")
    return client, client.session_id(sid), seen
