"""DeepSeek (`POST https://api.deepseek.com/chat/completions`), OpenAI Chat shaped: docs/rules.md §6 (DS1-DS4).

The `openai_chat` shape with DeepSeek's differences:
- thinking goes back as `reasoning_content` on assistant messages, on every one with calls (DS3: in thinking mode
  a tool-call turn without it is a 400), `""` when the history has no thinking to give back;
- every `tool_calls[].id` and `tool_call_id` is present and not empty (the writer's ids never are);
- DeepSeek words OC1 and OC2 its own way (DS1, DS2);
- no image, audio or file part anywhere (DS7: its deserializer knows only `text` parts): an image of the history
  is an `UnsupportedError` naming it and its path (`on_unsupported=` leaves it out and reports it, the command
  line's `--drop-unsupported`); `check` reports each message that has one in DeepSeek's words, and
  `repair_body` leaves such parts where they are (repair cannot send them: the provider is the judge).
Send with `openai.OpenAI(base_url="https://api.deepseek.com", api_key=...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from chatmend.exceptions import Problem
from chatmend.providers.base import EntryPoints
from chatmend.providers.openai_chat import TEXTS, OpenAIChat

_NOT_TEXT = frozenset({"image_url", "input_audio", "file", "image", "audio", "video_url"})
"""Part types of the Chat shape that DeepSeek's deserializer does not know (DS7)."""

__all__ = ["PROVIDER", "DeepSeek", *EntryPoints._fields]


class DeepSeek(OpenAIChat):
    """DeepSeek: OpenAI Chat bodies with `reasoning_content` passed back in thinking mode."""

    name: ClassVar[str] = "deepseek"
    id_max_length: ClassVar[int | None] = None  # no limit known (docs/rules.md §6)
    title: ClassVar[str] = "DeepSeek"
    description: ClassVar[str] = "DeepSeek (OpenAI Chat shaped, reasoning_content in thinking mode)"
    model_prefixes: ClassVar[tuple[str, ...]] = ("deepseek",)
    shape_of: ClassVar[str | None] = "openai_chat"
    plain_lists_valid: ClassVar[bool] = False  # DS3 and DS6 beside the pairing rules
    reasoning_provider: ClassVar[str | None] = "deepseek"
    unanswered_code: ClassVar[str] = "DS1"
    part_types: ClassVar[tuple[str, ...] | None] = None  # not documented: only an empty type is reported
    unknown_part_text: ClassVar[str] = "unknown content part type {kind}"
    writes_parts: ClassVar[frozenset[str]] = frozenset({"text", "thinking", "native"})  # DS7: no images or files
    # serde_json's error behind the path of the string: OBS JohnnyZ93/oai-compatible-copilot#206, #271
    lone_surrogate_errors: ClassVar[tuple[str, str]] = (
        "Failed to parse the request body as JSON: {path}: lone leading surrogate in hex escape",
        "Failed to parse the request body as JSON: {path}: lone leading surrogate in hex escape",
    )
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
        # DS7: OBS esengine/DeepSeek-Reasonix#7859 (400), deepseek-ai/DeepSeek-V3#337 (422, the older wording:
        # "data did not match any variant of untagged enum ChatCompletionRequestContent"); the column of the
        # position in the body's JSON is left out (it depends on how the client serializes)
        "DS7": "Failed to deserialize the JSON body into the target type: messages[{index}]: unknown variant "
               "`{kind}`, expected `text`",
    }

    def _check_images(self, message: Mapping[str, Any], i: int) -> list[Problem]:
        """DS7: no image, audio or file part in any message (one problem per message, as the API stops at it)."""
        content = message.get("content")
        if not isinstance(content, list):
            return []
        for j, part in enumerate(content):
            kind = part.get("type")
            if kind != "text" and kind in _NOT_TEXT:
                return [self._say("DS7", f"messages[{i}].content[{j}]", index=i, kind=kind)]
        return []

    def _list_problems(self, body: Mapping[str, Any]) -> list[Problem]:
        """`check`'s problems of the list that repair can mend: an image (DS7) is not one (it stays where it is,
        and the body is not written anew for it)."""
        return [p for p in super()._list_problems(body) if p.code != "DS7"]

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
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
