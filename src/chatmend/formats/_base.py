"""Reading any supported file: detect its format from content, then hand it to that format's reader."""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any

from chatmend import ChatMessage, HistoryError, providers
from chatmend import strict_json as strict_json
from chatmend.files.bodies import adapter, provider_formats, read_provider, wire_json
from chatmend.files.io import MAX_JSON_SIZE, InputError, Progress, bounded_lines, decoded_lines, joined, open_input
from chatmend.files.session import Session, Streamed
from chatmend.formats import neutral
from chatmend.formats._detect import NEUTRAL, detect_document, detect_records
from chatmend.jsonl import message_to_dict
from chatmend.messages import coerce_message
from chatmend.transcripts.stores import file_formats

__all__ = ["TRANSCRIPT_FORMATS", "detect", "formats", "read", "read_lines", "store_formats", "streamed"]

TRANSCRIPT_FORMATS = {name: store.description for name, store in sorted(file_formats().items())}
"""The formats of session files, by name, each declared by the store module that reads it (`FORMAT`)."""


def formats() -> dict[str, str]:
    """Every format `--from` accepts (the registered providers' and session stores' among them), with a one-line
    description."""
    return {NEUTRAL: "the neutral JSON Lines, one message a line", **provider_formats(), **TRANSCRIPT_FORMATS,
            **store_formats()}


def store_formats() -> dict[str, str]:
    """The session stores that are no text file (SQLite databases, folders), by format name."""
    from chatmend.transcripts.stores import registered

    return {cls.name: cls.description for cls in registered()}


_SAMPLE = 200
_NOT_JSON = object()


def read(path: str, fmt: str = "auto", *, progress: bool | None = None, prefer: str | None = None,
         max_size: int = MAX_JSON_SIZE) -> Session:
    """Read `path` (`-` for stdin) as `fmt` (or detect it); raise InputError on bad input.

    `prefer`, a provider's name, is what detection reads a shape as when that provider shares it (plain text
    messages, an OpenAI Chat body for Kimi). `max_size` bounds a line, and a whole JSON document, in bytes.
    """
    with open_input(path) as (handle, size):
        return _read_handle(handle, size, path, fmt, progress, prefer, max_size)


def read_bytes(data: bytes, fmt: str = "auto", *, name: str = "-", prefer: str | None = None,
               max_size: int = MAX_JSON_SIZE) -> Session:
    """`read` of bytes already read (`repair --in-place` reads the file once, for the backup too); `name` is what
    the progress line calls them."""
    return _read_handle(io.BytesIO(data), len(data), name, fmt, None, prefer, max_size)


def _read_handle(
    handle: IO[bytes], size: int | None, name: str, fmt: str, progress: bool | None, prefer: str | None,
    max_size: int,
) -> Session:
    """The Session in `handle`, as `read` and `read_bytes` read it."""
    known = formats()
    if fmt != "auto" and fmt not in known:
        raise InputError(f"unknown format {fmt!r}; expected one of: auto, {', '.join(known)}")
    if fmt in store_formats() and fmt not in TRANSCRIPT_FORMATS:
        raise InputError(f"not a session store of format {fmt!r} (a database or folder of sessions)")
    meter = Progress(name, size, enabled=progress)
    try:
        return read_lines(decoded_lines(bounded_lines(handle, max_size), meter), fmt, prefer, max_size=max_size)
    finally:
        meter.close()


def streamed(handle: IO[bytes], fmt: str = "auto", prefer: str | None = None, *, max_size: int = MAX_JSON_SIZE,
             digest: bool = False) -> Streamed | None:
    """A first pass over a file its format's reader checks and repairs a part at a time without holding it
    (a large Claude Code transcript), or None for a file to read whole (`read`): another format, a file this
    reading does not take, or one `read` refuses (it says why). `handle` must be seekable. With `digest`, the
    first pass hashes the bytes it reads, so that `still_as_read` can tell a file replaced in place from it."""
    if not handle.seekable():
        return None
    try:
        found = _head_format(handle, fmt, prefer, max_size)
    except InputError:
        return None  # `read` says what is wrong with it
    handle.seek(0)
    if found != "claude_code":
        return None
    from chatmend.transcripts import claude_code_stream

    return claude_code_stream.first_pass(handle, max_size, digest=digest)


