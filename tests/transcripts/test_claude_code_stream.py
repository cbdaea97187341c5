"""A Claude Code transcript checked and repaired a part at a time (`claude_code_stream`) gives exactly what reading
it whole gives: the same problem lines, the same repaired bytes, the same report, the same exit code."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage
from chatmend.cli import main
from chatmend.exceptions import InputError
from chatmend.files.io import as_bytes
from chatmend.formats import streamed
from chatmend.transcripts.claude_code_stream import Scan
from tests.strategies import examples, messy_histories
from tests.transcripts.helpers import REAL, claude_code_records, lines_of, real_claude_transcripts

_STAMP = "2026-12-01T10:{:02d}:{:02d}.000Z"


def _run(argv: list[str], *, whole: bool) -> tuple[int, str, str]:
    """The command's exit code, stdout and stderr; `whole`: with the part-at-a-time reading turned off."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        if whole:
            for command in ("chatmend.cli._check.streamed", "chatmend.cli._repair.streamed"):
                stack.enter_context(mock.patch(command, lambda *args, **kwargs: None))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _outcomes(folder: Path, text: str | bytes, *, whole: bool) -> list[Any]:
    """check, repair -o, repair to stdout with a JSON report, repair with --read-only: what each gives."""
    path = folder / "session.jsonl"
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    repaired = folder / "repaired.jsonl"
    found: list[Any] = [_run(["check", str(path)], whole=whole)]
    for argv in (["repair", str(path), "-o", str(repaired)], ["repair", str(path), "--report", "json"],
                 ["repair", str(path), "-o", str(repaired), "--read-only", "Read"]):
        repaired.unlink(missing_ok=True)
        found.append(_run(argv, whole=whole))
        found.append(repaired.read_bytes() if repaired.exists() else None)
    in_place = folder / "in_place.jsonl"
    backup = folder / "in_place.jsonl.bak"
    in_place.write_bytes(path.read_bytes())
    backup.unlink(missing_ok=True)
    found.append(_run(["repair", "--in-place", str(in_place), "--report", "json"], whole=whole))
    found += [in_place.read_bytes(), backup.read_bytes() if backup.exists() else None,
              sorted(p.name for p in folder.iterdir())]
    return found


def _assert_same(tmp_path: Path, text: str | bytes) -> None:
    with_parts = _outcomes(tmp_path, text, whole=False)
    assert with_parts == _outcomes(tmp_path, text, whole=True)


