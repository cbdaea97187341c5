"""The wire vocabulary the writer, the reader and the checker share: constants, field names, model versions."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

BRIDGE_TEXT = "(continue)"
"""The text of a user turn inserted where a turn rule needs one (GE2); `from_request` drops these turns."""
RAW_ARGUMENTS_KEY = "_raw"
"""The key under which call arguments that are not a JSON object travel (`args` must be an object)."""
IMAGES_LABEL = "Images from tool result {id}:"
"""The text before a result's images when they travel after the responses; `from_request` reads it back."""
NAME = "gemini"
"""The provider's name: on problems and errors, and as the key of what it keeps on calls and thoughts."""
_GEMINI_VERSION = re.compile(r"gemini-(\d+)")
# fmt: off
DATA_FIELDS = ("text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
               "codeExecutionResult", "toolCall", "toolResponse")
# fmt: on
"""The fields that hold a part's data: a part has exactly one (GE0)."""
# fmt: off
PART_METADATA = ("thought", "thoughtSignature", "videoMetadata", "mediaResolution", "partMetadata",
                 "audioTranscription", "mediaProcessing", "speechMetadata", "documentMetadata",
                 "spreadsheetMetadata", "audioMetadata")
# fmt: on
"""google-genai's other `Part` fields: what a part carries beside its data. A part of only these has no data
(GE0); a part with a key in neither list is of a kind newer than chatmend, and passes."""
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")

# fmt: off
MEDIA_TYPES = {
    "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp", "heic": "image/heic",
    "heif": "image/heif", "gif": "image/gif",
    "wav": "audio/wav", "mp3": "audio/mp3", "aiff": "audio/aiff", "aac": "audio/aac", "ogg": "audio/ogg",
    "flac": "audio/flac",
    "mp4": "video/mp4", "mpeg": "video/mpeg", "mov": "video/mov", "avi": "video/avi", "flv": "video/x-flv",
    "mpg": "video/mpg", "webm": "video/webm", "wmv": "video/wmv", "3gp": "video/3gpp",
    "pdf": "application/pdf", "txt": "text/plain",
}
# fmt: on
"""The MIME type of a file URI by its suffix, in Gemini's own spelling of the types it documents for media, PDF
and text: a fixed table, so that a body is the same bytes on every machine (the host's MIME tables differ)."""


def media_type_of_uri(uri: str) -> str | None:
    """The MIME type a file URI names: a `data:` URI's own, else its path's suffix in `MEDIA_TYPES`."""
    if uri[:5].lower() == "data:":
        declared = re.split(r"[;,]", uri[5:], maxsplit=1)[0].strip().lower()
        return declared or None
    path = re.split(r"[?#]", uri, maxsplit=1)[0]
    name = path.rsplit("/", 1)[-1]
    return MEDIA_TYPES.get(name.rsplit(".", 1)[-1].lower()) if "." in name else None


def _snake(name: str) -> str:
    """`inlineData` as the SDK sometimes sends it, `inline_data` (the API accepts both)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


_SNAKE = {
    name: _snake(name)
    for name in (
        *DATA_FIELDS,
        *PART_METADATA,
        "mimeType",
        "fileUri",
        "systemInstruction",
        "displayName",
        "functionDeclarations",
    )
}


def spellings(*names: str) -> frozenset[str]:
    """Field names in both spellings the API accepts (`inlineData`, `inline_data`)."""
    return frozenset(n for name in names for n in (name, _SNAKE.get(name) or _snake(name)))


def either_spelling(data: Mapping[str, Any], name: str) -> Any:
    """A field by its camelCase name, or by its snake_case twin (the API and the SDK accept both)."""
    value = data.get(name)
    if value is None:
        snake = _SNAKE.get(name)
        if snake is not None:
            value = data.get(snake)
    return value


def response_text(response: Any) -> tuple[str, bool]:
    """A `functionResponse.response` as a tool result's text, and whether it is an error: `{"output": x}` and
    `{"error": x}` give `x` (as JSON text unless a string), any other object its JSON text, none an empty text."""
    if response is None:
        return "", False
    is_error = False
    value: Any = response
    if isinstance(response, Mapping) and len(response) == 1 and ("output" in response or "error" in response):
        is_error = "error" in response
        value = response["error"] if is_error else response["output"]
    return (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)), is_error


def is_base64(text: object) -> bool:
    """True when the API can decode `text` as bytes (standard or URL-safe base64, padding optional)."""
    return isinstance(text, str) and len(text.rstrip("=")) % 4 != 1 and _BASE64.fullmatch(text) is not None


def is_gemini3(model: str | None) -> bool:
    """True for Gemini 3 and later: they enforce thought signatures (GE4) and take images in responses."""
    found = _GEMINI_VERSION.match(str(model or "").rsplit("/", 1)[-1])
    return found is not None and int(found.group(1)) >= 3
