"""Claude Code transcripts are read as Claude Code sends them (the spec's decision on checking and repairing where
a history lives): a reply whose records are interleaved with its own results (a tool ran while the reply still
streamed) is one reply, and results written in the order their tools finished are not a problem. Healthy
sessions check clean and repair to the same bytes, with both readers (whole, and a part at a time); broken ones
are found, repaired, check clean after and repair to the same bytes again.

The real sessions of `../shared/real-world/` section D are read in place (skipped when it is absent)."""

from __future__ import annotations

import contextlib
import io
import json
import random
import uuid
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend.cli import main
from tests.strategies import examples
from tests.transcripts.helpers import REAL

_STAMP = "2026-12-01T10:{:02d}:{:02d}.{:03d}Z"


def _run(argv: list[str], *, whole: bool) -> tuple[int, str, str]:
    """The command's exit code, stdout and stderr; `whole`: with the part-at-a-time reading turned off."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        if whole:
            for command in ("chatmend.cli._check.streamed", "chatmend.cli._repair.streamed",
                            "chatmend.doctor.streamed"):
                stack.enter_context(mock.patch(command, lambda *args, **kwargs: None))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _section_d(kind: str) -> list[str]:
    """The names of section D's transcripts of one kind (MANIFEST.json's `kind`)."""
    manifest = REAL / "MANIFEST.json"
    if not manifest.is_file():
        return []
    return sorted(entry["name"] for entry in json.loads(manifest.read_text(encoding="utf-8"))
                  if entry.get("kind") == kind)


HEALTHY = [*_section_d("FP_split_reply"), *_section_d("FP_reorder_only"), *_section_d("clean")]
BROKEN = _section_d("TP_midrun_unanswered")


def _assert_healthy(path: Path, tmp_path: Path, *, whole: bool) -> None:
    code, out, err = _run(["check", str(path)], whole=whole)
    assert (code, out) == (0, ""), out
    assert "no problems" in err
    repaired = tmp_path / f"repaired-{whole}.jsonl"
    code, out, err = _run(["repair", str(path), "-o", str(repaired)], whole=whole)
    assert code == 0 and "nothing to repair" in out + err
    assert repaired.read_bytes() == path.read_bytes()


def _assert_repaired(path: Path, tmp_path: Path, *, whole: bool, missing: int) -> bytes:
    code, out, _ = _run(["check", str(path)], whole=whole)
    assert code == 1
    assert [line.split(": ")[1] for line in out.splitlines()] == ["R6"] * missing, out
    repaired = tmp_path / f"repaired-{whole}.jsonl"
    code, out, _ = _run(["repair", str(path), "-o", str(repaired), "--report", "json"], whole=whole)
    assert code == 0
    report = json.loads(out)
    assert len(report["interrupted"]) == missing and not report["moved"] and not report["notes"]
    relinked = _relinked(path.read_text(encoding="utf-8"), repaired.read_text(encoding="utf-8"))
    said = [fix for fix in report.get("store", []) if fix.startswith("relinked")]
    assert said == ([f"relinked {relinked} record{'s' if relinked > 1 else ''} (a new parentUuid): the chain "
                     "Claude Code resumes passes every record, in the order repair wrote them"] if relinked else [])
    code, out, _ = _run(["check", str(repaired)], whole=whole)
    assert (code, out) == (0, ""), out
    again = tmp_path / f"again-{whole}.jsonl"
    _run(["repair", str(repaired), "-o", str(again)], whole=whole)
    assert again.read_bytes() == repaired.read_bytes()  # idempotent
    kept = path.read_text(encoding="utf-8").splitlines()
    assert all(line in repaired.read_text(encoding="utf-8") or '"parentUuid"' in line for line in kept)
    return repaired.read_bytes()


def _relinked(before: str, after: str) -> int:
    """How many records of `before` have another parentUuid in `after` (every relink repair made is reported)."""
    parents = {r["uuid"]: r.get("parentUuid") for r in map(json.loads, before.splitlines()) if "uuid" in r}
    return sum(1 for r in map(json.loads, after.splitlines())
               if r.get("uuid") in parents and parents[r["uuid"]] != r.get("parentUuid"))


@pytest.mark.skipif(not HEALTHY, reason="../shared/real-world is absent")
@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("name", HEALTHY)
def test_real_healthy_sessions_check_clean_and_repair_to_the_same_bytes(tmp_path: Path, name: str,
                                                                         whole: bool) -> None:
    _assert_healthy(REAL / name, tmp_path, whole=whole)


@pytest.mark.skipif(not BROKEN, reason="../shared/real-world is absent")
@pytest.mark.parametrize("name", BROKEN)
def test_real_sessions_cut_mid_run_are_found_and_repaired_the_same_by_both_readers(tmp_path: Path,
                                                                                    name: str) -> None:
    whole = _assert_repaired(REAL / name, tmp_path, whole=True, missing=1)
    assert _assert_repaired(REAL / name, tmp_path, whole=False, missing=1) == whole


@pytest.mark.skipif(not HEALTHY, reason="../shared/real-world is absent")
def test_doctor_says_healthy_real_sessions_are_ok_and_fix_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work-project"
    project.mkdir(parents=True)
    for n, name in enumerate(HEALTHY):
        (project / f"{uuid.UUID(int=n)}.jsonl").write_bytes((REAL / name).read_bytes())
    before = {p.name: p.read_bytes() for p in project.iterdir()}
    with mock.patch.dict("os.environ", {"HOME": str(home)}):
        code, out, _ = _run(["doctor", "--json", "--force"], whole=False)
        assert code == 0, out
        sessions = [json.loads(line) for line in out.splitlines()]
        assert len(sessions) == len(HEALTHY)
        assert {s["status"] for s in sessions} == {"ok"}
        code, _, _ = _run(["doctor", "--fix", "--force"], whole=False)
    assert code == 0
    assert {p.name: p.read_bytes() for p in project.iterdir()} == before


# --- generated sessions ------------------------------------------------------------------------------------------


@st.composite
def sessions_as_written(draw: st.DrawFn) -> tuple[str, int]:
    """A Claude Code session as Claude Code writes it: each reply one block a record, a call's tool started as
    soon as its block is written, its result written when the tool finishes (between the reply's later records,
    or after them, in the order the tools finished), each result hanging off its own call's record; with the
    number of calls of the last reply left without a result (captured while they ran)."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    records: list[dict[str, Any]] = []
    clock = [0]

    def add(kind: str, message: dict[str, Any], parent: str | None, **extra: Any) -> str:
        clock[0] += 1
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        tick = clock[0]
        records.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work",
                        "sessionId": "s1", "version": "2.1.31", "type": kind, "message": message, "uuid": uid,
                        "timestamp": _STAMP.format(tick // 3600 % 60, tick // 60 % 60, tick % 1000), **extra})
        return uid

    last = add("user", {"role": "user", "content": "start"}, None)
    turns = draw(st.integers(1, 4))
    unanswered = 0
    for turn in range(turns):
        if turn and draw(st.booleans()):
            last = add("user", {"role": "user", "content": f"prompt {turn}"}, last)
        message_id = f"msg_{turn:04d}"
        reply = {"id": message_id, "type": "message", "role": "assistant", "model": "claude-opus-4-6"}
        running: list[tuple[str, str]] = []  # (call id, the record of its call)
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": f"Looking at {turn}."})
        calls = draw(st.integers(1, 4))
        blocks += [{"type": "tool_use", "id": f"toolu_{turn}{c}{rng.getrandbits(32):08x}", "name": "Bash",
                    "input": {"command": f"ls {c}"}} for c in range(calls)]
        final = turn == turns - 1
        cut = draw(st.integers(0, calls)) if final and draw(st.booleans()) else 0

        def finish(count: int, running: list[tuple[str, str]] = running) -> None:
            nonlocal last
            for _ in range(count):
                call_id, call_record = running.pop(rng.randrange(len(running)))
                last = add("user", {"role": "user", "content": [
                    {"tool_use_id": call_id, "type": "tool_result", "content": f"out of {call_id}"}]},
                    call_record, toolUseResult={"stdout": "out"}, sourceToolAssistantUUID=call_record)

        for block in blocks:
            last = add("assistant", {**reply, "content": [block]}, last)
            if block["type"] == "tool_use":
                running.append((block["id"], last))
            finish(draw(st.integers(0, len(running))))  # tools that finished while the reply streamed
        finish(len(running) - cut)
        unanswered = len(running)
    return "".join(json.dumps(r) + "\n" for r in records), unanswered


@examples(60)
@given(sessions_as_written())
def test_sessions_as_claude_code_writes_them_check_clean_or_repair_only_what_is_missing(
        tmp_path_factory: pytest.TempPathFactory, session: tuple[str, int]) -> None:
    text, unanswered = session
    folder = tmp_path_factory.mktemp("session")
    path = folder / "session.jsonl"
    path.write_text(text, encoding="utf-8")
    for whole in (True, False):
        if unanswered:
            _assert_repaired(path, folder, whole=whole, missing=unanswered)
        else:
            _assert_healthy(path, folder, whole=whole)


# --- lone surrogates ---------------------------------------------------------------------------------------------


def _with_escape(records: list[dict[str, Any]], marker: str, escape: str) -> str:
    """The transcript's lines with `marker` written as the JSON escape `escape` (a lone surrogate as Claude Code
    writes half an emoji: JSON.stringify escapes it)."""
    return "".join(json.dumps(r) + "\n" for r in records).replace(marker, escape)


def _session_with(where: str) -> list[dict[str, Any]]:
    base = {"isSidechain": False, "sessionId": "s1", "timestamp": "2026-12-01T10:00:00.000Z"}
    use = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "MARK" if where == "input" else "a"}}
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": "toolu_1",
                              "content": "out MARK" if where == "result" else "out"}
    return [
        {**base, "parentUuid": None, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}},
        {**base, "parentUuid": "u1", "type": "assistant", "uuid": "a1", "message": {
            "id": "m1", "role": "assistant", "content": [
                {"type": "text", "text": "emoji MARK cut" if where == "text" else "ok"}]}},
        {**base, "parentUuid": "a1", "type": "assistant", "uuid": "a2", "message": {
            "id": "m1", "role": "assistant", "content": [use]}},
        {**base, "parentUuid": "a2", "type": "user", "uuid": "r1", "message": {"role": "user", "content": [result]},
         "toolUseResult": {"stdout": "MARK" if where == "unsent" else "out"}},
    ]