@st.composite
def transcripts(draw: st.DrawFn) -> str:
    """A Claude Code transcript as the tool writes them and as they break: replies one block a line (some blocks
    written twice, some with `apiBlockIndex`), calls killed, results late, shuffled, off their own call's record
    or for no call, ids reused, prompts typed while tools ran, compaction, sidechains, snapshots; mostly plain
    text, sometimes a block check has rules for (thinking, a blank text)."""
    records: list[dict[str, Any]] = []
    parent: str | None = None
    tick = 0

    def add(kind: str, content: Any, *, message_id: str | None = None, link: str | None = None,
            **extra: Any) -> str:
        nonlocal parent, tick
        tick += 1
        uid = f"{tick:08d}-0000-4000-8000-000000000000"
        message: dict[str, Any] = {"role": kind, "content": content}
        if message_id is not None:
            message = {"id": message_id, "model": "claude-sonnet-4-5", **message}
        records.append({"parentUuid": parent if link is None else link, "isSidechain": False, "sessionId": "s",
                        "type": kind, "message": message, "uuid": uid,
                        "timestamp": _STAMP.format(tick // 60 % 60, tick % 60), **extra})
        parent = uid
        return uid

    words = st.sampled_from(["go", "fix the test", "and the docs", "stop", "ok", "é 中文 🙂", "a\u2028b\x85c"])
    call_ids = st.one_of(st.sampled_from(["toolu_A", "toolu_B", "toolu_A_1"]),
                         st.integers(0, 10**6).map(lambda n: f"toolu_{n:07d}"))
    for turn in range(draw(st.integers(0, 7))):
        text = draw(words) if draw(st.integers(0, 9)) else " "
        add("user", text if draw(st.booleans()) else [{"type": "text", "text": text}])
        if draw(st.integers(0, 9)) == 0:
            records.append({"type": "system", "subtype": "compact_boundary", "uuid": f"b{turn}",
                            "parentUuid": None, "isSidechain": False})
            parent = f"b{turn}"
        if draw(st.integers(0, 9)) == 0:
            records.append({"type": "user", "isSidechain": True, "uuid": f"side{turn}", "parentUuid": None,
                            "message": {"role": "user", "content": "a subagent's prompt"}})
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(words)})
        if draw(st.integers(0, 6)) == 0:  # thinking, first or anywhere (the writer puts it where it goes)
            thought = {"type": "thinking", "thinking": draw(words), "signature": draw(st.sampled_from(["s", ""]))}
            blocks.insert(draw(st.integers(0, len(blocks))) if draw(st.booleans()) else 0, thought)
        if draw(st.integers(0, 20)) == 0:
            blocks.insert(0, {"type": "thinking", "thinking": "hm"})  # no signature: check's AT4
        calls = [(draw(call_ids), draw(st.sampled_from(["Read", "Bash"]))) for _ in range(draw(st.integers(0, 3)))]
        blocks += [{"type": "tool_use", "id": i, "name": n, "input": {"path": "a.py"}} for i, n in calls]
        if not blocks and draw(st.booleans()):
            blocks = [{"type": "text", "text": "  "}]
        indexed = draw(st.integers(0, 4)) == 0
        uses: dict[str, str] = {}
        for position, block in enumerate(blocks):
            extra: dict[str, Any] = {"apiBlockIndex": position} if indexed else {}
            uid = add("assistant", [block], message_id=f"msg_{turn}", **extra)
            if block["type"] == "tool_use":
                uses[block["id"]] = uid
            if draw(st.integers(0, 12)) == 0:
                add("assistant", [block], message_id=f"msg_{turn}", **extra)  # the same block written again
        answered = [c for c in calls if draw(st.integers(0, 5))]
        if draw(st.integers(0, 5)) == 0:
            answered = list(reversed(answered))
        tree = draw(st.integers(0, 3)) == 0
        last = parent
        for call_id, _ in answered:
            if draw(st.integers(0, 12)) == 0:
                add("user", "typed while the tools ran")
            result = {"type": "tool_result", "tool_use_id": call_id, "content": draw(words)}
            last = add("user", [result], link=uses.get(call_id) if tree else None,
                       toolUseResult={"stdout": "x"})
        parent = last
        if draw(st.integers(0, 12)) == 0:
            add("user", [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "late"}])
        if draw(st.integers(0, 3)) == 0:
            records.append({"type": "file-history-snapshot", "messageId": parent, "snapshot": {}})
    finished = draw(st.integers(0, 3))
    if records and finished:
        if finished == 3:  # a last reply that thinks (check's AT6 and AT7 when it is the final turn)
            add("assistant", [{"type": "thinking", "thinking": "so", "signature": "s"}], message_id="msg_last")
        add("assistant", [{"type": "text", "text": "done"}], message_id="msg_last")
    newline = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) + newline for r in records]
    if lines and draw(st.integers(0, 5)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), newline)  # a blank line
    text = "".join(lines)
    return text.rstrip("\r\n") if draw(st.integers(0, 5)) == 0 else text


@examples(150)
@given(transcripts())
def test_a_transcript_read_a_part_at_a_time_checks_and_repairs_as_read_whole(tmp_path_factory: pytest.TempPathFactory,
                                                                           text: str) -> None:
    _assert_same(tmp_path_factory.mktemp("t"), text)


@examples(60)
@given(messy_histories())
def test_a_messy_history_as_a_transcript_checks_and_repairs_as_read_whole(tmp_path_factory: pytest.TempPathFactory,
                                                                        history: list[ChatMessage]) -> None:
    _assert_same(tmp_path_factory.mktemp("m"), "".join(lines_of(claude_code_records(history))))


