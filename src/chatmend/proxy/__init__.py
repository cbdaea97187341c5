"""`chatmend proxy`: repair every request in flight, for any client, with no code change.

Point a client's base URL at it (`ANTHROPIC_BASE_URL=http://127.0.0.1:8787`,
`OPENAI_BASE_URL=http://127.0.0.1:8787/v1`, Gemini's `base_url`, boto3's `endpoint_url`): each request that
carries a history (Anthropic `/v1/messages`, OpenAI `/v1/chat/completions` and `/v1/responses`, Gemini
`:generateContent` and `:streamGenerateContent`, Bedrock `/model/{id}/converse` and `converse-stream`) is
repaired in its own format by the provider's `repair_body` and forwarded; every other
request is forwarded unchanged; responses stream back byte for byte. Needs `pip install 'chatmend[proxy]'`.
"""

from __future__ import annotations

import os
from typing import Any

from chatmend.proxy._app import REPAIRED_HEADER, Repaired, create_app, repair_request
from chatmend.proxy._config import ProxyConfig, load_config, parse_upstreams

__all__ = ["CONFIG_ENV", "REPAIRED_HEADER", "ProxyConfig", "Repaired", "app_from_environment", "create_app",
           "load_config", "parse_upstreams", "repair_request", "serve"]

CONFIG_ENV = "CHATMEND_PROXY_CONFIG"
"""The environment variable that hands the configuration (as JSON) to each worker process of `--workers N`."""


def app_from_environment() -> object:
    """The application of the configuration in `CHATMEND_PROXY_CONFIG` (uvicorn's factory for workers)."""
    return create_app(ProxyConfig.from_json(os.environ[CONFIG_ENV]))


def serve(config: ProxyConfig) -> None:
    """Serve the proxy with uvicorn until SIGINT or SIGTERM (in-flight requests get `grace_seconds`)."""
    import uvicorn

    common: dict[str, Any] = {
        "host": config.host, "port": config.port, "timeout_graceful_shutdown": int(config.grace_seconds),
        # the upstream's own server and date headers pass through; the CLI configures logging
        "log_config": None, "access_log": False, "server_header": False, "date_header": False,
    }
    if config.workers > 1:
        os.environ[CONFIG_ENV] = config.to_json()  # the CLI owns its process: the workers read it
        uvicorn.run("chatmend.proxy:app_from_environment", factory=True, workers=config.workers, **common)
    else:
        uvicorn.run(create_app(config), **common)
