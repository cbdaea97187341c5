"""#22 for the Chat shape (openai_chat, kimi, mistral): every message, part and call of the SDK's request types is
read, repaired where it pairs, and written back unchanged; `check` raises no false problem on any of them."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessageParam
from pydantic import ConfigDict, TypeAdapter

from chatmend import ChatMessage, FilePart, ImagePart, NativePart, TextPart, ThinkingPart, ToolCall
from chatmend.exceptions import UnsupportedError
from chatmend.providers import kimi, mistral, openai_chat
from chatmend.providers.openai_chat import OpenAIChat
from tests.providers.common import drain
from tests.strategies import examples

oc = openai_chat.PROVIDER
REAL = Path(__file__).resolve().parents[3] / "shared" / "real-world"
# extra="forbid": a field the SDK's request types do not know fails; `reasoning_content` (DeepSeek's, Kimi's) is
# taken out first, as it is not OpenAI's.
_MESSAGE = TypeAdapter(ChatCompletionMessageParam, config=ConfigDict(extra="forbid"))
_NOT_OPENAI = {"reasoning_content"}
PDF = "JVBERi0xLjQK"
WAV = "UklGRiQAAABXQVZF"


def sdk_valid(messages: list[dict[str, Any]]) -> None:
    """Every message against the openai SDK's `ChatCompletionMessageParam`, fully iterated."""
    for message in messages:
        drain(_MESSAGE.validate_python({k: v for k, v in message.items() if k not in _NOT_OPENAI}))


