"""Crush's crush.db (built as Crush's own code builds it, see `crush_db.py`): calls and results read from the
message parts, a missing result written into the tool message after its call (or a new tool message row), every
other row and part unchanged; found by `doctor` through Crush's projects.json.

No test here runs Crush itself: its npm package (`@charmland/crush`) downloads its binary from GitHub releases
at install time, which this machine cannot reach (bench/real_clients/crush.py says so when it runs)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatmend import HistoryError
from chatmend.cli import main
from chatmend.doctor import doctor
from chatmend.files.io import InputError
from chatmend.transcripts.crush import CrushDatabase, go_json, parts_with
from chatmend.transcripts.stores import Store, open_store
from tests.transcripts.crush_db import (
    T0,
    assistant,
    call,
    finish,
    make_db,
    result,
    rows,
    text,
    tool,
    user,
)


def _open(path: Path) -> Store:
    store = open_store(str(path))
    assert store is not None
    return store


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _raw(path: Path) -> dict[str, tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return {r[0]: r for r in conn.execute("SELECT * FROM messages")}
    finally:
        conn.close()


def _message_count(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT message_count FROM sessions").fetchone()[0])
    finally:
        conn.close()


def test_calls_results_and_reasoning_are_read_from_the_parts(tmp_path: Path) -> None:
    db = tmp_path / "crush.db"
    reasoning = {"type": "reasoning", "data": {"thinking": "look first", "signature": "sig", "thought_signature": "",
                                               "tool_id": "", "responses_data": None}}
    make_db(db, {"s1": [user("list the files"),
                        assistant(reasoning, text("running"), call("toolu_1"), call("toolu_2", "view", '{"p":"a"}'),
                                  finish()),
                        tool(result("toolu_1", "a.txt"), result("toolu_2", "denied", "view", is_error=True)),
                        assistant(text("done"), finish("end_turn"))]})
    with _open(db) as store:
        assert isinstance(store, CrushDatabase)
        [stored] = store.sessions()
    assert (stored.id, stored.title) == ("s1", "task s1")
    assert stored.resume == f"cd {tmp_path.parent} && crush --session s1"
    messages = stored.session.messages
    assert [(m.role, m.tool_call_id, m.is_error) for m in messages] == [
        ("user", None, False), ("assistant", None, False), ("tool", "toolu_1", False), ("tool", "toolu_2", True),
        ("assistant", None, False)]
    assert [c.arguments for c in messages[1].tool_calls] == [{"command": "sleep 60"}, {"p": "a"}]
    assert stored.session.provider == "anthropic" and stored.session.model == "claude-sonnet-4"
    assert stored.session.where[2] == "message s1-m2 part 0"
    assert not stored.repair(None)[0].changed


def test_a_call_killed_while_its_tool_ran_gets_a_tool_message_row(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Crush killed mid-tool: the assistant row holds the call, no tool row follows; the next prompt came later."""
    db = tmp_path / "crush.db"
    make_db(db, {"s1": [user("run it"), assistant(text("on it <now> & then"), call("toolu_1")),
                        user("are you there?")]}, step=30)
    before = _raw(db)
    count = _message_count(db)
    code, out, _ = _cli(capsys, "check", str(db))
    assert code == 1 and "the call toolu_1 (bash) has no result" in out
    code, out, _ = _cli(capsys, "repair", str(db), "--in-place")
    assert code == 0 and "answered 1 call as interrupted: toolu_1" in out
    after = _raw(db)
    assert {k: v for k, v in after.items() if k in before} == before  # every row as it was, byte for byte
    [(new_id, role, parts)] = [r for r in rows(db, "s1") if r[0] not in before]
    assert [r[0] for r in rows(db, "s1")] == ["s1-m0", "s1-m1", new_id, "s1-m2"]  # right after its call
    assert role == "tool" and parts[0]["type"] == "tool_result" and parts[-1] == {
        "type": "finish", "data": {"reason": "stop", "time": 0}}
    assert parts[0]["data"]["tool_call_id"] == "toolu_1" and parts[0]["data"]["is_error"] is True
    assert parts[0]["data"]["content"].startswith("Interrupted: the call to bash")
    assert list(parts[0]["data"]) == ["tool_call_id", "name", "content", "data", "mime_type", "metadata", "is_error"]
    assert _message_count(db) == count + 1  # Crush's own trigger counted the new row
    assert _cli(capsys, "check", str(db))[0] == 0
    assert Path(f"{db}.bak").exists()


