"""OpenAI Agents SDK `SQLiteSession` databases, made by the SDK's own SQLiteSession: read, repaired in place so
that the SDK's `get_items()` returns a valid Responses input, the rows before the first change untouched."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatmend import providers
from chatmend.cli import main
from chatmend.transcripts.agents_sdk import AgentsSdkSession
from chatmend.transcripts.stores import Store, open_store
from tests.transcripts.opencode_db import rows

agents = pytest.importorskip("agents")


def _save(path: Path, items: list[dict[str, Any]], session_id: str = "conv_1") -> None:
    async def run() -> None:
        session = agents.SQLiteSession(session_id, str(path))
        try:
            await session.add_items(items)
        finally:
            session.close()

    asyncio.run(run())


def _items(path: Path, session_id: str = "conv_1") -> list[Any]:
    async def run() -> list[Any]:
        session = agents.SQLiteSession(session_id, str(path))
        try:
            return list(await session.get_items())
        finally:
            session.close()

    return asyncio.run(run())


def _open(path: Path) -> Store:
    store = open_store(str(path))
    assert store is not None
    return store


def _call(call_id: str, name: str = "ls") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def _output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": f"out {call_id}"}


USER = {"role": "user", "content": "list files"}


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_interrupted_call_is_answered_and_the_sdk_reads_it_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "agent.db"
    _save(db, [USER, _call("a"), _call("b", "cat"), _output("b")])
    with _open(db) as store:
        assert isinstance(store, AgentsSdkSession)
        [stored] = store.sessions()
        assert stored.id == "conv_1" and stored.session.provider == "openai_responses"
    before = rows(db)
    code, out, _ = call(capsys, "check", str(db))
    assert (code, out) == (1, "session conv_1: messages[1].tool_calls[0]: R6: the call a (ls) has no result\n")
    code, out, _ = call(capsys, "repair", str(db), "--in-place")
    assert code == 0 and "answered 1 call as interrupted: a (ls)" in out
    assert "agent_messages rows of conv_1: 1 rewritten, 1 added" in out
    items = _items(db)
    assert [i.get("call_id") for i in items] == [None, "a", "b", "a", "b"]
    assert providers.get("openai_responses").check({"model": "gpt-5", "input": items}) == []
    after = rows(db)
    assert after["agent_messages"][:3] == before["agent_messages"][:3]  # the rows before the first change
    assert after["agent_sessions"] == before["agent_sessions"]
    assert rows(Path(f"{db}.bak")) == before
    assert call(capsys, "check", str(db))[0] == 0


def test_a_call_left_last_gets_its_output_in_a_new_row_only(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    _save(db, [USER, _call("a"), _output("a"), {"role": "user", "content": "more"}, _call("b")])
    before = rows(db)
    with _open(db) as store:
        [stored] = store.sessions()
        _, write_back = stored.repair(None)
        store.write_back([write_back])
    after = rows(db)
    assert after["agent_messages"][:-1] == before["agent_messages"]
    assert json.loads(after["agent_messages"][-1][2])["call_id"] == "b"


def test_other_sessions_in_the_database_are_untouched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "agent.db"
    _save(db, [USER, _call("a")], "one")
    _save(db, [USER, _call("b"), _output("b")], "two")
    before = _items(db, "two")
    code, out, _ = call(capsys, "repair", str(db), "--in-place", "--session", "one")
    assert code == 0 and "session one: repaired" in out
    assert _items(db, "two") == before
    assert len(_items(db, "one")) == 3


@settings(max_examples=25)
@given(st.lists(st.tuples(st.integers(1, 3), st.lists(st.booleans(), min_size=3, max_size=3)), min_size=1,
                max_size=4))
def test_any_mix_of_answered_calls_reads_back_valid(tmp_path_factory: pytest.TempPathFactory,
                                                    turns: list[tuple[int, list[bool]]]) -> None:
    db = tmp_path_factory.mktemp("sdk") / "agent.db"
    items: list[dict[str, Any]] = []
    n = 0
    for calls, answered in turns:
        items.append(USER)
        ids = [f"c{n + k}" for k in range(calls)]
        n += calls
        items += [_call(i) for i in ids]
        items += [_output(i) for i, done in zip(ids, answered) if done]
    _save(db, items)
    with _open(db) as store:
        [stored] = store.sessions()
        _, write_back = stored.repair(None)
        store.write_back([write_back])
    repaired = _items(db)
    assert providers.get("openai_responses").check({"model": "gpt-5", "input": repaired}) == []
    kept = [i for i in repaired if i.get("type") != "function_call_output" or i["output"].startswith("out ")]
    assert [json.dumps(i, sort_keys=True) for i in kept] == [json.dumps(i, sort_keys=True) for i in items]
