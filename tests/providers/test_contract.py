"""The one provider contract: every adapter fills the base's templates and reads the flags the base declares."""

from __future__ import annotations

from typing import Any

import pytest

from chatmend import ChatMessage, providers
from chatmend.providers.base import Provider


@pytest.mark.parametrize("name", providers.names())
def test_an_option_named_like_the_conversation_list_is_refused_by_every_adapter(name: str) -> None:
    adapter = providers.get(name)
    history = [ChatMessage(role="user", content="hi")]
    with pytest.raises(ValueError, match="first argument"):
        options: dict[str, Any] = {adapter.list_key: []}
        adapter.to_request(history, model="m", **options)


def test_the_flags_no_code_read_are_gone() -> None:
    for flag in ("id_pattern", "arguments_as_string", "images_in_tool_results"):
        assert not hasattr(Provider, flag)
        assert all(not hasattr(type(providers.get(n)), flag) for n in providers.names())