def test_a_missing_result_joins_the_tool_message_after_its_call_byte_for_byte(tmp_path: Path) -> None:
    db = tmp_path / "crush.db"
    make_db(db, {"s1": [user("go"), assistant(call("toolu_1"), call("toolu_2"), call("toolu_3"), call("toolu_4")),
                        tool(result("toolu_1", "<b>one</b> & more"), result("toolu_4", "four"))]})
    raw_before = _raw(db)["s1-m2"][3]
    with _open(db) as store:
        [stored] = store.sessions()
        _, write_back = stored.repair(None)
        store.write_back([write_back])
    raw_after = _raw(db)["s1-m2"][3]
    parts = json.loads(raw_after)
    assert [p["data"].get("tool_call_id") for p in parts] == ["toolu_1", "toolu_2", "toolu_3", "toolu_4", None]
    old = json.loads(raw_before)
    assert raw_after.startswith(raw_before[:raw_before.index(",") + 1]) and "\\u003cb\\u003eone" in raw_after
    assert raw_after.endswith(raw_before[raw_before.index(go_json(old[1])):])  # the parts after it as written
    with _open(db) as store:
        assert not store.sessions()[0].repair(None)[0].changed


def test_a_result_whose_call_is_gone_is_left_out_as_crush_sends_it(tmp_path: Path) -> None:
    db = tmp_path / "crush.db"
    make_db(db, {"s1": [user("go"), assistant(text("hi")), tool(result("ghost", "old output")), user("again")]})
    with _open(db) as store:
        [stored] = store.sessions()
    assert [m.role for m in stored.session.messages] == ["user", "assistant", "user"]
    assert stored.session.warnings == ["message s1-m2 part 0: the result of ghost has no call in the session; "
                                       "Crush leaves it out of what it sends"]
    assert not stored.repair(None)[0].changed


def test_a_summarized_session_is_read_from_its_summary_on(tmp_path: Path) -> None:
    db = tmp_path / "crush.db"
    make_db(db, {"s1": [user("old"), assistant(call("toolu_0")), assistant(text("summary of it all")),
                        user("next")]}, summary={"s1": "s1-m2"})
    with _open(db) as store:
        [stored] = store.sessions()
    assert [(m.role, m.content) for m in stored.session.messages] == [("user", "summary of it all"),
                                                                      ("user", "next")]


def test_an_assistant_row_cancelled_before_it_said_anything_is_skipped(tmp_path: Path) -> None:
    db = tmp_path / "crush.db"
    make_db(db, {"s1": [user("go"), assistant(finish("canceled")), user("again")]})
    with _open(db) as store:
        assert [m.role for m in store.sessions()[0].session.messages] == ["user", "user"]


def test_no_place_between_rows_of_one_second_is_refused_by_name(tmp_path: Path) -> None:
    db = tmp_path / "crush.db"
    make_db(db, {"s1": [user("go"), assistant(call("toolu_1")), user("and?")]}, step=0)
    with _open(db) as store, pytest.raises(HistoryError, match="same created_at"):
        store.sessions()[0].repair(None)


def test_a_part_crush_cannot_read_is_an_error_saying_where(tmp_path: Path) -> None:
    db = tmp_path / "crush.db"
    make_db(db, {"s1": [user("go"), ("assistant", [{"type": "hologram", "data": {}}])]})
    with _open(db) as store, pytest.raises(InputError, match=r"message s1-m1: parts\[0\]: expected"):
        store.sessions()


