"""Gemini's whole `Part` vocabulary (google-genai's `types.Part`): read, repaired where it pairs, written back as
it was. One test per row of the README's Gemini vocabulary table, properties over generated bodies validated
by google-genai's own pydantic types, and the real bodies of ../shared/real-world/ when they are there."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatMessage, FilePart, ImagePart, NativePart, TextPart, ThinkingPart, ToolCall, providers
from chatmend.providers.base import IdAssigner
from chatmend.providers.gemini import PROVIDER as GEMINI
from tests.strategies import PNG, examples

types = pytest.importorskip("google.genai.types")

SIGNATURE = "c2lnbmF0dXJl"  # base64, as the API sends signatures
REAL = Path(__file__).resolve().parents[3] / "shared" / "real-world"


# ------------------------------------------------------------------------------------------- helpers


def _valid_for_sdk(contents: list[dict[str, Any]]) -> None:
    """Every content validates against google-genai's `types.Content` (camelCase or snake_case)."""
    for content in contents:
        types.Content.model_validate(content)


def _rewritten(contents: list[dict[str, Any]]) -> list[Any]:
    """The contents written anew from what the reader read of them (every item rewritten, none kept)."""
    flat = [m for group in GEMINI._read_groups(contents) for m in group]
    ids = [c.id for m in flat for c in m.tool_calls]
    return GEMINI._write_items(flat, lambda: IdAssigner(ids), 0)


def _round_trip(contents: list[dict[str, Any]]) -> None:
    """A valid body is left as it is by repair (the same objects) and is what the writer writes of it (in
    camelCase: a snake_case field chatmend models is written back camelCase, as the API spells it)."""
    body = {"contents": contents, "generationConfig": {"temperature": 0}}
    before = copy.deepcopy(body)
    assert GEMINI.check(body) == []
    repaired = GEMINI.repair_body(body)
    assert repaired.body == before and not repaired.changed
    assert all(a is b for a, b in zip(repaired.body["contents"], contents))
    assert _snake_keys(_rewritten(contents)) == _snake_keys(before["contents"])


