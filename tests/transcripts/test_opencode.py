"""opencode's session stores: the SQLite database read as opencode sends it, a killed tool part repaired in one
transaction after a backup, every other row unchanged; refused while opencode holds the lock; the older
storage/ folder."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatmend.cli import main
from chatmend.formats import InputError
from chatmend.transcripts import sqlite_stores
from chatmend.transcripts.opencode import OpencodeDatabase, OpencodeFolder
from chatmend.transcripts.stores import Store, open_store
from tests.transcripts.opencode_db import (
    FINISH,
    STEP,
    assistant,
    make_db,
    make_folder,
    part_data,
    rows,
    tool,
    user,
)


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _open(path: Path) -> Store:
    store = open_store(str(path))
    assert store is not None
    return store


KILLED = {"ses_a": [user("run it"), assistant(STEP, tool("call_1", "running"))]}
"""What opencode 1.18 leaves after a SIGKILL while its tool runs (tried with the real client)."""


def test_a_killed_tool_part_is_read_as_an_unanswered_call(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, KILLED)
    with _open(db) as store:
        assert isinstance(store, OpencodeDatabase)
        [stored] = store.sessions()
    assert (stored.id, stored.title, stored.resume) == ("ses_a", "title 0", "opencode --session ses_a")
    session = stored.session
    assert (session.format, session.provider, session.model) == ("opencode", "openai_chat", "rc-model")
    assert [(m.role, m.content) for m in session.messages] == [("user", "run it"), ("assistant", "")]
    assert session.messages[1].tool_calls[0].arguments == {"command": "echo call_1"}
    assert session.where == ["message msg_0000000 part prt_0000000000", "message msg_0000001 part prt_0000001001"]


def test_check_says_which_session_and_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, KILLED)
    code, out, err = call(capsys, "check", str(db))
    assert code == 1
    assert out == "session ses_a: messages[1].tool_calls[0]: R6: the call call_1 (bash) has no result\n"
    assert "1 problem" in err


def test_repair_in_place_writes_the_part_as_error_after_a_backup_and_nothing_else(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, KILLED)
    before = rows(db)
    code, out, _ = call(capsys, "repair", str(db), "--in-place")
    assert code == 0, out
    assert "answered 1 call as interrupted: call_1 (bash)" in out
    assert "wrote 1 tool part anew (every other part as it was): prt_0000001001" in out
    assert f"(the original is in {db}.bak)" in out
    after = rows(db)
    assert rows(Path(f"{db}.bak")) == before  # the backup is the database as it was
    changed = {t: [r for r in after[t] if r not in before[t]] for t in after}
    assert {t: len(c) for t, c in changed.items() if c} == {"part": 1}
    state = part_data(db, "prt_0000001001")["state"]
    assert state["status"] == "error"
    assert state["input"] == {"command": "echo call_1"}
    assert state["error"].startswith("Interrupted: the call to bash was cut off")
    assert state["time"] == {"start": state["time"]["start"], "end": state["time"]["start"]}
    assert state["metadata"] == {"output": ""}
    # read again: nothing to repair, and a second repair writes nothing (no second backup)
    assert call(capsys, "check", str(db))[0] == 0
    code, out, _ = call(capsys, "repair", str(db), "--in-place")
    assert code == 0 and "nothing to repair" in out
    assert not Path(f"{db}.bak.1").exists()


def test_repair_into_a_copy_leaves_the_database_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, copy = tmp_path / "opencode.db", tmp_path / "fixed.db"
    make_db(db, KILLED)
    before = rows(db)
    assert call(capsys, "repair", str(db), "-o", str(copy))[0] == 0
    assert rows(db) == before
    assert part_data(copy, "prt_0000001001")["state"]["status"] == "error"
    assert not Path(f"{db}.bak").exists() and not os.path.exists(f"{copy}-wal")
    code, _, err = call(capsys, "repair", str(db))
    assert code == 2 and "repaired in place (--in-place" in err


def test_a_running_opencode_holding_the_lock_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_stores, "BUSY_SECONDS", 0.5)  # the lock is held throughout: a shorter wait, same refusal
    db = tmp_path / "opencode.db"
    make_db(db, KILLED)
    before = rows(db)
    other = sqlite3.connect(db, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # what opencode holds while it writes
        with _open(db) as store:
            assert store.in_use() == "the database is locked by a running opencode"
        code, _, err = call(capsys, "repair", str(db), "--in-place")
        assert code == 2
        assert "locked by a running opencode; nothing was written: quit it, then run again" in err
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert rows(db) == before
    assert not list(tmp_path.glob("*.bak*")) and not list(tmp_path.glob(".*tmp"))


def test_a_row_changed_since_it_was_read_refuses_everything(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, {"ses_a": KILLED["ses_a"], "ses_b": [user("b"), assistant(STEP, tool("call_2", "pending"))]})
    with _open(db) as store:
        repairs = [s.repair(None)[1] for s in store.sessions()]
        other = sqlite3.connect(db)
        with other:  # opencode finishes call_2 meanwhile
            other.execute("UPDATE part SET data = ? WHERE id = 'prt_0010001001'",
                          (json.dumps(tool("call_2", "completed")),))
        other.close()
        before = rows(db)
        with pytest.raises(InputError, match="changed while chatmend was repairing it"):
            store.write_back(repairs)
    assert rows(db) == before  # ses_a's part was not written either: one transaction
    assert not list(tmp_path.glob("*.bak*"))


def test_steps_of_one_message_are_replies_and_states_are_results(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, {"ses_a": [
        user("go"),
        assistant(STEP, {"type": "reasoning", "text": "hm"}, {"type": "text", "text": "two calls"},
                  tool("c1", "completed", "out 1"), tool("c2", "error", "boom"), FINISH,
                  STEP, tool("c3", "completed", "out 3"), tool("c4", "running"), tool("c5", "pending")),
    ]})
    with _open(db) as store:
        [stored] = store.sessions()
        messages = stored.session.messages
        assert [(m.role, m.tool_call_id or [c.id for c in m.tool_calls], m.is_error) for m in messages] == [
            ("user", [], False), ("assistant", ["c1", "c2"], False), ("tool", "c1", False), ("tool", "c2", True),
            ("assistant", ["c3", "c4", "c5"], False), ("tool", "c3", False)]
        assert messages[1].content == "two calls" and messages[3].content == "boom"
        result, write_back = stored.repair(None)
        assert [c.id for c in result.interrupted] == ["c4", "c5"]
        store.write_back([write_back])
    pending = part_data(db, "prt_0000001009")["state"]  # no time of its own: the part's creation
    assert pending == {"status": "error", "input": {}, "error": pending["error"],
                       "time": {"start": 1_796_186_013_002, "end": 1_796_186_013_002}}
    assert part_data(db, "prt_0000001008")["state"]["status"] == "error"


def test_a_repeated_call_id_is_renamed_in_its_part(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, {"ses_a": [user("go"), assistant(STEP, tool("functions.bash:0", "completed"), FINISH),
                           user("again"), assistant(STEP, tool("functions.bash:0", "completed"))]})
    code, out, _ = call(capsys, "repair", str(db), "--in-place")
    assert code == 0 and "renamed 1 id" in out
    assert part_data(db, "prt_0000001001")["callID"] == "functions.bash:0"
    renamed = part_data(db, "prt_0000003001")
    assert renamed["callID"] != "functions.bash:0" and renamed["state"]["status"] == "completed"


def test_only_what_follows_the_last_completed_compaction_is_read(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, {"ses_a": [user("old"), assistant(STEP, tool("c0", "running")),
                           ("user", [{"type": "compaction", "auto": True}]),
                           ("assistant", [{"type": "text", "text": "summary"}]),
                           user("new")]})
    conn = sqlite3.connect(db)
    with conn:
        data = json.loads(conn.execute("SELECT data FROM message WHERE id = 'msg_0000003'").fetchone()[0])
        conn.execute("UPDATE message SET data = ? WHERE id = 'msg_0000003'",
                     (json.dumps({**data, "summary": True, "time": {"created": 1, "completed": 2}}),))
    conn.close()
    with _open(db) as store:
        [stored] = store.sessions()
    assert [m.content for m in stored.session.messages] == ["summary", "new"]
    assert not stored.repair(None)[0].changed


def test_several_sessions_and_session_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, {"ses_a": KILLED["ses_a"], "ses_b": [user("fine")]})
    code, _, err = call(capsys, "convert", str(db), "--to", "chatmend")
    assert code == 2 and "2 sessions in this opencode store; say which with --session ID" in err
    code, out, _ = call(capsys, "convert", str(db), "--to", "chatmend", "--session", "ses_b")
    assert (code, out) == (0, '{"role":"user","content":"fine"}\n')
    code, _, err = call(capsys, "show", str(db), "--session", "ses_x")
    assert code == 2 and "no session 'ses_x' here; expected one of: ses_a, ses_b" in err
    code, out, _ = call(capsys, "show", str(db))
    assert code == 0 and "session ses_a (opencode, 2 messages)" in out and "session ses_b" in out
    code, out, _ = call(capsys, "repair", str(db), "--to", "openai_chat", "--model", "m", "--session", "ses_a")
    assert code == 0 and json.loads(out)["messages"][-1]["role"] == "tool"
    code, _, err = call(capsys, "trim", str(db), "--session", "ses_a", "--max-messages", "1")
    assert code == 2 and "cannot write a trimmed opencode" in err


def test_unreadable_rows_say_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "opencode.db"
    make_db(db, KILLED)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE part SET data = '{\"type\":\"tool\",\"tool\":\"bash\",\"callID\":\"c\","
                     "\"state\":{\"status\":\"running\",\"input\":[1]}}' WHERE id = 'prt_0000001001'")
    conn.close()
    code, _, err = call(capsys, "check", str(db))
    assert code == 2
    assert err == (f"{db}: message msg_0000001 part prt_0000001001: state.input: expected an object (the call's "
                   "arguments), got a list\n")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE part SET data = 'not json' WHERE id = 'prt_0000001001'")
    conn.close()
    code, _, err = call(capsys, "repair", str(db), "--in-place")
    assert code == 2 and "message msg_0000001 part prt_0000001001: data: invalid JSON" in err


def test_the_older_storage_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    storage = make_folder(tmp_path, {"ses_a": [user("run it"), assistant(STEP, tool("call_1", "completed"),
                                                                         tool("call_2", "running"))]})
    with _open(storage) as store:
        assert isinstance(store, OpencodeFolder)
    files = {p: p.read_bytes() for p in storage.rglob("*.json")}
    assert call(capsys, "check", str(storage))[0] == 1
    code, out, _ = call(capsys, "repair", str(storage), "--in-place")
    assert code == 0, out
    target = storage / "part" / "msg_0000001" / "prt_0000001002.json"
    assert json.loads(target.read_text())["state"]["status"] == "error"
    assert Path(f"{target}.bak").read_bytes() == files[target]
    assert all(p.read_bytes() == data for p, data in files.items() if p != target)
    assert call(capsys, "check", str(storage))[0] == 0


_STATES = st.sampled_from(["pending", "running", "completed", "error"])


@settings(max_examples=30)
@given(st.lists(st.lists(_STATES, min_size=0, max_size=4), min_size=1, max_size=4), st.booleans())
def test_repair_leaves_only_finished_parts_and_changes_no_other_row(
        tmp_path_factory: pytest.TempPathFactory, steps: list[list[str]], wal: bool) -> None:
    """Any mix of states: after one repair every part is finished, only unfinished tool parts changed (their
    input kept), and a second repair changes nothing."""
    db = tmp_path_factory.mktemp("oc") / "opencode.db"
    messages = [user("go")]
    n = 0
    for states in steps:
        parts = [STEP]
        for status in states:
            n += 1
            parts.append(tool(f"c{n}", status))
        messages += [assistant(*parts), user("next")]
    make_db(db, {"ses_a": messages}, wal=wal)
    before = rows(db)
    with _open(db) as store:
        [stored] = store.sessions()
        _, write_back = stored.repair(None)
        assert len(write_back.changes) == sum(s in ("pending", "running") for states in steps for s in states)
        store.write_back([write_back])
    after = rows(db)
    assert {t: r for t, r in after.items() if t != "part"} == {t: r for t, r in before.items() if t != "part"}
    for old, new in zip(before["part"], after["part"]):
        old_data, new_data = json.loads(old[5]), json.loads(new[5])
        if old_data.get("type") == "tool" and old_data["state"]["status"] in ("pending", "running"):
            assert new_data["state"]["status"] == "error"
            assert new_data["state"]["input"] == old_data["state"]["input"]
        else:
            assert new == old
    with _open(db) as store:
        [again] = store.sessions()
        assert not again.repair(None)[0].changed


def test_check_dir_reads_a_database_once_and_not_its_side_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_db(tmp_path / "opencode.db", KILLED)
    conn = sqlite3.connect(tmp_path / "opencode.db")  # keeps the -wal and -shm files while open
    try:
        code, out, err = call(capsys, "check", str(tmp_path))
    finally:
        conn.close()
    assert code == 1
    assert out == f"{tmp_path / 'opencode.db'}: session ses_a: messages[1].tool_calls[0]: R6: the call call_1 " \
                  "(bash) has no result\n"
    assert "1 file checked" in err


def test_from_a_store_format_on_a_file_that_is_none_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role":"user","content":"hi"}\n')
    code, _, err = call(capsys, "check", str(path), "--from", "opencode")
    assert code == 2
    assert err == f"{path}: not a session store of format 'opencode' (a database or folder of sessions)\n"
    code, _, err = call(capsys, "show", str(path), "--session", "ses_a")
    assert code == 2 and "--session picks a session of a store" in err
