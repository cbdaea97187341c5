"""chatmend: make any tool-calling chat history valid to send, the same way every time.

`repair_history` gives every call exactly one result, right after it, under a unique id; the adapters in
`chatmend.providers` turn a history into each provider's exact request body; `trim_history` fits one into a
budget without splitting a call from its result.

Each public name is imported from its module on first use, so `import chatmend` loads neither the model nor any
provider.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chatmend import sdk_reader

if TYPE_CHECKING:
    from chatmend.exceptions import (
        ChatmendError,
        CheckError,
        HistoryError,
        InputError,
        Problem,
        ReadError,
        UnknownProviderError,
        UnsupportedError,
    )
    from chatmend.ids import normalize_tool_id
    from chatmend.incremental import Repairer
    from chatmend.jsonl import dumps, loads
    from chatmend.messages import (
        ChatMessage,
        FilePart,
        ImagePart,
        NativePart,
        TextPart,
        ThinkingPart,
        Tool,
        ToolCall,
    )
    from chatmend.repair import RepairResult, repair_history
    from chatmend.trim import TrimResult, trim_history

__all__ = [
    "ChatMessage",
    "ChatmendError",
    "CheckError",
    "FilePart",
    "HistoryError",
    "ImagePart",
    "InputError",
    "NativePart",
    "Problem",
    "ReadError",
    "RepairResult",
    "Repairer",
    "TextPart",
    "ThinkingPart",
    "Tool",
    "ToolCall",
    "TrimResult",
    "UnknownProviderError",
    "UnsupportedError",
    "__version__",
    "dumps",
    "loads",
    "normalize_tool_id",
    "repair_history",
    "trim_history",
]

__version__ = "0.1.0"

_MODULE_OF = {
    **dict.fromkeys(["ChatmendError", "CheckError", "HistoryError", "InputError", "Problem", "ReadError",
                     "UnknownProviderError", "UnsupportedError"], "chatmend.exceptions"),
    **dict.fromkeys(["ChatMessage", "FilePart", "ImagePart", "NativePart", "TextPart", "ThinkingPart", "Tool",
                     "ToolCall"], "chatmend.messages"),
    **dict.fromkeys(["RepairResult", "repair_history"], "chatmend.repair"),
    **dict.fromkeys(["TrimResult", "trim_history"], "chatmend.trim"),
    **dict.fromkeys(["dumps", "loads"], "chatmend.jsonl"),
    "Repairer": "chatmend.incremental",
    "normalize_tool_id": "chatmend.ids",
}
"""The module each public name comes from."""


def __getattr__(name: str) -> object:
    """A public name, imported from its module the first time it is asked for."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'chatmend' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked for once: later lookups find it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


def _read_by_providers(items: Sequence[object]) -> list[ChatMessage]:
    """`chatmend.providers.read_sdk_history`, imported when a history first holds an SDK object."""
    from chatmend.providers import read_sdk_history

    return read_sdk_history(items)


sdk_reader.read_with(_read_by_providers)  # the core reads SDK objects through the providers without importing them
