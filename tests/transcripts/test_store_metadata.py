"""What a `chatmend doctor` needs from every session store module added for #24 (part B), named the same in
each: the tool's name, its format, where it keeps sessions (honouring its environment variables), how to tell
a session file, and how to resume one in the tool."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from chatmend.formats import formats

STORES = {
    "cline": "cline",
    "roo_code": "roo_code",
    "pydantic_ai": "pydantic_ai",
    "kimi_code": "kimi_code",
    "gemini_checkpoint": "gemini_checkpoint",
    "kimi_cli": "kimi_cli",
}


@pytest.mark.parametrize("module", sorted(STORES))
def test_every_store_module_says_what_a_doctor_needs(module: str, tmp_path: Path) -> None:
    store = importlib.import_module(f"chatmend.transcripts.{module}")
    assert STORES[module] == store.NAME and store.NAME in formats()
    assert isinstance(store.TOOL, str) and store.TOOL
    locations = store.default_locations({"HOME": str(tmp_path)})
    assert isinstance(locations, list) and all(isinstance(p, Path) for p in locations)
    assert all(str(p).startswith(str(tmp_path)) for p in locations)  # under the HOME given, not the real one
    assert store.is_session_file(tmp_path / "nothing.txt") is False
    assert isinstance(store.resume_command(tmp_path / "tasks" / "1" / "api_conversation_history.json"), str)
    for name in ("default_locations", "is_session_file", "resume_command"):
        assert getattr(store, name).__doc__, name
