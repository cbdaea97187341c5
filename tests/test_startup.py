"""Lazy start-up (#48): `import chatmend` loads neither the model nor any provider, and the command line imports a
command's modules only when that command runs (bench/startup.py times both)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import chatmend


def loaded_after(code: str) -> list[str]:
    """The chatmend and pydantic modules a fresh interpreter holds after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    return [m for m in json.loads(out.stdout.splitlines()[-1]) if m.split(".")[0] in ("chatmend", "pydantic")]


def test_import_chatmend_loads_no_model_and_no_provider() -> None:
    assert loaded_after("import chatmend") == ["chatmend", "chatmend.sdk_reader"]


def test_a_public_name_loads_its_module_and_no_provider() -> None:
    loaded = loaded_after("import chatmend\nchatmend.repair_history")
    assert "chatmend.repair" in loaded
    assert not [m for m in loaded if m.startswith(("chatmend.providers", "chatmend.formats", "chatmend.cli"))]


@pytest.mark.parametrize("argv", [["--version"], ["repair", "--help"]])
def test_the_command_line_imports_no_command_before_one_runs(argv: list[str]) -> None:
    loaded = loaded_after(f"from chatmend.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass")
    for module in ("chatmend.cli._repair", "chatmend.cli._check", "chatmend.cli._show", "chatmend.cli._doctor",
                   "chatmend.cli._proxy", "chatmend.proxy"):
        assert module not in loaded
    if argv == ["--version"]:  # help lists the formats and providers its options take; the version needs none
        assert not [m for m in loaded if m.startswith(("chatmend.providers", "chatmend.formats", "chatmend.messages",
                                                       "chatmend.transcripts"))]


def test_a_command_imports_its_modules_when_it_runs() -> None:
    loaded = loaded_after("from chatmend.cli import main\nmain(['formats'])")
    assert "chatmend.cli._show" in loaded
    assert "chatmend.cli._proxy" not in loaded


def test_the_public_names_are_listed_and_an_unknown_one_is_an_attribute_error() -> None:
    assert set(chatmend.__all__) <= set(dir(chatmend))
    with pytest.raises(AttributeError, match="no attribute 'repair_histroy'"):
        chatmend.repair_histroy  # noqa: B018
    assert chatmend.ChatMessage.__module__ == "chatmend.messages"
