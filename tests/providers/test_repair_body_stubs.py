"""`repair_body`'s span route for Gemini, OpenAI Responses and Bedrock Converse: the adapter stubs its wire items,
the planner (`chatmend.planner`) decides, and the body that comes out is the very body the neutral route writes
(equal, byte for byte), with the same report and the same neutral side, on generated bodies broken and valid."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatmend.planner import Stubs
from chatmend.providers.base import Provider
from chatmend.providers.bedrock import Bedrock
from chatmend.providers.gemini import Gemini
from chatmend.providers.openai_responses import OpenAIResponses
from tests.strategies import examples

IDS = st.sampled_from(["a", "b", "c", "a_1", "call_2_0"])
NAMES = st.sampled_from(["f", "read_file"])
TEXT = st.sampled_from(["ok", "Done.", "ünïcode ✓", "Error: it broke"])


def assert_span_route_is_the_neutral_route(adapter: Provider, neutral: Provider, body: dict[str, Any],
                                           is_read_only: Any = None) -> bool:
    """The span route's repair of `body` is the neutral route's; True when the span route decided it."""
    before = copy.deepcopy(body)
    key = adapter.list_key
    spans = adapter._stub_repair(body, body[key], is_read_only) is not None
    fast = adapter.repair_body(body, is_read_only=is_read_only)
    slow = neutral.repair_body(copy.deepcopy(body), is_read_only=is_read_only)
    # the same JSON; where the neutral route writes a turn anew, the stub route may keep a block of the input's
    # own (its keys in their order) and says so: it lists at most what that lists as written anew
    assert fast.body == slow.body
    assert fast.report == slow.report
    assert fast.changed == slow.changed
    assert set(fast.rewritten) <= set(slow.rewritten)
    again = adapter.repair_body(copy.deepcopy(body), is_read_only=is_read_only)
    assert json.dumps(fast.body) == json.dumps(again.body)  # the same bytes every time
    assert fast.result == slow.result and fast.history == slow.history and fast.item_of == slow.item_of
    assert body == before  # the input is not mutated
    inputs = {id(item) for item in body[key]}
    assert [id(item) in inputs for item in fast.body[key]] == [
        i not in fast.rewritten for i in range(len(fast.body[key]))]
    return spans


# ------------------------------------------------------------------------------------------------------- Gemini


class NeutralGemini(Gemini):
    """Gemini with the span route off."""

    def _stubs(self, items: list[Any]) -> Stubs | None:
        return None


GEMINI, NEUTRAL_GEMINI = Gemini(), NeutralGemini()


def gemini_call() -> st.SearchStrategy[dict[str, Any]]:
    call = st.fixed_dictionaries({"name": NAMES, "args": st.sampled_from([{}, {"q": 1}])}, optional={"id": IDS})
    return st.builds(lambda c: {"functionCall": c}, call)


def gemini_response() -> st.SearchStrategy[dict[str, Any]]:
    value = st.one_of(st.builds(lambda t: {"output": t}, TEXT), st.builds(lambda t: {"error": t}, TEXT))
    response = st.fixed_dictionaries({"name": NAMES, "response": value}, optional={"id": IDS})
    return st.builds(lambda r: {"functionResponse": r}, response)


def gemini_content() -> st.SearchStrategy[dict[str, Any]]:
    text = st.builds(lambda t: {"text": t}, TEXT)
    model = st.tuples(st.lists(text, max_size=1), st.lists(gemini_call(), max_size=3)).filter(
        lambda pair: bool(pair[0] or pair[1])).map(lambda pair: {"role": "model", "parts": [*pair[0], *pair[1]]})
    user = st.tuples(st.lists(gemini_response(), max_size=3), st.lists(text, max_size=2)).filter(
        lambda pair: bool(pair[0] or pair[1])).map(lambda pair: {"role": "user", "parts": [*pair[0], *pair[1]]})
    return st.one_of(model, user, user)


def gemini_answered(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The contents with each call turn answered by the next content, in order, ids as the calls have them: a
    valid body for the span route to keep as it is."""
    out: list[dict[str, Any]] = []
    for content in contents:
        out.append(content)
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        if calls:
            out.append({"role": "user", "parts": [
                {"functionResponse": {**({"id": c["id"]} if "id" in c else {}), "name": c["name"],
                                      "response": {"output": "ok"}}} for c in calls]})
    return out


