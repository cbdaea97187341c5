"""OpenAI Responses API (`POST /v1/responses`): input items, function-call pairs and reasoning replay.

Rule ids OR1-OR9 are those of section 2 of the rules page (docs/rules.md). Three more are this package's own, for
errors the notes do not number: OR0 (the body's shape and types, in OpenAI's generic `invalid_type`,
`invalid_value` and `missing_required_parameter` wording), OR10 (one `call_id` on two calls or two outputs)
and OR11 (a user, system or developer message between a `function_call` and its output; INF).

Wire shape: the leading system message becomes `instructions` (later ones stay system items in place);
each step is the assistant's text, its `function_call` items (`call_id` at most 64 characters, `arguments`
a JSON string), their `function_call_output` items in call order (images stay inside the output, which
says a failure with `ERROR_MARK`), then whatever the user typed meanwhile.

Reasoning replay: a reasoning item goes back only with its encrypted content and together with the item
ids it was produced with, in the original order; an assistant message that cannot be replayed that way is
sent without reasoning items and without any item id (OR7/OR8: never one without the other). What replay
needs is kept in the neutral model's `provider_data` under "openai_responses":

- `ThinkingPart(provider="openai_responses", data=<encrypted_content>, text=<summary texts joined>,
  provider_data={"openai_responses": {"id": "rs_...", "summary": [...]}})`
- `ToolCall.provider_data = {"openai_responses": {"id": "fc_..."}}`
- `ChatMessage.provider_data = {"openai_responses": {"id": "msg_...", "phase": ..., "items": [...]}}`, where
  the optional `items` records the original output order: `{"type": "reasoning" | "message" |
  "function_call" | "native", "id": ..., "parts": n, "phase": ...}` (`parts` and `phase` for messages only).

The whole input vocabulary (the SDK's `ResponseInputItemParam` union, and types it does not know yet) reads:

- client-side calls, each answered by its own output type by `call_id` (`wire.CALL_OUTPUTS`: `function_call`,
  `custom_tool_call`, `local_shell_call`, `shell_call`, `apply_patch_call`, `computer_call`, a `tool_search_call`
  the client runs) are ToolCalls: `provider_data = {"openai_responses": {"type": "custom_tool_call", "id": ...,
  "status": ...}}` (no `type`: a function_call), their payload as `arguments` (`{"input": ...}` for a custom
  tool, `{"action": ...}` for a shell, `{"operation": ...}` for a patch). Their outputs are tool messages, and
  the writer answers each call with its own output type (a missing one gets a synthetic output of that type:
  `write.result_item`);
- every other item (hosted tools' calls: web_search_call, file_search_call, code_interpreter_call, mcp_call,
  image_generation_call, ...; MCP listings and approval requests; compaction; unknown types) is a
  `NativePart(provider="openai_responses")` holding the item, in the assistant turn where it stood; the items the
  caller writes (`wire.INPUT_SIDE`: item_reference, mcp_approval_response, ...) a user message holding one;
- `input_file` is a `FilePart`; an image by `file_id`, or a part type the model does not name, a `NativePart`;
- whatever of an item the neutral model does not hold (a `developer` role, `status`, `annotations`, `logprobs`,
  a call's `caller`, an output's `id`) is kept by keeping the items themselves: a message whose items the default
  shape would not write back as they are carries them in `provider_data["openai_responses"]["wire"]`, and the
  writer sends them back verbatim while the message still reads as they do (`write.with_wire`, `write._fits`).

`repair_body` works on spans of items: an assistant turn's items (reasoning, message, calls, hosted items) are one
neutral message (as `from_request` reads them), so a turn is kept or rewritten whole, and a reasoning item never
leaves the items it belongs to (`_units`; `_read_groups`, one list per item, does not fit a format whose reader
folds several items into one message, so this adapter gives its own neutral route, `_neutral_repair_body`); a list
of plain items (`spans.stubs`) is decided on stubs first, as every adapter's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

from chatmend.exceptions import Problem, error_context
from chatmend.messages import ChatMessage, Tool
from chatmend.planner import Stubs
from chatmend.providers.base import CheckContext, EntryPoints, IdAssigner, Provider, text_field, to_plain
from chatmend.providers.body import BodyRepair
from chatmend.providers.openai_responses import checker, spans
from chatmend.providers.openai_responses.read import Reader, Turn, read_error
from chatmend.providers.openai_responses.wire import (
    CALL_ID_MAX,
    ERROR_MARK,
    NAME,
    OWN_PART_TYPES,
    RESPONSES_ITEM_TYPES,
    is_client_call,
    sent_ids,
)
from chatmend.providers.openai_responses.write import Writer, function_call_output, instructions, tool, with_wire
from chatmend.repair import IsReadOnly, RepairResult, reads_only, synthetic_result

__all__ = ["ERROR_MARK", "PROVIDER", "OpenAIResponses", *EntryPoints._fields]


class OpenAIResponses(Provider):
    """OpenAI's Responses API: `input` items, `function_call` / `function_call_output` pairs."""

    name: ClassVar[str] = NAME
    id_max_length: ClassVar[int | None] = CALL_ID_MAX  # OR3
    sdk_modules: ClassVar[tuple[str, ...]] = ("openai.types.responses",)
    title: ClassVar[str] = "OpenAI Responses"
    description: ClassVar[str] = "OpenAI Responses: a body or its input items"
    list_key: ClassVar[str] = "input"
    history_keys: ClassVar[tuple[str, ...]] = ("input", "instructions")
    model_prefixes: ClassVar[tuple[str, ...]] = ("gpt-", "gpt4", "o1", "o3", "o4", "chatgpt")  # OpenAI's models
    writes_parts: ClassVar[frozenset[str]] = frozenset({"text", "image", "thinking", "file", "native"})

    def marks(self, item: Mapping[str, Any]) -> bool:
        """An item of a type only Responses has (with no role), or a message with Responses' part types."""
        if text_field(item) in RESPONSES_ITEM_TYPES and "role" not in item:
            return True
        content = item.get("content")
        return isinstance(content, list) and any(
            isinstance(p, Mapping) and text_field(p) in OWN_PART_TYPES for p in content)

    def holds_history(self, body: Mapping[str, Any]) -> bool:
        """An `input` list, or an `input` string (one user message)."""
        return isinstance(body.get("input"), (list, str))

    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        """The `responses.create` body: each step as text, calls, outputs in call order, then the steer."""
        messages = result.messages
        if system is None and isinstance(options.get("instructions"), str):
            system = options.pop("instructions")
        start = 0
        if system is None and messages and messages[0].role == "system":
            # The leading system message becomes `instructions`; later ones stay system items in place.
            system = instructions(messages[0].content)
            start = 1 if system is not None else 0
        writer = Writer(ids)
        writer.write(messages[start:] if start else messages)
        body: dict[str, Any] = {"model": model}
        if system is not None:
            body["instructions"] = system
        body["input"] = writer.items
        if tools:
            body["tools"] = [tool(t.name, t.description, t.parameters) for t in tools]
        body.update(options)
        return body

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """A history from a saved body (`instructions` and `input`), an input list, or an input string."""
        with error_context(provider=self.name):  # a reader's error names the provider (the neutral model's too)
            return self._read_request(self._plain_request(data))

    def _read_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """`from_request` of a body whose SDK objects are read as their dicts."""
        history: list[ChatMessage] = []
        if isinstance(data, Mapping):
            instructions = data.get("instructions")
            if instructions is not None:
                if not isinstance(instructions, str):
                    raise read_error("'instructions' must be a string", "instructions")
                history.append(ChatMessage(role="system", content=instructions))
            items: object = data.get("input")
            if items is None:  # no input (or `null`, which the API takes as none): instructions alone
                items = []
            base = "input"
        else:
            items, base = data, ""
        if isinstance(items, str):
            return [*history, ChatMessage(role="user", content=items)]
        if not isinstance(items, Sequence):
            raise read_error(f"expected a string or a list of input items, got {type(items).__name__}", base)
        return [*history, *(m for group in self._units(items, base)[1] for m in group)]

    def _units(self, items: Sequence[Any], base: str = "input") -> tuple[list[list[Any]], list[list[ChatMessage]]]:
        """The items as spans, each the items of one neutral message, and the message of each span (carrying its
        items when the default shape would not write them back as they are)."""
        reader = Reader(items if isinstance(items, (list, tuple)) else list(items))
        for i, item in enumerate(items):
            reader.read(item, f"{base}[{i}]" if base else f"[{i}]")
        reader.flush()
        groups = []
        for message, source in zip(reader.messages, reader.sources):
            answers = reader.kinds.get(message.tool_call_id, "function_call") if message.tool_call_id else None
            groups.append([with_wire(message, source, answers)])
        return reader.sources, groups

    def _stubs(self, items: list[Any]) -> Stubs | None:
        """Plain items (`spans.stubs`): the span route of `repair_body`."""
        return spans.stubs(items)

    def _synthetic_result(self, calls: list[Any], k: int, final_id: str,
                          is_read_only: IsReadOnly | None) -> list[Any]:
        """The `function_call_output` item the writer writes for the synthetic result of call `k` (a plain
        `function_call` item each)."""
        name = calls[k]["name"]
        return [function_call_output(final_id, synthetic_result(final_id, name,
                                                                read_only=reads_only(is_read_only, name)))]

    def _refused(self, body: Mapping[str, Any], repaired: BodyRepair) -> bool:
        """Sure only for a plan of the stub route that answers calls as interrupted and does nothing else: every
        call id of the list is then its only one (else rule 5 renames), and no output anywhere answers an
        interrupted call (else a note), so the API refuses it (OR1), chained or not. Any other repair is never
        sure without `check`: the reader folds a turn's items into one message, so calls interleaved with their
        outputs (which the API takes) repair as interrupted and noted, and with `previous_response_id` an output
        may answer a call of the chained response (OR2)."""
        report = repaired.report
        return repaired.from_spans and bool(report.interrupted) and not (
            report.moved or report.notes or report.renamed or report.dropped)

    def _keeps(self, unit: Any) -> bool:
        """OR7: a turn whose last item is a reasoning item is written anew, which leaves out the reasoning whose item
        is gone."""
        last = unit[-1] if unit else None
        return not (isinstance(last, Mapping) and last.get("type") == "reasoning")

    def _write_items(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner], lead: int) -> list[Any]:
        """The items of `messages[lead:]`, written after the lead's (for its calls) by one writer: never through
        `_write_body`, which would make a leading system message `instructions`."""
        return _run_items(messages, ids(), lead, ())

    def _write_run(self, before: list[Any], messages: list[ChatMessage], ids: Callable[[], IdAssigner],
                   lead: int) -> list[Any]:
        """A run's items, its writer knowing the item ids the list sends before it (OR6: an item id is sent once):
        a turn whose ids were sent before goes in the plain shape, as the whole list's writer writes it, and the
        list needs no writing anew for that."""
        written = _run_items(messages, ids(), lead, ())
        own = {i for item in written for i in sent_ids(item)}
        if not own:
            return written  # (an agent's plain traffic: no walk of the list before)
        sent = {i for entry in before for item in (entry if isinstance(entry, list) else (entry,))
                for i in sent_ids(item)}
        return written if own.isdisjoint(sent) else _run_items(messages, ids(), lead, sent)

    def from_response(self, response: Any) -> ChatMessage:
        """The reply's output items (reasoning, message, function_call) as one assistant message."""
        data = to_plain(response, provider=NAME)
        output = data.get("output")
        if not isinstance(output, list):
            error = data.get("error")
            detail = f": {error.get('message')}" if isinstance(error, Mapping) else ""
            raise read_error(f"a Responses reply needs an 'output' list{detail}", "output")
        turn = Turn()
        for i, item in enumerate(output):
            path = f"output[{i}]"
            if not isinstance(item, Mapping):
                raise read_error(f"expected an output item object, got {type(item).__name__}", path)
            kind = item.get("type")
            if kind == "reasoning":
                turn.add_reasoning(item, path)
            elif kind == "message" and item.get("role", "assistant") == "assistant":
                turn.add_message(item, path)
            elif kind == "function_call" or is_client_call(item, kind):
                turn.add_call(item, path, str(kind))
            # Other items (web_search_call, ...) are hosted tools' items the API runs and keeps itself.
        return turn.message()

    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """The 400s the Responses API would answer this body with (OR0-OR11)."""
        return checker.check(body, context)

    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """`client.responses.create(**body)` on an `openai.OpenAI` client (or `AsyncOpenAI`)."""
        return client.responses.create(**body)


def _run_items(messages: list[ChatMessage], ids: IdAssigner, lead: int, sent: Collection[str]) -> list[Any]:
    """The items of `messages[lead:]`, written after the lead's by one writer that knows `sent` were sent."""
    writer = Writer(ids)
    writer.item_ids.update(sent)
    writer.write(messages[:lead])
    start = len(writer.items)
    writer.write(messages[lead:])
    return writer.items[start:]


PROVIDER = OpenAIResponses()
to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()
