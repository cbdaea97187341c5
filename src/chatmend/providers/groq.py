"""Groq (`POST https://api.groq.com/openai/v1/chat/completions`), OpenAI Chat shaped.

The `openai_chat` shape with Groq's difference: an assistant's and a system message's `content` is a string (GQ1,
GQ2): a tool-call turn without text sends `""`, never `null`. Send with
`openai.OpenAI(base_url="https://api.groq.com/openai/v1", api_key=...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from chatmend.exceptions import Problem
from chatmend.providers.base import EntryPoints
from chatmend.providers.openai_chat import TEXTS, OpenAIChat, WireMessage

__all__ = ["PROVIDER", "Groq", *EntryPoints._fields]

_STRING_ROLES = ("assistant", "system")


class Groq(OpenAIChat):
    """Groq: OpenAI Chat bodies whose assistant and system content is always a string."""

    name: ClassVar[str] = "groq"
    title: ClassVar[str] = "Groq"
    description: ClassVar[str] = "Groq (OpenAI Chat shaped, string content on assistant and system messages)"
    model_prefixes: ClassVar[tuple[str, ...]] = ()  # it serves other vendors' models
    shape_of: ClassVar[str | None] = "openai_chat"
    plain_lists_valid: ClassVar[bool] = False  # GQ1: a null content is a problem of its own
    texts: ClassVar[dict[str, str]] = {
        **TEXTS,
        # GQ1/GQ2: OBS OpenHands/OpenHands#4643, livekit/agents#1790, microsoft/PyRIT#704 (system); the same
        # validator words the assistant's (langchain-ai/langchain#33363 fixed Groq's assistant content)
        "GQ1": "'messages.{index}' : for 'role:{role}' the following must be satisfied[('messages.{index}.content' : "
               "value must be a string)]",
    }

    def _finish(self, out: list[WireMessage]) -> None:
        """GQ1: no `null` content on an assistant message (a tool-call turn without text says `""`)."""
        for message in out:
            if message["role"] == "assistant" and message.get("content") is None:
                message["content"] = ""

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """OpenAI's rules, then GQ1/GQ2: assistant and system content is a string."""
        out = super()._check_messages(messages, body)
        for i, message in enumerate(messages):
            if message["role"] in _STRING_ROLES and not isinstance(message.get("content"), str):
                out.append(self._say("GQ1", f"messages[{i}].content", index=i, role=message["role"]))
        return out


PROVIDER = Groq()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
