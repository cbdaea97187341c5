"""vLLM's OpenAI-compatible server (`POST /v1/chat/completions`), per the served model's chat template.

The `openai_chat` shape; a model whose template has rules of its own gets its adapter's rules, for writing and for
checking (`check` needs the model: the body's `model` or `model=`):
- Mistral models (`mistralai/Mistral-Small-3.2-24B-Instruct-2506`): mistral-common validates the request, so ids are
  9 characters of `[a-zA-Z0-9]` and Mistral's role order holds (docs/rules.md §7, MI1-MI12; OBS
  vllm-project/vllm#6225 for the id rule through vLLM);
- Kimi models (`moonshotai/Kimi-K2-Instruct`): the Kimi tool parser reads `functions.NAME:IDX` ids (docs/rules.md
  §5), and tool messages hold text only (OBS vllm-project/vllm#43203: "tool message content only supports text
  content"; the Chat writer never puts an image there);
- any other model: OpenAI's rules, without its 40-character id limit (vLLM sets none).
Send with `openai.OpenAI(base_url="http://HOST:8000/v1", api_key=...)`.
"""

from __future__ import annotations

from typing import ClassVar

from chatmend import providers
from chatmend.providers.base import EntryPoints, Provider
from chatmend.providers.serving import ServingChat

__all__ = ["PROVIDER", "TEMPLATES", "VLLM", *EntryPoints._fields]

TEMPLATES = ("mistral", "kimi")
"""The adapters whose rules a served model's template brings, tried in order by their model names."""


class VLLM(ServingChat):
    """vLLM: OpenAI Chat bodies, with the rules of the served model's template where chatmend knows them."""

    name: ClassVar[str] = "vllm"
    id_max_length: ClassVar[int | None] = None
    title: ClassVar[str] = "vLLM"
    description: ClassVar[str] = "vLLM's OpenAI-compatible server (Mistral and Kimi models by their template's rules)"
    model_prefixes: ClassVar[tuple[str, ...]] = ()  # it serves other vendors' models
    shape_of: ClassVar[str | None] = "openai_chat"

    def serving(self, model: str | None) -> Provider | None:
        """The adapter whose rules the model's chat template brings, or None."""
        return next((p for p in map(providers.get, TEMPLATES) if p.serves(model)), None)


PROVIDER = VLLM()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
