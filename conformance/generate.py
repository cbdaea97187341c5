"""Write the conformance vectors from the Python implementation: `python conformance/generate.py [--check]`.

Every case is language-neutral JSON: an input (a neutral history, or a provider's request body), the options, and
what chatmend makes of it (the output, the report, or the error). `tests/test_conformance.py` runs every case
against the library and fails when the committed vectors differ from what this script writes; the TypeScript
package (`js/`) runs the same cases. Cases:

- `history/rules.json`: one or more examples of every rule of the spec (docs/rules.md, Part 2) and each option;
- `history/errors.json`: bad input, with the index and field the error names;
- `history/generated.json.gz`: messy histories from a seeded generator, every option mix;
- `ids.json`: rule 5's final ids (`FinalIds`) and `normalize_tool_id`;
- `bodies/<provider>.json.gz`: `repair_body` and `check` of bodies broken and valid, for Anthropic Messages, OpenAI
  Chat Completions, OpenAI Responses and Gemini, unknown fields among them.

Output is deterministic: the same library gives the same bytes (gzip written with no time stamp).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chatmend import HistoryError, normalize_tool_id, repair_history
from chatmend.ids import FinalIds
from chatmend.jsonl import message_to_dict
from chatmend.providers import get
from chatmend.repair import RepairResult

HERE = Path(__file__).resolve().parent
GENERATED_HISTORIES = 2400
GENERATED_BODIES = 400
"""Generated bodies per provider."""
GENERATED_ID_BODIES = 60
"""Generated bodies per provider whose call ids the provider may not take as they are (mapped to wire ids)."""
AWKWARD_IDS = ["a.b", "a_b", "a b", "a/b", "a-b", "é", "x" * 41, "x" * 40, "y" * 65, "y" * 64, "", "call_1",
               "z" * 53 + "_b30855e510", "🙂" * 30]
"""Ids too long for Chat (40) or Responses and Anthropic (64), of characters Anthropic refuses, empty, and ids
their mapping could make (so that a wire id collides with another call's)."""
PROVIDERS = ("anthropic", "openai_chat", "openai_responses", "gemini")


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# ----------------------------------------------------------------------------------------------- histories

def history_options(options: dict[str, Any]) -> dict[str, Any]:
    """A case's options as `repair_history`'s keywords (`read_only`: the names of the tools that only read)."""
    kwargs: dict[str, Any] = {}
    if "read_only" in options:
        names = set(options["read_only"])
        kwargs["is_read_only"] = names.__contains__
    for key in ("wording", "leave_open_last", "on_missing", "mark"):
        if key in options:
            kwargs[key] = options[key]
    return kwargs


def call_dict(call: Any) -> dict[str, Any]:
    return message_to_dict(_with_call(call))["tool_calls"][0]  # type: ignore[no-any-return]


def _with_call(call: Any) -> Any:
    from chatmend.messages import ChatMessage
    return ChatMessage(role="assistant", tool_calls=(call,))


def history_expected(result: RepairResult) -> dict[str, Any]:
    """What a history case expects: the messages (canonical JSON shape) and the report."""
    return {
        "messages": [message_to_dict(m) for m in result.messages],
        "interrupted": [call_dict(c) for c in result.interrupted],
        "interrupted_at": [list(at) for at in result.interrupted_at],
        "dropped": list(result.dropped),
        "moved": list(result.moved),
        "notes": list(result.notes),
        "renamed": [list(r) for r in result.renamed],
        "final_ids": list(result.final_ids),
        "stripped": [call_dict(c) for c in result.stripped],
        "stripped_at": [list(at) for at in result.stripped_at],
    }


def history_case(name: str, history: list[dict[str, Any]], options: dict[str, Any] | None = None) -> dict[str, Any]:
    options = options or {}
    case: dict[str, Any] = {"name": name, "input": history, "options": options}
    try:
        case["expected"] = history_expected(repair_history(history, **history_options(options)))
    except HistoryError as error:
        case["error"] = {"index": error.index, "field": error.field}
    return case


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def calls(*ids: str, text: str = "", names: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"role": "assistant", "content": text,
            "tool_calls": [{"id": i, "name": names[k] if k < len(names) else "search", "arguments": {"q": str(k)}}
                           for k, i in enumerate(ids)]}


def result(call_id: str, text: Any = "ok", **more: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text, **more}


def reply(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def rule_cases() -> list[dict[str, Any]]:
    """Every rule of the spec, and every option, by example."""
    c = history_case
    return [
        c("valid history unchanged", [user("hi"), calls("a", "b"), result("a"), result("b"), reply("done")]),
        c("empty history", []),
        c("R1 blank assistant dropped", [user("hi"), reply(""), reply(" \n\t"), reply("done")]),
        c("R1 blank parts dropped", [user("hi"), {"role": "assistant", "content": [{"type": "text", "text": " "}]}]),
        c("R1 empty parts dropped", [user("hi"), {"role": "assistant", "content": []}]),
        c("R1 thinking part kept", [user("hi"), {"role": "assistant", "content": [
            {"type": "thinking", "text": "hm", "signature": "s"}]}]),
        c("R1 image part kept", [user("hi"), {"role": "assistant", "content": [
            {"type": "image", "media_type": "image/png", "data": PNG}]}]),
        c("R1 placeholder does not end a span", [calls("a"), reply(""), result("a")]),
        c("R2 messages outside spans keep order", [{"role": "system", "content": "s"}, user("a"), user("b")]),
        c("R3 results moved after calls in call order", [calls("a", "b"), result("b"), result("a")]),
        c("R3 steer kept after results", [calls("a"), user("stop"), result("a")]),
        c("R3 same id twice in one reply", [calls("x", "x"), result("x", "1"), result("x", "2")]),
        c("R3 same id twice, one answer", [calls("x", "x"), result("x", "1")]),
        c("R3 result in a later span is a note", [calls("a"), reply("next"), result("a")]),
        c("R3 result before any call is a note", [user("hi"), result("z", "lost")]),
        c("R3 second result for one call is a note", [calls("a"), result("a", "1"), result("a", "2")]),
        c("R4 span output order", [calls("a", "b"), user("steer"), {"role": "system", "content": "sys"},
                                    result("b"), result("zz"), result("a")]),
        c("R5 empty id named by position", [user("hi"), calls("", "")]),
        c("R5 repeated id across replies", [calls("a"), result("a"), calls("a"), result("a")]),
        c("R5 smallest free k", [calls("a"), result("a"), calls("a_1"), result("a_1"), calls("a"), result("a")]),
        c("R5 empty id collides with a given one", [calls("call_1_0"), result("call_1_0"), calls("")]),
        c("R5 Kimi ids restart", [calls("functions.search:0"), result("functions.search:0"),
                                  calls("functions.search:0", "functions.search:1"),
                                  result("functions.search:0"), result("functions.search:1")]),
        c("R6 synthetic may have run", [calls("a", names=("write_file",))]),
        c("R6 synthetic read only", [calls("a", "b", names=("read_file", "write_file"))], {"read_only": ["read_file"]}),
        c("R6 interrupted in history order", [calls("a"), calls("b", "c"), user("x")]),
        c("R7 note keeps images", [user("hi"), result("z", **{"content": [
            {"type": "text", "text": "shot"}, {"type": "image", "media_type": "image/png", "data": PNG}]})]),
        c("R7 note of an error with a name", [user("hi"), result("z", "boom", tool_name="shell", is_error=True)]),
        c("R7 note with no output", [user("hi"), result("z", "")]),
        c("R7 note with empty id", [user("hi"), result("", "x")]),
        c("R7 note of images only", [user("hi"), result("z", **{"content": [
            {"type": "image", "url": "https://example.com/a.png"}]})]),
        c("R9 arguments not JSON kept", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "s", "arguments": '{"q": "cut'}]}]),
        c("R9 arguments as JSON text parsed", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "s", "arguments": '{"q": 1}'}]}, result("a")]),
        c("R9 arguments strict JSON refuses kept verbatim", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "s", "arguments": '{"n": 1e999}'},
            {"id": "b", "name": "s", "arguments": '{"q": "\\ud800"}'}]}]),
        c("provider data kept", [{"role": "assistant", "content": "", "provider_data": {"x": {"b": 1, "a": 2}},
                                  "tool_calls": [{"id": "", "name": "s", "arguments": {},
                                                  "provider_data": {"gemini": {"thought_signature": "t"}}}]}]),
        c("R9 lenient booleans read as the model reads them", [
            user("hi"), result("a", is_error="yes"), result("b", is_error="no"), result("c", is_error=1),
            {"role": "assistant", "content": [{"type": "thinking", "redacted": "yes", "data": "x"}]}]),
        c("R9 defaults", [{"role": "user"}, {"role": "user", "content": "x", "provider_data": None, "tool_name": None,
                                             "is_error": False}]),
        c("option wording mapping", [calls("a", "b", names=("search", "shell"))], {"wording": {"search": "gone"}}),
        c("option leave_open_last", [calls("a"), result("a"), calls("b", "c"), result("c")],
          {"leave_open_last": True}),
        c("option leave_open_last not last", [calls("b"), user("x"), calls("c")], {"leave_open_last": True}),
        c("option strip", [calls("a", "b"), result("b"), calls("c")], {"on_missing": "strip"}),
        c("option strip blank message dropped", [user("x"), calls("a"), user("y")], {"on_missing": "strip"}),
        c("option strip with leave_open_last", [calls("a"), calls("b")],
          {"on_missing": "strip", "leave_open_last": True}),
        c("option strip ids", [calls("a"), result("a"), calls("", "a"), result("a")], {"on_missing": "strip"}),
        c("option mark none", [calls("a")], {"mark": "none"}),
        c("option mark field", [calls("a")], {"mark": "field"}),
        c("idempotent on a repaired history", repaired_input([calls("", "a"), result("a"), user("x"), calls("a")])),
    ]


