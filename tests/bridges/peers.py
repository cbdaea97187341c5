"""The peers' repair cases of ../shared/real-world/peer-cases.json (LangChain, deepagents, LiteLLM), as chatmend
histories, for the bridges' tests: absent file, no cases (the tests skip)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chatmend import ChatMessage
from chatmend.messages import coerce_message

PEER_CASES = Path(__file__).resolve().parents[2].parent / "shared" / "real-world" / "peer-cases.json"
FRAMEWORK_PEERS = ("BerriAI/litellm", "langchain-ai/deepagents", "langchain-ai/langchain")


def _message(item: dict[str, Any]) -> ChatMessage:
    content = item.get("content")
    if isinstance(content, list):  # the file's neutral parts: only the text ones are read here
        content = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return coerce_message({
        "role": item["role"], "content": content or "",
        "tool_calls": [{"id": c.get("id") or "", "name": c.get("name") or "tool", "arguments": c.get("arguments")
                        if c.get("arguments") is not None else {}} for c in item.get("tool_calls") or []],
        "tool_call_id": item.get("tool_call_id"), "tool_name": item.get("name")})


def framework_peer_cases() -> list[tuple[str, list[ChatMessage]]]:
    """(name, input history) of each LangChain / deepagents / LiteLLM case, or none without the file."""
    if not PEER_CASES.exists():
        return []
    cases = json.loads(PEER_CASES.read_text())
    return [(c["name"], [_message(m) for m in c["input"]]) for c in cases
            if str(c.get("source", "")).startswith(FRAMEWORK_PEERS) and c["input"]]
