"""The body writer: a repaired history as the top-level system blocks and wire messages of a Messages body."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from chatmend.exceptions import UnsupportedError
from chatmend.messages import ChatMessage, FilePart, ImagePart, NativePart, Part, TextPart, ThinkingPart, ToolCall
from chatmend.providers.anthropic.wire import (
    IN_MESSAGES,
    MEDIA_TYPES,
    PROVIDER_NAME,
    SIGNED_THINKING,
    SYSTEM_TAGS,
    THINKING_TAGS,
    blank,
    tagged,
    tool_input,
)
from chatmend.providers.base import IdAssigner, parse_data_url
from chatmend.providers.body import Dropped
from chatmend.providers.kept import kept_field, kept_fields
from chatmend.repair import RepairResult

Block = dict[str, Any]
WireMessage = dict[str, Any]
_T = TypeVar("_T")
ThinkingPolicy = Literal["drop", "keep"]
"""What a writer does with the signed thinking of an assistant message that a change of repair precedes."""

_MEDIA_ALIASES = {"image/jpg": "image/jpeg"}
_ASSISTANT_IMAGES = "Images from the assistant:"


def _text(text: str) -> Block:
    """A text block."""
    return {"type": "text", "text": text}


def _with(block: Block, provider_data: dict[str, Any] | None) -> Block:
    """The block with the fields read from Anthropic that the part does not name (`cache_control`, ...)."""
    extra = kept_fields(provider_data, PROVIDER_NAME)
    if extra:
        block.update(extra)
    return block


def _text_block(part: TextPart) -> Block:
    """A text part as a text block, its `cache_control` and `citations` back in place."""
    return _with(_text(part.text), part.provider_data)


def _image(part: ImagePart) -> Block:
    """An image block: base64 source for inline data (and `data:` URIs), url source otherwise; the block's other
    fields from `provider_data`."""
    if part.data is None:
        url = part.url or ""
        if not url.startswith("data:"):
            return _with({"type": "image", "source": {"type": "url", "url": url}}, part.provider_data)
        inline = parse_data_url(url)
        if inline.data is None:
            raise UnsupportedError("a data: URI image must be base64-encoded", provider=PROVIDER_NAME,
                                   feature="image")
        media, data = inline.media_type or "", inline.data
    else:
        media, data = part.media_type or "", part.data
    media = _MEDIA_ALIASES.get(media, media)
    if media not in MEDIA_TYPES:
        raise UnsupportedError(f"image media type {media!r} is not accepted; expected one of "
                               f"{', '.join(sorted(MEDIA_TYPES))}", provider=PROVIDER_NAME, feature="image")
    return _with({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}},
                 part.provider_data)


def _document(part: FilePart) -> Block:
    """A file as a document block: a base64 PDF, plain text (any `text/*`), a PDF by url, or an Anthropic
    file id; its filename as the title, the block's other fields from `provider_data`."""
    source: Block
    media = part.media_type or ""
    if part.data is not None:
        if media == "application/pdf":
            source = {"type": "base64", "media_type": media, "data": part.data}
        elif media.startswith("text/"):
            try:
                text = base64.b64decode(part.data, validate=True).decode()
            except (binascii.Error, ValueError):
                raise UnsupportedError("a text file's data must be base64 of UTF-8 text", provider=PROVIDER_NAME,
                                       feature="file") from None
            source = {"type": "text", "media_type": "text/plain", "data": text}
        else:
            raise UnsupportedError(f"a document takes a PDF or plain text, not {media!r}", provider=PROVIDER_NAME,
                                   feature="file")
    elif part.url is not None:
        source = {"type": "url", "url": part.url}
    elif part.provider in (None, PROVIDER_NAME):
        source = {"type": "file", "file_id": part.file_id}
    else:
        raise UnsupportedError(f"file id {part.file_id!r} is {part.provider}'s: Anthropic cannot read it",
                               provider=PROVIDER_NAME, feature="file")
    block: Block = {"type": "document", "source": source}
    if part.filename is not None:
        block["title"] = part.filename
    return _with(block, part.provider_data)