def repaired_input(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [message_to_dict(m) for m in repair_history(history).messages]


def error_cases() -> list[dict[str, Any]]:
    """Rule 9: bad input names the message and the field."""
    c = history_case
    return [
        c("not a mapping", [user("hi"), "hello"]),  # type: ignore[list-item]
        c("unknown role", [user("hi"), {"role": "robot", "content": "x"}]),
        c("missing role", [{"content": "x"}]),
        c("call without a name", [{"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]}]),
        c("call with an empty name", [{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": ""}]}]),
        c("tool message without tool_call_id", [{"role": "tool", "content": "x"}]),
        c("content of the wrong type", [user("hi"), {"role": "user", "content": 5}]),
        c("tool_calls on a user message", [{"role": "user", "content": "x", "tool_calls": [{"id": "a", "name": "s"}]}]),
        c("tool_call_id on a user message", [{"role": "user", "content": "x", "tool_call_id": "a"}]),
        c("text part without text", [{"role": "user", "content": [{"type": "text"}]}]),
        c("text part text not a string", [{"role": "user", "content": [{"type": "text", "text": 5}]}]),
        c("unknown part type", [{"role": "user", "content": [{"type": "video"}]}]),
        c("part type missing", [{"role": "user", "content": [{"text": "x"}]}]),
        c("part not an object", [{"role": "user", "content": ["hi"]}]),
        c("image without source", [{"role": "user", "content": [{"type": "image"}]}]),
        c("image data without media type", [{"role": "user", "content": [{"type": "image", "data": "AA"}]}]),
        c("image blank url", [{"role": "user", "content": [{"type": "image", "url": " "}]}]),
        c("image unknown field", [{"role": "user", "content": [{"type": "image", "url": "u", "detail": "x"}]}]),
        c("file with two sources", [{"role": "user", "content": [{"type": "file", "url": "u", "file_id": "f"}]}]),
        c("native without provider", [{"role": "user", "content": [{"type": "native", "data": {}}]}]),
        c("native data a list", [{"role": "user", "content": [{"type": "native", "provider": "p", "data": [1]}]}]),
        c("thinking text not a string", [{"role": "assistant", "content": [{"type": "thinking", "text": 1}]}]),
        c("arguments a list", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "s", "arguments": [1]}]}]),
        c("arguments null", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "s", "arguments": None}]}]),
        c("call id a number", [{"role": "assistant", "content": "", "tool_calls": [{"id": 1, "name": "s"}]}]),
        c("call name null", [{"role": "assistant", "content": "", "tool_calls": [{"id": "a", "name": None}]}]),
        c("call unknown field", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "s", "colour": 1}]}]),
        c("raw_arguments a number", [{"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "name": "s", "raw_arguments": 1}]}]),
        c("call not an object", [{"role": "assistant", "content": "", "tool_calls": ["a"]}]),
        c("tool_calls not a list", [{"role": "assistant", "content": "", "tool_calls": {"id": "a"}}]),
        c("tool_calls null", [{"role": "assistant", "content": "", "tool_calls": None}]),
        c("is_error not a boolean", [{"role": "tool", "tool_call_id": "a", "content": "x", "is_error": 2}]),
        c("is_error null", [{"role": "tool", "tool_call_id": "a", "content": "x", "is_error": None}]),
        c("tool_call_id a number", [{"role": "tool", "tool_call_id": 5, "content": "x"}]),
        c("tool_name a number", [{"role": "tool", "tool_call_id": "a", "content": "x", "tool_name": 3}]),
        c("provider_data a list", [{"role": "user", "content": "x", "provider_data": [1]}]),
        c("unknown field", [{"role": "user", "content": "x", "colour": "red"}]),
        c("null content", [{"role": "user", "content": None}]),
        c("role null", [{"role": None, "content": "x"}]),
    ]


IDS = ["", "a", "a_1", "a_2", "call_0", "call_1_0", "call_2_0", "functions.search:0", "functions.search:1",
       "a.b|c/d", "toolu_01M8nJQQMxqpv1VaPYuJKT4j", "call_" + "x" * 60, "x" * 70, "ünï"]
NAMES = ["search", "read_file", "write_file", "screenshot", "shell"]
TEXTS = ["ok", "3 hits", "stop, use the other file", "draft", "Done.", "é 中文 🙂", "", " ", "\n"]


class Generator:
    """Messy histories, as tests/strategies.py draws them, from a seeded random source (the same every run)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def text(self) -> str:
        r = self.r
        if r.random() < 0.8:
            return r.choice(TEXTS[:6])
        return "".join(r.choice("ab \n\t{}\"\\é🙂\u2028") for _ in range(r.randint(1, 8)))

    def parts(self) -> list[dict[str, Any]]:
        out = []
        for _ in range(self.r.randint(1, 3)):
            kind = self.r.random()
            if kind < 0.6:
                out.append({"type": "text", "text": self.text()})
            elif kind < 0.8:
                out.append({"type": "image", "media_type": "image/png", "data": PNG})
            else:
                out.append({"type": "image", "url": "https://example.com/cat.png"})
        return out

    def arguments(self) -> dict[str, Any] | str:
        r = self.r
        if r.random() < 0.15:
            return r.choice(['{"q": "cut', "not json"])
        return {r.choice(["q", "path", "n"]): r.choice([r.randint(0, 9), self.text()]) for _ in range(r.randint(0, 2))}

    def call(self) -> dict[str, Any]:
        return {"id": self.r.choice(IDS), "name": self.r.choice(NAMES), "arguments": self.arguments()}

    def assistant(self) -> dict[str, Any]:
        r = self.r
        kind = r.choice(["text", "calls", "calls", "calls", "placeholder", "thinking"])
        if kind == "placeholder":
            return {"role": "assistant", "content": r.choice(["", " ", "\n\t", []])}
        if kind == "text":
            return {"role": "assistant", "content": self.text() or "x"}
        tool_calls = [self.call() for _ in range(r.randint(1, 3))]
        if kind == "thinking":
            return {"role": "assistant", "tool_calls": tool_calls, "content": [
                {"type": "thinking", "text": self.text(), "signature": "sig1", "provider": "anthropic"},
                {"type": "text", "text": self.text()}]}
        return {"role": "assistant", "content": r.choice(["", self.text()]), "tool_calls": tool_calls}

    def tool(self, call: dict[str, Any] | None = None) -> dict[str, Any]:
        r = self.r
        message: dict[str, Any] = {"role": "tool", "tool_call_id": call["id"] if call else r.choice(IDS),
                                   "content": self.text() if r.random() < 0.6 else self.parts()}
        if r.random() < 0.5:
            message["tool_name"] = call["name"] if call else r.choice(NAMES)
        if r.random() < 0.3:
            message["is_error"] = True
        return message

    def history(self, max_size: int = 14) -> list[dict[str, Any]]:
        r = self.r
        history: list[dict[str, Any]] = []
        if r.random() < 0.5:
            history.append({"role": "system", "content": self.text()})
        size = r.randint(0, max_size)
        while len(history) < size:
            kind = r.choice(["user", "assistant", "assistant", "results", "tool", "system"])
            if kind == "user":
                history.append({"role": "user", "content": self.text() if r.random() < 0.5 else self.parts()})
            elif kind == "system":
                history.append({"role": "system", "content": self.text()})
            elif kind == "tool":
                history.append(self.tool())
            else:
                message = self.assistant()
                history.append(message)
                if kind == "results" and message.get("tool_calls"):
                    answers = [self.tool(call) for call in message["tool_calls"] if r.random() < 0.8]
                    r.shuffle(answers) if r.random() < 0.3 else None
                    if answers and r.random() < 0.2:
                        answers.insert(r.randrange(len(answers)), {"role": "user", "content": "steer"})
                    history += answers
        return history

    def options(self) -> dict[str, Any]:
        r = self.r
        options: dict[str, Any] = {}
        if r.random() < 0.3:
            options["read_only"] = r.sample(NAMES, 2)
        if r.random() < 0.1:
            options["wording"] = {r.choice(NAMES): "my words"}
        if r.random() < 0.15:
            options["leave_open_last"] = True
        if r.random() < 0.15:
            options["on_missing"] = "strip"
        if r.random() < 0.1:
            options["mark"] = r.choice(["none", "field"])
        return options


def generated_history_cases() -> list[dict[str, Any]]:
    gen = Generator(47)
    return [history_case(f"generated {k}", gen.history(), gen.options()) for k in range(GENERATED_HISTORIES)]


# ---------------------------------------------------------------------------------------------------- ids

def id_cases() -> dict[str, Any]:
    """Rule 5 (`FinalIds.allocate` in history order) and `normalize_tool_id` (a valid id kept, others hashed)."""
    sequences: list[list[tuple[str, int, int]]] = [
        [("", 0, 0), ("", 0, 1), ("call_0_0", 1, 0)],
        [("a", 0, 0), ("a", 0, 1), ("a_1", 1, 0), ("a", 2, 0), ("a_3", 3, 0), ("a", 4, 0)],
        [("call_2_0", 0, 0), ("", 2, 0), ("", 2, 0)],
        [("x", 0, 0)] * 5,
    ]
    final: list[dict[str, Any]] = []
    for allocations in sequences:
        ids = FinalIds()
        final.append({"allocate": allocations, "expected": [ids.allocate(*a) for a in allocations]})
    normalize = [{"id": i, "max_length": n, "expected": normalize_tool_id(i, max_length=n)}
                 for i in [*IDS[1:], "a b", "é" * 80, "ok-id_1"] for n in (64, 40)]
    return {"final_ids": final, "normalize_tool_id": normalize}


# ------------------------------------------------------------------------------------------------- bodies

class Turns:
    """A conversation's skeleton, rendered in each provider's wire format: turns of `user` text, `assistant` text
    with calls (id, name, arguments), and `results` (id, name, text, is_error)."""

    def __init__(self, r: random.Random) -> None:
        self.r = r

    def skeleton(self, awkward: bool = False) -> list[tuple[str, Any]]:
        r = self.r
        turns: list[tuple[str, Any]] = [("user", r.choice(TEXTS[:6]))]
        for _ in range(r.randint(0, 5)):
            if awkward:
                ids = [r.choice(AWKWARD_IDS) for _ in range(r.randint(1, 3))]
            else:
                ids = [r.choice(["a", "b", "c", "call_1", "toolu_1", "call_1"]) for _ in range(r.randint(1, 3))]
                if r.random() < 0.7:  # mostly unique ids in one reply
                    ids = [f"{i}{k}" for k, i in enumerate(ids)]
            made = [(i, r.choice(NAMES), {"q": r.choice(TEXTS[:6])}) for i in ids]
            turns.append(("assistant", (r.choice(["", "working"]), made)))
            answers = [(i, name, r.choice(TEXTS[:6]), r.random() < 0.2) for i, name, _ in made if r.random() < 0.85]
            if r.random() < 0.2:
                r.shuffle(answers)
            if r.random() < 0.1:
                answers.append(("ghost", "shell", "late", False))
            if answers or r.random() < 0.5:
                turns.append(("results", answers))
            if r.random() < 0.3:
                turns.append(("user", r.choice(TEXTS[:6])))
        if r.random() < 0.5:
            turns.append(("assistant", ("All done.", [])))
        return turns


def chat_body(turns: list[tuple[str, Any]], r: random.Random) -> dict[str, Any]:
    items: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for kind, value in turns:
        if kind == "user":
            items.append({"role": "user", "content": value})
        elif kind == "assistant":
            text, made = value
            item: dict[str, Any] = {"role": "assistant", "content": text or None}
            if made:
                item["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": dump(a)}}
                                      for i, n, a in made]
            items.append(item)
        else:
            items += [{"role": "tool", "tool_call_id": i, "content": t} for i, _, t, _ in value]
    return {"model": "gpt-4o", "temperature": 0, "x_unknown": {"kept": True}, "messages": items}


def anthropic_body(turns: list[tuple[str, Any]], r: random.Random) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for kind, value in turns:
        if kind == "user":
            if items and items[-1]["role"] == "user":
                items[-1] = {**items[-1], "content": [*_blocks(items[-1]["content"]), {"type": "text", "text": value
                                                                                     or "x"}]}
            else:
                items.append({"role": "user", "content": value or "x"})
        elif kind == "assistant":
            text, made = value
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            blocks += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in made]
            items.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "ok"}]})
        else:
            results = []
            for i, _, t, err in value:
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": i, "content": t or "(empty)"}
                if err:
                    block["is_error"] = True
                if r.random() < 0.1:
                    block["cache_control"] = {"type": "ephemeral"}
                results.append(block)
            if results:
                items.append({"role": "user", "content": results})
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "Be brief.", "x_unknown": [1],
            "messages": items}


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def responses_body(turns: list[tuple[str, Any]], r: random.Random) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for kind, value in turns:
        if kind == "user":
            items.append({"role": "user", "content": value or "x"})
        elif kind == "assistant":
            text, made = value
            if text and r.random() < 0.3:  # (assistant text takes the neutral route: a third of the bodies)
                items.append({"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": text, "annotations": []}]})
            items += [{"type": "function_call", "call_id": i, "name": n, "arguments": dump(a)} for i, n, a in made]
        else:
            items += [{"type": "function_call_output", "call_id": i, "output": t} for i, _, t, _ in value]
    return {"model": "gpt-5", "instructions": "Be brief.", "store": False, "x_unknown": None, "input": items}


def gemini_body(turns: list[tuple[str, Any]], r: random.Random) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    with_ids = r.random() < 0.7  # (a client sends ids on every call and response, or on none)
    for kind, value in turns:
        if kind == "user":
            items.append({"role": "user", "parts": [{"text": value or "x"}]})
        elif kind == "assistant":
            text, made = value
            parts: list[dict[str, Any]] = [{"text": text}] if text else []
            parts += [{"functionCall": {"id": i, "name": n, "args": a}} if with_ids else
                      {"functionCall": {"name": n, "args": a}} for i, n, a in made]
            items.append({"role": "model", "parts": parts or [{"text": "ok"}]})
        else:
            parts = [{"functionResponse": {"id": i, "name": n, "response": {"error": t} if err else {"output": t}}}
                     if with_ids else {"functionResponse": {"name": n, "response": {"error": t} if err else
                                                           {"output": t}}}
                     for i, n, t, err in value]
            if parts:
                items.append({"role": "user", "parts": parts})
    return {"systemInstruction": {"parts": [{"text": "Be brief."}]}, "generationConfig": {"temperature": 0},
            "xUnknown": 1, "contents": items}


WRITERS: dict[str, Callable[[list[tuple[str, Any]], random.Random], dict[str, Any]]] = {
    "anthropic": anthropic_body, "openai_chat": chat_body, "openai_responses": responses_body, "gemini": gemini_body,
}


def _chat_call(call_id: str, name: str = "search") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def _use(call_id: str, name: str = "search") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {}}


def _result(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": text}


RULE_BODIES: dict[str, dict[str, dict[str, Any]]] = {
    "openai_chat": {
        "OC2 tool message first": {"messages": [{"role": "tool", "tool_call_id": "a", "content": "x"},
                                                {"role": "user", "content": "hi"}]},
        "OC4 a result twice": {"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [_chat_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "a", "content": "2"}]},
        "OC5 id too long": {"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [_chat_call("c" * 41)]},
            {"role": "tool", "tool_call_id": "c" * 41, "content": "1"}]},
        "blank reply among turns": {"messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": " "},
            {"role": "user", "content": "x"}]},
        "user text parts": {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]},
    },
    "anthropic": {
        "AN3 words before a result": {"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": [_use("a")]},
            {"role": "user", "content": [{"type": "text", "text": "wait"}, _result("a")]}]},
        "AN4 text after a call, merged": {"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": [_use("a")]},
            {"role": "assistant", "content": [{"type": "text", "text": "more"}]},
            {"role": "user", "content": [_result("a")]}]},
        "AN5 id pattern": {"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": [_use("a.b")]},
            {"role": "user", "content": [_result("a.b")]}]},
        "AN9 blank reply": {"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": ""},
            {"role": "user", "content": "again"}, {"role": "assistant", "content": [{"type": "text", "text": " "}]},
            {"role": "user", "content": "and"}]},
        "AN8 tools and top level": {"max_tokens": -1, "system": [{"type": "image"}, {"type": "text", "text": ""}],
                                    "tools": [{"name": "a b", "input_schema": {}}, {"name": "x", "input_schema": {}},
                                              {"name": "x"}],
                                    "messages": [{"role": "user", "content": "hi"}]},
        "images in turns": {"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/bmp",
                                                                      "data": "AA"}},
                                         {"type": "image", "source": {"type": "url", "url": ""}},
                                         {"type": "image", "source": {"type": "other"}}]},
            {"role": "assistant", "content": [_use("a")]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "is_error": True,
                                          "cache_control": {"type": "ephemeral"},
                                          "content": [{"type": "text", "text": "shot"}]}]}]},
        "a result twice and a stranger": {"model": "m", "max_tokens": 5, "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": [_use("a"), _use("b")]},
            {"role": "user", "content": [_result("a"), _result("a", "again"), _result("z")]},
            {"role": "user", "content": [_result("b")]}]},
        "empty list": {"model": "m", "max_tokens": 5, "messages": []},
    },
    "openai_responses": {
        "OR0 and OR3 call ids, tools": {"tools": [{"type": "function"}, 5], "instructions": 3, "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "", "name": "s", "arguments": "{}"},
            {"type": "function_call", "call_id": "c" * 65, "name": "s", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "", "output": "x"},
            {"type": "function_call_output", "call_id": "c" * 65, "output": "x"}]},
        "OR10 a call and an output twice": {"model": "m", "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "a", "name": "s", "arguments": "{}"},
            {"type": "function_call", "call_id": "a", "name": "s", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "1"},
            {"type": "function_call_output", "call_id": "a", "output": "2"}]},
        "OR2 chained": {"model": "m", "previous_response_id": "resp_1", "input": [
            {"type": "function_call_output", "call_id": "a", "output": "1"}, {"role": "user", "content": "hi"}]},
        "OR11 a message between": {"model": "m", "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "a", "name": "s", "arguments": "{}"},
            {"role": "developer", "content": "steer"},
            {"type": "function_call_output", "call_id": "a", "output": "1"}]},
    },
    "gemini": {
        "GE1 ids that do not match": {"contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "s", "args": {}}},
                                        {"functionCall": {"id": "b", "name": "s", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "a", "name": "s", "response": {"output": "1"}}},
                                       {"functionResponse": {"id": "a", "name": "s", "response": {"output": "2"}}}]}]},
        "GE6 empty system instruction": {"systemInstruction": {"parts": []}, "contents": [
            {"role": "user", "parts": [{"text": "hi"}]}]},
    },
}
"""Bodies of every rule `check` judges on the plain shapes the stub route takes."""


SIG = "EqQBCkgIARABGAIiQL2b0Qf8xXkq9sV5aXQzZWZ0aGlua2luZw=="
"""A signature as the providers send them (opaque base64: the same bytes must go back)."""
CACHE = {"cache_control": {"type": "ephemeral"}}


def _thinking(text: str = "I should look it up.") -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": SIG}


def _anthropic_vocabulary() -> dict[str, list[Any]]:
    """Anthropic turns of what clients send beyond text and tools (Claude Code, pydantic-ai): thinking and redacted
    thinking first in a turn, a server tool's call and result beside a client call, images and documents, results
    holding images, cache breakpoints on any block, and fields chatmend does not model."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"},
                "title": "notes.txt", "citations": {"enabled": True}}
    server = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "duration"}}
    searched = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
        {"type": "web_search_result", "url": "https://example.com", "title": "Duration",
         "encrypted_content": "Eo8B", "page_age": None}]}
    return {
        "user": [{"role": "user", "content": [{"type": "text", "text": "Read these.", **CACHE}, image, document]}],
        "calls": [{"role": "assistant", "content": [
            _thinking(), {"type": "redacted_thinking", "data": "EmwKAhgB"},
            {"type": "text", "text": "Searching."}, server, searched,
            {**_use("toolu_01", "read_file"), **CACHE}, _use("toolu_02", "add")]}],
        "results": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": [
                {"type": "text", "text": "a picture"}, image]},
            {"type": "tool_result", "tool_use_id": "toolu_02", "content": [{"type": "text", "text": "4"}],
             "is_error": False, **CACHE}]}],
        "reply": [{"role": "assistant", "content": [_thinking("Done."), {"type": "text", "text": "4.",
                                                                         "citations": None}]}],
    }


