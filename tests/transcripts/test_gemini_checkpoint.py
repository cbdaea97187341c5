"""Gemini CLI checkpoints (`/chat save` files and the tool checkpoints `/restore` reads): their Contents list
repaired through the Gemini adapter, every other character of the file kept."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, TextPart, providers
from chatmend.cli import main
from chatmend.formats import read_lines
from chatmend.transcripts import gemini_checkpoint
from chatmend.transcripts._document import list_text
from tests.strategies import examples, messy_histories


def contents(history: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """A neutral history as Gemini CLI keeps it: one Content a message, as it stands (not repaired)."""
    out: list[dict[str, Any]] = []
    for m in history:
        text = m.content if isinstance(m.content, str) else "".join(
            p.text for p in m.content if isinstance(p, TextPart))
        if m.role in ("user", "system"):
            out.append({"role": "user", "parts": [{"text": text or "."}]})
        elif m.role == "tool":
            out.append({"role": "user", "parts": [{"functionResponse": {
                "id": m.tool_call_id, "name": m.tool_name or "tool", "response": {"output": text}}}]})
        else:
            parts: list[dict[str, Any]] = [{"text": text}] if text else []
            parts += [{"functionCall": {"id": c.id, "name": c.name,
                                        "args": c.arguments if isinstance(c.arguments, dict) else {"raw": c.arguments}}}
                      for c in m.tool_calls]
            out.append({"role": "model", "parts": parts or [{"text": "."}]})
    return out


def _call(call_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"functionCall": {"id": call_id, "name": name, "args": {"file_path": "a.py"}}}


def _response(call_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": name, "response": {"output": "print(1)"}}}


BROKEN = [
    {"role": "user", "parts": [{"text": "read a and b"}]},
    {"role": "model", "parts": [_call("read-1"), _call("read-2")]},
    {"role": "user", "parts": [_response("read-1")]},
    {"role": "user", "parts": [{"text": "then fix a"}]},
]


def _read(text: str) -> Any:
    return read_lines(text.splitlines(keepends=True), "auto")


def _outside(text: str, key: str) -> tuple[str, str]:
    found = list_text(text, key)
    return text[:found.start], text[found.end:]


def test_a_saved_chat_is_repaired_and_every_other_character_kept() -> None:
    text = json.dumps({"history": BROKEN, "authType": "oauth-personal"}, indent=2)
    session = _read(text)
    assert (session.format, session.provider) == ("gemini_checkpoint", "gemini")
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["read-2"]
    out = "".join(chunks)
    value = json.loads(out)
    assert value["authType"] == "oauth-personal" and value["history"][:2] == BROKEN[:2]
    answered = value["history"][2]["parts"]
    assert [p["functionResponse"]["id"] for p in answered] == ["read-1", "read-2"]
    assert _outside(out, "history") == _outside(text, "history")
    spans = list_text(text, "history").spans
    kept = [text[a:b] for a, b in spans]
    assert kept[0] in out and kept[1] in out and kept[3] in out  # written as they were, indentation too
    assert not _read(out).repaired(None)[0].changed


def test_a_tool_checkpoint_keeps_the_call_restore_proposes_again_and_the_ui_history() -> None:
    checkpoint: dict[str, Any] = {
        "history": [{"id": 1, "type": "user", "text": "read a and b"}],
        "clientHistory": [*BROKEN, {"role": "model", "parts": [_call("replace-3", "replace")]}],
        "toolCall": {"name": "replace", "args": {"file_path": "a.py"}},
        "commitHash": "0f1e2d",
        "filePath": "/p/a.py",
    }
    text = json.dumps(checkpoint, indent=2)
    session = _read(text)
    result, chunks = session.repaired(None)
    assert [c.id for c in result.interrupted] == ["read-2"]  # not replace-3: /restore runs it and answers it
    value = json.loads("".join(chunks))
    assert value["clientHistory"][-1] == checkpoint["clientHistory"][-1]
    assert {k: v for k, v in value.items() if k != "clientHistory"} == {
        k: v for k, v in checkpoint.items() if k != "clientHistory"}
    assert _outside("".join(session.repaired(None)[1]), "clientHistory") == _outside(text, "clientHistory")


@examples(60)
@given(messy_histories(), st.sampled_from([None, 2]), st.booleans())
def test_the_history_is_repaired_as_the_gemini_adapter_repairs_it_and_nothing_else_changes(
        history: list[ChatMessage], indent: int | None, tool: bool) -> None:
    items = contents(history)
    if not items:
        return
    value: dict[str, Any] = {"clientHistory": items, "toolCall": {"name": "none"}, "commitHash": "c"} if tool \
        else {"history": items}
    key = "clientHistory" if tool else "history"
    text = json.dumps(value, indent=indent) if indent else json.dumps(value, separators=(",", ":"))
    session = _read(text)
    assert session.format == "gemini_checkpoint"
    assert "".join(session.write(session.messages)) == text
    result, chunks = session.repaired(None)
    out = "".join(chunks)
    expected = providers.get("gemini").repair_body({"contents": items})
    assert result.interrupted == expected.result.interrupted
    expected = providers.get("gemini").repair_body({"contents": items})
    assert json.loads(out)[key] == expected.body["contents"]
    assert _outside(out, key) == _outside(text, key)
    if not expected.changed:
        assert out == text


def test_cli_repairs_a_checkpoint_in_place_and_a_doctor_finds_it(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / ".gemini" / "tmp" / "3f9a"
    project.mkdir(parents=True)
    path = project / "checkpoint-before-refactor.json"
    path.write_text(json.dumps({"history": BROKEN}, indent=2), encoding="utf-8")
    original = path.read_bytes()
    assert gemini_checkpoint.default_locations({"HOME": str(tmp_path)}) == [tmp_path / ".gemini" / "tmp"]
    assert gemini_checkpoint.default_locations({"HOME": "/x", "GEMINI_CLI_HOME": "/g"}) == [Path("/g/.gemini/tmp")]
    assert gemini_checkpoint.is_session_file(path)
    assert gemini_checkpoint.is_session_file(project / "checkpoints" / "2026-12-01T10-00-00_000Z-a.py-replace.json")
    assert not gemini_checkpoint.is_session_file(project / "logs.json")
    assert gemini_checkpoint.resume_command(path) == "gemini, then /chat resume before-refactor"
    assert main(["check", str(path)]) == 1
    assert "GE1" in capsys.readouterr().out
    assert main(["show", str(path)]) == 0
    capsys.readouterr()
    assert main(["repair", "--in-place", str(path)]) == 0
    assert path.with_name(path.name + ".bak").read_bytes() == original
    assert main(["check", str(path)]) == 0
