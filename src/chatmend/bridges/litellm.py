"""LiteLLM: its OpenAI-format messages repaired, `completion` / `acompletion` that repair them, and a proxy hook.

    from chatmend.bridges.litellm import RepairHook, acompletion, completion, repair_messages

    messages = repair_messages(messages, model="mistral/mistral-large-latest")  # list -> list, same format
    response = completion(model="openai/gpt-4o", messages=messages)             # litellm.completion, repaired
    litellm.callbacks = [RepairHook()]                                          # LiteLLM's proxy: every request

The messages are what `litellm.completion` takes, OpenAI Chat dicts (or LiteLLM's own `Message` objects, as a
reply's `response.choices[0].message` is appended): they are repaired by the OpenAI Chat adapter's `repair_body`,
so a message repair leaves alone is the very same object (a `Message` included) and only what repair must change
is a new dict. When the model names a service chatmend has a Chat dialect for (`mistral/`, `deepseek/`, `groq/`,
`xai/`, `openrouter/`, `together_ai/`, `hosted_vllm/`, `moonshot/` as Kimi, `ollama_chat/`), that dialect repairs
them, so the ids it writes are ones that service takes (Mistral's 9 characters); every other model (LiteLLM
translates the OpenAI format to Anthropic, Gemini, Bedrock, ...) gets the OpenAI Chat repair.

`RepairHook` is a `CustomLogger` whose `async_pre_call_hook` (run by LiteLLM's proxy before every call) repairs
the request's `messages` (chat completions), its `input` (the Responses API, by the Responses adapter) or an
Anthropic `/v1/messages` request's `messages` (by the Anthropic adapter). So LiteLLM's users need not set
`modify_params` (whose tool sanitizer, for some providers, answers a missing result with a placeholder, deletes an
orphan result and keeps the last of duplicates; it renames no repeated id and says nothing of what a call may have
done).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import litellm
from litellm.integrations.custom_logger import CustomLogger

from chatmend import providers
from chatmend.providers.base import Provider
from chatmend.repair import IsReadOnly

__all__ = ["RepairHook", "acompletion", "completion", "provider_for", "repair_messages"]

# LiteLLM's provider prefix -> chatmend's Chat dialect, where the names differ (the others are the same name)
_ALIASES = {"together_ai": "together", "hosted_vllm": "vllm", "moonshot": "kimi", "ollama_chat": "ollama"}


def provider_for(model: str | None) -> Provider:
    """The Chat-format adapter that repairs messages for a LiteLLM model string: the dialect its `provider/`
    prefix names, else OpenAI Chat."""
    prefix = model.split("/", 1)[0] if model and "/" in model else ""
    name = _ALIASES.get(prefix, prefix)
    if name in providers.names():
        provider = providers.get(name)
        if provider.shape_of == "openai_chat":
            return provider
    return providers.get("openai_chat")


def repair_messages(messages: Sequence[Any], *, model: str | None = None,
                    is_read_only: IsReadOnly | None = None) -> list[Any]:
    """The messages made valid (a new list; a message repair leaves alone is the input's own object)."""
    return _repaired(provider_for(model), messages, is_read_only)


def completion(*, model: str, messages: Sequence[Any], is_read_only: IsReadOnly | None = None,
               **kwargs: Any) -> Any:
    """`litellm.completion` with the messages repaired first (every other argument goes to it as it is)."""
    return litellm.completion(model=model, messages=repair_messages(messages, model=model, is_read_only=is_read_only),
                              **kwargs)


async def acompletion(*, model: str, messages: Sequence[Any], is_read_only: IsReadOnly | None = None,
                      **kwargs: Any) -> Any:
    """`litellm.acompletion` with the messages repaired first."""
    return await litellm.acompletion(
        model=model, messages=repair_messages(messages, model=model, is_read_only=is_read_only), **kwargs)


class RepairHook(CustomLogger):
    """For LiteLLM's proxy (`litellm_settings: callbacks: ...` or `litellm.callbacks = [RepairHook()]`): each
    request's history repaired before the call, in the format of its route."""

    def __init__(self, *, is_read_only: IsReadOnly | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.is_read_only = is_read_only

    async def async_pre_call_hook(self, user_api_key_dict: Any, cache: Any, data: dict[str, Any],
                                  call_type: Any) -> dict[str, Any]:
        """The request's `data` with its history repaired (left as it is when it has none of the call's shape)."""
        kind = getattr(call_type, "value", call_type)
        model = data.get("model") if isinstance(data.get("model"), str) else None
        if kind in ("completion", "acompletion") and isinstance(data.get("messages"), list):
            data["messages"] = _repaired(provider_for(model), data["messages"], self.is_read_only)
        elif kind in ("responses", "aresponses") and isinstance(data.get("input"), list):
            data["input"] = _repaired(providers.get("openai_responses"), data["input"], self.is_read_only)
        elif kind in ("anthropic_messages", "aanthropic_messages") and isinstance(data.get("messages"), list):
            data["messages"] = _repaired(providers.get("anthropic"), data["messages"], self.is_read_only)
        return data


def _repaired(provider: Provider, items: Sequence[Any], is_read_only: IsReadOnly | None) -> list[Any]:
    """The list repaired by `provider.repair_body`, each item repair leaves alone the input's own object (an
    object LiteLLM made, such as a reply's `Message`, is read as its dict and given back as itself)."""
    if not items:
        return list(items)
    read = [item if isinstance(item, dict) else _as_dict(item) for item in items]
    # LiteLLM may send the list to any provider: repaired by the neutral rules, not only OpenAI Chat's
    repaired: list[Any] = provider.repair_body({provider.list_key: read}, is_read_only=is_read_only,
                                               keep_valid=False).body[
        provider.list_key]
    originals = {id(r): item for r, item in zip(read, items)}
    return [originals.get(id(item), item) for item in repaired]


def _as_dict(item: Any) -> Any:
    """A pydantic message object (LiteLLM's `Message`, an SDK's) as the dict it stands for, without its unset
    fields; anything else as it is."""
    dump = getattr(item, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else item