@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize(("where", "escape", "path", "words"), [
    ("text", "\\ud83d", "message.content[0].text", "no low surrogate in string"),
    ("input", "\\ude00", "message.content[0].input.path", "invalid high surrogate in string"),
    ("result", "\\ud83d", "message.content[0].content", "no low surrogate in string"),
])
def test_a_lone_surrogate_claude_code_would_send_is_found_and_replaced(tmp_path: Path, whole: bool, where: str,
                                                                        escape: str, path: str, words: str) -> None:
    session = tmp_path / "session.jsonl"
    session.write_text(_with_escape(_session_with(where), "MARK", escape), encoding="utf-8")
    code, out, _ = _run(["check", str(session)], whole=whole)
    assert code == 1
    assert f": {path}: JSON: " in out and words in out and escape in out
    repaired = tmp_path / "repaired.jsonl"
    code, out, err = _run(["repair", str(session), "-o", str(repaired)], whole=whole)
    assert code == 0 and f"replaced a lone surrogate with U+FFFD at {path}" in out + err
    before, after = session.read_text().splitlines(), repaired.read_text(encoding="utf-8").splitlines()
    changed = [n for n, (a, b) in enumerate(zip(before, after)) if a != b]
    assert len(before) == len(after) and len(changed) == 1  # only that record, written anew
    assert "\ufffd" in json.dumps(json.loads(after[changed[0]]), ensure_ascii=False)
    assert _run(["check", str(repaired)], whole=whole)[:2] == (0, "")


def test_a_lone_surrogate_claude_code_does_not_send_is_no_problem(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    session.write_text(_with_escape(_session_with("unsent"), "MARK", "\\ud83d"), encoding="utf-8")
    assert _run(["check", str(session)], whole=True)[:2] == (0, "")
    repaired = tmp_path / "repaired.jsonl"
    _run(["repair", str(session), "-o", str(repaired)], whole=True)
    assert repaired.read_bytes() == session.read_bytes()


def test_check_of_a_transcript_read_a_part_at_a_time_never_reads_it_whole_again(tmp_path: Path) -> None:
    base = {"isSidechain": False, "sessionId": "s1", "timestamp": "2026-12-01T10:00:00.000Z"}
    records = [
        {**base, "parentUuid": None, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}},
        {**base, "parentUuid": "u1", "type": "assistant", "uuid": "a1", "message": {
            "id": "m1", "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]}},
    ]
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    def whole(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("read whole")

    with mock.patch("chatmend.cli._check.read", whole):  # what it says of repair is decided on the first pass
        code, out, err = _run(["check", str(session)], whole=False)
    assert code == 1 and ": R6: " in out and "`chatmend repair` fixes what repair can" in err