@examples(300)
@given(contents=st.lists(gemini_content(), min_size=1, max_size=10), answered=st.booleans(),
       read_only=st.booleans())
def test_the_span_route_writes_the_gemini_body_the_neutral_route_writes(
        contents: list[dict[str, Any]], answered: bool, read_only: bool) -> None:
    items = [{"role": "user", "parts": [{"text": "hi"}]}, *(gemini_answered(contents) if answered else contents)]
    assert_span_route_is_the_neutral_route(GEMINI, NEUTRAL_GEMINI, {"contents": items},
                                           (lambda name: name == "read_file") if read_only else None)


def test_a_valid_gemini_body_is_decided_on_stubs_and_comes_back_as_it_is() -> None:
    items: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "read it"}]}]
    for k in range(50):
        items.append({"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"k": k}}}]})
        items.append({"role": "user", "parts": [{"functionResponse": {"name": "read_file",
                                                                      "response": {"output": str(k)}}}]})
        items.append({"role": "user", "parts": [{"text": "next"}]})
    body = {"contents": items}
    assert assert_span_route_is_the_neutral_route(GEMINI, NEUTRAL_GEMINI, body)
    repaired = GEMINI.repair_body(body)
    assert not repaired.changed and repaired.body == body and repaired.from_spans
    assert GEMINI.check(body) == []


def test_gemini_contents_the_stubs_do_not_take_go_the_neutral_way() -> None:
    hi = {"role": "user", "parts": [{"text": "hi"}]}
    call = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}
    refused: list[list[Any]] = [
        [call],  # GE2: a call turn opens the list (the writer bridges it)
        [hi, {"role": "model", "parts": [{"text": "ok"}]}, call],  # GE2: after a model turn
        [hi, {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2ln"}]}],
        [hi, {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}, {"text": "after"}]}],
        [hi, call, {"role": "user", "parts": [{"text": "first"},
                                              {"functionResponse": {"name": "f", "response": {"output": "x"}}}]}],
        [hi, call, {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"a": 1, "b": 2}}}]}],
        [{"role": "user", "parts": [{"text": " "}]}],
        [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBO"}}]}],
        [{"parts": [{"text": "hi"}]}],
        [{"role": "system", "parts": [{"text": "hi"}]}],
    ]
    for items in refused:
        assert GEMINI._stubs(items) is None, items
    assert GEMINI._stubs([hi, call]) is not None
    assert GEMINI._stub_repair({"model": "gemini-3-pro", "contents": [hi]}, [hi], None) is None  # GE4 is check's


# ---------------------------------------------------------------------------------------------- OpenAI Responses


class NeutralResponses(OpenAIResponses):
    """Responses with the span route off."""

    def _stubs(self, items: list[Any]) -> Stubs | None:
        return None


RESPONSES, NEUTRAL_RESPONSES = OpenAIResponses(), NeutralResponses()


def responses_item() -> st.SearchStrategy[dict[str, Any]]:
    call = st.fixed_dictionaries({"type": st.just("function_call"), "call_id": IDS, "name": NAMES,
                                  "arguments": st.sampled_from(['{"q": 1}', "{}", '{"cut'])})
    output = st.fixed_dictionaries({"type": st.just("function_call_output"), "call_id": IDS, "output": TEXT})
    message = st.fixed_dictionaries({"role": st.sampled_from(["user", "user", "system", "developer"]),
                                     "content": TEXT})
    return st.one_of(call, output, message)