def _call_turn(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": list(parts)}


def _user(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "parts": list(parts)}


def _fc(call_id: str, name: str = "run", **extra: Any) -> dict[str, Any]:
    return {"functionCall": {"id": call_id, "name": name, "args": {"code": "1+1"}, **extra}}


def _fr(call_id: str, response: Any, name: str = "run", **extra: Any) -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": name, "response": response, **extra}}


def _without_response(contents: list[dict[str, Any]], turn: int, part: int) -> list[dict[str, Any]]:
    """The contents with one functionResponse part taken out of a user turn."""
    out = list(contents)
    parts = list(out[turn]["parts"])
    del parts[part]
    out[turn] = {**out[turn], "parts": parts}
    return out


def _only_that_turn_changes(contents: list[dict[str, Any]], turn: int, part: int, sdk: bool = True) -> dict[str, Any]:
    """Repair of the contents without one response: only that turn is new, its other parts as they were; the
    rewritten turn."""
    broken = _without_response(contents, turn, part)
    repaired = GEMINI.repair_body({"contents": broken})
    out = repaired.body["contents"]
    assert repaired.rewritten == [turn]
    assert all(a is b for i, (a, b) in enumerate(zip(out, broken)) if i != turn)
    new = out[turn]
    original = contents[turn]["parts"]
    assert len(new["parts"]) == len(original)
    for j, (a, b) in enumerate(zip(new["parts"], original)):
        if j != part:
            assert a == b
    inserted = new["parts"][part]["functionResponse"]
    assert inserted["name"] == original[part]["functionResponse"]["name"]
    assert inserted.get("id") == original[part]["functionResponse"].get("id")
    assert GEMINI.check(repaired.body) == []
    if sdk:
        _valid_for_sdk(out)
    return dict(new)


# ------------------------------------------------------------------------- one test per table row


def test_text_is_a_text_part() -> None:
    contents = [_user({"text": "hi"}), _call_turn({"text": "hello"})]
    history = GEMINI.from_request(contents)
    assert [m.content for m in history] == ["hi", "hello"]
    _round_trip(contents)


def test_thought_is_a_thinking_part_with_its_signature() -> None:
    contents = [_user({"text": "q"}),
                _call_turn({"text": "let me see", "thought": True, "thoughtSignature": SIGNATURE}, {"text": "a"})]
    (_, reply) = GEMINI.from_request(contents)
    assert isinstance(reply.content, tuple)
    thought = reply.content[0]
    assert isinstance(thought, ThinkingPart)
    assert (thought.text, thought.signature, thought.provider) == ("let me see", SIGNATURE, "gemini")
    _round_trip(contents)


def test_thought_signature_on_a_text_and_on_an_empty_text_goes_back_on_its_part() -> None:
    contents = [_user({"text": "q"}),
                _call_turn({"text": "a", "thoughtSignature": SIGNATURE}, {"text": "", "thoughtSignature": "eHl6"})]
    (_, reply) = GEMINI.from_request(contents)
    assert isinstance(reply.content, tuple)
    assert [type(p) for p in reply.content] == [ThinkingPart, TextPart, ThinkingPart, TextPart]
    _round_trip(contents)


def test_inline_image_is_an_image_part() -> None:
    contents = [_user({"inlineData": {"mimeType": "image/png", "data": PNG}}, {"text": "what is it?"})]
    (message,) = GEMINI.from_request(contents)
    assert isinstance(message.content, tuple)
    assert message.content[0] == ImagePart(media_type="image/png", data=PNG)
    _round_trip(contents)


@pytest.mark.parametrize("mime", ["application/pdf", "audio/wav", "video/mp4", "text/plain"])
def test_inline_data_of_another_type_is_a_file_part_with_its_display_name(mime: str) -> None:
    blob = {"mimeType": mime, "data": "JVBERi0=", "displayName": "doc"}
    contents = [_user({"inlineData": blob}, {"text": "summarize"})]
    (message,) = GEMINI.from_request(contents)
    assert isinstance(message.content, tuple)
    part = message.content[0]
    assert isinstance(part, FilePart)
    assert (part.media_type, part.data, part.filename) == (mime, "JVBERi0=", "doc")
    assert part.provider_data == {"gemini": {"inlineData": {"displayName": "doc"}}}
    _round_trip(contents)


def test_file_data_is_a_file_part_or_an_image_by_its_type() -> None:
    contents = [_user({"fileData": {"mimeType": "application/pdf", "fileUri": "https://x/files/a"}},
                      {"fileData": {"mimeType": "image/png", "fileUri": "gs://b/c.png"}}, {"text": "compare"})]
    (message,) = GEMINI.from_request(contents)
    assert isinstance(message.content, tuple)
    assert message.content[0] == FilePart(url="https://x/files/a", media_type="application/pdf")
    assert message.content[1] == ImagePart(url="gs://b/c.png", media_type="image/png")
    _round_trip(contents)


def test_function_call_is_a_tool_call_with_its_other_fields_kept() -> None:
    contents = [_user({"text": "go"}),
                _call_turn({**_fc("c1", willContinue=True), "thoughtSignature": SIGNATURE}),
                _user(_fr("c1", {"output": "2"}))]
    (_, reply, _) = GEMINI.from_request(contents)
    (call,) = reply.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "run", {"code": "1+1"})
    assert call.provider_data == {"gemini": {"thoughtSignature": SIGNATURE, "functionCall": {"willContinue": True}}}
    _round_trip(contents)


def test_calls_without_ids_pair_by_order_and_go_back_without_ids() -> None:
    plain = {"functionCall": {"name": "run", "args": {}}}
    contents = [_user({"text": "go"}), _call_turn(plain, plain),
                _user({"functionResponse": {"name": "run", "response": {"output": "1"}}},
                      {"functionResponse": {"name": "run", "response": {"output": "2"}}})]
    _round_trip(contents)
    new = _only_that_turn_changes(contents, 2, 1)
    assert "id" not in new["parts"][1]["functionResponse"]


