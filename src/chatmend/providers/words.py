"""What a provider answers (its 400's own words) to the problems repair fixes, for reports that name a session's
problems without a request body to check (`chatmend doctor`): a call without its result, a result without its
call, a call id used twice. The sentences are the checkers' own (rules page (docs/rules.md): OC1/OC2, AN1/AN2/AN6,
OR1/OR2, GE1); where a sentence names a position in the provider's body, the part before it is left out (the
session is not that body)."""

from __future__ import annotations

from collections.abc import Sequence

from chatmend import providers
from chatmend.providers.anthropic.checker import TEXTS as ANTHROPIC
from chatmend.providers.gemini.checker import GE1_TEXT
from chatmend.providers.openai_chat import TEXTS as CHAT

__all__ = ["provider_words"]


def _family(name: str) -> str:
    """The wire format a provider speaks (a dialect of OpenAI Chat is `openai_chat`)."""
    try:
        adapter = providers.get(name)
    except KeyError:
        return name
    return adapter.shape_of or adapter.name


def _after_position(text: str) -> str:
    """`messages.{n}: rest` -> `rest`: the session is not the body whose positions the sentence names."""
    return text.split(": ", 1)[1] if text.startswith("messages.") else text


def provider_words(provider: str, *, unanswered: Sequence[str] = (), orphans: Sequence[str] = (),
                   duplicates: Sequence[str] = ()) -> list[str]:
    """The provider's sentences for calls without a result right after them (`unanswered`, their ids), results
    without their call (`orphans`) and call ids used twice (`duplicates`); [] for a provider not known here."""
    family = _family(provider)
    said: list[str] = []
    if family == "openai_chat":
        if unanswered:
            said.append(CHAT["OC1"].format(ids=", ".join(unanswered)))
        if orphans:
            said.append(CHAT["OC2"])
        said += [f"Invalid parameter: Duplicate value for 'tool_call_id' of '{d}'." for d in duplicates]
    elif family == "anthropic":
        if unanswered:
            said.append(_after_position(ANTHROPIC["AN1"]).format(ids=", ".join(unanswered)))
        said += [_after_position(ANTHROPIC["AN2"]).format(id=o) for o in orphans]
        if duplicates:
            said.append(_after_position(ANTHROPIC["AN6"]))
    elif family == "openai_responses":
        said += [f"No tool output found for function call {u}." for u in unanswered]
        said += [f"No tool call found for function call output with call_id {o}." for o in orphans]
    elif family == "gemini" and (unanswered or orphans):
        said.append(GE1_TEXT)
    return said
