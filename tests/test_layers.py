"""The layers only point down (#48): no module imports one of a higher layer, at the top of the file, inside a
function, for type checking alone or by its name for `importlib` (a lazy table).

Bottom to top: the core (the model, the planner, ids, results), the providers, the file layer with the session
stores on it, the CLI's format table, and the faces (the command line, the proxy, the bridges, and the `chatmend`
package itself, whose names are the public API). A module may import its own layer and those below it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", (
        "chatmend.strict_json", "chatmend.answer_order", "chatmend.exceptions", "chatmend.ids", "chatmend.incremental",
        "chatmend.jsonl", "chatmend.messages", "chatmend.planner", "chatmend.repair", "chatmend.results",
        "chatmend.sdk_reader", "chatmend.trim",
    )),
    ("providers", ("chatmend.providers",)),
    ("files and stores", ("chatmend.files", "chatmend.transcripts")),
    ("format table", ("chatmend.formats", "chatmend.doctor")),
    ("faces", ("chatmend.cli", "chatmend.proxy", "chatmend.bridges", "chatmend.__main__", "chatmend")),
]
"""Each layer's modules and packages (a package holds its submodules), bottom first."""


def layer_of(module: str) -> int:
    """The index in LAYERS of the layer that holds `module` (the longest name that is it or a package of it;
    `chatmend` is the package's own `__init__` alone)."""
    best = max(((len(name), index) for index, (_, names) in enumerate(LAYERS) for name in names
                if module == name or (name != "chatmend" and module.startswith(name + "."))), default=None)
    if best is None:
        raise LookupError(f"{module} is in no layer: add it to LAYERS in tests/test_layers.py")
    return best[1]


def module_name(path: Path) -> str:
    """`chatmend.files.io` for `src/chatmend/files/io.py`, `chatmend.files` for its `__init__.py`."""
    parts = path.relative_to(SOURCE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(SOURCE.rglob("*.py"))}


def imported(module: str, path: Path) -> list[tuple[str, int]]:
    """The chatmend modules `module` imports anywhere in its file, with the line: `from chatmend import X` is the
    module that defines X when X is no submodule (the package's public names are the core's and providers')."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                found.append((_target(base, alias.name), node.lineno))
        elif isinstance(node, ast.Constant) and node.value in MODULES and node.value != "chatmend":
            found.append((node.value, node.lineno))  # a module named for `importlib.import_module` (a lazy table)
    return [(name, line) for name, line in found if name == "chatmend" or name.startswith("chatmend.")]


def _target(base: str, name: str) -> str:
    """The module `from base import name` loads: the submodule `name`, else what defines `name` when `base` is
    the `chatmend` package (its names are loaded on first use), else `base`."""
    if f"{base}.{name}" in MODULES:
        return f"{base}.{name}"
    if base == "chatmend" and name != "__version__":
        return str(getattr(importlib.import_module("chatmend"), name).__module__)
    return base


def upward_imports() -> list[str]:
    """Every import of a higher layer, as `module:line imports other (lower layer -> higher layer)`."""
    found = []
    for module, path in MODULES.items():
        own = layer_of(module)
        for target, line in imported(module, path):
            if layer_of(target) > own:
                found.append(f"{module}:{line} imports {target} ({LAYERS[own][0]} -> {LAYERS[layer_of(target)][0]})")
    return found


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_no_module_imports_a_higher_layer() -> None:
    assert upward_imports() == []


@pytest.mark.parametrize(("module", "layer"), [
    ("chatmend.repair", "core"), ("chatmend.providers.anthropic.read", "providers"),
    ("chatmend.files.session", "files and stores"), ("chatmend.transcripts.cline", "files and stores"),
    ("chatmend.formats._detect", "format table"), ("chatmend.cli._repair", "faces"), ("chatmend", "faces"),
])
def test_the_layer_table_places_modules_by_their_package(module: str, layer: str) -> None:
    assert LAYERS[layer_of(module)][0] == layer


def test_an_upward_import_inside_a_function_is_found(tmp_path: Path) -> None:
    path = tmp_path / "repair.py"
    path.write_text("def f():\n    from chatmend.providers import get\n    from . import ids\n", encoding="utf-8")
    assert imported("chatmend.repair", path) == [("chatmend.providers", 2), ("chatmend.ids", 3)]
    assert layer_of("chatmend.providers") > layer_of("chatmend.repair")


def test_a_module_named_for_a_lazy_import_is_found(tmp_path: Path) -> None:
    # importlib.import_module("chatmend.cli") loads a face as surely as an import statement does
    path = tmp_path / "repair.py"
    path.write_text('import importlib\n\nLAZY = {"run": "chatmend.cli"}\nimportlib.import_module(LAZY["run"])\n',
                    encoding="utf-8")
    assert imported("chatmend.repair", path) == [("chatmend.cli", 3)]


def test_a_public_name_of_the_package_is_its_defining_module(tmp_path: Path) -> None:
    path = tmp_path / "x.py"
    path.write_text("from chatmend import ChatMessage, providers\n", encoding="utf-8")
    assert imported("chatmend.files.x", path) == [("chatmend.messages", 1), ("chatmend.providers", 1)]


def test_a_module_outside_the_table_is_named() -> None:
    with pytest.raises(LookupError, match=r"chatmend\.newthing is in no layer"):
        layer_of("chatmend.newthing")
