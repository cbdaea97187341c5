"""The body writer: a repaired history as the top-level system blocks and wire messages of a Messages body."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatmend.exceptions import UnsupportedError
from chatmend.messages import ChatMessage, ImagePart, Part, TextPart, ThinkingPart
from chatmend.providers.anthropic.wire import (
    MEDIA_TYPES,
    PROVIDER_NAME,
    RAW_ARGUMENTS,
    SYSTEM_CLOSE,
    SYSTEM_OPEN,
    THINKING,
    THINKING_CLOSE,
    THINKING_OPEN,
)
from chatmend.providers.base import IdAssigner, parse_data_url
from chatmend.repair import RepairResult

Block = dict[str, Any]
WireMessage = dict[str, Any]

_MEDIA_ALIASES = {"image/jpg": "image/jpeg"}
_ASSISTANT_IMAGES = "Images from the assistant:"


def _blank(text: str) -> bool:
    """True for text the API refuses as a text block (AN9: empty or whitespace only)."""
    return not text or text.isspace()


def _text(text: str) -> Block:
    """A text block."""
    return {"type": "text", "text": text}


def _image(part: ImagePart) -> Block:
    """An image block: base64 source for inline data (and `data:` URIs), url source otherwise."""
    if part.data is None:
        url = part.url or ""
        if not url.startswith("data:"):
            return {"type": "image", "source": {"type": "url", "url": url}}
        part = parse_data_url(url)
        if part.data is None:
            raise UnsupportedError("a data: URI image must be base64-encoded", provider=PROVIDER_NAME,
                                   feature="image")
    media = part.media_type or ""
    media = _MEDIA_ALIASES.get(media, media)
    if media not in MEDIA_TYPES:
        raise UnsupportedError(f"image media type {media!r} is not accepted; expected one of "
                               f"{', '.join(sorted(MEDIA_TYPES))}", provider=PROVIDER_NAME, feature="image")
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": part.data}}


def _content_blocks(parts: Sequence[Part]) -> list[Block]:
    """User or tool-result parts as blocks: no blank text (AN9), thinking as tagged text (no signature)."""
    blocks: list[Block] = []
    for part in parts:
        if isinstance(part, ImagePart):
            blocks.append(_image(part))
        elif isinstance(part, (TextPart, ThinkingPart)) and not _blank(part.text):
            text = part.text if isinstance(part, TextPart) else THINKING_OPEN + part.text + THINKING_CLOSE
            blocks.append(_text(text))
    return blocks


def _signed(part: ThinkingPart) -> Block | None:
    """The part as a thinking or redacted_thinking block when Anthropic made it (AT3), else None."""
    if part.provider != PROVIDER_NAME:
        return None  # AT3: another provider's signature (or none) fails verification
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.data} if part.data else None
    if part.signature:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}  # AT4
    return None


def _input(arguments: dict[str, Any] | str) -> dict[str, Any]:
    """`tool_use.input`: the object, or verbatim text under RAW_ARGUMENTS (input must be an object)."""
    if isinstance(arguments, dict):
        return arguments
    return {} if _blank(arguments) else {RAW_ARGUMENTS: arguments}


def _produces(message: ChatMessage) -> bool:
    """True when a message puts at least one block on the wire.

    An assistant message of Anthropic thinking alone sends nothing: AT7 strips thinking that nothing follows.
    """
    if message.role == "tool" or message.tool_calls:
        return True
    content = message.content
    if isinstance(content, str):
        return not _blank(content)
    if message.role == "assistant":
        return any(isinstance(p, ImagePart) or (isinstance(p, (TextPart, ThinkingPart)) and not _blank(p.text) and (
            isinstance(p, TextPart) or _signed(p) is None)) for p in content)
    return any(isinstance(p, ImagePart) or (isinstance(p, (TextPart, ThinkingPart)) and not _blank(p.text))
               for p in content)


class _Writer:
    """The state of one `to_request` pass: wire ids, output, and the assistant turn being merged."""

    __slots__ = ("history", "ids", "in_run", "out", "run_thinking", "thinking_on")

    def __init__(self, repair: RepairResult, ids: IdAssigner, thinking_on: bool) -> None:
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

    def emit_user(self, content: str | list[Block]) -> None:
        """Append a user message; it closes any assistant turn."""
        self.out.append({"role": "user", "content": content})
        self.in_run = False

    def system_blocks(self, system: str | None) -> tuple[list[Block], int]:
        """The top-level system (the option, then text-only system messages before anything else is sent)."""
        blocks = [_text(system)] if system is not None and not _blank(system) else []
        history = self.history
        i = 0
        while i < len(history):
            if history[i].role != "system":
                if _produces(history[i]):
                    break
                i += 1  # a message that sends nothing: the system after it still leads
                continue
            content = history[i].content
            if isinstance(content, str):
                if not _blank(content):
                    blocks.append(_text(content))
            elif all(isinstance(p, TextPart) for p in content):
                blocks.extend(_text(p.text) for p in content
                              if isinstance(p, TextPart) and not _blank(p.text))
            else:
                break  # images cannot go in the top-level system: this one goes in place
            i += 1
        return blocks, i

    def run(self, start: int) -> None:
        """Write every message from `start` on, in one pass."""
        history = self.history
        n = len(history)
        i = start
        while i < n:
            message = history[i]
            role = message.role
            if role == "assistant":
                i = self.assistant(i)
                continue
            if role == "user":
                content = message.content
                if isinstance(content, str):
                    if not _blank(content):  # AN9: a blank message is not sent at all
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

    def system_in_place(self, message: ChatMessage) -> None:
        """A later system message as user text in place, tagged so the model knows whose words these are."""
        content = message.content
        if isinstance(content, str):
            if not _blank(content):
                self.emit_user(SYSTEM_OPEN + content + SYSTEM_CLOSE)
            return
        text = "\n".join(p.text for p in content if isinstance(p, TextPart))
        blocks = [_text(SYSTEM_OPEN + text + SYSTEM_CLOSE)] if not _blank(text) else []
        blocks.extend(_image(p) for p in content if isinstance(p, ImagePart))
        if blocks:
            self.emit_user(blocks)

    def assistant(self, i: int) -> int:
        """Write the assistant message at `i`, its results and moved images; the index after them."""
        message = self.history[i]
        calls = message.tool_calls
        content = message.content
        images: list[ImagePart] = []
        has_thinking = False
        if isinstance(content, str):
            blocks: list[Block] = [{"type": "text", "text": content}] if content and not content.isspace() else []
        else:
            blocks = []
            for part in content:
                if isinstance(part, TextPart):
                    if not _blank(part.text):
                        blocks.append(_text(part.text))
                elif isinstance(part, ImagePart):
                    images.append(part)
                elif isinstance(part, ThinkingPart):
                    signed = _signed(part)
                    if signed is not None:
                        blocks.append(signed)
                        has_thinking = True
                    elif not _blank(part.text):  # another provider's thinking: its text only
                        blocks.append(_text(THINKING_OPEN + part.text + THINKING_CLOSE))
        if has_thinking:
            blocks = self.place_thinking(blocks, i, bool(calls), bool(images))
        if calls:
            ids = self.ids
            call_ids = [ids.next_id(c.name) for c in calls]
            for c, wire_id in zip(calls, call_ids):  # AN4: nothing follows the tool_use blocks in the turn.
                arguments = c.arguments
                blocks.append({"type": "tool_use", "id": wire_id, "name": c.name,
                               "input": arguments if type(arguments) is dict else _input(arguments)})
        if blocks:
            plain = isinstance(content, str) and not calls
            self.out.append({"role": "assistant", "content": content if plain else blocks})
            if not self.in_run:
                # Only a signed block can be thinking, and place_thinking puts any it keeps first.
                self.run_thinking = has_thinking and blocks[0]["type"] in THINKING
                self.in_run = True
        j = i + 1
        if calls:
            j = self.results(j, call_ids)
        if images:  # assistant turns carry no images: they follow, labelled, in a user message
            self.emit_user([_text(_ASSISTANT_IMAGES), *(_image(p) for p in images)])
        return j

    def place_thinking(self, blocks: list[Block], i: int, calls: bool, images: bool) -> list[Block]:
        """The blocks with Anthropic thinking placed where the rules allow it, dropped where they forbid it.

        Each decision depends only on this message and what came before, or on whether the turn may go on
        (the next kept message is an assistant one, or there is none): prefix-stable either way.
        """
        if self.in_run and not self.run_thinking:
            # AT2: merged into a turn that opened without thinking, its thinking could not come first.
            return [b for b in blocks if b["type"] not in THINKING]
        if not self.thinking_on and not calls and not images and self.may_end(i):
            # AT6: with thinking off, a turn in the final position cannot carry thinking.
            return [b for b in blocks if b["type"] not in THINKING]
        if not self.in_run and blocks[0]["type"] not in THINKING:
            # AT2: thinking first in the turn, each kind keeping its order.
            blocks = [b for b in blocks if b["type"] in THINKING] + [
                b for b in blocks if b["type"] not in THINKING]
        if not calls:
            # AT7: a turn cannot end on thinking (tool_use blocks follow when there are calls).
            while blocks and blocks[-1]["type"] in THINKING:
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

        A result's images stay inside its block; `is_error` only when set.
        """
        history = self.history
        blocks: list[Block] = []
        k = start
        for wire_id in call_ids:
            message = history[k]
            k += 1
            content = message.content
            if isinstance(content, str):
                sent: str | list[Block] = content if content and not content.isspace() else ""  # AN9
            else:
                sent = _content_blocks(content)
            # AN9: a blank result is sent without content.
            block: Block = ({"type": "tool_result", "tool_use_id": wire_id, "content": sent} if sent
                            else {"type": "tool_result", "tool_use_id": wire_id})
            if message.is_error:
                block["is_error"] = True
            blocks.append(block)
        if blocks:
            self.emit_user(blocks)  # AN1, AN3: the results open the next user turn
        return k


def write_history(repair: RepairResult, ids: IdAssigner, system: str | None,
                  thinking_on: bool) -> tuple[list[Block], list[WireMessage]]:
    """The top-level system blocks and the wire messages of a repaired history.

    The repaired history and the writer die when this returns, while only young collections run: no older
    generation's collection ever scans the messages repair made.
    """
    writer = _Writer(repair, ids, thinking_on)
    system_blocks, start = writer.system_blocks(system)
    writer.run(start)
    return system_blocks, writer.out


def final_turn_lacks_thinking(out: list[WireMessage]) -> bool:
    """AT1: True when the last assistant turn made calls but does not open with a thinking block."""
    k = len(out) - 1
    while k >= 0 and out[k]["role"] != "assistant":
        k -= 1
    if k < 0:
        return False
    last = out[k]["content"]
    if isinstance(last, str) or last[-1]["type"] != "tool_use":
        return False
    while k > 0 and out[k - 1]["role"] == "assistant":
        k -= 1
    first = out[k]["content"]
    return isinstance(first, str) or first[0]["type"] not in THINKING


def thinking_enabled(options: Mapping[str, Any]) -> bool:
    """True when the `thinking` option turns extended or adaptive thinking on."""
    thinking = options.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")

