"""`chatmend.transcripts._document.read_json`: a JSON document read from disk for the stores that are one document."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatmend.files.io import InputError
from chatmend.transcripts import cline, pydantic_ai
from chatmend.transcripts._document import read_json


def test_the_value_and_the_text_come_back(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('[\n  {"role": "user", "content": "hi"}\n]\n', encoding="utf-8")
    assert read_json(str(path)) == ([{"role": "user", "content": "hi"}], path.read_text(encoding="utf-8"))


def test_invalid_json_is_an_input_error_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('[\n  {"role": "user",\n  oops}\n]\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_json(str(path))
    assert caught.value.line == 3
    assert "invalid JSON" in str(caught.value)


def test_a_document_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('["' + "x" * 100 + '"]', encoding="utf-8")
    with pytest.raises(InputError, match="the limit"):
        read_json(str(path), limit=50)


def test_the_document_stores_read_a_path_without_the_format_table(tmp_path: Path) -> None:
    task = tmp_path / "api_conversation_history.json"
    task.write_text('[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]', encoding="utf-8")
    assert cline.read(task).format == "cline"
    history = tmp_path / "history.json"
    history.write_text('[{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]}]',
                       encoding="utf-8")
    assert pydantic_ai.read(history).format == "pydantic_ai"