def test_function_response_object_is_kept_as_it_was_and_its_text_is_read() -> None:
    response = {"result": {"rows": [1, 2]}, "took_ms": 3}
    contents = [_user({"text": "go"}), _call_turn(_fc("c1"), _fc("c2")),
                _user(_fr("c1", response, willContinue=False, scheduling="WHEN_IDLE"), _fr("c2", {"output": "ok"}))]
    (_, _, result, _) = GEMINI.from_request(contents)
    assert result.content == json.dumps(response, ensure_ascii=False)
    _round_trip(contents)
    new = _only_that_turn_changes(contents, 2, 1)
    assert new["parts"][0]["functionResponse"]["response"] == response  # not {"output": "<json text>"}


def test_function_response_parts_are_media_of_the_result_kept_inside_it() -> None:
    inner = [{"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "shot"}},
             {"fileData": {"mimeType": "application/pdf", "fileUri": "https://x/r.pdf"}}]
    contents = [_user({"text": "go"}), _call_turn(_fc("c1"), _fc("c2")),
                _user(_fr("c1", {"image": {"$ref": "shot"}}, parts=inner), _fr("c2", {"output": "ok"}))]
    (_, _, result, _) = GEMINI.from_request(contents)
    assert isinstance(result.content, tuple)
    assert [type(p) for p in result.content] == [TextPart, ImagePart, FilePart]
    _round_trip(contents)
    new = _only_that_turn_changes(contents, 2, 1)
    assert new["parts"][0]["functionResponse"]["parts"] == inner


@pytest.mark.parametrize("kind", ["executableCode", "codeExecutionResult"])
def test_code_execution_parts_are_native_parts_kept_in_place(kind: str) -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}
    part = code if kind == "executableCode" else result
    contents = [_user({"text": "compute"}), _call_turn({"text": "a"}, part, {"text": "b"})]
    (_, reply) = GEMINI.from_request(contents)
    assert isinstance(reply.content, tuple)
    assert reply.content[1] == NativePart(provider="gemini", data=part)
    assert reply.content[1].native_type == kind
    _round_trip(contents)


def test_code_execution_parts_survive_a_repair_of_their_turn() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}
    contents = [_user({"text": "go"}), _call_turn({"text": "x"}, code, result, _fc("c1"))]
    repaired = GEMINI.repair_body({"contents": contents})  # the call's result is missing
    out = repaired.body["contents"]
    assert out[1] is contents[1]
    assert [p for p in out[1]["parts"] if "functionCall" not in p] == [{"text": "x"}, code, result]
    assert "functionResponse" in out[2]["parts"][0]


def test_tool_call_and_tool_response_are_native_parts() -> None:
    call = {"toolCall": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"q": "x"}}}
    answer = {"toolResponse": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"hits": 2}}}
    contents = [_user({"text": "search"}), _call_turn(call), _user(answer), _call_turn({"text": "done"})]
    history = GEMINI.from_request(contents)
    assert NativePart(provider="gemini", data=call) in history[1].content
    assert NativePart(provider="gemini", data=answer) in history[2].content
    _round_trip(contents)


@pytest.mark.parametrize("field,value", [
    ("videoMetadata", {"startOffset": "1s", "endOffset": "5s", "fps": 2.0}),
    ("mediaResolution", {"level": "MEDIA_RESOLUTION_LOW"}),
    ("partMetadata", {"source": "upload", "n": 1}),
    ("documentMetadata", {"startPage": 1, "endPage": 2}),
    ("audioMetadata", {"startOffset": "0s"}),
    ("mediaProcessing", "STATIC"),
])
def test_part_metadata_is_kept_in_provider_data_and_written_back(field: str, value: Any) -> None:
    media = {"fileData": {"mimeType": "video/mp4", "fileUri": "https://x/v.mp4"}, field: value}
    text = {"text": "watch", field: value}
    contents = [_user(media, text), _call_turn({"text": "ok"})]
    (message, _) = GEMINI.from_request(contents)
    assert isinstance(message.content, tuple)
    assert all(p.provider_data == {"gemini": {"part": {field: value}}} for p in message.content
               if isinstance(p, (TextPart, FilePart)))
    _valid_for_sdk(contents)
    _round_trip(contents)