def _head_format(handle: IO[bytes], fmt: str, prefer: str | None, max_size: int) -> str | None:
    """The format `read` would read a file of JSON Lines as, from its first records (None: not JSON Lines)."""
    if fmt != "auto":
        return fmt
    records = _sample(decoded_lines(bounded_lines(handle, max_size)), [])
    if not records or not isinstance(records[0], Mapping):
        return None  # a JSON document, or nothing `read` reads
    return detect_records(records, prefer)


def detect(lines: Iterable[str]) -> str:
    """The format `read` would pick for these lines (an InputError when unsure)."""
    return read_lines(lines, "auto").format


def _first_json(line: str) -> object:
    """The line as JSON, or a marker when it is not a whole JSON value."""
    try:
        return strict_json.loads(line)
    except ValueError:
        return _NOT_JSON


def _refused_record(line: str, number: int) -> None:
    """Raise the error of a first line that is a JSON object only to a lenient parser (NaN in it, a lone
    surrogate): a record of JSON Lines, refused there, not the start of a document."""
    try:
        strict_json.loads(line)
    except json.JSONDecodeError as exc:
        if exc.msg in ("Extra data",) or not _lenient_object(line) or _lone_surrogate_body(line):
            return
        raise InputError(f"invalid JSON: {exc.msg}", line=number, column=exc.colno) from None


def _lone_surrogate_body(line: str) -> bool:
    """True for a request body on one line that holds a lone surrogate escape: read as a document, where `check`
    finds the string and `repair` mends it (issue #43)."""
    try:
        value = strict_json.loads(line, lone_surrogates=True)
    except ValueError:
        return False
    return isinstance(value, Mapping) and any(isinstance(value.get(k), list) for k in ("messages", "contents",
                                                                                       "input"))


def _lenient_object(line: str) -> bool:
    """True when plain `json.loads` reads the line as an object."""
    try:
        return isinstance(json.loads(line), Mapping)
    except (ValueError, RecursionError):
        return False


def read_lines(lines: Iterable[str], fmt: str, prefer: str | None = None, *, max_size: int = MAX_JSON_SIZE) -> Session:
    """A Session from the file's lines (numbered from 1): JSON Lines, or one JSON document (of at most `max_size`
    bytes)."""
    it = iter(lines)
    head: list[str] = []
    blank = 0
    for line in it:
        head.append(line)
        if line.strip():
            break
        blank += len(line)
        if blank > max_size:  # an endless stream of blank lines (`yes ''`) is not held whole either
            raise InputError("nothing but blank lines for longer than the limit; expected a chat session",
                             line=len(head))
    else:
        raise InputError("empty file; expected a chat session (JSON Lines or a JSON request body)")
    first = _first_json(head[-1])
    if first is _NOT_JSON:
        _refused_record(head[-1], len(head))
    stream = itertools.chain(head, it)
    if isinstance(first, Mapping):
        # A first line that is a whole JSON object: JSON Lines (a one-line body is one record).
        return _read_jsonl(stream, fmt, prefer)
    return _read_document(joined(stream, max_size), fmt, prefer)


def _read_jsonl(stream: Iterator[str], fmt: str, prefer: str | None) -> Session:
    """JSON Lines: detect from the first records, then stream every line to the format's reader."""
    buffered: list[str] = []
    if fmt == "auto":
        records = _sample(stream, buffered)
        try:
            fmt = detect_records(records, prefer)
        except InputError:
            _refuse_bad_line(buffered)  # the line detection stopped at, located, is what is wrong
            raise
    lines = itertools.chain(buffered, stream)
    store = file_formats().get(fmt)
    if store is not None and store.read_lines is None:  # a JSON document on one line
        return _read_document("".join(lines), fmt, prefer)
    if fmt == NEUTRAL:
        return neutral.read(lines)
    if store is not None and store.read_lines is not None:
        return store.read_lines(lines)
    held = list(lines)  # (its items are held whole too)
    items, numbers = _json_values(held, what=f"one {fmt} message a line")
    key = adapter(fmt).list_key
    if len(items) == 1 and isinstance(items[0], Mapping) and key in items[0]:
        return read_provider(fmt, items[0], shape="body", locations=_body_locations(items[0], key),
                             text="".join(held))
    return read_provider(fmt, items, shape="jsonl", locations=[f"line {n}" for n in numbers])


def _sample(stream: Iterator[str], buffered: list[str]) -> list[object]:
    """The first records of JSON Lines that detection reads (up to `_SAMPLE`, up to a line that is not JSON),
    every line taken from `stream` kept in `buffered`."""
    records: list[object] = []
    for line in stream:
        buffered.append(line)
        if not line.strip():
            continue
        value = _first_json(line)
        if value is _NOT_JSON:
            break
        records.append(value)
        if len(records) >= _SAMPLE:
            break
    return records