def _responses_vocabulary() -> dict[str, list[Any]]:
    """Responses items of what clients replay (pydantic-ai, Codex): reasoning items with encrypted content, output
    messages with ids, status and annotations, calls with item ids, hosted tools' calls (web search, file search,
    computer use with its output, tool search), images and files in input messages."""
    return {
        "user": [{"role": "user", "content": [
            {"type": "input_text", "text": "Look at this."},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
            {"type": "input_file", "filename": "notes.txt", "file_data": "data:text/plain;base64,bm90ZXM="}]}],
        "calls": [
            {"type": "reasoning", "id": "rs_01", "summary": [{"type": "summary_text", "text": "Search first."}],
             "encrypted_content": "gAAAAB"},
            {"type": "web_search_call", "id": "ws_01", "status": "completed",
             "action": {"type": "search", "query": "duration"}},
            {"type": "file_search_call", "id": "fs_01", "status": "completed", "queries": ["notes"],
             "results": None},
            {"type": "tool_search_call", "id": "ts_01", "status": "completed", "arguments": {"query": "add"},
             "execution": "server", "call_id": None},
            {"type": "message", "id": "msg_01", "role": "assistant", "status": "completed", "content": [
                {"type": "output_text", "text": "Searching.", "annotations": [
                    {"type": "url_citation", "url": "https://example.com", "title": "Duration",
                     "start_index": 0, "end_index": 9}], "logprobs": []}]},
            {"type": "function_call", "id": "fc_01", "call_id": "call_01", "name": "read_file",
             "arguments": "{}", "status": "completed"},
            {"type": "function_call", "id": "fc_02", "call_id": "call_02", "name": "add",
             "arguments": "{\"a\":2,\"b\":2}", "status": "completed"}],
        "results": [
            {"type": "function_call_output", "call_id": "call_01", "output": [
                {"type": "input_text", "text": "a picture"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]},
            {"type": "function_call_output", "call_id": "call_02", "output": "4", "id": "fco_02",
             "status": "completed"}],
        "reply": [
            {"type": "computer_call", "id": "cu_01", "call_id": "call_cu1", "status": "completed",
             "action": {"type": "screenshot"}, "pending_safety_checks": []},
            {"type": "computer_call_output", "call_id": "call_cu1", "output": {
                "type": "computer_screenshot", "image_url": f"data:image/png;base64,{PNG}"}},
            {"type": "message", "id": "msg_02", "role": "assistant", "status": "completed", "content": [
                {"type": "output_text", "text": "4.", "annotations": []}]}],
    }


def _gemini_vocabulary() -> dict[str, list[Any]]:
    """Gemini contents of what clients send (Gemini CLI, pydantic-ai): thoughts and thought signatures on the first
    call of a step, inline and file data, executable code and its result, a content without a role (read as a user
    turn), and fields chatmend does not model."""
    return {
        "user": [{"parts": [{"text": "Look at this."},
                            {"inlineData": {"mimeType": "image/png", "data": PNG}},
                            {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/notes.pdf"}}]}],
        "calls": [{"role": "model", "parts": [
            {"text": "Search first.", "thought": True},
            {"executableCode": {"language": "PYTHON", "code": "print(2 + 2)"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "4"}},
            {"functionCall": {"id": "g1", "name": "read_file", "args": {"path": "a"}}, "thoughtSignature": SIG},
            {"functionCall": {"id": "g2", "name": "add", "args": {"a": 2, "b": 2}}}]}],
        "results": [{"role": "user", "parts": [
            {"functionResponse": {"id": "g1", "name": "read_file", "response": {"output": "a picture"},
                                  "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}]}},
            {"functionResponse": {"id": "g2", "name": "add", "response": {"result": 4}}}]}],
        "reply": [{"role": "model", "parts": [{"text": "4.", "thoughtSignature": SIG}]}],
    }


def _chat_vocabulary() -> dict[str, list[Any]]:
    """Chat messages of what clients send: image and audio parts, a name, reasoning content (DeepSeek, Kimi), a
    refusal, cache breakpoints (OpenRouter), results of text parts."""
    return {
        "user": [{"role": "user", "name": "ann", "content": [
            {"type": "text", "text": "Look at this.", **CACHE},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "low"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}]}],
        "calls": [{"role": "assistant", "content": "Searching.", "reasoning_content": "Search first.",
                   "refusal": None, "tool_calls": [
                       {**_chat_call("call_01", "read_file"), "index": 0},
                       _chat_call("call_02", "add")]}],
        "results": [{"role": "tool", "tool_call_id": "call_01", "content": [{"type": "text", "text": "a picture"}]},
                    {"role": "tool", "tool_call_id": "call_02", "content": "4", "name": "add"}],
        "reply": [{"role": "assistant", "content": "4.", "reasoning_content": "Done.", "annotations": []}],
    }


VOCABULARY = {"anthropic": _anthropic_vocabulary, "openai_chat": _chat_vocabulary,
              "openai_responses": _responses_vocabulary, "gemini": _gemini_vocabulary}
LIST_KEYS = {"anthropic": "messages", "openai_chat": "messages", "openai_responses": "input", "gemini": "contents"}
TOP_LEVEL: dict[str, dict[str, Any]] = {
    "anthropic": {"model": "claude-sonnet-4-5", "max_tokens": 4096},
    "openai_chat": {"model": "m"},
    "openai_responses": {"model": "m", "store": False, "include": ["reasoning.encrypted_content"]},
    "gemini": {},
}


def _without_result(turn: list[Any], provider: str, k: int) -> list[Any]:
    """The results turn of a vocabulary with its k-th result left out (an answer lost)."""
    if provider in ("openai_chat", "openai_responses"):
        return [item for j, item in enumerate(turn) if j != k]
    key = "parts" if provider == "gemini" else "content"
    return [{**turn[0], key: [block for j, block in enumerate(turn[0][key]) if j != k]}]


def _reversed_results(turn: list[Any], provider: str) -> list[Any]:
    if provider in ("openai_chat", "openai_responses"):
        return turn[::-1]
    key = "parts" if provider == "gemini" else "content"
    return [{**turn[0], key: turn[0][key][::-1]}]


def vocabulary_bodies(provider: str) -> list[tuple[str, dict[str, Any]]]:
    """Bodies holding the provider's whole vocabulary, valid and broken (a call cut off, an answer lost, results out
    of order, a result whose call is gone, the same call ids in a later turn)."""
    v = VOCABULARY[provider]()
    user, calls, results, reply = v["user"], v["calls"], v["results"], v["reply"]
    later = VOCABULARY[provider]()  # (equal, not the same objects)
    again = user[:1] if provider != "gemini" else [{"role": "user", "parts": [{"text": "Again."}]}]
    shapes: list[tuple[str, list[Any]]] = [
        ("valid", user + calls + results + reply),
        ("call cut off", user + calls),
        ("first answer lost", user + calls + _without_result(results, provider, 0) + reply),
        ("second answer lost", user + calls + _without_result(results, provider, 1) + reply),
        ("results out of order", user + calls + _reversed_results(results, provider) + reply),
        ("call gone, results kept", user + results + reply),
        ("same ids in a later turn", user + calls + results + reply + again + later["calls"] + later["results"]),
        ("cut off after a reply", user + calls + results + reply + again + later["calls"]),
    ]
    top = TOP_LEVEL[provider]
    bodies = [(f"vocabulary: {name}", {**top, LIST_KEYS[provider]: items}) for name, items in shapes]
    if provider == "anthropic":
        thinking = {"type": "enabled", "budget_tokens": 2048}
        bodies += [(f"vocabulary, thinking on: {name}", {**top, "thinking": thinking, "messages": items})
                   for name, items in shapes[:3]]
    if provider == "gemini":
        bodies += [(f"vocabulary, a model named: {name}", {"model": "gemini-3-pro-preview", "contents": items})
                   for name, items in shapes[:3]]
    return bodies


GENERATED_VOCABULARY_BODIES = 60
"""Generated bodies per provider mixing the provider's whole vocabulary."""


def _renamed_ids(value: Any, suffix: str) -> Any:
    """`value` with every call id of the vocabulary (and item id) given `suffix`, so rounds do not share ids."""
    if isinstance(value, list):
        return [_renamed_ids(v, suffix) for v in value]
    if isinstance(value, dict):
        return {k: (v + suffix if k in ("id", "call_id", "tool_use_id") and isinstance(v, str) else
                    _renamed_ids(v, suffix)) for k, v in value.items()}
    return value


def generated_vocabulary_bodies(provider: str) -> list[tuple[str, dict[str, Any]]]:
    """Seeded mixes of the vocabulary's turns: rounds of a user turn, the calls, their results (some lost, some
    out of order, some a round late) and a reply, ids fresh or reused."""
    r = random.Random(f"vocabulary {provider}")
    bodies = []
    for k in range(GENERATED_VOCABULARY_BODIES):
        items: list[Any] = []
        late: list[Any] = []
        for n in range(r.randint(1, 3)):
            v = _renamed_ids(VOCABULARY[provider](), "" if r.random() < 0.3 else f"_{n}")
            results = v["results"]
            roll = r.random()
            if roll < 0.2:
                results = _without_result(results, provider, r.randint(0, 1))
            elif roll < 0.3:
                results = _reversed_results(results, provider)
            elif roll < 0.4:
                late, results = results, []
            elif roll < 0.5:
                results = []
            items += v["user"] + (late if roll >= 0.4 else []) + v["calls"] + results
            if roll >= 0.4:
                late = []
            if r.random() < 0.7:
                items += v["reply"]
        top = dict(TOP_LEVEL[provider])
        if provider == "anthropic" and r.random() < 0.3:
            top["thinking"] = {"type": "enabled", "budget_tokens": 2048}
        if provider == "gemini" and r.random() < 0.3:
            top["model"] = r.choice(["gemini-3-pro-preview", "gemini-2.5-flash"])
        bodies.append((f"vocabulary generated {k}", {**top, LIST_KEYS[provider]: items}))
    return bodies


def _said(text: str) -> dict[str, Any]:
    """A Responses user message of text."""
    return {"role": "user", "content": text}


def _user_turn(*parts: Any) -> dict[str, Any]:
    """A Gemini user content of `parts`."""
    return {"role": "user", "parts": list(parts)}


def _model_turn(*parts: Any) -> dict[str, Any]:
    """A Gemini model content of `parts`."""
    return {"role": "model", "parts": list(parts)}


def _client_call(kind: str, call_id: str, item_id: str = "1") -> dict[str, Any]:
    """A Responses client call of item type `kind` (other than a function), as the SDK's types spell it."""
    payload: dict[str, dict[str, Any]] = {
        "custom_tool_call": {"id": f"ctc_{item_id}", "name": "apply_diff", "input": "*** Begin Patch"},
        "local_shell_call": {"id": f"lsh_{item_id}", "status": "completed",
                             "action": {"type": "exec", "command": ["ls", "-la"], "env": {}}},
        "shell_call": {"status": "completed", "action": {"commands": ["ls"], "timeout_ms": 1000}},
        "apply_patch_call": {"status": "completed",
                             "operation": {"type": "update_file", "path": "a.py", "diff": "@@ -1 +1 @@\n-a\n+b\n"}},
        "computer_call": {"id": f"cu_{item_id}", "status": "completed", "action": {"type": "screenshot"},
                          "pending_safety_checks": []},
        "tool_search_call": {"execution": "client", "status": "completed", "arguments": {"query": "add"}},
    }
    return {"type": kind, "call_id": call_id, **payload[kind]}


def _client_output(kind: str, call_id: str) -> dict[str, Any]:
    """The output of a Responses client call of item type `kind`, in that call's output type."""
    outputs: dict[str, dict[str, Any]] = {
        "custom_tool_call": {"type": "custom_tool_call_output", "call_id": call_id, "output": "patched"},
        "local_shell_call": {"type": "local_shell_call_output", "id": call_id, "output": "a.py\nb.py"},
        "shell_call": {"type": "shell_call_output", "call_id": call_id, "output": [
            {"stdout": "a.py", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
        "apply_patch_call": {"type": "apply_patch_call_output", "call_id": call_id, "status": "completed",
                             "output": "done"},
        "computer_call": {"type": "computer_call_output", "call_id": call_id, "output": {
            "type": "computer_screenshot", "image_url": f"data:image/png;base64,{PNG}"}},
        "tool_search_call": {"type": "tool_search_output", "call_id": call_id, "execution": "client", "tools": [
            {"name": "add", "parameters": {"properties": {}, "type": "object"}, "type": "function"}]},
    }  # (the tools' keys in order: a note holds their JSON text, and the vectors' inputs are written sorted)
    return outputs[kind]


CLIENT_CALLS = ("custom_tool_call", "local_shell_call", "shell_call", "apply_patch_call", "computer_call",
                "tool_search_call")
"""The Responses client calls other than a function (the caller runs them and answers by `call_id`)."""


def _outputs_of_another_type() -> list[tuple[str, dict[str, Any]]]:
    """Responses bodies of outputs of another type than their call's: a client tool search answered by a function's
    output (the API takes it), and mismatches the API refuses (OR2), kept, renamed, or beside a call cut off."""
    user = _said

    def search(call_id: str) -> dict[str, Any]:
        return {"type": "tool_search_call", "call_id": call_id, "execution": "client", "status": "completed",
                "arguments": {"query": "add"}}

    def answer(call_id: str, text: str = "ok") -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": call_id, "output": text}

    def function(call_id: str) -> dict[str, Any]:
        return {"type": "function_call", "call_id": call_id, "name": "s", "arguments": "{}"}

    def custom(call_id: str, text: str) -> dict[str, Any]:
        return {"type": "custom_tool_call_output", "call_id": call_id, "output": text}

    computer = _client_call("computer_call", "c1")
    shapes: dict[str, list[Any]] = {
        "a tool search answered by a function's output": [user("hi"), search("t1"), answer("t1"), user("again")],
        "a tool search answered by a function's output, another call cut off": [
            user("hi"), search("t1"), answer("t1"), user("again"), function("f2")],
        "a tool search answered by a function's output, renamed": [
            user("hi"), search("t1"), answer("t1"), user("again"), search("t1"), answer("t1", '{"tools":[]}')],
        "a tool search answered by a function's output, another search cut off": [
            user("hi"), search("t1"), answer("t1"), user("again"), search("t2")],
        "a computer call answered by a function's output": [user("hi"), computer, answer("c1"), user("again")],
        "a computer call answered by a function's output, another call cut off": [
            user("hi"), computer, answer("c1"), user("again"), function("f2")],
        "a computer call answered by a function's output, renamed": [
            user("hi"), computer, answer("c1"), user("again"), computer, answer("c1")],
        "a function call answered by a custom tool's output, another call cut off": [
            user("hi"), function("f"), custom("f", "x"), user("again"), function("g")],
        "a function call answered by a custom tool's output, renamed": [
            user("hi"), function("f"), custom("f", "x"), user("again"), function("f"), custom("f", "y")],
    }
    return [(f"client output: {name}", {"model": "m", "input": items}) for name, items in shapes.items()]


def client_call_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Responses bodies whose repair answers, notes or renames a client call other than a function: each call type
    cut off, its output orphaned, its id reused (with its item id too: the writer's plain shape), beside function
    calls and reasoning; and orphan outputs of every shape the reader reads (error marks, parts, failed shells)."""
    user = _said
    function = {"type": "function_call", "call_id": "f1", "name": "search", "arguments": "{}"}
    answered = {"type": "function_call_output", "call_id": "f1", "output": "ok"}
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    said = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "On it.", "annotations": []}]}
    bodies = []
    for kind in CLIENT_CALLS:
        call, output = _client_call(kind, "c1"), _client_output(kind, "c1")
        shapes = {
            "cut off": [user("hi"), call],
            "cut off, then words": [user("hi"), call, user("go on")],
            "cut off beside an answered function call": [user("hi"), call, function, answered, user("go on")],
            "output of no call": [user("hi"), _client_output(kind, "zz"), user("go on")],
            "output after words": [user("hi"), call, user("wait"), output, user("go on")],
            "output of an earlier call's id": [user("hi"), call, output, user("more"), output],
            "outputs out of order": [user("hi"), call, function, answered, output],
            "call id again": [user("hi"), call, output, user("again"), _client_call(kind, "c1", "2"), output],
            "call id again, cut off": [user("hi"), call, output, user("again"), _client_call(kind, "c1", "2")],
            "call and item id again": [user("hi"), call, output, user("again"), call, output],
            "call and item id again, cut off": [user("hi"), call, output, user("again"), call],
            "two in a turn, second cut off": [user("hi"), call, _client_call(kind, "c2", "b"), output, user("go")],
            "with reasoning and a message with ids": [user("hi"), reasoning, said, call, function],
        }
        bodies += [(f"client call {kind}: {name}", {"model": "m", "store": False, "input": items})
                   for name, items in shapes.items()]
    orphans = {
        "a custom tool's error": {"type": "custom_tool_call_output", "call_id": "zz", "output": "[error] boom"},
        "a custom tool's bare error mark": {"type": "custom_tool_call_output", "call_id": "zz", "output": "[error]"},
        "a function's error": {"type": "function_call_output", "call_id": "zz", "output": "[error] boom"},
        "a function's parts, error-marked": {"type": "function_call_output", "call_id": "zz", "output": [
            {"type": "input_text", "text": "[error]"}, {"type": "input_text", "text": "boom"}]},
        "a function's image of low detail": {"type": "function_call_output", "call_id": "zz", "output": [
            {"type": "input_text", "text": "shot"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "low"}]},
        "a function's file": {"type": "function_call_output", "call_id": "zz", "output": [
            {"type": "input_file", "filename": "a.txt", "file_data": "data:text/plain;base64,bm90ZXM="}]},
        "a local shell's error": {"type": "local_shell_call_output", "id": "zz", "output": "[error] denied",
                                  "status": "completed"},
        "a failed shell": {"type": "shell_call_output", "call_id": "zz", "output": [
            {"stdout": "part", "stderr": "bad", "outcome": {"type": "exit", "exit_code": 2}},
            {"stdout": "", "stderr": "", "outcome": {"type": "timeout"}}]},
        "a failed patch": {"type": "apply_patch_call_output", "call_id": "zz", "status": "failed",
                           "output": "conflict"},
        "a screenshot by URL": {"type": "computer_call_output", "call_id": "zz", "output": {
            "type": "computer_screenshot", "image_url": "https://example.com/s.png"}},
        "a screenshot by file id": {"type": "computer_call_output", "call_id": "zz", "output": {
            "type": "computer_screenshot", "file_id": "file_1"}},
        "tools found": {"type": "tool_search_output", "call_id": "zz", "execution": "client", "tools": [
            {"description": "a \"q\"\n", "name": "é中", "parameters": {}, "type": "function"}]},
        "no tools found": {"type": "tool_search_output", "call_id": "zz", "execution": "client"},
    }
    bodies += [(f"client output of no call: {name}", {"model": "m", "input": [user("hi"), item, user("go on")]})
               for name, item in orphans.items()]
    bodies += [
        ("item ids: a call with one after a call without", {"model": "m", "input": [
            user("hi"), function, {**function, "call_id": "f2", "id": "fc_2"}, answered, user("go")]}),
        ("item ids: a message with one after calls with ones", {"model": "m", "input": [
            user("hi"), {**function, "id": "fc_1"},
            {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
            user("go")]}),
        ("client call: a tool search naming its tool, cut off", {"model": "m", "input": [
            user("hi"), {"type": "tool_search_call", "call_id": "t1", "name": "find_tools", "execution": "client",
                         "arguments": {"q": 1}}]}),
        *_outputs_of_another_type(),
        ("client call: a local shell's output by call_id, renamed", {"model": "m", "input": [
            user("hi"), _client_call("local_shell_call", "c1"),
            {"type": "local_shell_call_output", "call_id": "c1", "output": "x"}, user("again"),
            _client_call("local_shell_call", "c1", "2"), {"type": "local_shell_call_output", "call_id": "c1",
                                                          "output": "y"}]}),
    ]
    return bodies


def gemini_check_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Gemini bodies of every shape rule the checker judges beyond the turn rules (GE0 data shapes, GE5 names, GE7
    roles, GE9 references, snake_case fields, a kind of part newer than chatmend), each one Python repairs."""
    user, model = _user_turn, _model_turn
    hi = {"text": "hi"}
    call = {"functionCall": {"id": "a", "name": "read_file", "args": {"path": "x"}}}

    def response(**fields: Any) -> dict[str, Any]:
        return {"functionResponse": {"id": "a", "name": "read_file", "response": {"output": "ok"}, **fields}}

    shot = {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "shot.png"}}
    contents: dict[str, list[Any]] = {
        "GE0 inline data not base64": [user(hi, {"inlineData": {"mimeType": "image/png", "data": "not base64!"}})],
        "GE0 inline data of one character too many": [user(hi, {"inlineData": {"mimeType": "image/png",
                                                                               "data": "QUJDR"}})],
        "GE0 a part of two kinds": [user({"text": "hi", "inlineData": {"mimeType": "image/png", "data": PNG}})],
        "GE0 a part of no data": [user(hi, {"thought": True})],
        "GE0 args not an object": [user(hi), model({"functionCall": {"id": "a", "name": "read_file",
                                                                     "args": "path=x"}}), user(response())],
        "GE0 args null": [user(hi), model({"functionCall": {"id": "a", "name": "read_file", "args": None}}),
                          user(response())],
        "GE0 a response not an object": [user(hi), model(call), user(response(response=["ok"]))],
        "GE5 a response without a name": [user(hi), model(call), user(response(name=""))],
        "GE5 a response with no name field": [user(hi), model(call), user({"functionResponse": {
            "id": "a", "response": {"output": "ok"}}})],
        "GE7 a system content": [{"role": "system", "parts": [hi]}, user(hi)],
        "GE7 an unknown role": [user(hi), {"role": "assistant", "parts": [{"text": "x"}]}],
        "GE7 a function role": [user(hi), model(call), {"role": "function", "parts": [response()]}],
        "GE9 a reference to no media": [user(hi), model(call), user(response(response={"output": {"$ref": "a.png"}}))],
        "GE9 a reference to its media": [user(hi), model(call), user(response(
            response={"output": {"$ref": "shot.png"}}, parts=[shot]))],
        "GE9 references nested": [user(hi), model(call), user(response(
            response={"a": [{"$ref": "x"}, {"b": {"$ref": "y"}}]},
            parts=[{"fileData": {"mimeType": "image/png", "fileUri": "gs://b/y", "displayName": "y"}}]))],
        "GE6 a content of no parts": [user(hi), model()],
        "snake_case fields": [user(hi, {"inline_data": {"mime_type": "image/png", "data": PNG}}),
                              model({"function_call": {"id": "a", "name": "read_file", "args": {}},
                                     "thought_signature": "c2ln"}),
                              user({"function_response": {"id": "a", "name": "read_file",
                                                          "response": {"output": "ok"}}})],
        "a kind of part newer than chatmend": [user(hi, {"futureData": {"x": 1}})],
    }
    bodies: list[tuple[str, dict[str, Any]]] = [(f"check: {name}", {"contents": items})
                                                 for name, items in contents.items()]
    bodies += [
        ("check: GE6 no contents", {"contents": []}),
        ("check: a system instruction of a bad part", {"systemInstruction": {"parts": [{"inlineData": {"data": "!"}}]},
                                                       "contents": [user(hi)]}),
        ("check: a snake_case system instruction", {"system_instruction": {"parts": [{"text": "Be brief."}]},
                                                    "contents": [user(hi)]}),
        ("check: GE10 media before Gemini 3", {"model": "gemini-2.5-flash", "contents": [
            user(hi), model(call), user(response(parts=[shot]))]}),
    ]
    return bodies


def gemini_unnamed_call_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Gemini bodies of calls without ids beside parts the plain reader does not read (a thought signature, a
    thought, code), broken in each way repair mends, for Gemini 3 and before."""
    def user(text: str) -> dict[str, Any]:
        return _user_turn({"text": text})

    def call(name: str = "read_file") -> dict[str, Any]:
        return {"functionCall": {"name": name, "args": {"path": "a"}}}

    def answer(name: str = "read_file", media: bool = False) -> dict[str, Any]:
        response: dict[str, Any] = {"name": name, "response": {"output": "ok"}}
        if media:
            response["parts"] = [{"inlineData": {"mimeType": "image/png", "data": PNG}}]
        return {"functionResponse": response}

    code = {"executableCode": {"language": "PYTHON", "code": "print(1)"}}
    firsts: dict[str, list[Any]] = {"signed": [{**call(), "thoughtSignature": SIG}],
                                    "thought": [{"text": "Think first.", "thought": True}, call()],
                                    "code": [code, call()]}
    bodies: list[tuple[str, dict[str, Any]]] = []
    for kind, first in firsts.items():
        def one(first: list[Any] = first) -> dict[str, Any]:
            return _model_turn(*first)

        def two(first: list[Any] = first) -> dict[str, Any]:
            return _model_turn(*first, call("add"))

        answers = _user_turn
        shapes = {
            "cut off": [user("hi"), one()],
            "cut off, then words": [user("hi"), one(), user("go on")],
            "second of two unanswered": [user("hi"), two(), answers(answer()), user("go on")],
            "answers out of order": [user("hi"), two(), answers(answer("add"), answer())],
            "answer after words": [user("hi"), one(), user("wait"), answers(answer())],
            "two model turns in a row": [user("hi"), one(), {"role": "model", "parts": [{"text": "more"}]},
                                         answers(answer())],
            "answer with media, cut off after": [user("hi"), one(), answers(answer(media=True)), user("again"), one()],
            "a response too many": [user("hi"), one(), answers(answer(), answer("add"))],
            "image in the user turn, cut off": [{"role": "user", "parts": [
                {"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": PNG}}]}, one()],
        }
        for name, contents in shapes.items():
            bodies.append((f"call without id, {kind}: {name}", {"contents": contents}))
            bodies.append((f"call without id, {kind}: {name}, Gemini 3",
                           {"model": "gemini-3-pro-preview", "contents": contents}))
    return bodies


def gemini_neutral_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Gemini bodies Python repairs through its neutral route holding what its reader keeps beside the neutral model:
    images after a label, media in a response, a content's own fields and roles, thoughts and signatures on any part,
    raw or non-object arguments, responses of any object, files by URI, fields beside a part or a call, snake_case,
    empty texts, code, a model turn holding a response; and three malformed parts the writer writes anew."""
    user, model = _user_turn, _model_turn
    hi, wait = {"text": "hi"}, {"text": "wait"}

    def call(**more: Any) -> dict[str, Any]:
        return {"functionCall": {"id": "a", "name": "read_file", "args": {"path": "x"}, **more}}

    def response(**more: Any) -> dict[str, Any]:
        return {"functionResponse": {"id": "a", "name": "read_file", "response": {"output": "ok"}, **more}}

    image = {"inlineData": {"mimeType": "image/png", "data": PNG}}

    def late(*first: Any) -> list[Any]:
        return [user(hi), model(*first), user(wait), user(response())]

    contents: dict[str, list[Any]] = {
        "images after a label": [user(hi), model(call()), user(response(), {"text": "Images from tool result a:"},
                                                                          image), user({"text": "go"}), model(call())],
        "a response with media in parts, id reused": [user(hi), model(call()), user(response(parts=[image])),
                                                      user({"text": "again"}), model(call()), user(response())],
        "content fields kept": [{"role": "user", "parts": [hi], "x_note": 1}, model(call()),
                                {"role": "user", "parts": [response()], "x": {"y": 2}}, user({"text": "again"}),
                                model(call())],
        "a function role": [user(hi), model(call()), {"role": "function", "parts": [response()]},
                            user({"text": "more"}), model(call())],
        "a thought with fields and a signed text": late(
            {"text": "hm", "thought": True, "thoughtSignature": SIG, "partMetadata": {"a": 1}},
            {"text": "ok", "thoughtSignature": SIG}, call()),
        "raw args": late(call(args={"_raw": "not json"})),
        "args a list": [user(hi), model({"functionCall": {"id": "a", "name": "f", "args": [1, "x"]}}), user(wait),
                        user({"functionResponse": {"id": "a", "name": "f", "response": {"output": "ok"}}})],
        "a response of another object": [user(hi), model(call()), user(wait),
                                         user(response(response={"result": {"n": 4, "s": "é"}}))],
        "a response error": [user(hi), model(call()), user(wait), user(response(response={"error": "boom"}))],
        "a response of no object": [user(hi), model(call()), user(wait),
                                    user({"functionResponse": {"id": "a", "name": "read_file"}})],
        "a file by URI": [user(hi, {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/x.pdf",
                                                 "displayName": "x"}}), model(call()), user(wait), user(response())],
        "files by URI without their MIME type": [user(hi, {"fileData": {"fileUri": "gs://b/clip.MOV"}}), model(call()),
                                                 user(wait), user(response(), {"fileData": {"fileUri": "gs://b/a.wav"}},
                                                                  {"fileData": {"fileUri": "https://x/files/abc"}})],
        "images by URI without their MIME type in a result's parts": [user(hi), model(call()), user(wait), user(
            response(parts=[{"fileData": {"fileUri": "gs://b/x.png?alt=media"}},
                            {"fileData": {"fileUri": "data:image/webp;base64,UklGR"}}]))],
        "an image by URI in a result's parts": [user(hi), model(call()), user(wait), user(response(parts=[
            {"fileData": {"mimeType": "image/png", "fileUri": "gs://b/x.png"}}]))],
        "a part field beside a call": [user(hi), model({**call(), "x_meta": True}), user(wait),
                                       user({**response(), "y": 1})],
        "call fields beside": [user(hi), model(call(x_field=3)), user(wait), user(response(will_continue=False))],
        "snake_case": [user(hi, {"inline_data": {"mime_type": "image/png", "data": PNG}}),
                       model({"function_call": {"id": "a", "name": "f", "args": {}}, "thought_signature": SIG}),
                       user(wait), user({"function_response": {"id": "a", "name": "f", "response": {"output": "x"}}})],
        "empty texts": [user({"text": ""}, hi), model({"text": ""}, call()), user(wait), user(response())],
        "code parts": late({"executableCode": {"language": "PYTHON", "code": "1"}},
                           {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}}, call()),
        "a system content in between": [user(hi), {"role": "system", "parts": [{"text": "be nice"}]}, model(call()),
                                        user({"text": "w"}), user(response())],
        "contents without a role": [{"parts": [hi]}, model(call()), {"parts": [{"text": "w"}]}, user(response())],
        "a model turn holding a response": late(call(), response()),
        "a turn like a bridge": [user({"text": "(continue)"}), model(call()), user(wait), user(response())],
        "a call's signature not base64": late({**call(), "thoughtSignature": "é"}),
        "media signed in a model turn": late({**image, "thoughtSignature": SIG}, call()),
        "two calls of one id answered in turn order after words": [
            user(hi), model({"text": "hm", "thought": True, "thoughtSignature": SIG},
                            {"functionCall": {"id": "b1", "name": "read_file", "args": {}}, "thoughtSignature": SIG},
                            {"functionCall": {"id": "b1", "name": "add", "args": {}}}),
            user({"text": "go on"}),
            user({"functionResponse": {"id": "b1", "name": "add", "response": {"result": {"n": 1}}}},
                 {"functionResponse": {"id": "b1", "name": "read_file", "response": {"output": {"a": [1, 2]}},
                                       "parts": [image]}})],
    }
    bodies: list[tuple[str, dict[str, Any]]] = []
    for name, items in contents.items():
        bodies.append((f"neutral: {name}", {"contents": items}))
        bodies.append((f"neutral: {name}, Gemini 3", {"model": "gemini-3-pro-preview", "contents": items}))
    bodies += [
        ("check: GE0 inline data missing, MIME type missing", {"contents": [user(hi, {"inlineData": {}})]}),
        ("check: GE0 file data without a URI", {"contents": [user(hi, {"fileData": {"mimeType": "application/pdf"}})]}),
        ("check: GE0 a signature not base64", {"contents": [user(hi),
                                                            model({"text": "x", "thoughtSignature": "é é"})]}),
    ]
    return bodies


GENERATED_MIX_BODIES = 60
"""Generated Responses bodies mixing every client call type, and Gemini bodies mixing every part its reader keeps."""


def generated_client_call_bodies(reasoning: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """Seeded Responses bodies of rounds of calls of every client type (function calls with and without item ids),
    an assistant message before them at times (with `reasoning`, a reasoning item first at times), their outputs
    lost, shuffled, late, orphaned, ids reused."""
    r = random.Random("client calls with reasoning" if reasoning else "client calls")
    bodies = []
    for n in range(GENERATED_MIX_BODIES):
        items: list[Any] = [{"role": "user", "content": "hi"}]
        for t in range(r.randint(1, 4)):
            made: list[tuple[str, str]] = []
            if reasoning and r.random() < 0.3:
                items.append({"type": "reasoning", "id": f"rs_{n}_{t}", "summary": [], "encrypted_content": "gAAA"})
            if r.random() < 0.4:
                items.append(r.choice([{"role": "assistant", "content": "On it."},
                                       {"type": "message", "id": f"msg_{n}_{t}", "role": "assistant",
                                        "content": [{"type": "output_text", "text": "x"}]}]))
            for k in range(r.randint(1, 3)):
                call_id = r.choice(["a", "b", f"c{t}", f"d{t}{k}"])
                kind = r.choice(["function_call", "function_call", *CLIENT_CALLS])
                if kind == "function_call":
                    call = {"type": "function_call", "call_id": call_id, "name": "search", "arguments": "{}"}
                    items.append({**call, "id": f"fc_{call_id}"} if r.random() < 0.2 else call)
                else:
                    items.append(_client_call(kind, call_id, str(t)))
                made.append((kind, call_id))
            outputs = [{"type": "function_call_output", "call_id": call_id,
                        "output": r.choice(["ok", "[error] bad", [{"type": "input_text", "text": "t"}]])}
                       if kind == "function_call" else _client_output(kind, call_id)
                       for kind, call_id in made if r.random() < 0.8]
            if r.random() < 0.2:
                r.shuffle(outputs)
            if r.random() < 0.2:
                items.append({"role": "user", "content": "wait"})
            if r.random() < 0.1:
                outputs.append({"type": "function_call_output", "call_id": "ghost", "output": "late"})
            items += outputs
            if r.random() < 0.3:
                items.append({"role": "user", "content": "more"})
        name = f"client calls with reasoning generated {n}" if reasoning else f"client calls generated {n}"
        bodies.append((name, {"model": "m", "store": r.random() < 0.5, "input": items}))
    return bodies


def resent_turn_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Responses bodies that send a turn's item ids again (OR6), whose repair leaves a list the writer writes whole or
    renames a call of such a turn: a turn whose ids were sent before goes in the plain shape, its reasoning left out."""
    user = _said
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thought"}],
                 "encrypted_content": "gAAA"}
    said = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "phase": "commentary",
            "content": [{"type": "output_text", "text": "On it.", "annotations": []}]}
    call = {"type": "function_call", "id": "fc_1", "call_id": "f1", "name": "search", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "f1", "output": "ok"}
    shell = _client_call("local_shell_call", "s1")
    web = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}}
    cut = {"type": "function_call", "call_id": "g1", "name": "grep", "arguments": "{}"}
    shapes = {
        "reasoning and words": [user("hi"), reasoning, said, user("more"), reasoning, said, user("go"), cut],
        "reasoning and a call": [user("hi"), reasoning, call, output, user("more"), reasoning, call, output, user("go"),
                                 cut],
        "reasoning, words, a hosted search and a call": [user("hi"), reasoning, said, web, call, output, user("more"),
                                                         reasoning, said, web, call, output, cut],
        "a turn ending with reasoning": [user("hi"), said, reasoning, user("more"), said, reasoning, user("go"), cut],
        "reasoning and a local shell call, its output lost": [user("hi"), reasoning, shell, user("more"), reasoning,
                                                              shell, user("go")],
        "reasoning with another summary": [user("hi"), reasoning, said, user("more"), {**reasoning, "summary": []},
                                           said, cut],
        "a turn ending with reasoning, its words again with other reasoning, words sent twice": [
            user("hi"), said, reasoning, user("more"), {**reasoning, "id": "rs_2"}, said, user("go"),
            {**said, "id": "msg_9"}, user("so"), {**said, "id": "msg_9"}, cut],
        "reasoning and words whose message was sent alone": [user("hi"), said, user("more"), reasoning, said, cut],
        "a computer call, then with reasoning": [user("hi"), _client_call("computer_call", "a"), user("more"),
                                                 reasoning, _client_call("computer_call", "a")],
    }
    return [(f"resent turn: {name}", {"model": "m", "input": items}) for name, items in shapes.items()]


def output_part_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Responses bodies whose repair rewrites an output of parts the writer reads otherwise than it wrote them
    (refusals as text, audio as an inline file, an image whose data URL names no media type): in a note, in its call's
    output type (a custom tool's, a computer's, a local shell's, error-marked or not); and client calls whose payload
    the plain shape writes otherwise (a custom tool's input that is not text, a tool search's arguments that are not
    an object)."""
    user = _said
    text = {"type": "input_text", "text": "t"}
    mark = {"type": "input_text", "text": "[error]"}
    refusal = {"type": "refusal", "refusal": "I can't."}
    audio = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    image = {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}
    function = {"type": "function_call", "call_id": "f1", "name": "search", "arguments": "{}"}
    shell, custom, computer = (_client_call(kind, call_id) for kind, call_id in
                               (("local_shell_call", "s1"), ("custom_tool_call", "c1"), ("computer_call", "k1")))

    def output(call_id: str, value: Any, kind: str = "function_call_output") -> dict[str, Any]:
        return {"type": kind, "call_id": call_id, "output": value}

    part_lists = {
        "a refusal": [text, refusal], "a refusal alone": [refusal],
        "a refusal without its text": [text, {"type": "refusal"}],
        "audio": [text, audio],
        "audio without its format": [{"type": "input_audio", "input_audio": {"data": "UklGRg=="}}],
        "an image whose data URL names no media type": [
            text, {"type": "input_image", "image_url": f"data:;base64,{PNG}"}],
        "an image whose data URL has a parameter and no media type": [
            {"type": "input_image", "image_url": f"data:;x=1;base64,{PNG}"}],
        "an image whose data URL is not base64": [{"type": "input_image", "image_url": "data:,hello"}],
        "an error mark, a refusal and audio": [mark, refusal, audio, text],
        "a refusal that is an error mark": [{"type": "refusal", "refusal": "[error]"}, text],
    }
    shapes: dict[str, list[Any]] = {}
    for name, parts in part_lists.items():
        shapes[f"a note of an output of parts: {name}"] = [
            user("hi"), function, output("f1", "ok"), output("zz", parts), user("go on")]
        shapes[f"an output of parts answering a custom tool call: {name}"] = [
            user("hi"), custom, output("c1", parts), user("again"), dict(custom),
            output("c1", "x", "custom_tool_call_output")]
        for call in (computer, shell):
            shapes[f"an output of parts answering a {call['type']}: {name}"] = [
                user("hi"), call, output(call["call_id"], parts), user("again"), function]
    shot = {"type": "computer_screenshot", "image_url": f"data:;base64,{PNG}"}
    shapes["a screenshot whose data URL names no media type, orphaned"] = [
        user("hi"), {"type": "computer_call_output", "call_id": "zz", "output": shot}, user("go on")]
    shapes["a screenshot whose data URL names no media type, answering a function renamed"] = [
        user("hi"), function, output("f1", "ok"), user("again"), dict(function),
        {"type": "computer_call_output", "call_id": "f1", "output": shot}]
    for name, parts in {"with an image": [mark, text, image], "text only": [mark, text], "an image only": [mark, image],
                        "two texts": [mark, text, {"type": "input_text", "text": "u"}]}.items():
        shapes[f"an error-marked output of parts answering a local shell call, {name}"] = [
            user("hi"), shell, output("s1", parts), user("again"), function]
        shapes[f"an error-marked output of parts answering a local shell call renamed, {name}"] = [
            user("hi"), shell, {"type": "local_shell_call_output", "id": "s1", "output": "ok"}, user("again"),
            dict(shell), output("s1", parts)]
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    search = {"type": "tool_search_call", "call_id": "c1", "execution": "client"}
    calls = {
        "a custom tool call whose input is an object": {**custom, "input": {"n": 2, "patch": "x"}},
        "a custom tool call whose input is null": {**custom, "input": None},
        "a custom tool call without its input": {k: v for k, v in custom.items() if k != "input"},
        "a client tool search whose arguments are text": {**search, "status": "completed", "arguments": "add"},
        "a client tool search without arguments": {**search, "extra": [1]},
    }
    for name, call in calls.items():
        shapes[f"{name}, renamed, its item id sent before"] = [
            user("hi"), {**call, "id": "ctc_9"}, output("c1", "x", "custom_tool_call_output"), user("again"),
            {**call, "id": "ctc_9"}]
        shapes[f"{name}, in a turn ending with reasoning"] = [user("hi"), call, reasoning, user("again"), function]
    return [(f"output parts: {name}", {"model": "m", "input": items}) for name, items in shapes.items()]


def chat_spelling_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Chat bodies whose messages are spelled otherwise than the plain shapes Python's stubs take, as agents send
    them (Python's neutral route repairs them): an assistant message with calls and an empty content, or none, or
    text parts; a reply of text parts, empty or without content, with reasoning content; a tool message of text
    parts, with no content or an empty one, with its tool's name; system and developer messages of text parts; a user
    message of an image or an empty text. Six fixed shapes, then 60 seeded bodies of every mix."""
    call = {"id": "a1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    hi = {"role": "user", "content": "hi"}
    fixed = {
        "an assistant message without content": [hi, {"role": "assistant", "tool_calls": [call]}],
        "an assistant message of an empty content": [hi, {"role": "assistant", "content": "", "tool_calls": [call]}],
        "an assistant message of text parts": [
            hi, {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "tool_calls": [call]}],
        "a system message of text parts": [{"role": "system", "content": [{"type": "text", "text": "be"}]}, hi,
                                           {"role": "assistant", "content": None, "tool_calls": [call]}],
        "a user message of an empty content": [{"role": "user", "content": ""},
                                               {"role": "assistant", "content": None, "tool_calls": [call]}],
        "a tool message without content, the call's id reused": [
            hi, {"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": "a1"},
            hi, {"role": "assistant", "content": None, "tool_calls": [call]}],
    }
    bodies = [(f"chat spelling: {name}", {"model": "m", "messages": items}) for name, items in fixed.items()]
    r = random.Random("chat spellings")
    turns = Turns(random.Random("chat spelling turns"))

    def spelled(message: dict[str, Any]) -> dict[str, Any]:
        message = dict(message)
        role, content, roll = message["role"], message.get("content"), r.random()
        if role == "assistant" and message.get("tool_calls"):
            if content is None and roll < 0.3:
                message["content"] = ""
            elif content is None and roll < 0.5:
                del message["content"]
            elif content is not None and roll < 0.3:
                message["content"] = [{"type": "text", "text": content}]
        elif role == "assistant":
            if roll < 0.2 and isinstance(content, str):
                message["content"] = [{"type": "text", "text": content}]
            elif roll < 0.3:
                message["content"] = ""
            elif roll < 0.35:
                message.pop("content", None)
            elif roll < 0.4:
                message["reasoning_content"] = "hm"
        elif role == "tool":
            if roll < 0.15:
                message["content"] = [{"type": "text", "text": content}]
            elif roll < 0.3:
                message["content"] = None if roll < 0.25 else ""
            elif roll < 0.35:
                message["name"] = "search"
        elif role == "system":
            if roll < 0.3:
                message["content"] = [{"type": "text", "text": content}]
            elif roll < 0.4:
                message["role"] = "developer"
        elif roll < 0.1:
            message["content"] = ""
        elif roll < 0.2:
            message["content"] = [{"type": "text", "text": content or "x"},
                                  {"type": "image_url", "image_url": {"url": "https://x/z.png"}}]
        return message

    for n in range(GENERATED_MIX_BODIES):
        body = chat_body(turns.skeleton(), turns.r)
        bodies.append((f"chat spellings generated {n}", {**body, "messages": [spelled(m) for m in body["messages"]]}))
    return bodies


def chat_image_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Chat bodies with images in messages other than the user's, which the API refuses (OC7) and Python's writer moves
    to a user message of their own: a result's after the run of results, a system message's and a reply's right after
    it, an assistant's with calls after their results; in a run repair writes anew, or in a list written whole. Nine
    fixed shapes, then 60 seeded bodies with such images among plain messages."""
    call = {"id": "a1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}
    image = {"type": "image_url", "image_url": {"url": "https://x/shot.png"}}
    detailed = {"type": "image_url", "image_url": {"url": "https://x/low.png", "detail": "low"}}
    hi, go = {"role": "user", "content": "hi"}, {"role": "user", "content": "go on"}
    asks = {"role": "assistant", "content": None, "tool_calls": [call]}
    shot = {"role": "tool", "tool_call_id": "a1", "content": [{"type": "text", "text": "taken"}, image]}
    shapes = {
        "a result's image, the body otherwise valid": [hi, asks, shot, go],
        "a result's image, the call's id reused": [hi, asks, shot, go, asks],
        "a result of an image only, a second call cut off": [
            hi, {**asks, "tool_calls": [call, {**call, "id": "a2"}]}, {**shot, "content": [detailed]}, go],
        "an orphan result's image": [hi, {**shot, "tool_call_id": "zz"}, go],
        "a system message's image": [{"role": "system", "content": [{"type": "text", "text": "be"}, image]}, hi, asks],
        "a developer message of an image": [{"role": "developer", "content": [image]}, hi, asks],
        "an assistant's image beside its calls": [hi, {**asks, "content": [{"type": "text", "text": "ok"}, image]}],
        "a reply of an image": [hi, {"role": "assistant", "content": [image]}, go, asks],
        "a result's image by data URL, the call's id reused": [
            hi, asks, {**shot, "content": [{**image, "image_url": {"url": f"data:image/png;base64,{PNG}"}}]}, go, asks],
    }
    bodies = [(f"chat image: {name}", {"model": "m", "messages": items}) for name, items in shapes.items()]
    r = random.Random("chat images")
    turns = Turns(random.Random("chat image turns"))

    def with_image(message: dict[str, Any]) -> dict[str, Any]:
        role, content, roll = message["role"], message.get("content"), r.random()
        texts = [{"type": "text", "text": content}] if isinstance(content, str) and content else []
        if role == "tool" and roll < 0.25:
            return {**message, "content": [*texts, r.choice([image, detailed])]}
        if role in ("assistant", "system") and roll < 0.15:
            return {**message, "content": [*texts, image]}
        return message

    for n in range(GENERATED_MIX_BODIES):
        body = chat_body(turns.skeleton(), turns.r)
        bodies.append((f"chat images generated {n}", {**body, "messages": [with_image(m) for m in body["messages"]]}))
    return bodies


def chat_part_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Chat bodies with refusal parts, images by a data URL naming no media type and image URLs as bare strings
    (`check`: SHAPE) in messages other than the user's (the reader reads a refusal part as text, and keeps such URLs
    as they are), and legacy `function_call`s answered by
    `role: "function"` messages (the reader gives such a call the id `call_<message>_<call>`, which the function
    messages after it answer; the writer writes a function message for its result). Fixed shapes, then 60 seeded
    bodies of every mix (`generated_chat_part_bodies`)."""
    call = {"id": "a1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    legacy = {"name": "search", "arguments": "{}"}
    refusal = {"type": "refusal", "refusal": "no"}
    untyped = {"type": "image_url", "image_url": {"url": "data:;base64,AAAA"}}
    hi, asks = {"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]}
    answer = {"role": "tool", "tool_call_id": "a1", "content": "x"}
    shapes: dict[str, list[dict[str, Any]]] = {
        "a reply of a refusal part, a call cut off": [hi, {"role": "assistant", "content": [refusal]}, hi, asks],
        "a reply of a blank refusal part": [
            hi, {"role": "assistant", "content": [{**refusal, "refusal": " "}]}, hi, asks],
        "an assistant's refusal part beside its calls, cut off": [
            hi, {**asks, "content": [{"type": "text", "text": "a"}, refusal]}],
        "a result's refusal part, the call's id reused": [
            hi, asks, {**answer, "content": [{"type": "text", "text": "a"}, refusal]}, hi, asks],
        "an orphan result's refusal part": [hi, {**answer, "tool_call_id": "zz", "content": [refusal]}, hi],
        "a result's refusal part and image": [
            hi, asks, {**answer, "content": [refusal, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]},
            hi],
        "a system message's refusal part": [{"role": "system", "content": [refusal]}, hi, asks],
        "a result's image by a data URL naming no media type, the call's id reused": [
            hi, asks, {**answer, "content": [{"type": "text", "text": "t"}, untyped]}, hi, asks],
        "an orphan result's image by a data URL naming no media type": [
            hi, {**answer, "tool_call_id": "zz", "content": [untyped]}, hi],
        "a system message's image by a data URL naming no media type": [{"role": "system", "content": [untyped]}, hi],
        "a legacy call answered": [
            hi, {"role": "assistant", "content": None, "function_call": legacy},
            {"role": "function", "name": "search", "content": "ok"}, hi],
        "a legacy call cut off": [hi, {"role": "assistant", "content": None, "function_call": legacy}, hi],
        "a legacy call cut off, read only": [hi, {"role": "assistant", "content": None, "function_call": legacy}],
        "an orphan function message": [hi, {"role": "function", "name": "search", "content": "ok"}, hi],
        "a legacy call beside calls, answered out of order": [
            hi, {**asks, "function_call": legacy}, {"role": "function", "name": "search", "content": "ok"}, answer, hi],
        "a legacy call beside calls, the call's id reused": [
            hi, {**asks, "function_call": legacy}, answer, {"role": "function", "name": "search", "content": "ok"},
            hi, asks],
        "a legacy call answered twice": [
            hi, {"role": "assistant", "content": None, "function_call": legacy},
            {"role": "function", "name": "search", "content": "1"},
            {"role": "function", "name": "search", "content": "2"}],
        "a reply with no calls and a refusal": [hi, {"role": "assistant", "content": None, "refusal": "no",
                                                     "tool_calls": []}, hi, asks],
        "a user's image URL as a bare string": [
            {"role": "user", "content": [{"type": "image_url", "image_url": "https://x/y.png"}]}, asks],
        "a result's image URL as a bare string, the call's id reused": [
            hi, asks, {**answer, "content": [{"type": "image_url", "image_url": "https://x/y.png"}]}, hi, asks],
    }
    bodies = [(f"chat part: {name}", json.loads(dump({"model": "m", "messages": items})))
              for name, items in shapes.items()]
    return bodies + generated_chat_part_bodies("chat parts", GENERATED_MIX_BODIES)


def generated_chat_part_bodies(seed: str, count: int) -> list[tuple[str, dict[str, Any]]]:
    """`count` seeded Chat bodies mixing refusal parts and fields, images by a data URL naming no media type, and
    legacy calls with their function messages (a call turned legacy, its results function messages) among plain
    messages."""
    r = random.Random(seed)
    turns = Turns(random.Random(f"{seed} turns"))
    untyped = {"type": "image_url", "image_url": {"url": "data:;base64,AAAA"}}
    bare = {"type": "image_url", "image_url": "https://x/bare.png"}  # (Mistral's spelling: `check` says SHAPE)

    def parts(message: dict[str, Any]) -> dict[str, Any]:
        role, content, roll = message["role"], message.get("content"), r.random()
        texts = [{"type": "text", "text": content}] if isinstance(content, str) and content else []
        if role in ("tool", "system", "assistant") and roll < 0.15:
            return {**message, "content": [*texts, {"type": "refusal", "refusal": r.choice(["no", " "])}]}
        if role in ("tool", "system", "assistant") and roll < 0.22:
            return {**message, "content": [*texts, r.choice([untyped, bare])]}
        if role == "assistant" and roll < 0.27:
            return {**message, "refusal": "I can't."}
        if role == "assistant" and not message.get("tool_calls") and roll < 0.32:
            return {**message, "tool_calls": []}
        return message

    bodies = []
    for n in range(count):
        messages: list[dict[str, Any]] = []
        legacy: dict[str, str] = {}
        for message in chat_body(turns.skeleton(), turns.r)["messages"]:
            message, legacy = _turned_legacy(message, legacy, r)
            messages.append(parts(message))
            if message["role"] == "user" and not legacy and r.random() < 0.05:
                messages.append({"role": "function", "name": "shell", "content": "late"})
        bodies.append((f"chat parts generated {n}", json.loads(dump({"model": "m", "messages": messages}))))
    return bodies


def _turned_legacy(message: dict[str, Any], legacy: dict[str, str], r: random.Random, *, rename: bool = False,
                   ) -> tuple[dict[str, Any], dict[str, str]]:
    """A message of a seeded Chat body with a reply's last call turned legacy (a `function_call`, 40% of replies with
    calls) and that call's results turned function messages (with `rename`, 40% of them named otherwise), and the id
    of the call last turned legacy to its name (`legacy`: the previous message's), for the messages after it."""
    if message["role"] == "assistant":
        calls = message.get("tool_calls")
        if not calls or r.random() >= 0.4:
            return message, {}
        *others, last = calls
        message = {**message, "function_call": dict(last["function"])}
        if others or r.random() < 0.5:
            message["tool_calls"] = others
        else:
            del message["tool_calls"]
        return message, {last["id"]: last["function"]["name"]}
    if message["role"] == "tool" and message["tool_call_id"] in legacy:
        name = legacy[message["tool_call_id"]] if not rename or r.random() < 0.6 else "renamed_tool"
        message = {"role": "function", "name": name, "content": message["content"]}
    return message, legacy


def chat_media_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Chat bodies with audio, files and parts of types the reader does not name in messages other than the user's,
    `role: "function"` messages holding images or files, and function messages named otherwise than their legacy call.
    The reader reads an `input_audio` or `file` part as a file, which the writer moves as it moves images (a part of
    either type it does not map, and one of any other type, is kept where it stands); it names a function message it
    writes anew after the call it answers. Where a result written anew answers a call of a message kept as it is that
    holds what the writer moves (or whose results kept after it do), only the new items are written, the kept ones
    holding their parts as the input does (`a legacy call cut off after a kept result's audio`: its synthetic result
    is written, the audio not sent twice); a result written anew whose file moves keeps its parts of other types.
    Fixed shapes, then 60 seeded bodies of every mix (`generated_chat_media_bodies`)."""
    call = {"id": "a1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
    legacy = {"name": "search", "arguments": "{}"}
    text = {"type": "text", "text": "t"}
    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    pdf = {"type": "file", "file": {"file_data": "data:application/pdf;base64,AAAA", "filename": "a.pdf"}}
    uploaded = {"type": "file", "file": {"file_id": "file-1"}}
    unmapped = {"type": "file", "file": {}}  # (read as a part of a type the reader does not name: kept as it is)
    other = {"type": "x_other", "x": 1}
    image = {"type": "image_url", "image_url": {"url": "https://x/y.png"}}
    hi = {"role": "user", "content": "hi"}
    asks = {"role": "assistant", "content": None, "tool_calls": [call]}
    later = {**asks, "tool_calls": [{**call, "id": "b1"}]}
    answer = {"role": "tool", "tool_call_id": "a1", "content": "x"}
    legacy_asks = {"role": "assistant", "content": None, "function_call": legacy}
    both = {**asks, "function_call": legacy}
    two = {**asks, "tool_calls": [call, {**call, "id": "a2"}]}
    function = {"role": "function", "name": "search", "content": "ok"}
    shapes: dict[str, list[dict[str, Any]]] = {
        "a result's audio, the body otherwise valid": [hi, asks, {**answer, "content": [text, audio]}, hi],
        "a result's file, the call's id reused": [hi, asks, {**answer, "content": [text, pdf]}, hi, asks],
        "a result of an uploaded file, the call's id reused": [hi, asks, {**answer, "content": [uploaded]}, hi, asks],
        "a result's part of another type, the call's id reused": [
            hi, asks, {**answer, "content": [text, other]}, hi, asks],
        "a result of a file part the reader does not map, a second call cut off": [
            hi, two, {**answer, "content": [unmapped]}, hi],
        "an orphan result's audio": [hi, {**answer, "tool_call_id": "zz", "content": [audio]}, hi],
        "an orphan result's part of another type": [hi, {**answer, "tool_call_id": "zz", "content": [text, other]}, hi],
        "a system message's audio": [{"role": "system", "content": [text, audio]}, hi, asks],
        "a system message's part of another type": [{"role": "system", "content": [text, other]}, hi, asks],
        "a developer message of a file": [{"role": "developer", "content": [pdf]}, hi, asks],
        "an assistant's file beside its calls, cut off": [hi, {**asks, "content": [text, pdf]}],
        "an assistant's audio beside its calls, cut off": [hi, {**asks, "content": [audio]}],
        "an assistant's part of another type beside its calls, cut off": [hi, {**asks, "content": [text, other]}],
        "an assistant's audio beside its calls, answered, a later call cut off": [
            hi, {**asks, "content": [text, audio]}, answer, hi, later],
        "an assistant's audio beside its calls, answered, the call's id reused": [
            hi, {**asks, "content": [text, audio]}, answer, hi, asks],
        "an assistant's file beside two calls, one answered, an orphan after": [
            hi, {**two, "content": [text, pdf]}, answer, {**answer, "tool_call_id": "zz", "content": "late"}, hi],
        "a kept result's file before a call cut off": [hi, two, {**answer, "content": [text, pdf]}, hi],
        "a reply of a part of another type, a later call cut off": [
            hi, {"role": "assistant", "content": [other]}, hi, asks],
        "a reply of audio, a later call cut off": [hi, {"role": "assistant", "content": [audio]}, hi, asks],
        "a reply of a file and an image, a later call cut off": [
            hi, {"role": "assistant", "content": [pdf, image]}, hi, asks],
        "a result's file beside a part of another type, the call renamed and a later call cut off": [
            hi, asks, {**answer, "content": [text, other, pdf]}, hi, asks,
            {**answer, "content": [text, other, pdf]}, hi, later],
        "a function message's image, a later call cut off": [
            hi, legacy_asks, {**function, "content": [text, image]}, hi, later],
        "a function message's file, a call beside its legacy call cut off": [
            hi, both, {**function, "content": [text, pdf]}, hi],
        "a legacy call cut off after a kept result's audio": [hi, both, {**answer, "content": [text, audio]}, hi],
        "a function message of an image, the calls renamed": [
            hi, both, answer, {**function, "content": [image]}, hi, both, answer, {**function, "content": [image]}, hi,
            later],
        "an orphan function message's image": [hi, {**function, "content": [text, image]}, hi],
        "a function message named otherwise than its call, answered": [
            hi, legacy_asks, {**function, "name": "other"}, hi],
        "a function message named otherwise than its call, a call beside it cut off": [
            hi, both, {**function, "name": "other"}, hi],
        "a function message named otherwise than its call, the calls renamed": [
            hi, both, answer, {**function, "name": "other"}, hi, both, answer, {**function, "name": "other"}, hi,
            later],
        "a function message named otherwise than its call, answered twice": [
            hi, legacy_asks, {**function, "name": "other"}, {**function, "name": "third"}, hi, later],
    }
    bodies = [(f"chat media: {name}", json.loads(dump({"model": "m", "messages": items})))
              for name, items in shapes.items()]
    return bodies + generated_chat_media_bodies("chat media", GENERATED_MIX_BODIES)


def generated_chat_media_bodies(seed: str, count: int) -> list[tuple[str, dict[str, Any]]]:
    """`count` seeded Chat bodies mixing audio, files (inline, uploaded, bare base64, unmapped), parts of other types
    and images in messages other than the user's, and legacy calls with their function messages (a call turned legacy,
    its results function messages, some named otherwise) among plain messages. A result holds one kind of part beside
    its text (a part of another type beside images or files: `chat media: a result's file beside a part of another
    type, ...`)."""
    r = random.Random(seed)
    turns = Turns(random.Random(f"{seed} turns"))
    moved = [
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "mp3"}},
        {"type": "file", "file": {"file_data": "data:application/pdf;base64,AAAA", "filename": "a.pdf"}},
        {"type": "file", "file": {"file_id": "file-1"}},
        {"type": "file", "file": {"file_data": "AAAA", "filename": "notes.txt"}},
        {"type": "image_url", "image_url": {"url": "https://x/shot.png"}},
    ]
    kept = [{"type": "file", "file": {}}, {"type": "x_other", "x": 1}, {"type": "input_audio", "input_audio": "AAAA"}]

    def parts(message: dict[str, Any]) -> dict[str, Any]:
        role, content, roll = message["role"], message.get("content"), r.random()
        texts = [{"type": "text", "text": content}] if isinstance(content, str) and content else []
        if role in ("tool", "function", "system", "assistant") and roll < 0.2:
            return {**message, "content": [*texts, r.choice(moved)]}
        if role in ("tool", "function", "system", "assistant") and roll < 0.3:
            return {**message, "content": [*texts, r.choice(kept)]}
        return message

    bodies = []
    for n in range(count):
        messages: list[dict[str, Any]] = []
        legacy: dict[str, str] = {}
        for message in chat_body(turns.skeleton(), turns.r)["messages"]:
            message, legacy = _turned_legacy(message, legacy, r, rename=True)
            messages.append(parts(message))
        bodies.append((f"chat media generated {n}", json.loads(dump({"model": "m", "messages": messages}))))
    return bodies


def anthropic_result_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Anthropic bodies whose tool results are of shapes Python's stubs do not take (its neutral route repairs them): an
    empty content, none, an empty list, images only, text and an image. Five fixed shapes, then 60 seeded bodies
    with such results among plain ones."""
    image = {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
    use = {"type": "tool_use", "id": "a1", "name": "search", "input": {}}
    contents: dict[str, Any] = {"an empty content": "", "no content": None, "an empty list": [],
                                "an image only": [image], "text and an image": [{"type": "text", "text": "a"}, image]}
    spellings = [content for content in contents.values() if content is not None]
    bodies = []
    for name, content in contents.items():
        result = {"type": "tool_result", "tool_use_id": "a1"}
        if content is not None:
            result["content"] = content
        messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [use]},
                    {"role": "user", "content": [result]}, {"role": "assistant", "content": [use]}]
        bodies.append((f"anthropic result: {name}, the call's id reused",
                       {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": messages}))
    flagged = {"type": "tool_result", "tool_use_id": "a1", "content": "x", "is_error": "true"}
    for name, messages in {
        "an error flag that is not a boolean, the call's id reused": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": [use]},
            {"role": "user", "content": [flagged]}, {"role": "assistant", "content": [use]}],
        "an error flag that is not a boolean, orphaned": [
            {"role": "user", "content": "hi"}, {"role": "user", "content": [flagged]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}],
    }.items():
        bodies.append((f"anthropic result: {name}",
                       {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": messages}))
    r = random.Random("anthropic results")
    turns = Turns(random.Random("anthropic result turns"))

    def spelled(message: dict[str, Any]) -> dict[str, Any]:
        if message["role"] != "user" or not isinstance(message["content"], list):
            return message
        blocks = []
        for block in message["content"]:
            roll = r.random()
            if block.get("type") == "tool_result" and roll < 0.4:
                block = {k: v for k, v in block.items() if k != "content"}
                if roll >= 0.1:
                    block["content"] = spellings[int(roll * 10) % len(spellings)]
            blocks.append(block)
        return {**message, "content": blocks}

    for n in range(GENERATED_MIX_BODIES):
        body = anthropic_body(turns.skeleton(), turns.r)
        messages = [spelled(m) for m in body["messages"]]
        bodies.append((f"anthropic results generated {n}", {**body, "messages": messages}))
    return bodies


def responses_spelling_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Responses bodies of shapes Python's stubs do not take (its neutral route repairs them): a function's output of
    null, none or an object, arguments of an object or none, a user message of an empty text or no parts. Eight fixed
    shapes, then 60 seeded bodies with such items among plain ones."""
    call = {"type": "function_call", "call_id": "f1", "name": "search", "arguments": "{}"}

    def output(**more: Any) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": "f1", **more}

    shapes = {
        "an output of an object": [_said("hi"), call, output(output={"x": 1}), _said("again"), dict(call)],
        "an output of null": [_said("hi"), call, output(output=None), _said("again"), dict(call)],
        "an output without output": [_said("hi"), call, output(), _said("again"), dict(call)],
        "arguments of an object, cut off": [_said("hi"), {**call, "arguments": {"q": 1}}, _said("again")],
        "arguments of an object, renamed": [_said("hi"), call, output(output="ok"), _said("again"),
                                            {**call, "arguments": {"q": 1}}],
        "no arguments, renamed": [_said("hi"), call, output(output="ok"), _said("again"),
                                  {k: v for k, v in call.items() if k != "arguments"}],
        "a user message of an empty text": [{"role": "user", "content": ""}, call],
        "a user message of no parts": [{"role": "user", "content": []}, call],
    }
    bodies = [(f"responses spelling: {name}", {"model": "m", "input": items}) for name, items in shapes.items()]
    r = random.Random("responses spellings")
    turns = Turns(random.Random("responses spelling turns"))

    def spelled(item: dict[str, Any]) -> dict[str, Any]:
        item, roll = dict(item), r.random()
        if item.get("type") == "function_call_output" and roll < 0.25:
            item.pop("output")
            if roll >= 0.1:
                item["output"] = None if roll < 0.2 else {"x": 1}
        elif item.get("type") == "function_call" and roll < 0.2:
            item.pop("arguments")
            if roll >= 0.1:
                item["arguments"] = {"a": 1} if roll < 0.15 else None
        elif item.get("role") == "user" and "type" not in item and roll < 0.15:
            item["content"] = "" if roll < 0.1 else []
        return item

    for n in range(GENERATED_MIX_BODIES):
        body = responses_body(turns.skeleton(), turns.r)
        bodies.append((f"responses spellings generated {n}", {**body, "input": [spelled(m) for m in body["input"]]}))
    return bodies


def lone_surrogate_bodies(provider: str) -> list[tuple[str, dict[str, Any]]]:
    """Bodies holding lone surrogates (a high half without its low one, a low half alone: a cut emoji), which repair
    replaces by U+FFFD: in a user's words, in a tool result, in a key, in a top-level field; in a valid body and in one
    that repair changes too."""
    cut, low = "\ud83d", "\ude00"
    bodies: dict[str, dict[str, Any]]
    if provider == "anthropic":
        use = {"type": "tool_use", "id": "a1", "name": "search", "input": {"q": f"x{cut}"}}
        bodies = {
            "in the words, the body valid": {"messages": [{"role": "user", "content": f"hi {cut}"}]},
            "in a result, a call cut off": {"system": f"Be brief{low}.", "messages": [
                {"role": "user", "content": "hi"}, {"role": "assistant", "content": [use]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a1", "content": f"ok{cut}"}]},
                {"role": "assistant", "content": [{**use, "id": "a2"}]}]},
        }
        bodies = {name: {"model": "claude-sonnet-4-5", "max_tokens": 1024, **body} for name, body in bodies.items()}
    elif provider == "openai_chat":
        call = {"id": "a1", "type": "function", "function": {"name": "search", "arguments": f"{{\"q\": \"{cut}\"}}"}}
        bodies = {
            "in the words, the body valid": {"model": "m", "messages": [{"role": "user", "content": f"hi {cut}"}]},
            "in a key of other characters, the body valid": {"model": "m", "messages": [
                {"role": "user", "content": "hi", f"ключ\t\x07'{low}\u200b😀": f"{cut}"}]},
            "in a result and a key, a call cut off": {"model": "m", "messages": [
                {"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "a1", "content": f"{low}ok", f"x{cut}": 1},
                {"role": "assistant", "content": None, "tool_calls": [{**call, "id": "a2"}]}]},
        }
    elif provider == "openai_responses":
        call = {"type": "function_call", "call_id": "f1", "name": "search", "arguments": "{}"}
        bodies = {
            "in the words, the body valid": {"model": "m", "input": [_said(f"hi {cut}")]},
            "in an output and the instructions, a call cut off": {"model": "m", "instructions": f"Be{cut}", "input": [
                _said("hi"), call, {"type": "function_call_output", "call_id": "f1", "output": f"ok{cut}"},
                _said("again"), {**call, "call_id": "f2"}]},
        }
    else:
        call = {"functionCall": {"id": "a", "name": "read_file", "args": {"path": f"x{low}"}}}
        bodies = {
            "in the words, the body valid": {"contents": [_user_turn({"text": f"hi {cut}"})]},
            "in a response, a call cut off": {"contents": [
                _user_turn({"text": "hi"}), _model_turn(call),
                _user_turn({"functionResponse": {"id": "a", "name": "read_file", "response": {"output": f"ok{cut}"}}}),
                _model_turn({"functionCall": {"id": "b", "name": "read_file", "args": {}}})]},
        }
    # (as the vectors store them, keys sorted: where a parser stops, and the order of the problems, follow the text)
    return [(f"lone surrogate: {name}", json.loads(_surrogates_escaped(dump(body)))) for name, body in bodies.items()]


def _surrogates_escaped(text: str) -> str:
    """JSON text with each lone surrogate written as its escape (a Python string holds no other surrogate code point,
    and UTF-8 encodes none)."""
    return re.sub("[\ud800-\udfff]", lambda half: f"\\u{ord(half.group()):04x}", text)


def anthropic_blank_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Anthropic bodies holding blank text, which the API refuses and Python's writer leaves out of what it writes
    (AN9): a user turn of blank text, a blank text block beside results, before calls or beside words, a result of
    whitespace; and consecutive user turns, which the writer joins only when both are of blocks. Six fixed shapes,
    then 60 seeded bodies with blank text among plain turns."""
    use = {"type": "tool_use", "id": "t1", "name": "search", "input": {}}
    blank = {"type": "text", "text": " "}

    def result(content: Any) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": "t1", "content": content}

    said, go = {"role": "user", "content": "hi"}, {"role": "user", "content": "go on"}
    shapes = {
        "a user turn of blank text": [said, {"role": "user", "content": " "}, {"role": "assistant", "content": [use]}],
        "blank text beside a result": [said, {"role": "assistant", "content": [use]},
                                       {"role": "user", "content": [result("ok"), {"type": "text", "text": ""}]}, go,
                                       {"role": "assistant", "content": [use]}],
        "blank text before calls": [said, {"role": "assistant", "content": [blank, use]}, go],
        "blank text beside words": [said, {"role": "assistant", "content": [{"type": "text", "text": "ok"}, blank]},
                                    go, {"role": "assistant", "content": [use]}],
        "a result of whitespace, the call's id reused": [said, {"role": "assistant", "content": [use]},
                                                         {"role": "user", "content": [result(" ")]}, go,
                                                         {"role": "assistant", "content": [use]}],
        "a result of null, the call's id reused": [said, {"role": "assistant", "content": [use]},
                                                   {"role": "user", "content": [result(None)]}, go,
                                                   {"role": "assistant", "content": [use]}],
        "a result of null, orphaned": [said, {"role": "user", "content": [result(None)]}, go],
        "consecutive user turns and blank text": [
            {"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "text", "text": "b"}]},
            {"role": "assistant", "content": [blank, use]},
            {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
            {"role": "user", "content": "c"}, {"role": "user", "content": " "},
            {"role": "assistant", "content": [{**use, "id": "t2"}]}],
    }
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    contents = {
        "a blank text block": [{"type": "text", "text": " "}],
        "an empty text and an image": [{"type": "text", "text": ""}, image],
        "a document": [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}}],
        "a text with citations": [{"type": "text", "text": "a", "citations": []}],
        "a blank text, then text": [{"type": "text", "text": " "}, {"type": "text", "text": "t"}],
    }
    other = {"role": "assistant", "content": [use, {**use, "id": "t2"}]}
    for name, content in contents.items():
        shapes[f"a result of {name}, renamed"] = [
            said, {"role": "assistant", "content": [use]}, {"role": "user", "content": [result(content)]}, go,
            {"role": "assistant", "content": [use]}, {"role": "user", "content": [result(content)]}]
        shapes[f"a result of {name}, moved"] = [
            said, other,
            {"role": "user", "content": [{**result("ok"), "tool_use_id": "t2"}, {"type": "text", "text": "hm"}]},
            {"role": "user", "content": [result(content)]}]
    bodies = [(f"anthropic blank: {name}", {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": messages})
              for name, messages in shapes.items()]
    r = random.Random("anthropic blanks")
    turns = Turns(random.Random("anthropic blank turns"))

    def spelled(message: dict[str, Any]) -> dict[str, Any]:
        content, roll = message["content"], r.random()
        if isinstance(content, str):
            return {**message, "content": " "} if roll < 0.1 else message
        if message["role"] == "assistant":
            return {**message, "content": [blank, *content]} if roll < 0.2 else message
        blocks: list[Any] = []
        for block in content:
            if block.get("type") == "tool_result" and r.random() < 0.1:
                block = {**block, "content": " "}
            blocks.append(block)
            if r.random() < 0.1:
                blocks.append({"type": "text", "text": ""})
        return {**message, "content": blocks}

    for n in range(GENERATED_MIX_BODIES):
        body = anthropic_body(turns.skeleton(), turns.r)
        bodies.append((f"anthropic blanks generated {n}", {**body, "messages": [spelled(m) for m in body["messages"]]}))
    return bodies


NUMBERS = {"small": 1e-05, "smaller": 2.5e-07, "tiny": -1.2345e-10, "edge": 0.0001, "under the edge": 9.9e-05,
           "plain": 123.456, "huge": 1.5e+22, "very huge": 1e+300, "whole": 7}
"""Numbers Python's `json.dumps` writes otherwise than JavaScript's `String` (a fraction under 1e-4: `1e-05`), and
beside them some both write alike. (No integral float under 1e21: `JSON.parse` reads `1e16` as `10000000000000000`,
which a JavaScript reader cannot tell from Python's int.)"""


def python_number_bodies(provider: str) -> list[tuple[str, dict[str, Any]]]:
    """Bodies whose repair writes numbers into a text (a Gemini response object or arguments that are not an object as
    a result's or a call's text, a Responses tool search's tools in a note, a custom tool's input in the plain shape),
    and whose `check` quotes them (GE0)."""
    if provider == "gemini":
        user, model = _user_turn, _model_turn
        hi, wait = {"text": "hi"}, {"text": "wait"}
        call = {"functionCall": {"id": "a", "name": "read_file", "args": {"path": "x"}}}

        def response(call_id: str, value: Any) -> dict[str, Any]:
            return {"functionResponse": {"id": call_id, "name": "read_file", "response": value}}

        contents = {
            "an orphan response of numbers": [user(hi), model(call), user(response("a", {"output": "ok"})),
                                              user({"text": "more"}), user(response("zz", dict(NUMBERS)))],
            "a late response of numbers": [user(hi), model(call), user(wait),
                                           user(response("a", {"values": list(NUMBERS.values())}))],
            "a call whose arguments are a list of numbers, answered late": [
                user(hi), model({"functionCall": {"id": "a", "name": "f", "args": [1e-05, 3.5e-09]}}), user(wait),
                user(response("a", {"output": "ok"}))],
            "a call whose arguments are a number, cut off": [
                user(hi), model({"functionCall": {"id": "a", "name": "f", "args": 4.2e-06}}), user({"text": "go"})],
        }
        bodies: list[tuple[str, dict[str, Any]]] = [
            (f"python numbers: {name}", {"contents": items}) for name, items in contents.items()]
    else:
        bodies = [(f"python numbers: {name}", {"model": "m", "input": items})
                  for name, items in _number_inputs().items()]
    # (keys sorted as the vectors store them: the text written keeps the order of the object read)
    return [(name, json.loads(dump(body))) for name, body in bodies]


def _number_inputs() -> dict[str, list[Any]]:
    """Responses inputs whose repair writes numbers into a text."""
    tools = [{"name": "add", "parameters": {"type": "object", "properties": {
        "x": {"type": "number", "minimum": 1e-05, "maximum": 1.5e+22, "multipleOf": 2.5e-07}}}}]
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
    return {
        "an orphan tool search output of numbers": [
            _said("hi"), {"type": "tool_search_output", "call_id": "zz", "execution": "client", "tools": tools},
            _said("go on")],
        "a custom tool call whose input is an object of numbers, in a turn ending with reasoning": [
            _said("hi"), {**_client_call("custom_tool_call", "c1"), "input": {"n": 3, "scale": 1e-05}}, reasoning,
            _said("again")],
    }


def generated_resent_turn_bodies() -> list[tuple[str, dict[str, Any]]]:
    """The seeded client call mixes (half with reasoning), each with a stretch of its items sent again later."""
    r = random.Random("resent turns")
    bodies = []
    for reasoning in (False, True):
        for name, body in generated_client_call_bodies(reasoning)[:GENERATED_MIX_BODIES // 2]:
            items = body["input"]
            replies = [k for k, item in enumerate(items) if "role" not in item or item.get("type") == "message"]
            start = r.choice(replies)
            end = min(len(items), start + r.randint(1, 4))
            at = r.randint(end, len(items))
            items = [*items[:at], *json.loads(json.dumps(items[start:end])), *items[at:]]
            bodies.append((name.replace("generated", "resent"), {**body, "input": items}))
    return bodies


def generated_gemini_part_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Seeded Gemini bodies mixing thoughts, signatures, code, media, calls with and without ids, responses of any
    object (some with media), images after a label and content fields, their responses lost, shuffled, late, orphaned,
    ids reused."""
    r = random.Random("gemini parts")
    image = {"inlineData": {"mimeType": "image/png", "data": PNG}}

    def user() -> dict[str, Any]:
        parts: list[Any] = [{"text": r.choice(["hi", "look", "", "go on", "Images from tool result a1:"])}]
        if r.random() < 0.3:
            parts.append({"inlineData": {"mimeType": r.choice(["image/png", "application/pdf"]), "data": PNG}})
        if r.random() < 0.15:
            parts.append({"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/x.pdf"}})
        if r.random() < 0.1:
            parts[0]["x_extra"] = 1
        return {"role": "user", "parts": parts}

    bodies = []
    for n in range(GENERATED_MIX_BODIES):
        with_ids = r.random() < 0.6
        contents: list[Any] = [user()]
        for t in range(r.randint(1, 4)):
            parts: list[Any] = []
            if r.random() < 0.4:
                parts.append({"text": "thinking", "thought": True, **({"thoughtSignature": SIG} if r.random() < 0.5
                                                                      else {})})
            if r.random() < 0.5:
                parts.append({"text": r.choice(["Let me look.", ""]), **({"thoughtSignature": SIG}
                                                                        if r.random() < 0.2 else {})})
            if r.random() < 0.15:
                parts.append({"executableCode": {"language": "PYTHON", "code": "1"}})
            made = []
            for k in range(r.randint(1, 2)):
                call_id, name = r.choice(["a1", "a2", "b1", f"c{t}"]), r.choice(["read_file", "add"])
                call = {"name": name, "args": r.choice([{"p": "x"}, {}, {"_raw": "x"}])}
                part: dict[str, Any] = {"functionCall": {"id": call_id, **call} if with_ids else call}
                if k == 0 and r.random() < 0.5:
                    part["thoughtSignature"] = SIG
                parts.append(part)
                made.append((call_id, name))
            contents.append({"role": "model", "parts": parts})
            answers = []
            for call_id, name in made:
                if r.random() < 0.15:
                    continue
                response = {"name": name, "response": r.choice([{"output": "ok"}, {"error": "bad"},
                                                                 {"result": {"n": 1}}, {"output": {"a": [1, 2]}}])}
                if with_ids:
                    response = {"id": call_id, **response}
                if r.random() < 0.15:
                    response["parts"] = [image]
                answers.append({"functionResponse": response})
            if r.random() < 0.2:
                r.shuffle(answers)
            if r.random() < 0.1:
                ghost: dict[str, Any] = {"name": "x", "response": {"output": "late"}}
                answers.append({"functionResponse": {"id": "ghost", **ghost} if with_ids else ghost})
            if r.random() < 0.2:
                contents.append(user())
            if answers:
                content: dict[str, Any] = {"role": "user", "parts": answers}
                if r.random() < 0.1:
                    content["x_content"] = True
                if r.random() < 0.1:
                    content.pop("role")
                contents.append(content)
            if r.random() < 0.3:
                contents.append(user())
            if r.random() < 0.2:
                contents.append({"role": "model", "parts": [{"text": "Done."}]})
        body: dict[str, Any] = {"contents": contents}
        if r.random() < 0.3:
            body["model"] = r.choice(["gemini-3-pro-preview", "gemini-2.5-flash"])
        bodies.append((f"gemini parts generated {n}", body))
    return bodies


def body_case(provider: str, name: str, body: dict[str, Any], read_only: list[str] | None = None) -> dict[str, Any]:
    adapter = get(provider)
    is_read_only = set(read_only).__contains__ if read_only is not None else None
    repaired = adapter.repair_body(body, is_read_only=is_read_only)
    report = repaired.report
    items = body[adapter.list_key]
    # (a body left as it is was planned on stubs when the adapter stubs it; else the neutral route read it)
    stubbed = bool(items) and adapter._takes_stubs(body) and adapter._stubs(items) is not None
    case: dict[str, Any] = {"name": name, "provider": provider, "input": body}
    if read_only is not None:
        case["options"] = {"read_only": read_only}
    case["expected"] = {
        "body": repaired.body,
        "changed": repaired.changed,
        "rewritten": list(repaired.rewritten),
        "report": {"interrupted": list(report.interrupted), "moved": report.moved, "notes": report.notes,
                   "renamed": report.renamed, "dropped": report.dropped},
        "route": "stubs" if getattr(repaired, "from_spans", False) or (not repaired.changed and stubbed) else "neutral",
        "check": [{"code": p.code, "path": p.path, "message": p.message} for p in adapter.check(body)],
        "check_repaired": [p.code for p in adapter.check(repaired.body)],
        "mended": list(repaired.mended),
    }
    return case


def body_cases(provider: str) -> list[dict[str, Any]]:
    r = random.Random(f"bodies {provider}")
    write = WRITERS[provider]
    turns = Turns(r)
    fixed: list[tuple[str, list[tuple[str, Any]]]] = [
        ("valid", [("user", "hi"), ("assistant", ("", [("a1", "search", {"q": "x"})])),
                   ("results", [("a1", "search", "3 hits", False)]), ("assistant", ("Done.", []))]),
        ("call cut off", [("user", "hi"), ("assistant", ("working", [("a1", "write_file", {}),
                                                                      ("b2", "read_file", {})]))]),
        ("one of two answered", [("user", "hi"), ("assistant", ("", [("a1", "search", {}), ("b2", "shell", {})])),
                                 ("results", [("b2", "shell", "ok", True)]), ("user", "go on")]),
        ("results out of order", [("user", "hi"), ("assistant", ("", [("a1", "search", {}), ("b2", "shell", {})])),
                                  ("results", [("b2", "shell", "2", False), ("a1", "search", "1", False)])]),
        ("orphan result", [("user", "hi"), ("assistant", ("", [("a1", "search", {})])),
                           ("results", [("a1", "search", "1", False), ("zz", "shell", "late", True)])]),
        ("repeated ids across turns", [("user", "hi"), ("assistant", ("", [("a", "search", {})])),
                                       ("results", [("a", "search", "1", False)]),
                                       ("assistant", ("", [("a", "search", {})])),
                                       ("results", [("a", "search", "2", False)])]),
        ("repeated id in one reply", [("user", "hi"), ("assistant", ("", [("a", "search", {}), ("a", "shell", {})])),
                                      ("results", [("a", "search", "1", False), ("a", "shell", "2", False)])]),
    ]
    cases = [body_case(provider, name, write(skeleton, r)) for name, skeleton in fixed]
    cases += [body_case(provider, name, body) for name, body in RULE_BODIES.get(provider, {}).items()]
    cases += [body_case(provider, name, body) for name, body in vocabulary_bodies(provider)]
    cases += [body_case(provider, name, body) for name, body in generated_vocabulary_bodies(provider)]
    cases.append(body_case(provider, "call cut off, read only", write(fixed[1][1], r), read_only=["read_file"]))
    cases += [body_case(provider, f"generated {k}", write(turns.skeleton(), r)) for k in range(GENERATED_BODIES)]
    awkward = Turns(random.Random(f"awkward ids {provider}"))
    cases += [body_case(provider, f"awkward ids {k}", write(awkward.skeleton(awkward=True), awkward.r))
              for k in range(GENERATED_ID_BODIES)]
    cases += [body_case(provider, name, body) for name, body in lone_surrogate_bodies(provider)]
    if provider == "openai_chat":
        cases += [body_case(provider, name, body) for name, body in chat_spelling_bodies()]
        cases += [body_case(provider, name, body) for name, body in chat_image_bodies()]
        cases += [body_case(provider, name, body, read_only=["search"] if "read only" in name else None)
                  for name, body in chat_part_bodies()]
        cases += [body_case(provider, name, body) for name, body in chat_media_bodies()]
    if provider == "anthropic":
        cases += [body_case(provider, name, body) for name, body in anthropic_result_bodies()]
        cases += [body_case(provider, name, body) for name, body in anthropic_blank_bodies()]
    if provider == "gemini":
        cases += [body_case(provider, name, body) for name, body in gemini_check_bodies()]
        cases += [body_case(provider, name, body) for name, body in gemini_unnamed_call_bodies()]
        cases += [body_case(provider, name, body) for name, body in gemini_neutral_bodies()]
        cases += [body_case(provider, name, body) for name, body in generated_gemini_part_bodies()]
        cases += [body_case(provider, name, body) for name, body in python_number_bodies(provider)]
    if provider == "openai_responses":
        cases += [body_case(provider, name, body) for name, body in client_call_bodies()]
        cases += [body_case(provider, name, body) for name, body in generated_client_call_bodies()]
        cases += [body_case(provider, name, body) for name, body in generated_client_call_bodies(reasoning=True)]
        cases += [body_case(provider, name, body) for name, body in resent_turn_bodies()]
        cases += [body_case(provider, name, body) for name, body in generated_resent_turn_bodies()]
        cases += [body_case(provider, name, body) for name, body in output_part_bodies()]
        cases += [body_case(provider, name, body) for name, body in responses_spelling_bodies()]
        cases += [body_case(provider, name, body) for name, body in python_number_bodies(provider)]
        cut_off = {"model": "m", "input": [{"role": "user", "content": "hi"},
                                           {"type": "custom_tool_call", "call_id": "c1", "name": "grep", "input": "x"}]}
        cases.append(body_case(provider, "client call: a custom tool's call cut off, read only", cut_off,
                               read_only=["grep"]))
    return cases


# ------------------------------------------------------------------------------------------------ writing

def vectors() -> dict[str, bytes]:
    """Every vector file: its path under conformance/, and its bytes."""
    files = {
        "history/rules.json": rule_cases(),
        "history/errors.json": error_cases(),
        "history/generated.json.gz": generated_history_cases(),
        "ids.json": id_cases(),
        **{f"bodies/{p}.json.gz": body_cases(p) for p in PROVIDERS},
    }
    out = {}
    for path, cases in files.items():
        if path.endswith(".gz"):
            text = _surrogates_escaped("[\n" + ",\n".join(dump(case) for case in cases) + "\n]\n")
            out[path] = gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)
        else:
            out[path] = (json.dumps(cases, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="only say whether the committed vectors are stale")
    args = parser.parse_args(argv)
    stale = []
    for path, data in vectors().items():
        target = HERE / path
        if target.exists() and target.read_bytes() == data:
            continue
        stale.append(path)
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(target.suffix + ".tmp")
            tmp.write_bytes(data)
            tmp.replace(target)
    if args.check and stale:
        print("stale conformance vectors (run python conformance/generate.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
