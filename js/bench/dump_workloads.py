"""The bench's workloads as JSON on stdout, built by bench/workloads.py (the Python bench's own), so both languages
time the same histories and bodies: `python js/bench/dump_workloads.py > workloads.json`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from chatmend.jsonl import message_to_dict
from workloads import anthropic_messy_body, chat_messy_body, mixed_messy

json.dump({
    "history_20k": [message_to_dict(m) for m in mixed_messy(20_000)],
    "bodies": {f"{provider} {n}": make(n) for n in (1_000, 10_000)
               for provider, make in (("openai_chat", chat_messy_body), ("anthropic", anthropic_messy_body))},
}, sys.stdout, ensure_ascii=False)
