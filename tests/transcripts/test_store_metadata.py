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


def test_a_home_seeded_with_broken_sessions_is_found_and_fixed_through_the_metadata(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What `chatmend doctor --fix` will do with these stores: find each broken session from the tool's default
    locations under a temporary HOME, repair it in place, and then `check` accepts it."""
    from chatmend.cli import main

    samples = Path(__file__).resolve().parents[2] / "examples" / "sessions"
    home = tmp_path / "home"
    seeded = {
        home / ".cline" / "data" / "tasks" / "1733" / "api_conversation_history.json": "cline_task.json",
        home / ".config" / "Code" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline" / "tasks" / "ab"
        / "api_conversation_history.json": "roo_code_task.json",
        home / ".kimi-code" / "sessions" / "wd_p_0123" / "session_9d" / "agents" / "main" / "wire.jsonl":
            "kimi_code_wire.jsonl",
        home / ".kimi" / "sessions" / "0f3e" / "2b7c" / "context.jsonl": "kimi_cli_context.jsonl",
        home / ".gemini" / "tmp" / "3f9a" / "checkpoint-refactor.json": "gemini_checkpoint.json",
    }
    for path, sample in seeded.items():
        path.parent.mkdir(parents=True)
        path.write_bytes((samples / sample).read_bytes())
    (home / ".cline" / "data" / "tasks" / "1733" / "ui_messages.json").write_text("[]", encoding="utf-8")
    env = {"HOME": str(home)}
    found: dict[Path, str] = {}
    for module in sorted(STORES):
        store = importlib.import_module(f"chatmend.transcripts.{module}")
        for root in store.default_locations(env):
            for path in sorted(root.rglob("*")) if root.is_dir() else []:
                if path.is_file() and store.is_session_file(path):
                    found[path] = store.resume_command(path)
    assert set(found) == set(seeded)
    for path in found:
        assert main(["check", str(path)]) == 1, path
        assert main(["repair", "--in-place", str(path)]) == 0, path
        assert main(["check", str(path)]) == 0, path
        assert path.with_name(path.name + ".bak").read_bytes() == (samples / seeded[path]).read_bytes()
    capsys.readouterr()
    assert found[next(p for p in found if p.name == "wire.jsonl")] == "kimi --session 9d"
