"""A framework's import cost is paid only by its bridge: importing chatmend (its CLI, providers, formats and the
bridges package) imports none of them."""

from __future__ import annotations

import json
import subprocess
import sys

FRAMEWORKS = ["langchain", "langchain_core", "langgraph", "pydantic_ai", "agents", "llama_index", "litellm"]


def _loaded(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return [m for m in json.loads(out.stdout) if m in FRAMEWORKS]


def test_chatmend_imports_no_framework() -> None:
    assert _loaded("import chatmend, chatmend.bridges, chatmend.cli, chatmend.providers, chatmend.formats") == []


def test_a_bridge_imports_only_its_framework() -> None:
    assert _loaded("import chatmend.bridges.llama_index") == ["llama_index"]
    assert _loaded("import chatmend.bridges.pydantic_ai") == ["pydantic_ai"]
