"""`chatmend doctor`: a temporary HOME seeded with a broken session of every supported tool is found, fixed with
backups, and found healthy on a second run; sessions in use are left alone unless --force."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sqlite3
import time
from dataclasses import asdict
from pathlib import Path
from unittest import mock

import pytest

from chatmend.cli import main
from chatmend.doctor import doctor, targets
from tests.transcripts.opencode_db import STEP, assistant, make_db, tool, user
from tests.transcripts.test_goose import make as make_goose
from tests.transcripts.test_goose import request, text

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "examples" / "sessions"
CODEX_ID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
CLAUDE_ID = "5f1d3c2a-9b8e-4a7d-8c6b-1e2f3a4b5c6d"
HOUR_AGO = time.time() - 3600


def _seed(home: Path, *, claude_dir: Path | None = None, codex_home: Path | None = None,
          data_home: Path | None = None) -> dict[str, Path]:
    """A broken session of every tool, where each keeps them (or under the directories its variables name)."""
    claude = (claude_dir or home / ".claude") / "projects" / "-work-app" / f"{CLAUDE_ID}.jsonl"
    codex = (codex_home or home / ".codex") / "sessions" / "2026" / "12" / "01" / \
        f"rollout-2026-12-01T10-00-00-{CODEX_ID}.jsonl"
    archived = (codex_home or home / ".codex") / "archived_sessions" / \
        "rollout-2026-11-30T10-00-00-0199a1b2-0000-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
    gemini = home / ".gemini" / "tmp" / "9d2f41c6" / "chats" / "session-2026-03-04T09-12-4f6c2a9e.jsonl"
    opencode = (data_home or home / ".local" / "share") / "opencode" / "opencode.db"
    for path, sample in [(claude, "claude_code.jsonl"), (codex, "codex_rollout.jsonl"),
                         (archived, "codex_rollout.jsonl"), (gemini, "gemini_cli_session.jsonl")]:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SAMPLES / sample, path)
    opencode.parent.mkdir(parents=True)
    make_db(opencode, {"ses_a": [user("run it"), assistant(STEP, tool("call_1", "running"))]})
    goose = (data_home or home / ".local" / "share") / "goose" / "sessions" / "sessions.db"
    goose.parent.mkdir(parents=True)
    make_goose(goose, [("user", [text("build it")]), ("assistant", [request("toolu_1")])])
    paths = {"claude": claude, "codex": codex, "archived": archived, "gemini": gemini, "opencode": opencode,
             "goose": goose}
    for path in [*paths.values(), Path(f"{opencode}-wal"), Path(f"{goose}-wal")]:
        if path.exists():
            os.utime(path, (HOUR_AGO, HOUR_AGO))
    return paths


def _env(home: Path, **more: str) -> dict[str, str]:
    return {"HOME": str(home), **more}


def test_doctor_finds_and_fixes_a_broken_session_of_every_tool(tmp_path: Path) -> None:
    paths = _seed(tmp_path)
    env = _env(tmp_path)
    found = list(doctor(env=env, workers=1))
    assert {(f.tool, f.status) for f in found} == {("Claude Code", "broken"), ("Codex", "broken"),
                                                   ("Gemini CLI", "broken"), ("opencode", "broken"),
                                                   ("Goose", "broken")}
    assert len(found) == 6
    by_tool = {f.tool: f for f in found}
    assert by_tool["Claude Code"].session == CLAUDE_ID
    assert by_tool["Codex"].resume == f"codex resume {CODEX_ID}"
    assert by_tool["Gemini CLI"].resume == "gemini --resume 4f6c2a9e-1b3d-4e8f-9a7c-2d5e6f8a1b3c"
    assert by_tool["opencode"].resume == "opencode --session ses_a"
    assert all(f.problems and "R6" in f.problems[0] for f in found)  # located, as `check` says it
    # and in each provider's own words
    assert by_tool["Claude Code"].said[0].startswith("`tool_use` ids were found without `tool_result` blocks")
    assert by_tool["Codex"].said[0].startswith("No tool output found for function call call_")
    assert by_tool["Gemini CLI"].said == ["Please ensure that the number of function response parts is equal to "
                                          "the number of function call parts of the function call turn."]
    assert by_tool["opencode"].said[0].endswith("did not have response messages: call_1")
    originals = {name: path.read_bytes() for name, path in paths.items()}

    fixed = list(doctor(env=env, fix=True, workers=1))
    assert {f.status for f in fixed} == {"fixed"}
    for f in fixed:
        assert f.backup and os.path.exists(f.backup), f
    for name in ("claude", "codex", "archived", "gemini"):
        assert Path(f"{paths[name]}.bak").read_bytes() == originals[name]
    assert os.path.exists(f"{paths['opencode']}.bak") and os.path.exists(f"{paths['goose']}.bak")

    again = list(doctor(env=env, workers=1))
    assert {f.status for f in again} == {"ok"} and len(again) == 6  # the backups are not sessions


def test_the_tools_variables_are_honoured(tmp_path: Path) -> None:
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    paths = _seed(home, claude_dir=elsewhere / "claude", codex_home=elsewhere / "codex", data_home=elsewhere / "xdg")
    assert len(targets(env=_env(home))) == 1  # only Gemini CLI's, under HOME
    env = _env(home, CLAUDE_CONFIG_DIR=str(elsewhere / "claude"), CODEX_HOME=str(elsewhere / "codex"),
               XDG_DATA_HOME=str(elsewhere / "xdg"))
    assert sorted(t.path for t in targets(env=env)) == sorted(str(p) for p in paths.values())
    moved = tmp_path / "db" / "oc.db"
    moved.parent.mkdir()
    shutil.move(str(paths["opencode"]), moved)
    assert str(moved) in {t.path for t in targets(env={**env, "OPENCODE_DB": str(moved)})}


def test_sessions_in_use_are_left_alone_unless_forced(tmp_path: Path) -> None:
    paths = _seed(tmp_path)
    os.utime(paths["claude"])  # Claude Code wrote to it just now
    env = _env(tmp_path)
    other = sqlite3.connect(paths["opencode"], isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # a running opencode holds the lock
        found = {f.tool: f for f in doctor(env=env, fix=True, workers=1)}
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert found["Claude Code"].status == "in use" and not Path(f"{paths['claude']}.bak").exists()
    assert found["opencode"].status == "in use"
    assert found["opencode"].problems[-1] == "the database is locked by a running opencode"
    assert found["Codex"].status == "fixed"
    forced = {f.tool: f for f in doctor(env=env, fix=True, force=True, workers=1)}
    assert forced["Claude Code"].status == "fixed" and forced["opencode"].status == "fixed"


def test_the_command_prints_a_table_fixes_and_says_how_to_resume(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _seed(tmp_path)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCODE_DB", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["doctor", "--workers", "1"]) == 1
    out = capsys.readouterr().out
    header, *rows = out.splitlines()
    assert header.split() == ["TOOL", "SESSION", "MODIFIED", "STATUS", "PROBLEMS"]
    assert "6 broken" in out and "`chatmend doctor --fix` repairs the 6 broken sessions" in out
    assert any(r.startswith("opencode") and "ses_a" in r and "did not have response messages: call_1" in r
               for r in rows)
    assert main(["doctor", "--fix", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "6 fixed" in out
    assert f"resume: claude --resume {CLAUDE_ID}" in out and "resume: opencode --session ses_a" in out
    assert main(["doctor", "--json", "--workers", "1"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 6 and {line["status"] for line in lines} == {"ok"}
    assert set(lines[0]) >= {"tool", "session", "modified", "status", "problems", "resume", "path"}


def test_paths_and_a_pool_of_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = _seed(tmp_path)
    (tmp_path / "notes.json").write_text("[1, 2]")
    agents = pytest.importorskip("agents")

    async def save() -> None:
        session = agents.SQLiteSession("conv_1", str(tmp_path / "agent.db"))
        try:
            await session.add_items([{"role": "user", "content": "go"},
                                     {"type": "function_call", "call_id": "c", "name": "ls", "arguments": "{}"}])
        finally:
            session.close()

    asyncio.run(save())
    serial = [(f.path, f.session, f.status) for f in doctor([str(tmp_path)], workers=1)]
    pooled = [(f.path, f.session, f.status) for f in doctor([str(tmp_path)], workers=2)]
    assert serial == pooled
    statuses = {Path(p).name: s for p, _, s in serial}
    assert statuses["notes.json"] == "unreadable"
    assert statuses[paths["codex"].name] == "broken" and statuses["opencode.db"] == "broken"
    assert statuses["agent.db"] == "in use" and statuses["sessions.db"] == "broken"  # agent.db: just written
    assert main(["doctor", str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_doctor_finds_and_fixes_the_file_stores_that_name_themselves(tmp_path: Path) -> None:
    """Cline, Roo Code, Kimi Code, kimi-cli and Gemini CLI checkpoints, at their default locations under HOME:
    registered from their own names (`transcripts._locations`), found, fixed with a backup, then found ok."""
    home = tmp_path
    seeded = {
        home / ".cline" / "data" / "tasks" / "1733" / "api_conversation_history.json": ("cline_task.json", "Cline"),
        home / ".config" / "Code" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline" / "tasks" / "ab"
        / "api_conversation_history.json": ("roo_code_task.json", "Roo Code"),
        home / ".kimi-code" / "sessions" / "wd_p_0123" / "session_9d" / "agents" / "main" / "wire.jsonl":
            ("kimi_code_wire.jsonl", "Kimi Code CLI"),
        home / ".kimi" / "sessions" / "0f3e" / "2b7c" / "context.jsonl": ("kimi_cli_context.jsonl", "kimi-cli"),
        home / ".gemini" / "tmp" / "3f9a" / "checkpoint-refactor.json": ("gemini_checkpoint.json", "Gemini CLI"),
    }
    for path, (sample, _) in seeded.items():
        path.parent.mkdir(parents=True)
        shutil.copyfile(SAMPLES / sample, path)
        os.utime(path, (HOUR_AGO, HOUR_AGO))
    env = _env(home)
    found = {Path(f.path): f for f in doctor(env=env, workers=1)}
    assert set(found) == set(seeded)
    for path, (_, tool_name) in seeded.items():
        assert (found[path].tool, found[path].status) == (tool_name, "broken"), found[path]
        assert found[path].resume
    assert found[next(p for p in seeded if p.name == "wire.jsonl")].resume == "kimi --session 9d"
    fixed = list(doctor(env=env, fix=True, workers=2))
    assert {f.status for f in fixed} == {"fixed"} and len(fixed) == len(seeded)
    for path, (sample, _) in seeded.items():
        assert Path(f"{path}.bak").read_bytes() == (SAMPLES / sample).read_bytes()
    assert {f.status for f in doctor(env=env, workers=1)} == {"ok"}


@pytest.mark.parametrize("sample", ["broken", "thinking", "valid"])
def test_a_claude_code_session_read_a_part_at_a_time_is_found_and_fixed_as_read_whole(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], sample: str) -> None:
    source = tmp_path / "source.jsonl"
    text = (SAMPLES / "claude_code.jsonl").read_text()
    if sample == "thinking":  # a block check has rules for: doctor still reads it a part at a time
        text = text.replace('"content":[{"type":"text"',
                            '"content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text"')
    source.write_text(text)
    if sample == "valid":
        assert main(["repair", str(source), "-o", str(source)]) == 0
    outcomes = []
    for whole in (False, True):
        home = tmp_path / ("whole" if whole else "parts")
        path = home / ".claude" / "projects" / "-work-app" / f"{CLAUDE_ID}.jsonl"
        path.parent.mkdir(parents=True)
        shutil.copyfile(source, path)
        os.utime(path, (HOUR_AGO, HOUR_AGO))
        with mock.patch("chatmend.doctor.streamed", return_value=None) if whole else contextlib.nullcontext():
            found = [asdict(f) for f in doctor(env=_env(home), workers=1)]
            fixed = [asdict(f) for f in doctor(env=_env(home), fix=True, workers=1)]
        backup = Path(f"{path}.bak")
        outcomes.append(repr((found, fixed, path.read_bytes(), backup.read_bytes() if backup.exists() else None))
                        .replace(str(home), "HOME"))
    assert outcomes[0] == outcomes[1]
    assert ("'fixed'" in outcomes[0]) is (sample != "valid")


EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*") if p.suffix in (".json", ".jsonl"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_doctor_fix_writes_what_repair_in_place_writes(tmp_path: Path, example: Path) -> None:
    # one repair of a file where it lies, whichever command runs it: a body keeps the items repair leaves alone
    by_cli, by_doctor = tmp_path / "cli" / example.name, tmp_path / "doctor" / example.name
    for path in (by_cli, by_doctor):
        path.parent.mkdir()
        shutil.copyfile(example, path)
    assert main(["repair", "--in-place", "--force", str(by_cli)]) == 0
    (finding,) = doctor([str(by_doctor)], fix=True, force=True, workers=1)
    assert by_doctor.read_bytes() == by_cli.read_bytes()
    assert (finding.status == "fixed") is (by_cli.read_bytes() != example.read_bytes())
    assert bool(finding.changes) is (finding.status == "fixed")


def test_doctor_judges_a_body_by_its_providers_rules_as_check_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # ids Mistral refuses: no neutral rule breaks, the provider answers 400 all the same
    body = tmp_path / "mistral_body.json"
    shutil.copyfile(SAMPLES / "mistral_body.json", body)
    os.utime(body, (HOUR_AGO, HOUR_AGO))
    assert main(["check", str(body)]) == 1
    said = [line for line in capsys.readouterr().out.splitlines() if ": MI1: " in line]
    (found,) = doctor([str(body)], workers=1)
    assert found.status == "broken" and found.problems == said and len(said) == 2
    assert main(["doctor", "--fix", "--force", str(body)]) == 0
    out = capsys.readouterr().out
    assert f"fixed {body} (wrote anew messages[1], messages[2]; the original is in {body}.bak)\n" in out
    assert "resume:" not in out  # a body has no tool to resume it in
    assert main(["check", str(body)]) == 0