def responses_answered(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items with each call answered right after its turn, in order: a valid list when ids do not repeat."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    for item in items:
        if item.get("type") == "function_call_output":
            continue
        if item.get("type") != "function_call" and pending:
            out += [{"type": "function_call_output", "call_id": c, "output": "ok"} for c in pending]
            pending = []
        out.append(item)
        if item.get("type") == "function_call":
            pending.append(item["call_id"])
    return out + [{"type": "function_call_output", "call_id": c, "output": "ok"} for c in pending]


@examples(300)
@given(items=st.lists(responses_item(), min_size=1, max_size=12), answered=st.booleans(), read_only=st.booleans(),
       chained=st.booleans())
def test_the_span_route_writes_the_responses_body_the_neutral_route_writes(
        items: list[dict[str, Any]], answered: bool, read_only: bool, chained: bool) -> None:
    body = {"model": "gpt-5", "input": responses_answered(items) if answered else items,
            **({"previous_response_id": "resp_1"} if chained else {})}
    assert_span_route_is_the_neutral_route(RESPONSES, NEUTRAL_RESPONSES, body,
                                           (lambda name: name == "read_file") if read_only else None)


def test_a_valid_responses_body_is_decided_on_stubs_and_comes_back_as_it_is() -> None:
    items: list[dict[str, Any]] = []
    for k in range(50):
        items.append({"role": "user", "content": f"step {k}"})
        items.append({"type": "function_call", "call_id": f"call_{k}", "name": "f", "arguments": "{}"})
        items.append({"type": "function_call", "call_id": f"call_{k}b", "name": "f", "arguments": "{}"})
        items.append({"type": "function_call_output", "call_id": f"call_{k}", "output": "ok"})
        items.append({"type": "function_call_output", "call_id": f"call_{k}b", "output": "ok"})
    body = {"model": "gpt-5", "input": items}
    assert assert_span_route_is_the_neutral_route(RESPONSES, NEUTRAL_RESPONSES, body)
    stubs = RESPONSES._stubs(items)
    assert stubs is not None and len(stubs.kinds) == 4 * 50  # the two calls of a turn are one message
    repaired = RESPONSES.repair_body(body)
    assert not repaired.changed and repaired.body == body and repaired.from_spans
    assert RESPONSES.check(body) == []


def test_an_output_of_a_chained_response_leaves_the_body_as_it_is() -> None:
    body = {"model": "gpt-5", "previous_response_id": "resp_1",
            "input": [{"type": "function_call_output", "call_id": "call_9", "output": "ok"}]}
    assert RESPONSES.check(body) == []
    repaired = RESPONSES.repair_body(body)
    assert not repaired.changed and repaired.body == body


class CountedResponses(OpenAIResponses):
    """Responses counting its checks and its neutral route's repairs."""

    def __init__(self) -> None:
        self.checks = self.neutral = 0

    def check(self, body: Any, *, model: str | None = None, platform: str | None = None) -> Any:
        self.checks += 1
        return super().check(body, model=model, platform=platform)

    def _neutral_repair_body(self, body: Any, items: list[Any], is_read_only: Any) -> Any:
        self.neutral += 1
        return super()._neutral_repair_body(body, items, is_read_only)


def test_interrupted_responses_calls_get_outputs_written_alone_with_no_check() -> None:
    """Every call of a turn interrupted: the writer writes their outputs after the calls, the user's item after
    them stays the input's own, and nothing is checked: an interrupted call of a plan that does nothing else has
    no output anywhere, which the API refuses (OR1), chained or not."""
    items: list[dict[str, Any]] = []
    for k in range(30):
        items.append({"role": "user", "content": f"step {k}"})
        items += [{"type": "function_call", "call_id": f"call_{k}{x}", "name": "read_file", "arguments": "{}"}
                  for x in "ab"]
        if k % 10 != 9:
            items += [{"type": "function_call_output", "call_id": f"call_{k}{x}", "output": "ok"} for x in "ab"]
    for chained in (False, True):
        body = {"model": "gpt-5", "input": items, **({"previous_response_id": "resp_1"} if chained else {})}
        assert RESPONSES.check(body) != []  # OR1
        assert assert_span_route_is_the_neutral_route(RESPONSES, NEUTRAL_RESPONSES, body)
        adapter = CountedResponses()
        repaired = adapter.repair_body(body)
        assert (adapter.checks, adapter.neutral) == (0, 0)
        interrupted = [f"call_{k}{x}" for k in (9, 19, 29) for x in "ab"]
        assert repaired.from_spans and repaired.report.interrupted == interrupted
        out = repaired.body["input"]
        assert repaired.rewritten == [48, 49, 98, 99, 148, 149]
        assert [out[k]["output"] for k in repaired.rewritten] == [out[48]["output"]] * 6
        assert out[48]["output"].startswith("[error] ") and out[48]["call_id"] == "call_9a"
        assert out[50] is items[48] and out[100] is items[96]  # the user's items after the calls: the input's own


def test_responses_items_the_stubs_do_not_take_go_the_neutral_way() -> None:
    call = {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}
    for item in ({**call, "id": "fc_1"}, {"type": "reasoning", "summary": []},
                 {"role": "assistant", "content": "hi"}, {"type": "message", "role": "user", "content": "hi"},
                 {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}, {"role": "user", "content": ""},
                 {"type": "function_call_output", "call_id": "a", "output": [{"type": "input_text", "text": "x"}]},
                 {"type": "item_reference", "id": "fc_1"}, {"type": "web_search_call", "id": "ws_1"}):
        assert RESPONSES._stubs([call, item]) is None, item


# ------------------------------------------------------------------------------------------------ Bedrock Converse


BEDROCK = Bedrock()
BEDROCK_CLAUDE = BEDROCK.for_model("us.anthropic.claude-sonnet-4-5")


class NeutralBedrock(Bedrock):
    """Bedrock with the span route off."""

    def _stubs(self, items: list[Any]) -> Stubs | None:
        return None


class NeutralClaudeBedrock(NeutralBedrock):
    """Bedrock before a Claude model (BR10 ids) with the span route off."""

    id_alphabet = BEDROCK_CLAUDE.id_alphabet
    family = "claude"


BEDROCK_IDS = st.sampled_from(["a", "b", "a_1", "call_2_0", "tooluse.x:1"])  # (`.` and `:`: not Claude's, BR10)


def bedrock_turns() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Alternating turns from a user turn: text then calls; results then text."""
    text = st.builds(lambda t: {"text": t}, TEXT)
    use = st.fixed_dictionaries({"toolUseId": BEDROCK_IDS, "name": NAMES, "input": st.sampled_from([{}, {"q": 1}])})
    result = st.fixed_dictionaries({"toolUseId": BEDROCK_IDS, "content": st.lists(text, min_size=1, max_size=2)})
    assistant = st.tuples(st.lists(text, max_size=1), st.lists(use.map(lambda u: {"toolUse": u}), max_size=3)).filter(
        lambda pair: bool(pair[0] or pair[1])).map(lambda pair: [*pair[0], *pair[1]])
    user = st.tuples(st.lists(result.map(lambda r: {"toolResult": r}), max_size=3), st.lists(text, max_size=2)).filter(
        lambda pair: bool(pair[0] or pair[1])).map(lambda pair: [*pair[0], *pair[1]])
    rounds = st.lists(st.tuples(user, assistant), min_size=1, max_size=5)
    return rounds.map(lambda pairs: [turn for u, a in pairs
                                     for turn in ({"role": "user", "content": u}, {"role": "assistant", "content": a})])


def bedrock_answered(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each user turn after calls opens with their results, in order: a valid list when ids do not repeat."""
    out: list[dict[str, Any]] = []
    for turn in turns:
        if turn["role"] == "user" and out:
            calls = [b["toolUse"]["toolUseId"] for b in out[-1]["content"] if "toolUse" in b]
            texts = [b for b in turn["content"] if "text" in b] or [{"text": "go on"}]
            turn = {"role": "user", "content": [
                *({"toolResult": {"toolUseId": c, "content": [{"text": "ok"}]}} for c in calls), *texts]}
        out.append(turn)
    return out


@examples(300)
@given(turns=bedrock_turns(), answered=st.booleans(), claude=st.booleans(), read_only=st.booleans())
def test_the_span_route_writes_the_bedrock_body_the_neutral_route_writes(
        turns: list[dict[str, Any]], answered: bool, claude: bool, read_only: bool) -> None:
    adapter, neutral = (BEDROCK_CLAUDE, NeutralClaudeBedrock()) if claude else (BEDROCK, NeutralBedrock())
    body = {"messages": bedrock_answered(turns) if answered else turns}
    assert_span_route_is_the_neutral_route(adapter, neutral, body,
                                           (lambda name: name == "read_file") if read_only else None)


def test_a_valid_bedrock_body_is_decided_on_stubs_and_comes_back_as_it_is() -> None:
    turns: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "read it"}]}]
    for k in range(50):
        turns.append({"role": "assistant", "content": [
            {"toolUse": {"toolUseId": f"tooluse_{k}", "name": "read_file", "input": {"k": k}}}]})
        turns.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": f"tooluse_{k}", "content": [{"text": str(k)}]}}, {"text": "next"}]})
    body = {"messages": turns}
    for adapter, neutral in ((BEDROCK, NeutralBedrock()), (BEDROCK_CLAUDE, NeutralClaudeBedrock())):
        assert assert_span_route_is_the_neutral_route(adapter, neutral, body)
        repaired = adapter.repair_body(body)
        assert not repaired.changed and repaired.body == body and repaired.from_spans
        assert adapter._list_problems(body) == []  # (BR5, a toolConfig, is the caller's field)


