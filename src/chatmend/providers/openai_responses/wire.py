"""The wire constants that the writer, the reader and the checker share: names, limits, id rules."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

NAME = "openai_responses"
"""The provider's name, and its key in `provider_data`."""
CALL_ID_MAX = 64
"""OR3: the longest `call_id` the API accepts."""
ERROR_MARK = "[error]"
"""Opens the output text of a failed tool: the Responses API has no error flag on outputs."""
ITEM_ID = re.compile(r"[A-Za-z0-9_-]+")
"""OR5: an item id holds letters, digits, underscores and dashes only."""
ID_PREFIX = {"function_call": "fc", "custom_tool_call": "ctc", "reasoning": "rs", "message": "msg"}
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
    "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output", "mcp_list_tools",
    "mcp_approval_request", "mcp_approval_response", "image_generation_call", "code_interpreter_call",
    "tool_search_call", "tool_search_output", "additional_tools", "configuration_update", "compaction",
    "compaction_trigger", "program", "program_output",
})
"""The input item types of the Responses API (and of Codex rollouts, which record them)."""
OWN_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})
"""The content part types of Responses messages (detection: no chat shape has them)."""
CALL_OUTPUTS = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "computer_call": "computer_call_output",
    "tool_search_call": "tool_search_output",
}
"""The client-side calls (the caller runs them and answers by `call_id`), each with the type of its output."""
OUTPUT_CALLS = {output: call for call, output in CALL_OUTPUTS.items()}
"""The type of call each client output answers."""
ALSO_ANSWERS = {"tool_search_call": frozenset({"function_call_output"})}
"""Other output types the API takes as the answer of a client call: a client-run tool search answered by a
`function_call_output` was accepted with 200 (a pydantic-ai cassette, issue #43)."""
TOOL_NAMES = {"local_shell_call": "local_shell", "shell_call": "shell", "apply_patch_call": "apply_patch",
              "computer_call": "computer", "tool_search_call": "tool_search"}
"""The tool name a call without a `name` field is read under (the built-in tool it calls)."""
CALL_META = frozenset({"type", "id", "call_id", "status", "name", "caller", "namespace", "execution"})
"""Fields of a call item that are not its payload (the payload becomes `ToolCall.arguments`)."""
INPUT_SIDE = frozenset({"item_reference", "mcp_approval_response", "compaction_trigger", "additional_tools",
                        "configuration_update"})
"""Item types the caller writes (read as a user message holding the item); every other item the model does not
name is the model's or a hosted tool's, kept in place inside the assistant turn."""


def is_client_call(item: Mapping[str, Any], kind: object) -> bool:
    """Whether an item is a call the caller answers by `call_id` (a tool search only when the client runs it)."""
    if not isinstance(kind, str) or kind not in CALL_OUTPUTS or not isinstance(item.get("call_id"), str):
        return False
    return kind != "tool_search_call" or item.get("execution") == "client"


def is_client_output(item: Mapping[str, Any], kind: object) -> bool:
    """Whether an item is the output of a client-side call."""
    if not isinstance(kind, str) or kind not in OUTPUT_CALLS:
        return False
    return kind != "tool_search_output" or item.get("execution") == "client"


def answered_id(item: Mapping[str, Any]) -> object:
    """The call id an output answers: its `call_id` (a local shell output names it `id` in the SDK's type)."""
    call_id = item.get("call_id")
    if call_id is None and item.get("type") == "local_shell_call_output":
        return item.get("id")
    return call_id


def sent_ids(item: object) -> tuple[str, ...]:
    """The item id an input item sends (OR6: each once), as the writer counts them: an output's `id` may be its
    call's id, and a reference's is a stored item's, not one of its own."""
    if not isinstance(item, Mapping):
        return ()
    value, kind = item.get("id"), item.get("type")
    if not isinstance(value, str) or kind == "item_reference" or (isinstance(kind, str) and kind.endswith("_output")):
        return ()
    return (value,)
