"""xAI Grok (`POST https://api.x.ai/v1/chat/completions`), OpenAI Chat shaped.

The `openai_chat` shape with xAI's difference: every message has content (XA1): a tool-call turn without text
sends `""`, never `null` or nothing. Send with `openai.OpenAI(base_url="https://api.x.ai/v1", api_key=...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from chatmend.exceptions import Problem
from chatmend.providers.base import EntryPoints
from chatmend.providers.openai_chat import TEXTS, OpenAIChat, WireMessage

__all__ = ["PROVIDER", "XAI", *EntryPoints._fields]


class XAI(OpenAIChat):
    """xAI: OpenAI Chat bodies in which no message is without content."""

    name: ClassVar[str] = "xai"
    title: ClassVar[str] = "xAI"
    description: ClassVar[str] = "xAI Grok (OpenAI Chat shaped, content on every message)"
    model_prefixes: ClassVar[tuple[str, ...]] = ("grok",)
    shape_of: ClassVar[str | None] = "openai_chat"
    plain_lists_valid: ClassVar[bool] = False  # XA1: a null content is a problem of its own
    texts: ClassVar[dict[str, str]] = {
        **TEXTS,
        # XA1: OBS langchain-ai/langchain#34140 (an assistant message with tool_calls and null content; `""` is
        # accepted), n8n-io/n8n#14797
        "XA1": "Invalid request content: Each message must have at least one content element.",
    }

    def _finish(self, out: list[WireMessage]) -> None:
        """XA1: content on every message (`""` for a tool-call turn without text)."""
        for message in out:
            if message.get("content") is None:
                message["content"] = ""

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """OpenAI's rules, then XA1: no message without content (missing, null, or an empty list)."""
        out = super()._check_messages(messages, body)
        for i, message in enumerate(messages):
            content = message.get("content")
            if content is None or content == []:
                out.append(self._say("XA1", f"messages[{i}].content"))
        return out


PROVIDER = XAI()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
