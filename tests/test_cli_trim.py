"""`chatmend trim` and `chatmend check DIR`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chatmend import ChatMessage, ToolCall, dumps, loads, trim_history
from chatmend.cli import main
from chatmend.formats import TRANSCRIPT_FORMATS, read

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "examples" / "sessions"


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def history() -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content="sys"),
        ChatMessage(role="user", content="q1"),
        ChatMessage(role="assistant", content="", tool_calls=(ToolCall(id="a", name="search"),)),
        ChatMessage(role="tool", tool_call_id="a", content="hits"),
        ChatMessage(role="assistant", content="a1"),
        ChatMessage(role="user", content="q2"),
        ChatMessage(role="assistant", content="a2"),
    ]


@pytest.mark.parametrize("flag", ["--max-messages", "--max-tokens"])
def test_trim_neutral_writes_the_kept_history(flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(dumps(history()), encoding="utf-8")
    by_messages = trim_history(history(), max_messages=3)
    budget = {"--max-messages": 3, "--max-tokens": by_messages.tokens}[flag]  # the rough count of those 3
    code, out, err = call(capsys, "trim", str(path), flag, str(budget))
    assert code == 0
    assert loads(out) == by_messages.kept == [history()[0], *history()[5:]]
    assert err == f"{path}: kept 3 messages of 7, about {by_messages.tokens} tokens; " \
                  "dropped 4 from the oldest end (kept from line 6 on)\n"


def test_trim_to_a_file_reports_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, out_path = tmp_path / "s.jsonl", tmp_path / "out.jsonl"
    path.write_text(dumps(history()), encoding="utf-8")
    code, out, _ = call(capsys, "trim", str(path), "--max-messages", "3", "-o", str(out_path))
    assert code == 0 and "kept 3 messages of 7" in out
    assert loads(out_path.read_text(encoding="utf-8")) == [history()[0], *history()[5:]]


def test_trim_exits_1_when_the_last_turn_does_not_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(dumps(history()), encoding="utf-8")
    code, out, err = call(capsys, "trim", str(path), "--max-messages", "1")
    assert code == 1
    assert loads(out) == [history()[0], *history()[5:]]
    assert "over the budget (kept anyway)" in err


TRANSCRIPTS = tuple(p.name for p in SESSIONS.iterdir() if read(str(p)).format in TRANSCRIPT_FORMATS)
"""The session stores' samples: a store is not written back with records left out (trim them --to chatmend)."""


@pytest.mark.parametrize("name", sorted(p.name for p in SESSIONS.iterdir() if p.name not in TRANSCRIPTS))
def test_trim_writes_every_provider_format_back_in_its_format(name: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    source = SESSIONS / name
    session = read(str(source))
    expected = trim_history(session.messages, max_messages=3)
    out_path = tmp_path / name
    code, _, _ = call(capsys, "trim", str(source), "--max-messages", "3", "-o", str(out_path))
    assert code == (0 if expected.fits else 1)
    again = read(str(out_path))
    assert again.format == session.format
    # The file written is what the session's own writer makes of the kept history.
    assert out_path.read_text(encoding="utf-8") == "".join(session.write(expected.kept))


@pytest.mark.parametrize("name", ["claude_code.jsonl", "codex_rollout.jsonl"])
def test_trim_refuses_to_write_a_transcript_back_but_writes_neutral(name: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    source = str(SESSIONS / name)
    code, out, err = call(capsys, "trim", source, "--max-messages", "3")
    assert code == 2 and out == ""
    assert "cannot write a trimmed" in err and "--to chatmend" in err
    code, out, _ = call(capsys, "trim", source, "--max-messages", "3", "--to", "chatmend")
    assert code in (0, 1)
    assert loads(out) == trim_history(read(source).messages, max_messages=3).kept


def test_trim_needs_a_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(dumps(history()), encoding="utf-8")
    code, out, err = call(capsys, "trim", str(path))
    assert code == 2 and out == "" and "needs a budget" in err
    code, _, err = call(capsys, "trim", str(path), "--max-tokens", "-1")
    assert code == 2 and ">= 0" in err


def test_trim_to_a_provider(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(dumps(history()), encoding="utf-8")
    code, out, _ = call(capsys, "trim", str(path), "--max-messages", "3", "--to", "openai_chat", "--model", "gpt-x")
    assert code == 0
    body = json.loads(out)
    assert body["model"] == "gpt-x"
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant"]


def _copy_sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    shutil.copytree(SESSIONS, folder)
    return folder


def test_check_dir_checks_every_file_as_check_file_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy_sessions(tmp_path)
    (folder / "nested").mkdir()
    (folder / "nested" / "ok.jsonl").write_text(dumps(history()), encoding="utf-8")
    code, out, err = call(capsys, "check", str(folder))
    assert code == 1
    expected: list[str] = []
    paths = sorted([*folder.iterdir(), folder / "nested" / "ok.jsonl"], key=lambda p: p.relative_to(folder).parts)
    for path in paths:
        if path.is_dir():
            continue
        one_code, one_out, _ = call(capsys, "check", str(path))
        assert one_code in (0, 1)
        expected += [f"{path}: {line}" for line in one_out.splitlines()]
    assert out.splitlines() == expected
    files = len([p for p in paths if p.is_file()])
    assert err.splitlines()[-1] == f"{folder}: {files} files checked, {len(expected)} problems in {files - 1} files"


def test_check_dir_exits_2_when_a_file_cannot_be_read_and_checks_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a_bad.jsonl").write_text('{"role": "user", "content": "x"}\n{"role": \n', encoding="utf-8")
    (folder / "b_ok.jsonl").write_text(dumps(history()), encoding="utf-8")
    (folder / "c_broken.jsonl").write_text(dumps(history()[:3]), encoding="utf-8")
    code, out, err = call(capsys, "check", str(folder))
    assert code == 2
    assert out.splitlines() == [f"{folder / 'c_broken.jsonl'}: messages[2].tool_calls[0]: R6: the call a (search) "
                                "has no result (line 3)"]
    assert err.splitlines()[0].startswith(f"{folder / 'a_bad.jsonl'}:2:")
    assert err.splitlines()[-1] == f"{folder}: 3 files checked, 1 problem in 1 file, 1 could not be read"


def test_check_dir_of_valid_files_exits_0_and_an_empty_dir_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    code, _, err = call(capsys, "check", str(folder))
    assert code == 2 and "no files to check" in err
    (folder / "ok.jsonl").write_text(dumps(history()), encoding="utf-8")
    code, out, err = call(capsys, "check", str(folder))
    assert code == 0 and out == ""
    assert err == f"{folder}: 1 file checked, 0 problems in 0 files\n"
