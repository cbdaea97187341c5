"""Reading Chat Completions messages back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from chatmend.exceptions import ReadError, error_context
from chatmend.messages import (
    ChatMessage,
    FilePart,
    ImagePart,
    NativePart,
    Part,
    Role,
    TextPart,
    ThinkingPart,
    ToolCall,
)
from chatmend.providers.base import (
    arguments_text,
    image_data_url,
    messages_of,
    parse_data_url,
    split_data_url,
    to_plain,
)
from chatmend.providers.kept import kept_fields, unnamed_fields
from chatmend.providers.openai_chat.wire import (
    ASSISTANT_FIELDS,
    AUDIO_FORMAT,
    AUDIO_MEDIA,
    CALL_FIELDS,
    CONTENT_FIELDS,
    FORM,
    PLAIN_ASSISTANT,
    ChatWire,
    chunks_text,
    file_media_type,
    form_of,
    named_function,
    stated_call_type,
    with_raw_arguments,
)
from chatmend.strict_json import brief


class ChatReading(ChatWire):
    """The reading hooks (a dialect overrides only what it reads otherwise)."""

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """The history of a saved body (or its `messages` list); the body's `tools` are not history."""
        data = self._plain_request(data)  # SDK objects (a `ChatCompletionMessage`) as their dicts
        with error_context(provider=self.name):
            return self._read_items(messages_of(data), raw=False)

    def _sdk_item(self, item: Any) -> Any:
        """An SDK message's dict as the wire has it: its `content=None` is the wire's null, which `model_dump`
        (exclude_none) leaves out, and the reader tells a null content from an omitted one."""
        if isinstance(item, dict) and item.get("role") == "assistant" and "content" not in item:
            item = {"role": "assistant", "content": None, **{k: v for k, v in item.items() if k != "role"}}
        return super()._sdk_item(item)

    def _read_groups(self, items: list[Any]) -> list[list[ChatMessage]]:
        """One neutral message per wire message (`repair_body` keeps each one repair leaves alone)."""
        with error_context(provider=self.name):
            return [[m] for m in self._read_items(items, raw=True)]

    def _read_items(self, items: list[Any], *, raw: bool) -> list[ChatMessage]:
        """Every wire message as a ChatMessage, in order (with `raw`, each function call keeps its arguments text).

        A legacy `function_call` has no id: it gets `call_{i}_{k}`, the id repair gives an empty one, and the
        `role:"function"` messages after it answer it under that id."""
        history = []
        legacy = ""  # the id of the last assistant message's legacy call
        calls: dict[str, str] = {}  # the last assistant message's call ids, each to its tool's name
        for i, item in enumerate(items):
            with error_context(path=f"messages[{i}]"):
                role = item.get("role") if isinstance(item, Mapping) else None
                if role == "function":
                    message = self._read_function_result(item, legacy)
                elif role == "assistant":
                    message = self._read_assistant(item, at=i)
                    legacy = next((c.id for c in message.tool_calls if self._is_legacy(c)), "")
                    calls = {c.id: c.name for c in message.tool_calls}
                    message = with_raw_arguments(message, item) if raw else _unusual_arguments_kept(message, item)
                else:
                    message = self._read_message(item)
                    if role == "tool" and self.tool_message_name:
                        message = self._named_result(message, item, calls)
                history.append(message)
        return history

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
                return self._read_assistant(message, reply=True)

    def _pd(self, rest: dict[str, Any], form: Mapping[str, str] | None = None) -> dict[str, Any] | None:
        """A `provider_data` of this provider from a wire object's other fields and its spelling (None: neither)."""
        if form:
            rest = {**rest, FORM: dict(form)}
        return {self.name: rest} if rest else None

    def _read_message(self, item: Any) -> ChatMessage:
        """One wire message as a ChatMessage."""
        if not isinstance(item, Mapping):
            raise ReadError(f"expected a message object, got {type(item).__name__}")
        role = item.get("role")
        if role in ("system", "developer", "user"):
            content = self._read_content(item.get("content"))
            neutral: Role = "user" if role == "user" else "system"
            if len(item) == 2 and isinstance(item.get("content"), str) and role != "developer":
                return ChatMessage(role=neutral, content=content)  # the common case: nothing else to keep
            form: dict[str, str] = {"role": "developer"} if role == "developer" else {}
            spelled = self._content_form(item, content, neutral)
            if spelled is not None:
                form["content"] = spelled
            return ChatMessage(role=neutral, content=content,
                               provider_data=self._pd(unnamed_fields(item, CONTENT_FIELDS), form))
        if role == "assistant":
            return self._read_assistant(item)
        if role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str):
                raise ReadError("a tool message needs a string 'tool_call_id'", path="tool_call_id")
            name = item.get("name")
            tool_name = name if isinstance(name, str) else None
            content = self._read_content(item.get("content"))
            named = ("role", "tool_call_id", "content", "name") if self.tool_message_name and tool_name else \
                ("role", "tool_call_id", "content")
            rest = unnamed_fields(item, named) if len(item) != len(named) or "content" not in item else {}
            spelled = self._content_form(item, content, "tool")
            return ChatMessage(role="tool", tool_call_id=call_id, tool_name=tool_name, content=content,
                               provider_data=self._pd(rest, {"content": spelled} if spelled else None))
        if role == "function":
            return self._read_function_result(item, "")
        raise ReadError(f"unsupported role {brief(role)}; expected system, developer, user, assistant, tool or "
                        "function", path="role")

    def _named_result(self, message: ChatMessage, item: Mapping[str, Any], calls: Mapping[str, str]) -> ChatMessage:
        """A tool message of a provider that names results (Kimi, Mistral), with the name kept when it is not the
        one the writer gives (its call's), or the lack of one."""
        name = item.get("name")
        if isinstance(name, str) and name == self._wire_name(calls.get(message.tool_call_id or "", name)):
            return message
        own = dict(kept_fields(message.provider_data, self.name) or {})
        if name is None:
            own[FORM] = {**form_of(own), "name": "omitted"}
        else:
            own["name"] = name
        return replace(message, provider_data={**(message.provider_data or {}), self.name: own})

    def _read_function_result(self, item: Mapping[str, Any], answering: str) -> ChatMessage:
        """A legacy `role:"function"` message: the result of the legacy `function_call` before it."""
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ReadError("a function message needs a string 'name'", path="name")
        content = self._read_content(item.get("content"))
        spelled = self._content_form(item, content, "tool")
        return ChatMessage(role="tool", tool_call_id=answering, tool_name=name, content=content,
                           provider_data=self._pd(unnamed_fields(item, ("role", "name", "content")),
                                                  {"content": spelled} if spelled else None))

    def _content_form(self, item: Mapping[str, Any], content: str | tuple[Part, ...], role: str) -> str | None:
        """How the wire spelled a message's content, when `_wire_content` would spell the neutral one otherwise
        (None: alike)."""
        if "content" not in item:
            return "omitted"
        wire = item["content"]
        if isinstance(content, str):
            as_list, text = False, content
        else:
            as_list = role == "user" or self._needs_list(content)
            text = self._text_and_moved(content)[0]
        if wire is None:
            return None if role == "assistant" and not as_list and not text else "null"
        if isinstance(wire, str):
            return "string" if as_list or (role == "assistant" and not wire) else None
        return None if as_list else "list"

    def _read_assistant(self, item: Mapping[str, Any], at: int = 0, *, reply: bool = False) -> ChatMessage:
        """An assistant message (of a body or a reply) with its calls, its refusal, audio and reasoning; `at` is
        its index in the body (a legacy `function_call`'s id). Of a `reply`, only what it says is kept: not how
        its content was spelled, nor its empty fields (`refusal: null`, `annotations: []`)."""
        content = self._read_content(item.get("content"))
        calls = item.get("tool_calls")
        if calls is None:
            calls = []
        if not isinstance(calls, list):
            raise ReadError("'tool_calls' must be a list", path="tool_calls")
        tool_calls = [self._read_call(c, k) for k, c in enumerate(calls)]
        if item.keys() <= PLAIN_ASSISTANT and (calls or "tool_calls" not in item) and (
                reply or self._content_form(item, content, "assistant") is None):
            return ChatMessage(role="assistant", content=content, tool_calls=tuple(tool_calls))  # the common case
        function_call = item.get("function_call")
        if function_call is not None:
            tool_calls.append(self._read_function_call(function_call, f"call_{at}_{len(tool_calls)}"))
        rest = unnamed_fields(item, ASSISTANT_FIELDS)
        extra: list[Part] = []  # parts of the message fields that hold content
        reasoning = item.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            field = {self.name: {FORM: {"field": "reasoning_content"}}} if self.thinking_parts else None
            extra.append(ThinkingPart(text=reasoning, provider=self.name, provider_data=field))
        elif "reasoning_content" in item and not (self.reasoning_provider and reasoning == "" and calls):
            rest["reasoning_content"] = reasoning  # (Kimi writes "" on every message with tool calls: KI2)
        refusal = item.get("refusal")
        if isinstance(refusal, str) and refusal:
            extra.append(TextPart(text=refusal, provider_data={self.name: {FORM: {"field": "refusal"}}}))
        elif "refusal" in item:
            rest["refusal"] = refusal
        audio = item.get("audio")
        if audio is not None:
            extra.append(NativePart(provider=self.name, data={"audio": audio}))
        elif "audio" in item:
            rest["audio"] = None
        if "function_call" in item and function_call is None:
            rest["function_call"] = None
        if "tool_calls" in item and not calls:
            rest["tool_calls"] = calls
        if extra:
            wire_parts = list(content) if not isinstance(content, str) else (
                [TextPart(text=content)] if content else [])
            thinking = [p for p in extra if isinstance(p, ThinkingPart)]
            content = (*thinking, *wire_parts, *(p for p in extra if not isinstance(p, ThinkingPart)))
        spelled = None if reply else self._content_form(item, content, "assistant")
        form = {"content": spelled} if spelled else {}
        if reply:
            rest = {k: v for k, v in rest.items() if v is not None and v != []}
        return ChatMessage(role="assistant", content=content, tool_calls=tuple(tool_calls),
                           provider_data=self._pd(rest, form))

    def _read_call(self, call: Any, k: int) -> ToolCall:
        """A function or custom tool call (a call of a type not known here is kept as it was, under its id and a
        name); JSON-text arguments become an object when they parse."""
        path = f"tool_calls[{k}]"
        if not isinstance(call, Mapping):
            raise ReadError("a tool call needs a 'function' with a non-empty 'name'", path=path)
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):  # (`check`: SHAPE)
            raise ReadError(f"'id' must be a string, got {type(call_id).__name__}", path=f"{path}.id")
        kind = stated_call_type(call)
        if kind == "custom":
            return self._read_custom_call(call, call_id or "", path)
        if kind != "function":
            if kind is None:
                raise ReadError("a tool call's 'type' must be a non-empty string", path=f"{path}.type")
            payload = call.get(kind)
            name = payload.get("name") if isinstance(payload, Mapping) else None
            return ToolCall(id=call_id or "", name=name if isinstance(name, str) and name else kind,
                            provider_data=self._pd(unnamed_fields(call, ("id", "type")), {"type": kind}))
        function = named_function(call)
        if function is None:
            raise ReadError("a tool call needs a 'function' with a non-empty 'name'", path=path)
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, (str, dict)):  # (`check`: OC6)
            raise ReadError(f"'arguments' must be JSON text (or an object), got {type(arguments).__name__}",
                            path=f"{path}.function.arguments")
        parsed = arguments if arguments is not None else {}
        if call.keys() == CALL_FIELDS and len(function) == 2 and isinstance(arguments, str):
            return ToolCall(id=call_id or "", name=function["name"], arguments=parsed)  # the common case
        rest = unnamed_fields(call, CALL_FIELDS)
        inner = unnamed_fields(function, ("name", "arguments"))
        form = {}
        if "type" not in call:
            form["type"] = "omitted"
        if isinstance(arguments, dict):
            form["arguments"] = "object"
        elif "arguments" not in function:
            form["arguments"] = "omitted"
        elif arguments is None:
            inner["arguments"] = None
        if inner:
            rest["function"] = inner
        return ToolCall(id=call_id or "", name=function["name"], arguments=parsed,
                        provider_data=self._pd(rest, form))

    def _read_custom_call(self, call: Mapping[str, Any], call_id: str, path: str) -> ToolCall:
        """A custom tool call: free-text `input` for a custom tool, answered by a tool message like any call."""
        custom = call.get("custom")
        name = custom.get("name") if isinstance(custom, Mapping) else None
        text = custom.get("input") if isinstance(custom, Mapping) else None
        if not isinstance(custom, Mapping) or not isinstance(name, str) or not name or not isinstance(text, str):
            raise ReadError("a custom tool call needs a 'custom' object with a non-empty 'name' and a string 'input'",
                            path=f"{path}.custom")
        rest = unnamed_fields(call, ("id", "type", "custom"))
        inner = unnamed_fields(custom, ("name", "input"))
        if inner:
            rest["custom"] = inner
        return ToolCall(id=call_id, name=name, arguments=text, raw_arguments=text,
                        provider_data=self._pd(rest, {"type": "custom"}))

    def _read_function_call(self, function_call: Any, call_id: str) -> ToolCall:
        """The legacy `function_call` field of an assistant message, as a call under `call_id`."""
        name = function_call.get("name") if isinstance(function_call, Mapping) else None
        arguments = function_call.get("arguments") if isinstance(function_call, Mapping) else None
        if not isinstance(function_call, Mapping) or not isinstance(name, str) or not name or \
                not isinstance(arguments, str):
            raise ReadError("'function_call' needs a non-empty 'name' and string 'arguments'", path="function_call")
        return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=arguments,
                        provider_data=self._pd(unnamed_fields(function_call, ("name", "arguments")),
                                               {"field": "function_call"}))

    def _read_content(self, content: Any) -> str | tuple[Part, ...]:
        """A string, null, or a list of parts."""
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        if not isinstance(content, list):
            raise ReadError(f"content must be a string or a list of parts, got {type(content).__name__}",
                            path="content")
        return tuple(self._read_part(part, j) for j, part in enumerate(content))

    def _read_part(self, part: Any, j: int) -> Part:
        """One content part: text, refusal, image, file and audio parts modelled, any other kept verbatim."""
        path = f"content[{j}]"
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            if len(part) == 2:
                return TextPart(text=part["text"])
            return TextPart(text=part["text"], provider_data=self._pd(unnamed_fields(part, ("type", "text"))))
        if kind == "refusal" and isinstance(part.get("refusal"), str):
            return TextPart(text=part["refusal"],
                            provider_data=self._pd(unnamed_fields(part, ("type", "refusal")), {"type": "refusal"}))
        if kind == "image_url":
            image = self._read_image(part)
            if image is not None:
                return image
        if kind == "input_audio" or kind == "file":
            file = self._read_file(part, kind)
            return file if file is not None else NativePart(provider=self.name, data=part)
        if kind == "thinking" and self.thinking_parts:
            return self._read_chunk(part)
        problem = self._part_problem(part) if kind in ("text", "refusal", "image_url") or not kind or \
            not isinstance(kind, str) else None
        if problem is not None:  # a kind read here with a malformed field: what `check` says of it
            field, text = problem
            raise ReadError(text, path=path + field)
        return NativePart(provider=self.name, data=part)  # a type the model does not name: kept as it is

    def _read_image(self, part: Mapping[str, Any]) -> ImagePart | None:
        """An `image_url` part (its `detail` and other fields kept), or None when it holds no URL."""
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        if not isinstance(url, str) or not url:
            return None  # malformed: `_part_problem` says where
        parsed = parse_data_url(url)
        if parsed.data is not None and image_data_url(parsed) != url:
            parsed = ImagePart(url=url)  # a data URI the neutral form would spell otherwise: kept as a URL
        rest = unnamed_fields(part, ("type", "image_url"))
        form = None
        if isinstance(image, Mapping):
            inner = unnamed_fields(image, ("url",))
            if inner:
                rest["image_url"] = inner
        else:
            form = {"image_url": "string"}
        if not rest and form is None:
            return parsed
        return ImagePart(media_type=parsed.media_type, data=parsed.data, url=parsed.url,
                         provider_data=self._pd(rest, form))

    def _read_file(self, part: Mapping[str, Any], kind: str) -> FilePart | None:
        """An `input_audio` or `file` part as a FilePart (its other fields kept), or None when it does not map."""
        inner = part.get(kind)
        if not isinstance(inner, Mapping):
            return None
        rest = unnamed_fields(part, ("type", kind))
        if kind == "input_audio":
            data, fmt = inner.get("data"), inner.get("format")
            if not isinstance(data, str) or not isinstance(fmt, str) or not fmt:
                return None
            media = AUDIO_MEDIA.get(fmt, f"audio/{fmt}")
            kept = unnamed_fields(inner, ("data", "format"))
            if AUDIO_FORMAT.get(media, media.removeprefix("audio/")) != fmt:
                kept["format"] = fmt
            if kept:
                rest["input_audio"] = kept
            return FilePart(data=data, media_type=media, provider_data=self._pd(rest, {"type": "input_audio"}))
        data, file_id, filename = inner.get("file_data"), inner.get("file_id"), inner.get("filename")
        if (data is None) == (file_id is None) or not isinstance(data or file_id, str) or (
                filename is not None and not isinstance(filename, str)):
            return None
        kept = unnamed_fields(inner, ("file_data", "file_id", "filename"))
        if kept:
            rest["file"] = kept
        if file_id is not None:
            return FilePart(file_id=file_id, filename=filename, provider=self.name, provider_data=self._pd(rest))
        assert isinstance(data, str)
        inline = split_data_url(data)
        if inline is None or not inline[0]:  # bare base64, as the SDK's docstring has it (or a URI naming no type)
            return FilePart(data=data, media_type=file_media_type(inner), filename=filename,
                            provider_data=self._pd(rest, {"file_data": "base64"}))
        return FilePart(data=inline[1], media_type=inline[0], filename=filename, provider_data=self._pd(rest))

    def _read_chunk(self, part: Mapping[str, Any]) -> ThinkingPart:
        """One of Mistral's `thinking` chunks: its text, signature, and its chunks when not plain."""
        chunks = part.get("thinking")
        text = chunks_text(chunks) if isinstance(chunks, list) else str(chunks or "")
        signature = part.get("signature")
        named = ("type", "thinking", "signature") if isinstance(signature, str) else ("type", "thinking")
        rest = unnamed_fields(part, named)
        if chunks != [{"type": "text", "text": text}]:
            rest["thinking"] = chunks
        return ThinkingPart(text=text, signature=signature if isinstance(signature, str) else None,
                            provider=self.name, provider_data=self._pd(rest))


def _unusual_arguments_kept(message: ChatMessage, item: Mapping[str, Any]) -> ChatMessage:
    """The message with each function call's arguments text kept (`raw_arguments`) where it is not the text the
    writer makes of the parsed arguments (`{"city": "Rome"}`, not `{"city":"Rome"}`): a body written from it, in
    any format whose arguments are text, holds the call's text byte for byte; a history read from a body of
    compact arguments equals the one it was written from."""
    kept = with_raw_arguments(message, item)
    if kept is message:
        return message
    calls = tuple(new if old.raw_arguments is None and new.raw_arguments is not None
                  and new.raw_arguments != arguments_text(new.arguments) else old
                  for old, new in zip(message.tool_calls, kept.tool_calls))
    if all(a is b for a, b in zip(calls, message.tool_calls)):
        return message
    return replace(message, tool_calls=calls)