def written_back(provider: OpenAIChat, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The body's messages read as `repair_body` reads them, then written by the provider's writer afresh."""
    history = [m for group in provider._read_groups(body["messages"]) for m in group]
    messages: list[dict[str, Any]] = provider.to_request(history, model="m")["messages"]
    return messages


# --------------------------------------------------------------------------------------- generated bodies

_texts = st.sampled_from(["ok", "", "3 hits", "é 中文 🙂", "Done.", '{"a": 1}'])
_cache = st.just({"mode": "explicit"})
_name = st.sampled_from(["alice", "bot_2"])


def _maybe(draw: st.DrawFn, part: dict[str, Any], key: str, value: st.SearchStrategy[Any]) -> dict[str, Any]:
    """The dict with `key` set to a drawn value, or as it is."""
    if draw(st.booleans()):
        part[key] = draw(value)
    return part


@st.composite
def text_parts(draw: st.DrawFn) -> dict[str, Any]:
    return _maybe(draw, {"type": "text", "text": draw(_texts)}, "prompt_cache_breakpoint", _cache)


@st.composite
def user_parts(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "image_url", "input_audio", "file_data", "file_id", "bare_file"]))
    if kind == "text":
        return draw(text_parts())
    if kind == "image_url":
        url = draw(st.sampled_from(["https://example.com/cat.png", "data:image/png;base64,iVBORw0KGgo="]))
        image = _maybe(draw, {"url": url}, "detail", st.sampled_from(["auto", "low", "high", "original"]))
        return _maybe(draw, {"type": "image_url", "image_url": image}, "prompt_cache_breakpoint", _cache)
    if kind == "input_audio":
        return {"type": "input_audio", "input_audio": {"data": WAV, "format": draw(st.sampled_from(["wav", "mp3"]))}}
    if kind == "file_data":
        return {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"}}
    if kind == "file_id":
        return {"type": "file", "file": {"file_id": "file-abc123"}}
    return {"type": "file", "file": {"file_data": PDF, "filename": "b.pdf"}}


@st.composite
def content_of(draw: st.DrawFn, parts: st.SearchStrategy[dict[str, Any]], *, non_empty: bool = False) -> Any:
    """A string, or a list of parts."""
    if draw(st.booleans()):
        text = draw(_texts)
        return text or ("x" if non_empty else text)
    return draw(st.lists(parts, min_size=1, max_size=3))


@st.composite
def plain_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A system, developer or user message."""
    role = draw(st.sampled_from(["system", "developer", "user"]))
    parts = user_parts() if role == "user" else text_parts()
    return _maybe(draw, {"role": role, "content": draw(content_of(parts, non_empty=True))}, "name", _name)


@st.composite
def assistant_replies(draw: st.DrawFn) -> dict[str, Any]:
    """An assistant message without calls: text, parts, a refusal, an audio id, a name, reasoning."""
    message: dict[str, Any] = {"role": "assistant"}
    kind = draw(st.sampled_from(["text", "parts", "refusal", "audio"]))
    if kind == "text":
        message["content"] = draw(_texts) or "x"
    elif kind == "parts":
        # (one part says something: a whitespace-only message is a placeholder, dropped by repair's rule 1)
        refusal = st.builds(lambda t: {"type": "refusal", "refusal": t}, _texts)
        said = {"type": "text", "text": draw(_texts) or "x"}
        message["content"] = [said, *draw(st.lists(st.one_of(text_parts(), refusal), max_size=2))]
    elif kind == "refusal":
        message["content"] = draw(st.sampled_from([None, "I can't."]))
        message["refusal"] = "I can't help with that."
    else:
        message["audio"] = {"id": "audio_abc123"}
    _maybe(draw, message, "name", _name)
    return _maybe(draw, message, "reasoning_content", st.sampled_from(["Think first.", ""]))


@st.composite
def call_turns(draw: st.DrawFn, ids: list[str]) -> list[dict[str, Any]]:
    """An assistant message with function and custom calls (or a legacy function_call), then its results."""
    if draw(st.integers(0, 4)) == 0:  # the legacy function_call, answered by a function message
        arguments = draw(st.sampled_from(['{"q": "x"}', '{ "q" : "x" }']))
        legacy: dict[str, Any] = {"role": "assistant", "content": None,
                                  "function_call": {"name": "search", "arguments": arguments}}
        result = {"role": "function", "name": "search", "content": draw(st.sampled_from(["3 hits", None]))}
        return [legacy, result]
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        call_id = f"call_{len(ids)}"
        ids.append(call_id)
        if draw(st.booleans()):
            arguments = draw(st.sampled_from(['{"q":"x"}', '{ "q" : "x" }', "{}", "not json", '{"n": 1.50}']))
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": draw(st.sampled_from(["search", "read_file"])), "arguments": arguments}})
        else:
            text = draw(st.sampled_from(["*** Begin Patch\n*** End Patch", '{"x": [1,2]}', ""]))
            calls.append({"id": call_id, "type": "custom", "custom": {"name": "apply_patch", "input": text}})
    content = draw(st.sampled_from([None, "Checking.", ""]))
    message: dict[str, Any] = {"role": "assistant", "tool_calls": calls}
    if content is not None or draw(st.booleans()):
        message["content"] = content
    _maybe(draw, message, "reasoning_content", st.just("Plan."))
    results = []
    for call in calls:
        text = draw(content_of(text_parts()))
        results.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    return [message, *results]


@st.composite
def chat_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A Chat Completions body over the whole vocabulary that the SDK's types accept and OpenAI pairs."""
    ids: list[str] = []
    messages: list[dict[str, Any]] = [draw(plain_messages())]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["plain", "reply", "calls", "calls"]))
        if kind == "plain":
            messages.append(draw(plain_messages()))
        elif kind == "reply":
            messages.append(draw(assistant_replies()))
        else:
            messages.extend(draw(call_turns(ids)))
    return {"model": "gpt-4o", "temperature": 0.2, "messages": messages}


@examples(60)
@given(body=chat_bodies())
def test_a_generated_body_is_valid_passes_check_and_comes_back_equal(body: dict[str, Any]) -> None:
    sdk_valid(body["messages"])
    assert oc.check(body) == []
    before = copy.deepcopy(body)
    repaired = oc.repair_body(body)
    assert repaired.body == before and not repaired.changed
    assert all(a is b for a, b in zip(repaired.body["messages"], body["messages"]))
    assert body == before


@examples(60)
@given(body=chat_bodies())
def test_the_writer_writes_back_what_it_read(body: dict[str, Any]) -> None:
    # every item read as `repair_body` reads it and written anew is the item (what makes a rewritten item faithful)
    assert written_back(oc, body) == body["messages"]