def _refuse_bad_line(buffered: list[str]) -> None:
    """Raise the located error of the last line read when it is not JSON: the record the sample stopped at (a
    corrupt line 2 of a transcript whose first record alone tells no format)."""
    line = buffered[-1].rstrip("\r\n") if buffered else ""
    if not line.strip():
        return
    try:
        strict_json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}; expected one JSON record a line", line=len(buffered),
                         column=exc.colno if exc.lineno == 1 else 1) from None


def _json_values(lines: Iterable[str], *, what: str) -> tuple[list[Any], list[int]]:
    """Every non-blank line of a provider's JSON Lines as a JSON value (any: the adapter says what it expected),
    with its line number; a bad line is a located InputError. Not `transcripts._records.parse_records`: a store's
    records are objects, kept with their line ends to be written back."""
    items: list[Any] = []
    numbers: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            items.append(strict_json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}; expected {what}", line=number,
                             column=exc.colno if exc.lineno == 1 else 1) from None
        numbers.append(number)
    if not items:
        raise InputError(f"empty file; expected {what}")
    return items, numbers


def _body_locations(body: Mapping[str, Any], key: str) -> list[str]:
    """`messages[0]`, `messages[1]`... for the items of a body's list."""
    items = body.get(key)
    return [f"{key}[{i}]" for i in range(len(items))] if isinstance(items, list) else []


def _read_document(text: str, fmt: str, prefer: str | None) -> Session:
    """One JSON document: a request body or a list of messages."""
    try:
        value = strict_json.loads(text, lone_surrogates=True)  # a provider's `check` finds them, `repair` mends
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}; expected a JSON request body, a JSON list of messages, "
                         "or JSON Lines", line=exc.lineno, column=exc.colno) from None
    if fmt == "auto":
        try:
            fmt = detect_document(value, prefer)
        except InputError:
            fmt = "unknown"  # a lone surrogate where a shape is told (a role) says more than the shape
            if strict_json.lone_surrogate(text) is None:
                raise
    lone = None if fmt in providers.names() else strict_json.lone_surrogate(text)
    if lone is not None:
        where = json.JSONDecodeError("a lone surrogate escape: not valid UTF-8 text", text, lone)
        raise InputError(f"invalid JSON: {where.msg}; expected a JSON request body, a JSON list of messages, "
                         "or JSON Lines", line=where.lineno, column=where.colno)
    store = file_formats().get(fmt)
    if store is not None:
        if store.read_document is None:
            raise InputError(f"a single JSON document; {fmt} sessions are JSON Lines (one record a line)")
        return store.read_document(value, text)
    indent = "\n" in text.strip()
    if fmt == NEUTRAL:
        return _read_neutral_list(value, indent=indent)
    if isinstance(value, Mapping):
        return read_provider(fmt, value, shape="body", locations=_body_locations(value, adapter(fmt).list_key),
                             indent=indent, text=text)
    if isinstance(value, list):
        return read_provider(fmt, value, shape="list", locations=[f"[{i}]" for i in range(len(value))],
                             indent=indent, text=text)
    return read_provider(fmt, value, shape="list", locations=[], indent=indent)


def _read_neutral_list(value: object, *, indent: bool) -> Session:
    """A JSON list of neutral messages (written back as a JSON list)."""
    if not isinstance(value, list):
        raise InputError("expected a JSON list of neutral messages, or neutral JSON Lines")
    messages: list[ChatMessage] = []
    for i, item in enumerate(value):
        try:
            message = coerce_message(item) if isinstance(item, Mapping) else _not_message(item, i)
            messages.append(message)
        except HistoryError as exc:  # located at the item and the field in it: `[3].tool_calls.0.name`
            raise InputError(f"[{i}]{'.' + exc.field if exc.field else ''}: {exc.reason}") from None
    if not messages:
        raise InputError("an empty list; expected a list of messages")

    def write(history: Iterable[ChatMessage]) -> Iterator[str]:
        yield wire_json([message_to_dict(m) for m in history], indent=indent)

    return Session(format=NEUTRAL, messages=messages, where=[f"[{i}]" for i in range(len(messages))],
                   write=write)


def _not_message(item: object, index: int) -> ChatMessage:
    """Raise the error for a list item that is not a JSON object."""
    raise HistoryError(f"expected a message (a JSON object with a 'role'), got {type(item).__name__}",
                       index=index)
