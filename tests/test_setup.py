"""setup.py: a wheel compiles chatmend's hot paths, and when compiling fails it installs pure Python instead."""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import mypyc.build
import pytest
from setuptools import Distribution, Extension

import chatmend

ROOT = Path(__file__).resolve().parent.parent


def load_setup() -> ModuleType:
    """setup.py as a module (its `setup()` call runs only as a script)."""
    spec = importlib.util.spec_from_file_location("chatmend_setup_under_test", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_command(tmp_path: Path, *, editable: bool = False) -> Any:
    """setup.py's BuildExt, set up for a distribution with its placeholder extension, building under `tmp_path`
    (mypyc, or what stands in for it, runs now)."""
    setup_module = load_setup()
    dist = Distribution({"name": "chatmend", "ext_modules": [Extension("chatmend._compiled", sources=[])]})
    command = setup_module.BuildExt(dist)
    command.build_lib = str(tmp_path / "lib")
    command.build_temp = str(tmp_path / "temp")
    command.editable_mode = editable
    command.ensure_finalized()
    return command


def c_module(tmp_path: Path, name: str, body: str) -> Extension:
    """An extension module `chatmend.{name}` (where mypyc's modules go) built from a C file holding `body`."""
    source = tmp_path / f"{name}.c"
    source.write_text(body, encoding="utf-8")
    return Extension(f"chatmend.{name}", sources=[str(source)])


GOOD_C = """#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "good", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_good(void) { return PyModule_Create(&def); }
"""


def fake_mypycify(extensions: list[Extension]) -> Callable[..., list[Extension]]:
    def mypycify(paths: list[str], **options: object) -> list[Extension]:
        assert paths == load_setup().COMPILED and options == {"opt_level": "3"}
        return extensions

    return mypycify


def compiled_names() -> set[str]:
    """The modules setup.py compiles, as paths under src/chatmend."""
    return {Path(path).relative_to("src/chatmend").as_posix() for path in load_setup().COMPILED}


def test_compiled_modules_are_what_to_request_runs() -> None:
    names = compiled_names()
    assert all((ROOT / "src/chatmend" / name).is_file() for name in names)
    assert {"repair.py", "ids.py", "providers/base.py", "providers/openai_chat.py", "providers/mistral.py",
            "providers/kimi.py", "providers/anthropic/write.py", "providers/gemini/write.py",
            "providers/openai_responses/write.py"} <= names
    assert not any(name.startswith(("messages", "results", "cli")) for name in names)


def test_compiled_modules_hold_no_coroutine_and_no_delegating_generator() -> None:
    # A coroutine or `yield from` compiled by mypyc forwards an exception thrown into it (a cancellation) with the
    # three-argument throw() that Python 3.12 deprecates (mypyc/mypyc#1214): such code belongs in an interpreted
    # module, as `send_async`'s coroutine is in providers/async_send.py.
    names = compiled_names()
    for name in names:
        tree = ast.parse((ROOT / "src/chatmend" / name).read_text(), filename=name)
        for node in ast.walk(tree):
            assert not isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.YieldFrom)), (
                f"{name}:{node.lineno}: {type(node).__name__} in a compiled module"
            )
    assert "providers/async_send.py" not in names


def test_compiling_is_the_default_and_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    setup_module = load_setup()
    monkeypatch.delenv("CHATMEND_COMPILE", raising=False)
    assert setup_module.compile_wanted()
    monkeypatch.setenv("CHATMEND_COMPILE", "0")
    assert not setup_module.compile_wanted()


def test_mypyc_rejecting_the_source_installs_pure_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def rejecting(paths: list[str], **options: object) -> list[Extension]:
        sys.exit("src/chatmend/repair.py:1: error: something mypyc cannot compile")

    monkeypatch.setattr(mypyc.build, "mypycify", rejecting)
    command = build_command(tmp_path)
    assert command.extensions == []
    command.run()
    assert command.get_outputs() == []
    assert "mypyc failed, installing pure Python instead (SystemExit: src/chatmend/repair.py:1" in (
        capsys.readouterr().err)