def test_a_part_of_an_unknown_kind_is_kept_and_passes_check() -> None:
    future = {"holographicData": {"uri": "h://x"}, "thoughtSignature": SIGNATURE}
    contents = [_user({"text": "q"}, {"futureField": 1, "text": "t"}), _call_turn(future, {"text": "a"})]
    history = GEMINI.from_request(contents)
    assert isinstance(history[1].content, tuple)
    assert history[1].content[0] == NativePart(provider="gemini", data=future)
    assert history[1].content[0].native_type == "holographicData"
    assert GEMINI.check({"contents": [_user({"f": {}}, {"text": "x", "g": 2})]}) == []
    _round_trip(contents)


def test_content_fields_beside_parts_and_consecutive_user_turns_are_kept() -> None:
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "q"}], "x-trace": "t1"},
                {"role": "model", "parts": [_fc("c1"), _fc("c2")], "x-trace": "t2"},
                {"role": "user", "parts": [_fr("c1", {"output": "r"}), _fr("c2", {"output": "s"})], "x": 1},
                {"role": "user", "parts": [{"text": "a turn of its own"}]}]
    assert _rewritten(contents) == contents
    assert GEMINI.repair_body({"contents": contents}).body == {"contents": contents}
    new = _only_that_turn_changes(contents, 2, 1, sdk=False)
    assert new["x"] == 1


def test_snake_case_parts_read_like_camel_case_ones() -> None:
    contents = [_user({"inline_data": {"mime_type": "application/pdf", "data": "JVBERi0=", "display_name": "d"},
                       "video_metadata": {"fps": 1.0}}, {"text": "t"}),
                _call_turn({"function_call": {"id": "c1", "name": "run", "args": {}}, "thought_signature": SIGNATURE}),
                _user({"function_response": {"id": "c1", "name": "run", "response": {"rows": 1},
                                             "will_continue": False}})]
    _valid_for_sdk(contents)
    camel = GEMINI.from_request(json.loads(json.dumps(contents).replace("inline_data", "inlineData")
                                           .replace("mime_type", "mimeType")))
    snake = GEMINI.from_request(contents)
    assert isinstance(snake[0].content, tuple) and isinstance(camel[0].content, tuple)
    assert snake[0].content[0].type == camel[0].content[0].type == "file"
    assert snake[2].content == '{"rows": 1}'
    _round_trip(contents)


def test_a_native_part_goes_to_no_other_provider_by_default() -> None:
    contents = [_user({"text": "q"}), _call_turn({"executableCode": {"language": "PYTHON", "code": "1"}})]
    history = GEMINI.from_request(contents)
    drops: list[Any] = []
    body = providers.get("anthropic").to_request(history, model="claude-x", on_unsupported=drops.append)
    assert [d.type for d in drops] == ["executableCode"]
    assert "executableCode" not in json.dumps(body)


def test_a_gemini_tool_result_object_reaches_other_providers_as_its_text() -> None:
    contents = [_user({"text": "go"}), _call_turn(_fc("c1")), _user(_fr("c1", {"rows": [1]}))]
    body = providers.get("openai_chat").to_request(GEMINI.from_request(contents), model="gpt-4o")
    assert body["messages"][-1]["content"] == '{"rows": [1]}'


# ---------------------------------------------------------------------- generated bodies, the whole vocabulary

_TEXTS = st.sampled_from(["ok", "3 hits", "é 中文 🙂", "line\nbreak"])
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | _TEXTS,
                     lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_TEXTS, inner, max_size=2),
                     max_leaves=4)