def test_a_goose_database_is_not_taken_for_crush(tmp_path: Path) -> None:
    from tests.transcripts.test_goose import make as make_goose
    from tests.transcripts.test_goose import text as goose_text

    db = tmp_path / "sessions.db"
    make_goose(db, [("user", [goose_text("hi")])])
    assert not CrushDatabase.recognizes(str(db))


def test_parts_with_keeps_every_element_as_written() -> None:
    raw = '[ {"type":"a","data":{"x":"\\u003c"}} ,{"type":"b","data":{}}]'
    out = parts_with(raw, [(1, {"type": "n", "data": {"t": "<&>"}}), (2, {"type": "m", "data": {}})])
    assert out == ('[{"type":"a","data":{"x":"\\u003c"}},{"type":"n","data":{"t":"\\u003c\\u0026\\u003e"}},'
                   '{"type":"b","data":{}},{"type":"m","data":{}}]')


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.lists(st.booleans(), min_size=1, max_size=3), st.booleans()), min_size=1, max_size=4))
def test_any_mix_is_valid_after_one_repair_and_keeps_every_part(
        tmp_path_factory: pytest.TempPathFactory, turns: list[tuple[list[bool], bool]]) -> None:
    """Replies of calls (each answered or not), each followed or not by the user typing: after one repair nothing
    is left to repair, every row is still there with every part it had, in order, around what repair put in."""
    db = tmp_path_factory.mktemp("crush") / "crush.db"
    messages: list[tuple[str, list[dict[str, Any]]]] = [user("go")]
    n = 0
    for answered, typed in turns:
        ids = [f"toolu_{n + k}" for k in range(len(answered))]
        n += len(answered)
        messages.append(assistant(*[call(i) for i in ids], finish()))
        done = [result(i) for i, ok in zip(ids, answered) if ok]
        if done:
            messages.append(tool(*done))
        if typed:
            messages.append(user("and?"))
    make_db(db, {"s1": messages}, step=2)
    before = {i: parts for i, _, parts in rows(db, "s1")}
    with _open(db) as store:
        _, write_back = store.sessions()[0].repair(None)
        store.write_back([write_back])
    after = rows(db, "s1")
    for message_id, parts in before.items():
        [new] = [p for i, _, p in after if i == message_id]
        assert [p for p in new if p in parts] == parts
    with _open(db) as store:
        assert not store.sessions()[0].repair(None)[0].changed


def test_doctor_finds_crush_projects_and_fixes_them(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "work" / "app"
    (project / ".crush").mkdir(parents=True)
    db = project / ".crush" / "crush.db"
    make_db(db, {"s1": [user("run it"), assistant(call("toolu_1"))]})
    listed = home / ".local" / "share" / "crush" / "projects.json"
    listed.parent.mkdir(parents=True)
    listed.write_text(json.dumps({"projects": [{"path": str(project), "data_dir": str(project / ".crush"),
                                                "last_accessed": "2026-12-01T10:00:00Z"}]}))
    for path in (db, Path(f"{db}-wal")):
        if path.exists():
            os.utime(path, (T0, T0))  # not in use: written long ago
    env = {"HOME": str(home)}
    [found] = [f for f in doctor(env=env, workers=1) if f.tool == "Crush"]
    assert (found.status, found.session) == ("broken", "s1") and "R6" in found.problems[0]
    [fixed] = [f for f in doctor(env=env, fix=True, workers=1) if f.tool == "Crush"]
    assert fixed.status == "fixed" and fixed.backup and os.path.exists(fixed.backup)
    assert [f.status for f in doctor(env=env, workers=1) if f.tool == "Crush"] == ["ok"]
    elsewhere = tmp_path / "elsewhere"
    assert [f.tool for f in doctor(env={"HOME": str(elsewhere), "PWD": str(project)}, workers=1)] == ["Crush"]