@examples(60)
@given(body=chat_bodies(), data=st.data())
def test_removing_one_result_gives_a_body_whose_only_change_is_its_insertion(
        body: dict[str, Any], data: st.DataObject) -> None:
    items = body["messages"]
    results = [i for i, item in enumerate(items) if item["role"] in ("tool", "function")]
    if not results:
        return
    gone = data.draw(st.sampled_from(results))
    broken = {**body, "messages": items[:gone] + items[gone + 1:]}
    repaired = oc.repair_body(broken)
    out = repaired.body["messages"]
    assert len(out) == len(items) and repaired.rewritten == [gone]
    assert out[gone]["role"] == items[gone]["role"]  # a function message for the legacy call, else a tool message
    assert out[gone].get("tool_call_id") == items[gone].get("tool_call_id")
    assert out[gone].get("name") == items[gone].get("name")
    assert all(a is b for a, b in zip(out[:gone] + out[gone + 1:], broken["messages"]))
    assert oc.check(repaired.body) == []
    sdk_valid(out)


@examples(60)
@given(body=chat_bodies())
def test_kimi_comes_back_equal_too(body: dict[str, Any]) -> None:
    # Kimi's own ids (functions.NAME:N) are minted by position: a body with others gets its ids rewritten, and
    # nothing else of those items changes
    # (some OpenAI bodies are not Kimi's: a refusal without content breaks KI3); a rewritten message with tool calls
    # also gets Kimi's `reasoning_content: ""` (KI2), which thinking-on models need
    repaired = kimi.repair_body(body)
    assert all(p.code == "KI3" for p in kimi.check(repaired.body))
    if not kimi.check(body):
        assert repaired.body == body  # a body Kimi takes comes back as it is (#43: only what is refused)
        return
    kimi_ready = [m if m["role"] != "assistant" or not m.get("tool_calls") or "reasoning_content" in m else
                  {**m, "reasoning_content": ""} for m in body["messages"]]
    assert _without_ids(repaired.body["messages"]) == _without_ids(kimi_ready)
    assert kimi.repair_body(repaired.body).body == repaired.body


# ------------------------------------------------------------------------------------------------- Mistral

_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")


def _without_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with every call id and `tool_call_id` blanked (what a renamed call changes)."""
    out = copy.deepcopy(messages)
    for message in out:
        for call in message.get("tool_calls") or []:
            call["id"] = ""
        if "tool_call_id" in message:
            message["tool_call_id"] = ""
    return out


@st.composite
def mistral_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A Mistral body in its own spellings (content null, "" or absent, calls without `type`, arguments as
    objects, named results, bare image URLs, thinking chunks), its ids as mistral-common's samples have them:
    the same 9 characters everywhere, or a valid own id."""
    image = st.sampled_from([{"type": "image_url", "image_url": "https://x/y.png"},
                             {"type": "image_url", "image_url": {"url": "https://x/y.png"}}])
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": draw(st.one_of(_texts.map(lambda t: t or "q"), st.lists(
            st.one_of(text_parts(), image), min_size=1, max_size=2)))}]
    for turn in range(draw(st.integers(1, 3))):
        calls = []
        for k in range(draw(st.integers(1, 2))):
            call_id = draw(st.sampled_from(["123456789", f"Ab{turn}{k}cdefg"]))
            arguments = draw(st.sampled_from(['{"city": "Paris"}', {"city": "Oslo"}, "{}"]))
            call: dict[str, Any] = {"id": call_id, "function": {"name": "get_weather", "arguments": arguments}}
            if draw(st.booleans()):
                call["type"] = "function"
            calls.append(call)
        message: dict[str, Any] = {"role": "assistant", "tool_calls": calls}
        content = draw(st.sampled_from(["absent", None, "", "Checking."]))
        if content != "absent":
            message["content"] = content
        if draw(st.booleans()):
            message["content"] = [{"type": "thinking", "thinking": [{"type": "text", "text": "Paris first."}]},
                                  {"type": "text", "text": "Checking."}]
        messages.append(message)
        for call in calls:
            result: dict[str, Any] = {"role": "tool", "tool_call_id": call["id"], "content": "22C"}
            if draw(st.booleans()):
                result["name"] = "get_weather"
            messages.append(result)
        messages.append({"role": "assistant", "content": "Done."})
        messages.append({"role": "user", "content": "And tomorrow?"})
    return {"model": "mistral-large-latest", "messages": messages}


