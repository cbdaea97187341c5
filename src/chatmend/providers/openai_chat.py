"""OpenAI Chat Completions (`POST /v1/chat/completions`): write, read, check and send.

Rules are those of `shared/notes/provider-rules.md` §1 (ids OC1-OC7). Kimi and Mistral speak the same shape
and subclass `OpenAIChat`: they set the class flags and override hooks (writing: `_id_assigner`, `_wire_ids`
of the base, and `_wire_name`, `_append_turn`, `_on_assistant`, `_finish`; checking: `_check_shape`,
`_check_messages`, `_check_assistant`, and the rule codes `unanswered_code`, `image_code`).

Choices where the wire has no place for something:
- a tool result's images go in a user message right after the run of tool messages (OC7), after a line
  naming the result (`Images from tool result <id>:`); an assistant's or system message's images likewise;
- `is_error` becomes `ERROR_PREFIX` at the start of the result's text (there is no error flag);
- thinking is not sent (no field for it), except by Kimi as `reasoning_content`; an assistant message left
  with nothing to send (thinking only) is left out;
- a system message stays a system message where it stands; the `system` option adds one first.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from chatmend._json import brief
from chatmend.exceptions import Problem, ReadError, error_context
from chatmend.messages import (
    ChatMessage,
    ImagePart,
    Part,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCall,
    replace_field,
)
from chatmend.providers import _chat_fast
from chatmend.providers.base import (
    SHAPE,
    CheckContext,
    IdAssigner,
    Provider,
    arguments_json,
    arguments_text,
    image_data_url,
    parse_data_url,
    text_field,
    to_plain,
)
from chatmend.repair import RepairResult

__all__ = [
    "ERROR_PREFIX",
    "PROVIDER",
    "SHAPE",
    "TEXTS",
    "IdAssigner",
    "OpenAIChat",
    "WireMessage",
    "arguments_text",
    "check",
    "from_request",
    "from_response",
    "send",
    "send_async",
    "to_request",
]

Body = dict[str, Any]
WireMessage = dict[str, Any]
Waiting = deque[tuple[str, str]]
"""(wire id, wire name) of each call written whose result is still to come, in call order."""

ERROR_PREFIX = "Error: "
"""Chat Completions has no error flag on a tool message: a failed result says so in its text."""
_NO_TEXT_FOR_IMAGES = "(image result: see the next message)"
_PART_TYPES = ("text", "image_url", "input_audio", "refusal", "audio", "file")
"""The content part types OpenAI knows, as its 400 for another type lists them: the SDK's part types of every
role (text, image_url, input_audio, file; refusal on the assistant), and `audio`."""
_OWN_PART_TYPES = frozenset({"image_url", "input_audio", "file"})
"""Part types of Chat Completions that no other chat shape has (detection)."""
_OWN_FIELDS = frozenset({"reasoning_content", "refusal", "name"})
"""Message fields of Chat Completions (and the providers speaking it) that no other chat shape has."""
_UNKNOWN_PART = ("Invalid value: {kind}. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', "
                 "'audio', and 'file'.")

TEXTS: dict[str, str] = {
    "OC1": "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
           "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
    "OC2": "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
           "'tool_calls'.",
    "OC3": "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message.",
    "OC4": "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in {first} and {second}.",
    "OC5": "Invalid '{where}': string too long. Expected a string with maximum length {limit}, but got a "
           "string with length {length} instead.",
    "OC6": "Invalid type for '{where}': expected a string, but got {kind} instead.",
    "OC7": "Invalid 'messages[{index}]'. Image URLs are only allowed for messages with role 'user', but this "
           "message with role '{role}' contains an image URL.",
}
"""OpenAI's 400 texts per rule (provider-rules §1), verbatim with their variable parts as fields."""


_READERS = ("_read_message", "_read_assistant", "_read_call", "_read_content", "_read_part", "_read_groups")
"""The reading hooks whose plain-shape case `_chat_fast.read_plain` stands in for."""
_CHECKERS = ("_check", "_check_shape", "_part_problem", "_check_messages", "_check_calls", "_check_assistant",
             "_check_images", "_list_valid")
"""The checking hooks whose verdict on plain lists `_chat_fast.list_valid` stands in for."""


