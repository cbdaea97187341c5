"""Mistral La Plateforme (`POST https://api.mistral.ai/v1/chat/completions`), OpenAI Chat shaped.

The `openai_chat` shape with Mistral's differences, docs/rules.md §7 (MI1-MI12), whose reference validator
is mistral-common's `MistralRequestValidatorV11`/`V13` (serving mode):
- ids exactly 9 characters of `[a-zA-Z0-9]` (MI1): a Mistral id stays as it is, any other becomes a stable
  base62 digest of it, the next salt tried on a collision;
- tool and function names match `^[a-zA-Z0-9_-]{1,64}$` (MI9): other names are normalized the way tool ids
  are (`normalize_tool_id`), and `send` maps a reply's names back to the tools given;
- `name` on tool messages;
- role order (MI5): a user message right after tool messages gets the assistant turn `ASSISTANT_FILLER`
  before it (the hosted API rejects user after tool), and a system message below the top of the body is
  sent as a user message in place (system may not follow assistant or tool);
- a body of more than one message never ends on an assistant or system message (MI6), and no body starts
  with an assistant message (MI10): `USER_FILLER` goes after such a message when the history ends there or
  the next kept message is an assistant message, and before an assistant message that would come first.
  `prefix: true` was not used: the message it marks would change when the history grows, breaking prefix
  stability, and it asks the model to continue that message rather than answer.
Send with `openai.OpenAI(base_url="https://api.mistral.ai/v1", api_key=...)`.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any, ClassVar

from chatmend.exceptions import Problem
from chatmend.ids import normalize_tool_id, wire_ids
from chatmend.messages import ChatMessage
from chatmend.providers.base import EntryPoints, coerce_tools
from chatmend.providers.openai_chat import SHAPE, OpenAIChat, WireMessage

__all__ = ["ASSISTANT_FILLER", "PROVIDER", "USER_FILLER", "Mistral", *EntryPoints._fields]

ASSISTANT_FILLER = "Tool results received."
"""MI5: the assistant turn put between tool results and a user message: short, non-empty, says nothing new."""
USER_FILLER = "Continue."
"""MI6: the user turn after an assistant message that would otherwise end the body or precede another one."""

_ID = re.compile(r"[a-zA-Z0-9]{9}")
_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_BYTE_TO_BASE62 = bytes((string.digits + string.ascii_letters).encode()[b % 62] for b in range(256))
"""Each digest byte to one base62 character (a slight bias, harmless: `wire_ids` resolves any collision)."""
# MI5 as mistral-common checks it, with the hosted API's stricter rule: no user right after tool.
_NEXT_ROLES = {
    "system": ("user", "assistant", "system"),
    "user": ("assistant", "system", "user"),
    "assistant": ("assistant", "user", "tool"),
    "tool": ("assistant", "tool"),
}
_TEXTS = {
    "MI1": "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9.",
    "MI3": "Not the same number of function calls and responses",
    "MI5": "Unexpected role '{role}' after role '{prev}'",
    "MI6": "Expected last role User or Tool (or Assistant with prefix or continue_final_message set to True) "
           "for serving but got {role}",
    "MI7": "Assistant message with prefix True must be last message",
    "MI9": "Function name was {name} but must be a-z, A-Z, 0-9, or contain underscores and dashes, with a "
           "maximum length of 64.",
    "MI10": "Conversation must start with a user message or system message",
    "MI11": "Unexpected content chunk types in {role} message: ['ImageURLChunk']",
    "MI12": "System prompt must have content",
}


def _mistral_id(tool_id: str, attempt: int) -> str:
    """A `make` for `wire_ids`: a valid Mistral id as it is, else 9 base62 characters of a SHA-256 (MI1)."""
    if attempt == 0:
        return _first_mistral_id(tool_id)
    return _base62_digest(f"{tool_id}#{attempt}")


@lru_cache(maxsize=1 << 14)  # an agent sends its whole history at every turn: each id is hashed once, not each time
def _first_mistral_id(tool_id: str) -> str:
    """`_mistral_id(tool_id, 0)`: the id itself when it is a Mistral id, else its digest."""
    if len(tool_id) == 9 and _ID.fullmatch(tool_id):  # (most ids are not 9 long)
        return tool_id
    return _base62_digest(tool_id)


def _base62_digest(text: str) -> str:
    """The first 9 bytes of the SHA-256 of `text`, each as one base62 character."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:9].translate(_BYTE_TO_BASE62).decode()


