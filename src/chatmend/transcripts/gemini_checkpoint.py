"""Gemini CLI checkpoints: `/chat save TAG` (`~/.gemini/tmp/<project>/checkpoint-TAG.json`) and the checkpoints
taken before a tool edits files (`~/.gemini/tmp/<project>/checkpoints/*.json`, what `/restore` reads).

Both hold the history Gemini CLI sends as Gemini API `Content` objects (`{"role", "parts"}`): a saved chat is that
list (older releases) or `{"history": [...], "authType": ...}`; a tool checkpoint keeps it in `clientHistory`,
beside the UI's own `history`, the `toolCall` to re-propose and the `commitHash` of the shadow repository.
chatmend reads and repairs that list through the Gemini adapter (`repair_body`: every Content repair leaves
alone is kept) and writes the file back with every other character as it was: the other fields, the UI
history, and each Content repair does not change, as they were written. (A saved chat that is a bare list is
read as `--from gemini`: it is a Gemini contents list, repaired the same way.) In a tool checkpoint, the last
model turn, whose call `/restore` proposes again, is kept as it is and not read: restore runs that call and
sends its response, so answering it would send two.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from chatmend import ChatmendError
from chatmend.files.bodies import adapter, read_provider
from chatmend.files.io import InputError
from chatmend.files.session import InFormat, Session
from chatmend.repair import IsReadOnly
from chatmend.transcripts import gemini_cli
from chatmend.transcripts._document import ListText, list_text
from chatmend.transcripts._records import as_read_only
from chatmend.transcripts.stores import FileFormat

__all__ = ["FORMAT", "NAME", "TOOL", "default_locations", "holds_checkpoint", "holds_session", "is_session_file",
           "read_document", "resume_command"]

NAME = "gemini_checkpoint"
"""The format's name (`--from gemini_checkpoint`)."""
TOOL = "Gemini CLI"
"""The tool's name, as a person knows it."""


# --- what a doctor needs -------------------------------------------------------------------------------------


def default_locations(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Gemini CLI keeps its project directories, which hold the checkpoints (`gemini_cli.default_locations`)."""
    return gemini_cli.default_locations(env)


def is_session_file(path: str | os.PathLike[str]) -> bool:
    """True for a saved chat (`checkpoint-TAG.json`) or a tool checkpoint (`checkpoints/*.json`)."""
    file = Path(path)
    return file.suffix == ".json" and (file.name.startswith("checkpoint-") or file.parent.name == "checkpoints")


def resume_command(path: str | os.PathLike[str]) -> str:
    """How to resume it in Gemini CLI (from the project's directory): `/chat resume TAG` for a saved chat,
    `/restore NAME` for a tool checkpoint."""
    file = Path(path)
    if file.parent.name == "checkpoints":
        return f"gemini, then /restore {file.stem}"
    return f"gemini, then /chat resume {file.stem.removeprefix('checkpoint-')}"


# --- detection -----------------------------------------------------------------------------------------------


def _contents(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(c, Mapping) and c.get("role") in ("user", "model") and isinstance(c.get("parts"), list)
        for c in value[:200])


def holds_session(value: object) -> str | None:
    """The key of the history a checkpoint holds (`clientHistory` in a tool checkpoint, `history` in a saved chat),
    or None for another document."""
    if not isinstance(value, Mapping):
        return None
    if isinstance(value.get("clientHistory"), list) and _contents(value["clientHistory"]) and (
            "toolCall" in value or "commitHash" in value or "history" in value):
        return "clientHistory"
    if set(value) <= {"history", "authType"} and value.get("history") and _contents(value["history"]):
        return "history"
    return None


# --- reading and writing -------------------------------------------------------------------------------------


def read_document(value: Any, text: str) -> Session:
    """A Session from a checkpoint (`value`, its parsed JSON, and `text`, its content)."""
    key = holds_session(value)
    if key is None:
        raise InputError("expected a Gemini CLI checkpoint: an object with a 'clientHistory' (a tool checkpoint) "
                         "or a 'history' (a saved chat) list of Contents")
    every: list[Any] = value[key]
    # The model turn whose call `/restore` re-proposes stays open: restore runs the call and sends its response.
    held = every[-1:] if key == "clientHistory" and _proposes(every[-1], value.get("toolCall")) else []
    items = every[:len(every) - len(held)]
    found = list_text(text, key)
    locations = [f"{key}[{i}]" for i in range(len(items))]
    session = read_provider("gemini", items, shape="list", locations=locations)

    def write(messages: Any) -> Iterator[str]:
        as_read_only(NAME, messages, session.messages)
        yield text

    def repair_in_format(is_read_only: IsReadOnly | None) -> InFormat:
        try:
            repaired = adapter("gemini").repair_body({"contents": items}, is_read_only=is_read_only)
        except ChatmendError as exc:
            raise InputError(f"{getattr(exc, 'path', key)}: {getattr(exc, 'reason', exc)} (reading {NAME})") from None
        out: list[Any] = [*repaired.body["contents"], *held]
        where = [locations[r] for r in repaired.item_of] if repaired.item_of else list(session.where)
        return InFormat(repaired.result, _spliced(found, every, out), repaired.history, where,
                        [f"{key}[{i}]" for i in repaired.rewritten])

    def repair(is_read_only: IsReadOnly | None) -> Any:
        done = repair_in_format(is_read_only)
        return done.result, done.chunks

    return Session(format=NAME, messages=session.messages, where=session.where, write=write, provider="gemini",
                   body=session.body, model=session.model, repair_and_write=repair, repair_in_format=repair_in_format)


def _proposes(content: object, tool_call: object) -> bool:
    """True for a model turn holding a call to the tool a tool checkpoint re-proposes."""
    if not isinstance(content, Mapping) or content.get("role") != "model" or not isinstance(tool_call, Mapping):
        return False
    return any(isinstance(p, Mapping) and isinstance(p.get("functionCall"), Mapping)
               and p["functionCall"].get("name") == tool_call.get("name") for p in content.get("parts") or [])


def _spliced(found: ListText, items: list[Any], out: list[Any]) -> Iterator[str]:
    """The document with its list holding `out`: an item that is one of `items` as it was written, the others
    in the document's style."""
    texts = {id(item): found.text[a:b] for item, (a, b) in zip(items, found.spans)}  # `items`: the whole list
    return found.write([texts.get(id(item)) or found.dumps(item) for item in out])


def holds_checkpoint(value: object) -> bool:
    """True for a checkpoint: a tool checkpoint or a saved chat."""
    return holds_session(value) is not None


FORMAT = FileFormat(NAME, "Gemini CLI checkpoints (~/.gemini/tmp/*/checkpoint-*.json, and checkpoints/*.json)",
                    order=100, read_document=read_document, holds_document=holds_checkpoint)
"""The format table's entry."""
