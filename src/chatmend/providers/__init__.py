"""Provider adapters by name: `names()` lists them, `get(name)` returns one (imported on first use).

Each name is also a module, `chatmend.providers.<name>`, whose `PROVIDER` is the adapter and whose
module-level `to_request`, `from_request`, `from_response`, `check` and `send` are its methods.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from chatmend.exceptions import UnknownProviderError

if TYPE_CHECKING:
    from chatmend.providers.base import Provider

__all__ = ["get", "names", "register"]

_MODULES: dict[str, str] = {
    "anthropic": "chatmend.providers.anthropic",
    "bedrock": "chatmend.providers.bedrock",
    "deepseek": "chatmend.providers.deepseek",
    "gemini": "chatmend.providers.gemini",
    "groq": "chatmend.providers.groq",
    "kimi": "chatmend.providers.kimi",
    "mistral": "chatmend.providers.mistral",
    "ollama": "chatmend.providers.ollama",
    "openai_chat": "chatmend.providers.openai_chat",
    "openai_responses": "chatmend.providers.openai_responses",
    "openrouter": "chatmend.providers.openrouter",
    "together": "chatmend.providers.together",
    "vllm": "chatmend.providers.vllm",
    "xai": "chatmend.providers.xai",
}
_LOADED: dict[str, Provider] = {}


def names() -> list[str]:
    """The registered provider names, sorted."""
    return sorted(_MODULES.keys() | _LOADED.keys())


def get(name: str | Provider) -> Provider:
    """The provider adapter called `name` (an adapter given is returned as it is)."""
    if not isinstance(name, str):
        return name
    provider = _LOADED.get(name)
    if provider is not None:
        return provider
    module_name = _MODULES.get(name)
    if module_name is None:
        raise UnknownProviderError(name, names())
    provider = cast("Provider", importlib.import_module(module_name).PROVIDER)
    _LOADED[name] = provider
    return provider


def register(provider: Provider) -> None:
    """Add an adapter (a plugin's, or a built-in's under test) under its `name`."""
    _LOADED[provider.name] = provider
