"""Checking a Chat Completions body offline, in the provider's own words (docs/rules.md §1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatmend.exceptions import Problem
from chatmend.providers.base import SHAPE, CheckContext
from chatmend.providers.openai_chat.wire import ChatWire, call_problem, chat_json_type, stated_call_type
from chatmend.strict_json import brief


class ChatChecking(ChatWire):
    """The checking hooks (a dialect overrides the rules it words otherwise or adds)."""

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """The 400s the provider would answer with; a malformed body is reported, never raised."""
        if not isinstance(body, Mapping):
            return [self._problem(SHAPE, "", f"expected a JSON object body, got {type(body).__name__}")]
        messages = body.get("messages")
        if not isinstance(messages, list):
            return [self._problem(SHAPE, "messages", "'messages' must be a list of message objects")]
        problems: list[Problem] = []
        for i, message in enumerate(messages):
            problems.extend(self._check_shape(message, f"messages[{i}]"))
        if problems:
            return problems
        problems.extend(self._check_messages(messages, body))
        return problems

    def _problem(self, code: str, path: str, message: str) -> Problem:
        """A Problem of this provider."""
        return Problem(code=code, path=path, message=message, provider=self.name)

    def _check_shape(self, message: Any, path: str) -> list[Problem]:
        """Structural problems of one message, before any rule can be judged."""
        if not isinstance(message, Mapping):
            return [self._problem(SHAPE, path, "expected a message object")]
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool", "function"):
            return [self._problem(SHAPE, f"{path}.role", f"unknown role {brief(role)}")]
        if role == "function" and not (isinstance(message.get("name"), str) and message["name"]):
            return [self._problem(SHAPE, f"{path}.name", "a function message needs a string 'name'")]
        out: list[Problem] = []
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            out.append(self._problem(SHAPE, f"{path}.content", "content must be a string, a list or null"))
        if isinstance(content, list):
            for j, part in enumerate(content):
                problem = self._part_problem(part)
                if problem is not None:
                    field, text = problem
                    out.append(self._problem(SHAPE, f"{path}.content[{j}]{field}", text))
        if role == "tool" and "tool_call_id" in message and not isinstance(message["tool_call_id"], str):
            out.append(self._problem(SHAPE, f"{path}.tool_call_id", "'tool_call_id' must be a string"))
        calls = message.get("tool_calls")
        if calls is not None:
            if role != "assistant" or not isinstance(calls, list):
                return [*out, self._problem(SHAPE, f"{path}.tool_calls",
                                            "'tool_calls' is a list on assistant messages")]
            for k, call in enumerate(calls):
                problem = call_problem(call)
                if problem is not None:
                    out.append(self._problem(SHAPE, f"{path}.tool_calls[{k}]{problem[0]}", problem[1]))
                elif "id" in call and not isinstance(call["id"], str):
                    out.append(self._problem(SHAPE, f"{path}.tool_calls[{k}].id", "'id' must be a string"))
        function_call = message.get("function_call")
        if function_call is not None and (role != "assistant" or not isinstance(function_call, Mapping) or not (
                isinstance(function_call.get("name"), str) and function_call["name"]
                and isinstance(function_call.get("arguments"), str))):
            out.append(self._problem(SHAPE, f"{path}.function_call",
                                     "'function_call' is an object with a non-empty 'name' and string 'arguments', "
                                     "on assistant messages"))
        return out

    def _check_messages(self, messages: list[Any], body: Mapping[str, Any]) -> list[Problem]:
        """OC1-OC7 over a well-shaped message list (hook: Mistral has its own rules)."""
        out: list[Problem] = []
        pending: dict[str, int] = {}  # unanswered call ids of the current assistant message -> call index
        answered: dict[str, int] = {}  # answered id -> index of its tool message
        calls_at = -1  # index of the assistant message whose tool run is open (-1: none)
        for i, message in enumerate(messages):
            role = message["role"]
            path = f"messages[{i}]"
            if role == "tool":
                call_id = message.get("tool_call_id", "")
                if calls_at < 0:  # OC2
                    out.append(self._say("OC2", f"{path}.role"))
                elif call_id in answered:  # OC4
                    out.append(self._say("OC4", f"{path}.tool_call_id", id=call_id,
                                         first=f"messages[{answered[call_id]}]", second=path))
                elif call_id not in pending:  # OC3
                    out.append(self._say("OC3", f"{path}.tool_call_id", id=call_id))
                else:
                    del pending[call_id]
                    answered[call_id] = i
            else:
                if pending:
                    out.append(self._unanswered(calls_at, list(pending)))
                pending, answered, calls_at = {}, {}, -1
                if role == "assistant":
                    out.extend(self._check_assistant(message, i, body))
                    if message.get("tool_calls"):
                        calls_at = i
                        pending = self._check_calls(message["tool_calls"], path, out)
            out.extend(self._check_images(message, i))
        if pending:
            out.append(self._unanswered(calls_at, list(pending)))
        return out

    def _say(self, code: str, path: str, **fields: Any) -> Problem:
        """A Problem with the provider's own text for `code`, its variable parts filled in."""
        return self._problem(code, path, self.texts[code].format(**fields))

    def _unanswered(self, index: int, ids: list[str]) -> Problem:
        """OC1 (KI1 for Kimi): calls of messages[index] left without a tool message."""
        return self._say(self.unanswered_code, f"messages[{index}].role", ids=", ".join(ids))

    def _check_calls(self, calls: list[Any], path: str, out: list[Problem]) -> dict[str, int]:
        """OC4-OC6 on one assistant message's calls; returns its ids, each to its call index."""
        ids: dict[str, int] = {}
        for k, call in enumerate(calls):
            call_id = call.get("id", "")
            here = f"{path}.tool_calls[{k}]"
            if call_id in ids:  # OC4: a second call under one id cannot get its own result
                first = f"{path}.tool_calls[{ids[call_id]}]"
                out.append(self._say("OC4", f"{here}.id", id=call_id, first=first, second=here))
            ids.setdefault(call_id, k)
            limit = self.id_max_length
            if limit is not None and len(call_id) > limit:  # OC5
                where = f"{here}.id"
                out.append(self._say("OC5", where, where=where, limit=limit, length=len(call_id)))
            function = call.get("function") if stated_call_type(call) == "function" else None
            arguments = function.get("arguments") if isinstance(function, Mapping) else ""
            if not isinstance(arguments, str):  # OC6
                out.append(self._say("OC6", f"{here}.function.arguments", where=f"{here}.function.arguments",
                                     kind=chat_json_type(arguments)))
        return ids

    def _check_assistant(self, message: Mapping[str, Any], i: int, body: Mapping[str, Any]) -> list[Problem]:
        """Rules on one assistant message beyond its calls (hook: Kimi's KI2 and KI3)."""
        return []

    def _check_images(self, message: Mapping[str, Any], i: int) -> list[Problem]:
        """OC7 (Mistral's MI11): image parts only in user messages."""
        role = message["role"]
        content = message.get("content")
        if role == "user" or not isinstance(content, list):
            return []
        for j, part in enumerate(content):
            if part.get("type") == "image_url":  # one problem per message, as the API reports it
                return [self._say(self.image_code, f"messages[{i}].content[{j}]", index=i, role=role)]
        return []