@examples(50)
@given(body=mistral_bodies())
def test_mistral_renamed_ids_change_only_the_ids_of_their_calls_and_results(body: dict[str, Any]) -> None:
    before = copy.deepcopy(body)
    repaired = mistral.repair_body(body)
    out = repaired.body["messages"]
    assert mistral.check(repaired.body) == []
    if not mistral.check(before):
        assert repaired.body == before and not repaired.rewritten  # taken as it is (#43: only what is refused)
        return
    assert _without_ids(out) == _without_ids(before["messages"])  # nothing but ids changed
    # only an assistant message with a renamed call, and the results of its calls, are written anew
    renamed = {i for i, (a, b) in enumerate(zip(out, before["messages"])) if a != b}
    turns = {j for i in renamed if out[i]["role"] == "assistant"
             for j in range(i, len(out)) if j == i or (out[j]["role"] == "tool" and all(
                 m["role"] == "tool" for m in out[i + 1:j + 1]))}
    assert renamed <= set(repaired.rewritten) <= turns
    assert all(out[i] is body["messages"][i] for i in range(len(out)) if i not in repaired.rewritten)
    wire = [c["id"] for m in out for c in m.get("tool_calls", ())]
    assert all(_MISTRAL_ID.fullmatch(i) for i in wire) and len(set(wire)) == len(wire)
    assert [m["tool_call_id"] for m in out if m["role"] == "tool"] == wire
    assert body == before
    assert mistral.repair_body(repaired.body).body == repaired.body


# ---------------------------------------------------------------------------------- one test per README row

def _body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": list(messages)}


def _reads_checks_and_comes_back(body: dict[str, Any], provider: OpenAIChat = oc, *,
                                 sdk: bool = True) -> list[ChatMessage]:
    """What every row asserts: SDK-valid (for OpenAI), no problem, repaired equal, written back equal."""
    if provider is oc and sdk:
        sdk_valid(body["messages"])
    assert provider.check(body) == []
    assert provider.repair_body(body).body == body
    assert written_back(provider, body) == body["messages"]
    return provider.from_request(body)


USER = {"role": "user", "content": "hi"}


def test_row_system_and_developer_messages() -> None:
    history = _reads_checks_and_comes_back(_body(
        {"role": "system", "content": "Be terse."},
        {"role": "developer", "content": [{"type": "text", "text": "Rules."}], "name": "ops"}, USER))
    assert history[0] == ChatMessage(role="system", content="Be terse.")
    assert history[1].role == "system" and history[1].content == (TextPart(text="Rules."),)
    assert history[1].provider_data == {"openai_chat": {"name": "ops", "form": {
        "role": "developer", "content": "list"}}}
    # across providers a developer message is a system message; Mistral, which has no developer role, sends one
    assert mistral.to_request(history, model="mistral-large-latest")["messages"][1]["role"] == "system"


def test_row_user_text_and_image_url_with_detail() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://x/cat.png", "detail": "high"}}
    history = _reads_checks_and_comes_back(_body({"role": "user", "content": [
        {"type": "text", "text": "What is this?", "prompt_cache_breakpoint": {"mode": "explicit"}}, image]}))
    cache = {"openai_chat": {"prompt_cache_breakpoint": {"mode": "explicit"}}}
    assert history[0].content == (
        TextPart(text="What is this?", provider_data=cache),
        ImagePart(url="https://x/cat.png", provider_data={"openai_chat": {"image_url": {"detail": "high"}}}))


def test_row_input_audio_is_a_file_part() -> None:
    audio = {"type": "input_audio", "input_audio": {"data": WAV, "format": "mp3"}}
    history = _reads_checks_and_comes_back(_body({"role": "user", "content": [audio]}))
    assert history[0].content == (FilePart(data=WAV, media_type="audio/mpeg", provider_data={
        "openai_chat": {"form": {"type": "input_audio"}}}),)
    # to Anthropic, where audio has no place: unsupported by name, never silently dropped
    from chatmend.providers import anthropic
    with pytest.raises(UnsupportedError):
        anthropic.to_request(history, model="claude-sonnet-4-5")


def test_row_file_parts_inline_by_id_and_bare_base64() -> None:
    parts = [{"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"}},
             {"type": "file", "file": {"file_id": "file-abc123"}},
             {"type": "file", "file": {"file_data": PDF, "filename": "b.pdf"}}]
    history = _reads_checks_and_comes_back(_body({"role": "user", "content": parts}))
    assert history[0].content[:2] == (FilePart(data=PDF, media_type="application/pdf", filename="a.pdf"),
                                      FilePart(file_id="file-abc123", provider="openai_chat"))
    assert history[0].content[2] == FilePart(data=PDF, media_type="application/pdf", filename="b.pdf",
                                             provider_data={"openai_chat": {"form": {"file_data": "base64"}}})


