"""Writing Chat Completions messages: one linear pass over a repaired history, plain dicts only."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from chatmend.messages import (
    ChatMessage,
    FilePart,
    ImagePart,
    NativePart,
    Part,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCall,
    replace_unchecked,
)
from chatmend.providers.base import IdAssigner, arguments_json, image_data_url
from chatmend.providers.kept import kept_fields
from chatmend.providers.openai_chat.wire import (
    AUDIO_FORMAT,
    ERROR_PREFIX,
    FORM,
    LEGACY_ID,
    NO_TEXT_FOR_IMAGES,
    OMITTED,
    WITHIN,
    Body,
    ChatWire,
    Waiting,
    WireMessage,
    chunks_text,
    form_of,
    image_url_part,
    moves_to_user,
    own_fields,
    thinking_text,
)
from chatmend.repair import RepairResult


class ChatWriting(ChatWire):
    """The writing hooks (a dialect overrides only what it writes otherwise)."""

    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        """The Chat Completions body: one linear pass over the repaired history, plain dicts only."""
        body: Body = {"model": model, "messages": self._write_messages(result.messages, system, ids)}
        if tools:
            body["tools"] = [self._write_tool(t.name, t.description, t.parameters) for t in tools]
        body.update(options)
        return body

    def _write_messages(self, messages: list[ChatMessage], system: str | None, ids: IdAssigner, *,
                        within: bool = False) -> list[WireMessage]:
        """The wire message list of a repaired history, its calls' wire ids given by `ids`; `within` a body (a run
        of `repair_body`), as they are written after a message of the body, and not finished as a body ends."""
        waiting: Waiting = deque()  # the tool messages after an assistant message answer its calls in order
        out: list[WireMessage] = [WITHIN] if within else []
        images: list[dict[str, Any]] = []  # OC7: image parts waiting for the run of tool messages to end
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
                out.append(self._write_result(message, waiting, images))
            elif role == "assistant":
                self._on_assistant(out)
                self._write_assistant(message, ids, waiting, images, out)
            elif role == "user":
                content = message.content
                if message.provider_data is None or self.name not in message.provider_data:
                    wire: WireMessage = {"role": "user", "content": content if isinstance(content, str)
                                         else self._user_parts(content) or ""}  # thinking only: nothing to send
                else:
                    wire = self._write_own("user", message, self._user_parts)
                self._append_turn(out, wire)
            else:
                self._write_system(message, out)
        if images:
            self._append_turn(out, {"role": "user", "content": images})
        if within:
            return out[1:]  # (the body's own end is `_finish`'s, and `check`'s after a repair: base.repair_body)
        self._finish(out)
        return out

    def _write_list(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner]) -> list[Any]:
        """The whole message list of `repair_body` written anew, as a body's (its start and end Mistral's too)."""
        return self._write_messages(messages, None, ids())

    def _write_items(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner], lead: int) -> list[Any]:
        """A run of `repair_body` written as it stands inside the body: after a message, so that no turn is put
        before it (Mistral's role order), and not finished as if the body ended with it."""
        if not lead:
            return self._write_messages(messages, None, ids(), within=True)
        # the lead is context only, kept in the body as it was: the parts it would move to a user message stay
        # there, so they are neither counted nor written again after the run's results
        context = [_without_moved_parts(m) for m in messages[:lead]]
        written = self._write_messages([*context, *messages[lead:]], None, ids(), within=True)
        return written[len(self._write_messages(context, None, ids(), within=True)):]

    def _user_parts(self, content: Sequence[Part]) -> list[dict[str, Any]]:
        """A user message's content parts: all but thinking, which a user message has no place for."""
        out = []
        for p in content:
            if type(p) is not ThinkingPart:
                part = self._write_part(p)
                if part is not None:
                    out.append(part)
        return out

    def _write_system(self, message: ChatMessage, out: list[WireMessage]) -> None:
        """A system (or developer) message; its images and files follow in a user message (OC7)."""
        own = kept_fields(message.provider_data, self.name)
        content = message.content
        split = (content, []) if isinstance(content, str) else self._split_plain(content)
        plain = split is not None
        text, pics = split if split is not None else self._text_and_moved(content)  # type: ignore[arg-type]
        if own is None and (plain or not (isinstance(content, tuple) and self._needs_list(content))):
            self._append_turn(out, {"role": "system", "content": text})
        else:
            wire = self._write_own("system", message, self._listed)
            if wire.get("role") == "developer" and not self.developer_role:
                wire["role"] = "system"
            self._append_turn(out, wire)
        if pics:  # OC7: a system message carries no images
            self._append_turn(out, {"role": "user", "content": self._labelled("the system message", pics)})

    def _listed(self, content: Sequence[Part]) -> list[dict[str, Any]]:
        """The parts a system, tool or assistant message keeps in its own content list (text, refusals, parts
        kept verbatim, Mistral's thinking chunks), written."""
        out = []
        for p in content:
            if moves_to_user(p) or self._is_field(p):
                continue
            if isinstance(p, ThinkingPart):
                if self._is_chunk(p):
                    out.append(self._write_chunk(p))
                continue
            part = self._write_part(p)
            if part is not None:
                out.append(part)
        return out

    def _write_own(self, role: str, message: ChatMessage,
                   parts: Callable[[Sequence[Part]], list[dict[str, Any]]]) -> WireMessage:
        """A system, developer or user message read from this provider's own body: as it was spelled."""
        own = kept_fields(message.provider_data, self.name) or {}
        form = own.get(FORM) or {}
        wire: WireMessage = {"role": form.get("role", role)}
        value = self._wire_content(role, message.content, form.get("content"), parts)
        if value is not OMITTED:
            wire["content"] = value
        wire.update(own_fields(own))
        return wire

    def _wire_content(self, role: str, content: str | tuple[Part, ...], spelled: str | None,
                      parts: Callable[[Sequence[Part]], list[dict[str, Any]]]) -> Any:
        """A message's `content` as the wire spelled it (`spelled`, the form's `content`; None: as the writer
        does: a user's list as a list, any other as a string, an assistant's empty one as null), or `OMITTED`.
        What `_content_form` reads back."""
        as_list = spelled == "list" or (spelled is None and not isinstance(content, str) and (
            role == "user" or self._needs_list(content)))
        if not as_list:
            text = content if isinstance(content, str) else self._text_and_moved(content)[0]
            empty = not text and (isinstance(content, str) or not self._needs_list(content))
            if empty and spelled == "omitted":
                return OMITTED
            if empty and (spelled == "null" or (role == "assistant" and spelled != "string")):
                return None
            return text
        if isinstance(content, str):
            return [{"type": "text", "text": content}] if content else []
        return parts(content)

    def _append_turn(self, out: list[WireMessage], message: WireMessage) -> None:
        """Append a user or system message to `out` (hook: Mistral inserts turns where its role order needs them,
        and sends a later system message as user text)."""
        out.append(message)

    def _on_assistant(self, out: list[WireMessage]) -> None:
        """Called before every kept assistant message, written or not (hook for Mistral's role order)."""

    def _finish(self, out: list[WireMessage]) -> None:
        """Called once after the last message (hook: Mistral never ends on an assistant message)."""

    def _labelled(self, source: str, pics: Sequence[ImagePart | FilePart]) -> list[dict[str, Any]]:
        """Image (and file) parts moved out of a non-user message, after a line that says where they come from."""
        out: list[dict[str, Any]] = [{"type": "text", "text": f"Images from {source}:"}]
        for p in pics:
            part = image_url_part(p) if isinstance(p, ImagePart) and p.provider_data is None else self._write_part(p)
            if part is not None:
                out.append(part)
        return out

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
        own = kept_fields(message.provider_data, self.name) if message.provider_data is not None else None
        calls = message.tool_calls
        fields: dict[str, Any] = {}  # message fields held in the content (the refusal, audio)
        reasoning = ""
        pics: Sequence[ImagePart | FilePart] | None
        value: Any
        split = None if own is not None else (content, None) if isinstance(content, str) else \
            self._split_plain(content)
        if split is not None:  # the common case: text and images
            text, pics = split
            value = text or None
        else:
            pics = None if isinstance(content, str) else self._text_and_moved(content)[1]
            if not isinstance(content, str):
                fields = self._content_fields(content)
                reasoning = self._own_reasoning(content)
            value = self._wire_content("assistant", content, form_of(own).get("content"), self._listed)
        if not calls and not value and not fields and not reasoning and not own:
            if pics:
                # OC7: an assistant message carries no images; nothing else is left of it to send.
                self._append_turn(out, {"role": "user", "content": self._labelled("the assistant", pics)})
            return  # thinking only: Chat Completions has no field for it (KI3: empty is rejected)
        wire: WireMessage = {"role": "assistant"}
        if value is not OMITTED:
            wire["content"] = value
        wire.update(fields)
        if self.reasoning_provider is not None:
            # Any provider's thinking goes back as its text only (signatures are valid only where made).
            thinking = "" if isinstance(content, str) else thinking_text(content)
            if thinking or (calls and (calls[0].provider_data is None or any(not self._is_legacy(c) for c in calls))):
                # KI2: every tool-call message carries it, "" when the history has no thinking to give back
                wire["reasoning_content"] = thinking
        elif reasoning:
            wire["reasoning_content"] = reasoning  # DeepSeek-style: this provider's own, sent back
        if calls:
            self._write_calls(calls, ids, waiting, wire)
        if own:
            wire.update(own_fields(own))
        out.append(wire)
        if pics:
            label = self._labelled("the assistant", pics)
            if calls:
                images.extend(label)  # OC1: tool messages come right after the calls
            else:
                self._append_turn(out, {"role": "user", "content": label})

    def _write_calls(self, calls: Sequence[ToolCall], ids: IdAssigner, waiting: Waiting, wire: WireMessage) -> None:
        """An assistant message's calls into `wire` (its `tool_calls`, or the legacy `function_call`), with wire
        ids; each call's (wire id, wire name) queues in `waiting` for the tool message that answers it."""
        wire_calls = []
        for call in calls:
            name = call.name
            wire_name = self._wire_name(name)
            call_id = ids.next_id(name)
            if call.provider_data is None or self.name not in call.provider_data:
                waiting.append((call_id, wire_name))
                wire_calls.append({
                    "id": call_id,
                    "type": "function",
                    "function": {"name": wire_name, "arguments": arguments_json(call)},  # OC6
                })
                continue
            written = self._write_call(call, call_id, wire_name)
            if written is None:  # the legacy `function_call` field
                waiting.append((LEGACY_ID, wire_name))
                wire["function_call"] = self._write_function_call(call, wire_name)
            else:
                waiting.append((call_id, wire_name))
                wire_calls.append(written)
        if wire_calls:
            wire["tool_calls"] = wire_calls

    def _write_call(self, call: ToolCall, call_id: str, wire_name: str) -> dict[str, Any] | None:
        """A call read from this provider's own body, as it was spelled (None: the legacy `function_call`)."""
        own = kept_fields(call.provider_data, self.name) or {}
        form = form_of(own)
        if form.get("field") == "function_call":
            return None
        rest = own_fields(own, ("function", "custom"))
        kind = form.get("type", "function")
        if kind == "custom":
            custom = {"name": wire_name, "input": arguments_json(call), **(own.get("custom") or {})}
            return {"id": call_id, "type": "custom", "custom": custom, **rest}
        if kind not in ("function", "omitted"):  # a type not known here: kept as it was, under its wire id
            return {"id": call_id, "type": kind, **own_fields(own)}
        arguments: Any = arguments_json(call)
        if form.get("arguments") == "object" and call.raw_arguments is None and isinstance(call.arguments, dict):
            arguments = call.arguments
        function = {"name": wire_name, "arguments": arguments, **(own.get("function") or {})}
        if form.get("arguments") == "omitted" and call.arguments == {} and call.raw_arguments is None:
            del function["arguments"]
        if kind == "omitted":
            return {"id": call_id, "function": function, **rest}
        return {"id": call_id, "type": "function", "function": function, **rest}

    def _write_function_call(self, call: ToolCall, wire_name: str) -> dict[str, Any]:
        """The legacy `function_call` field of an assistant message."""
        own = kept_fields(call.provider_data, self.name) or {}
        return {"name": wire_name, "arguments": arguments_json(call), **own_fields(own)}

    def _write_result(self, message: ChatMessage, waiting: Waiting, images: list[dict[str, Any]]) -> WireMessage:
        """A `role:"tool"` message answering the first call still waiting, with text only; its images queue for a
        user message after the run. A legacy `function_call`'s result is a `role:"function"` message."""
        call_id, wire_name = waiting.popleft()
        content = message.content
        own = kept_fields(message.provider_data, self.name) if message.provider_data is not None else None
        if own is None and isinstance(content, str):
            return self._text_result(call_id, wire_name, content, is_error=message.is_error)
        split = (content, []) if isinstance(content, str) else self._split_plain(content)
        plain = split is not None
        text, pics = split if split is not None else self._text_and_moved(content)  # type: ignore[arg-type]
        if pics:
            images.extend(self._labelled(f"tool result {call_id or wire_name}", pics))  # OC7
            text = text or NO_TEXT_FOR_IMAGES
        wire = self._text_result(call_id, wire_name, text, is_error=message.is_error)
        if own is None and (plain or not (isinstance(content, tuple) and self._needs_list(content))):
            return wire
        form = form_of(own)
        if not message.is_error and not pics:
            value = self._wire_content("tool", content, form.get("content"), self._listed)
            if value is OMITTED:
                del wire["content"]
            else:
                wire["content"] = value
        elif isinstance(content, tuple):
            # an error's prefix, a moved image's note: the text is written anew, the parts kept verbatim follow it
            kept = self._listed([p for p in content if not isinstance(p, TextPart)])
            if kept:
                wire["content"] = [{"type": "text", "text": wire["content"]}, *kept]
        if form.get("name") == "omitted":
            wire.pop("name", None)
        if own:
            wire.update(own_fields(own))
        return wire

    def _text_result(self, call_id: str, wire_name: str, text: str, *, is_error: bool) -> WireMessage:
        """A result of text answering `call_id`: a `role:"tool"` message (a legacy `function_call`'s is a
        `role:"function"` message); an error's text after `ERROR_PREFIX` (no error flag in Chat Completions)."""
        if is_error:
            text = ERROR_PREFIX + text
        if call_id == LEGACY_ID:
            return {"role": "function", "name": wire_name, "content": text}
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

    # ------------------------------------------------------------------------------- write: parts and forms

    def _split_plain(self, content: Sequence[Part]) -> tuple[str, list[ImagePart]] | None:
        """The text parts joined by newlines and the images of a content of text, images and others' thinking with
        nothing kept for this provider (what the writer writes as it always did, in one pass), or None for any other
        content."""
        texts: list[str] = []
        pics: list[ImagePart] = []
        own_thinking = self.name if self.reasoning_provider is None else None
        for p in content:
            kind = type(p)
            if kind is TextPart:
                if p.provider_data is not None:  # type: ignore[union-attr]
                    return None
                texts.append(p.text)  # type: ignore[union-attr]
            elif kind is ImagePart:
                if p.provider_data is not None:  # type: ignore[union-attr]
                    return None
                pics.append(p)  # type: ignore[arg-type]
            elif kind is not ThinkingPart or (
                    own_thinking is not None and p.provider == own_thinking):  # type: ignore[union-attr]
                return None  # a file, a part kept verbatim, this provider's own reasoning
        return "\n".join(texts), pics

    def _own_reasoning(self, content: Sequence[Part]) -> str:
        """This provider's own `reasoning_content` text in a content (DeepSeek-style), joined."""
        return "\n".join(p.text for p in content if isinstance(p, ThinkingPart) and p.provider == self.name
                         and p.text and not self._is_chunk(p))

    def _content_fields(self, content: Sequence[Part]) -> dict[str, Any]:
        """The message fields a content holds: the assistant's `refusal` text, and fields kept verbatim (`audio`)."""
        fields: dict[str, Any] = {}
        for p in content:
            if type(p) is NativePart and "type" not in p.data:
                fields.update(p.data)
            elif isinstance(p, TextPart) and self._is_field(p):
                fields["refusal"] = p.text
        return fields

    def _write_part(self, part: Part) -> dict[str, Any] | None:
        """One content part as this provider writes it (None: thinking, which goes elsewhere or nowhere)."""
        if type(part) is TextPart:
            own = kept_fields(part.provider_data, self.name)
            if own is None:
                return {"type": "text", "text": part.text}
            if form_of(own).get("type") == "refusal":
                return {"type": "refusal", "refusal": part.text, **own_fields(own)}
            return {"type": "text", "text": part.text, **own_fields(own)}
        if type(part) is ImagePart:
            own = kept_fields(part.provider_data, self.name)
            if own is None:
                return image_url_part(part)
            url = image_data_url(part)
            if form_of(own).get("image_url") == "string":
                return {"type": "image_url", "image_url": url, **own_fields(own, ("image_url",))}
            inner = {"url": url, **(own.get("image_url") or {})}
            return {"type": "image_url", "image_url": inner, **own_fields(own, ("image_url",))}
        if type(part) is FilePart:
            return self._write_file(part)
        if type(part) is NativePart:
            return dict(part.data) if "type" in part.data else None  # (message fields: `_content_fields`)
        return None

    def _write_file(self, part: FilePart) -> dict[str, Any]:
        """A file: inline audio as `input_audio`, the rest as a `file` part; a file Chat cannot carry (by URL, or
        uploaded to another provider) as a line of text naming it."""
        own = kept_fields(part.provider_data, self.name) or {}
        form = form_of(own)
        media = part.media_type or ""
        audio = form.get("type") == "input_audio" or (
            not own and part.data is not None and media.startswith("audio/"))
        if audio and part.data is not None:
            inner = {"data": part.data, "format": AUDIO_FORMAT.get(media, media.removeprefix("audio/")),
                     **(own.get("input_audio") or {})}
            return {"type": "input_audio", "input_audio": inner, **own_fields(own, ("input_audio",))}
        file: dict[str, Any] = {}
        if part.data is not None:
            file["file_data"] = part.data if form.get("file_data") == "base64" else f"data:{media};base64,{part.data}"
        elif part.file_id is not None and (part.provider is None or self.accepts_native(part.provider)):
            file["file_id"] = part.file_id
        else:
            where = part.url if part.url is not None else f"file id {part.file_id} at {part.provider}"
            named = f" {part.filename}" if part.filename else ""
            return {"type": "text", "text": f"[file{named}: {where}]"}
        if part.filename is not None:
            file["filename"] = part.filename
        file.update(own.get("file") or {})
        return {"type": "file", "file": file, **own_fields(own, ("file",))}

    def _write_chunk(self, part: ThinkingPart) -> dict[str, Any]:
        """One of Mistral's `thinking` chunks, as it came when its text is unchanged."""
        own = kept_fields(part.provider_data, self.name) or {}
        chunks = own.get("thinking")
        if not (isinstance(chunks, list) and chunks_text(chunks) == part.text) and not (
                isinstance(chunks, str) and chunks == part.text):
            chunks = [{"type": "text", "text": part.text}]
        wire: dict[str, Any] = {"type": "thinking", "thinking": chunks}
        if part.signature is not None:
            wire["signature"] = part.signature
        wire.update(own_fields(own, ("thinking",)))
        return wire


def _without_moved_parts(message: ChatMessage) -> ChatMessage:
    """The message without the parts the writer moves to a user message after it (images, files)."""
    content = message.content
    if isinstance(content, str) or not any(map(moves_to_user, content)):
        return message
    return replace_unchecked(message, content=tuple(p for p in content if not moves_to_user(p)))