def _turns(count: int, *, killed: int = 0) -> str:
    """A linear transcript of `count` turns (a prompt, a reply with one call, its result); turn `killed` (from 1)
    has no result."""
    records: list[dict[str, Any]] = []
    parent = None
    for turn in range(1, count + 1):
        for kind, content in (("user", f"turn {turn}"),
                              ("assistant", [{"type": "tool_use", "id": f"toolu_{turn}", "name": "Read",
                                              "input": {}}]),
                              ("user", [{"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": "x"}])):
            if kind == "user" and turn == killed and not isinstance(content, str):
                continue
            uid = f"{kind}-{turn}-{len(records)}"
            message: dict[str, Any] = {"role": kind, "content": content}
            if kind == "assistant":
                message["id"] = f"msg_{turn}"
            records.append({"parentUuid": parent, "type": kind, "uuid": uid, "message": message,
                            "timestamp": _STAMP.format(0, len(records))})
            parent = uid
    return "".join(json.dumps(r) + "\n" for r in records)


def test_records_across_the_pieces_read_as_read_whole(tmp_path: Path) -> None:
    # Over 2 MB of non-ASCII results and CRLF line ends: records straddle the pieces the first pass decodes (each
    # result longer than one), and their byte places are not their character places.
    text = _turns(240, killed=100).replace('"content": "x"', '"content": "' + "\u00e9t\u00e9 \u2603 " * 1200 + '"')
    text = text.replace("\n", "\r\n")
    assert len(text.encode("utf-8")) > 2 << 20
    path = tmp_path / "s.jsonl"
    path.write_bytes(text.encode("utf-8"))
    with path.open("rb") as handle:
        found = streamed(handle)
        assert found is not None and found.check() is not None
    _assert_same(tmp_path, text.encode("utf-8"))


@pytest.mark.parametrize(("lengths", "limit"), [((100_000,), 40_000), ((100_000,) * 4, 101_000),
                                               ((100_000, 300_000), 150_000), ((100_000, 300_000), 400_000)])
def test_a_line_past_the_limit_is_left_to_the_whole_reading_however_the_pieces_fall(
        tmp_path: Path, lengths: tuple[int, ...], limit: int) -> None:
    # Long lines one after another, each read over several pieces: only a line over the limit is one.
    lines = _turns(6, killed=3).splitlines(keepends=True)
    for at, length in enumerate(lengths, start=2):
        record = json.loads(lines[at])
        record["toolUseResult"] = "y" * length
        lines[at] = json.dumps(record) + "\n"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines))
    longest = max(len(line) - 1 for line in lines)
    with path.open("rb") as handle:
        found = streamed(handle, max_size=limit)
    assert (found is None) == (longest > limit)
    if found is not None:
        _assert_same(tmp_path, "".join(lines))


def test_a_plain_transcript_is_checked_and_repaired_a_part_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_turns(30, killed=12))
    with path.open("rb") as handle:
        found = streamed(handle)
        assert isinstance(found, Scan) and found.format == "claude_code" and len(found.starts) == 31
        assert found.check() == ["messages[34].tool_calls[0]: R6: the call toolu_12 (Read) has no result (line 35)"]
        done = found.repair(None)
        text = b"".join(map(as_bytes, done.chunks)).decode()
    assert done.summary.changed and done.summary.interrupted == [("toolu_12", "Read")]
    assert done.summary.messages == 90
    assert len(text.splitlines()) == 90
    _assert_same(tmp_path, path.read_text())


def test_a_part_is_read_again_only_when_repair_changes_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_turns(20, killed=5))
    reads: list[tuple[int, int]] = []
    read_part = Scan.read_part

    def counted(self: Scan, a: int, b: int) -> Any:
        reads.append((a, b))
        return read_part(self, a, b)

    with mock.patch.object(Scan, "read_part", counted), path.open("rb") as handle:
        found = streamed(handle)
        assert found is not None and found.check() is not None
        assert b"".join(map(as_bytes, found.repair(None).chunks))
    assert reads == [(13, 15), (13, 15)]  # turn 5's reply and the prompt after it, once a command


def test_a_valid_transcript_repaired_a_part_at_a_time_is_the_file_as_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = _turns(5)
    path.write_text(text)
    with path.open("rb") as handle:
        found = streamed(handle)
        assert found is not None and found.check() == []
        done = found.repair(None)
        assert b"".join(map(as_bytes, done.chunks)).decode() == text and not done.summary.changed


@pytest.mark.parametrize("change", ["bom", "not a record", "thinking", "retracted", "empty id", "codex",
                                    "across lines", "two on a line", "lone surrogate", "too large a number",
                                    "too deep", "too deep for json here", "a long integer"])