def test_row_a_part_of_a_type_not_known_here_is_kept_verbatim() -> None:
    part = {"type": "video_url", "video_url": {"url": "ms://f"}}
    history = _reads_checks_and_comes_back(_body({"role": "user", "content": [part]}), sdk=False)  # (not the SDK's)
    assert history[0].content == (NativePart(provider="openai_chat", data=part),)
    assert kimi.check(_body({"role": "user", "content": [part]})) == []


def test_row_assistant_refusal_part_and_refusal_field() -> None:
    history = _reads_checks_and_comes_back(_body(
        USER, {"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]},
        USER, {"role": "assistant", "content": None, "refusal": "I can't help with that."}, USER))
    assert history[1].content == (TextPart(text="No.", provider_data={"openai_chat": {"form": {"type": "refusal"}}}),)
    # a refusal field is content: repair does not drop the message as empty
    assert history[3].content == (TextPart(text="I can't help with that.", provider_data={
        "openai_chat": {"form": {"field": "refusal"}}}),)


def test_row_assistant_audio_and_name() -> None:
    history = _reads_checks_and_comes_back(_body(
        USER, {"role": "assistant", "audio": {"id": "audio_abc123"}, "name": "bot"}, USER))
    assert history[1].content == (NativePart(provider="openai_chat", data={"audio": {"id": "audio_abc123"}}),)
    assert history[1].provider_data == {"openai_chat": {"name": "bot", "form": {"content": "omitted"}}}


def test_row_reasoning_content_is_kept_and_sent_back() -> None:
    body = _body(USER, {"role": "assistant", "content": None, "reasoning_content": "Look it up.", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "3 hits"})
    assert oc.repair_body(body).body == body
    assert written_back(oc, body) == body["messages"]
    history = oc.from_request(body)
    assert history[1].content == (ThinkingPart(text="Look it up.", provider="openai_chat"),)
    # another provider's thinking is not sent as reasoning_content (its signature is valid only where made)
    assert "reasoning_content" not in openai_chat.to_request(kimi.from_request(body), model="m")["messages"][1]


def test_row_function_tool_calls_keep_their_arguments_text() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{ "q" : "x" }'}}
    body = _body(USER, {"role": "assistant", "content": None, "tool_calls": [call, {**call, "id": "call_1"}]},
                 {"role": "tool", "tool_call_id": "call_1", "content": "a"},
                 {"role": "tool", "tool_call_id": "call_1", "content": "b"})
    repaired = oc.repair_body(body)  # the repeated id is renamed: the message is written anew, its text kept
    assert repaired.rewritten == [1, 3]  # the first result keeps its id: the input's own item
    assert [c["function"]["arguments"] for c in repaired.body["messages"][1]["tool_calls"]] == ['{ "q" : "x" }'] * 2


def test_row_custom_tool_calls_are_calls_answered_by_tool_messages() -> None:
    call = {"id": "call_p", "type": "custom", "custom": {"name": "apply_patch", "input": '{ "raw" }\n*** End'}}
    body = _body(USER, {"role": "assistant", "content": None, "tool_calls": [call]},
                 {"role": "tool", "tool_call_id": "call_p", "content": "applied"})
    history = _reads_checks_and_comes_back(body)
    assert history[1].tool_calls == (ToolCall(id="call_p", name="apply_patch", arguments='{ "raw" }\n*** End',
                                              raw_arguments='{ "raw" }\n*** End',
                                              provider_data={"openai_chat": {"form": {"type": "custom"}}}),)
    cut = oc.repair_body(_body(*body["messages"][:2]))  # interrupted: a synthetic tool message answers it
    assert cut.body["messages"][:2] == body["messages"][:2]
    assert cut.body["messages"][2]["role"] == "tool" and cut.body["messages"][2]["tool_call_id"] == "call_p"
    assert [c.id for c in cut.result.interrupted] == ["call_p"]


def test_row_legacy_function_call_and_function_message() -> None:
    body = _body(USER, {"role": "assistant", "content": None, "function_call": {"name": "search", "arguments": "{}"}},
                 {"role": "function", "name": "search", "content": "3 hits"}, USER)
    history = _reads_checks_and_comes_back(body)
    assert history[1].tool_calls[0].id == history[2].tool_call_id == "call_1_0"  # the id repair gives an empty one
    cut = oc.repair_body(_body(*body["messages"][:2]))
    assert cut.body["messages"][2]["role"] == "function" and cut.body["messages"][2]["name"] == "search"
    assert [m["role"] for m in oc.repair_body(_body(USER, body["messages"][2])).body["messages"]] == ["user", "user"]


def test_row_tool_messages_with_text_parts() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    history = _reads_checks_and_comes_back(_body(
        USER, {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "3 hits"}]}))
    assert history[2].content == (TextPart(text="3 hits"),)
    assert history[1].provider_data == {"openai_chat": {"form": {"content": "omitted"}}}


