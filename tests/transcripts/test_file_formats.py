"""The format table knows the formats of session files only from what each store module declares (`FORMAT`, #48):
a format joins by being declared, with no list in `chatmend.formats` to edit."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from chatmend.files.session import Session
from chatmend.formats import TRANSCRIPT_FORMATS, read
from chatmend.transcripts import stores
from chatmend.transcripts.stores import FileFormat, file_formats


def test_every_declared_format_is_its_modules_and_can_be_told_and_read() -> None:
    declared = file_formats()
    assert set(declared) == set(TRANSCRIPT_FORMATS)
    for name, store in declared.items():
        module = importlib.import_module(f"chatmend.transcripts.{name}")
        assert module.FORMAT is store and name == module.NAME
        assert store.read_lines is not None or store.read_document is not None, name
        assert store.holds_records is not None or store.holds_document is not None, name
        assert store.document == (store.read_lines is None)
    orders = [store.order for store in declared.values()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


def _reader(lines: Iterable[str]) -> Session:
    return Session(format="toy", messages=[], where=[], write=lambda history: iter(()))


def _toy_records(records: Sequence[Mapping[str, Any]]) -> bool:
    return any(record.get("toy") is True for record in records)


def test_a_store_module_that_declares_a_format_is_detected_and_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toy = ModuleType("toy")
    toy.FORMAT = FileFormat("toy", "toy sessions", order=0, read_lines=_reader,  # type: ignore[attr-defined]
                            holds_records=_toy_records)
    builtin = stores.store_modules
    monkeypatch.setattr(stores, "store_modules", lambda: [*builtin(), toy])
    path = tmp_path / "session.jsonl"
    # records Claude Code's check would take, told apart by the toy check, which runs first (order 0)
    path.write_text('{"type": "user", "uuid": "u1", "toy": true, "message": {"role": "user", "content": "hi"}}\n',
                    encoding="utf-8")
    assert read(str(path)).format == "toy"
    monkeypatch.setattr(stores, "store_modules", builtin)
    assert read(str(path)).format == "claude_code"
