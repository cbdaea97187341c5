"""Anthropic Messages: the whole request vocabulary read, repaired where it pairs, and written back unchanged (#22).

Bodies are generated from every block of the SDK's `BetaContentBlockParam` union (the non-beta
`ContentBlockParam` is a subset) and validated against the SDK's own request types, then: `check` finds nothing,
`repair_body` gives them back equal (the very same items), `from_request` then `to_request` gives them back,
and a result taken out comes back as the only change, inside the user turn that held it.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta import BetaMessageParam, BetaTextBlockParam
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from chatmend import ChatMessage, FilePart, ImagePart, NativePart, TextPart, ThinkingPart
from chatmend.providers import anthropic
from chatmend.providers.base import Dropped
from tests.strategies import examples

PROVIDER = anthropic.PROVIDER
MODEL = "claude-sonnet-4-5"
ROOT = Path(__file__).resolve().parents[2]
REAL_WORLD = ROOT.parent / "shared" / "real-world"
README = ROOT / "docs" / "providers.md"  # the vocabulary tables live in the docs

# ------------------------------------------------------------------------------------ the SDK's request types

_MESSAGES = TypeAdapter(list[BetaMessageParam])
_SYSTEM = TypeAdapter(str | list[BetaTextBlockParam])


def _consume(value: Any) -> None:
    """Walk a validated value: pydantic validates an `Iterable` field lazily, as it is iterated."""
    if isinstance(value, dict):
        for inner in value.values():
            _consume(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            _consume(inner)
    elif hasattr(value, "__next__"):
        _consume(list(value))


def sdk_valid(body: dict[str, Any]) -> None:
    """Raise unless the body's messages and system validate against the anthropic SDK's request types."""
    _consume(_MESSAGES.validate_python(body["messages"]))
    if "system" in body:
        _consume(_SYSTEM.validate_python(body["system"]))


# ------------------------------------------------------------------------------------------- the vocabulary

EPHEMERAL = {"type": "ephemeral"}
PNG = "iVBORw0KGgo="
PDF = "JVBERi0xLjQK"
CITATION = {"type": "char_location", "cited_text": "a", "document_index": 0, "document_title": None,
            "start_char_index": 0, "end_char_index": 1}


def _text(text: str = "hello", **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": text, **extra}


# One example of each server tool result, with the name of the server tool that makes it.
SERVER_RESULTS: dict[str, tuple[str, Any]] = {
    "web_search_tool_result": ("web_search", [{"type": "web_search_result", "url": "https://example.com",
                                               "title": "Example", "encrypted_content": "EqgB", "page_age": "1d"}]),
    "web_fetch_tool_result": ("web_fetch", {"type": "web_fetch_result", "url": "https://example.com/a.pdf",
                                            "content": {"type": "document", "source": {
                                                "type": "base64", "media_type": "application/pdf", "data": PDF}}}),
    "code_execution_tool_result": ("code_execution", {"type": "code_execution_result", "stdout": "4\n",
                                                      "stderr": "", "return_code": 0, "content": []}),
    "bash_code_execution_tool_result": ("bash_code_execution", {"type": "bash_code_execution_result",
                                                                "stdout": "ok", "stderr": "", "return_code": 0,
                                                                "content": []}),
    "text_editor_code_execution_tool_result": ("text_editor_code_execution", {
        "type": "text_editor_code_execution_view_result", "content": "x = 1", "file_type": "text"}),
    "tool_search_tool_result": ("tool_search_tool_regex", {"type": "tool_search_tool_search_result",
                                                           "tool_references": [{"type": "tool_reference",
                                                                                "tool_name": "get_weather"}]}),
    "advisor_tool_result": ("advisor", {"type": "advisor_result", "text": "Looks right."}),
}


def server_pair(kind: str, n: int) -> list[dict[str, Any]]:
    """A server_tool_use and its result, as the API returns them in one assistant turn."""
    name, content = SERVER_RESULTS[kind]
    use_id = f"srvtoolu_{n:04d}"
    return [{"type": "server_tool_use", "id": use_id, "name": name, "input": {"query": "q"}},
            {"type": kind, "tool_use_id": use_id, "content": content}]


def mcp_pair(n: int) -> list[dict[str, Any]]:
    """An MCP connector call and its result (beta)."""
    use_id = f"mcptoolu_{n:04d}"
    return [{"type": "mcp_tool_use", "id": use_id, "name": "lookup", "server_name": "docs", "input": {"q": "x"}},
            {"type": "mcp_tool_result", "tool_use_id": use_id, "content": [_text("found")], "is_error": False}]


IMAGES = [
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}, "cache_control": EPHEMERAL},
    {"type": "image", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}},
]
DOCUMENTS = [
    {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
     "title": "report.pdf", "citations": {"enabled": True}, "cache_control": EPHEMERAL},
    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Plain words, é."},
     "context": "from the wiki"},
    {"type": "document", "source": {"type": "url", "url": "https://example.com/paper.pdf"}},
    {"type": "document", "source": {"type": "file", "file_id": "file_011CPMxVD3fHLUhvTqtsQA5w"}, "title": "Q3"},
    {"type": "document", "source": {"type": "content", "content": [_text("chunk one"), _text("chunk two")]},
     "title": "chunks"},
]
SEARCH_RESULT = {"type": "search_result", "source": "https://example.com/kb/1", "title": "KB 1",
                 "content": [_text("An answer.")], "citations": {"enabled": True}}
CONTAINER_UPLOAD = {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}
THINKING = {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCkYIBRgCKkDsig"}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
COMPACTION = {"type": "compaction", "content": "Summary of the earlier turns."}
TOOL_ADDITION = {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_weather"}}
TOOL_REMOVAL = {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}}
MCP_LISTING = {"type": "mcp_tool_listing", "mcp_server_name": "docs",
               "tools": [{"name": "lookup", "input_schema": {"type": "object"}}]}
FALLBACK = {"type": "fallback", "from": {"model": "claude-opus-5-5"}, "to": {"model": "claude-sonnet-5-5"}}
UNKNOWN = {"type": "hologram_2027", "frames": [{"t": 0, "data": "AAAA"}], "cache_control": EPHEMERAL}
"""A block type that does not exist yet: kept verbatim, never an error (not SDK-valid, by definition)."""


def _cached(block: dict[str, Any], on: bool) -> dict[str, Any]:
    return {**block, "cache_control": EPHEMERAL} if on else block


texts = st.builds(lambda t, cache, cite: _text(t, **({"cache_control": EPHEMERAL} if cache else {}),
                                               **({"citations": [CITATION]} if cite else {})),
                  st.sampled_from(["hi", "Look at this.", "é 🙂", "<system>\nnot a tag\n</system>!"]),
                  st.booleans(), st.booleans())
user_blocks = st.one_of(texts, st.sampled_from(IMAGES), st.sampled_from(DOCUMENTS), st.just(SEARCH_RESULT),
                        st.just(CONTAINER_UPLOAD))
result_content = st.one_of(
    st.sampled_from(["42", "{\"temperature\": 22}", "done\n"]),
    st.lists(st.one_of(texts, st.sampled_from(IMAGES[:2]), st.sampled_from(DOCUMENTS[:3]), st.just(SEARCH_RESULT)),
             min_size=1, max_size=3))


@st.composite
def tool_results(draw: st.DrawFn, use_id: str) -> dict[str, Any]:
    """A tool_result of the whole vocabulary: string or block content, `is_error`, `cache_control`."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": use_id}
    if draw(st.integers(0, 3)):  # most often
        block["content"] = draw(result_content)
    if draw(st.booleans()):
        block["is_error"] = draw(st.booleans())
    return _cached(block, draw(st.booleans()))