def test_row_a_call_of_a_type_not_known_here_is_kept_and_paired_by_id() -> None:
    call = {"id": "call_m", "type": "mcp", "mcp": {"name": "lookup", "server": "s1"}}
    body = _body(USER, {"role": "assistant", "content": None, "tool_calls": [call]},
                 {"role": "tool", "tool_call_id": "call_m", "content": "ok"})
    assert oc.check(body) == []
    assert oc.repair_body(body).body == body and written_back(oc, body) == body["messages"]
    assert oc.from_request(body)[1].tool_calls[0].name == "lookup"


def test_kimi_and_mistral_notes() -> None:
    # Kimi: video_url parts and bare image strings are kept; Mistral: thinking chunks go back as chunks
    kimi_body = {"model": "kimi-k2.5", "messages": [
        {"role": "user", "content": [{"type": "video_url", "video_url": {"url": "ms://f"}},
                                     {"type": "image_url", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}]}
    assert kimi.repair_body(kimi_body).body == kimi_body and written_back(kimi.PROVIDER, kimi_body) == kimi_body[
        "messages"]
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                "signature": "s1"}
    mistral_body = {"model": "magistral-medium-latest", "messages": [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": [thinking, {"type": "text", "text": "A."}]},
        {"role": "user", "content": "more"}]}
    _reads_checks_and_comes_back(mistral_body, mistral.PROVIDER)
    assert mistral.from_request(mistral_body)[1].content[0] == ThinkingPart(
        text="ab", signature="s1", provider="mistral", provider_data={"mistral": {"thinking": thinking["thinking"]}})


@pytest.mark.parametrize(("call", "path"), [
    ({"id": "c", "type": "custom", "custom": {"name": "p"}}, "messages[1].tool_calls[0].custom"),
    ({"id": "c", "type": 7}, "messages[1].tool_calls[0].type"),
])
def test_a_malformed_call_of_a_known_type_is_a_problem(call: dict[str, Any], path: str) -> None:
    body = _body(USER, {"role": "assistant", "content": None, "tool_calls": [call]})
    assert [(p.code, p.path) for p in oc.check(body)] == [("SHAPE", path)]
    assert [p.code for p in mistral.check(body)] == ["SHAPE"]


def test_mistral_reports_calls_it_has_no_place_for() -> None:
    custom = {"id": "c", "type": "custom", "custom": {"name": "p", "input": "x"}}
    body = _body(USER, {"role": "assistant", "content": None, "tool_calls": [custom]})
    assert [(p.code, p.path) for p in mistral.check(body)] == [("SHAPE", "messages[1].tool_calls[0].type")]


# ------------------------------------------------------------------------------------------ real bodies

def _real(pattern: str) -> list[Path]:
    if not REAL.is_dir():
        pytest.skip("../shared/real-world is absent")
    found = sorted(REAL.glob(pattern))
    if not found:
        pytest.skip(f"no {pattern} in ../shared/real-world")
    return found


def _chat_requests(path: Path) -> list[dict[str, Any]]:
    """The Chat Completions request bodies recorded in a pydantic-ai cassette."""
    yaml = pytest.importorskip("yaml")
    cassette = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [i["request"]["parsed_body"] for i in cassette["interactions"]
            if str(i["request"].get("uri", "")).endswith("/chat/completions") and "parsed_body" in i["request"]]


def test_real_pydantic_ai_chat_bodies_read_and_come_back_equal() -> None:
    bodies = [(p, b) for p in _real("pydantic__pydantic-ai__*.yaml") for b in _chat_requests(p)]
    assert bodies
    for path, body in bodies:
        provider = mistral.PROVIDER if "mistral" in path.name else oc
        assert all(isinstance(m, ChatMessage) for m in provider.from_request(body)), path.name
        assert provider.check(body) == [], path.name
        assert provider.repair_body(body).body == body, path.name
        assert written_back(provider, body) == body["messages"], path.name


def test_real_mistral_common_samples_read_and_only_their_ids_change() -> None:
    for path in _real("mistralai__mistral-common__*sample.json"):
        body = json.loads(path.read_text(encoding="utf-8"))
        assert all(isinstance(m, ChatMessage) for m in mistral.from_request(body)), path.name
        # their ids repeat "123456789" (valid for the v2/v3 tokenizers they are for): renamed, nothing else changes
        repaired = mistral.repair_body(body)
        assert mistral.check(repaired.body) == [], path.name
        assert _without_ids(repaired.body["messages"]) == _without_ids(body["messages"]), path.name
        assert oc.repair_body(body).body["messages"][0] is body["messages"][0]


def test_files_of_other_providers_map_to_file_parts_or_to_a_line_naming_them() -> None:
    history = [ChatMessage(role="user", content=(
        FilePart(data=PDF, media_type="application/pdf", filename="a.pdf"),
        FilePart(url="https://x/doc.pdf", filename="doc.pdf"),
        FilePart(file_id="file_1", provider="anthropic"),
        FilePart(data=WAV, media_type="audio/wav")))]
    body = oc.to_request(history, model="gpt-4o")
    assert body["messages"][0]["content"] == [
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"}},
        {"type": "text", "text": "[file doc.pdf: https://x/doc.pdf]"},
        {"type": "text", "text": "[file: file id file_1 at anthropic]"},
        {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}]
    sdk_valid(body["messages"])


def test_a_file_in_a_tool_result_follows_in_a_user_message() -> None:
    history = [ChatMessage(role="user", content="read it"),
               ChatMessage(role="assistant", tool_calls=(ToolCall(id="c1", name="read_file"),)),
               ChatMessage(role="tool", tool_call_id="c1", content=(
                   TextPart(text="here"), FilePart(data=PDF, media_type="application/pdf", filename="a.pdf")))]
    messages = oc.to_request(history, model="gpt-4o")["messages"]
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "here"}
    assert messages[3]["role"] == "user" and messages[3]["content"][1]["type"] == "file"
    sdk_valid(messages)
    assert oc.check({"model": "gpt-4o", "messages": messages}) == []


