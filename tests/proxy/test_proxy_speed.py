"""What keeps the proxy's repair fast (issue #44 item 10): looking for lone surrogates in a body orjson can write
is one orjson call, not a walk of every string; the answer is the walk's, whatever the body."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatmend import strict_json

_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x1F600), max_size=8)
_JSON = st.recursive(st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats() | _TEXT,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=20)


def _walked(value: Any) -> list[tuple[str, str, bool]]:
    """The walk's answer, the orjson shortcut off."""
    module = strict_json.__dict__
    saved = module["_orjson"]
    module["_orjson"] = None
    try:
        return [(f.path, f.escape, f.high) for f in strict_json.find_lone_surrogates(value)]
    finally:
        module["_orjson"] = saved


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_lone_surrogates_found_as_the_walk_finds_them(value: Any) -> None:
    assert [(f.path, f.escape, f.high) for f in strict_json.find_lone_surrogates(value)] == _walked(value)


def test_a_body_without_surrogates_is_not_walked(monkeypatch: Any) -> None:
    body = {"messages": [{"role": "user", "content": "héllo 😀"}] * 1000}
    walked: list[str] = []
    child = strict_json._child

    def counted(path: str, key: object) -> str:
        walked.append(path)
        return child(path, key)

    monkeypatch.setattr(strict_json, "_child", counted)
    assert strict_json.find_lone_surrogates(body) == []
    assert walked == []
    assert [f.path for f in strict_json.find_lone_surrogates({"a": ["x", "\ud83d"]})] == ["a[1]"]
