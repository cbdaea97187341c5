"""DeepSeek (`POST https://api.deepseek.com/chat/completions`), OpenAI Chat shaped: provider-rules §6 (DS1-DS4).

The `openai_chat` shape with DeepSeek's differences:
- thinking goes back as `reasoning_content` on assistant messages, on every one with calls (DS3: in thinking mode
  a tool-call turn without it is a 400), `""` when the history has no thinking to give back;
- every `tool_calls[].id` and `tool_call_id` is present and not empty (the writer's ids never are);
- DeepSeek words OC1 and OC2 its own way (DS1, DS2).
Send with `openai.OpenAI(base_url="https://api.deepseek.com", api_key=...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from chatmend.exceptions import Problem
from chatmend.providers.openai_chat import TEXTS, OpenAIChat

__all__ = ["PROVIDER", "DeepSeek", "check", "from_request", "from_response", "send", "send_async", "to_request"]


class DeepSeek(OpenAIChat):
    """DeepSeek: OpenAI Chat bodies with `reasoning_content` passed back in thinking mode."""

    name: ClassVar[str] = "deepseek"
    id_max_length: ClassVar[int | None] = None  # no limit known (provider-rules §6)
    title: ClassVar[str] = "DeepSeek"
    description: ClassVar[str] = "DeepSeek (OpenAI Chat shaped, reasoning_content in thinking mode)"
    model_prefixes: ClassVar[tuple[str, ...]] = ("deepseek",)
    shape_of: ClassVar[str | None] = "openai_chat"
    reasoning_provider: ClassVar[str | None] = "deepseek"
    unanswered_code: ClassVar[str] = "DS1"
    part_types: ClassVar[tuple[str, ...] | None] = None  # not documented: only an empty type is reported
    unknown_part_text: ClassVar[str] = "unknown content part type {kind}"
    texts: ClassVar[dict[str, str]] = {
        **TEXTS,
        # DS1: OBS langgenius/dify#32222, 0xPlaygrounds/rig#856 (the ids are not listed)
        "DS1": "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
               "'tool_call_id'. (insufficient tool messages following tool_calls message)",
        # DS2 (OC2 in DeepSeek's words): OBS FoundationAgents/OpenManus#23, qwersyk/Newelle#425
        "OC2": "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        # DS3: DOC https://api-docs.deepseek.com/guides/thinking_mode#tool-calls; OBS Sylinko/Everywhere#287,
        # continuedev/continue#9606
        "DS3": "Missing `reasoning_content` field in the assistant message at message index {index}. For more "
               "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
        # DS6: a missing id fails deserialization (OBS esengine/DeepSeek-Reasonix#713); an empty one is refused
        # too (INF: the same report's fix stamps a non-empty id on every call)
        "DS6": "Failed to deserialize the JSON body into the target type: messages[{index}]: missing field `id`",
        "DS6e": "messages[{index}]: {field} must not be empty",
    }

    def _check_assistant(self, message: Mapping[str, Any], i: int, body: Mapping[str, Any]) -> list[Problem]:
        """DS3: in thinking mode, every assistant message with calls carries `reasoning_content`; DS6 on its ids."""
        calls = message.get("tool_calls")
        if not calls:
            return []
        out = []
        for k, call in enumerate(calls):
            if "id" not in call:
                out.append(self._say("DS6", f"messages[{i}].tool_calls[{k}].id", index=i))
            elif call["id"] == "":
                out.append(self._say("DS6e", f"messages[{i}].tool_calls[{k}].id", index=i, field="'id'"))
        if thinking_on(body) and not isinstance(message.get("reasoning_content"), str):
            out.append(self._say("DS3", f"messages[{i}].reasoning_content", index=i))
        return out

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """OpenAI's rules in DeepSeek's words, then DS6 on tool messages: no empty `tool_call_id`."""
        out = super()._check_messages(messages, body)
        for i, message in enumerate(messages):
            if message["role"] == "tool" and message.get("tool_call_id", "") == "":
                out.append(self._say("DS6e", f"messages[{i}].tool_call_id", index=i, field="'tool_call_id'"))
        return out


def thinking_on(body: Mapping[str, Any]) -> bool:
    """True in thinking mode: `"thinking": {"type": "enabled"}`, or a reasoner model when the body says nothing."""
    thinking = body.get("thinking")
    if isinstance(thinking, Mapping):
        return thinking.get("type") == "enabled"
    model = body.get("model")
    return isinstance(model, str) and "reasoner" in model


PROVIDER = DeepSeek()
to_request = PROVIDER.to_request
from_request = PROVIDER.from_request
from_response = PROVIDER.from_response
check = PROVIDER.check
send = PROVIDER.send
send_async = PROVIDER.send_async