def _named_function(call: Any) -> Mapping[str, Any] | None:
    """A tool call's `function` object when it names its tool (a non-empty string), else None: what reading and
    checking a call both need first."""
    function = call.get("function") if isinstance(call, Mapping) else None
    if isinstance(function, Mapping) and isinstance(function.get("name"), str) and function["name"]:
        return function
    return None


def _with_raw_arguments(message: ChatMessage, item: Mapping[str, Any]) -> ChatMessage:
    """The message with each call's arguments text kept as it came (`repair_body` writes it back byte for byte)."""
    if not message.tool_calls:
        return message
    calls = tuple(
        replace_field(call, "raw_arguments", text) if isinstance(text := raw["function"].get("arguments"), str)
        else call
        for call, raw in zip(message.tool_calls, item["tool_calls"]))
    return replace_field(message, "tool_calls", calls)


def _thinking_text(parts: Sequence[Part]) -> str:
    """The readable text of a message's thinking parts, joined (redacted thinking has none)."""
    return "\n".join(p.text for p in parts if isinstance(p, ThinkingPart) and p.text)


def _split(content: str | tuple[Part, ...]) -> tuple[str, list[ImagePart]]:
    """A content's text parts joined by newlines, and its images."""
    if isinstance(content, str):
        return content, []
    texts = [p.text for p in content if isinstance(p, TextPart)]
    return "\n".join(texts), [p for p in content if isinstance(p, ImagePart)]


def _image(part: ImagePart) -> dict[str, Any]:
    """An `image_url` content part."""
    return {"type": "image_url", "image_url": {"url": image_data_url(part)}}


