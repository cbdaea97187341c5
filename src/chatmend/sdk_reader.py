"""The official SDKs' message objects in a history (an `anthropic.types.Message`, OpenAI's `ChatCompletionMessage`,
...): how the core tells them apart, and has them read. Only a provider's `from_request` reads them, found by the
providers' registry (`chatmend.providers.read_sdk_history`), and the core imports no provider: the `chatmend`
package, which stands above both, plugs that reader in (`read_with`) when it is imported, before any core module
runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chatmend.messages import ChatMessage

__all__ = ["holds_sdk_object", "is_sdk_object", "read_sdk_objects", "read_with"]

SdkReader = Callable[[Sequence[object]], "list[ChatMessage]"]
_readers: list[SdkReader] = []


def read_with(reader: SdkReader) -> None:
    """Make `reader` the one `read_sdk_objects` hands a history holding SDK objects to."""
    _readers[:] = [reader]


def read_sdk_objects(messages: Sequence[object] | object) -> Sequence[object] | object:
    """`messages` with the official SDKs' message objects read by their provider (the reader plugged in); a
    history holding none comes back as it is."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        return messages  # not a history: `coerce_history` says so
    if any(map(holds_sdk_object, messages)):
        return _readers[0](messages)
    return messages


def holds_sdk_object(item: object) -> bool:
    """True for an SDK's message object, or a message dict whose `content` list holds one (the Anthropic SDK's
    idiom, `{"role": "assistant", "content": response.content}`)."""
    if isinstance(item, Mapping):
        content = item.get("content")
        return isinstance(content, list) and any(map(is_sdk_object, content))
    return is_sdk_object(item)


def is_sdk_object(value: object) -> bool:
    """True for an object an SDK made: it dumps itself to JSON-shaped data (`model_dump`, `to_dict`), and is
    none of chatmend's own objects (told by their module; a ChatMessage has neither method)."""
    if isinstance(value, (Mapping, str, bytes, list, tuple)):
        return False
    if type(value).__module__.startswith("chatmend."):
        return False
    return callable(getattr(value, "model_dump", None)) or callable(getattr(value, "to_dict", None))
