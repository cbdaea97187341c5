"""Malformed Responses input items (issue #44 item 6): every item type, every field of a wrong JSON type, read by
`from_request`, `from_response` and `repair_body`, is read or refused with a `ReadError` (never pydantic's
`ValidationError` or another exception), and `check` reports it without raising."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatmend.exceptions import ReadError
from chatmend.providers import openai_responses as adapter
from chatmend.providers.openai_responses.wire import CALL_OUTPUTS, INPUT_SIDE, RESPONSES_ITEM_TYPES
from tests.strategies import examples

ITEM_TYPES = sorted({"message", "reasoning", *CALL_OUTPUTS, *CALL_OUTPUTS.values(), *INPUT_SIDE,
                     *RESPONSES_ITEM_TYPES})
PART_TYPES = ["input_text", "output_text", "text", "refusal", "input_image", "computer_screenshot", "input_file",
              "input_audio", "summary_text", "unknown_part"]
FIELDS = ["id", "call_id", "name", "arguments", "output", "content", "role", "summary", "encrypted_content", "input",
          "status", "action", "operation", "tools", "execution", "phase", "type", "text", "image_url", "file_id",
          "file_data", "file_url", "filename", "input_audio", "refusal", "data", "format", "stdout", "stderr",
          "outcome", "exit_code", "detail", "annotations"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from(["", " ", "x", "user", "assistant", "client", "data:", "data:;base64,",
                                     "data:image/png;base64,AAAA", "{}", "{\"a\": 1}", "not json", "[1]", "error"]))


def parts() -> st.SearchStrategy[dict[str, Any]]:
    """A content part of any type, its fields of any JSON type."""
    return st.builds(lambda kind, fields: {"type": kind, **fields}, st.sampled_from(PART_TYPES),
                     st.dictionaries(st.sampled_from(FIELDS), values, max_size=3))


values: st.SearchStrategy[Any] = st.recursive(
    scalars | st.deferred(parts),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=3),
    max_leaves=6)

PLAUSIBLE: dict[str, Any] = {"call_id": "c1", "name": "f", "arguments": "{}", "output": "ok", "role": "assistant",
                             "content": "hi", "summary": [], "execution": "client"}


@st.composite
def items(draw: st.DrawFn) -> dict[str, Any]:
    """An item of a known (or unknown) type: some plausible fields, then some of any JSON type."""
    kind = draw(st.sampled_from([*ITEM_TYPES, "unknown_item"]) | scalars)
    item: dict[str, Any] = {"type": kind} if kind is not None else {}
    for key in draw(st.lists(st.sampled_from(sorted(PLAUSIBLE)), max_size=4, unique=True)):
        item[key] = PLAUSIBLE[key]
    item.update(draw(st.dictionaries(st.sampled_from(FIELDS), values, max_size=4)))
    return item


def reads_or_refuses(read: Any, value: Any) -> None:
    """`read(value)` returns, or raises a located ReadError of this provider."""
    try:
        read(value)
    except ReadError as exc:
        assert exc.provider == "openai_responses"
        assert str(exc)


@examples(400)
@given(st.lists(items(), min_size=1, max_size=4), st.sampled_from(["request", "response", "repair", "list"]))
def test_a_malformed_item_is_a_read_error_never_another_exception(body_items: list[dict[str, Any]], how: str) -> None:
    listed: list[Any] = [{"type": "message", "role": "user", "content": "q"}, *body_items]
    if how == "request":
        reads_or_refuses(adapter.from_request, {"model": "m", "input": listed})
    elif how == "list":
        reads_or_refuses(adapter.from_request, listed)
    elif how == "response":
        reads_or_refuses(adapter.from_response, {"output": body_items})
    else:
        reads_or_refuses(adapter.PROVIDER.repair_body, {"model": "m", "input": listed})
    problems = adapter.check({"model": "m", "input": listed})
    assert all(p.provider == "openai_responses" and p.message for p in problems)
