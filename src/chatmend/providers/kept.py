"""What a reader keeps of the wire that the neutral model does not name, and how a writer finds it again, spelled
once for every adapter: a block of a kind chatmend does not model is a NativePart, verbatim; the other fields of a
block it does model go under the provider's key of the part's `provider_data`, written back only to that provider."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from chatmend.messages import NativePart, ProviderData


def native(provider: str, block: Mapping[str, Any]) -> NativePart:
    """A block the neutral model does not name, kept in place as its exact JSON (a copy)."""
    return NativePart(provider=provider, data=dict(block))


def unnamed_fields(item: Mapping[str, Any], named: Collection[str]) -> dict[str, Any]:
    """The fields of a wire object that the model does not name, verbatim."""
    return {k: v for k, v in item.items() if k not in named}


def as_provider_data(provider: str, fields: dict[str, Any]) -> ProviderData | None:
    """A reader's kept `fields` as a `provider_data` under its provider's key (None when it kept none)."""
    return {provider: fields} if fields else None


def kept_fields(provider_data: ProviderData | None, provider: str) -> dict[str, Any] | None:
    """What `provider`'s reader kept in a `provider_data` (None when it has no entry, or one that is not an object:
    another provider's fields are never written)."""
    if provider_data is None:
        return None
    kept = provider_data.get(provider)
    return kept if isinstance(kept, dict) else None


def kept_field(provider_data: ProviderData | None, provider: str, key: str) -> Any:
    """One field `provider`'s reader kept in a `provider_data` (None when it kept no such field)."""
    kept = kept_fields(provider_data, provider)
    return None if kept is None else kept.get(key)
