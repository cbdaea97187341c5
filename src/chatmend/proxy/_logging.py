"""The proxy's log: one formatter for every record (the proxy's own, uvicorn's, httpx2's), secrets redacted.

The proxy's own records carry their fields (`record.chatmend`); `--log-json` writes every record as one JSON
object a line, the text form `TIME LEVEL LOGGER: MESSAGE`. Whatever a record says, the formatter writes no key:
query parameters that carry one (Gemini's `?key=`), the values of credential headers (`authorization`,
`x-api-key`, `x-goog-api-key`, the proxy's own token) and bearer tokens are replaced by `[redacted]`.

Nothing here runs at import: `configure` is called by the `chatmend proxy` command, which owns its process.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Iterable
from typing import Any

__all__ = ["LOGGER", "LogFormatter", "configure", "redact"]

LOGGER = "chatmend.proxy"
"""The proxy's own logger: INFO by default."""

LIBRARY_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access", "httpx2", "httpcore", "httpcore2", "httpx")
"""The loggers of the libraries the proxy runs on: WARNING unless `--log-level debug`."""

REDACTED = "[redacted]"
_SECRET_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key",
                   "x-chatmend-token", "x-amz-security-token", "cookie")
_HEADER_NAMES = "|".join(re.escape(h) for h in _SECRET_HEADERS)
_SECRET_PARAMS = r"key|api[-_]?key|access[-_]?token|token|auth|x-amz-signature|x-amz-credential|" \
                 r"x-amz-security-token|signature|sig"
_PATTERNS = (
    # a query parameter that carries a key: `?key=...`, `&X-Amz-Signature=...`
    (re.compile(rf"([?&;](?:{_SECRET_PARAMS})=)[^&#\s\"'<>]*", re.IGNORECASE), rf"\1{REDACTED}"),
    # a credential header written quoted, as a Python repr writes a header pair: ('x-api-key', 'v'), b'...'
    (re.compile(rf"""(b?['"](?:{_HEADER_NAMES})['"]\s*[:,]\s*b?)(['"])(?:(?!\2).)*\2""", re.IGNORECASE),
     rf"\1'{REDACTED}'"),
    # a credential header written as text: `authorization: Bearer ...`, `x-api-key=...` (to the end of the line)
    (re.compile(rf"((?<![\w-])(?:{_HEADER_NAMES})\s*[:=]\s*)[^\n\"']+", re.IGNORECASE), rf"\1{REDACTED}"),
    (re.compile(r"(\bBearer\s+)[^\s\"',;]+", re.IGNORECASE), rf"\1{REDACTED}"),
    (re.compile(r"(AWS4-HMAC-SHA256\s+)[^\n\"']+"), rf"\1{REDACTED}"),
    # key shapes of the providers, wherever they appear
    (re.compile(r"\b(?:sk-[A-Za-z0-9_-]{8,}|AIza[0-9A-Za-z_-]{20,})"), REDACTED),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` without the keys it may carry: the `secrets` given, and every value in a place keys go."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class LogFormatter(logging.Formatter):
    """Every record as one line of text, or one JSON object (`json_lines`), redacted."""

    def __init__(self, *, json_lines: bool, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._json = json_lines
        self._secrets = tuple(s for s in secrets if s)

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = dict(getattr(record, "chatmend", None) or {})
        message = redact(record.getMessage(), self._secrets)
        error = None
        if record.exc_info and record.exc_info[1] is not None:
            error = redact(self.formatException(record.exc_info), self._secrets)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        if self._json:
            line: dict[str, Any] = {"time": stamp, "level": record.levelname.lower(), "logger": record.name,
                                    "message": message}
            line.update((k, _redacted_value(v, self._secrets)) for k, v in fields.items())
            if error is not None:
                line["traceback"] = error
            return json.dumps(line, ensure_ascii=False, default=str)
        text = f"{stamp} {record.levelname} {record.name}: {message}"
        return text if error is None else f"{text}\n{error}"


def _redacted_value(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, list):
        return [_redacted_value(v, secrets) for v in value]
    return value


def _not_a_stream_cut_short(record: logging.LogRecord) -> bool:
    """False for uvicorn's line on a response the proxy ended early on purpose (an upstream stream that broke:
    the proxy's own `upstream_broken` line says so, with the upstream's status)."""
    return not (record.name.startswith("uvicorn") and record.msg == _INCOMPLETE)


_INCOMPLETE = "ASGI callable returned without completing response."


def configure(*, json_lines: bool, level: str = "info", secrets: Iterable[str] = ()) -> None:
    """The logging of the `chatmend proxy` process: one stderr handler with `LogFormatter` on the root logger
    (every record goes through it), the proxy's logger at `level`, the libraries' at WARNING (DEBUG when `level`
    is debug). Called only by the command, which owns its process."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogFormatter(json_lines=json_lines, secrets=secrets))
    handler.addFilter(_not_a_stream_cut_short)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    numeric = logging.getLevelName(level.upper())
    logging.getLogger(LOGGER).setLevel(numeric)
    for name in LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        library.setLevel(logging.DEBUG if numeric <= logging.DEBUG else logging.WARNING)
        for old in list(library.handlers):  # uvicorn's own handlers, if any: every record goes through ours
            library.removeHandler(old)
        library.propagate = True
