"""The public surface: one sorted __all__, every name importable, errors pickle."""

from __future__ import annotations

import pickle

import pytest

import chatmend
from chatmend import (
    ChatmendError,
    CheckError,
    HistoryError,
    InputError,
    Problem,
    ReadError,
    UnknownProviderError,
    UnsupportedError,
    formats,
    providers,
)


def test_all_is_sorted_and_importable() -> None:
    assert chatmend.__all__ == sorted(chatmend.__all__)
    for name in chatmend.__all__:
        assert hasattr(chatmend, name), name
    for name in ("ChatMessage", "ToolCall", "TextPart", "ImagePart", "ThinkingPart", "RepairResult",
                 "repair_history", "normalize_tool_id", "dumps", "loads", "Tool"):
        assert name in chatmend.__all__


def test_package_is_typed() -> None:
    from importlib.resources import files

    assert files("chatmend").joinpath("py.typed").is_file()


@pytest.mark.parametrize(
    "error",
    [
        HistoryError("expected a message", index=3, field="role", line=4),
        InputError("invalid JSON", line=2, column=16),
        ReadError("bad block", provider="anthropic", path="messages[2].content[0]"),
        UnsupportedError("no video", provider="gemini", path="contents[1]", feature="video"),
        CheckError([Problem("AN1", "messages[1]", "tool_use ids were found", "anthropic")], provider="anthropic"),
        UnknownProviderError("antropic", ["anthropic", "gemini"]),
    ],
)
def test_errors_pickle_and_keep_their_context(error: Exception) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error)
    assert vars(back) == vars(error)


def test_every_error_raised_on_purpose_is_a_chatmend_error() -> None:
    # `except ChatmendError` catches file errors too (formats re-exports the one class)
    assert formats.InputError is InputError
    for error in (HistoryError, InputError, ReadError, UnsupportedError, CheckError, UnknownProviderError):
        assert issubclass(error, ChatmendError), error
    assert InputError("no such file").in_file("a.jsonl") == "a.jsonl: no such file"
    assert InputError("bad", line=3, column=4).in_file("a.jsonl") == "a.jsonl:3:4: bad"


def test_history_error_says_where() -> None:
    err = HistoryError("unknown role 'x'", index=2, field="role", line=3)
    assert str(err) == "line 3, message 2, field 'role': unknown role 'x'"
    assert isinstance(err, ValueError)


def test_unknown_provider_suggests_the_nearest_name() -> None:
    with pytest.raises(UnknownProviderError, match="Did you mean 'anthropic'") as info:
        providers.get("antropic")
    assert isinstance(info.value, KeyError)


def test_every_registered_provider_loads_under_its_own_name() -> None:
    for name in providers.names():
        assert providers.get(name).name == name
