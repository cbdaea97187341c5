"""The README's quick start is what CI runs, and its example is shipped."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_quick_start_is_two_commands_and_ci_runs_the_second() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci.splitlines()


def test_the_quick_start_example_is_shipped() -> None:
    example = quick_start_commands()[0].split()[-1]
    assert (ROOT / example).is_file(), example
