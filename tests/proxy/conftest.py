"""Fixtures: the fake upstream, and the proxy served by uvicorn (as a user runs it) on a free port."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import uvicorn

from chatmend.proxy import ProxyConfig, create_app
from tests.proxy.upstream import Upstream, fake_upstream


@contextmanager
def running_proxy(config: ProxyConfig) -> Iterator[str]:
    """The proxy of `config` served by uvicorn in a thread on a free port; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=0, log_config=None,
                                           access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the proxy did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with fake_upstream() as up:
        yield up


@pytest.fixture
def proxy(upstream: Upstream) -> Iterator[str]:
    """The proxy in front of the fake upstream for every route family."""
    config = proxy_config(upstream)
    with running_proxy(config) as url:
        yield url


def proxy_config(upstream: Upstream, **changes: object) -> ProxyConfig:
    """A configuration whose every family goes to the fake upstream."""
    base = ProxyConfig(upstreams={"anthropic": upstream.url, "openai": upstream.url + "/v1",
                                  "gemini": upstream.url, "bedrock": upstream.url})
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]