def _content_blocks(parts: Sequence[Part]) -> list[Block]:
    """User or tool-result parts as blocks: no blank text (AN9), thinking as tagged text (no signature),
    files as documents, Anthropic's native blocks verbatim."""
    blocks: list[Block] = []
    for part in parts:
        if isinstance(part, TextPart):
            if not blank(part.text):
                blocks.append(_text_block(part))
        elif isinstance(part, ImagePart):
            blocks.append(_image(part))
        elif isinstance(part, NativePart):
            blocks.append(part.data)
        elif isinstance(part, FilePart):
            blocks.append(_document(part))
        elif not blank(part.text):
            blocks.append(_text(tagged(part.text, THINKING_TAGS)))
    return blocks


def _signed(part: ThinkingPart) -> Block | None:
    """The part as a thinking or redacted_thinking block when Anthropic made it (AT3), else None."""
    if part.provider != PROVIDER_NAME:
        return None  # AT3: another provider's signature (or none) fails verification
    if part.redacted:
        if not part.data:
            return None
        return _with({"type": "redacted_thinking", "data": part.data}, part.provider_data)
    if part.signature:
        return _with({"type": "thinking", "thinking": part.text, "signature": part.signature},  # AT4
                     part.provider_data)
    return None


def _produces(message: ChatMessage) -> bool:
    """True when a message puts at least one block on the wire.

    An assistant message of Anthropic thinking alone sends nothing: AT7 strips thinking that nothing follows.
    """
    if message.role == "tool" or message.tool_calls:
        return True
    content = message.content
    if isinstance(content, str):
        return not blank(content)
    if message.role == "assistant":
        return any(isinstance(p, (ImagePart, FilePart, NativePart)) or (
            isinstance(p, (TextPart, ThinkingPart)) and not blank(p.text) and (
                isinstance(p, TextPart) or _signed(p) is None)) for p in content)
    return any(isinstance(p, (ImagePart, FilePart, NativePart)) or (
        isinstance(p, (TextPart, ThinkingPart)) and not blank(p.text)) for p in content)


def _in_messages(message: ChatMessage) -> bool:
    """True for a system message read from a `role: "system"` message inside `messages`."""
    return bool(kept_field(message.provider_data, PROVIDER_NAME, IN_MESSAGES))


def _tool_use(call: ToolCall, wire_id: str) -> Block:
    """A call as a tool_use block, its `cache_control`, `caller` and other fields back in place."""
    block = {"type": "tool_use", "id": wire_id, "name": call.name, "input": tool_input(call.arguments)}
    return _with(block, call.provider_data)


