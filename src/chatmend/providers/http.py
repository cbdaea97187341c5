"""What each wire format looks like over HTTP: the routes that carry a history, where they go by default, and the
shape of an error body. The proxy (`chatmend.proxy`) reads this and names no provider itself.

A route family is what one client SDK's base URL addresses: `anthropic` (`ANTHROPIC_BASE_URL`), `openai`
(`OPENAI_BASE_URL`, which ends in `/v1`), `gemini` (the google-genai client's `base_url`), `bedrock` (boto3's
`bedrock-runtime` `endpoint_url`, or `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`).

Bedrock's routes carry the model in the path (`/model/{modelId}/converse`), and its rules depend on it (BR9, BR10):
`Route.model_of` reads it. Its requests are signed with SigV4 over the host and the body, or carry a Bedrock API
key (`Authorization: Bearer ...`): `signed` tells them apart (the proxy cannot change a signed body, nor send it
to another host, without signing it again).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

__all__ = ["FAMILIES", "SIGV4", "Family", "Route", "error_body", "error_headers", "family_of", "route_of", "signed",
           "signing_scope"]

SIGV4 = "AWS4-HMAC-SHA256"
"""The `Authorization` scheme of an AWS Signature Version 4 request."""


@dataclass(frozen=True)
class Route:
    """A request path whose JSON body holds a history in one provider's wire format."""

    pattern: re.Pattern[str]
    """The path it matches (the whole path, without the query string)."""
    provider: str
    """The registry name of the adapter that repairs its body (the family's Chat route may name another)."""
    streams: bool = False
    """True when the route always answers with a stream (Gemini's `:streamGenerateContent`, Bedrock's
    `converse-stream`)."""

    def model_of(self, path: str) -> str | None:
        """The model a path names, when the route's pattern has a `model` group (Bedrock's, percent-decoded)."""
        if "model" not in self.pattern.groupindex:
            return None
        found = self.pattern.fullmatch(path)
        return unquote(found.group("model")) if found else None


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
    "bedrock": Family(
        # https://docs.aws.amazon.com/general/latest/gr/bedrock.html (a region's endpoint; the proxy's
        # configuration names the caller's)
        "bedrock", "https://bedrock-runtime.us-east-1.amazonaws.com", "",
        (Route(re.compile(r"/model/(?P<model>[^/]+)/converse"), "bedrock"),
         Route(re.compile(r"/model/(?P<model>[^/]+)/converse-stream"), "bedrock", streams=True)),
        # the exception names of bedrock-runtime's service model, read by botocore from `x-amzn-ErrorType`
        {400: "ValidationException", 413: "ValidationException", 502: "ServiceUnavailableException",
         504: "ModelTimeoutException"},
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
    if path.startswith("/model/") or signed(headers):
        return FAMILIES["bedrock"]
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
    if family.name == "bedrock":
        return {"message": message}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def error_headers(family: Family, status: int) -> dict[str, str]:
    """The headers that name an error's kind where the family's SDK reads it from a header (botocore:
    `x-amzn-ErrorType`)."""
    if family.name == "bedrock":
        return {"x-amzn-errortype": family.error_status_names.get(status, family.error_status_names[502])}
    return {}


def signed(headers: Mapping[str, str]) -> bool:
    """True for a request signed with SigV4 (its signature covers the host and the body's hash)."""
    return any(k.lower() == "authorization" and v.startswith(SIGV4) for k, v in headers.items())


def signing_scope(headers: Mapping[str, str]) -> tuple[str, str] | None:
    """(region, service) of a SigV4 request's credential scope (`Credential=KEY/DATE/REGION/SERVICE/aws4_request`),
    or None."""
    for k, v in headers.items():
        if k.lower() == "authorization" and v.startswith(SIGV4):
            found = re.search(r"Credential=[^/,\s]+/\d{8}/([^/,\s]+)/([^/,\s]+)/aws4_request", v)
            if found:
                return found.group(1), found.group(2)
    return None
