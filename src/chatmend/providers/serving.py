"""What the routers and servers of OpenAI-compatible models share (OpenRouter, vLLM): another adapter's rules for
the model they serve."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

from chatmend.exceptions import Problem
from chatmend.providers.base import CheckContext, Provider
from chatmend.providers.openai_chat import OpenAIChat


def relabelled(owner: Provider, problems: list[Problem]) -> list[Problem]:
    """The upstream's problems, reported as the router's (its words, relayed as they are)."""
    return [replace(p, provider=owner.name) for p in problems]


def upstream_check(owner: Provider, upstream: Provider, body: Any, context: CheckContext) -> list[Problem]:
    """`upstream`'s 400s of a body sent through `owner`."""
    return relabelled(owner, upstream._check(body, context))


class ServingChat(OpenAIChat):
    """A Chat-shaped service in front of other vendors' models (a router, an inference server): the adapter of the
    model it serves writes and checks the body, OpenAI's rules apply to any other model."""

    plain_lists_valid: ClassVar[bool] = False  # the served model's rules (`check` by the body's model)

    def serving(self, model: str | None) -> Provider | None:
        """The adapter whose rules apply to `model`, or None for OpenAI's own (hook)."""
        return None

    def _written_by(self, model: str) -> Provider | None:
        """The served model's adapter writes the body where there is one (its ids, its role order)."""
        return self.serving(model)

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """The served model's adapter's 400s, relayed; OpenAI's for any other model."""
        adapter = self.serving(context.model)
        if adapter is not None:
            return upstream_check(self, adapter, body, context)
        return super()._check(body, context)
