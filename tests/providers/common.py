"""Checks every provider's tests share: SDK type validation that really runs, and what a history said."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from hypothesis import reject

from chatmend import ChatMessage, ImagePart, TextPart
from chatmend.exceptions import Problem, UnsupportedError
from chatmend.providers.base import Provider


def drain(value: Any) -> Any:
    """Run every lazy validator in a validated value: pydantic checks `Iterable` fields only when iterated."""
    if isinstance(value, Iterator):  # pydantic's ValidatorIterator, for `Iterable[...]` fields of TypedDicts
        return [drain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: drain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [drain(v) for v in value]
    return value


def problems_after(provider: Provider, body: dict[str, Any], breaks: Callable[[dict[str, Any]], None]) -> list[Problem]:
    """Fault injection: what `check` reports once `breaks` has damaged a body it accepted.

    Every problem is the provider's and says something.
    """
    assert provider.check(body) == []
    breaks(body)
    problems = provider.check(body)
    assert all(p.provider == provider.name and p.message for p in problems), problems
    return problems


def texts_and_images(history: list[ChatMessage]) -> tuple[list[str], list[str]]:
    """Every non-empty text and every image source of a history (thinking excluded)."""
    texts: list[str] = []
    images: list[str] = []
    for message in history:
        parts = (TextPart(text=message.content),) if isinstance(message.content, str) else message.content
        for part in parts:
            if isinstance(part, TextPart) and part.text:
                texts.append(part.text)
            elif isinstance(part, ImagePart):
                images.append(part.data or part.url or "")
    return texts, images


def body_or_none(provider: Any, history: Any, **kwargs: Any) -> dict[str, Any] | None:
    """`provider.to_request(history, **kwargs)`, or None when the provider refuses the history for leaving its
    conversation list empty (system text only, or nothing once repaired), which its API rejects (#21)."""
    try:
        body: dict[str, Any] = provider.to_request(history, **kwargs)
    except UnsupportedError as exc:
        if exc.feature != "empty history":
            raise
        return None
    return body


def sendable_body(provider: Any, history: Any, **kwargs: Any) -> dict[str, Any]:
    """`provider.to_request(history, **kwargs)`; a history with nothing to send skips the example."""
    body = body_or_none(provider, history, **kwargs)
    if body is None:
        reject()
    return body


def writable(provider: Any, history: list[ChatMessage]) -> list[ChatMessage]:
    """The history without the parts the provider writes no place for (`writes_parts`: DeepSeek takes no images),
    as a caller's `on_unsupported=` would leave them out; a message left with no content says so in text."""
    out = []
    for message in history:
        content = message.content
        if isinstance(content, str) or all(part.type in provider.writes_parts for part in content):
            out.append(message)
            continue
        kept = tuple(part for part in content if part.type in provider.writes_parts)
        out.append(replace(message, content=kept or "(image)"))
    return out