def _first_mistral_ids(final_ids: Sequence[str]) -> list[str]:
    """`_mistral_id(id, 0)` of every id (`wire_ids`'s `first`: no Python call of `_mistral_id` per id)."""
    return list(map(_first_mistral_id, final_ids))


def _open_end(out: list[WireMessage]) -> bool:
    """MI6: a body of more than one message may not end here (on an assistant or system message)."""
    if len(out) < 2:
        return False
    role: str = out[-1]["role"]
    return role == "assistant" or role == "system"


@lru_cache(maxsize=4096)  # a session calls a few tools many times
def _mistral_name(name: str) -> str:
    """MI9: a name outside `[a-zA-Z0-9_-]{1,64}` normalized like an id (a stable hash keeps names apart)."""
    return name if _NAME.fullmatch(name) else normalize_tool_id(name, max_length=64)


class Mistral(OpenAIChat):
    """Mistral: OpenAI Chat bodies with 9-character ids, named tool results and Mistral's role order."""

    name: ClassVar[str] = "mistral"
    id_max_length: ClassVar[int | None] = 9  # MI1
    title: ClassVar[str] = "Mistral"
    description: ClassVar[str] = "Mistral (OpenAI Chat shaped, 9-character ids)"
    model_prefixes: ClassVar[tuple[str, ...]] = (
        "mistral", "magistral", "codestral", "devstral", "ministral", "pixtral")
    shape_of: ClassVar[str | None] = "openai_chat"
    plain_lists_valid: ClassVar[bool] = False  # MI5, MI6, MI10: Mistral's role order
    tool_message_name: ClassVar[bool] = True
    texts: ClassVar[dict[str, str]] = _TEXTS
    image_code: ClassVar[str] = "MI11"  # image chunks only in user messages (tool messages need a v15 tokenizer)
    image_url_as_string: ClassVar[bool] = True  # mistral-common's ImageURLChunk: an ImageURL or a string
    # mistral-common's chunk types (protocol/instruct/chunk.py) and the hosted API's (its OpenAPI ContentChunk)
    part_types: ClassVar[tuple[str, ...] | None] = (
        "text", "image", "image_url", "input_audio", "audio_url", "document_url", "reference", "file", "thinking")
    unknown_part_text: ClassVar[str] = "{kind} is not a valid ChunkTypes"  # mistral-common's converter
    thinking_parts: ClassVar[bool] = True  # ThinkChunk: `{"type": "thinking", "thinking": [...], "signature"}`
    developer_role: ClassVar[bool] = False  # system, user, assistant and tool only

    # ----------------------------------------------------------------------------------------- write

    def _wire_ids(self, final_ids: Sequence[str]) -> Sequence[str]:
        """Per request: final ids to 9-character base62 ids, collision-free in history order (MI1)."""
        return wire_ids(_mistral_id, final_ids, first=_first_mistral_ids)

    _wire_name = staticmethod(_mistral_name)  # MI9: names as Mistral accepts them (the cache called directly)

    def _append_turn(self, out: list[WireMessage], message: WireMessage) -> None:
        """Append a user or system message keeping MI5's role order: system messages only at the top; never
        user right after tool (assistant and tool messages are never out of order here)."""
        if out:
            role: str = message["role"]
            prev: str = out[-1]["role"]
            if role == "system" and prev != "system":
                # MI5: system may not follow assistant or tool; a later system message is sent as user text,
                # in place (after a user message it would be allowed, but would need a filler before the reply).
                message = {"role": "user", "content": message["content"]}
                role = "user"
            if role == "user" and prev == "tool":
                out.append({"role": "assistant", "content": ASSISTANT_FILLER})  # MI5 (hosted API)
        out.append(message)

    def _on_assistant(self, out: list[WireMessage]) -> None:
        """MI6/MI10 with prefix stability: the turn a shorter history was closed with is in a longer one too.

        Before an assistant message comes `USER_FILLER` when the body is empty (MI10: start with user or
        system), or when `_finish` would have closed the body there.
        """
        if not out:
            out.append({"role": "user", "content": USER_FILLER})
            return
        last = out[-1]
        if last["role"] in ("user", "tool") or last.get("tool_calls"):
            return  # the common case, tested first: after a user turn, a result or a call turn nothing is open
        if _open_end(out):
            out.append({"role": "user", "content": USER_FILLER})

    def _finish(self, out: list[WireMessage]) -> None:
        """MI6: a body of more than one message ends on a user or tool message."""
        if _open_end(out):
            out.append({"role": "user", "content": USER_FILLER})

    # ------------------------------------------------------------------------------------------ send

    def _sdk_reply(self, reply: ChatMessage, kwargs: dict[str, Any]) -> ChatMessage:
        """What `send` and `send_async` return: the reply with each call's name as the caller's tool is named
        (MI9 may have changed it on the wire)."""
        names = {self._wire_name(t.name): t.name for t in coerce_tools(kwargs.get("tools"))}
        if not any(c.name in names and names[c.name] != c.name for c in reply.tool_calls):
            return reply
        calls = tuple(replace(c, name=names.get(c.name, c.name)) for c in reply.tool_calls)
        return replace(reply, tool_calls=calls)

    # ----------------------------------------------------------------------------------------- check

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """MI1-MI7, MI9-MI12 as mistral-common's V11/V13 serving validators and the hosted API apply them."""
        out: list[Problem] = []
        expected: set[str] = set()
        observed: set[str] = set()
        calls_at = -1
        last = len(messages) - 1
        prev: str | None = None
        for i, message in enumerate(messages):
            role = message["role"]
            path = f"messages[{i}]"
            if prev is not None and role not in _NEXT_ROLES[prev]:
                out.append(self._say("MI5", f"{path}.role", role=role, prev=prev))
            if role == "tool":
                self._check_result(message, path, expected, observed, out)
            elif role == "assistant":
                if len(expected) != len(observed):
                    out.append(self._say("MI3", f"messages[{calls_at}].tool_calls"))
                expected, observed = set(), set()
                if message.get("tool_calls"):
                    calls_at = i
                    expected = self._check_mistral_calls(message["tool_calls"], path, out)
                if message.get("prefix") is True and i != last:
                    out.append(self._say("MI7", f"{path}.prefix"))
            elif role == "system" and message.get("content") is None:
                out.append(self._say("MI12", f"{path}.content"))
            out.extend(self._check_images(message, i))
            prev = role
        if len(expected) != len(observed):
            out.append(self._say("MI3", f"messages[{calls_at}].tool_calls"))
        final = messages[-1] if messages else {}
        if len(messages) > 1 and final["role"] not in ("user", "tool") and not (
            final["role"] == "assistant" and final.get("prefix") is True
        ):
            out.append(self._say("MI6", f"messages[{last}].role", role=final["role"]))
        first = messages[0] if messages else {}
        if (len(messages) == 1 and first["role"] not in ("user", "system")) or first.get("tool_calls"):
            # MI10; mistral-common never pairs calls made by the first message, so their results fail too.
            out.append(self._say("MI10", "messages[0].role"))
        out.extend(self._check_tool_names(body.get("tools")))
        return out

    def _check_shape(self, message: Any, path: str) -> list[Problem]:
        """OpenAI's shape checks; no `developer` role: Mistral knows only system, user, assistant, tool."""
        if isinstance(message, Mapping) and message.get("role") in ("developer", "function"):
            return [self._problem(SHAPE, f"{path}.role", f"unknown role {message['role']!r}; use "
                                  f"{'system' if message['role'] == 'developer' else 'tool'}")]
        out = super()._check_shape(message, path)
        calls = message.get("tool_calls") if isinstance(message, Mapping) and not out else None
        for k, call in enumerate(calls if isinstance(calls, list) else []):
            if call.get("type", "function") != "function":  # mistral-common's ToolCall: function calls only (our words)
                out.append(self._problem(SHAPE, f"{path}.tool_calls[{k}].type",
                                         f"Mistral tool calls are function calls, not {call['type']!r}"))
        if isinstance(message, Mapping) and message.get("function_call") is not None and not out:
            out.append(self._problem(SHAPE, f"{path}.function_call", "Mistral has no 'function_call': use tool_calls"))
        return out

    def _check_result(self, message: Mapping[str, Any], path: str, expected: set[str], observed: set[str],
                      out: list[Problem]) -> None:
        """MI1, MI2, MI4 and MI9 on one tool message."""
        call_id = message.get("tool_call_id")
        if not call_id:
            out.append(self._problem("MI2", f"{path}.tool_call_id", "Tool call id has to be defined."))
            return
        if not _ID.fullmatch(call_id):
            out.append(self._say("MI1", f"{path}.tool_call_id", id=call_id))
        if call_id in observed:
            out.append(self._problem("MI4", f"{path}.tool_call_id",
                                     f"Duplicate tool call id {call_id} in tool results"))
        elif call_id not in expected:
            out.append(self._problem("MI4", f"{path}.tool_call_id",
                                     f"Unexpected tool call id {call_id} in tool results"))
        else:
            observed.add(call_id)
        name = message.get("name")
        if name is not None and not (isinstance(name, str) and _NAME.fullmatch(name)):
            out.append(self._say("MI9", f"{path}.name", name=name))

    def _check_mistral_calls(self, calls: list[Any], path: str, out: list[Problem]) -> set[str]:
        """MI1, MI2, MI4 and MI9 on one assistant message's calls; returns their ids."""
        ids: set[str] = set()
        for k, call in enumerate(calls):
            here = f"{path}.tool_calls[{k}]"
            call_id = call.get("id")
            function = call["function"]
            if not call_id:
                undefined = "Tool call id has to be defined in serving mode."
                out.append(self._problem("MI2", f"{here}.id", undefined))
            else:
                if not _ID.fullmatch(call_id):
                    out.append(self._say("MI1", f"{here}.id", id=call_id))
                if call_id in ids:
                    out.append(self._problem("MI4", f"{here}.id",
                                             f"Duplicate tool call id {call_id} in assistant message"))
                ids.add(call_id)
            if not _NAME.fullmatch(function["name"]):
                out.append(self._say("MI9", f"{here}.function.name", name=function["name"]))
            if not isinstance(function.get("arguments", ""), (str, dict)):  # a string or an object
                out.append(self._problem(SHAPE, f"{here}.function.arguments",
                                         "arguments must be a JSON string or an object"))
        return ids

    def _check_tool_names(self, tools: Any) -> list[Problem]:
        """MI9 on the tool definitions."""
        if not isinstance(tools, list):
            return []
        out = []
        for t, tool in enumerate(tools):
            function = tool.get("function") if isinstance(tool, Mapping) else None
            name = function.get("name") if isinstance(function, Mapping) else None
            if not isinstance(name, str):
                out.append(self._problem(SHAPE, f"tools[{t}]", "a tool needs a 'function' with a 'name'"))
            elif not _NAME.fullmatch(name):
                out.append(self._say("MI9", f"tools[{t}].function.name", name=name))
        return out


PROVIDER = Mistral()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