def test_bedrock_turns_the_stubs_do_not_take_go_the_neutral_way() -> None:
    hi = {"role": "user", "content": [{"text": "hi"}]}
    call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "a", "name": "f", "input": {}}}]}
    refused: list[list[Any]] = [
        [call], [hi, hi], [hi, call, call],  # BR4, BR3: the writer merges or fills
        [hi, {"role": "assistant", "content": [{"text": " "}]}],  # BR8
        [hi, {"role": "assistant", "content": [{"text": "<thinking>\nhm\n</thinking>"}]}],
        [{"role": "user", "content": [{"text": "<system>\nbe brief\n</system>"}]}],
        [hi, call, {"role": "user", "content": [{"text": "first"},
                                                {"toolResult": {"toolUseId": "a", "content": [{"text": "x"}]}}]}],
        [hi, call, {"role": "user", "content": [
            {"toolResult": {"toolUseId": "a", "content": [{"json": {"x": 1}}]}}]}],
        [hi, call, {"role": "user", "content": [
            {"toolResult": {"toolUseId": "a", "content": [{"text": "x"}], "status": "error"}}]}],
        [{"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": "iVBO"}}}]}],
    ]
    for items in refused:
        assert BEDROCK._stubs(items) is None, items
    assert BEDROCK._stubs([hi, call]) is not None
    for body in ({"modelId": "us.anthropic.claude-sonnet-4-5", "messages": [hi]},
                 {"additionalModelRequestFields": {"thinking": {"type": "enabled"}}, "messages": [hi]}):
        assert BEDROCK._stub_repair(body, [hi], None) is None  # the model's own rules are check's
    assert BEDROCK.for_model("meta.llama4-maverick")._stub_repair({"messages": [hi]}, [hi], None) is None  # BR9


