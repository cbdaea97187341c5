"""Build hook: with CHATMEND_COMPILE=1, the repair core (`repair`, `ids`) is compiled with mypyc.

The compiled modules are the same source, type-checked and translated to C (a third faster on CPython 3.11
here: see the README's Speed section); without the variable chatmend is pure Python. An editable install
is never compiled: a compiled module next to its source would be imported instead of the edited source.
Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILED = ["src/chatmend/repair.py", "src/chatmend/ids.py"]


def compiled_modules() -> list[Extension]:
    """The extension modules to build: none unless CHATMEND_COMPILE=1."""
    if os.environ.get("CHATMEND_COMPILE") != "1":
        return []
    from mypyc.build import mypycify

    return list(mypycify(COMPILED, opt_level="3"))


class BuildExt(build_ext):
    """`build_ext` that builds nothing for an editable install (the source stays what is imported)."""

    def run(self) -> None:
        if getattr(self, "editable_mode", False) and self.extensions:
            print("chatmend: an editable install stays pure Python (CHATMEND_COMPILE ignored)")
            self.extensions = []
        super().run()


setup(ext_modules=compiled_modules(), cmdclass={"build_ext": BuildExt})