_OBJECTS = st.dictionaries(st.sampled_from(["a", "rows", "output", "error", "n"]), _JSON, max_size=3)
_METADATA = st.fixed_dictionaries({}, optional={
    "videoMetadata": st.sampled_from([{"fps": 1.0}, {"startOffset": "1s", "endOffset": "2s"}]),
    "mediaResolution": st.sampled_from([{"level": "MEDIA_RESOLUTION_HIGH"}, {"numTokens": 64}]),
    "partMetadata": st.dictionaries(_TEXTS, _JSON, max_size=2),
    "speechMetadata": st.just({"speaker": "a", "style": "calm"}),
    "spreadsheetMetadata": st.just({"sheetIndex": 0, "visibleCells": "A1:B2"}),
    "audioTranscription": st.just({"text": "hi", "finished": True}),
})
_MIME_DATA = st.sampled_from([("image/png", PNG), ("application/pdf", "JVBERi0="), ("audio/wav", "UklGRg==")])


@st.composite
def _media(draw: st.DrawFn) -> dict[str, Any]:
    mime, data = draw(_MIME_DATA)
    if draw(st.booleans()):
        blob: dict[str, Any] = {"mimeType": mime, "data": data}
        key = "inlineData"
    else:
        blob, key = {"mimeType": mime, "fileUri": f"https://x/files/{mime.split('/')[1]}"}, "fileData"
    if draw(st.booleans()):
        blob["displayName"] = "n"
    return {key: blob, **draw(_METADATA)}