# ------------------------------------------------------------------ broken bodies: calls left without results


def without_some_results(items: list[dict[str, Any]], drop: list[bool], parts_key: str,
                         is_result: Any) -> list[dict[str, Any]]:
    """The items with the results `drop` says (in order, cycled) left out: calls interrupted, nothing else
    changed (a turn left with nothing is left out, and so is a turn that then follows one of its own role)."""
    out: list[dict[str, Any]] = []
    k = 0
    for item in items:
        if parts_key:
            kept = []
            for part in item[parts_key]:
                if is_result(part):
                    k += 1
                    if drop[(k - 1) % len(drop)]:
                        continue
                kept.append(part)
            if not kept:
                continue
            item = {**item, parts_key: kept}
            if out and out[-1].get("role") == item.get("role"):
                out[-1] = {**out[-1], parts_key: out[-1][parts_key] + kept}
                continue
        elif is_result(item):
            k += 1
            if drop[(k - 1) % len(drop)]:
                continue
        out.append(item)
    return out


DROPS = st.lists(st.booleans(), min_size=1, max_size=6)


@examples(200)
@given(contents=st.lists(gemini_content(), min_size=1, max_size=10), drop=DROPS, read_only=st.booleans())
def test_a_gemini_body_with_interrupted_calls_is_assembled_as_the_neutral_route_writes_it(
        contents: list[dict[str, Any]], drop: list[bool], read_only: bool) -> None:
    items = without_some_results([{"role": "user", "parts": [{"text": "hi"}]}, *gemini_answered(contents)], drop,
                                 "parts", lambda part: "functionResponse" in part)
    assert_span_route_is_the_neutral_route(GEMINI, NEUTRAL_GEMINI, {"contents": items},
                                           (lambda name: name == "read_file") if read_only else None)


