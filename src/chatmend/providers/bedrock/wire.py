"""The vocabulary writing, reading and checking share: the provider's name, limits, formats, tags and fillers."""

from __future__ import annotations

import re

PROVIDER_NAME = "bedrock"
"""The registry name (`Bedrock.name`): the `provider` of the reasoning Bedrock returned, and of its native blocks."""
RAW_ARGUMENTS = "_raw_arguments"
"""The `toolUse.input` key that carries arguments which are not a JSON object, verbatim (`input` is sent to the
model as an object)."""
ID_MAX_LENGTH = 64
"""The longest `toolUseId` (botocore's `ToolUseId`: min 1, max 64)."""
ID_ALPHABET = "a-zA-Z0-9_.:-"
"""The characters of a `toolUseId` (botocore 1.44.8's `ToolUseId` pattern `[a-zA-Z0-9_.:-]+`), as the inside of a
regex class. The API reference page shows the stricter `[a-zA-Z0-9_-]+` (docs/rules.md §8); the service model
is what the endpoint validates against."""
ID = re.compile(f"[{ID_ALPHABET}]{{1,{ID_MAX_LENGTH}}}")
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""botocore's `ToolName`: 1-64 characters of `[a-zA-Z0-9_-]`."""

IMAGE_FORMATS: dict[str, str] = {"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif",
                                 "image/webp": "webp"}
"""Image media types to botocore's `ImageFormat`."""
DOCUMENT_FORMATS: dict[str, str] = {
    "application/pdf": "pdf", "text/csv": "csv", "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html", "text/plain": "txt", "text/markdown": "md",
}
"""Document media types to botocore's `DocumentFormat`."""
VIDEO_FORMATS: dict[str, str] = {"video/x-matroska": "mkv", "video/quicktime": "mov", "video/mp4": "mp4",
                                 "video/webm": "webm", "video/x-flv": "flv", "video/mpeg": "mpeg",
                                 "video/x-ms-wmv": "wmv", "video/3gpp": "three_gp"}
"""Video media types to botocore's `VideoFormat` (`mpg` reads back as `video/mpeg`)."""
AUDIO_FORMATS: dict[str, str] = {"audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/opus": "opus", "audio/wav": "wav",
                                 "audio/x-wav": "wav", "audio/aac": "aac", "audio/flac": "flac", "audio/mp4": "mp4",
                                 "audio/ogg": "ogg", "audio/webm": "webm", "audio/x-matroska": "mka",
                                 "audio/m4a": "m4a", "audio/pcm": "pcm"}
"""Audio media types to botocore's `AudioFormat`."""
MEDIA_KINDS = ("image", "document", "video", "audio")
"""The content blocks carrying media as `{format, source}`."""


def media_type_of_format(kind: str, fmt: str) -> str:
    """The media type of a block's `format` (the first media type mapping to it, else `kind/format`)."""
    table = {"image": IMAGE_FORMATS, "document": DOCUMENT_FORMATS, "video": VIDEO_FORMATS,
             "audio": AUDIO_FORMATS}.get(kind, {})
    for media_type, name in table.items():
        if name == fmt:
            return media_type
    if kind == "document":
        return f"application/{fmt}"
    return f"{kind}/{fmt}"


USER_FILLER = "Continue."
"""BR3/BR4: the user turn put before an assistant turn that would open the body or follow another assistant turn."""
ASSISTANT_FILLER = "(no text)"
"""BR3: the assistant turn of an assistant message that puts nothing on the wire (its images moved to the next user
turn, or thinking that cannot be sent), so the user turns around it stay apart and prefix-stable."""
ERROR_WITHOUT_OUTPUT = "The tool failed without output."
"""BR6: the text of a failed result with no content (`status: error` needs content)."""

STRICT_ID_ALPHABET = "a-zA-Z0-9_-"
"""The `toolUseId` characters a Claude model behind Converse takes (BR10: Anthropic's own `^[a-zA-Z0-9_-]+$`, which
the AWS API reference also shows)."""
STRICT_ID = re.compile(f"[{STRICT_ID_ALPHABET}]+")

CLAUDE_MARKS = ("anthropic.", "claude")
"""A model id naming a Claude model (`anthropic.claude-...`, `us.anthropic.claude-...`, an ARN of one): BR10."""
UNMIXED_MARKS = ("meta.llama",)
"""Model ids of the models that refuse other blocks beside tool blocks in one turn (BR9; OBS
strands-agents/harness-sdk#1223, llama4-maverick-17b-instruct; langchain-ai/langchain-aws#141 and
quarkiverse/quarkus-langchain4j#1983 give no model). Others may too: the list grows with evidence."""


def model_family(model: object) -> str | None:
    """`"claude"` (BR10), `"unmixed"` (BR9) or None for a Converse model id (a region prefix, an ARN of a
    foundation model or inference profile named after it, any case)."""
    if not isinstance(model, str):
        return None
    lowered = model.lower()
    if any(mark in lowered for mark in CLAUDE_MARKS):
        return "claude"
    if any(mark in lowered for mark in UNMIXED_MARKS):
        return "unmixed"
    return None