@pytest.mark.skipif(not Path(sysconfig.get_paths()["include"], "Python.h").is_file(), reason="no Python headers")
def test_a_half_compiled_build_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    good = c_module(tmp_path, "good", GOOD_C)
    bad = c_module(tmp_path, "bad", "this is not C;\n")
    monkeypatch.setattr(mypyc.build, "mypycify", fake_mypycify([good, bad]))
    command = build_command(tmp_path)
    built = Path(command.get_ext_fullpath("chatmend.good"))
    command.run()
    assert not built.exists()  # it was built before `bad` failed, then removed
    assert command.extensions == []
    assert "compiling failed, installing pure Python instead (CompileError" in capsys.readouterr().err


@pytest.mark.skipif(not Path(sysconfig.get_paths()["include"], "Python.h").is_file(), reason="no Python headers")
def test_a_successful_build_keeps_every_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = c_module(tmp_path, "good", GOOD_C)
    monkeypatch.setattr(mypyc.build, "mypycify", fake_mypycify([good]))
    command = build_command(tmp_path)
    command.run()
    assert command.get_outputs() == [command.get_ext_fullpath("chatmend.good")]
    assert Path(command.get_ext_fullpath("chatmend.good")).is_file()


@pytest.mark.skipif(not Path(sysconfig.get_paths()["include"], "Python.h").is_file(), reason="no Python headers")
def test_compiled_modules_an_earlier_build_left_are_not_packed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    lib = tmp_path / "lib"
    stale = [lib / "chatmend" / "providers" / f"kimi{suffix}", lib / f"0123abcd__mypyc{suffix}"]
    kept = [lib / "chatmend" / "repair.py", lib / "other" / f"theirs{suffix}"]  # not chatmend's compiled modules
    for path in (*stale, *kept):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    monkeypatch.setattr(mypyc.build, "mypycify", fake_mypycify([c_module(tmp_path, "good", GOOD_C)]))
    command = build_command(tmp_path)
    command.run()
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
    assert Path(command.get_ext_fullpath("chatmend.good")).is_file()


def test_an_editable_install_compiles_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def never(paths: list[str], **options: object) -> list[Extension]:
        raise AssertionError("an editable install ran mypyc")

    monkeypatch.setattr(mypyc.build, "mypycify", never)
    command = build_command(tmp_path, editable=True)
    assert command.extensions == []
    assert "an editable install stays pure Python" in capsys.readouterr().err


def test_the_version_says_which_build_is_installed() -> None:
    version = subprocess.run([sys.executable, "-m", "chatmend", "--version"], capture_output=True, text=True,
                             check=True, timeout=60).stdout
    expected = "compiled with mypyc" if os.environ.get("CHATMEND_EXPECT_COMPILED") == "1" else "pure Python"
    assert version == f"chatmend {chatmend.__version__} ({expected})\n"


@pytest.mark.skipif(os.environ.get("CHATMEND_EXPECT_COMPILED") != "1", reason="CI's compiled install sets it")
def test_every_module_of_a_wheel_is_the_compiled_one() -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for path in load_setup().COMPILED:
        name = Path(path).relative_to("src").with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
        module = importlib.import_module(name)
        assert module.__file__ is not None and module.__file__.endswith(suffix), (name, module.__file__)


def test_a_wheel_built_without_a_working_compiler_is_pure_python(tmp_path: Path) -> None:
    """The whole path through pip and setuptools: mypyc generates C, the compiler fails, the wheel holds the
    Python source only (no network: the build uses this environment's setuptools, mypy and pydantic)."""
    source = tmp_path / "source"
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((ROOT / name).read_bytes())
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    env = {**os.environ, "CC": "/bin/false", "CHATMEND_COMPILE": "1"}
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-v", "-w",
                           str(tmp_path / "dist"), str(source)], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "chatmend: compiling failed, installing pure Python instead" in done.stdout + done.stderr
    (wheel,) = (tmp_path / "dist").glob("chatmend-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "chatmend/repair.py" in names and "chatmend/providers/openai_chat.py" in names
    assert not [name for name in names if name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))]