@examples(200)
@given(items=st.lists(responses_item(), min_size=1, max_size=12), drop=DROPS, read_only=st.booleans())
def test_a_responses_body_with_interrupted_calls_is_assembled_as_the_neutral_route_writes_it(
        items: list[dict[str, Any]], drop: list[bool], read_only: bool) -> None:
    broken = without_some_results(responses_answered(items), drop, "",
                                  lambda item: item.get("type") == "function_call_output")
    assert_span_route_is_the_neutral_route(RESPONSES, NEUTRAL_RESPONSES, {"model": "gpt-5", "input": broken},
                                           (lambda name: name == "read_file") if read_only else None)


@examples(200)
@given(turns=bedrock_turns(), drop=DROPS, claude=st.booleans(), read_only=st.booleans())
def test_a_bedrock_body_with_interrupted_calls_is_assembled_as_the_neutral_route_writes_it(
        turns: list[dict[str, Any]], drop: list[bool], claude: bool, read_only: bool) -> None:
    adapter, neutral = (BEDROCK_CLAUDE, NeutralClaudeBedrock()) if claude else (BEDROCK, NeutralBedrock())
    broken = without_some_results(bedrock_answered(turns), drop, "content", lambda block: "toolResult" in block)
    assert_span_route_is_the_neutral_route(adapter, neutral, {"messages": broken},
                                           (lambda name: name == "read_file") if read_only else None)


