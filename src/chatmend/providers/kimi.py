"""Moonshot Kimi (K2, K2.5, K2.6) through its OpenAI-compatible `POST /v1/chat/completions`.

The OpenAI Chat shape (`openai_chat`) with Kimi's differences, docs/rules.md §5 (KI1-KI4):
- tool call ids in Kimi's own shape `functions.{name}:{n}` (the model was trained on it), `n` the call's
  index across the whole history: unique, so collision-free even when names repeat, and prefix-stable;
- thinking goes back as `reasoning_content` on the assistant message (KI2);
- tool messages carry the tool's `name`, as Kimi's own examples do.
Send with `openai.OpenAI(base_url="https://api.moonshot.ai/v1", api_key=...)`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from chatmend.exceptions import Problem
from chatmend.planner import Stubs
from chatmend.providers.base import EntryPoints
from chatmend.providers.openai_chat import TEXTS, IdAssigner, OpenAIChat

# KI4: Kimi's own 400 texts were not captured (docs/rules.md §5): these say what its API reference says.
_KI4_TOOL_CHOICE = "tool_choice {value} is not supported with thinking enabled: use 'auto' or 'none'"
_KI4_TEMPERATURE = "temperature {value} is not supported with thinking enabled: it is fixed at 1.0"

__all__ = ["PROVIDER", "Kimi", *EntryPoints._fields]


class _PositionIds(IdAssigner):
    """Kimi's wire ids: `functions.{name}:{n}`, `n` the call's index in the history (unique per call, so no two
    calls share a wire id, whatever their names)."""

    def __init__(self, wire_ids: Sequence[str]) -> None:
        super().__init__(wire_ids)
        self._count = 0

    def next_id(self, name: str) -> str:
        """The next call's id, from its position and name."""
        n = self._count
        self._count = n + 1
        return f"functions.{name}:{n}"

    def skip(self, n: int) -> None:
        """Pass over `n` calls written elsewhere: the next call's index counts them."""
        self._count += n


class Kimi(OpenAIChat):
    """Kimi: OpenAI Chat bodies with `functions.NAME:IDX` ids, `reasoning_content` and named tool results."""

    name: ClassVar[str] = "kimi"
    id_max_length: ClassVar[int | None] = None  # no length limit is known (docs/rules.md §5)
    id_shape: ClassVar[re.Pattern[str]] = re.compile(r"functions\..+:\d+")
    """Kimi's own ids, `functions.NAME:IDX` (docs/rules.md §5): what `_PositionIds` mints, and what tells a
    Kimi body from another Chat Completions body."""
    title: ClassVar[str] = "Kimi"
    description: ClassVar[str] = "Moonshot Kimi (OpenAI Chat shaped, functions.NAME:N ids)"
    model_prefixes: ClassVar[tuple[str, ...]] = ("kimi", "moonshot")
    shape_of: ClassVar[str | None] = "openai_chat"
    plain_lists_valid: ClassVar[bool] = False  # KI2-KI4 beside the pairing rules
    tool_message_name: ClassVar[bool] = True  # Kimi's examples name the tool on its result
    reasoning_provider: ClassVar[str | None] = "kimi"
    ids_by_position: ClassVar[bool] = True
    # Kimi documents text, image_url and video_url parts, but not what it says of others: only an empty type,
    # which no API knows, is reported, in our words.
    part_types: ClassVar[tuple[str, ...] | None] = None
    unknown_part_text: ClassVar[str] = "unknown content part type {kind}"
    unanswered_code: ClassVar[str] = "KI1"
    texts: ClassVar[dict[str, str]] = {
        **TEXTS,
        "KI1": "an assistant message with 'tool_calls' must be followed by tool messages responding to each "
               "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
        "KI2": "thinking is enabled but reasoning_content is missing in assistant tool call message at index "
               "{index}",
        "KI3": "Invalid request: the message at position {index} with role 'assistant' must not be empty",
    }

    def _id_assigner(self, final_ids: Sequence[str]) -> IdAssigner:
        """Kimi's `functions.{name}:{n}`, `n` counting calls from the start of the history (the final ids are
        not used, nor computed: `ids_by_position`)."""
        return _PositionIds([])

    def _stubs(self, items: list[Any]) -> Stubs | None:
        """Chat's stubs, for a list whose call ids are the ones `_PositionIds` mints (`functions.NAME:N`, N counting
        calls from the start): any other id is written anew, by position (the neutral route)."""
        stubs = super()._stubs(items)
        if stubs is None:
            return None
        n = 0
        for item in items:
            for call in item.get("tool_calls") or ():
                if call["id"] != f"functions.{call['function']['name']}:{n}":
                    return None
                n += 1
        return stubs

    def claims_ids(self, ids: Sequence[str]) -> bool:
        """True when every id is Kimi's own `functions.NAME:IDX`."""
        fullmatch = self.id_shape.fullmatch
        return bool(ids) and all(fullmatch(i) for i in ids)

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """OpenAI's rules over the messages (with KI1-KI3), then KI4 over the options."""
        return [*super()._check_messages(messages, body), *self._check_thinking_options(body)]

    def _check_thinking_options(self, body: Mapping[str, Any]) -> list[Problem]:
        """KI4: with thinking on, `tool_choice` is `auto` or `none` only and `temperature` is fixed at 1.0."""
        if not _thinking_on(body):
            return []  # thinking off: no fixed value is known for sure (docs/rules.md §5 gives 0.6 only as INF)
        out = []
        choice = body.get("tool_choice")
        if choice is not None and choice not in ("auto", "none"):
            out.append(self._problem("KI4", "tool_choice", _KI4_TOOL_CHOICE.format(value=repr(choice))))
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1.0:
            out.append(self._problem("KI4", "temperature", _KI4_TEMPERATURE.format(value=repr(temperature))))
        return out

    def _check_assistant(self, message: Mapping[str, Any], i: int, body: Mapping[str, Any]) -> list[Problem]:
        """KI3: content unless the message has calls; KI2: `reasoning_content` on calls with thinking on."""
        if not message.get("tool_calls"):
            if not message.get("content") and not message.get("function_call"):
                return [self._say("KI3", f"messages[{i}].content", index=i)]
            return []
        if _thinking_on(body) and not isinstance(message.get("reasoning_content"), str):
            return [self._say("KI2", f"messages[{i}].reasoning_content", index=i)]
        return []


def _thinking_on(body: Mapping[str, Any]) -> bool:
    """True when the body turns thinking on (`"thinking": {"type": "enabled"}`)."""
    thinking = body.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") == "enabled"


PROVIDER = Kimi()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