class _Writer:
    """The state of one `to_request` pass: wire ids, output, and the assistant turn being merged.

    In items mode (`repair_body`'s runs) nothing goes to the top-level system, the messages before `lead` are
    written for context only (the calls the run answers) and never share a wire message with the run's, user
    blocks of the run merge into one wire message (a user turn rewritten stays one turn), and thinking stays
    where it stood (only AT7 applies).
    """

    __slots__ = ("dropped", "history", "ids", "in_run", "items", "lead", "lead_out", "on_drop", "out", "policy",
                 "protected", "run_thinking", "thinking_on", "unbound_after")

    def __init__(self, repair: RepairResult, ids: IdAssigner, thinking_on: bool, *, items: bool = False,
                 lead: int = 0, policy: ThinkingPolicy = "keep",
                 on_drop: Callable[[Dropped], object] | None = None) -> None:
        self.history = repair.messages
        self.thinking_on = thinking_on
        self.ids = ids
        """The wire ids of the calls, in order (AN5, mapped by `Provider._wire_ids`; calls are written in history
        order, results by position)."""
        self.out: list[WireMessage] = []
        self.in_run = False
        """True when the last wire message is an assistant one: the next assistant message merges into it."""
        self.run_thinking = False
        """True when the assistant turn being merged opens with a thinking block."""
        self.items = items
        self.lead = lead
        self.lead_out: int | None = None
        """The index in `out` of the first wire message of the run (items mode)."""
        self.policy = policy
        self.on_drop = on_drop
        self.dropped: list[Dropped] = []
        self.unbound_after = _first_change(repair) if policy == "drop" else None
        """The first message repair changed: signed thinking after it is bound to a prefix that is gone."""
        self.protected = last_assistant_run(self.history, lambda message: message.role == "assistant")
        """The first message of the last assistant turn: its thinking is sent as it is (AT1, AT5)."""

    def emit_user(self, content: str | list[Block]) -> None:
        """Append a user message; it closes any assistant turn. In items mode, user blocks of the run join the
        run's user message before them."""
        out = self.out
        if self.items and out and not isinstance(content, str) and self.lead_out is not None and \
                len(out) > self.lead_out:
            last = out[-1]
            if last["role"] == "user" and not isinstance(last["content"], str):
                last["content"].extend(content)
                return
        out.append({"role": "user", "content": content})
        self.in_run = False

    def system_blocks(self, system: str | None) -> tuple[list[Block], int]:
        """The top-level system (the option, then text-only system messages before anything else is sent)."""
        blocks = [_text(system)] if system is not None and not blank(system) else []
        history = self.history
        i = 0
        while i < len(history):
            if history[i].role != "system":
                if _produces(history[i]):
                    break
                i += 1  # a message that sends nothing: the system after it still leads
                continue
            if _in_messages(history[i]):
                break  # it stood inside `messages`: it goes back there
            content = history[i].content
            if isinstance(content, str):
                if not blank(content):
                    blocks.append(_text(content))
            elif all(isinstance(p, TextPart) for p in content):
                blocks.extend(_text_block(p) for p in content
                              if isinstance(p, TextPart) and not blank(p.text))
            else:
                break  # images cannot go in the top-level system: this one goes in place
            i += 1
        return blocks, i

    def run(self, start: int) -> None:
        """Write every message from `start` on, in one pass."""
        history = self.history
        n = len(history)
        i = start
        lead = self.lead
        while i < n:
            if self.lead_out is None and i >= lead:
                self.lead_out = len(self.out)
            message = history[i]
            role = message.role
            if role == "assistant":
                i = self.assistant(i)
                continue
            if role == "user":
                content = message.content
                if isinstance(content, str):
                    if not blank(content):  # AN9: a blank message is not sent at all
                        self.emit_user(content)
                else:
                    blocks = _content_blocks(content)
                    if blocks:
                        self.emit_user(blocks)
            elif role == "system":
                self.system_in_place(message)
            else:
                # unreachable after repair (orphans become notes, results follow their calls); check reports it
                self.results(i, [message.tool_call_id or ""])
            i += 1
        if self.lead_out is None:
            self.lead_out = len(self.out)

    def system_in_place(self, message: ChatMessage) -> None:
        """A later system message in place: where it was a `role: "system"` message, as one again; otherwise as
        user text, tagged so the model knows whose words these are."""
        content = message.content
        if _in_messages(message):
            sent = content if isinstance(content, str) else _content_blocks(content)
            self.out.append({"role": "system", "content": sent})
            self.in_run = False
            return
        if isinstance(content, str):
            if not blank(content):
                self.emit_user(tagged(content, SYSTEM_TAGS))
            return
        text = "\n".join(p.text for p in content if isinstance(p, TextPart))
        blocks = [_text(tagged(text, SYSTEM_TAGS))] if not blank(text) else []
        blocks.extend(_content_blocks([p for p in content if not isinstance(p, (TextPart, ThinkingPart))]))
        if blocks:
            self.emit_user(blocks)

    def assistant(self, i: int) -> int:
        """Write the assistant message at `i`, its results and moved images; the index after them."""
        message = self.history[i]
        calls = message.tool_calls
        content = message.content
        media: list[ImagePart | FilePart] = []
        has_thinking = False
        unbound = self.unbound_after is not None and self.unbound_after < i < self.protected
        if isinstance(content, str):
            blocks: list[Block] = [] if blank(content) else [_text(content)]
        else:
            blocks = []
            for j, part in enumerate(content):
                if isinstance(part, TextPart):
                    if not blank(part.text):
                        blocks.append(_text_block(part))
                elif isinstance(part, NativePart):
                    blocks.append(part.data)
                elif isinstance(part, (ImagePart, FilePart)):
                    media.append(part)
                else:
                    signed = _signed(part)
                    if signed is not None:
                        if unbound:  # bound to a conversation prefix repair changed: the policy drops it
                            self.drop(i, j, signed["type"])
                            continue
                        blocks.append(signed)
                        has_thinking = True
                    elif not blank(part.text):  # another provider's thinking: its text only
                        blocks.append(_text(tagged(part.text, THINKING_TAGS)))
        if has_thinking:
            blocks = self.place_thinking(blocks, i, bool(calls), bool(media))
        if calls:
            ids = self.ids
            call_ids = [ids.next_id(c.name) for c in calls]
            for c, wire_id in zip(calls, call_ids):  # AN4: nothing follows the tool_use blocks in the turn.
                blocks.append(_tool_use(c, wire_id))
                if wire_id != c.id and self.unbound_after is not None and i < self.unbound_after:
                    self.unbound_after = i  # a renamed id changes the prefix of what follows
        if blocks:
            plain = isinstance(content, str) and not calls
            self.out.append({"role": "assistant", "content": content if plain else blocks})
            if not self.in_run:
                # Only a signed block can be thinking, and place_thinking puts any it keeps first.
                self.run_thinking = has_thinking and blocks[0].get("type") in SIGNED_THINKING
                self.in_run = True
        j = i + 1
        if calls:
            j = self.results(j, call_ids)
        if media:  # assistant turns carry no images or documents: they follow, labelled, in a user message
            self.emit_user([_text(_ASSISTANT_IMAGES), *(
                _image(p) if isinstance(p, ImagePart) else _document(p) for p in media)])
        return j

    def drop(self, i: int, j: int, kind: str) -> None:
        """Record a signed thinking block left out by the thinking policy."""
        dropped = Dropped(PROVIDER_NAME, kind, f"messages[{i}].content[{j}]")
        self.dropped.append(dropped)
        if self.on_drop is not None:
            self.on_drop(dropped)

    def place_thinking(self, blocks: list[Block], i: int, calls: bool, images: bool) -> list[Block]:
        """The blocks with Anthropic thinking placed where the rules allow it, dropped where they forbid it.

        Each decision depends only on this message and what came before, or on whether the turn may go on
        (the next kept message is an assistant one, or there is none): prefix-stable either way.
        """
        if not self.items:
            if self.in_run and not self.run_thinking:
                # AT2: merged into a turn that opened without thinking, its thinking could not come first.
                return [b for b in blocks if b.get("type") not in SIGNED_THINKING]
            if not self.thinking_on and not calls and not images and self.may_end(i):
                # AT6: with thinking off, a turn in the final position cannot carry thinking.
                return [b for b in blocks if b.get("type") not in SIGNED_THINKING]
            if not self.in_run and blocks[0].get("type") not in SIGNED_THINKING:
                # AT2: thinking first in the turn, each kind keeping its order.
                blocks = [b for b in blocks if b.get("type") in SIGNED_THINKING] + [
                    b for b in blocks if b.get("type") not in SIGNED_THINKING]
        if not calls:
            # AT7: a turn cannot end on thinking (tool_use blocks follow when there are calls).
            while blocks and blocks[-1].get("type") in SIGNED_THINKING:
                blocks.pop()
        return blocks

    def may_end(self, i: int) -> bool:
        """True unless a message that reaches the wire follows `i` before the next assistant message."""
        history = self.history
        for k in range(i + 1, len(history)):
            later = history[k]
            if later.role == "assistant":
                return True
            if _produces(later):
                return False
        return True

    def results(self, start: int, call_ids: list[str]) -> int:
        """The tool messages from `start` on, which answer calls with wire ids `call_ids` in order, as one user
        message of tool_result blocks; returns the index after them.

        A result's images stay inside its block; `is_error` only when set; the block's other fields from
        `provider_data`. In items mode the results before the run's first message go in a message of their own.
        """
        history = self.history
        blocks: list[Block] = []
        k = start
        n = len(history)
        for wire_id in call_ids:
            if k == n:
                break  # items mode: the run ends before the lead's last results, kept items of their own
            if self.lead_out is None and k >= self.lead:
                if blocks:
                    self.emit_user(blocks)
                    blocks = []
                self.lead_out = len(self.out)
            blocks.append(result_block(history[k], wire_id))
            k += 1
        if blocks:
            self.emit_user(blocks)  # AN1, AN3: the results open the next user turn
        return k


