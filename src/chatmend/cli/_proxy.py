"""`chatmend proxy`: the repairing proxy, served by uvicorn."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import textwrap
from typing import Any

from chatmend.cli._shared import OK
from chatmend.cli._text import UsageError
from chatmend.formats import InputError

_SWITCH_INTERVAL = 0.0005
"""Seconds a thread holds the interpreter lock while another waits (Python's default is 0.005)."""


def proxy_command(sub: Any, epilog: str) -> None:
    """`chatmend proxy`: its options (the defaults are `ProxyConfig`'s, read when the command runs)."""
    proxy = sub.add_parser(
        "proxy", help="repair every request in flight: point a client's base URL at it",
        description=textwrap.fill(
            "Serve an HTTP proxy that repairs the history of every Anthropic Messages, OpenAI Chat and Responses "
            "and Gemini request, and of every Bedrock Converse request, in its own format and forwards it to the "
            "upstream API, streaming the answer back as it comes. Point ANTHROPIC_BASE_URL at http://HOST:PORT, "
            "OPENAI_BASE_URL at http://HOST:PORT/v1, AWS_ENDPOINT_URL_BEDROCK_RUNTIME at http://HOST:PORT. "
            "Needs pip install 'chatmend[proxy]'.", 100),
        epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    proxy.add_argument("--host", help="the address to listen on (default 127.0.0.1: this machine only; any other "
                                      "needs --token)")
    proxy.add_argument("--token", help="a secret every client must send (header x-chatmend-token: TOKEN, or "
                                       "Proxy-Authorization: Bearer TOKEN); default: $CHATMEND_PROXY_TOKEN, which "
                                       "other users cannot read in the process list")
    proxy.add_argument("--port", type=int, help="the port to listen on (default 8787)")
    proxy.add_argument("--upstream", metavar="NAME=URL", action="append", default=[],
                       help="where a route family goes: anthropic, openai (a base ending in /v1, as the OpenAI "
                            "SDK's base_url), gemini or bedrock (a bedrock-runtime endpoint); default: the "
                            "providers' own APIs (Bedrock's in us-east-1)")
    proxy.add_argument("--chat-provider", metavar="PROVIDER",
                       help="the adapter for /v1/chat/completions when the openai upstream is an OpenAI-compatible "
                            "service (kimi, mistral, ...)")
    proxy.add_argument("--config", metavar="FILE", help="a JSON file of settings (options given here win)")
    proxy.add_argument("--dry-run", action="store_true", help="log what repair would change, forward the original")
    proxy.add_argument("--max-body-bytes", type=int, metavar="N", help="answer 413 above this (default 32 MiB)")
    proxy.add_argument("--max-inflight-bytes", type=int, metavar="N",
                       help="request bodies read, repaired and sent at once, in bytes; a request past it gets 503 "
                            "with Retry-After: 1, which the SDKs retry (default 128 MiB)")
    proxy.add_argument("--log-json", action="store_true", help="every log line one JSON object")
    proxy.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                       help="the proxy's own log level (default info; uvicorn and httpx2 log warnings only, "
                            "unless debug); keys are never logged")
    proxy.add_argument("--workers", type=int, metavar="N", help="worker processes (default 1; the proxy is "
                                                                "stateless)")
    proxy.add_argument("--sign-bedrock", action="store_true",
                       help="sign each Bedrock request again (SigV4) with this process's AWS credentials, so a "
                            "SigV4-signed request can be repaired and sent on to the upstream's host; without it "
                            "a signed request is forwarded as it came, unrepaired")
    proxy.add_argument("--grace-seconds", type=float, metavar="S",
                       help="on SIGTERM, how long in-flight streams may take to finish (default 30)")
    proxy.set_defaults(run=_proxy, file=None)


def _proxy(args: argparse.Namespace) -> int:
    """Serve the proxy until SIGINT or SIGTERM; the command line owns the process and its logging."""
    try:
        from chatmend.proxy import TOKEN_ENV, PortTaken, ProxyConfig, load_config, parse_upstreams, serve
        from chatmend.proxy._config import validated
        from chatmend.proxy._logging import configure
    except ImportError as exc:
        raise UsageError(f"the proxy needs its dependencies: pip install 'chatmend[proxy]' ({exc})") from None
    try:
        config = load_config(args.config) if args.config else ProxyConfig()
        changes: dict[str, Any] = {"upstreams": parse_upstreams(args.upstream, config.upstreams)}
        for name in ("host", "port", "chat_provider", "max_body_bytes", "max_inflight_bytes", "workers",
                     "grace_seconds", "log_level", "token"):
            if getattr(args, name) is not None:
                changes[name] = getattr(args, name)
        if not changes.get("token") and not config.token and os.environ.get(TOKEN_ENV):
            changes["token"] = os.environ[TOKEN_ENV]
        changes["dry_run"] = config.dry_run or args.dry_run
        changes["log_json"] = config.log_json or args.log_json
        changes["sign_bedrock"] = config.sign_bedrock or args.sign_bedrock
        config = validated(dataclasses.replace(config, **changes), "chatmend proxy")
        if config.sign_bedrock:
            from chatmend.proxy._sigv4 import load_signer

            load_signer()  # no credentials: a usage error now, not a traceback when the app starts
    except (InputError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    # the command owns its process: one formatter for every record, keys redacted, libraries at warning
    configure(json_lines=config.log_json, level=config.log_level, secrets=[config.token])
    # a large body is repaired on a worker thread; the event loop asks it for the interpreter lock at every wake-up:
    # a short switch interval keeps the other clients' requests from waiting on each long repair
    sys.setswitchinterval(_SWITCH_INTERVAL)
    try:
        serve(config)
    except PortTaken as exc:
        raise UsageError(str(exc)) from None
    return OK
