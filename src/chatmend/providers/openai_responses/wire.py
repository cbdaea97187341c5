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
