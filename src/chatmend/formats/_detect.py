"""Which format a file is in, decided from its content (never from its name).

Each check looks for shapes only one format has (a `tool_use` block, a `functionCall` part, a `payload`
envelope); when the signs conflict or there are none that matter, detection says so and asks for `--from`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from chatmend.formats._io import InputError, json_kind

__all__ = ["detect_document", "detect_records", "model_family"]

CLAUDE_CODE_TYPES = frozenset({"user", "assistant", "summary", "system", "file-history-snapshot",
                               "queue-operation", "attachment", "progress"})
CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
RESPONSES_ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "computer_call",
    "computer_call_output", "web_search_call", "file_search_call", "item_reference", "mcp_call",
})
RESPONSES_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})
ANTHROPIC_BLOCK_TYPES = frozenset({"tool_use", "tool_result", "redacted_thinking", "document",
                                   "server_tool_use", "web_search_tool_result", "search_result"})
OPENAI_PART_TYPES = frozenset({"image_url", "input_audio", "file"})
# Kimi's own ids: `functions.NAME:IDX` (provider-rules §5).
KIMI_ID = re.compile(r"functions\.[\w.-]+:\d+")

_FAMILIES = (
    ("anthropic", ("claude",)),
    ("kimi", ("kimi", "moonshot")),
    ("mistral", ("mistral", "magistral", "codestral", "devstral", "ministral", "pixtral")),
    ("gemini", ("gemini",)),
    ("openai_chat", ("gpt-", "gpt4", "o1", "o3", "o4", "chatgpt")),
)
SAMPLE = 200
"""How many records or messages detection looks at."""


def model_family(model: object) -> str | None:
    """The provider a model name belongs to (`claude-...` is anthropic), or None."""
    if not isinstance(model, str):
        return None
    name = model.lower().rsplit("/", 1)[-1]
    for family, prefixes in _FAMILIES:
        if name.startswith(prefixes):
            return family
    return None


def _unsure(what: str, candidates: Sequence[str]) -> InputError:
    """The error that says detection is unsure and which `--from` to give."""
    options = " or ".join(f"--from {c}" for c in candidates)
    return InputError(f"cannot tell the format: {what}; say which with {options}")


def detect_document(value: object) -> str:
    """The format of a whole JSON document: a request body or a message/item/content list."""
    if isinstance(value, Mapping):
        if isinstance(value.get("contents"), list):
            return "gemini"
        if "input" in value and isinstance(value.get("input"), (list, str)):
            return "openai_responses"
        messages = value.get("messages")
        if isinstance(messages, list):
            return _classify_messages(messages, value, allow_neutral=False, plain=None)
        raise InputError("a JSON object with no 'messages', 'input' or 'contents' list; expected a request "
                         "body or a list of messages")
    if isinstance(value, list):
        if not value:
            raise InputError("an empty list; expected a list of messages")
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise InputError(f"[{i}]: expected a message (a JSON object), got {json_kind(item)}")
        return _classify_items(value, allow_neutral=True, plain="openai_chat")
    raise InputError(f"the file holds {json_kind(value)}; expected a request body (a JSON object) or a list of "
                     "messages")


def detect_records(records: Sequence[object]) -> str:
    """The format of JSON Lines from its first records."""
    objects = [r for r in records[:SAMPLE] if isinstance(r, Mapping)]
    if not objects:
        return "chatmend"  # let the neutral reader say what is wrong with the first line
    if any(r.get("type") in CODEX_TYPES and isinstance(r.get("payload"), Mapping) for r in objects):
        return "codex"
    if _legacy_codex(objects):
        return "codex"
    if any(r.get("type") in CLAUDE_CODE_TYPES and ("uuid" in r or "sessionId" in r) for r in objects):
        return "claude_code"
    if len(records) == 1 and not isinstance(objects[0].get("role"), str):
        return detect_document(objects[0])
    return _classify_items(objects, allow_neutral=True, plain="chatmend")


def _legacy_codex(records: Sequence[Mapping[str, Any]]) -> bool:
    """Codex rollouts before the `payload` envelope: a session line (`id`, `timestamp`), then bare items."""
    first = records[0]
    return (
        "id" in first and "timestamp" in first and "type" not in first and "role" not in first
        and any(r.get("type") in RESPONSES_ITEM_TYPES or r.get("record_type") == "state" for r in records[1:])
    )


def _classify_items(items: Sequence[Any], *, allow_neutral: bool, plain: str) -> str:
    """Gemini contents, Responses items, or chat messages of some flavour."""
    sample = [i for i in items[:SAMPLE] if isinstance(i, Mapping)]
    if any(isinstance(i.get("parts"), list) for i in sample):
        return "gemini"
    if any((i.get("type") in RESPONSES_ITEM_TYPES and "role" not in i)
           or _part_types(i) & RESPONSES_PART_TYPES for i in sample):
        return "openai_responses"
    return _classify_messages(sample, None, allow_neutral=allow_neutral, plain=plain)


def _part_types(message: Mapping[str, Any]) -> set[str]:
    """The `type` of each part of a message's content."""
    content = message.get("content")
    if not isinstance(content, list):
        return set()
    return {str(p.get("type")) for p in content if isinstance(p, Mapping) and isinstance(p.get("type"), str)}