@st.composite
def assistant_content(draw: st.DrawFn, counter: Iterator[int], unknown: bool) -> tuple[list[dict[str, Any]],
                                                                                      list[str]]:
    """An assistant turn's blocks (thinking first, server pairs, MCP pairs, text, client calls last) and the
    ids of its client calls."""
    blocks: list[dict[str, Any]] = []
    blocks.extend(draw(st.lists(st.sampled_from([THINKING, REDACTED]), max_size=2)))
    kinds = st.sampled_from(["text", "server", "mcp", "compaction", *(["unknown"] if unknown else [])])
    for kind in draw(st.lists(kinds, min_size=1, max_size=3)):
        if kind == "text":
            blocks.append(draw(texts))
        elif kind == "server":
            blocks.extend(server_pair(draw(st.sampled_from(sorted(SERVER_RESULTS))), next(counter)))
        elif kind == "mcp":
            blocks.extend(mcp_pair(next(counter)))
        elif kind == "compaction":
            blocks.append(COMPACTION)
        else:
            blocks.append(UNKNOWN)
    ids = []
    for _ in range(draw(st.integers(0, 3))):
        use_id = f"toolu_{next(counter):04d}"
        ids.append(use_id)
        call: dict[str, Any] = {"type": "tool_use", "id": use_id, "name": draw(st.sampled_from(["search", "Bash"])),
                                "input": draw(st.sampled_from([{}, {"q": "x"}, {"n": [1, {"deep": None}]}]))}
        if draw(st.booleans()):
            call["caller"] = {"type": "direct"}
        blocks.append(_cached(call, draw(st.booleans())))
    return blocks, ids


