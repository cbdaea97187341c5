"""Kilo Code's CLI store (`kilo.db`, opencode's layout in a database of its own): found by `doctor` where Kilo Code
keeps it, told apart from opencode's, and repaired so that the real Kilo Code resumes it.

The first test runs the real Kilo Code (`@kilocode/cli` at the version `bench/real_clients/driver.py` pins, from npm;
skipped without node, npm or the registry) against the bench's fake provider on 127.0.0.1 and kills it while its
shell command runs.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from chatmend.doctor import doctor
from chatmend.transcripts.kilo_code import KiloDatabase
from chatmend.transcripts.opencode import OpencodeDatabase
from chatmend.transcripts.stores import open_store
from tests.transcripts.opencode_db import STEP, assistant, make_db, part_data, tool, user
from tests.transcripts.real_clients import driver, interrupted


def test_a_session_kilo_left_mid_tool_is_fixed_by_doctor_in_a_fake_home_and_kilo_resumes_it(tmp_path: Path) -> None:
    client, sid, _ = interrupted("kilo", tmp_path)
    env = {"HOME": str(client.home)}
    found = list(doctor(env=env, force=True, workers=1))  # just written: "in use" without force
    assert [(f.tool, f.format, f.session, f.status) for f in found] == [("Kilo Code", "kilo", sid, "broken")]
    assert found[0].resume == f"kilo --session {sid}" and "call_rc" in found[0].problems[0]
    assert [f.status for f in doctor(env=env, fix=True, force=True, workers=1)] == ["fixed"]
    assert [f.status for f in doctor(env=env, force=True, workers=1)] == ["ok"]
    resumed = driver().resume(client, sid, "resume-repaired")
    seen = resumed["provider"]
    assert seen["valid"] and resumed["went_on"], resumed
    assert [c["result"] is not None for c in seen["resume_calls"]] == [True]


def _database(path: Path, tables: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as connection:
        for table in tables:
            connection.execute(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, data TEXT)")
    connection.close()
    return path


def test_kilo_database_is_kilo_and_opencode_database_is_opencode(tmp_path: Path) -> None:
    kilo = _database(tmp_path / "kilo.db", ["session", "message", "part", "kilo_board"])
    opencode = _database(tmp_path / "opencode.db", ["session", "message", "part"])
    assert isinstance(open_store(str(kilo)), KiloDatabase)
    store = open_store(str(opencode))
    assert isinstance(store, OpencodeDatabase) and not isinstance(store, KiloDatabase)
    assert isinstance(open_store(str(kilo), "kilo"), KiloDatabase)


def test_the_default_locations_honour_home_xdg_data_home_and_kilo_db(tmp_path: Path) -> None:
    tables = ["session", "message", "part", "kilo_board"]
    home = _database(tmp_path / "home" / ".local" / "share" / "kilo" / "kilo.db", tables)
    beta = _database(home.with_name("kilo-beta.db"), tables)
    assert KiloDatabase.default_paths({"HOME": str(tmp_path / "home")}) == [str(home), str(beta)]
    xdg = _database(tmp_path / "xdg" / "kilo" / "kilo.db", tables)
    assert KiloDatabase.default_paths({"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "xdg")}) == [
        str(xdg)]
    named = _database(tmp_path / "xdg" / "kilo" / "other.db", tables)
    env = {"HOME": "/nowhere", "XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert KiloDatabase.default_paths({**env, "KILO_DB": "other.db"}) == [str(named)]
    assert KiloDatabase.default_paths({**env, "KILO_DB": str(home)}) == [str(home)]
    assert KiloDatabase.default_paths({**env, "KILO_DB": "missing.db"}) == []


def test_doctor_finds_and_fixes_a_kilo_database_beside_an_opencode_one_in_a_fake_home(tmp_path: Path) -> None:
    data = tmp_path / ".local" / "share"
    kilo = data / "kilo" / "kilo.db"
    kilo.parent.mkdir(parents=True)
    make_db(kilo, {"ses_k": [user("go"), assistant(STEP, tool("call_k", "running"))]})
    with sqlite3.connect(kilo) as connection:
        connection.execute("CREATE TABLE kilo_board (id TEXT PRIMARY KEY)")
    connection.close()
    opencode = data / "opencode" / "opencode.db"
    opencode.parent.mkdir(parents=True)
    make_db(opencode, {"ses_o": [user("hi"), assistant(STEP, tool("call_o", "completed"))]})
    env = {"HOME": str(tmp_path)}
    found = {f.session: f for f in doctor(env=env, workers=1)}
    assert {(f.tool, f.format, f.status) for f in found.values()} == {("Kilo Code", "kilo", "broken"),
                                                                      ("opencode", "opencode", "ok")}
    assert found["ses_k"].resume == "kilo --session ses_k" and found["ses_o"].resume == "opencode --session ses_o"
    assert [f.status for f in doctor(env=env, fix=True, workers=1) if f.session == "ses_k"] == ["fixed"]
    assert part_data(kilo, "prt_0000001001")["state"]["status"] == "error"