def _signs(message: Mapping[str, Any]) -> set[str]:
    """Which formats this one message could only come from."""
    signs: set[str] = set()
    parts = _part_types(message)
    content = message.get("content")
    if parts & ANTHROPIC_BLOCK_TYPES or (
        isinstance(content, list)
        and any(isinstance(p, Mapping) and p.get("type") == "image" and "source" in p for p in content)
    ):
        signs.add("anthropic")
    if parts & OPENAI_PART_TYPES or message.get("role") in ("developer", "function") \
            or "reasoning_content" in message or "refusal" in message or "name" in message:
        signs.add("openai")
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        if all(isinstance(c, Mapping) and "function" in c for c in calls):
            signs.add("openai")
        elif all(isinstance(c, Mapping) and "name" in c and "function" not in c for c in calls):
            signs.add("chatmend")
    if "tool_name" in message or "is_error" in message or "provider_data" in message or (
        isinstance(content, list)
        and any(isinstance(p, Mapping) and p.get("type") == "image" and "media_type" in p for p in content)
    ):
        signs.add("chatmend")
    if message.get("role") == "tool" and "anthropic" not in signs and "chatmend" not in signs:
        signs.add("chat")  # a tool role: OpenAI Chat or neutral, never Anthropic
    if message.get("role") == "system":
        signs.add("chat")
    return signs


def _classify_messages(
    messages: Sequence[Any], body: Mapping[str, Any] | None, *, allow_neutral: bool, plain: str | None
) -> str:
    """OpenAI Chat (or Kimi, Mistral), Anthropic Messages, or the neutral form."""
    signs: set[str] = set()
    ids: list[str] = []
    for message in messages[:SAMPLE]:
        if not isinstance(message, Mapping):
            continue
        signs |= _signs(message)
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                ids.append(call["id"])
    if body is not None and ("system" in body or ("max_tokens" in body and "anthropic" in signs)):
        signs.add("anthropic")
    family = model_family(body.get("model")) if body is not None else None
    if "anthropic" in signs and signs & {"openai", "chat", "chatmend"}:
        raise _unsure("the messages mix OpenAI Chat and Anthropic Messages shapes",
                      ["openai_chat", "anthropic"])
    if "anthropic" in signs:
        return "anthropic"
    if "chatmend" in signs and allow_neutral:
        if "openai" in signs:
            raise _unsure("the messages mix neutral and OpenAI Chat shapes", ["chatmend", "openai_chat"])
        return "chatmend"
    if "chat" in signs and plain == "chatmend" and "openai" not in signs:
        return plain  # tool and system roles read the same in the neutral form
    if signs & {"openai", "chat"} or family in ("openai_chat", "kimi", "mistral"):
        if family in ("openai_chat", "kimi", "mistral"):
            return family  # the body names its model: that decides between the OpenAI Chat shapes
        if ids and all(KIMI_ID.fullmatch(i) for i in ids):
            return "kimi"
        return "openai_chat"
    if family == "anthropic":
        return "anthropic"
    if plain is not None:
        return plain  # plain text messages read the same in every chat shape
    raise _unsure("the messages hold only plain text, which OpenAI Chat and Anthropic Messages share",
                  ["openai_chat", "anthropic"])