@st.composite
def vocabulary_bodies(draw: st.DrawFn, unknown: bool = False) -> dict[str, Any]:
    """A valid Messages body drawn from the whole request vocabulary (beta blocks and system messages in
    `messages` included); with `unknown`, blocks of a type that does not exist yet too."""
    counter = iter(range(10_000))
    messages: list[dict[str, Any]] = []
    extra_user = st.one_of(user_blocks, st.just(UNKNOWN)) if unknown else user_blocks
    pending: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        results = [draw(tool_results(use_id)) for use_id in pending]
        extra = draw(st.lists(extra_user, min_size=0 if results else 1, max_size=3))
        if not results and draw(st.booleans()):
            messages.append({"role": "user", "content": draw(st.sampled_from(["hi", "go on"]))})
        else:
            messages.append({"role": "user", "content": results + extra})
        if draw(st.booleans()):
            messages.append({"role": "system", "content": draw(st.sampled_from(["Be brief.", [_text("Mind the",
                                                                                                  ), _text("time")]]))})
        content, pending = draw(assistant_content(counter, unknown))
        messages.append({"role": "assistant", "content": content})
    results = [draw(tool_results(use_id)) for use_id in pending]
    messages.append({"role": "user", "content": results + draw(st.lists(extra_user, max_size=1)) if results
                     else "thanks"})
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 1024, "messages": messages}
    if draw(st.booleans()):
        body["system"] = [_text("You are terse."), _text("Tools: search.", cache_control=EPHEMERAL)]
    return body


def as_written(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as `to_request` writes them: a user turn of results and other blocks as two wire messages
    (one history message each; Anthropic merges them into the same turn)."""
    out = []
    for message in messages:
        content = message["content"]
        if message["role"] == "user" and isinstance(content, list):
            results = [b for b in content if b["type"] == "tool_result"]
            rest = content[len(results):]
            if results and rest:
                out.extend([{"role": "user", "content": results}, {"role": "user", "content": rest}])
                continue
        out.append(message)
    return out


def round_trip(body: dict[str, Any]) -> dict[str, Any]:
    """`to_request(from_request(body))` with the body's own model and max_tokens."""
    return PROVIDER.to_request(PROVIDER.from_request(body), model=body["model"], max_tokens=body["max_tokens"])


# --------------------------------------------------------------------------------------------- properties


@examples(30)
@given(body=vocabulary_bodies())
def test_generated_bodies_are_valid_for_the_sdk_and_for_check(body: dict[str, Any]) -> None:
    sdk_valid(body)
    assert PROVIDER.check(body) == []


@examples(30)
@given(body=vocabulary_bodies(unknown=True))
def test_a_valid_body_comes_back_equal_item_for_item(body: dict[str, Any]) -> None:
    before = copy.deepcopy(body)
    repaired = PROVIDER.repair_body(body)
    assert repaired.body == before and body == before
    assert not repaired.changed and repaired.rewritten == [] and repaired.thinking_dropped == []
    assert all(a is b for a, b in zip(repaired.body["messages"], body["messages"]))


@examples(30)
@given(body=vocabulary_bodies(unknown=True))
def test_from_request_then_to_request_gives_the_body_back(body: dict[str, Any]) -> None:
    again = round_trip(body)
    assert again["messages"] == as_written(body["messages"])
    assert again.get("system") == body.get("system")
    assert PROVIDER.check(again) == []
    if UNKNOWN not in (b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]):
        sdk_valid(again)


