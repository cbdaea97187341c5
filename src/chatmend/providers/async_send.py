"""The coroutine behind every adapter's `send_async`, in a module a wheel never compiles.

A coroutine compiled by mypyc passes an exception thrown into it (a cancellation: a timeout, a task
cancelled, the cancel scope the SDK's HTTP stack opens to connect) on to what it awaits in the
three-argument form of `throw()`, which Python 3.12 deprecated (mypyc/mypyc#1214). With the adapters
compiled, a cancelled `send_async` warned, and under `-W error` (pytest's `filterwarnings = error`) it failed
with that warning instead of the cancellation. So the coroutines of a send are these interpreted ones, and
the adapters' `_create_async` hand back the SDK's awaitable without awaiting it: no compiled coroutine is
ever in the chain (tests/test_setup.py checks that no compiled module holds one).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatmend.messages import ChatMessage
    from chatmend.providers.base import HistoryInput, Provider

__all__ = ["coroutine_function", "send"]


async def send(provider: Provider, client: Any, history: HistoryInput, kwargs: dict[str, Any]) -> ChatMessage:
    """`provider.send` with the SDK's async client: the body written, the SDK's call awaited, the reply read."""
    body = provider._sdk_body(provider.to_request(history, **kwargs), kwargs)
    response = await provider._create_async(client, body)
    return provider._sdk_reply(provider.from_response(response), kwargs)


def coroutine_function(provider: Provider) -> Callable[..., Coroutine[Any, Any, ChatMessage]]:
    """`provider.send_async` as a coroutine function: an adapter module's `send_async`. Frameworks that ask
    `inspect.iscoroutinefunction` before awaiting a callable see one (a compiled class's method is not one)."""

    async def send_async(client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        return await provider.send_async(client, history, **kwargs)

    send_async.__doc__ = f"`send` to {provider.name} with the SDK's async client; await it."
    return send_async
