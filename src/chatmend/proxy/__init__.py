"""`chatmend proxy`: repair every request in flight, for any client, with no code change.

Point a client's base URL at it (`ANTHROPIC_BASE_URL=http://127.0.0.1:8787`,
`OPENAI_BASE_URL=http://127.0.0.1:8787/v1`, Gemini's `base_url`, boto3's `endpoint_url`): each request that
carries a history (Anthropic `/v1/messages`, OpenAI `/v1/chat/completions` and `/v1/responses`, Gemini
`:generateContent` and `:streamGenerateContent`, Bedrock `/model/{id}/converse` and `converse-stream`) is
repaired in its own format by the provider's `repair_body` and forwarded; every other
request is forwarded unchanged; responses stream back byte for byte. Needs `pip install 'chatmend[proxy]'`.
"""

from __future__ import annotations

from chatmend.proxy._app import REPAIRED_HEADER, TOKEN_HEADER, Repaired, create_app, repair_request
from chatmend.proxy._config import TOKEN_ENV, ProxyConfig, load_config, parse_upstreams
from chatmend.proxy._serve import CONFIG_ENV, PortTaken, app_from_environment, serve

__all__ = ["CONFIG_ENV", "REPAIRED_HEADER", "TOKEN_ENV", "TOKEN_HEADER", "PortTaken", "ProxyConfig", "Repaired",
           "app_from_environment", "create_app", "load_config", "parse_upstreams", "repair_request", "serve"]
