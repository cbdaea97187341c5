"""Hypothesis strategies for messy histories: what real agents save when things go wrong."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from chatmend import ChatMessage, ImagePart, TextPart, ThinkingPart, ToolCall
from chatmend.messages import Part

# Ids that collide with the spec's own renames (a_1, call_2_0), repeat like Kimi's and Gemini's, are
# empty, overlong, or carry characters some providers reject.
IDS = st.sampled_from(
    [
        "",
        "a",
        "a_1",
        "a_2",
        "call_0",
        "call_1_0",
        "call_2_0",
        "functions.search:0",
        "functions.search:1",
        "a.b|c/d",
        "toolu_01M8nJQQMxqpv1VaPYuJKT4j",
        "call_" + "x" * 60,
        "x" * 70,
        "ünï",
    ]
)


SHARE = 0.4 if os.environ.get("CHATMEND_HYPOTHESIS_PROFILE", "default") == "default" else 1.0
"""The share of a property's examples CI's profile runs, so that the suite stays within its six minutes on two
cores (`CHATMEND_HYPOTHESIS_PROFILE=thorough` runs them all)."""


def examples(n: int) -> settings:
    """A property's settings: `n` examples (a share of them in CI), or the profile's count when it asks for more
    (the fuzz profile, `CHATMEND_HYPOTHESIS_PROFILE=fuzz`, with `CHATMEND_FUZZ_EXAMPLES` examples a property)."""
    return settings(max_examples=max(math.ceil(n * SHARE), settings().max_examples), deadline=None)


NAMES = st.sampled_from(["search", "read_file", "write_file", "screenshot", "shell"])
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

texts = st.one_of(
    st.sampled_from(["ok", "3 hits", "stop, use the other file", "draft", "Done.", "é 中文 🙂"]),
    st.text(min_size=1, max_size=12),
)
images = st.one_of(
    st.builds(ImagePart, media_type=st.just("image/png"), data=st.sampled_from([PNG, "AAAA"])),
    st.builds(ImagePart, url=st.just("https://example.com/cat.png")),
)
text_parts = st.builds(TextPart, text=texts)
thinking_parts = st.one_of(
    st.builds(
        ThinkingPart, text=texts, signature=st.sampled_from(["sig1", "EqQBsig=="]), provider=st.just("anthropic")
    ),
    st.builds(ThinkingPart, redacted=st.just(True), data=st.just("EmwKopaque"), provider=st.just("anthropic")),
    st.builds(ThinkingPart, text=texts),
)
arguments = st.one_of(
    st.dictionaries(st.sampled_from(["q", "path", "n"]), st.one_of(st.integers(0, 9), texts), max_size=2),
    st.sampled_from(['{"q": "cut', "not json"]),
)
calls = st.builds(ToolCall, id=IDS, name=NAMES, arguments=arguments)


@st.composite
def user_messages(draw: st.DrawFn) -> ChatMessage:
    """A user message: plain text, or text with images."""
    if draw(st.booleans()):
        return ChatMessage(role="user", content=draw(texts))
    parts = draw(st.lists(st.one_of(text_parts, images), min_size=1, max_size=3))
    return ChatMessage(role="user", content=tuple(parts))


@st.composite
def assistant_messages(draw: st.DrawFn) -> ChatMessage:
    """An assistant reply: text, calls, thinking, or a whitespace-only placeholder."""
    kind = draw(st.sampled_from(["text", "calls", "calls", "calls", "placeholder", "thinking"]))
    if kind == "placeholder":
        placeholders: list[str | tuple[Part, ...]] = ["", " ", "\n\t", ()]
        return ChatMessage(role="assistant", content=draw(st.sampled_from(placeholders)))
    if kind == "text":
        return ChatMessage(role="assistant", content=draw(texts))
    tool_calls = tuple(draw(st.lists(calls, min_size=1, max_size=3)))
    if kind == "thinking":
        parts = (draw(thinking_parts), draw(text_parts))
        return ChatMessage(role="assistant", content=parts, tool_calls=tool_calls)
    content = draw(st.one_of(st.just(""), texts))
    return ChatMessage(role="assistant", content=content, tool_calls=tool_calls)


@st.composite
def tool_messages(draw: st.DrawFn) -> ChatMessage:
    """A tool result, sometimes with a screenshot, sometimes an error, sometimes without a name."""
    content: str | tuple[TextPart | ImagePart, ...]
    if draw(st.booleans()):
        content = draw(texts)
    else:
        content = tuple(draw(st.lists(st.one_of(text_parts, images), min_size=1, max_size=2)))
    return ChatMessage(
        role="tool",
        tool_call_id=draw(IDS),
        tool_name=draw(st.one_of(st.none(), NAMES)),
        is_error=draw(st.booleans()),
        content=content,
    )


system_messages = st.builds(ChatMessage, role=st.just("system"), content=texts)


@st.composite
def messy_histories(draw: st.DrawFn, max_size: int = 14) -> list[ChatMessage]:
    """A history as agents save it: results missing, moved, duplicated or orphaned, ids repeated."""
    history: list[ChatMessage] = []
    if draw(st.booleans()):
        history.append(draw(system_messages))
    size = draw(st.integers(0, max_size))
    while len(history) < size:
        kind = draw(st.sampled_from(["user", "assistant", "assistant", "results", "tool", "system"]))
        if kind == "user":
            history.append(draw(user_messages()))
        elif kind == "system":
            history.append(draw(system_messages))
        elif kind == "tool":
            history.append(draw(tool_messages()))
        else:
            message = draw(assistant_messages())
            history.append(message)
            if kind == "results" and message.tool_calls:
                history.extend(draw(_results_for(message)))
    return history


@st.composite
def _results_for(draw: st.DrawFn, message: ChatMessage) -> list[ChatMessage]:
    """Results for some of a message's calls, shuffled, maybe duplicated, with a steer among them."""
    results = [
        ChatMessage(role="tool", tool_call_id=c.id, tool_name=c.name, content=draw(texts))
        for c in message.tool_calls
        if draw(st.integers(0, 4)) > 0
    ]
    if results and draw(st.integers(0, 5)) == 0:
        results.append(results[0])
    results = draw(st.permutations(results))
    if draw(st.integers(0, 3)) == 0:
        results.insert(draw(st.integers(0, len(results))), draw(user_messages()))
    return list(results)


