"""Zed's agent threads.db. Zed has no command line to produce threads, so each thread here is built exactly as
Zed's own code defines it: the table and its added columns as `ThreadsDatabase::new` creates them, a row as
`save_thread_sync` writes it (zstd level 3 of serde_json's compact JSON of `DbThread` with `version: "0.3.0"`),
in zed-industries/zed `crates/agent/src/db.rs`; messages as serde serializes `Message`, `AgentMessage`,
`AgentMessageContent` and `UserMessageContent` (`crates/agent/src/thread.rs`) and `LanguageModelToolUse` /
`LanguageModelToolResult` (`crates/language_model/src/request.rs`). What is sent follows `AgentMessage::to_request`:
a tool use with no result is left out, every tool result is sent in the user message after it."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatmend.cli import main
from chatmend.doctor import doctor
from chatmend.files.io import InputError
from chatmend.transcripts.stores import Store, open_store
from chatmend.transcripts.zed import ZedThreads, compress, decompress

zstandard = pytest.importorskip("zstandard")

UPDATED = "2026-11-30T10:00:00+00:00"
USAGE = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def user(text: str, n: int = 0) -> dict[str, Any]:
    return {"User": {"id": f"0199a1b2-0000-7000-8000-00000000000{n}", "content": [{"Text": text}]}}


def tool_use(call_id: str, command: str = "sleep 60") -> dict[str, Any]:
    return {"ToolUse": {"id": call_id, "name": "terminal", "raw_input": json.dumps({"command": command}),
                        "input": {"command": command}, "is_input_complete": True, "thought_signature": None}}


def tool_result(call_id: str, text: str = "ok", error: bool = False) -> dict[str, Any]:
    return {"tool_use_id": call_id, "tool_name": "terminal", "is_error": error, "content": {"Text": text},
            "output": None}


def agent(*content: dict[str, Any], results: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"Agent": {"content": list(content), "tool_results": results or {}, "reasoning_details": None}}


def thread(messages: list[Any]) -> dict[str, Any]:
    """A `DbThread` as `save_thread_sync` serializes it (its fields in order, then `version`)."""
    return {"title": "Fix the build", "messages": messages, "updated_at": UPDATED, "detailed_summary": None,
            "initial_project_snapshot": None, "cumulative_token_usage": USAGE, "request_token_usage": {},
            "model": {"provider": "anthropic", "model": "claude-sonnet-4-5"}, "profile": "write", "imported": False,
            "subagent_context": None, "speed": None, "thinking_enabled": False, "thinking_effort": None,
            "draft_prompt": None, "ui_scroll_position": {"item_ix": 3, "offset_in_item": 0.5},
            "sandboxed_terminal_temp_dir": None, "version": "0.3.0"}


def make_db(path: Path, threads: dict[str, dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, "
                     "updated_at TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL)")
        conn.execute("ALTER TABLE threads ADD COLUMN parent_id TEXT")
        conn.executescript("ALTER TABLE threads ADD COLUMN folder_paths TEXT; "
                           "ALTER TABLE threads ADD COLUMN folder_paths_order TEXT;")
        conn.execute("ALTER TABLE threads ADD COLUMN created_at TEXT")
        for thread_id, data in threads.items():
            blob = zstandard.ZstdCompressor(level=3).compress(json.dumps(data, separators=(",", ":")).encode())
            conn.execute("INSERT INTO threads (id, parent_id, folder_paths, folder_paths_order, summary, updated_at, "
                         "data_type, data, created_at) VALUES (?, NULL, '/work/app', '0', ?, ?, 'zstd', ?, ?)",
                         (thread_id, data["title"], UPDATED, blob, UPDATED))
        conn.commit()
    finally:
        conn.close()


def stored_thread(path: Path, thread_id: str) -> dict[str, Any]:
    conn = sqlite3.connect(path)
    try:
        [(data,)] = conn.execute("SELECT data FROM threads WHERE id = ?", (thread_id,)).fetchall()
    finally:
        conn.close()
    value: dict[str, Any] = json.loads(decompress(data))
    return value


def _open(path: Path) -> Store:
    store = open_store(str(path))
    assert store is not None
    return store


def test_a_thread_is_read_as_zed_sends_it(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    make_db(db, {"t1": thread([user("run the tests"),
                               agent({"Thinking": {"text": "hm", "signature": "sig"}}, {"Text": "running"},
                                     tool_use("toolu_1"), results={"toolu_1": tool_result("toolu_1", "2 passed")}),
                               "Resume", agent({"Text": "done"})])})
    with _open(db) as store:
        assert isinstance(store, ZedThreads)
        [stored] = store.sessions()
    assert (stored.id, stored.title) == ("t1", "Fix the build")
    messages = stored.session.messages
    assert [(m.role, m.tool_call_id) for m in messages] == [
        ("user", None), ("assistant", None), ("tool", "toolu_1"), ("user", None), ("assistant", None)]
    assert messages[3].content == "Continue where you left off"
    assert messages[1].tool_calls[0].arguments == {"command": "sleep 60"} and messages[2].content == "2 passed"
    assert stored.session.where[2] == "messages[1].Agent.tool_results['toolu_1']"
    assert stored.session.provider == "anthropic" and stored.session.model == "claude-sonnet-4-5"
    assert not stored.repair(None)[0].changed


def test_a_call_zed_was_killed_in_is_left_out_as_zed_sends_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "threads.db"
    make_db(db, {"t1": thread([user("run it"), agent({"Text": "on it"}, tool_use("toolu_1")), user("hello?", 1)])})
    with _open(db) as store:
        [stored] = store.sessions()
    assert stored.session.messages[1].tool_calls == ()
    assert stored.session.warnings == ["thread t1: messages[1].Agent.content[1]: the call toolu_1 has no result; "
                                       "Zed leaves it out of what it sends"]
    assert main(["check", str(db)]) == 0
    capsys.readouterr()


def test_a_result_whose_call_is_gone_becomes_a_note_and_nothing_else_changes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The thread Zed can no longer send: a result is in `tool_results` but its tool use is not in the content."""
    db = tmp_path / "threads.db"
    original = thread([user("run it"),
                       agent({"Text": "ran"}, tool_use("toolu_1"),
                             results={"toolu_1": tool_result("toolu_1", "fine"),
                                      "toolu_lost": tool_result("toolu_lost", "secret output 42", error=True)}),
                       user("next", 1)])
    original["unknown_future_field"] = {"kept": True}
    make_db(db, {"t1": original, "t2": thread([user("other")])})
    other_before = sqlite3.connect(db).execute("SELECT * FROM threads WHERE id = 't2'").fetchall()
    assert main(["check", str(db)]) == 1
    assert "toolu_lost" in capsys.readouterr().out
    assert main(["repair", str(db), "--in-place"]) == 0
    capsys.readouterr()
    after = stored_thread(db, "t1")
    assert {k: v for k, v in after.items() if k != "messages"} == {k: v for k, v in original.items()
                                                                  if k != "messages"}
    first, reply, note, last = after["messages"]
    assert first == original["messages"][0] and last == original["messages"][2]
    assert reply["Agent"]["content"] == original["messages"][1]["Agent"]["content"]
    assert reply["Agent"]["tool_results"] == {"toolu_1": tool_result("toolu_1", "fine")}
    [text] = note["User"]["content"]
    assert "secret output 42" in text["Text"]
    assert sqlite3.connect(db).execute("SELECT * FROM threads WHERE id = 't2'").fetchall() == other_before
    assert main(["check", str(db)]) == 0
    assert Path(f"{db}.bak").exists()


