"""`send_async` of every provider: it sends through the SDK's async client, a cancellation reaches the caller
as a cancellation (and nothing warns), and the SDK's own errors pass through unchanged."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import types
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from chatmend import ChatMessage, providers

HISTORY = [ChatMessage(role="user", content="Weather in Paris?")]
NAMES = providers.names()


def client_where_every_sdk_call_is(method: Callable[..., Any]) -> Any:
    """A stand-in for any provider's async SDK client: every path an adapter calls leads to `method`."""
    ns = types.SimpleNamespace
    return ns(
        chat=ns(completions=ns(create=method)),  # openai_chat, kimi, mistral (openai.AsyncOpenAI)
        responses=ns(create=method),  # openai_responses (openai.AsyncOpenAI)
        messages=ns(create=method),  # anthropic (anthropic.AsyncAnthropic)
        aio=ns(models=ns(generate_content=method)),  # gemini (google.genai.Client().aio)
        converse=method,  # bedrock (an aioboto3 / aiobotocore bedrock-runtime client)
    )


@pytest.mark.parametrize("name", NAMES)
def test_the_modules_send_async_is_a_coroutine_function_that_sends(name: str) -> None:
    module = importlib.import_module(f"chatmend.providers.{name}")
    assert inspect.iscoroutinefunction(module.send_async)  # frameworks that check before awaiting see one
    bodies: list[dict[str, Any]] = []

    async def create(**kwargs: Any) -> Any:
        bodies.append(kwargs)
        raise RuntimeError("no server here")

    with pytest.raises(RuntimeError, match="no server here"):
        asyncio.run(module.send_async(client_where_every_sdk_call_is(create), HISTORY, model="m"))
    assert len(bodies) == 1 and "Weather in Paris?" in repr(bodies[0])


@pytest.mark.parametrize("name", NAMES)
def test_create_async_hands_back_the_sdks_awaitable_itself(name: str) -> None:
    provider = providers.get(name)
    sdk_awaitable: Any = object()  # what matters is that it comes back untouched, unawaited
    received: list[dict[str, Any]] = []

    def create(**kwargs: Any) -> Any:
        received.append(kwargs)
        return sdk_awaitable

    body = provider._sdk_body(provider.to_request(HISTORY, model="m"), {"model": "m"})
    assert provider._create_async(client_where_every_sdk_call_is(create), body) is sdk_awaitable
    assert len(received) == 1


@pytest.mark.parametrize("via_module", [False, True], ids=["method", "module"])
@pytest.mark.parametrize("name", NAMES)
def test_a_cancelled_send_async_raises_the_cancellation_and_warns_nothing(name: str, via_module: bool) -> None:
    send_async = (importlib.import_module(f"chatmend.providers.{name}").send_async if via_module
                  else providers.get(name).send_async)

    async def main() -> None:
        started = asyncio.Event()

        async def create(**kwargs: Any) -> Any:  # an SDK call still waiting for the server's reply
            started.set()
            await asyncio.Event().wait()

        client = client_where_every_sdk_call_is(create)
        task = asyncio.create_task(send_async(client, HISTORY, model="m"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("name", NAMES)
def test_an_error_raised_by_the_sdk_call_reaches_the_caller_as_it_is(name: str) -> None:
    class Overloaded(Exception):
        pass

    async def create(**kwargs: Any) -> Any:
        await asyncio.sleep(0)
        raise Overloaded("529")

    with pytest.raises(Overloaded, match="529"):
        asyncio.run(providers.get(name).send_async(client_where_every_sdk_call_is(create), HISTORY, model="m"))
