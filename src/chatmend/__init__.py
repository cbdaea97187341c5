"""chatmend: make any tool-calling chat history valid to send, the same way every time.

`repair_history` gives every call exactly one result, right after it, under a unique id; the adapters in
`chatmend.providers` turn a history into each provider's exact request body; `trim_history` fits one into a
budget without splitting a call from its result.
"""

from __future__ import annotations

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
from chatmend.messages import ChatMessage, FilePart, ImagePart, NativePart, TextPart, ThinkingPart, Tool, ToolCall
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
