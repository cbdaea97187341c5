"""ARCHITECTURE.md stays true: every module, class, function, hook, flag and path it names exists, and its layer
table is the one tests/test_layers.py enforces."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

from chatmend.providers.base import Provider
from tests.test_layers import LAYERS

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
PARAMETERS = {"wording", "mark", "is_read_only", "keep_valid"}
"""Options named bare: each must be a parameter of `repair_history` or `Provider.repair_body`."""
WORDS = {"chatmend", "check", "doctor", "read", "write", "wire", "checker", "BEGIN IMMEDIATE"}
"""Backticked words that are a command, an SQL statement or one of an adapter package's module names."""


def names() -> list[str]:
    """Every backticked name of the page, a call's arguments left out (`repair_body(body)` is `repair_body`)."""
    return sorted({re.sub(r"\(.*\)$", "", name) for name in re.findall(r"`([^`]+)`", TEXT)})


def _modules() -> dict[str, list[ModuleType]]:
    """Every chatmend module but the bridges' and the proxy's, under each of its dotted tails
    (`chatmend.providers.assembly`: `assembly`, `providers.assembly`, ...)."""
    found: dict[str, list[ModuleType]] = {}
    for path in sorted((ROOT / "src" / "chatmend").rglob("*.py")):
        parts = path.relative_to(ROOT / "src").with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if parts[-1] == "__main__" or parts[1:2] in (("bridges",), ("proxy",)):
            continue  # the page names these faces by folder; importing them loads their frameworks
        module = importlib.import_module(".".join(parts))
        for start in range(len(parts)):
            found.setdefault(".".join(parts[start:]), []).append(module)
    return found


MODULES = _modules()


def resolves(name: str) -> bool:
    """True when `name` is a path of the repository, a chatmend module, an attribute of one, or of `Provider`."""
    if "/" in name or name.endswith(".py") or name.endswith(".md"):
        if name.startswith("../"):  # the shared material beside the project, absent on a fresh machine
            return True
        path = name.split(" ")[0]
        return (ROOT / path).exists() or (ROOT / "src" / "chatmend" / path).exists() \
            or (ROOT / "src" / "chatmend" / f"{path}.py").exists()
    if name in WORDS or name.startswith("chatmend ") or name.startswith("doctor "):
        return True
    if name in PARAMETERS:
        from chatmend import repair_history
        return name in inspect.signature(repair_history).parameters \
            or name in inspect.signature(Provider.repair_body).parameters
    if name in MODULES or hasattr(Provider, name):
        return True
    owner, _, attribute = name.rpartition(".")
    if not owner:
        return any(attribute in vars(module) for modules in MODULES.values() for module in modules)
    if owner == "Provider":
        return hasattr(Provider, attribute)
    return any(hasattr(module, attribute) for module in MODULES.get(owner, []))


@pytest.mark.parametrize("name", names())
def test_every_name_on_the_page_exists(name: str) -> None:
    assert resolves(name), f"ARCHITECTURE.md names `{name}`, which is no module, attribute, option or path"


def test_the_layer_table_is_the_one_the_import_test_holds() -> None:
    table = [line for line in TEXT.splitlines() if line.startswith("| ") and not line.startswith("| layer")]
    rows = {line.split("|")[1].strip(): line for line in table}
    assert list(rows) == [layer for layer, _ in LAYERS]
    core = rows["core"]
    for module in LAYERS[0][1]:
        assert f"`{module.removeprefix('chatmend.')}`" in core, f"{module} is core but not in the page's core row"


def test_a_misnamed_module_is_caught() -> None:
    assert not resolves("planner.no_such_function") and not resolves("providers/no_such_module.py")
