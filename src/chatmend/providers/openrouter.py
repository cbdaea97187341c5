"""OpenRouter (`POST https://openrouter.ai/api/v1/chat/completions`), OpenAI Chat shaped, routing to upstreams.

The body is Chat Completions; the model's upstream decides what is refused. The vendor before the `/` of the model
(`mistralai/mistral-large`) names it: where chatmend has that upstream's Chat-shaped adapter (Mistral, Kimi,
DeepSeek, xAI), `to_request` writes with its rules and `check` judges with them, its problems relayed as
OpenRouter relays the upstream's 400 (in `error.metadata.raw`); any other model gets OpenAI's rules. A reply that
is OpenRouter's error wrapper (`{"error": {"message": "Provider returned error", "metadata": {"raw": ...,
"provider_name": ...}}}`, OBS OpenRouterTeam/ai-sdk-provider#254, diegosouzapw/OmniRoute#3044, reVrost/go-openrouter#21)
reads as a ReadError naming the upstream and its own message.
Send with `openai.OpenAI(base_url="https://openrouter.ai/api/v1", api_key=...)`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from chatmend import providers
from chatmend.exceptions import ReadError, error_context
from chatmend.messages import ChatMessage
from chatmend.providers.base import EntryPoints, Provider, to_plain
from chatmend.providers.serving import ServingChat

__all__ = ["PROVIDER", "VENDORS", "OpenRouter", *EntryPoints._fields]

VENDORS: dict[str, str] = {"mistralai": "mistral", "moonshotai": "kimi", "deepseek": "deepseek", "x-ai": "xai"}
"""OpenRouter's vendor prefixes whose upstream has a Chat-shaped adapter here, to its registry name."""


class OpenRouter(ServingChat):
    """OpenRouter: OpenAI Chat bodies, judged by the rules of the upstream the model's vendor names."""

    name: ClassVar[str] = "openrouter"
    title: ClassVar[str] = "OpenRouter"
    description: ClassVar[str] = "OpenRouter (OpenAI Chat shaped; the upstream's rules by the model's vendor/)"
    model_prefixes: ClassVar[tuple[str, ...]] = ()  # it serves other vendors' models
    shape_of: ClassVar[str | None] = "openai_chat"

    def serving(self, model: str | None) -> Provider | None:
        """The adapter whose rules apply to `model` (`vendor/name`), or None for OpenAI's own."""
        if not model or "/" not in model:
            return None
        name = VENDORS.get(model.split("/", 1)[0].lower())
        return providers.get(name) if name is not None else None

    def from_response(self, response: Any) -> ChatMessage:
        """The reply; OpenRouter's error wrapper as a ReadError with the upstream's own words."""
        with error_context(provider=self.name):
            data = to_plain(response, provider=self.name)
            error = data.get("error")
            if isinstance(error, Mapping):
                raise ReadError(error_text(error), path="error")
        return super().from_response(data)


def error_text(error: Mapping[str, Any]) -> str:
    """What an OpenRouter error says: its message, and the upstream's name and message from `metadata`."""
    text = f"the response is an error: {error.get('message')!r}"
    metadata = error.get("metadata")
    if not isinstance(metadata, Mapping):
        return text
    raw = metadata.get("raw")
    if isinstance(raw, str):
        try:
            inner = json.loads(raw)
        except ValueError:
            inner = None
        inner_error = inner.get("error") if isinstance(inner, Mapping) else None
        if isinstance(inner_error, Mapping) and isinstance(inner_error.get("message"), str):
            raw = inner_error["message"]
        elif isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
            raw = inner["message"]
        upstream = metadata.get("provider_name")
        text += f" from {upstream}: {raw}" if isinstance(upstream, str) else f": {raw}"
    return text


PROVIDER = OpenRouter()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
