"""`chatmend proxy`: the repairing proxy, served by uvicorn."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Any

from chatmend.cli._text import OK, UsageError
from chatmend.exceptions import InputError

_SWITCH_INTERVAL = 0.0005
"""Seconds a thread holds the interpreter lock while another waits (Python's default is 0.005)."""


def run_proxy(args: argparse.Namespace) -> int:
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
