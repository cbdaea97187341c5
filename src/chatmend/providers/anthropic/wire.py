"""The vocabulary writing, reading and checking share: the provider's name, limits, patterns and tags."""

from __future__ import annotations

import re
from typing import Any

from chatmend.strict_json import copy_json

PROVIDER_NAME = "anthropic"
"""The registry name (`Anthropic.name`), and the `provider` of the thinking Anthropic made."""
RAW_ARGUMENTS = "_raw_arguments"
"""The `input` key that carries arguments which are not a JSON object, verbatim."""
ID_MAX_LENGTH = 64
"""The longest `tool_use.id` the API accepts (AN5)."""
ID_ALPHABET = "a-zA-Z0-9_-"
"""The characters of a `tool_use.id` (AN5: `^[a-zA-Z0-9_-]+$`), as the inside of a regex class."""
MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
"""The image media types the API accepts."""
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # AN8
"""The tool names the API accepts (AN8)."""
THINKING = ("thinking", "redacted_thinking")
"""The block types of thinking."""
THINKING_TAGS = ("<thinking>\n", "\n</thinking>")
"""The tag lines around thinking sent as text (another provider's, or unsigned), here and on Bedrock (whose Claude
models read them as Anthropic's do)."""
SYSTEM_TAGS = ("<system>\n", "\n</system>")
"""The tag lines around a later system message sent as user text, here and on Bedrock."""
SIGNED_THINKING = THINKING
"""The same (a tuple: a native block's `type` may be any JSON value, a list too, which a set cannot look up)."""
IN_MESSAGES = "in_messages"
"""The `provider_data` key of a system message read from a `role: "system"` wire message inside `messages`
(Claude Code 2.1.3xx sends them): it is written back there, in place, not into the top-level `system`."""
DOCUMENT_MEDIA_TYPES = {"base64": "application/pdf", "text": "text/plain"}
"""A document source's `type` -> the one media type it takes (a url source is a PDF's, a file source any)."""


def blank(text: str) -> bool:
    """True for text the API refuses as a text block (AN9: empty or whitespace only), and Converse too (BR8)."""
    return not text or text.isspace()


def tool_input(arguments: dict[str, Any] | str) -> dict[str, Any]:
    """A call's `input`, here and on Bedrock, which takes an object: a copy of the arguments (a caller editing the
    body must not edit the history), or text that is not one verbatim under RAW_ARGUMENTS."""
    if isinstance(arguments, dict):
        return copy_json(arguments)  # type: ignore[no-any-return]
    return {} if blank(arguments) else {RAW_ARGUMENTS: arguments}


def tagged(text: str, tags: tuple[str, str]) -> str:
    """`text` between the tag lines `tags`."""
    return tags[0] + text + tags[1]


def untagged(text: str, tags: tuple[str, str]) -> str | None:
    """The text between the tag lines `tags`, or None when `text` is not wrapped in them."""
    opening, closing = tags
    if text.startswith(opening) and text.endswith(closing) and len(text) >= len(opening) + len(closing):
        return text[len(opening): len(text) - len(closing)]
    return None
