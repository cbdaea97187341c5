"""Ollama's OpenAI-compatible endpoint (`POST http://localhost:11434/v1/chat/completions`), docs/rules.md §9.

The `openai_chat` shape with what Ollama's compat layer (SRC ollama/ollama `openai/openai.go`) refuses or loses:
- an image is a base64 `data:` URI of jpeg, png or webp (OL1): an image by URL is named in a text part instead;
- arguments are JSON text (OL2, OpenAI's OC6 in Ollama's words);
- a tool message's content is a string (OL3): array content is split into messages that lose `tool_call_id`;
- no id, pairing or role-order rule of its own (the model's template renders what it gets).
Send with `openai.OpenAI(base_url="http://localhost:11434/v1", api_key="ollama")`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from chatmend.exceptions import Problem
from chatmend.providers.base import EntryPoints
from chatmend.providers.openai_chat import TEXTS, OpenAIChat, WireMessage

__all__ = ["PROVIDER", "Ollama", *EntryPoints._fields]

_DATA_URI = re.compile(r"data:(image/(jpeg|jpg|png|webp))?;base64,", re.IGNORECASE)
"""The image URLs the compat layer decodes (SRC `openai/openai.go`: jpeg, jpg, png, webp, or no type)."""
_IMAGE_AT = "Image at "


class Ollama(OpenAIChat):
    """Ollama's compat endpoint: OpenAI Chat bodies, images inline, tool results as strings."""

    name: ClassVar[str] = "ollama"
    id_max_length: ClassVar[int | None] = None  # no id rule (SRC `server/routes.go`)
    title: ClassVar[str] = "Ollama"
    description: ClassVar[str] = "Ollama's OpenAI-compatible /v1 endpoint (images as base64 data: URIs)"
    model_prefixes: ClassVar[tuple[str, ...]] = ()  # it serves other vendors' models
    shape_of: ClassVar[str | None] = "openai_chat"
    plain_lists_valid: ClassVar[bool] = False  # OL1-OL3 beside OpenAI's rules
    texts: ClassVar[dict[str, str]] = {
        **TEXTS,
        # OL1-OL3: SRC ollama/ollama `openai/openai.go` (docs/rules.md §9)
        "OL1": "image URLs are not currently supported, please use base64 encoded data instead",
        "OL1t": "invalid image input",
        "OL2": "invalid tool call arguments",
        "OL3": "messages[{index}]: a tool message's content must be a string (array content loses its tool_call_id)",
    }

    def _finish(self, out: list[WireMessage]) -> None:
        """OL1: an image by URL (which Ollama does not fetch) becomes a text part naming it."""
        for message in out:
            content = message.get("content")
            if isinstance(content, list):
                message["content"] = [_inline_or_named(part) for part in content]

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """OpenAI's rules (OC6 as OL2), then OL1 on images and OL3 on tool messages."""
        out = [self._problem("OL2", p.path, self.texts["OL2"]) if p.code == "OC6" else p
               for p in super()._check_messages(messages, body)]
        for i, message in enumerate(messages):
            content = message.get("content")
            if message["role"] == "tool" and content is not None and not isinstance(content, str):
                out.append(self._say("OL3", f"messages[{i}].content", index=i))
            if not isinstance(content, list):
                continue
            for j, part in enumerate(content):
                url = _image_url(part)
                if url is None:
                    continue
                if not url.startswith("data:"):
                    out.append(self._say("OL1", f"messages[{i}].content[{j}].image_url"))
                elif not _DATA_URI.match(url):
                    out.append(self._say("OL1t", f"messages[{i}].content[{j}].image_url"))
        return out


def _image_url(part: Any) -> str | None:
    """The URL of an `image_url` part, or None for any other part."""
    if not isinstance(part, Mapping) or part.get("type") != "image_url":
        return None
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, Mapping) else image
    return url if isinstance(url, str) else None


def _inline_or_named(part: dict[str, Any]) -> dict[str, Any]:
    """An image part Ollama decodes as it is; one by URL as a text part naming it."""
    url = _image_url(part)
    if url is None or url.startswith("data:"):
        return part
    return {"type": "text", "text": _IMAGE_AT + url}


PROVIDER = Ollama()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
