"""Checking: the offline checker of a Responses body against rules OR0-OR11.

It knows the whole input vocabulary: every client-side call type pairs with its own output type by `call_id`
(OR1, OR2, OR10, OR11 for all of them); hosted tools' items and types it does not know pass as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatmend.exceptions import Problem
from chatmend.providers.base import CheckContext, CheckPass
from chatmend.providers.openai_responses.wire import (
    ALSO_ANSWERS,
    CALL_ID_MAX,
    CALL_OUTPUTS,
    ID_PREFIX,
    INPUT_SIDE,
    ITEM_ID,
    NAME,
    OUTPUT_CALLS,
    ROLES,
    answered_id,
    is_client_call,
    is_client_output,
)

_OUTPUT_PART_TYPES = ("input_text", "input_image", "input_file")
_ASSISTANT_PART_TYPES = ("output_text", "refusal")
_KNOWN_PART_TYPES = frozenset((*_OUTPUT_PART_TYPES, *_ASSISTANT_PART_TYPES))
_NOT_PERSISTED = ("Item with id '{}' not found. Items are not persisted when `store` is set to false. "
                  "Try again with `store` set to true, or remove this item from your input.")
_DUPLICATE = ("Duplicate {} for call_id '{}'. "
              "Each {} must have exactly one matching {}")


def responses_json_type(value: object) -> str:
    """A JSON value's type as the Responses API's errors name it ("an integer", "a decimal": not Chat's words)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def check(body: Any, context: CheckContext) -> list[Problem]:
    """The 400s the Responses API would answer `body` with (OR0-OR11); a malformed body is reported, never
    raised."""
    if not isinstance(body, Mapping):
        return [Problem(code="OR0", path="", provider=NAME,
                        message=f"Invalid body: expected a JSON object, but got {responses_json_type(body)} "
                                "instead.")]
    try:
        return _Pass(body).run()
    except Exception as exc:  # check reports a malformed body, it never raises
        return [Problem(code="OR0", path="", provider=NAME, message=f"Unreadable body: {exc!r}")]


class _Pass(CheckPass):
    """Collects the problems of one body."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        super().__init__(NAME)
        self.body = body

    def missing(self, path: str) -> None:
        """A required parameter is absent (OR0)."""
        self.add("OR0", path, f"Missing required parameter: '{path}'.")

    def wrong_type(self, path: str, expected: str, value: object) -> None:
        """A value of the wrong JSON type (OR0)."""
        got = responses_json_type(value)
        self.add("OR0", path, f"Invalid type for '{path}': expected {expected}, but got {got} instead.")

    def run(self) -> list[Problem]:
        """Every problem of the body."""
        body = self.body
        if "model" not in body:
            self.missing("model")
        instructions = body.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            self.wrong_type("instructions", "a string", instructions)
        self.tools(body.get("tools"))
        items = body.get("input")
        if items is None or isinstance(items, str):
            return self.problems
        if not isinstance(items, list):
            self.wrong_type("input", "one of a string or an array of input items", items)
            return self.problems
        for i, item in enumerate(items):
            self.item(item, f"input[{i}]")
        self.ids(items)
        self.pairs(items)
        self.reasoning(items)
        return self.problems

    def tools(self, tools: object) -> None:
        """Function tools need a name."""
        if tools is None:
            return
        if not isinstance(tools, list):
            self.wrong_type("tools", "an array", tools)
            return
        for k, tool in enumerate(tools):
            if not isinstance(tool, Mapping):
                self.wrong_type(f"tools[{k}]", "an object", tool)
            elif tool.get("type") == "function" and not isinstance(tool.get("name"), str):
                self.missing(f"tools[{k}].name")

    def item(self, item: object, path: str) -> None:
        """The shape of one input item."""
        if not isinstance(item, Mapping):
            self.wrong_type(path, "an input item object", item)
            return
        kind = item.get("type", "message")
        if kind == "message":
            self.message(item, path)
        elif kind == "function_call":
            self.call_id(item, path)
            if not isinstance(item.get("name"), str):
                self.missing(f"{path}.name")
            if "arguments" not in item:
                self.missing(f"{path}.arguments")
            elif not isinstance(item["arguments"], str):
                # OR0: arguments travel as a JSON string, never as an object.
                self.wrong_type(f"{path}.arguments", "a string", item["arguments"])
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.call_id(item, path)
            self.output(item, path)
        elif is_client_call(item, kind) or (is_client_output(item, kind) and kind != "local_shell_call_output"):
            self.call_id(item, path)
        elif kind == "reasoning":
            if "id" not in item:
                self.missing(f"{path}.id")
            if not isinstance(item.get("summary"), list):
                self.missing(f"{path}.summary")
            if self.body.get("store") is False and not isinstance(item.get("encrypted_content"), str):
                # OR9: with store:false the server would look the item up by id, and it is not persisted.
                self.add("OR9", path, _NOT_PERSISTED.format(item.get("id")))
        elif kind == "item_reference" and self.body.get("store") is False:
            self.add("OR9", path, _NOT_PERSISTED.format(item.get("id")))
        elif not isinstance(kind, str):
            self.wrong_type(f"{path}.type", "a string", kind)

    def message(self, item: Mapping[str, Any], path: str) -> None:
        """Roles and content part types of a message item."""
        role = item.get("role")
        if role not in ROLES:
            self.add("OR0", f"{path}.role", f"Invalid value: '{role}'. Supported values are: 'assistant', "
                     "'system', 'developer', and 'user'.")
            return
        if "content" not in item:
            self.missing(f"{path}.content")
            return
        content = item["content"]
        if isinstance(content, str):
            return
        if not isinstance(content, list):
            self.wrong_type(f"{path}.content", "one of a string or an array of content parts", content)
            return
        # OR0: an assistant message takes output_text and refusal parts only (no input_text, no images).
        allowed = _ASSISTANT_PART_TYPES if role == "assistant" else _OUTPUT_PART_TYPES
        self.parts(content, f"{path}.content", allowed)

    def parts(self, parts: list[Any], path: str, allowed: tuple[str, ...]) -> None:
        """Content parts of the allowed types, with their text or image."""
        supported = _listed(allowed)
        for j, part in enumerate(parts):
            where = f"{path}[{j}]"
            if not isinstance(part, Mapping):
                self.wrong_type(where, "an object", part)
                continue
            kind = part.get("type")
            if isinstance(kind, str) and kind not in _KNOWN_PART_TYPES:
                continue  # a part type this checker does not know yet: the API's to judge
            if kind not in allowed:
                self.add("OR0", f"{where}.type",
                         f"Invalid value: '{kind}'. Supported values are: {supported}.")
            elif kind in ("input_text", "output_text") and not isinstance(part.get("text"), str):
                self.missing(f"{where}.text")
            elif kind == "input_image" and not isinstance(part.get("image_url") or part.get("file_id"), str):
                self.missing(f"{where}.image_url")

    def output(self, item: Mapping[str, Any], path: str) -> None:
        """A function_call_output's `output`: a string or input parts (images allowed here)."""
        if "output" not in item:
            self.missing(f"{path}.output")
            return
        output = item["output"]
        if isinstance(output, list):
            self.parts(output, f"{path}.output", _OUTPUT_PART_TYPES)
        elif not isinstance(output, str):
            self.wrong_type(f"{path}.output", "one of a string or an array of output content parts", output)

    def call_id(self, item: Mapping[str, Any], path: str) -> None:
        """A `call_id` is a non-empty string of at most 64 characters."""
        call_id = item.get("call_id")
        where = f"{path}.call_id"
        if call_id is None:
            self.missing(where)
        elif not isinstance(call_id, str):
            self.wrong_type(where, "a string", call_id)
        elif not call_id:
            self.add("OR0", where, f"Invalid '{where}': empty string. Expected a string with minimum length "
                     "1, but got an empty string instead.")
        elif len(call_id) > CALL_ID_MAX:
            # OR3: call_id at most 64 characters.
            self.add("OR3", where, f"Invalid '{where}': string too long. Expected a string with maximum "
                     f"length {CALL_ID_MAX}, but got a string with length {len(call_id)} instead.")

    def ids(self, items: list[Any]) -> None:
        """Item ids: the type's prefix (OR4), their charset (OR5), no two alike (OR6)."""
        seen: set[str] = set()
        for i, item in enumerate(items):
            if not isinstance(item, Mapping) or "id" not in item:
                continue
            kind, item_id, where = item.get("type", "message"), item["id"], f"input[{i}].id"
            if item_id is None and kind != "item_reference":
                continue  # Optional in the SDK types: null is the same as leaving it out
            if not isinstance(item_id, str):
                self.wrong_type(where, "a string", item_id)
                continue
            if not ITEM_ID.fullmatch(item_id):
                self.add("OR5", where, f"Invalid '{where}': '{item_id}'. Expected an ID that contains "
                         "letters, numbers, underscores, or dashes, but this value contained additional "
                         "characters.")
            elif kind in ID_PREFIX and not item_id.startswith(ID_PREFIX[kind]):
                self.add("OR4", where, f"Invalid '{where}': '{item_id}'. Expected an ID that begins with "
                         f"'{ID_PREFIX[kind]}'.")
            if kind == "item_reference" or kind == "local_shell_call_output":
                continue  # a reference, or the SDK's name of the call a local shell output answers
            if item_id in seen:
                self.add("OR6", where, f"Duplicate item found with id {item_id}. Remove duplicate items from "
                         "your input and try again.")
            seen.add(item_id)

    def pairs(self, items: list[Any]) -> None:
        """Every client call and its own output type pair one to one by call_id (OR1, OR2, OR10), with no
        message between (OR11)."""
        calls: dict[str, tuple[int, str]] = {}
        outputs: set[str] = set()
        # OR2: the call may be in the previous response's chain, or stored and referenced by id
        chained = self.body.get("previous_response_id") is not None or any(
            isinstance(item, Mapping) and item.get("type") == "item_reference" for item in items)
        last_message = -1
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                continue
            kind = item.get("type", "message")
            if kind == "message" and item.get("role") != "assistant":
                last_message = i
            if is_client_call(item, kind):
                call_id = item["call_id"]
                if not call_id:
                    continue
                if call_id in calls:
                    self.add("OR10", f"input[{i}].call_id",
                             _DUPLICATE.format(kind, call_id, kind, CALL_OUTPUTS[kind]))
                else:
                    calls[call_id] = (i, kind)
            elif is_client_output(item, kind):
                call_id = answered_id(item)
                if not isinstance(call_id, str) or not call_id:
                    continue
                call_kind = OUTPUT_CALLS[kind]
                if call_id in outputs:
                    where = f"input[{i}].call_id"
                    self.add("OR10", where, _DUPLICATE.format(kind, call_id, call_kind, kind))
                    continue
                outputs.add(call_id)
                if call_id not in calls:
                    if not chained:
                        self.add("OR2", f"input[{i}]", f"No tool call found for {_words(call_kind)} output "
                                 f"with call_id {call_id}.")
                elif calls[call_id][1] != call_kind and kind not in ALSO_ANSWERS.get(calls[call_id][1], ()):
                    self.add("OR2", f"input[{i}]", f"The {kind} for call_id {call_id} answers a "
                             f"{calls[call_id][1]}, whose output is a {CALL_OUTPUTS[calls[call_id][1]]}.")
                elif last_message > calls[call_id][0]:
                    # OR11 (INF): all calls of a step, then all their outputs, before the next message.
                    self.add("OR11", f"input[{i}]", f"The {kind} for call_id {call_id} is separated from its "
                             f"{call_kind} by the message at input[{last_message}].")
        answered = {c for c in outputs if c in calls}
        for call_id, (i, kind) in calls.items():
            if call_id not in answered:
                self.add("OR1", f"input[{i}]", f"No tool output found for {_words(kind)} {call_id}.")

    def reasoning(self, items: list[Any]) -> None:
        """A reasoning item is followed by the item it produced (OR7)."""
        following: int | None = None
        problems: list[tuple[int, str]] = []
        for i in range(len(items) - 1, -1, -1):
            item = items[i]
            if not isinstance(item, Mapping):
                following = i
                continue
            if item.get("type") != "reasoning":
                following = i
                continue
            nxt = items[following] if following is not None else None
            if not (isinstance(nxt, Mapping) and _is_output_item(nxt) and isinstance(nxt.get("id"), str)):
                problems.append((i, f"Item '{item.get('id')}' of type 'reasoning' was provided without its "
                                 "required following item."))
        for i, message in reversed(problems):
            self.add("OR7", f"input[{i}]", message)
        # OR8 is not checked: whether an item was produced together with a reasoning item is the server's
        # record, not the body's. Bodies of a reasoning model whose `fc_` items came without reasoning were
        # accepted with 200 (pydantic-ai cassettes, issue #43), and repair could not restore a reasoning item.


def _words(kind: str) -> str:
    """A call type as OpenAI's errors say it: `function_call` -> "function call"."""
    return kind.replace("_", " ")


def _listed(values: tuple[str, ...]) -> str:
    """Values listed as OpenAI's errors do: 'a' and 'b'; 'a', 'b', and 'c'."""
    quoted = [f"'{v}'" for v in values]
    if len(quoted) < 3:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def _is_output_item(item: Mapping[str, Any]) -> bool:
    """Whether an item is something the model produced (reasoning, assistant message, a tool call)."""
    kind = item.get("type", "message")
    if kind == "message":
        return item.get("role") == "assistant"
    if not isinstance(kind, str):
        return False
    return not (kind.endswith("_output") or kind in INPUT_SIDE)