class OpenAIChat(Provider):
    """Chat Completions bodies: `messages` with `tool_calls` on the assistant and `role:"tool"` results."""

    name: ClassVar[str] = "openai_chat"
    id_max_length: ClassVar[int | None] = 40  # OC5
    title: ClassVar[str] = "OpenAI Chat"
    description: ClassVar[str] = "OpenAI Chat Completions: a body, its messages list, or JSON Lines of messages"
    model_prefixes: ClassVar[tuple[str, ...]] = ("gpt-", "gpt4", "o1", "o3", "o4", "chatgpt")
    roles: ClassVar[frozenset[str]] = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
    plain_default: ClassVar[bool] = True
    sdk_modules: ClassVar[tuple[str, ...]] = ("openai.types.chat",)  # Kimi and Mistral do not inherit it
    # OBS CopilotKit/CopilotKit#529 (`code: empty_array`); Kimi and Mistral, OpenAI-compatible, refuse it too
    empty_list_error: ClassVar[str | None] = ("Invalid 'messages': empty array. Expected an array with minimum "
                                              "length 1, but got an empty array instead.")
    tool_message_name: ClassVar[bool] = False
    """True when tool messages carry the tool's `name` (not a field of OpenAI's own type)."""
    reasoning_provider: ClassVar[str | None] = None
    """The provider whose `reasoning_content` field carries thinking (Kimi); None: thinking is not sent."""
    texts: ClassVar[dict[str, str]] = TEXTS
    """The provider's 400 text per rule code."""
    unanswered_code: ClassVar[str] = "OC1"
    """The rule a call left without its result breaks (Kimi words it as KI1)."""
    image_code: ClassVar[str] = "OC7"
    """The rule an image outside a user message breaks (Mistral words it as MI11)."""
    image_url_as_string: ClassVar[bool] = False
    """Whether an `image_url` part may hold its URL as a bare string (Mistral's may; OpenAI's needs an object)."""
    part_types: ClassVar[tuple[str, ...] | None] = _PART_TYPES
    """The content part types the provider knows (None: not known here, any non-empty type is left to it)."""
    unknown_part_text: ClassVar[str] = _UNKNOWN_PART
    """The provider's words for a part of a type it does not know (`{kind}`: the type, quoted)."""

    # ---------------------------------------------------------------------------------------- detect

    def marks(self, item: Mapping[str, Any]) -> bool:
        """Signs only a Chat Completions message has: OpenAI's own part types, roles and fields, and calls
        with a `function` object."""
        content = item.get("content")
        if isinstance(content, list) and any(
                isinstance(p, Mapping) and text_field(p) in _OWN_PART_TYPES for p in content):
            return True
        if text_field(item, "role") in ("developer", "function") or not _OWN_FIELDS.isdisjoint(item):
            return True
        calls = item.get("tool_calls")
        return isinstance(calls, list) and bool(calls) and all(
            isinstance(c, Mapping) and "function" in c for c in calls)

    # ----------------------------------------------------------------------------------------- write

    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        """The Chat Completions body: one linear pass over the repaired history, plain dicts only."""
        body: Body = {"model": model, "messages": self._write_messages(result.messages, system, ids)}
        if tools:
            body["tools"] = [self._write_tool(t.name, t.description, t.parameters) for t in tools]
        body.update(options)
        return body

    def _write_messages(self, messages: list[ChatMessage], system: str | None, ids: IdAssigner) -> list[WireMessage]:
        """The wire message list of a repaired history, its calls' wire ids given by `ids`."""
        waiting: Waiting = deque()  # the tool messages after an assistant message answer its calls in order
        out: list[WireMessage] = []
        images: list[dict[str, Any]] = []  # OC7: image parts waiting for the run of tool messages to end
        named = self.tool_message_name
        # User and system messages go through `_append_turn` (a provider may move or precede them); assistant and tool
        # messages stand where they are written: `out.append`.
        if system is not None:
            self._append_turn(out, {"role": "system", "content": system})
        for message in messages:
            role = message.role
            if images and role != "tool":
                self._append_turn(out, {"role": "user", "content": images})
                images = []
            if role == "tool":
                content = message.content
                if type(content) is str and not message.is_error:  # a plain result: `_write_result`'s result
                    call_id, wire_name = waiting.popleft()
                    out.append({"role": "tool", "tool_call_id": call_id, "name": wire_name, "content": content}
                               if named else {"role": "tool", "tool_call_id": call_id, "content": content})
                else:
                    out.append(self._write_result(message, waiting, images))
            elif role == "assistant":
                self._on_assistant(out)
                content = message.content
                if type(content) is str and content and not message.tool_calls:
                    out.append({"role": "assistant", "content": content})  # as `_write_assistant` writes a reply
                else:
                    self._write_assistant(message, ids, waiting, images, out)
            elif role == "user":
                content = message.content
                self._append_turn(out, {"role": "user", "content": content if isinstance(content, str) else [
                    _image(p) if isinstance(p, ImagePart) else {"type": "text", "text": p.text}
                    for p in content if isinstance(p, (TextPart, ImagePart))
                ] or ""})  # thinking only: nothing of it can be sent
            else:
                text, pics = _split(message.content)
                self._append_turn(out, {"role": "system", "content": text})
                if pics:  # OC7: a system message carries no images
                    self._append_turn(out, {"role": "user", "content": self._labelled("the system message", pics)})
        if images:
            self._append_turn(out, {"role": "user", "content": images})
        self._finish(out)
        return out

    def _wire_name(self, name: str) -> str:
        """A tool name as the provider accepts it (hook: Mistral restricts names)."""
        return name

    def _append_turn(self, out: list[WireMessage], message: WireMessage) -> None:
        """Append a user or system message to `out` (hook: Mistral inserts turns where its role order needs them,
        and sends a later system message as user text)."""
        out.append(message)

    def _on_assistant(self, out: list[WireMessage]) -> None:
        """Called before every kept assistant message, written or not (hook for Mistral's role order)."""

    def _finish(self, out: list[WireMessage]) -> None:
        """Called once after the last message (hook: Mistral never ends on an assistant message)."""

    def _labelled(self, source: str, pics: list[ImagePart]) -> list[dict[str, Any]]:
        """Image parts moved out of a non-user message, after a line that says where they come from."""
        return [{"type": "text", "text": f"Images from {source}:"}, *(_image(p) for p in pics)]

    def _write_assistant(
        self,
        message: ChatMessage,
        ids: IdAssigner,
        waiting: Waiting,
        images: list[dict[str, Any]],
        out: list[WireMessage],
    ) -> None:
        """The assistant message (appended to `out`), its calls with wire ids; its images queue for after the
        tool run (a user message with its images alone goes through `_append_turn`)."""
        content = message.content
        text, pics = (content, None) if isinstance(content, str) else _split(content)
        calls = message.tool_calls
        if not calls and not text and pics:
            # OC7: an assistant message carries no images; nothing else is left of it to send.
            self._append_turn(out, {"role": "user", "content": self._labelled("the assistant", pics)})
            return
        if not calls and not text:
            return  # thinking only: Chat Completions has no field for it (KI3: empty is rejected)
        wire: WireMessage = {"role": "assistant", "content": text or None}
        if self.reasoning_provider is not None:
            # Any provider's thinking goes back as its text only (signatures are valid only where made).
            thinking = "" if isinstance(content, str) else _thinking_text(content)
            if thinking or calls:
                # KI2: every tool-call message carries it, "" when the history has no thinking to give back
                wire["reasoning_content"] = thinking
        if calls:
            wire_calls = []
            for call in calls:
                name = call.name
                wire_name = self._wire_name(name)
                call_id = ids.next_id(name)
                waiting.append((call_id, wire_name))
                wire_calls.append({
                    "id": call_id,
                    "type": "function",
                    "function": {"name": wire_name, "arguments": arguments_json(call)},  # OC6
                })
            wire["tool_calls"] = wire_calls
        out.append(wire)
        if pics:
            label = self._labelled("the assistant", pics)
            if calls:
                images.extend(label)  # OC1: tool messages come right after the calls
            else:
                self._append_turn(out, {"role": "user", "content": label})

    def _write_result(self, message: ChatMessage, waiting: Waiting, images: list[dict[str, Any]]) -> WireMessage:
        """A `role:"tool"` message answering the first call still waiting, with text only; its images queue for a
        user message after the run."""
        call_id, wire_name = waiting.popleft()
        content = message.content
        text, pics = (content, None) if isinstance(content, str) else _split(content)
        if pics:
            images.extend(self._labelled(f"tool result {call_id}", pics))  # OC7
            text = text or _NO_TEXT_FOR_IMAGES
        if message.is_error:
            text = ERROR_PREFIX + text  # no error flag in Chat Completions
        if self.tool_message_name:
            return {"role": "tool", "tool_call_id": call_id, "name": wire_name, "content": text}
        return {"role": "tool", "tool_call_id": call_id, "content": text}

    def _write_tool(self, name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        """A function tool definition."""
        function: dict[str, Any] = {"name": self._wire_name(name)}
        if description:
            function["description"] = description
        function["parameters"] = parameters
        return {"type": "function", "function": function}

    # ------------------------------------------------------------------------------------------ read

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """The history of a saved body (or its `messages` list); the body's `tools` are not history."""
        data = self._plain_request(data)  # SDK objects (a `ChatCompletionMessage`) as their dicts
        with error_context(provider=self.name):
            if isinstance(data, Mapping):
                items = data.get("messages")
                if not isinstance(items, list):
                    raise ReadError("a request body needs a 'messages' list", path="messages")
            elif isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
                items = list(data)
            else:
                raise ReadError(f"expected a request body or a message list, got {type(data).__name__}")
            history = []
            for i, item in enumerate(items):
                with error_context(path=f"messages[{i}]"):
                    history.append(self._read_message(item))
            return history

    def _read_groups(self, items: list[Any]) -> list[list[ChatMessage]]:
        """One neutral message per wire message (`repair_body` keeps each one repair leaves alone); a message of a
        plain shape is read unvalidated (`_chat_fast.read_plain`), unless a subclass reads otherwise."""
        plain = _chat_fast.read_plain if _chat_fast.inherits(type(self), OpenAIChat, _READERS) else None
        with error_context(provider=self.name):
            groups = []
            for i, item in enumerate(items):
                message = plain(item) if plain is not None else None
                if message is None:
                    with error_context(path=f"messages[{i}]"):
                        message = _with_raw_arguments(self._read_message(item), item)
                groups.append([message])
            return groups

    def _list_valid(self, items: list[Any]) -> bool:
        """`repair_body`'s fast re-check: a list of plain messages judged in one pass (`_chat_fast.list_valid`),
        unless a subclass checks more rules (Kimi, Mistral)."""
        return _chat_fast.inherits(type(self), OpenAIChat, _CHECKERS) and _chat_fast.list_valid(
            items, self.id_max_length)

    def from_response(self, response: Any) -> ChatMessage:
        """The reply's first choice as an assistant message: text, calls (arguments parsed), thinking."""
        with error_context(provider=self.name):
            data = to_plain(response, provider=self.name)
            choices = data.get("choices")
            if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
                raise ReadError("a response needs a non-empty 'choices' list", path="choices")
            message = choices[0].get("message")
            if not isinstance(message, Mapping):
                raise ReadError("the first choice has no 'message'", path="choices[0].message")
            with error_context(path="choices[0].message"):
                return self._read_assistant(message)

    def _read_message(self, item: Any) -> ChatMessage:
        """One wire message as a ChatMessage."""
        if not isinstance(item, Mapping):
            raise ReadError(f"expected a message object, got {type(item).__name__}")
        role = item.get("role")
        if role in ("system", "developer"):
            return ChatMessage(role="system", content=self._read_content(item.get("content")))
        if role == "user":
            return ChatMessage(role="user", content=self._read_content(item.get("content")))
        if role == "assistant":
            return self._read_assistant(item)
        if role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str):
                raise ReadError("a tool message needs a string 'tool_call_id'", path="tool_call_id")
            name = item.get("name")
            tool_name = name if isinstance(name, str) else None
            return ChatMessage(role="tool", tool_call_id=call_id, tool_name=tool_name,
                               content=self._read_content(item.get("content")))
        raise ReadError(f"unsupported role {brief(role)}; expected system, developer, user, assistant or tool",
                        path="role")

    def _read_assistant(self, item: Mapping[str, Any]) -> ChatMessage:
        """An assistant message (of a body or a reply) with its calls and, for Kimi, its reasoning."""
        content = self._read_content(item.get("content"))
        reasoning = item.get("reasoning_content") if self.reasoning_provider else None
        if isinstance(reasoning, str) and reasoning:
            parts: list[Part] = [ThinkingPart(text=reasoning, provider=self.reasoning_provider)]
            if isinstance(content, str):
                parts.extend([TextPart(text=content)] if content else [])
            else:
                parts.extend(content)
            content = tuple(parts)
        calls = item.get("tool_calls") or []
        if not isinstance(calls, list):
            raise ReadError("'tool_calls' must be a list", path="tool_calls")
        return ChatMessage(role="assistant", content=content,
                           tool_calls=tuple(self._read_call(c, k) for k, c in enumerate(calls)))

    def _read_call(self, call: Any, k: int) -> ToolCall:
        """A function tool call; its JSON-text arguments become an object when they parse."""
        path = f"tool_calls[{k}]"
        function = _named_function(call)
        if function is None:
            raise ReadError("a tool call needs a 'function' with a non-empty 'name'", path=path)
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):  # (`check`: SHAPE)
            raise ReadError(f"'id' must be a string, got {type(call_id).__name__}", path=f"{path}.id")
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, (str, dict)):  # (`check`: OC6)
            raise ReadError(f"'arguments' must be JSON text (or an object), got {type(arguments).__name__}",
                            path=f"{path}.function.arguments")
        return ToolCall(id=call_id or "", name=function["name"], arguments=arguments if arguments is not None else {})

    def _read_content(self, content: Any) -> str | tuple[Part, ...]:
        """A string, null, or a list of text, refusal, image and (Mistral) thinking parts."""
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        if not isinstance(content, list):
            raise ReadError(f"content must be a string or a list of parts, got {type(content).__name__}",
                            path="content")
        return tuple(self._read_part(part, j) for j, part in enumerate(content))

    def _read_part(self, part: Any, j: int) -> Part:
        """One content part."""
        path = f"content[{j}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            return TextPart(text=part["text"])
        if kind == "refusal" and isinstance(part.get("refusal"), str):
            return TextPart(text=part["refusal"])
        if kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else image
            if isinstance(url, str):
                return parse_data_url(url)
        if kind == "thinking":
            chunks = part.get("thinking")
            text = "".join(c.get("text", "") for c in chunks if isinstance(c, Mapping)) if isinstance(
                chunks, list) else str(chunks or "")
            signature = part.get("signature")
            return ThinkingPart(text=text, signature=signature if isinstance(signature, str) else None,
                                provider=self.name)
        readable = kind in ("text", "refusal", "image_url") or not isinstance(kind, str)
        problem = self._part_problem(part) if readable else None
        if problem is not None:  # a kind read here with a malformed field: what `check` says of it
            field, text = problem
            raise ReadError(text, path=path + field)
        raise ReadError(f"unsupported content part {brief(kind)}; expected text, refusal or image_url", path=path)

    # ----------------------------------------------------------------------------------------- check

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """The 400s the provider would answer with; a malformed body is reported, never raised."""
        if not isinstance(body, Mapping):
            return [self._problem(SHAPE, "", f"expected a JSON object body, got {type(body).__name__}")]
        messages = body.get("messages")
        if not isinstance(messages, list):
            return [self._problem(SHAPE, "messages", "'messages' must be a list of message objects")]
        problems: list[Problem] = []
        for i, message in enumerate(messages):
            problems.extend(self._check_shape(message, f"messages[{i}]"))
        if problems:
            return problems
        problems.extend(self._check_messages(messages, body))
        return problems

    def _problem(self, code: str, path: str, message: str) -> Problem:
        """A Problem of this provider."""
        return Problem(code=code, path=path, message=message, provider=self.name)

    def _check_shape(self, message: Any, path: str) -> list[Problem]:
        """Structural problems of one message, before any rule can be judged."""
        if not isinstance(message, Mapping):
            return [self._problem(SHAPE, path, "expected a message object")]
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return [self._problem(SHAPE, f"{path}.role", f"unknown role {brief(role)}")]
        out: list[Problem] = []
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            out.append(self._problem(SHAPE, f"{path}.content", "content must be a string, a list or null"))
        if isinstance(content, list):
            for j, part in enumerate(content):
                problem = self._part_problem(part)
                if problem is not None:
                    field, text = problem
                    out.append(self._problem(SHAPE, f"{path}.content[{j}]{field}", text))
        if role == "tool" and "tool_call_id" in message and not isinstance(message["tool_call_id"], str):
            out.append(self._problem(SHAPE, f"{path}.tool_call_id", "'tool_call_id' must be a string"))
        calls = message.get("tool_calls")
        if calls is not None:
            if role != "assistant" or not isinstance(calls, list):
                return [*out, self._problem(SHAPE, f"{path}.tool_calls",
                                            "'tool_calls' is a list on assistant messages")]
            for k, call in enumerate(calls):
                if _named_function(call) is None:
                    out.append(self._problem(SHAPE, f"{path}.tool_calls[{k}]",
                                             "a tool call needs a 'function' object with a non-empty string 'name'"))
                elif "id" in call and not isinstance(call["id"], str):
                    out.append(self._problem(SHAPE, f"{path}.tool_calls[{k}].id", "'id' must be a string"))
        return out

    def _part_problem(self, part: Any) -> tuple[str, str] | None:
        """What is malformed in one content part (the field's path below the part, and why), or None. A part
        of a type the provider knows but the neutral model cannot hold (audio, a file) is left to the provider."""
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            return "", "expected a content part object"
        kind = part["type"]
        if not kind or (self.part_types is not None and kind not in self.part_types):
            return ".type", self.unknown_part_text.format(kind=repr(kind))
        if kind in ("text", "refusal") and not isinstance(part.get(kind), str):
            return f".{kind}", f"a {kind!r} part needs a string {kind!r}"
        if kind == "image_url":
            image = part.get("image_url")
            if isinstance(image, str) and self.image_url_as_string:
                return None
            if not isinstance(image, Mapping) or not isinstance(image.get("url"), str):
                return ".image_url", "an 'image_url' part needs an 'image_url' object with a string 'url'"
        return None

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """OC1-OC7 over a well-shaped message list (hook: Mistral has its own rules)."""
        out: list[Problem] = []
        pending: dict[str, int] = {}  # unanswered call ids of the current assistant message -> call index
        answered: dict[str, int] = {}  # answered id -> index of its tool message
        calls_at = -1  # index of the assistant message whose tool run is open (-1: none)
        for i, message in enumerate(messages):
            role = message["role"]
            path = f"messages[{i}]"
            if role == "tool":
                call_id = message.get("tool_call_id", "")
                if calls_at < 0:  # OC2
                    out.append(self._say("OC2", f"{path}.role"))
                elif call_id in answered:  # OC4
                    out.append(self._say("OC4", f"{path}.tool_call_id", id=call_id,
                                         first=f"messages[{answered[call_id]}]", second=path))
                elif call_id not in pending:  # OC3
                    out.append(self._say("OC3", f"{path}.tool_call_id", id=call_id))
                else:
                    del pending[call_id]
                    answered[call_id] = i
            else:
                if pending:
                    out.append(self._unanswered(calls_at, list(pending)))
                pending, answered, calls_at = {}, {}, -1
                if role == "assistant":
                    out.extend(self._check_assistant(message, i, body))
                    if message.get("tool_calls"):
                        calls_at = i
                        pending = self._check_calls(message["tool_calls"], path, out)
            out.extend(self._check_images(message, i))
        if pending:
            out.append(self._unanswered(calls_at, list(pending)))
        return out

    def _say(self, code: str, path: str, **fields: Any) -> Problem:
        """A Problem with the provider's own text for `code`, its variable parts filled in."""
        return self._problem(code, path, self.texts[code].format(**fields))

    def _unanswered(self, index: int, ids: list[str]) -> Problem:
        """OC1 (KI1 for Kimi): calls of messages[index] left without a tool message."""
        return self._say(self.unanswered_code, f"messages[{index}].role", ids=", ".join(ids))

    def _check_calls(self, calls: list[Any], path: str, out: list[Problem]) -> dict[str, int]:
        """OC4-OC6 on one assistant message's calls; returns its ids, each to its call index."""
        ids: dict[str, int] = {}
        for k, call in enumerate(calls):
            call_id = call.get("id", "")
            here = f"{path}.tool_calls[{k}]"
            if call_id in ids:  # OC4: a second call under one id cannot get its own result
                first = f"{path}.tool_calls[{ids[call_id]}]"
                out.append(self._say("OC4", f"{here}.id", id=call_id, first=first, second=here))
            ids.setdefault(call_id, k)
            limit = self.id_max_length
            if limit is not None and len(call_id) > limit:  # OC5
                where = f"{here}.id"
                out.append(self._say("OC5", where, where=where, limit=limit, length=len(call_id)))
            arguments = call["function"].get("arguments")
            if not isinstance(arguments, str):  # OC6
                out.append(self._say("OC6", f"{here}.function.arguments", where=f"{here}.function.arguments",
                                     kind=_json_type(arguments)))
        return ids

    def _check_assistant(self, message: Mapping[str, Any], i: int, body: Mapping[str, Any]) -> list[Problem]:
        """Rules on one assistant message beyond its calls (hook: Kimi's KI2 and KI3)."""
        return []

    def _check_images(self, message: Mapping[str, Any], i: int) -> list[Problem]:
        """OC7 (Mistral's MI11): image parts only in user messages."""
        role = message["role"]
        content = message.get("content")
        if role == "user" or not isinstance(content, list):
            return []
        for j, part in enumerate(content):
            if part.get("type") == "image_url":  # one problem per message, as the API reports it
                return [self._say(self.image_code, f"messages[{i}].content[{j}]", index=i, role=role)]
        return []

    # ------------------------------------------------------------------------------------------ send

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.chat.completions.create(**body)` with an `openai.OpenAI` client (or `AsyncOpenAI`)."""
        create = client.chat.completions.create
        return create(**_sdk_kwargs(create, body))


def _sdk_kwargs(create: Callable[..., Any], body: dict[str, Any]) -> dict[str, Any]:
    """The body as keyword arguments; fields the SDK does not name (Kimi's `thinking`) go in `extra_body`.

    The request on the wire is the same body either way: the SDK merges `extra_body` into the JSON.
    """
    try:
        known = inspect.signature(create).parameters
    except (TypeError, ValueError):  # a callable without a signature: pass everything by name
        return body
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in known.values()):
        return body
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = {**extra, **kwargs.get("extra_body", {})}
    return kwargs


def _json_type(value: Any) -> str:
    """How OpenAI names a JSON value's type in its errors."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else "a value"


PROVIDER = OpenAIChat()
to_request = PROVIDER.to_request
from_request = PROVIDER.from_request
from_response = PROVIDER.from_response
check = PROVIDER.check
send = PROVIDER.send
send_async = PROVIDER.send_async
