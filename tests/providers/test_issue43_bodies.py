"""Issue #43, bodies: lone surrogates found and mended, bodies the provider accepts checked clean (Bedrock
Converse detected, `anthropic_version` without `model`, a client tool search answered by a function_call_output,
an id repeated in a later turn), and a repaired file keeping its own layout; through the library and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatmend import ChatmendError, providers, strict_json
from chatmend.cli import main
from chatmend.formats import read
from tests.strategies import examples, valid_histories

LONE = "hi \ud83d there"


def _anthropic(content: Any, **extra: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 100, **extra,
            "messages": [{"role": "user", "content": content}]}


# ----------------------------------------------------------------------------------------- lone surrogates


def test_check_finds_a_lone_surrogate_located_in_anthropics_words() -> None:
    body = _anthropic(LONE)
    sent = json.dumps(body, separators=(",", ":"))  # as the client sends it: the half escaped
    stop = sent.index("\\ud83d") + 6
    (problem,) = providers.get("anthropic").check(body)
    assert (problem.code, problem.path) == ("JSON", "messages[0].content")
    assert problem.message == ("The request body is not valid JSON: no low surrogate in string: "
                               f"line 1 column {stop + 1} (char {stop})")


@pytest.mark.parametrize("name", providers.names())
def test_every_provider_finds_and_repair_body_mends_a_lone_surrogate(name: str) -> None:
    provider = providers.get(name)
    plain = provider.to_request([{"role": "user", "content": "hi there"}], model="m")
    body = json.loads(json.dumps(plain).replace("hi there", "hi \\ud83d there"))
    problems = [p for p in provider.check(body) if p.code == "JSON"]
    assert len(problems) == 1 and problems[0].message
    repaired = provider.repair_body(body)
    assert repaired.changed and repaired.mended == [problems[0].path]
    assert "\ufffd" in json.dumps(repaired.body, ensure_ascii=False)
    assert not [p for p in provider.check(repaired.body) if p.code == "JSON"]
    json.dumps(repaired.body, ensure_ascii=False).encode("utf-8")  # writable now


def test_a_pair_is_not_lone_and_a_low_half_alone_is() -> None:
    assert strict_json.find_lone_surrogates({"a": "\U0001f600", "b": ["\ud83d\ude00"]}) == []
    (found,) = strict_json.find_lone_surrogates({"a": ["x", {"b": "\ude00 y"}]})
    assert (found.path, found.escape, found.high) == ("a[1].b", "\\ude00", False)


@given(st.lists(st.text(alphabet=st.sampled_from(["a", "\ud83d", "\ude00", "\U0001f600"]), max_size=6),
                max_size=4))
def test_without_lone_surrogates_leaves_nothing_lone_and_keeps_what_was_fine(texts: list[str]) -> None:
    value = {"keep": ["ok"], "texts": texts}
    mended, paths = strict_json.without_lone_surrogates(value)
    assert strict_json.find_lone_surrogates(mended) == []
    assert paths == [f.path for f in strict_json.find_lone_surrogates(value)]
    assert mended["keep"] is value["keep"]
    if not paths:
        assert mended is value
    # sent escaped, a pair of halves is read back as one character: nothing is left that a parser refuses
    assert strict_json.lone_surrogate(json.dumps(mended)) is None


def test_the_cli_reads_checks_and_repairs_a_body_with_a_lone_surrogate(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(_anthropic(LONE)), encoding="ascii")  # the escape `\ud83d`, as clients save it
    assert main(["check", str(path)]) == 1
    assert "messages[0].content: JSON: The request body is not valid JSON: no low surrogate" in capsys.readouterr().out
    out = tmp_path / "out.json"
    assert main(["repair", str(path), "-o", str(out)]) == 0
    report = capsys.readouterr().out
    assert "fixed 1 problem anthropic would reject: JSON at messages[0].content" in report
    assert json.loads(out.read_text())["messages"][0]["content"] == "hi \ufffd there"
    assert main(["check", str(out)]) == 0


# ------------------------------------------------------------------------------- accepted bodies check clean


def test_an_anthropic_body_for_bedrock_or_vertex_needs_no_model() -> None:
    body = _anthropic("hi", anthropic_version="vertex-2023-10-16")
    del body["model"]
    assert providers.get("anthropic").check(body) == []
    del body["anthropic_version"]
    assert [p.message for p in providers.get("anthropic").check(body)] == ["model: Field required"]


def test_an_id_repeated_in_a_later_turn_is_accepted_but_not_twice_in_one_turn() -> None:
    def turn(tool_id: str) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": [{"type": "tool_use", "id": tool_id, "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "r"}]}]

    body = _anthropic("q")
    body["messages"] += turn("toolu_1") + turn("toolu_1")
    anthropic = providers.get("anthropic")
    assert anthropic.check(body) == []
    repaired = anthropic.repair_body(body)
    assert not repaired.changed and repaired.body == body
    body["messages"][1]["content"].append({"type": "tool_use", "id": "toolu_1", "name": "g", "input": {}})
    assert "AN6" in {p.code for p in anthropic.check(body)}


def test_a_client_tool_search_answered_by_a_function_call_output_is_accepted() -> None:
    body = {"model": "gpt-5", "input": [
        {"role": "user", "content": "find a tool"},
        {"type": "tool_search_call", "call_id": "call_1", "execution": "client", "arguments": {"query": "x"}},
        {"type": "function_call_output", "call_id": "call_1", "output": "[]"}]}
    responses = providers.get("openai_responses")
    assert responses.check(body) == []
    assert not responses.repair_body(body).changed


def test_a_bedrock_converse_body_without_a_model_is_read_as_bedrock(tmp_path: Path) -> None:
    body = {"system": [{"text": "Use the tool"}], "inferenceConfig": {"maxTokens": 100},
            "messages": [{"role": "user", "content": [{"text": "Weather?"}]},
                         {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "w",
                                                                        "input": {}}}]},
                         {"role": "user", "content": [{"toolResult": {"toolUseId": "t1",
                                                                      "content": [{"text": "22"}]}}]}],
            "toolConfig": {"tools": [{"toolSpec": {"name": "w", "inputSchema": {"json": {"type": "object"}}}}]}}
    path = tmp_path / "converse.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    assert read(str(path)).format == "bedrock"
    assert main(["check", str(path)]) == 0
    out = tmp_path / "out.json"
    assert main(["repair", str(path), "-o", str(out)]) == 0
    assert out.read_bytes() == path.read_bytes()


# ----------------------------------------------------------------------------- a repaired file keeps its layout


@pytest.mark.parametrize("indent", [4, 2, "\t", None])
def test_repair_rewrites_only_the_items_it_changes_in_the_files_own_layout(tmp_path: Path, indent: Any) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"question {i}"} for i in range(20)]
    messages += [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"city\": \"Rome\"}"}}]}]
    body = {"model": "gpt-4o", "messages": messages, "temperature": 0}
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body, indent=indent), encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["repair", str(path), "-o", str(out)]) == 0
    before, after = path.read_text(), out.read_text()
    written = json.loads(after)
    assert written["messages"][:21] == messages and written["messages"][21]["role"] == "tool"
    # every line of the input is in the output, in order, as it was: only the answer is new
    assert after.startswith(before[:before.rindex("]")].rstrip())
    new = json.dumps({**body, "messages": written["messages"]}, indent=indent)
    assert after == new


# ---------------------------------------------------------------- check promises only the fixes repair makes


@st.composite
def broken_bodies(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A provider's valid body of a generated history, then an item dropped, repeated or moved."""
    name = draw(st.sampled_from(providers.names()))
    provider = providers.get(name)
    body = provider.to_request(draw(valid_histories(max_turns=3)), model="m", on_unsupported=lambda d: None)
    items = body[provider.list_key]
    if items:
        k = draw(st.integers(0, len(items) - 1))
        action = draw(st.sampled_from(["drop", "repeat", "move", "keep"]))
        if action == "drop":
            del items[k]
        elif action == "repeat":
            items.insert(k, json.loads(json.dumps(items[k])))
        elif action == "move":
            items.append(items.pop(k))
    return name, body


@examples(60)
@given(broken_bodies())
def test_check_promises_a_fix_only_where_repair_body_makes_it(case: tuple[str, dict[str, Any]]) -> None:
    name, body = case
    provider = providers.get(name)
    before = json.loads(json.dumps(body))
    try:
        repaired = provider.repair_body(body)
    except ChatmendError:
        return  # a body repair cannot read: check promises nothing either (`repair_fixes`)
    fixes = provider.repair_fixes(body)
    if fixes:
        assert repaired.changed and repaired.body != before
        left = {(p.code, p.message) for p in provider.check(repaired.body)}
        assert len(left) < len(provider.check(body)) or not any((p.code, p.message) in left for p in fixes)
    if not repaired.changed:
        assert fixes == [] and repaired.body == before
