"""Provider adapters by name: `names()` lists them, `get(name)` returns one (imported on first use).

Each name is also a module, `chatmend.providers.<name>`, whose `PROVIDER` is the adapter and whose
module-level `to_request`, `from_request`, `from_response`, `check`, `repair_body`, `send` and `send_async` are
its methods (`Provider.entry_points`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from chatmend.exceptions import HistoryError, UnknownProviderError
from chatmend.messages import ChatMessage
from chatmend.sdk_reader import is_sdk_object

if TYPE_CHECKING:
    from chatmend.providers.base import Provider

__all__ = ["get", "names", "read_sdk_history", "reader_of", "register"]

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


def reader_of(item: object) -> Provider | None:
    """The provider whose official SDK defines `item`'s class (its own `sdk_modules`, not a base class's: Kimi
    and Mistral speak OpenAI Chat's shape but it is OpenAI Chat's SDK), or None."""
    module = type(item).__module__
    for name in names():
        provider = get(name)
        own = provider.sdk_modules if "sdk_modules" in vars(type(provider)) else ()
        if any(module == m or module.startswith(m + ".") for m in own):
            return provider
    return None


def read_sdk_history(items: Sequence[object]) -> list[ChatMessage]:
    """A history holding the official SDKs' message objects, read by their provider's `from_request`: the
    whole list is then that provider's wire list (its dicts read as that provider's messages, a `MessageParam`
    as Anthropic's), except ChatMessage objects, which stay as they are. Objects of two providers, or of no
    known SDK, are a HistoryError at the first one that does not fit."""
    reader: Provider | None = None
    for index, item in enumerate(items):
        for sdk_object in _sdk_objects(item):
            found = reader_of(sdk_object)
            if found is None:
                kind = type(sdk_object)
                raise HistoryError(f"expected a message; {kind.__module__}.{kind.__name__} is no known SDK's "
                                   "message class", index=index)
            if reader is not None and found is not reader:
                raise HistoryError(f"an object of {found.title}'s SDK in a history of {reader.title}'s SDK "
                                   "objects (one history, one provider's SDK)", index=index)
            reader = found
    if reader is None:
        return [cast("ChatMessage", item) for item in items]
    out: list[ChatMessage] = []
    run: list[object] = []  # the wire items since the last ChatMessage
    for item in [*items, None]:
        if isinstance(item, ChatMessage) or item is None:
            out.extend(reader.from_request(run) if run else ())
            run = []
            if item is not None:
                out.append(item)
        else:
            run.append(item)
    return out


def _sdk_objects(item: object) -> list[object]:
    """The SDK objects a history item is or holds: itself, or the blocks of a message dict's `content` list
    (`{"role": "assistant", "content": response.content}`); chatmend's own models are none."""
    if isinstance(item, Mapping):
        content = item.get("content")
        return [part for part in content if is_sdk_object(part)] if isinstance(content, list) else []
    return [item] if is_sdk_object(item) else []
