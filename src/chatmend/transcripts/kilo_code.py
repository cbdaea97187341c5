"""Kilo Code's CLI sessions (`@kilocode/cli`, a fork of opencode): the SQLite database `kilo.db`.

Kilo Code keeps opencode's layout (tables `session`, `message`, `part`, JSON in `data`; read and repaired as
`opencode` describes) in its own database, beside tables of its own (`kilo_board`, `session_message`, ...): by
default `$XDG_DATA_HOME/kilo/kilo.db` (`~/.local/share/kilo/kilo.db`); `$KILO_DB` names another (relative to
that folder unless absolute); a build of another channel keeps `kilo-<channel>.db` there. A session is resumed with
`kilo --session ID`. Kilo Code 7.7 answers a tool part left `running` itself when it sends the session (as
opencode does: `[Tool execution was interrupted]`); a repair writes that answer into the part.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from typing import ClassVar

from chatmend.transcripts.opencode import OpencodeDatabase
from chatmend.transcripts.stores import data_home, existing_files, register

__all__ = ["NAME", "KiloDatabase", "data_folder"]

NAME = "kilo"
"""The format's name (`--from kilo`)."""


def data_folder(env: Mapping[str, str]) -> str:
    """Kilo Code's data folder: `$XDG_DATA_HOME/kilo`, else `~/.local/share/kilo`."""
    return os.path.join(data_home(env), "kilo")


@register
class KiloDatabase(OpencodeDatabase):
    """Kilo Code's SQLite database: opencode's tables and Kilo Code's own."""

    name: ClassVar[str] = NAME
    tool: ClassVar[str] = "Kilo Code"
    description: ClassVar[str] = "Kilo Code CLI sessions (~/.local/share/kilo/kilo.db)"
    tables: ClassVar[frozenset[str]] = OpencodeDatabase.tables | {"kilo_board"}
    holder: ClassVar[str] = "a running Kilo Code"
    command: ClassVar[str] = "kilo"

    @classmethod
    def default_paths(cls, env: Mapping[str, str]) -> list[str]:
        folder = data_folder(env)
        named = env.get("KILO_DB", "").strip()
        if named and named != ":memory:":
            path = named if os.path.isabs(named) else os.path.join(folder, named)
            return existing_files([path])
        return existing_files([os.path.join(folder, "kilo.db"), *sorted(glob.glob(os.path.join(folder, "kilo-*.db")))])
