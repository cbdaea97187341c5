"""`chatmend.exceptions`: where an error in a body says it is, and the counted matching `problems_gone` uses."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from chatmend.exceptions import ReadError, UnsupportedError, error_context, unmatched


@given(st.lists(st.integers(0, 4)), st.lists(st.integers(0, 4)))
def test_unmatched_is_the_items_a_counted_match_leaves_in_order(items: list[int], keys: list[int]) -> None:
    left = unmatched(items, keys, key=lambda item: item)
    assert Counter(left) == Counter(items) - Counter(keys)
    # the first items of a key are the ones matched: what is left of a key is its last ones
    for value in set(left):
        places = [i for i, item in enumerate(items) if item == value]
        assert [items[i] for i in places[len(places) - left.count(value):]] == [value] * left.count(value)
    rest = iter(items)
    assert all(any(item == other for other in rest) for item in left)  # in the items' order


def test_an_error_in_a_body_says_its_provider_and_path_as_error_context_fills_them_in() -> None:
    try:
        with error_context(provider="anthropic", path="messages[3]"), error_context(path="content[0]"):
            raise UnsupportedError("no such block", feature="block")
    except UnsupportedError as exc:
        assert str(exc) == "anthropic: messages[3].content[0]: no such block"
        assert (exc.provider, exc.path, exc.feature, exc.reason) == ("anthropic", "messages[3].content[0]", "block",
                                                                    "no such block")
    assert str(ReadError("bad", path="system")) == "system: bad"
    assert str(ReadError("bad")) == "bad"