def result_block(message: ChatMessage, wire_id: str) -> Block:
    """A tool message as the tool_result block answering the call with `wire_id`: its images inside it,
    `is_error` only when set, the block's other fields from `provider_data`."""
    content = message.content
    if isinstance(content, str):
        block = text_result_block(wire_id, content, is_error=message.is_error)
    else:
        sent = _content_blocks(content)
        # AN9: a blank result is sent without content.
        block = ({"type": "tool_result", "tool_use_id": wire_id, "content": sent} if sent
                 else {"type": "tool_result", "tool_use_id": wire_id})
        if message.is_error:
            block["is_error"] = True
    return _with(block, message.provider_data)


def text_result_block(wire_id: str, text: str, *, is_error: bool) -> Block:
    """A tool_result block of text (a synthetic result's, with no message to read it from)."""
    # AN9: a blank result is sent without content.
    block: Block = ({"type": "tool_result", "tool_use_id": wire_id, "content": text} if not blank(text)
                    else {"type": "tool_result", "tool_use_id": wire_id})
    if is_error:
        block["is_error"] = True
    return block


def user_blocks(message: ChatMessage) -> list[Block]:
    """A user message's content as the blocks of a user turn (AN9: a blank text is not sent)."""
    content = message.content
    if isinstance(content, str):
        return [] if blank(content) else [_text(content)]
    return _content_blocks(content)


