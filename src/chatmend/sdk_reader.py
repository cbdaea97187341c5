"""Where the core gets the reader of the official SDKs' message objects (an `anthropic.types.Message`, OpenAI's
`ChatCompletionMessage`, ...). Only a provider's `from_request` reads them, found by the providers' registry, and
the core imports no provider: the `chatmend` package, which stands above both, plugs the registry's reader in
(`read_with`) when it is imported, before any core module runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chatmend.messages import ChatMessage

__all__ = ["read_sdk_history", "read_with"]

SdkReader = Callable[[Sequence[object]], "list[ChatMessage]"]
_readers: list[SdkReader] = []


def read_with(reader: SdkReader) -> None:
    """Make `reader` the one `read_sdk_history` calls."""
    _readers[:] = [reader]


def read_sdk_history(items: Sequence[object]) -> list[ChatMessage]:
    """`items`, a history holding SDK message objects, read as ChatMessages by the reader plugged in."""
    return _readers[0](items)