def test_a_result_whose_file_moves_keeps_its_parts_of_other_types() -> None:
    # the result was written as its text alone once its file moved to a user message: the other part was lost
    from chatmend import providers

    other = {"type": "x_other", "x": 1}
    file = {"type": "file", "file": {"file_data": "data:application/pdf;base64,AAAA", "filename": "a.pdf"}}
    def call(call_id: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "search", "arguments": "{}"}}]}

    result = {"role": "tool", "tool_call_id": "a1", "content": [{"type": "text", "text": "t"}, other, file]}
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, call("a1"), result,
                                       {"role": "user", "content": "hi"}, call("a1"), result,
                                       {"role": "user", "content": "hi"}, call("b1")]}  # the run renames a1
    repaired = providers.get("openai_chat").repair_body(body).body["messages"]
    assert repaired[5] == {"role": "tool", "tool_call_id": "a1_1", "content": [{"type": "text", "text": "t"}, other]}
    assert repaired[6]["role"] == "user" and repaired[6]["content"][1] == file


def test_a_run_after_a_kept_result_with_audio_writes_only_its_new_items() -> None:
    # the kept result's audio, counted as moved when the run's context was written alone, cut the run's first new
    # item (a legacy call's synthetic result) and sent the audio a second time
    from chatmend import providers

    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "function_call": {"name": "search", "arguments": "{}"},
         "tool_calls": [{"id": "a1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a1", "content": [{"type": "text", "text": "t"}, audio]},
        {"role": "user", "content": "hi"},
    ]
    repaired = providers.get("openai_chat").repair_body({"model": "m", "messages": messages})
    assert repaired.body["messages"][:3] == messages[:3] and repaired.body["messages"][4] == messages[3]
    assert repaired.body["messages"][3]["role"] == "function" and repaired.rewritten == [3]
    assert "AAAA" not in json.dumps(repaired.body["messages"][3:])