@examples(30)
@given(body=vocabulary_bodies(), data=st.data())
def test_a_result_taken_out_comes_back_as_the_only_change_in_its_turn(body: dict[str, Any],
                                                                       data: st.DataObject) -> None:
    items = body["messages"]
    spots = [(n, m) for n, item in enumerate(items) if isinstance(item["content"], list)
             for m, block in enumerate(item["content"]) if block["type"] == "tool_result"]
    if not spots:
        return
    n, m = data.draw(st.sampled_from(spots))
    gone = items[n]["content"][m]
    turn = items[n]["content"][:m] + items[n]["content"][m + 1:]
    broken = {**body, "messages": [*items[:n], *([{"role": "user", "content": turn}] if turn else []),
                                   *items[n + 1:]]}
    repaired = PROVIDER.repair_body(broken, thinking_policy="keep")  # (the default's drops: tests below)
    out = repaired.body["messages"]
    [q] = repaired.rewritten
    synthetic = [b for b in out[q]["content"] if b.get("tool_use_id") == gone["tool_use_id"]]
    assert len(synthetic) == 1 and synthetic[0]["is_error"] is True
    if len(out) == len(broken["messages"]):  # the turn rewritten: every other block of it as it was
        assert q == n and [b for b in out[n]["content"] if b is not synthetic[0]] == turn
        others = [(a, b) for k, (a, b) in enumerate(zip(out, broken["messages"])) if k != n]
    else:  # what is left of the turn stayed in place: the result goes in a user message of its own next to it
        assert q in (n, n + 1) and out[q]["content"] == synthetic
        others = list(zip(out[:q] + out[q + 1:], broken["messages"], strict=True))
    assert all(a is b for a, b in others)  # the very same objects, untouched
    assert PROVIDER.check(repaired.body) == []
    sdk_valid(repaired.body)
    assert PROVIDER.repair_body(repaired.body).body == repaired.body


@examples(25)
@given(body=vocabulary_bodies(unknown=True))
def test_server_pairs_are_never_answered_or_split(body: dict[str, Any]) -> None:
    # without the results of the client calls, repair answers those, and only those
    items = [{**m, "content": [b for b in m["content"] if b["type"] != "tool_result"] or "ok"}
             if m["role"] == "user" and isinstance(m["content"], list) else m for m in body["messages"]]
    repaired = PROVIDER.repair_body({**body, "messages": items}, thinking_policy="keep")
    answered = {b["tool_use_id"] for m in repaired.body["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b["type"] == "tool_result"}
    client = {b["id"] for m in items if isinstance(m["content"], list) for b in m["content"] if b["type"] == "tool_use"}
    assert answered == client
    native = [m["content"] for m in items if m["role"] == "assistant"]
    assert [m["content"] for m in repaired.body["messages"] if m["role"] == "assistant"] == native
    assert PROVIDER.check(repaired.body) == []


# --------------------------------------------------------------------------- one test per README table row

def _user(*blocks: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": list(blocks)}]


def _assistant(*blocks: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "go"}, {"role": "assistant", "content": [*blocks, _text("ok")]},
            {"role": "user", "content": "thanks"}]


_CALL = {"type": "tool_use", "id": "toolu_01", "name": "search", "input": {"q": "x"}, "cache_control": EPHEMERAL}
_RESULT = {"type": "tool_result", "tool_use_id": "toolu_01", "content": [_text("found")], "is_error": False,
           "cache_control": EPHEMERAL}
_LOOP: list[dict[str, Any]] = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [THINKING, _CALL]},
         {"role": "user", "content": [_RESULT, _text("and?")]}]

# type -> (messages holding one, how chatmend reads it: the neutral part class, "call" or "result")
VOCABULARY: dict[str, tuple[list[dict[str, Any]], str]] = {
    "text": (_user(_text("hi", cache_control=EPHEMERAL, citations=[CITATION])), "TextPart"),
    "image": (_user(*IMAGES[:2]), "ImagePart"),
    "document": (_user(*DOCUMENTS[:4]), "FilePart"),
    "search_result": (_user(SEARCH_RESULT), "NativePart"),
    "thinking": (_assistant(THINKING), "ThinkingPart"),
    "redacted_thinking": (_assistant(REDACTED), "ThinkingPart"),
    "tool_use": (_LOOP, "call"),
    "tool_result": (_LOOP, "result"),
    "server_tool_use": (_assistant(*server_pair("web_search_tool_result", 1)), "NativePart"),
    **{kind: (_assistant(*server_pair(kind, 1)), "NativePart") for kind in SERVER_RESULTS},
    "mcp_tool_use": (_assistant(*mcp_pair(1)), "NativePart"),
    "mcp_tool_result": (_assistant(*mcp_pair(1)), "NativePart"),
    "container_upload": (_user(_text("analyse this"), CONTAINER_UPLOAD), "NativePart"),
    "compaction": (_assistant(COMPACTION), "NativePart"),
    "tool_addition": (_assistant(TOOL_ADDITION), "NativePart"),
    "tool_removal": (_assistant(TOOL_REMOVAL), "NativePart"),
    "mcp_tool_listing": (_assistant(MCP_LISTING), "NativePart"),
    "fallback": (_assistant(FALLBACK), "NativePart"),
    "system message": ([{"role": "user", "content": "hi"}, {"role": "system", "content": "Mind the time."},
                        {"role": "user", "content": "go"}], "system"),
    "unknown type": (_user(_text("see"), UNKNOWN), "NativePart"),
}