def _first_change(repair: RepairResult) -> int | None:
    """The first output message that is not the input's message at the same place (None: none)."""
    runs = repair.origin_runs
    for k in range(0, len(runs), 2):
        if runs[k + 1] != runs[k]:
            return runs[k]
    return min((r.message_index for r in repair.renamed), default=None)


def last_assistant_run(items: Sequence[_T], is_assistant: Callable[[_T], bool]) -> int:
    """The first of the last run of assistant messages, neutral or wire (len(items) when there is none)."""
    k = len(items)
    while k > 0 and not is_assistant(items[k - 1]):
        k -= 1
    if k == 0:
        return len(items)
    k -= 1
    while k > 0 and is_assistant(items[k - 1]):
        k -= 1
    return k


def write_history(repair: RepairResult, ids: IdAssigner, system: str | None, thinking_on: bool,
                  policy: ThinkingPolicy = "keep", on_drop: Callable[[Dropped], object] | None = None,
                  ) -> tuple[list[Block], list[WireMessage]]:
    """The top-level system blocks and the wire messages of a repaired history.

    The repaired history and the writer die when this returns, while only young collections run: no older
    generation's collection ever scans the messages repair made.
    """
    writer = _Writer(repair, ids, thinking_on, policy=policy, on_drop=on_drop)
    system_blocks, start = writer.system_blocks(system)
    writer.run(start)
    return system_blocks, writer.out


def write_items(repair: RepairResult, ids: IdAssigner, lead: int) -> list[WireMessage]:
    """The wire messages of `repair.messages[lead:]`, a run of `repair_body`, written after the first `lead`
    messages (its context: the calls it answers), in place: no top-level system, thinking where it stood."""
    writer = _Writer(repair, ids, False, items=True, lead=lead)
    writer.run(0)
    assert writer.lead_out is not None
    return writer.out[writer.lead_out:]


def final_turn_lacks_thinking(out: list[WireMessage]) -> bool:
    """AT1: True when the last assistant turn made calls but does not open with a thinking block."""
    k = len(out) - 1
    while k >= 0 and out[k]["role"] != "assistant":
        k -= 1
    if k < 0:
        return False
    last = out[k]["content"]
    if isinstance(last, str) or last[-1].get("type") != "tool_use":
        return False
    while k > 0 and out[k - 1]["role"] == "assistant":
        k -= 1
    first = out[k]["content"]
    return isinstance(first, str) or first[0].get("type") not in SIGNED_THINKING


def thinking_enabled(options: Mapping[str, Any]) -> bool:
    """True when the `thinking` option turns extended or adaptive thinking on."""
    thinking = options.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")

