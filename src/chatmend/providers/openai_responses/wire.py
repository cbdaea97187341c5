"""The wire constants that the writer, the reader and the checker share: names, limits, id rules."""

from __future__ import annotations

import re
from typing import Any

NAME = "openai_responses"
"""The provider's name, and its key in `provider_data`."""
CALL_ID_MAX = 64
"""OR3: the longest `call_id` the API accepts."""
ERROR_MARK = "[error]"
"""Opens the output text of a failed tool: the Responses API has no error flag on outputs."""
ITEM_ID = re.compile(r"[A-Za-z0-9_-]+")
"""OR5: an item id holds letters, digits, underscores and dashes only."""
ID_PREFIX = {"function_call": "fc", "reasoning": "rs", "message": "msg"}
"""OR4: the prefix of an item id, by item type."""
PHASES = ("commentary", "final_answer")
"""The `phase` values an assistant message item may carry."""
ROLES = ("user", "assistant", "system", "developer")
"""The roles a message item may have."""
Json = dict[str, Any]
"""A JSON object, as written and read."""
RESPONSES_ITEM_TYPES = frozenset({
    "message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "local_shell_call_output", "computer_call",
    "computer_call_output", "web_search_call", "file_search_call", "item_reference", "mcp_call",
})
"""The input item types of the Responses API (and of Codex rollouts, which record them)."""
OWN_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})
"""The content part types of Responses messages (detection: no chat shape has them)."""