def test_long_broken_bodies_of_every_span_route_are_assembled_on_stubs() -> None:
    """The proxy's benchmark bodies (every tenth call without its result): the span route decides them, and only
    the turns around each interrupted call are written anew."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("bench_proxy", Path(__file__).parents[2] / "bench" / "proxy.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    route_body: Any = bench.route_body
    for route, adapter, neutral in (("gemini", GEMINI, NEUTRAL_GEMINI), ("responses", RESPONSES, NEUTRAL_RESPONSES),
                                    ("bedrock", BEDROCK_CLAUDE, NeutralClaudeBedrock())):
        body = route_body(route, 300, broken=True)
        assert assert_span_route_is_the_neutral_route(adapter, neutral, body), route
        repaired = adapter.repair_body(body)
        assert repaired.from_spans and repaired.report.interrupted and len(repaired.rewritten) == 10, route
        valid = route_body(route, 300, broken=False)
        assert adapter._list_problems(valid) == [] and not adapter.repair_body(valid).changed, route


class Seen(Bedrock):
    """Bedrock recording the lists its neutral route repairs and the items it reads in groups."""

    def __init__(self) -> None:
        self.seen: list[list[Any]] = []
        self.read: list[list[Any]] = []

    def _neutral_repair_body(self, body: Any, items: list[Any], is_read_only: Any) -> Any:
        self.seen.append(items)
        return super()._neutral_repair_body(body, items, is_read_only)

    def _read_groups(self, items: list[Any]) -> Any:
        self.read.append(items)
        return super()._read_groups(items)


def broken_bedrock_turns(unanswered: list[str]) -> list[dict[str, Any]]:
    """40 rounds of calls (`a` and, with two names, `b`) and a user turn of their results then words; the calls of
    every tenth round leave out the results named in `unanswered`."""
    turns: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "read them"}]}]
    for k in range(40):
        names = ["a", "b"] if len(unanswered) > 1 or unanswered == ["b"] else ["a"]
        turns.append({"role": "assistant", "content": [
            {"toolUse": {"toolUseId": f"{name}{k}", "name": "read_file", "input": {"k": k}}} for name in names]})
        results = [{"toolResult": {"toolUseId": f"{name}{k}", "content": [{"text": "x"}]}} for name in names
                   if not (k % 10 == 9 and name in unanswered)]
        turns.append({"role": "user", "content": [*results, {"text": f"step {k + 1}"}]})
    return turns


def test_calls_all_interrupted_are_answered_by_the_writer_from_their_turn_alone() -> None:
    """Bedrock writes the synthetic results from the calls' turn (`_synthetic_result`), reading nothing: one user
    turn of them and the words after them; Gemini likewise."""
    turns = broken_bedrock_turns(["a"])
    adapter = Seen()
    assert assert_span_route_is_the_neutral_route(adapter, NeutralBedrock(), {"messages": turns})
    adapter.seen.clear()
    adapter.read.clear()
    repaired = adapter.repair_body({"messages": turns})
    assert repaired.from_spans and len(repaired.report.interrupted) == 4 and repaired.rewritten == [20, 40, 60, 80]
    assert adapter.seen == [] and adapter.read == []  # nothing went the neutral way, no turn was read
    for k in (9, 19, 29, 39):
        turn = repaired.body["messages"][2 * k + 2]
        assert turn["content"][0]["toolResult"]["status"] == "error" and turn["content"][1] == {"text": f"step {k + 1}"}
    assert all(a is b for a, b in zip(repaired.body["messages"][:20], turns[:20]))

    class SeenGemini(Gemini):
        def __init__(self) -> None:
            self.read: list[list[Any]] = []

        def _read_groups(self, items: list[Any]) -> Any:
            self.read.append(items)
            return super()._read_groups(items)

    contents = [{"role": "user", "parts": [{"text": "read it"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                {"role": "user", "parts": [{"text": "and then?"}]},
                {"role": "model", "parts": [{"text": "done"}]}]
    gemini = SeenGemini()
    assert assert_span_route_is_the_neutral_route(gemini, NEUTRAL_GEMINI, {"contents": contents})
    gemini.read.clear()
    repaired = gemini.repair_body({"contents": contents})
    assert repaired.from_spans and repaired.rewritten == [2] and gemini.read == []
    assert repaired.body["contents"][2]["parts"][1] == {"text": "and then?"}


def test_calls_answered_in_part_are_assembled_on_stubs_with_their_kept_results() -> None:
    """Strict alternation puts the user's words after the results: a call turn with one result kept and one
    interrupted is one user turn, the kept result, the synthetic one, then the words, with nothing read."""
    turns = broken_bedrock_turns(["b"])
    adapter = Seen()
    assert assert_span_route_is_the_neutral_route(adapter, NeutralBedrock(), {"messages": turns})
    adapter.seen.clear()
    adapter.read.clear()
    repaired = adapter.repair_body({"messages": turns})
    assert repaired.from_spans and len(repaired.report.interrupted) == 4 and len(repaired.rewritten) == 4
    assert adapter.seen == [] and adapter.read == []
    for k in (9, 19, 29, 39):
        blocks = repaired.body["messages"][2 * k + 2]["content"]
        assert [b["toolResult"].get("status") for b in blocks[:2]] == [None, "error"]
        assert blocks[0] is turns[2 * k + 2]["content"][0] and blocks[2] == {"text": f"step {k + 1}"}
