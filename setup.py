"""Build hook: a wheel of chatmend compiles its hot paths with mypyc (set CHATMEND_COMPILE=0 for pure Python).

Compiled: the repair core (`repair`, `ids`) and the provider adapters' writers (`COMPILED`), the same source,
type-checked and translated to C (see the README's Speed section for what it buys). When compiling fails (no C
compiler, no Python headers, a mypyc that rejects the source), the install goes on as pure Python, with a
warning: chatmend behaves the same either way, CI runs every test against both. An editable install is never
compiled: a compiled module next to its source would be imported instead of the edited source. Everything
else is declared in pyproject.toml.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

PROVIDERS = "src/chatmend/providers"
COMPILED = [
    "src/chatmend/repair.py",
    "src/chatmend/ids.py",
    f"{PROVIDERS}/base.py",
    f"{PROVIDERS}/openai_chat.py",
    f"{PROVIDERS}/kimi.py",
    f"{PROVIDERS}/mistral.py",
    *(f"{PROVIDERS}/{package}/{module}.py" for package in ("anthropic", "gemini", "openai_responses")
      for module in ("__init__", "wire", "write")),
]
"""The modules a wheel compiles: what `to_request` runs (readers and checkers stay Python: not hot)."""


def compile_wanted() -> bool:
    """Compiled unless CHATMEND_COMPILE=0."""
    return os.environ.get("CHATMEND_COMPILE", "1") != "0"


def warn(message: str) -> None:
    """A line pip shows with the build's output (pip -v, or when the build fails)."""
    print(f"chatmend: {message}", file=sys.stderr, flush=True)


class BuildExt(build_ext):
    """`build_ext` that compiles `COMPILED` with mypyc, or builds nothing (an editable install, or a failure).

    mypyc runs when the command is set up for a build, not whenever setup.py is read: reading metadata, and
    editable installs, never pay for it. If compiling fails, what was built is removed and the wheel holds the
    Python source only; compiled modules that an earlier build left in the build directory are removed either way.
    """

    def finalize_options(self) -> None:
        self.distribution.ext_modules = self.mypyc_extensions()  # in place of the placeholder
        super().finalize_options()

    def mypyc_extensions(self) -> list[Any]:  # setuptools' or distutils' Extension objects, as mypyc makes them
        """mypyc's extension modules for `COMPILED` (it writes their C source now), or none."""
        if not self.distribution.ext_modules:
            return []  # CHATMEND_COMPILE=0
        if self.editable_mode:
            warn("an editable install stays pure Python")
            return []
        try:
            from mypyc.build import mypycify

            return list(mypycify(COMPILED, opt_level="3"))
        except (Exception, SystemExit) as error:  # mypyc reports its own failures with sys.exit
            warn(f"mypyc failed, installing pure Python instead ({type(error).__name__}: {error})")
            return []

    def run(self) -> None:
        self.remove_compiled(keep=self.extensions)  # what an earlier build left here and this one does not make
        try:
            super().run()
        except Exception as error:  # no C compiler, no Python headers, ...
            self.remove_compiled(keep=[])  # a half-compiled package must not be installed
            warn(f"compiling failed, installing pure Python instead ({type(error).__name__}: {error})")
            self.extensions = []

    def remove_compiled(self, keep: list[Any]) -> None:
        """Remove chatmend's compiled modules from the build directory but for those of the extensions `keep`.

        setuptools packs the whole directory into the wheel, so a module compiled by an earlier build of this tree
        (another module set, a failed build) would be installed too, and shadow its newer source.
        """
        wanted = {os.path.abspath(self.get_ext_fullpath(extension.name)) for extension in keep}
        root = Path(self.build_lib)
        for path in [*root.glob("chatmend/**/*"), *root.glob("*__mypyc*")]:
            if path.name.endswith(tuple(EXTENSION_SUFFIXES)) and os.path.abspath(path) not in wanted:
                path.unlink()


def main() -> None:
    """setuptools' entry: one placeholder extension makes it run `build_ext` and tag the wheel for this
    platform; BuildExt replaces it with mypyc's extensions (or with none)."""
    setup(
        ext_modules=[Extension("chatmend._compiled", sources=[])] if compile_wanted() else [],
        cmdclass={"build_ext": BuildExt},
    )


if __name__ == "__main__":  # as setuptools' build backend runs it; tests import the module
    main()