def test_what_this_reading_does_not_take_is_read_whole(tmp_path: Path, change: str) -> None:
    lines = _turns(3).splitlines(keepends=True)
    record = json.loads(lines[1])
    if change == "bom":
        lines[0] = "\ufeff" + lines[0]
    elif change == "not a record":
        lines.append('{"half": ')
    elif change == "across lines":
        lines.append('{"a":\n{"b":1}}\n')  # one object to a parser reading on past the line end, two lines here
    elif change == "two on a line":
        lines.append('{"a":1} {"b":2}\n')
    elif change == "lone surrogate":
        lines.append('{"a":"\\ud800"}\n')
    elif change == "too large a number":  # no JSON number: both parsers refuse it
        record["toolUseResult"] = {"took": "1e999"}
        lines[1] = json.dumps(record).replace('"1e999"', "1e999") + "\n"
    elif change == "too deep":  # past orjson's 1,024 levels
        record["toolUseResult"] = "deep"
        lines[1] = json.dumps(record).replace('"deep"', "[" * 1100 + "]" * 1100) + "\n"
    elif change == "too deep for json here":  # orjson reads it, json.loads not at this recursion limit
        record["toolUseResult"] = "deep"
        lines[1] = json.dumps(record).replace('"deep"', "[" * 1020 + "]" * 1020) + "\n"
    elif change == "a long integer":  # 339 digits, past a float: orjson refuses it, json.loads reads it
        record["toolUseResult"] = {"bytes": 7 ** 400}
        lines[1] = json.dumps(record) + "\n"
    elif change == "thinking":
        record["message"]["content"].insert(0, {"type": "thinking", "thinking": "hm"})  # unsigned: check's AT4
    elif change == "retracted":
        record["retractedMessageUuids"] = []
    elif change == "empty id":
        record["message"]["content"][0]["id"] = ""
    else:
        lines = ['{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}\n']
    if change in ("thinking", "retracted", "empty id"):
        lines[1] = json.dumps(record) + "\n"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines))
    with path.open("rb") as handle:
        found = streamed(handle)
        checked = found.check() if found is not None else None
    if change == "too deep for json here" and sys.version_info >= (3, 12):
        assert found is not None  # json.loads reads it too: read a part at a time
    else:
        assert checked is None  # the whole reading: `read`, with its rules, errors and warnings
    if change == "thinking":
        assert found is not None  # repair still goes a part at a time: the provider's rules are check's
    _assert_same(tmp_path, path.read_text(encoding="utf-8-sig") if change != "bom" else "".join(lines))


def test_a_number_that_only_looks_too_large_is_still_read_a_part_at_a_time(tmp_path: Path) -> None:
    lines = _turns(3).splitlines(keepends=True)
    record = json.loads(lines[1])
    record["toolUseResult"] = {"ratio": 1e100, "note": "printed 1e+100, then 3e400 ]", "id": 2**64 + 1}
    lines[1] = json.dumps(record) + "\n"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines))
    with path.open("rb") as handle:
        found = streamed(handle)
        assert found is not None and found.check() == []
    _assert_same(tmp_path, "".join(lines))



@pytest.mark.parametrize("after", [None, "prompt", "text", "a new reply"])
def test_replies_of_thinking_alone_are_checked_whole(tmp_path: Path, after: str | None) -> None:
    # Found by the fuzz: past a compact boundary, a reply of signed thinking alone (written twice) sends no message,
    # which Anthropic's rules refuse; the neutral rules the first pass applies find nothing there.
    records: list[dict[str, Any]] = [
        {"type": "user", "uuid": "u0", "parentUuid": None, "message": {"role": "user", "content": "hi"}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "b0", "parentUuid": None, "isSidechain": False}]
    for k in (1, 2):
        records.append({"type": "assistant", "uuid": f"a{k}", "parentUuid": records[-1]["uuid"], "apiBlockIndex": 0,
                        "message": {"id": "msg_0", "role": "assistant",
                                    "content": [{"type": "thinking", "thinking": "go", "signature": "s"}]}})
    if after == "prompt":
        records.append({"type": "user", "uuid": "u3", "parentUuid": "a2", "message": {"role": "user", "content": "on"}})
    elif after is not None:
        message = {"id": "msg_0" if after == "text" else "msg_1", "role": "assistant",
                   "content": [{"type": "text", "text": "ok"}]}
        records.append({"type": "assistant", "uuid": "a3", "parentUuid": "a2", "message": message})
    text = "".join(json.dumps(r) + "\n" for r in records)
    path = tmp_path / "s.jsonl"
    path.write_text(text)
    with path.open("rb") as handle:
        found = streamed(handle)
        assert found is not None  # repair still goes a part at a time
        assert (found.check() is None) is (after is None)
        # a part starts at each reply past the boundary, the replies of thinking alone too
        assert isinstance(found, Scan) and found.starts == ([0, 2, 4] if after == "a new reply" else [0, 2])
    _assert_same(tmp_path, text)
    if after is None:
        assert main(["check", str(path)]) == 1