def _blocks_of(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [b for m in messages if isinstance(m["content"], list) for b in m["content"] if b["type"] == kind]


@pytest.mark.parametrize("kind", sorted(VOCABULARY))
def test_each_vocabulary_row_reads_as_documented_and_comes_back(kind: str) -> None:
    messages, treatment = VOCABULARY[kind]
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 1024, "messages": messages}
    if kind != "unknown type":
        sdk_valid(body)
    assert PROVIDER.check(body) == []
    history = PROVIDER.from_request(body)
    if treatment == "call":
        calls = [c for m in history for c in m.tool_calls]
        assert [c.id for c in calls] == ["toolu_01"]
        assert calls[0].provider_data == {"anthropic": {"cache_control": EPHEMERAL}}
    elif treatment == "result":
        [result] = [m for m in history if m.role == "tool"]
        assert result.tool_call_id == "toolu_01" and result.tool_name == "search"
        assert result.provider_data == {"anthropic": {"cache_control": EPHEMERAL, "is_error": False}}
    elif treatment == "system":
        [system] = [m for m in history if m.role == "system"]
        assert system.content == "Mind the time."
    else:
        wire = [b for b in _blocks_of(messages, kind)] if kind != "unknown type" else [UNKNOWN]
        parts = [p for m in history if not isinstance(m.content, str) for p in m.content
                 if type(p).__name__ == treatment]
        if treatment == "NativePart":
            native = [p.data for p in parts if isinstance(p, NativePart)]
            assert all(w in native for w in wire)  # verbatim, in its message
        else:
            assert len(parts) >= len(wire)
    repaired = PROVIDER.repair_body(body)
    assert repaired.body == body and not repaired.changed
    assert round_trip(body)["messages"] == as_written(messages)


def test_the_readme_table_has_one_row_per_vocabulary_type() -> None:
    if not README.exists():
        pytest.skip("no README")
    text = README.read_text(encoding="utf-8")
    start = text.index("## Anthropic vocabulary")
    table = text[start:text.index("\n\n", text.index("| ---", start))]
    rows = re.findall(r"^\| (?:`([^`]+)`|([a-z ]+?)) +\|", table, flags=re.M)
    kinds = {a or b for a, b in rows} - {"type"}
    assert kinds == set(VOCABULARY)


# ------------------------------------------------------------------------- the parts, their fields and files


def test_fields_the_model_does_not_name_are_kept_on_their_parts() -> None:
    body = {"model": MODEL, "max_tokens": 64, "system": [_text("sys", cache_control=EPHEMERAL)],
            "messages": _user(_text("hi", cache_control=EPHEMERAL, citations=[CITATION]), IMAGES[1], DOCUMENTS[0])}
    system, user = PROVIDER.from_request(body)
    assert not isinstance(user.content, str)
    assert system.content == (TextPart(text="sys", provider_data={"anthropic": {"cache_control": EPHEMERAL}}),)
    text, image, document = user.content
    assert text == TextPart(text="hi", provider_data={"anthropic": {"cache_control": EPHEMERAL,
                                                                    "citations": [CITATION]}})
    assert image == ImagePart(url="https://example.com/a.png", provider_data={"anthropic": {
        "cache_control": EPHEMERAL}})
    assert document == FilePart(media_type="application/pdf", data=PDF, filename="report.pdf", provider_data={
        "anthropic": {"citations": {"enabled": True}, "cache_control": EPHEMERAL}})
    again = round_trip(body)
    assert again["system"] == body["system"] and again["messages"] == body["messages"]


