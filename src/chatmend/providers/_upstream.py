"""What the routers and servers of OpenAI-compatible models share: another adapter's rules for the model they serve."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from chatmend.exceptions import Problem
from chatmend.providers.base import CheckContext, Provider


def relabelled(owner: Provider, problems: list[Problem]) -> list[Problem]:
    """The upstream's problems, reported as the router's (its words, relayed as they are)."""
    return [replace(p, provider=owner.name) for p in problems]


def upstream_check(owner: Provider, upstream: Provider, body: Any, context: CheckContext) -> list[Problem]:
    """`upstream`'s 400s of a body sent through `owner`."""
    return relabelled(owner, upstream._check(body, context))
