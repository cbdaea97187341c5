"""The bench's workloads as JSON on stdout, built by bench/workloads.py (the Python bench's own), so both languages
time the same histories and bodies: `python js/bench/dump_workloads.py > workloads.json`. The Gemini and Responses
bodies are the messy Chat body's conversation in their shapes (the same mess: calls cut off, results late or
after a user's words, orphans, reused ids)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from chatmend.jsonl import message_to_dict
from workloads import anthropic_messy_body, chat_messy_body, mixed_messy


def gemini_body(chat: dict[str, Any]) -> dict[str, Any]:
    """The Chat body's messages as Gemini contents: the system message as `systemInstruction`, each run of tool
    messages one user content of responses."""
    contents: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    system = None
    for m in chat["messages"]:
        role = m["role"]
        if role == "system":
            system = {"parts": [{"text": m["content"]}]}
        elif role == "user":
            contents.append({"role": "user", "parts": [{"text": m["content"]}]})
        elif role == "assistant":
            parts: list[dict[str, Any]] = [{"text": m["content"]}] if m.get("content") else []
            for c in m.get("tool_calls") or []:
                names[c["id"]] = c["function"]["name"]
                parts.append({"functionCall": {"id": c["id"], "name": c["function"]["name"],
                                               "args": json.loads(c["function"]["arguments"])}})
            contents.append({"role": "model", "parts": parts})
        else:
            part = {"functionResponse": {"id": m["tool_call_id"], "name": names.get(m["tool_call_id"], "search"),
                                         "response": {"output": m["content"]}}}
            if contents and contents[-1]["role"] == "user" and "functionResponse" in contents[-1]["parts"][-1]:
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
    return {"systemInstruction": system, "contents": contents} if system else {"contents": contents}


def responses_body(chat: dict[str, Any]) -> dict[str, Any]:
    """The Chat body's messages as Responses input items (the system message as `instructions`)."""
    items: list[dict[str, Any]] = []
    body: dict[str, Any] = {"model": chat["model"]}
    for m in chat["messages"]:
        role = m["role"]
        if role == "system":
            body["instructions"] = m["content"]
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
        elif role == "assistant":
            if m.get("content"):
                items.append({"role": "assistant", "content": m["content"]})
            items += [{"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                       "arguments": c["function"]["arguments"]} for c in m.get("tool_calls") or []]
        else:
            items.append({"role": role, "content": m["content"]})
    return {**body, "input": items}


BODIES = (("openai_chat", chat_messy_body), ("anthropic", anthropic_messy_body),
          ("gemini", lambda n: gemini_body(chat_messy_body(n))),
          ("openai_responses", lambda n: responses_body(chat_messy_body(n))))

json.dump({
    "history_20k": [message_to_dict(m) for m in mixed_messy(20_000)],
    "bodies": {f"{provider} {n}": make(n) for n in (1_000, 10_000) for provider, make in BODIES},
}, sys.stdout, ensure_ascii=False)