def test_a_document_of_each_source_is_a_file_part_and_a_content_source_is_kept_verbatim() -> None:
    [message] = PROVIDER.from_request(_user(*DOCUMENTS))
    assert not isinstance(message.content, str)
    pdf, text, url, file, content = message.content
    assert isinstance(pdf, FilePart) and pdf.media_type == "application/pdf" and pdf.data == PDF
    assert isinstance(text, FilePart) and text.media_type == "text/plain" and text.data is not None
    assert isinstance(url, FilePart) and url.url == "https://example.com/paper.pdf"
    assert isinstance(file, FilePart) and file.file_id is not None and file.provider == "anthropic"
    assert content == NativePart(provider="anthropic", data=DOCUMENTS[4])


def test_a_file_part_of_another_provider_is_written_as_a_document() -> None:
    history = [ChatMessage(role="user", content=(
        FilePart(media_type="application/pdf", data=PDF, filename="a.pdf"),
        FilePart(media_type="text/markdown", data="IyBUaXRsZQ=="),  # "# Title"
        FilePart(url="https://example.com/b.pdf"),
        TextPart(text="Summarize."),
    ))]
    body = PROVIDER.to_request(history, model=MODEL)
    assert body["messages"][0]["content"][:3] == [
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
         "title": "a.pdf"},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "# Title"}},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/b.pdf"}}]
    sdk_valid(body)
    assert PROVIDER.check(body) == []
    assert "file" in PROVIDER.writes_parts and "native" in PROVIDER.writes_parts


@pytest.mark.parametrize("part", [FilePart(media_type="audio/wav", data="UklGRg=="),
                                  FilePart(file_id="file-abc", provider="openai_chat")])
def test_a_file_no_document_can_carry_is_unsupported_by_name(part: FilePart) -> None:
    from chatmend.exceptions import UnsupportedError

    with pytest.raises(UnsupportedError) as caught:
        PROVIDER.to_request([ChatMessage(role="user", content=(part,))], model=MODEL)
    assert caught.value.feature == "file"


def test_a_system_message_inside_messages_is_written_back_in_place() -> None:
    body = {"model": MODEL, "max_tokens": 64, "system": "Top.", "messages": [
        {"role": "system", "content": "First, in messages."}, {"role": "user", "content": "hi"},
        {"role": "system", "content": [_text("Later.", cache_control=EPHEMERAL)]}, {"role": "user", "content": "go"}]}
    history = PROVIDER.from_request(body)
    assert [m.role for m in history] == ["system", "system", "user", "system", "user"]
    again = PROVIDER.to_request(history, model=MODEL)
    assert again["system"] == [_text("Top.")] and again["messages"] == body["messages"]
    sdk_valid(again)


def test_an_unknown_block_type_is_kept_in_place_everywhere_and_passes_check() -> None:
    body: dict[str, Any] = {"model": MODEL, "max_tokens": 64, "messages": [
        {"role": "user", "content": [UNKNOWN, _text("q")]},
        {"role": "assistant", "content": [UNKNOWN, _text("a"), {"type": "tool_use", "id": "t1", "name": "f",
                                                                 "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [UNKNOWN]}, UNKNOWN]}]}
    assert PROVIDER.check(body) == []
    history = PROVIDER.from_request(body)
    assert sum(isinstance(p, NativePart) for m in history if not isinstance(m.content, str) for p in m.content) == 4
    assert PROVIDER.repair_body(body).body == body
    assert round_trip(body)["messages"] == as_written(body["messages"])
    # and to another provider it is refused by name and path, or dropped and reported
    drops: list[Dropped] = []
    from chatmend import providers

    providers.get("openai_chat").to_request(history, model="gpt-4o", on_unsupported=drops.append)
    assert [d.type for d in drops] == ["hologram_2027"] * 4


def test_an_unpaired_server_tool_use_ends_a_paused_turn_and_is_sent_back_as_it_is() -> None:
    # `stop_reason: "pause_turn"`: the reply ends with a server_tool_use whose result is still to come; the
    # documented way on is to send the turn back as it is, as the final assistant message
    paused = {"role": "assistant", "content": [_text("Searching."), server_pair("web_search_tool_result", 1)[0]]}
    body = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "news?"}, paused]}
    assert PROVIDER.check(body) == []
    repaired = PROVIDER.repair_body(body)
    assert repaired.body == body and not repaired.changed
    assert round_trip(body)["messages"] == body["messages"]


# ----------------------------------------------------------------------------------------- thinking policy

def _thinking_body() -> dict[str, Any]:
    """Three tool loops with signed thinking; the first loop's result is missing."""
    def loop(n: int, answered: bool) -> list[dict[str, Any]]:
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "search", "input": {}}
        turn = {"role": "assistant", "content": [{**THINKING, "signature": f"sig{n}"}, _text(f"step {n}"), call]}
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "r"}
        return [turn, {"role": "user", "content": [result] if answered else [_text("no result")]}]
    return {"model": MODEL, "max_tokens": 4096, "thinking": {"type": "enabled", "budget_tokens": 2048},
            "messages": [{"role": "user", "content": "go"}, *loop(1, False), *loop(2, True), *loop(3, True)]}


