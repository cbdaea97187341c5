"""The interface every provider adapter offers, and small helpers they share.

A provider module owns everything about one wire format: writing a neutral history as the exact request
body (`to_request`), reading bodies and replies back (`from_request`, `from_response`), predicting the
provider's 400s offline (`check`), and sending through the official SDK client (`send`, `send_async`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any, ClassVar, cast

from chatmend.exceptions import CheckError, Problem, ReadError
from chatmend.incremental import Repairer
from chatmend.messages import ChatMessage, ImagePart, Tool, ToolCall
from chatmend.repair import IsReadOnly, RepairResult, repair_for_writers

__all__ = [
    "SHAPE",
    "HistoryInput",
    "IdAssigner",
    "Provider",
    "ToolsInput",
    "arguments_json",
    "arguments_text",
    "coerce_tools",
    "image_data_url",
    "parse_data_url",
    "repaired",
    "to_plain",
]

SHAPE = "SHAPE"
"""Problem code shared by adapters for a body that is not of the provider's shape at all (check never raises)."""

HistoryInput = Sequence[ChatMessage | Mapping[str, Any]]
"""What `to_request` accepts: ChatMessage objects or dicts of the neutral JSON shape."""
ToolsInput = Sequence[Tool | Mapping[str, Any]] | None
"""Tools as `Tool` objects or dicts with name, description and parameters."""


class IdAssigner:
    """Hands out one request's wire ids in the order its calls are written (history order): every writer's."""

    def __init__(self, wire_ids: Sequence[str]) -> None:
        self._wire_ids: list[str] = wire_ids if isinstance(wire_ids, list) else list(wire_ids)
        self._written = 0  # calls written so far

    def next_id(self, name: str) -> str:
        """The wire id of the next call, given its tool name (Kimi's ids carry it; these do not)."""
        k = self._written
        self._written = k + 1
        return self._wire_ids[k]


