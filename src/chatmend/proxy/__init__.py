"""`chatmend proxy`: repair every request in flight, for any client, with no code change.

Point a client's base URL at it (`ANTHROPIC_BASE_URL=http://127.0.0.1:8787`,
`OPENAI_BASE_URL=http://127.0.0.1:8787/v1`, Gemini's `base_url`, boto3's `endpoint_url`): each request that
carries a history (Anthropic `/v1/messages`, OpenAI `/v1/chat/completions` and `/v1/responses`, Gemini
`:generateContent` and `:streamGenerateContent`, Bedrock `/model/{id}/converse` and `converse-stream`) is
repaired in its own format by the provider's `repair_body` and forwarded; every other
request is forwarded unchanged; responses stream back byte for byte. Needs `pip install 'chatmend[proxy]'`.

Who may use it: a request's `Host` must name the proxy on a loopback address with its port (`127.0.0.1:8787`,
`localhost:8787`), so a web page using DNS rebinding is refused (403); listening beyond loopback needs a token
(`ProxyConfig.token`, `--token` or `CHATMEND_PROXY_TOKEN`) every client sends as `x-chatmend-token` (or
`Proxy-Authorization: Bearer`), compared in constant time, never forwarded. `--sign-bedrock` signs only the
Converse, ConverseStream, InvokeModel and InvokeModelWithResponseStream routes, for the configured upstream's host
and region. A path with a dot segment is refused (400); headers named in `Connection` are not forwarded. Bodies
above a small size are repaired on a worker thread; the bodies in flight are bounded (`max_inflight_bytes`: past
it, a 503 with `Retry-After: 1`). The log (`_logging`) never holds a key.
"""

from __future__ import annotations

from chatmend.proxy._app import REPAIRED_HEADER, TOKEN_HEADER, Repaired, create_app, repair_request
from chatmend.proxy._config import TOKEN_ENV, ProxyConfig, load_config, parse_upstreams
from chatmend.proxy._serve import CONFIG_ENV, PortTaken, app_from_environment, serve

__all__ = ["CONFIG_ENV", "REPAIRED_HEADER", "TOKEN_ENV", "TOKEN_HEADER", "PortTaken", "ProxyConfig", "Repaired",
           "app_from_environment", "create_app", "load_config", "parse_upstreams", "repair_request", "serve"]