def test_drop_leaves_out_thinking_after_the_first_change_but_not_in_the_last_turn() -> None:
    body = _thinking_body()
    repaired = PROVIDER.repair_body(body)  # "drop" is repair_body's default
    out = repaired.body["messages"]
    # the synthetic result goes in a user message of its own, before the kept one holding text
    assert out[3] is body["messages"][2] and out[2]["content"][0]["tool_use_id"] == "toolu_1"
    assert repaired.thinking_dropped == [Dropped("anthropic", "thinking", "messages[4].content[0]")]
    assert [b["type"] for b in out[4]["content"]] == ["text", "tool_use"]
    assert out[1] is body["messages"][1]  # before the change: as it was, thinking and all
    assert out[6] is body["messages"][5]  # the last assistant turn: byte for byte (AT1, AT5)
    assert repaired.rewritten == [2, 4]
    assert PROVIDER.check(repaired.body) == []


def test_keep_leaves_every_thinking_block_as_it_was() -> None:
    body = _thinking_body()
    repaired = PROVIDER.repair_body(body, thinking_policy="keep")
    assert repaired.thinking_dropped == [] and repaired.rewritten == [2]
    out = repaired.body["messages"]
    assert all(a is b for a, b in zip(out[:2] + out[3:], body["messages"]))


def test_server_asks_the_api_to_drop_what_fails_the_binding_check() -> None:
    body = _thinking_body()
    repaired = PROVIDER.repair_body(body, thinking_policy="server")
    assert repaired.block_binding
    assert repaired.body["thinking"] == {"type": "enabled", "budget_tokens": 2048,
                                         "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}  # the input is not mutated
    assert repaired.thinking_dropped == [] and repaired.rewritten == [2]


def test_a_valid_body_keeps_its_thinking_under_every_policy() -> None:
    body = _thinking_body()
    body["messages"][2] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]}
    for policy in ("drop", "keep", "server"):
        repaired = PROVIDER.repair_body(body, thinking_policy=policy)
        assert repaired.body == body and not repaired.changed and not repaired.block_binding


def test_to_request_drops_on_request_and_reports_each_drop() -> None:
    history = PROVIDER.from_request(_thinking_body())
    dropped: list[Dropped] = []
    body = PROVIDER.to_request(history, model=MODEL, thinking_policy="drop", on_thinking_dropped=dropped.append)
    assert [d.type for d in dropped] == ["thinking"]
    assert dropped[0].path == "messages[4].content[0]"  # in the history: the second loop's assistant message
    kinds = [[b["type"] for b in m["content"]] for m in body["messages"] if m["role"] == "assistant"]
    assert kinds == [["thinking", "text", "tool_use"], ["text", "tool_use"], ["thinking", "text", "tool_use"]]
    kept = PROVIDER.to_request(history, model=MODEL)  # "keep" is to_request's default: prefix-stable
    assert [[b["type"] for b in m["content"]] for m in kept["messages"] if m["role"] == "assistant"] == [
        ["thinking", "text", "tool_use"]] * 3
    with pytest.raises(ValueError, match="thinking_policy"):
        PROVIDER.to_request(history, model=MODEL, thinking_policy="server")


def test_the_latest_assistant_thinking_is_byte_identical_after_repair() -> None:
    body = _thinking_body()
    last = json.dumps(body["messages"][5], ensure_ascii=False)
    for policy in ("drop", "keep", "server"):
        out = PROVIDER.repair_body(body, thinking_policy=policy).body
        assert json.dumps(out["messages"][6], ensure_ascii=False) == last


# ----------------------------------------------------------------------------------- real request bodies


