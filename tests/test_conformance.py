"""The conformance vectors (conformance/): every case holds for the library, and the committed files are what
conformance/generate.py writes now (the TypeScript package runs the same cases)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from chatmend import HistoryError, normalize_tool_id, repair_history
from chatmend.ids import FinalIds
from chatmend.providers import get

ROOT = Path(__file__).resolve().parent.parent / "conformance"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_generate", ROOT / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


generate = _generator()


def load(path: str) -> Any:
    data = (ROOT / path).read_bytes()
    return json.loads(gzip.decompress(data) if path.endswith(".gz") else data)


def canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


HISTORY_FILES = ("history/rules.json", "history/errors.json", "history/generated.json.gz")


def test_vectors_are_fresh() -> None:
    """The committed vectors are what the generator writes from the library as it is."""
    stale = [path for path, data in generate.vectors().items() if (ROOT / path).read_bytes() != data]
    assert not stale, f"run python conformance/generate.py: {stale}"


def test_every_rule_has_a_case() -> None:
    names = " ".join(case["name"] for case in load("history/rules.json"))
    for rule in ("R1", "R2", "R3", "R4", "R5", "R6", "R7", "R9"):
        assert rule in names
    assert len(load("history/generated.json.gz")) >= 2000


@pytest.mark.parametrize("path", HISTORY_FILES)
def test_history_cases(path: str) -> None:
    for case in load(path):
        options = generate.history_options(case["options"])
        if "error" in case:
            with pytest.raises(HistoryError) as caught:
                repair_history(case["input"], **options)
            assert {"index": caught.value.index, "field": caught.value.field} == case["error"], case["name"]
            continue
        got = generate.history_expected(repair_history(case["input"], **options))
        assert canonical(got) == canonical(case["expected"]), case["name"]
        again = repair_history(got["messages"], **options)  # idempotent: the output repairs to itself
        assert canonical(generate.history_expected(again)["messages"]) == canonical(got["messages"]), case["name"]


def test_id_cases() -> None:
    cases = load("ids.json")
    for case in cases["final_ids"]:
        ids = FinalIds()
        assert [ids.allocate(*a) for a in case["allocate"]] == case["expected"]
    for case in cases["normalize_tool_id"]:
        assert normalize_tool_id(case["id"], max_length=case["max_length"]) == case["expected"]


@pytest.mark.parametrize("provider", generate.PROVIDERS)
def test_body_cases(provider: str) -> None:
    adapter = get(provider)
    cases = load(f"bodies/{provider}.json.gz")
    assert {case["expected"]["changed"] for case in cases} == {True, False}
    for case in cases:
        read_only = case.get("options", {}).get("read_only")
        repaired = adapter.repair_body(case["input"], is_read_only=None if read_only is None else
                                       set(read_only).__contains__)
        expected = case["expected"]
        assert canonical(repaired.body) == canonical(expected["body"]), case["name"]
        assert list(repaired.rewritten) == expected["rewritten"], case["name"]
        assert repaired.mended == expected["mended"], case["name"]
        assert [p.code for p in adapter.check(case["input"])] == [p["code"] for p in expected["check"]], case["name"]
        left = [p.code for p in adapter.check(repaired.body)]
        assert left == expected["check_repaired"], case["name"]
        assert not {"OC1", "OC2", "OC3", "AN1", "AN2", "AN3", "AN7", "OR1", "OR2", "GE1"} & set(left), case["name"]
        items = case["input"][adapter.list_key]
        kept = {id(item) for item in items}
        for k, item in enumerate(repaired.body[adapter.list_key]):
            if k not in repaired.rewritten:
                assert id(item) in kept, (case["name"], k)  # an item not rewritten is the input's own object