def test_a_thread_of_another_format_version_is_an_error_saying_where(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    old = thread([user("hi")])
    old["version"] = "0.2.0"
    make_db(db, {"t1": old})
    with _open(db) as store, pytest.raises(InputError, match=r"thread t1: version: expected Zed's thread format"):
        store.sessions()


def test_a_threads_table_of_another_tool_is_not_taken_for_zed(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE threads (id TEXT, body TEXT)")
    conn.close()
    assert not ZedThreads.recognizes(str(db))


def test_compression_is_zed_s() -> None:
    data = b'{"version":"0.3.0"}'
    assert decompress(compress(data)) == data
    assert zstandard.ZstdDecompressor().decompressobj().decompress(compress(data)) == data


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.booleans()), min_size=1, max_size=4))
def test_any_mix_is_valid_after_one_repair_and_keeps_every_result_text(
        tmp_path_factory: pytest.TempPathFactory, turns: list[tuple[int, int, bool]]) -> None:
    """Agent messages with answered calls, orphan results and unanswered calls: one repair leaves nothing to repair,
    and every result's text is still in the thread."""
    db = tmp_path_factory.mktemp("zed") / "threads.db"
    messages: list[Any] = [user("go")]
    texts = []
    for n, (answered, orphans, typed) in enumerate(turns):
        ids = [f"toolu_{n}_{k}" for k in range(answered)]
        results = {i: tool_result(i, f"out {i}") for i in ids}
        results |= {f"lost_{n}_{k}": tool_result(f"lost_{n}_{k}", f"orphan {n} {k}") for k in range(orphans)}
        texts += [r["content"]["Text"] for r in results.values()]
        messages.append(agent({"Text": "step"}, *[tool_use(i) for i in ids], tool_use(f"open_{n}"), results=results))
        if typed:
            messages.append(user("and?", n))
    make_db(db, {"t1": thread(messages)})
    with _open(db) as store:
        _, write_back = store.sessions()[0].repair(None)
        store.write_back([write_back])
    dumped = json.dumps(stored_thread(db, "t1"))
    assert all(text in dumped for text in texts)
    with _open(db) as store:
        assert not store.sessions()[0].repair(None)[0].changed


def test_doctor_finds_zed_threads_in_its_data_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = home / ".local" / "share" / "zed" / "threads" / "threads.db"
    make_db(db, {"t1": thread([user("run it"), agent(tool_use("toolu_1"), results={
        "ghost": tool_result("ghost", "left over")})])})
    os.utime(db, (0, 0))
    [found] = [f for f in doctor(env={"HOME": str(home)}, workers=1) if f.tool == "Zed"]
    assert (found.status, found.session) == ("broken", "t1")
    [fixed] = [f for f in doctor(env={"HOME": str(home)}, fix=True, workers=1) if f.tool == "Zed"]
    assert fixed.status == "fixed" and fixed.backup and os.path.exists(fixed.backup)
    assert [f.status for f in doctor(env={"HOME": str(home)}, workers=1) if f.tool == "Zed"] == ["ok"]
