"""What each wire format looks like over HTTP: the routes that carry a history, where they go by default, and the
shape of an error body. The proxy (`chatmend.proxy`) reads this and names no provider itself.

A route family is what one client SDK's base URL addresses: `anthropic` (`ANTHROPIC_BASE_URL`), `openai`
(`OPENAI_BASE_URL`, which ends in `/v1`), `gemini` (the google-genai client's `base_url`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["FAMILIES", "Family", "Route", "error_body", "family_of", "route_of"]


@dataclass(frozen=True)
class Route:
    """A request path whose JSON body holds a history in one provider's wire format."""

    pattern: re.Pattern[str]
    """The path it matches (the whole path, without the query string)."""
    provider: str
    """The registry name of the adapter that repairs its body (the family's Chat route may name another)."""
    streams: bool = False
    """True when the route always answers with a stream (Gemini's `:streamGenerateContent`)."""


@dataclass(frozen=True)
class Family:
    """One client SDK's routes under one base URL."""

    name: str
    default_upstream: str
    """The provider's own API base, as the SDK's default `base_url` (the OpenAI one ends in `/v1`)."""
    mount: str
    """The part of a request path the upstream base stands for: `/v1` for OpenAI (its base URL ends in `/v1`),
    nothing for the others (their SDKs put the version in the path)."""
    routes: tuple[Route, ...]
    error_status_names: Mapping[int, str]
    """Error `type` / `status` names by HTTP status, as the provider spells them in its error bodies."""


_GEMINI_MODEL = r"/v1(?:beta|alpha)?/(?:tunedModels|models)/[^/:]+"

FAMILIES: dict[str, Family] = {
    "anthropic": Family(
        "anthropic", "https://api.anthropic.com", "",
        (Route(re.compile(r"/v1/messages"), "anthropic"),
         Route(re.compile(r"/v1/messages/count_tokens"), "anthropic")),
        # https://docs.anthropic.com/en/api/errors
        {400: "invalid_request_error", 413: "request_too_large", 502: "api_error", 504: "timeout_error"},
    ),
    "openai": Family(
        "openai", "https://api.openai.com/v1", "/v1",
        (Route(re.compile(r"/v1/chat/completions"), "openai_chat"),
         Route(re.compile(r"/v1/responses"), "openai_responses")),
        {400: "invalid_request_error", 413: "invalid_request_error", 502: "server_error", 504: "server_error"},
    ),
    "gemini": Family(
        "gemini", "https://generativelanguage.googleapis.com", "",
        (Route(re.compile(_GEMINI_MODEL + r":generateContent"), "gemini"),
         Route(re.compile(_GEMINI_MODEL + r":countTokens"), "gemini"),
         Route(re.compile(_GEMINI_MODEL + r":streamGenerateContent"), "gemini", streams=True)),
        # https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes
        {400: "INVALID_ARGUMENT", 413: "INVALID_ARGUMENT", 502: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"},
    ),
}


def route_of(path: str) -> tuple[Family, Route] | None:
    """The family and route of a path that carries a history, or None."""
    for family in FAMILIES.values():
        for route in family.routes:
            if route.pattern.fullmatch(path):
                return family, route
    return None


def family_of(path: str, headers: Mapping[str, str]) -> Family:
    """The family a request belongs to, for paths that carry no history (model lists, files, batches): by the
    headers only its SDK sends, then by path (Gemini's versions are its own)."""
    lowered = {k.lower() for k in headers}
    if "anthropic-version" in lowered or "x-api-key" in lowered or path.startswith("/v1/messages"):
        return FAMILIES["anthropic"]
    if "x-goog-api-key" in lowered or path.startswith(("/v1beta/", "/v1alpha/", "/upload/")):
        return FAMILIES["gemini"]
    return FAMILIES["openai"]


def error_body(family: Family, status: int, message: str) -> dict[str, Any]:
    """An error body in the family's own shape, so the client's SDK raises its usual error with our message."""
    kind = family.error_status_names.get(status, family.error_status_names[502])
    if family.name == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if family.name == "gemini":
        return {"error": {"code": status, "message": message, "status": kind}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
