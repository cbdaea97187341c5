"""Together AI (`POST https://api.together.xyz/v1/chat/completions`), OpenAI Chat shaped.

The `openai_chat` shape; every call of a parallel group is answered by its tool message before any other message
(TG1), which the writer always does. Together answers a body that breaks it with its generic validation error.
Send with `openai.OpenAI(base_url="https://api.together.xyz/v1", api_key=...)`.
"""

from __future__ import annotations

from typing import ClassVar

from chatmend.providers.base import EntryPoints
from chatmend.providers.openai_chat import TEXTS, OpenAIChat

__all__ = ["PROVIDER", "Together", *EntryPoints._fields]

# TG1: OBS mozilla-ai/any-llm#714 (Together's 400 on a tool loop, `invalid_request_error`) and
# Tanzania-AI-Community/twiga#171 (the history fix: each parallel call's result right after its call group). Only
# "Input validation error" is Together's; the rest says which rule, in our words.
_TG1 = "Input validation error (every tool call of a parallel group needs its tool message before any other message"
_TG1_IDS = _TG1 + "; unanswered: {ids})"


class Together(OpenAIChat):
    """Together: OpenAI Chat bodies, every call of a group answered before anything else."""

    name: ClassVar[str] = "together"
    title: ClassVar[str] = "Together AI"
    description: ClassVar[str] = "Together AI (OpenAI Chat shaped)"
    model_prefixes: ClassVar[tuple[str, ...]] = ()  # it serves other vendors' models
    shape_of: ClassVar[str | None] = "openai_chat"
    unanswered_code: ClassVar[str] = "TG1"
    texts: ClassVar[dict[str, str]] = {
        **TEXTS,
        "TG1": _TG1_IDS,
        "OC2": _TG1 + ": a tool message answers no call of the message before it)",
        "OC3": _TG1 + ": tool_call_id {id} is not a call of the message before it)",
    }


PROVIDER = Together()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