class Provider(ABC):
    """One provider's wire format. Subclasses set the flags and implement the five verbs."""

    name: ClassVar[str]
    """The registry name, equal to the module name (`openai_chat`, `anthropic`, ...)."""
    id_max_length: ClassVar[int | None] = None
    """The longest tool call id the provider accepts (None: no known limit)."""
    id_pattern: ClassVar[str | None] = None
    """The regular expression every tool call id must match on the wire (None: any)."""
    arguments_as_string: ClassVar[bool] = True
    """True when call arguments travel as a JSON string, False when as an object."""
    images_in_tool_results: ClassVar[bool] = False
    """True when a tool result may carry images; otherwise they move to a user message after it."""

    @abstractmethod
    def to_request(
        self,
        history: HistoryInput,
        *,
        model: str,
        tools: ToolsInput = None,
        system: str | None = None,
        is_read_only: IsReadOnly | None = None,
        repairer: Repairer | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """The exact JSON request body for this provider, after `repair_history` and id mapping.

        With a `repairer` (one per session, kept by the caller), the repair reuses the previous call's work:
        the same body, but the repair costs only what is new.
        """

    @abstractmethod
    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """A neutral history from a saved request body (or just its message list)."""

    @abstractmethod
    def from_response(self, response: Any) -> ChatMessage:
        """The assistant message of a reply (a JSON dict or the official SDK's response object)."""

    @abstractmethod
    def check(self, body: Mapping[str, Any]) -> list[Problem]:
        """The 400s this provider would answer `body` with, predicted offline (empty when none)."""

    @abstractmethod
    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """Call the official SDK client with the body and return its response."""

    def _create_async(self, client: Any, body: dict[str, Any]) -> Awaitable[Any]:
        """The async twin of `_create`: the same call on the SDK's async client, which returns an awaitable, handed
        back unawaited (`send_async` awaits it). Gemini overrides it: its async client is `client.aio`."""
        return cast("Awaitable[Any]", self._create(client, body))

    def check_or_raise(self, body: Mapping[str, Any]) -> None:
        """Raise CheckError with every problem when `check` finds any."""
        problems = self.check(body)
        if problems:
            raise CheckError(problems, provider=self.name)

    def send(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        """Send the history with the official SDK client and return the reply as a ChatMessage."""
        body = self._sdk_body(self.to_request(history, **kwargs), kwargs)
        return self._sdk_reply(self.from_response(self._create(client, body)), kwargs)

    async def send_async(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        """`send` with the SDK's async client: `await provider.send_async(client, history, ...)`."""
        body = self._sdk_body(self.to_request(history, **kwargs), kwargs)
        response = await self._create_async(client, body)
        return self._sdk_reply(self.from_response(response), kwargs)

    def _sdk_body(self, body: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """What `send` hands the SDK call for a body from `to_request` (hook: Gemini adds the model)."""
        return body

    def _sdk_reply(self, reply: ChatMessage, kwargs: dict[str, Any]) -> ChatMessage:
        """The reply as `send` returns it (hook: Mistral gives tool names back as the caller's tools name them)."""
        return reply

    def __repr__(self) -> str:
        return f"<provider {self.name}>"


def repaired(
    history: HistoryInput,
    is_read_only: IsReadOnly | None = None,
    repairer: Repairer | None = None,
    *,
    final_ids: bool = True,
) -> RepairResult:
    """The repaired history (by the caller's `Repairer` when given): what every adapter encodes.

    Writers take each call's id from `final_ids` in order and each result's from the calls it answers, never
    from the messages: `repair_for_writers` then spares the copies that would only carry renamed ids, and the
    list of renames (and, with `final_ids=False`, for a writer that mints ids by position, the final ids
    themselves).
    """
    if repairer is None:
        return repair_for_writers(history, is_read_only=is_read_only, final_ids=final_ids, renames=False)
    if is_read_only is not None:
        raise ValueError("give is_read_only to the Repairer (Repairer(is_read_only=...)), not to to_request")
    return repairer.repair(history)


def coerce_tools(tools: ToolsInput) -> list[Tool]:
    """Tools as `Tool` objects."""
    if not tools:
        return []
    return [t if isinstance(t, Tool) else Tool.model_validate(t) for t in tools]


def arguments_json(call: ToolCall) -> str:
    """The call's arguments as JSON text; text that was not valid JSON is sent verbatim."""
    return arguments_text(call.arguments)


def _not_json(value: object) -> object:
    """What json.dumps says of a value it cannot write."""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The C encoder behind json.dumps, made once: json.dumps builds one per call, which costs more than writing
# the few keys of a call's arguments. No circular-reference table: arguments come from JSON (a cycle would
# end in RecursionError instead of ValueError).
_c_make_encoder: Callable[..., Any] | None = getattr(json.encoder, "c_make_encoder", None)  # None without C
_c_encoder = (_c_make_encoder(None, _not_json, encode_basestring, None, ":", ",", False, False, True)
              if _c_make_encoder is not None else None)
_python_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def arguments_text(arguments: dict[str, Any] | str) -> str:
    """Arguments as compact JSON text (what `json.dumps(..., separators=(",", ":"), ensure_ascii=False)`
    gives); text that was not valid JSON verbatim."""
    if isinstance(arguments, str):
        return arguments
    if _c_encoder is None:  # a Python without the C accelerator
        return _python_encoder(arguments)
    return "".join(_c_encoder(arguments, 0))


def image_data_url(part: ImagePart) -> str:
    """The image as a URL: its own `url`, or a `data:` URI of its base64 bytes."""
    if part.url is not None:
        return part.url
    return f"data:{part.media_type};base64,{part.data}"


def parse_data_url(url: str) -> ImagePart:
    """An ImagePart from a URL, inline when it is a base64 `data:` URI."""
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return ImagePart(media_type=head or "application/octet-stream", data=data)
    return ImagePart(url=url)


def to_plain(response: Any, *, provider: str) -> dict[str, Any]:
    """A response as a plain dict: a dict as it is, an SDK object through its `model_dump`/`to_dict`."""
    if isinstance(response, Mapping):
        return dict(response)
    for method in ("model_dump", "to_dict"):
        dump = getattr(response, method, None)
        if callable(dump):
            # warnings=False: SDK models warn when a field holds a shape newer than their type (Mistral's
            # thinking chunks in `content`), and that is data to read, not a problem.
            data = dump(mode="json", exclude_none=True, warnings=False) if method == "model_dump" else dump()
            if isinstance(data, dict):
                return data
    raise ReadError(f"expected a response dict or SDK response object, got {type(response).__name__}",
                    provider=provider)