@st.composite
def valid_histories(draw: st.DrawFn, max_turns: int = 5) -> list[ChatMessage]:
    """A history that is already valid: unique non-empty ids, each call answered right after it, in order."""
    history: list[ChatMessage] = [draw(user_messages())]
    counter = 0
    for _ in range(draw(st.integers(0, max_turns))):
        n = draw(st.integers(0, 3))
        tool_calls = []
        for _ in range(n):
            counter += 1
            tool_calls.append(ToolCall(id=f"id{counter}", name=draw(NAMES), arguments=draw(arguments)))
        # A reply without calls has real text: a whitespace-only one is a placeholder, which rule 1 drops.
        reply_text = draw(st.one_of(st.just(""), texts)) if n else draw(texts.filter(lambda t: not t.isspace()))
        history.append(ChatMessage(role="assistant", content=reply_text, tool_calls=tuple(tool_calls)))
        history.extend(replace(draw(tool_messages()), tool_call_id=c.id) for c in tool_calls)
        history.append(draw(user_messages()))
    return history


# Any value a hand-edited file might hold where a field should be.
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def _containers(node: Any) -> list[Any]:
    """Every dict and list in a JSON value, the value first."""
    if not isinstance(node, (dict, list)):
        return []
    return [node, *(inner for value in (node.values() if isinstance(node, dict) else node)
                    for inner in _containers(value))]


def corrupt(data: st.DataObject, roots: list[Any]) -> None:
    """Replace one to three values anywhere inside `roots` (JSON objects and lists, changed in place) by random
    JSON, or add a key with one."""
    containers = [c for root in roots for c in _containers(root)]
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        node = data.draw(st.sampled_from(containers))
        value = data.draw(ANY_JSON)
        if isinstance(node, dict):
            node[data.draw(st.sampled_from(sorted(node)) if node else st.text(max_size=5))] = value
        elif node:
            node[data.draw(st.integers(min_value=0, max_value=len(node) - 1))] = value