def _real_bodies() -> Iterator[tuple[str, dict[str, Any]]]:
    """The Anthropic request bodies in ../shared/real-world: Claude Code's (a proxy's captures) and those of
    pydantic-ai's cassettes."""
    for path in sorted(REAL_WORLD.glob("Moonsong-Labs__claude-nexus__*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for side in ("parent", "child"):
            if isinstance(data.get(side), dict) and isinstance(data[side].get("body"), dict):
                yield f"{path.name}:{side}", data[side]["body"]
    yaml = pytest.importorskip("yaml")
    for path in sorted(REAL_WORLD.glob("pydantic__pydantic-ai__*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for k, interaction in enumerate(data.get("interactions", [])):
            request = interaction.get("request", {})
            if "api.anthropic.com/v1/messages" in request.get("uri", "") and isinstance(
                    request.get("parsed_body"), dict):
                yield f"{path.name}:{k}", request["parsed_body"]


def _each_real_body(test: Callable[[str, dict[str, Any]], None]) -> None:
    if not REAL_WORLD.is_dir():
        pytest.skip("../shared/real-world is absent")
    seen = 0
    for name, body in _real_bodies():
        seen += 1
        test(name, body)
    assert seen >= 8  # four Claude Code captures (parent and child), the cassettes' requests


def test_real_bodies_read_and_a_valid_one_comes_back_equal() -> None:
    def one(name: str, body: dict[str, Any]) -> None:
        history = PROVIDER.from_request(body)
        assert history, name
        before = copy.deepcopy(body)
        repaired = PROVIDER.repair_body(body)
        if PROVIDER.check(body) == []:
            assert repaired.body == before and not repaired.changed, name
        else:  # the duplicated Claude Code turn: repaired, and valid
            assert PROVIDER.check(repaired.body) == [], name
            assert all(isinstance(m, dict) for m in repaired.body["messages"])
        sdk_valid(repaired.body)

    _each_real_body(one)


def test_real_bodies_server_and_mcp_calls_are_not_answered() -> None:
    def one(name: str, body: dict[str, Any]) -> None:
        repaired = PROVIDER.repair_body(body).body
        native = {b.get("id") for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
                  if b.get("type") in ("server_tool_use", "mcp_tool_use")}
        answered = {b.get("tool_use_id") for m in repaired["messages"] if isinstance(m["content"], list)
                    for b in m["content"] if b.get("type") == "tool_result"}
        assert not native & answered, name

    _each_real_body(one)


def test_thinking_parts_read_from_real_bodies_stay_anthropic_signed() -> None:
    def one(name: str, body: dict[str, Any]) -> None:
        for message in PROVIDER.from_request(body):
            for part in message.content if not isinstance(message.content, str) else ():
                if isinstance(part, ThinkingPart) and part.provider == "anthropic":
                    assert part.signature or part.redacted, name

    _each_real_body(one)


def test_a_reply_with_server_tool_blocks_reads_them_in_place() -> None:
    reply: dict[str, Any] = {
        "id": "msg_01", "type": "message", "role": "assistant", "model": MODEL, "stop_reason": "end_turn",
        "content": [*server_pair("web_search_tool_result", 7), _text("Found it.", citations=[CITATION])],
        "usage": {"input_tokens": 10, "output_tokens": 5}}
    message = anthropic.from_response(reply)
    assert not isinstance(message.content, str)
    use, result, text = message.content
    assert isinstance(use, NativePart) and use.native_type == "server_tool_use" and not message.tool_calls
    assert isinstance(result, NativePart) and result.data == reply["content"][1]
    assert isinstance(text, TextPart) and text.provider_data == {"anthropic": {"citations": [CITATION]}}


@examples(25)
@given(kind=st.one_of(st.lists(st.integers(), max_size=2), st.none(), st.integers(), st.just("future_kind")))
def test_a_native_block_of_any_type_value_is_kept_and_never_crashes(kind: Any) -> None:
    block = {"type": kind, "x": 1}
    body = {"model": MODEL, "max_tokens": 64, "messages": [
        {"role": "user", "content": [block, _text("q")]},
        {"role": "assistant", "content": [_text("a"), block]}, {"role": "user", "content": "ok"}]}
    problems = PROVIDER.check(body)
    assert all(p.code == "SHAPE" for p in problems)
    history = PROVIDER.from_request(body)
    assert any(isinstance(p, NativePart) and p.data == block for p in history[0].content)
    assert PROVIDER.repair_body(body).body == body