@pytest.mark.parametrize("second", [2**64 + 2, 2**64 + 1])
def test_block_indexes_past_64_bits_are_read_exactly(tmp_path: Path, second: int) -> None:
    # orjson reads 2**64 + 1 and 2**64 + 2 as one float: only the exact integers tell a block from its repeat
    lines = _turns(3).splitlines(keepends=True)
    reply = json.loads(lines[4])
    assert reply["message"]["id"] == "msg_2"
    text = {**reply, "uuid": "text-2", "message": {**reply["message"], "content": [{"type": "text", "text": "a"}]},
            "apiBlockIndex": 2**64 + 1}
    reply.update(parentUuid="text-2", apiBlockIndex=second)
    lines[4:5] = [json.dumps(text) + "\n", json.dumps(reply) + "\n"]
    _assert_same(tmp_path, "".join(lines))


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-world is absent")
@pytest.mark.parametrize("name", real_claude_transcripts())
def test_real_transcripts_check_and_repair_as_read_whole(tmp_path: Path, name: str) -> None:
    _assert_same(tmp_path, (REAL / name).read_bytes())


def test_problems_after_a_part_repair_grows_are_numbered_in_the_input(tmp_path: Path) -> None:
    lines = _turns(4, killed=2).splitlines(keepends=True)  # repair adds turn 2's result: the output grows by one
    orphan = {"parentUuid": json.loads(lines[-1])["uuid"], "type": "user", "uuid": "late",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"}]}}
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines) + json.dumps(orphan) + "\n")
    with path.open("rb") as handle:
        found = streamed(handle)
        assert found is not None
        assert found.check() == [
            "messages[4].tool_calls[0]: R6: the call toolu_2 (Read) has no result (line 5)",
            "messages[11]: R3: a tool result for gone has no call in its span (line 12)"]
    _assert_same(tmp_path, path.read_text())


def test_a_part_that_changed_since_the_first_pass_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(_turns(4, killed=2))
    with path.open("rb") as handle:
        found = streamed(handle)
        assert found is not None
        path.write_text(_turns(4, killed=2).replace('"type": "user"', '"type": "user", "x": 1', 1)[:-40] + "\n")
        with pytest.raises(InputError, match="changed while chatmend was reading it"):
            found.check()


@pytest.mark.parametrize("change", ["cut short", "not UTF-8", "rewritten", "same length"])
def test_a_file_that_changed_under_repair_is_an_error_not_a_crash(tmp_path: Path, change: str) -> None:
    path = tmp_path / "s.jsonl"
    text = _turns(30, killed=1)  # repair writes turn 1 anew, then copies the rest and relinks it
    path.write_text(text)
    with path.open("rb") as handle:
        found = streamed(handle)
        assert found is not None
        if change == "cut short":
            path.write_text(text[: len(text) // 2])
        elif change == "not UTF-8":
            path.write_bytes(text.encode()[:-200] + b"\xff" * 200)
        elif change == "same length":  # every byte count as read: only the file's modification tells
            path.write_text(text[:-60] + text[-60:].replace("e", "E"))
            assert len(path.read_bytes()) == len(text.encode())
        else:
            path.write_text(text.replace('"parentUuid": "', '"parentUuid": "X'))  # every link moved by a byte
        with pytest.raises(InputError, match="changed while chatmend was reading it"):
            b"".join(map(as_bytes, found.repair(None).chunks))