@st.composite
def _user_part(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "media", "thought", "code", "result"]))
    if kind == "text":
        return {"text": draw(_TEXTS), **draw(_METADATA)}
    if kind == "thought":
        return {"text": draw(_TEXTS), "thought": True}
    if kind == "code":
        return {"executableCode": {"language": "PYTHON", "code": draw(_TEXTS)}}
    if kind == "result":
        return {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": draw(_TEXTS)}}
    return draw(_media())


@st.composite
def _model_part(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "signed", "empty", "thought", "media", "code", "result"]))
    if kind == "text":
        return {"text": draw(_TEXTS), **draw(_METADATA)}
    if kind == "signed":
        return {"text": draw(_TEXTS), "thoughtSignature": SIGNATURE}
    if kind == "empty":
        return {"text": "", "thoughtSignature": SIGNATURE}
    if kind == "thought":
        signed = {"thoughtSignature": SIGNATURE} if draw(st.booleans()) else {}
        return {"text": draw(_TEXTS), "thought": True, **signed}
    if kind == "code":
        return {"executableCode": {"language": "PYTHON", "code": draw(_TEXTS), "id": "e1"}}
    if kind == "result":
        return {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": draw(_TEXTS), "id": "e1"}}
    return {**draw(_media()), "thoughtSignature": SIGNATURE} if draw(st.booleans()) else draw(_media())


@st.composite
def _bodies(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid contents over the whole Part vocabulary: user and model turns alternating, each call turn answered
    by one user turn with a response per call (ids everywhere or nowhere), other parts after them."""
    with_ids = draw(st.booleans())
    contents: list[dict[str, Any]] = [_user(*draw(st.lists(_user_part(), min_size=1, max_size=3)))]
    for turn in range(draw(st.integers(1, 4))):
        parts = draw(st.lists(_model_part(), max_size=3))
        n_calls = draw(st.integers(0 if parts else 1, 3))
        calls = []
        for k in range(n_calls):
            fc: dict[str, Any] = {"name": draw(st.sampled_from(["run", "read"])), "args": draw(_OBJECTS)}
            if with_ids:
                fc["id"] = f"c{turn}_{k}"
            if draw(st.booleans()):
                fc["willContinue"] = False
            part: dict[str, Any] = {"functionCall": fc}
            if k == 0 and draw(st.booleans()):
                part["thoughtSignature"] = SIGNATURE
            calls.append(part)
        contents.append(_call_turn(*parts, *calls))
        answers = []
        for call in calls:
            fr: dict[str, Any] = {"name": call["functionCall"]["name"], "response": draw(
                st.one_of(_OBJECTS, st.builds(lambda t: {"output": t}, _TEXTS)))}
            if with_ids:
                fr["id"] = call["functionCall"]["id"]
            if draw(st.booleans()):
                fr["scheduling"] = draw(st.sampled_from(["SILENT", "WHEN_IDLE", "INTERRUPT"]))
            if draw(st.booleans()):
                fr["parts"] = [draw(st.builds(lambda m: {k: v for k, v in m.items() if k in (
                    "inlineData", "fileData", "videoMetadata", "mediaResolution")}, _media()))]
            answers.append({"functionResponse": fr})
        rest = draw(st.lists(_user_part(), min_size=0 if answers else 1, max_size=2))
        contents.append(_user(*answers, *rest))
    return contents


def _snake_keys(value: Any, free: bool = False) -> Any:
    """A camelCase body with google-genai's snake_case field names (not inside args, response, partMetadata)."""
    if isinstance(value, list):
        return [_snake_keys(v, free) for v in value]
    if not isinstance(value, dict) or free:
        return value
    out = {}
    for key, v in value.items():
        name = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        out[name] = _snake_keys(v, key in ("args", "response", "partMetadata"))
    return out


@examples(40)
@given(contents=_bodies())
def test_generated_bodies_are_sdk_contents_and_pass_check(contents: list[dict[str, Any]]) -> None:
    _valid_for_sdk(contents)
    _valid_for_sdk(_snake_keys(contents))
    assert GEMINI.check({"contents": contents}) == []
    assert GEMINI.check({"contents": _snake_keys(contents)}) == []


@examples(40)
@given(contents=_bodies())
def test_a_valid_body_round_trips_equal_and_is_what_the_writer_writes(contents: list[dict[str, Any]]) -> None:
    _round_trip(contents)
    snake = _snake_keys(contents)
    assert GEMINI.repair_body({"contents": snake}).body == {"contents": snake}


@examples(40)
@given(contents=_bodies(), data=st.data())
def test_removing_one_function_response_changes_only_its_turn(
        contents: list[dict[str, Any]], data: st.DataObject) -> None:
    # without ids responses pair by order: only the last one of a turn can go without moving the others
    places = [(i, j) for i, c in enumerate(contents) for j, p in enumerate(c["parts"]) if "functionResponse" in p
              and ("id" in p["functionResponse"] or "functionResponse" not in (c["parts"][j + 1:] or [{}])[0])]
    if not places:
        return
    turn, part = data.draw(st.sampled_from(places))
    _only_that_turn_changes(contents, turn, part)


@examples(25)
@given(contents=_bodies())
def test_every_body_written_from_a_read_history_is_sdk_contents(contents: list[dict[str, Any]]) -> None:
    body = GEMINI.to_request(GEMINI.from_request(contents), model="gemini-3-pro")
    _valid_for_sdk(body["contents"])
    assert GEMINI.check(body, model="gemini-3-pro") == []


# ------------------------------------------------------------------------------------------ real bodies


def _real(pattern: str) -> list[Path]:
    if not REAL.is_dir():
        pytest.skip("../shared/real-world/ is absent")
    found = sorted(REAL.glob(pattern))
    if not found:
        pytest.skip(f"no {pattern} in ../shared/real-world/")
    return found


def _cassette_bodies() -> list[dict[str, Any]]:
    yaml = pytest.importorskip("yaml")
    bodies = []
    for path in _real("pydantic__pydantic-ai__*.yaml"):
        for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
            request = interaction["request"]
            if ":generateContent" in request.get("uri", "") and isinstance(request.get("parsed_body"), dict):
                bodies.append(request["parsed_body"])
    if not bodies:
        pytest.skip("no Gemini request in the cassettes")
    return bodies


def test_real_gemini_request_bodies_of_pydantic_ai_round_trip_equal() -> None:
    for body in _cassette_bodies():
        _valid_for_sdk(body["contents"])
        assert GEMINI.check(body) == []
        before = copy.deepcopy(body)
        assert GEMINI.repair_body(body).body == before
        assert GEMINI.from_request(body)  # reads
        contents = body["contents"]
        for i, content in enumerate(contents):
            for j, part in enumerate(content["parts"]):
                if "functionResponse" in part:
                    _only_that_turn_changes(contents, i, j)


def _gemini_cli_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A Gemini CLI session as the contents it sent: user text, then each reply's calls and their results
    (the CLI keeps every result as the functionResponse parts it sent)."""
    contents: list[dict[str, Any]] = []
    for m in messages:
        text = m.get("content")
        if isinstance(text, list):
            text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        if m.get("type") == "user" and text:
            contents.append(_user({"text": text}))
        elif m.get("type") == "gemini":
            calls = m.get("toolCalls") or []
            parts = [{"text": text}] if text else []
            parts += [{"functionCall": {"id": c["id"], "name": c["name"], "args": c.get("args", {})}} for c in calls]
            if parts:
                contents.append(_call_turn(*parts))
            results = [p for c in calls for p in c.get("result", [])]
            if results:
                contents.append(_user(*results))
    return contents


def test_real_gemini_cli_sessions_read_check_and_round_trip() -> None:
    for path in _real("*gemini__*session*"):
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            messages = [json.loads(line) for line in text.splitlines() if line.strip()]
            messages = [m for m in messages if "type" in m]
        else:
            messages = json.loads(text)["messages"]
        contents = _gemini_cli_turns(messages)
        assert contents, path.name
        _valid_for_sdk(contents)
        history = GEMINI.from_request(contents)
        assert any(m.role == "tool" for m in history), path.name
        _round_trip(contents)
        assert isinstance(history[0], ChatMessage)


def test_result_media_moved_after_the_responses_are_read_back_into_their_result() -> None:
    media = (TextPart(text="two pages"), FilePart(media_type="application/pdf", data="JVBERi0="),
             ImagePart(media_type="image/png", data=PNG,
                       provider_data={"gemini": {"inlineData": {"displayName": "p"}}}))
    history = [ChatMessage(role="user", content="go"),
               ChatMessage(role="assistant", tool_calls=(ToolCall(id="c1", name="scan"),)),
               ChatMessage(role="tool", tool_call_id="c1", tool_name="scan", content=media)]
    body = GEMINI.to_request(history, model="gemini-2.5-flash")  # before Gemini 3: media after the responses
    assert "parts" not in body["contents"][-1]["parts"][0]["functionResponse"]
    assert GEMINI.from_request(body)[-1].content == media


@pytest.mark.parametrize(("uri", "expected"), [
    ("gs://bucket/clip.MOV", "video/mov"),
    ("https://x/a/voice.wav?alt=media#t=3", "audio/wav"),
    ("https://x/r.pdf", "application/pdf"),
    ("gs://b/photo.heic", "image/heic"),
    ("https://generativelanguage.googleapis.com/v1beta/files/abc123", None),
    ("https://x/dir.v2/file", None),
])
def test_a_file_uri_without_its_mime_type_gets_geminis_own_spelling_of_it(uri: str, expected: str | None) -> None:
    history = [ChatMessage(role="user", content=(FilePart(url=uri), TextPart(text="what is it?")))]
    body = GEMINI.to_request(history, model="gemini-2.5-flash")
    blob = body["contents"][0]["parts"][0]["fileData"]
    assert blob == ({"mimeType": expected, "fileUri": uri} if expected else {"fileUri": uri})
    read = GEMINI.from_request(body)[0].content[0]
    assert isinstance(read, ImagePart) == (expected or "").startswith("image/")


def test_a_data_uri_in_file_data_is_read_by_the_type_it_declares() -> None:
    body = {"contents": [_user({"fileData": {"fileUri": "data:image/webp;base64,UklGR"}})]}
    assert isinstance(GEMINI.from_request(body)[0].content[0], ImagePart)


def test_mime_types_come_from_a_fixed_table_not_the_hosts() -> None:
    # the host's MIME tables differ from machine to machine, and loading them changes the mimetypes module's state
    script = ("import mimetypes\n"
              "from chatmend import ChatMessage, FilePart\n"
              "from chatmend.providers.gemini import PROVIDER\n"
              "history = [ChatMessage(role='user', content=[FilePart(url='gs://b/a.wmv')])]\n"
              "body = PROVIDER.to_request(history, model='gemini-2.5-flash')\n"
              "PROVIDER.from_request(body)\n"
              "assert not mimetypes.inited, 'mimetypes read the host tables'\n"
              "print(body['contents'][0]['parts'][0]['fileData']['mimeType'])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "video/wmv"
