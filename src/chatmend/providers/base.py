"""The interface every provider adapter offers, and small helpers they share.

A provider module owns everything about one wire format: writing a neutral history as the exact request
body (`to_request`), reading bodies and replies back (`from_request`, `from_response`), predicting the
provider's 400s offline (`check`), and sending through the official SDK client (`send`, `send_async`).

`Provider` owns the templates; an adapter fills in hooks and declares what the rest of chatmend needs to
know about its wire format:
- `to_request` repairs once, maps ids by `id_max_length`, `id_alphabet` and `ids_by_position` (`_wire_ids`,
  `_id_assigner`), then calls the adapter's `_write_body`;
- `check(body, model=..., platform=...)` builds one `CheckContext` and calls the adapter's `_check`;
- the class attributes under "declarations" (`list_key`, `history_keys`, `model_prefixes`, `marks`, ...)
  are how the command line and `chatmend.formats` read, detect and fill in bodies without naming a provider.
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from json.encoder import encode_basestring
from typing import Any, ClassVar, NamedTuple, Protocol, cast

from chatmend.exceptions import (
    ChatmendError,
    CheckError,
    Problem,
    ReadError,
    UnsupportedError,
    error_context,
    problems_gone,
    unmatched,
)
from chatmend.ids import digest, shortening_id_maker, wire_ids
from chatmend.incremental import Repairer
from chatmend.messages import ChatMessage, ImagePart, NativePart, Tool, ToolCall, type_adapter
from chatmend.planner import Stubs, plan_spans
from chatmend.providers.assembly import assemble
from chatmend.providers.body import (
    BodyRepair,
    BodyReport,
    Dropped,
    NeutralSide,
    Run,
    kept_items,
    plan_rewrite,
    unwritable_parts,
)
from chatmend.repair import (
    DEFAULT_OPTIONS,
    IsReadOnly,
    Mark,
    OnMissing,
    RepairOptions,
    RepairResult,
    Wording,
    repair_for_writers,
    repair_history,
    repair_options,
)
from chatmend.results import SYNTHETIC_SOURCE
from chatmend.sdk_reader import holds_sdk_object, is_sdk_object
from chatmend.strict_json import LONE_HALF, find_lone_surrogates, without_lone_surrogates

__all__ = [
    "EMPTY",
    "JSON",
    "SHAPE",
    "BodyRepair",
    "CheckContext",
    "CheckPass",
    "Dropped",
    "EntryPoints",
    "HistoryInput",
    "IdAssigner",
    "Provider",
    "ToolsInput",
    "arguments_json",
    "arguments_text",
    "coerce_tools",
    "image_data_url",
    "messages_of",
    "parse_data_url",
    "plain_sdk",
    "repaired",
    "sanitizing_id_maker",
    "split_data_url",
    "text_field",
    "to_plain",
    "without_error_mark",
]

JSON = "JSON"
"""Problem code of a body that is not valid JSON once sent: a string holding a lone surrogate."""
SHAPE = "SHAPE"
"""Problem code shared by adapters for a body that is not of the provider's shape at all (check never raises)."""
EMPTY = "EMPTY"
"""Problem code of a body whose conversation list is empty, for a provider that needs one (`empty_list_error`)."""

HistoryInput = Sequence[ChatMessage | Mapping[str, Any]] | Sequence[Any]
"""What `to_request` accepts: ChatMessage objects or dicts of the neutral JSON shape, or a history holding the
official SDKs' message objects (read as `repair_history` reads them)."""
ToolsInput = Sequence[Tool | Mapping[str, Any]] | None
"""Tools as `Tool` objects or dicts with name, description and parameters."""


class ToRequest(Protocol):
    """`Provider.to_request`'s signature, bound: a provider module's `to_request`."""

    def __call__(self, history: HistoryInput, *, model: str, tools: ToolsInput = None, system: str | None = None,
                 is_read_only: IsReadOnly | None = None, repairer: Repairer | None = None,
                 on_unsupported: Callable[[Dropped], object] | None = None, wording: Wording | None = None,
                 leave_open_last: bool = False, on_missing: OnMissing = "answer", mark: Mark = "error",
                 **options: Any) -> dict[str, Any]: ...


class RepairBody(Protocol):
    """`Provider.repair_body`'s signature, bound."""

    def __call__(self, body: Mapping[str, Any], *, is_read_only: IsReadOnly | None = None,
                 keep_valid: bool = True, **options: Any) -> BodyRepair: ...


class Check(Protocol):
    """`Provider.check`'s signature, bound."""

    def __call__(self, body: Mapping[str, Any], *, model: str | None = None,
                 platform: str | None = None) -> list[Problem]: ...


class Send(Protocol):
    """`Provider.send`'s signature, bound."""

    def __call__(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage: ...


class SendAsync(Protocol):
    """`Provider.send_async`'s signature, bound."""

    async def __call__(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage: ...


class EntryPoints(NamedTuple):
    """A provider's methods, bound, that its module exports as functions, unpacked in this order:
    `to_request, from_request, from_response, check, repair_body, send, send_async = PROVIDER.entry_points()`."""

    to_request: ToRequest
    from_request: Callable[[Mapping[str, Any] | Sequence[Any]], list[ChatMessage]]
    from_response: Callable[[Any], ChatMessage]
    check: Check
    repair_body: RepairBody
    send: Send
    send_async: SendAsync


class IdAssigner:
    """Hands out one request's wire ids in the order its calls are written (history order): every writer's."""

    def __init__(self, wire_ids: Sequence[str]) -> None:
        self._wire_ids: list[str] = wire_ids if isinstance(wire_ids, list) else list(wire_ids)
        self._written = 0  # calls written so far

    def next_id(self, name: str) -> str:
        """The wire id of the next call, given its tool name (Kimi's ids carry it; these do not)."""
        k = self._written
        self._written = k + 1
        return self._wire_ids[k]

    def next_ids(self, calls: Sequence[ToolCall]) -> list[str]:
        """The wire ids of one message's calls, in order."""
        next_id = self.next_id
        return [next_id(call.name) for call in calls]

    def skip(self, n: int) -> None:
        """Pass over `n` calls written elsewhere (the kept items of `repair_body`)."""
        self._written += n


@dataclass(frozen=True)
class CheckContext:
    """What a body's 400s depend on beyond the body itself: the model it goes to and where it is sent."""

    model: str | None = None
    """The model (some rules depend on it: Gemini 3's thought signatures, GE4). `check` falls back on the
    body's own `model` field when the caller gives none."""
    platform: str | None = None
    """Where the body is sent when not to the provider's own API: one of the provider's `platforms`."""
    family: str | None = None
    """The family of models whose rules apply, where a provider's models differ in them (Bedrock's `claude`,
    `unmixed`: the adapter `for_model` gives); None: told by `model`."""


class CheckPass:
    """What one pass of a provider's checker has found: its problems, each in the provider's words (`texts`, its
    400 texts by rule id, with their variable parts as fields, for `rule`; a checker may word each in place)."""

    def __init__(self, provider: str, texts: Mapping[str, str] | None = None) -> None:
        self.provider = provider
        self.texts = texts or {}
        self.problems: list[Problem] = []

    def add(self, code: str, path: str, message: str) -> None:
        """Record a problem."""
        self.problems.append(Problem(code=code, path=path, message=message, provider=self.provider))

    def rule(self, code: str, path: str, key: str | None = None, **fields: Any) -> None:
        """Record a problem of rule `code` worded as the provider words it (`key`: another of its texts)."""
        self.add(code, path, self.texts[key or code].format(**fields))


class Provider(ABC):
    """One provider's wire format. Subclasses set the flags and declarations, and implement the hooks
    (`_write_body`, `_check`, `_create`) and the readers (`_read_groups`, or `_units` and `from_request` for a
    format that reads several items as one message; `from_response`)."""

    name: ClassVar[str]
    """The registry name, equal to the module name (`openai_chat`, `anthropic`, ...)."""

    # ---------------------------------------------------------------------------- flags `to_request` reads

    names_results: ClassVar[bool] = False
    """True when the reader names a tool result after the last call of its id (Anthropic's): the stub route then
    tells a note which call that was (`plan_spans(name_notes=)`)."""
    id_max_length: ClassVar[int | None] = None
    """The longest tool call id the provider accepts (None: no known limit)."""
    id_alphabet: ClassVar[str | None] = None
    """The characters a tool call id may hold, as the inside of a regex class (`a-zA-Z0-9_-`; None: any)."""
    ids_by_position: ClassVar[bool] = False
    """True when `_id_assigner` mints wire ids from the calls' positions alone (Kimi): repair then skips rule 5."""
    error_field: ClassVar[bool] = False
    """True when a failed tool result has a field of its own on the wire (Anthropic's `is_error`, Gemini's
    `response: {"error": ...}`); False when only its text can say so (an `Error: ` prefix): `mark="field"` then
    writes a synthetic result as a plain one, its text as worded."""

    # ------------------------------------------------------------------------- flags `repair_body` reads

    blocks_key: ClassVar[str | None] = None
    """The key of a turn's blocks where one wire item holds several neutral messages (a user turn of tool results
    and words: Anthropic's and Bedrock's `content`, Gemini's `parts`): the stub route gathers a changed turn's
    blocks into one new user turn. None: every message is an item of its own, or several (Chat's, Responses')."""
    joins_turns: ClassVar[bool] = False
    """True when two turns of one role may not stand side by side (Gemini's GE1, Converse's BR3): the stub route
    makes a new user turn one with the user turn kept beside it."""
    plain_lists_valid: ClassVar[bool] = True
    """True when a list of the shapes the adapter stubs breaks no rule of the wire once the planner's are kept
    (pairing and ids): the stub route returns the list it assembles unchecked. False for a dialect with rules of
    its own (Groq's string content, Mistral's role order): that list is checked, and one with problems goes the
    neutral route, whose writer knows them."""

    # ---------------------------------------------------------------------------------------- declarations

    title: ClassVar[str] = ""
    """The wire format's name in messages (`OpenAI Chat`, `Anthropic Messages`)."""
    description: ClassVar[str] = ""
    """One line on the files read as this provider's, for the command line's help."""
    list_key: ClassVar[str] = "messages"
    """The body's key holding the conversation list (`messages`, `input`, `contents`)."""
    history_keys: ClassVar[tuple[str, ...]] = ("messages",)
    """Every key `to_request` writes from the history; the other keys of a saved body are the caller's."""
    model_in_body: ClassVar[bool] = True
    """True when the body names its model (`"model"`); False when the model goes elsewhere (Gemini's is in
    the URL): a bare list then needs no model to be checked, and a body written for it names none."""
    required_fields: ClassVar[Mapping[str, Any]] = {}
    """Fields every body needs besides the model and the list, with the value `to_request` fills in when the
    caller gives none (Anthropic's `max_tokens`): what a bare list gets to be checked as a body."""
    model_prefixes: ClassVar[tuple[str, ...]] = ()
    """How the provider's model names start (`claude`, `gemini`): a body naming one is this provider's."""
    platforms: ClassVar[tuple[str, ...]] = ()
    """The other platforms serving this API whose rules `check` knows (`CheckContext.platform`)."""
    roles: ClassVar[frozenset[str]] = frozenset()
    """The roles of the items of this provider's conversation list (empty: items have no roles to tell by)."""
    shape_of: ClassVar[str | None] = None
    """The provider whose wire shape this one speaks (Kimi's and Mistral's are `openai_chat`'s): detection
    tells them apart by model name and `claims_ids`, never by shape. None: its own."""
    plain_default: ClassVar[bool] = False
    """True for the one shape a list of plain text messages is read as when nothing else tells."""
    sdk_modules: ClassVar[tuple[str, ...]] = ()
    """The modules of the official SDK's message classes this provider reads (`anthropic.types`): a history
    holding such an object is read by this provider's `from_request` (`chatmend.providers.reader_of`)."""
    empty_list_error: ClassVar[str | None] = None
    """The provider's 400 for a body whose conversation list (`list_key`) is empty, a history of system text only
    (None: it takes one): `to_request` refuses to write that body (UnsupportedError) and `check` reports it
    (`EMPTY`), so the writer and the check agree."""

    lone_surrogate_errors: ClassVar[tuple[str, str]] = (
        "The request body is not valid JSON: a lone high surrogate ({escape}) with no low surrogate after it, "
        "in the string at {path}",
        "The request body is not valid JSON: a lone low surrogate ({escape}) with no high surrogate before it, "
        "in the string at {path}",
    )
    """`check`'s words (code `JSON`) for a string holding a lone surrogate, a high half then a low half: the
    provider's own where known (with `{column}` and `{char}`: where its parser stops in the body sent compact,
    on line 1), else these. `repair_body` replaces each lone half by U+FFFD."""

    def marks(self, item: Mapping[str, Any]) -> bool:
        """True when a list item has a shape only this provider's wire format has (a `tool_use` block, a
        `functionCall` part): what format detection goes by."""
        return False

    def marks_body(self, body: Mapping[str, Any]) -> bool:
        """True when a body's own fields (beside its list) are of a shape only this provider's has."""
        return False

    def holds_history(self, body: Mapping[str, Any]) -> bool:
        """True when `body` holds a conversation under this provider's `list_key`."""
        return isinstance(body.get(self.list_key), list)

    def claims_ids(self, ids: Sequence[str]) -> bool:
        """True when these call ids are of a shape only this provider makes (Kimi's `functions.NAME:N`)."""
        return False

    writes_parts: ClassVar[frozenset[str]] = frozenset({"text", "image", "thinking"})
    """The neutral part types the writer writes (`Part`'s `type` tags): any other part of a history is
    unsupported here, as a native part of a wire format `accepts_native` refuses is."""

    def accepts_native(self, provider: str) -> bool:
        """True when a `NativePart` of `provider` is written verbatim into this provider's bodies: its own, and
        those of every provider speaking the same wire shape (`shape_of`: Kimi's and Mistral's are Chat's)."""
        if provider == self.name:
            return True
        from chatmend.providers import get  # the registry imports every adapter, this module among them

        try:
            other = get(provider)
        except ChatmendError:
            return False
        return (other.shape_of or other.name) == (self.shape_of or self.name)

    def serves(self, model: object) -> bool:
        """True when the model name is one of this provider's (`model_prefixes`), after any `vendor/`."""
        if not isinstance(model, str) or not self.model_prefixes:
            return False
        return model.lower().rsplit("/", 1)[-1].startswith(self.model_prefixes)

    # ---------------------------------------------------------------------------------------------- write

    def to_request(
        self,
        history: HistoryInput,
        *,
        model: str,
        tools: ToolsInput = None,
        system: str | None = None,
        is_read_only: IsReadOnly | None = None,
        repairer: Repairer | None = None,
        on_unsupported: Callable[[Dropped], object] | None = None,
        wording: Wording | None = None,
        leave_open_last: bool = False,
        on_missing: OnMissing = "answer",
        mark: Mark = "error",
        **options: Any,
    ) -> dict[str, Any]:
        """The exact JSON request body for this provider, after `repair_history` and id mapping. The body is the
        caller's to edit: the calls' arguments in it are copies, not the history's own dicts.

        `wording`, `leave_open_last`, `on_missing` and `mark` are `repair_history`'s options: the body is that of
        `repair_history(history, ...)` with the same ones; with `mark="field"`, a synthetic result is marked as
        an error only where this format has a field for it (`error_field`). Calls that `leave_open_last` leaves
        open are an UnsupportedError (no provider takes a call without its result): with it, a body is written
        once the last reply's calls are answered. The history may hold the official SDKs' message objects, as
        `repair_history` reads them.

        With a `repairer` (one per session, kept by the caller), the repair reuses the previous call's work:
        the same body, but the repair costs only what is new; the repair options are then the Repairer's
        (others are a ValueError: one Repairer never mixes results made under different options). Other options
        go into the body (each adapter says where); an option named like the conversation list (`list_key`) is
        a ValueError: the history is the first argument.

        A `NativePart` of another wire format (`accepts_native` is False) is an `UnsupportedError` naming its
        type and path; with `on_unsupported`, it is left out and `on_unsupported(Dropped(...))` is called for
        each (`drops = []; to_request(..., on_unsupported=drops.append)`).
        """
        writer = self._written_by(model)
        if writer is not None:
            with error_context(provider=self.name):
                return writer.to_request(
                    history, model=model, tools=tools, system=system, is_read_only=is_read_only, repairer=repairer,
                    on_unsupported=on_unsupported, wording=wording, leave_open_last=leave_open_last,
                    on_missing=on_missing, mark=mark, **options)
        if self.list_key in options:
            raise ValueError(f"{self.list_key!r} is written from the history: pass the conversation as "
                             "to_request's first argument, not as an option")
        asked = repair_options(wording, leave_open_last, on_missing, mark)
        with error_context(provider=self.name):
            # the writer takes ids from `final_ids`, unless the provider mints them by position
            result = repaired(history, is_read_only, repairer, assign_ids=not self.ids_by_position, options=asked)
            used = asked if repairer is None else repairer.options
            if used.leave_open_last:
                _refuse_open_calls(result)
            if used.mark == "field" and not self.error_field and result.interrupted:
                result = without_error_mark(result)
            result = self._without_foreign_natives(result, on_unsupported)
            ids = self._id_assigner(result.final_ids)
            body = self._write_body(result, ids, model, coerce_tools(tools), system, options)
        if body.get(self.list_key) == []:
            if self.empty_list_error is not None:
                raise UnsupportedError(f"no messages to send ({self.empty_list_error}); a history of system text "
                                       "only needs a user message", provider=self.name, path=self.list_key,
                                       feature="empty history")
            if result.messages and not self.from_request(body):  # messages given, none carried, nor system text
                raise UnsupportedError("no messages to send: every message of the history is empty (the provider "
                                       "takes no empty message)", provider=self.name, path=self.list_key,
                                       feature="empty history")
        return body

    def _without_foreign_natives(self, result: RepairResult,
                                 on_unsupported: Callable[[Dropped], object] | None) -> RepairResult:
        """The result with no native part this provider cannot carry: raised, or dropped and reported."""
        found = unwritable_parts(result.messages, self.writes_parts, self.accepts_native)
        if not found:
            return result
        if on_unsupported is None:
            i, j = found[0]
            provider, kind = _part_kind(result.messages[i], j)
            raise UnsupportedError(
                f"{provider}'s {kind!r} block has no place in a {self.title or self.name} body (pass "
                "on_unsupported= to leave it out, or --drop-unsupported on the command line)",
                provider=self.name, path=f"messages[{i}].content[{j}]", feature=kind)
        messages = list(result.messages)
        for i, j in reversed(found):
            content = messages[i].content
            assert not isinstance(content, str)
            messages[i] = replace(messages[i], content=content[:j] + content[j + 1:])
        for i, j in found:  # reported in history order
            provider, kind = _part_kind(result.messages[i], j)
            on_unsupported(Dropped(provider, kind, f"messages[{i}].content[{j}]"))
        return replace(result, messages=messages)

    @abstractmethod
    def _write_body(self, result: RepairResult, ids: IdAssigner, model: str, tools: list[Tool],
                    system: str | None, options: dict[str, Any]) -> dict[str, Any]:
        """The request body of a repaired history, its calls' wire ids given by `ids` in history order."""

    def _id_assigner(self, final_ids: Sequence[str]) -> IdAssigner:
        """The wire ids of one request's calls, in the order they are written (hook: Kimi mints them from the
        calls' positions and names)."""
        return IdAssigner(self._wire_ids(final_ids))

    def _wire_ids(self, final_ids: Sequence[str]) -> Sequence[str]:
        """Every call's wire id from the history's final ids, by `id_max_length` and `id_alphabet` (hook:
        Mistral has its own id rule)."""
        limit, alphabet = self.id_max_length, self.id_alphabet
        if limit is None and alphabet is None:
            return final_ids  # final ids are unique: any of them is a wire id
        make, allowed = _id_rule(limit, alphabet)
        return wire_ids(make, final_ids, limit, allowed)

    def from_request(self, data: Mapping[str, Any] | Sequence[Any]) -> list[ChatMessage]:
        """A neutral history from a saved request body (or just its message list); the items may be the official
        SDK's own objects (read as their `model_dump`, `_plain_request`).

        Template: a body's own system text (`_read_system`), then each item's messages (`_read_groups`); an adapter
        whose reader takes the list as a whole, or reads it otherwise than `repair_body` does, overrides it."""
        with error_context(provider=self.name):
            items = messages_of(data)
            system = self._read_system(data) if isinstance(data, Mapping) else []
            return [*system, *(m for group in self._read_groups(items) for m in group)]

    def _read_system(self, body: Mapping[str, Any]) -> list[ChatMessage]:
        """Hook of `from_request`: the system messages of the body's fields beside its list (Anthropic's and
        Bedrock's top-level `system`). Default: none."""
        return []

    def _plain_request(self, data: Any) -> Any:
        """A body or message list with the SDK objects in it (at any depth) as JSON-shaped dicts, each message
        through `_sdk_item`; a body or list without any comes back as it is."""
        if isinstance(data, Mapping):
            items = data.get(self.list_key)
            if isinstance(items, list) and any(map(holds_sdk_object, items)):
                return {**data, self.list_key: [self._sdk_item(plain_sdk(item)) for item in items]}
            return data
        if isinstance(data, Sequence) and not isinstance(data, (str, bytes)) and any(map(holds_sdk_object, data)):
            return [self._sdk_item(plain_sdk(item)) for item in data]
        return data

    def _sdk_item(self, item: Any) -> Any:
        """One item of the conversation list, read from an SDK object, as the wire item it stands for (hook:
        Anthropic's `Message`, a response, holds the assistant turn `{"role", "content"}` and reply metadata)."""
        return item

    @abstractmethod
    def from_response(self, response: Any) -> ChatMessage:
        """The assistant message of a reply (a JSON dict or the official SDK's response object)."""

    def for_model(self, model: object) -> Provider:
        """The adapter of the rules `model` follows: this one, unless the provider's models differ in their rules
        (Bedrock's families). `repair_body` names no model, so a caller who knows it repairs with the chosen one."""
        return self

    def _written_by(self, model: str) -> Provider | None:
        """Hook of `to_request`: another adapter that writes the body for `model` (Bedrock's family's, a router's
        served model's), or None: this one writes it. Default: the adapter `for_model` chooses, if not this one."""
        chosen = self.for_model(model)
        return None if chosen is self else chosen

    # ------------------------------------------------------------------------- repair in the body's own format

    def repair_body(self, body: Mapping[str, Any], *, is_read_only: IsReadOnly | None = None,
                    keep_valid: bool = True, **options: Any) -> BodyRepair:
        """`body` (a request body of this provider) repaired in its own format, changing only what repair must.

        The top-level fields stay as they are; in the conversation list, every item whose messages repair left
        alone is the input's own object, and only the others are written anew (`BodyRepair.rewritten`). A valid
        body comes back equal. What the proxy calls on every request, and `chatmend repair body.json`.

        With `keep_valid` (the default), a body this provider takes comes back as it is, whatever the neutral
        rules would change (an id repeated in a later turn); `keep_valid=False` repairs by the neutral rules
        all the same, for a list that may yet be sent to another provider (a bridge such as LiteLLM's).

        One route: the adapter stubs its wire items, the planner plans, and the plan is assembled from the input's
        items and the adapter's writer (`_stub_repair`). The neutral route (read into the model, `repair_history`,
        write the changed runs) is only for what the adapter cannot stub: items of shapes its stubs do not take,
        a body whose rules depend on more than the stubs (`_takes_stubs`), ids the provider would not take as they
        are, and a step its hooks do not write. A body holding a lone surrogate is repaired as a copy with each one
        replaced by U+FFFD (`BodyRepair.mended` lists where), by the same routes.

        `options` are the adapter's own, for what it does to a repaired body beyond repair (`_after_repair`:
        Anthropic's `thinking_policy`); an option the adapter does not take is a TypeError.
        """
        repaired = self._repair_in_place(body, is_read_only, keep_valid)
        return self._after_repair(body, repaired, **options)

    def _after_repair(self, body: Mapping[str, Any], repaired: BodyRepair, **options: Any) -> BodyRepair:
        """Hook of `repair_body`: what the adapter does to the repaired body beyond repair, by its own options
        (Anthropic's thinking policy). Default: nothing, and no option."""
        if options:
            raise TypeError(f"{self.name}'s repair_body takes no option {', '.join(map(repr, options))}")
        return repaired

    def _repair_in_place(self, body: Mapping[str, Any], is_read_only: IsReadOnly | None,
                         keep_valid: bool) -> BodyRepair:
        """`repair_body` before `_after_repair`."""
        with error_context(provider=self.name):
            if not isinstance(body, Mapping) or not isinstance(body.get(self.list_key), list):
                raise ReadError(f"expected a {self.title or self.name} body with a {self.list_key!r} list",
                                provider=self.name, path=self.list_key)
            mended, paths = without_lone_surrogates(body)
            if paths:  # no UTF-8 writer can encode a lone surrogate, and providers refuse it (`JSON`)
                before = {id(item) for item in body[self.list_key]}
                repaired = self._repair_list(mended, mended[self.list_key], is_read_only)
                new_items = repaired.body[self.list_key]
                rewritten = sorted({*repaired.rewritten,
                                    *(k for k, item in enumerate(new_items) if id(item) not in before)})
                return repaired.replace(rewritten=rewritten, mended=paths)
            items: list[Any] = body[self.list_key]
            repaired = self._repair_list(body, items, is_read_only)
            if keep_valid and repaired.changed and not self._refused(body, repaired) \
                    and not self._list_problems(body):
                # valid as it is: repair changes only what the provider would refuse (#43), e.g. an id repeated
                # in a later turn, which repair_history renames and the provider takes
                return self._as_it_is(body, items)
            return repaired

    def _repair_list(self, body: Mapping[str, Any], items: list[Any], is_read_only: IsReadOnly | None,
                     ) -> BodyRepair:
        """`repair_body` of a body whose strings all encode: the stub route, else the neutral one."""
        stubbed = self._stub_repair(body, items, is_read_only)
        repaired = stubbed if stubbed is not None else self._neutral_repair_body(body, items, is_read_only)
        return _originals_kept(repaired, body, items, self.list_key)

    def _refused(self, body: Mapping[str, Any], repaired: BodyRepair) -> bool:
        """True when the repair shows the input is a body the provider refuses, so `repair_body` need not ask
        `check` whether it was valid as it is: a call answered as interrupted or a result turned into a note (a
        call without its result, a result without its call: OC1, AN1, GE1, OR1, BR1, ...). Hook: Responses takes
        an output whose call is in the chained response (`previous_response_id`)."""
        report = repaired.report
        return bool(report.interrupted or report.notes)

    def _as_it_is(self, body: Mapping[str, Any], items: list[Any]) -> BodyRepair:
        """The body unchanged, as `repair_body` returns a body `check` finds valid; its neutral side read on
        first use."""

        def neutral() -> NeutralSide:
            units, groups = self._units(items)
            history = [m for group in groups for m in group]
            item_of = [r for r, group in enumerate(groups) for _ in group] if units is items else []
            result = RepairResult(messages=list(history), interrupted=[],
                                  final_ids=[c.id for m in history for c in m.tool_calls])
            return result, list(history), item_of

        return BodyRepair(dict(body), report=BodyReport([]), neutral=neutral)

    def _stub_repair(self, body: Mapping[str, Any], items: list[Any],
                     is_read_only: IsReadOnly | None) -> BodyRepair | None:
        """`repair_body`'s route: the adapter stubs its items (`_stubs`), the planner plans (`plan_spans`), and the
        plan is assembled from the input's items and the adapter's writer (`providers.assembly`), building no
        model. None for what the adapter cannot stub: items of other shapes, a body whose rules depend on more
        than its stubs (`_takes_stubs`), an id the provider would not take as it is, a step the adapter does not
        write, or (without `plain_lists_valid`) a list `check` finds problems in; the neutral route repairs it."""
        stubs = self._stubs(items) if items and self._takes_stubs(body) else None
        if stubs is None:
            return None
        plan = plan_spans(stubs.kinds, stubs.refs, name_notes=self.names_results)
        wire = self._wire_ids(plan.final_ids)
        if wire is not plan.final_ids and list(wire) != plan.final_ids:
            return None  # an id the provider would not take: the neutral route maps ids
        report = BodyReport(plan.interrupted, len(plan.moved), len(plan.notes), len(plan.renamed), len(plan.dropped))
        rewritten: list[int] = []
        if plan.unchanged:
            new_body = dict(body)
        else:
            assembled = assemble(self, items, stubs, plan, is_read_only)
            if assembled is None:
                return None
            new_items, rewritten = assembled
            new_body = {**body, self.list_key: new_items}
        if not self.plain_lists_valid and self._list_problems(new_body):
            return None  # a rule of the dialect's own beyond pairing: the neutral route's writer knows it

        def neutral() -> NeutralSide:
            return self._neutral_repair_body(body, items, is_read_only)._side()

        repaired = BodyRepair(new_body, rewritten=rewritten, report=report, neutral=neutral)
        repaired.from_spans = True
        return repaired

    def _takes_stubs(self, body: Mapping[str, Any]) -> bool:
        """Hook of the stub route: False for a body whose `check` depends on more than the stubs say (Anthropic
        with thinking on, AT1; a model named whose own rules apply: Gemini's GE4, Bedrock's families)."""
        return True

    def _stubs(self, items: list[Any]) -> Stubs | None:
        """Hook of the stub route: one stub per neutral message of the list (`chatmend.planner`: its kind, and the
        ids repair pairs by; each added with `Stubs.add`), or None when the items are not all of shapes the
        adapter's hooks write back exactly as its neutral route would (default: none, the neutral route). With
        `blocks_key`, `Stubs.offsets` says where each message's blocks begin in its item."""
        return None

    def _renamed_calls(self, items: list[Any], final_ids: Sequence[str]) -> list[Any] | None:
        """Hook of the stub route: the items of an assistant message (`items`, those holding it) with its calls
        under `final_ids` (rule 5), or None when the adapter does not write it here (the neutral route then
        repairs the body; the default)."""
        return None

    def _renamed_result(self, piece: Any, final_id: str) -> list[Any] | None:
        """Hook of the stub route: a result (`piece`: its item, or its block with `blocks_key`) answering
        `final_id`, the renamed call's id, as pieces of the list; None: not written here (the default)."""
        return None

    def _synthetic_result(self, calls: list[Any], k: int, final_id: str,
                          is_read_only: IsReadOnly | None) -> list[Any] | None:
        """Hook of the stub route: the synthetic result of call `k` of the assistant message held by `calls`
        (rule 4), under `final_id`, as the writer writes it; None: not written here (the default)."""
        return None

    def _note(self, piece: Any, caller: list[Any] | None) -> list[Any] | None:
        """Hook of the stub route: rule 7's user note of a result (`piece`) that answers no call, as the writer
        writes it (`caller`: the items of the last assistant message with a call of its id, for an adapter that
        names results after it: `names_results`); None: not written here (the default)."""
        return None

    def _neutral_repair_body(self, body: Mapping[str, Any], items: list[Any],
                             is_read_only: IsReadOnly | None) -> BodyRepair:
        """`repair_body` through the neutral model: read, repair, keep the items repair left alone."""
        with error_context(provider=self.name):
            units, groups = self._units(items)
            flat = [m for group in groups for m in group]
            # each message's item (none given where an adapter reads several items as one message)
            item_of = [r for r, group in enumerate(groups) for _ in group] if units is items else []
            result = repair_history(flat, is_read_only=is_read_only)
            out = result.messages
            wire = self._id_assigner(result.final_ids)
            wire_ids = [wire.next_id(c.name) for m in out for c in m.tool_calls]
            same_ids = wire_ids == result.final_ids
            if not result.changed and same_ids and len(flat) == len(out):
                repaired = BodyRepair(dict(body), result, [], flat, item_of)  # nothing moved: every item kept
            else:
                kept = [r if r is None or self._keeps(units[r]) else None
                        for r in kept_items(groups, result, None if same_ids else wire_ids.__getitem__)]
                runs = plan_rewrite(out, kept)
                if not runs and len(out) == len(flat) and _every_item_kept(kept, len(units), groups) and \
                        _in_order(kept):
                    repaired = BodyRepair(dict(body), result, [], flat, item_of)
                else:
                    new_items, rewritten = self._rebuild(units, out, kept, runs, wire_ids)
                    if units is not items:
                        new_items, rewritten = _flattened(new_items, set(rewritten))
                    repaired = BodyRepair({**body, self.list_key: new_items}, result, rewritten, flat, item_of)
            if not self._list_problems(repaired.body):
                return repaired
            # the list breaks a rule of the wire beyond pairing (its first role, alternation): the writer knows
            # them, so the whole list is written anew
            written = self._write_list(out, _assigners(wire_ids, 0))
            return BodyRepair({**body, self.list_key: written}, result, list(range(len(written))), flat, item_of)

    def _units(self, items: list[Any]) -> tuple[list[Any], list[list[ChatMessage]]]:
        """Hook of the neutral route: the list's units, each kept whole or written anew, and the neutral messages of
        each (`_read_groups`). Default: every item is a unit; an adapter that reads several items as one message
        (Responses' assistant turn: reasoning, text, calls) gives each unit as the list of its items."""
        return items, self._read_groups(items)

    def _keeps(self, unit: Any) -> bool:
        """Hook of the neutral route: False for a unit whose messages repair left alone that the writer must write
        anew all the same (Responses' turn ending in a reasoning item, OR7). Default: every such unit is kept."""
        return True

    def _list_problems(self, body: Mapping[str, Any]) -> list[Problem]:
        """`check`'s problems of the body's conversation list (not of its other fields, the caller's)."""
        key = self.list_key
        return [p for p in self.check(body) if p.path == key or p.path.startswith((key + "[", key + "."))]

    def _rebuild(self, items: list[Any], out: list[ChatMessage], kept: list[int | None],
                 runs: list[Run], wire_ids: list[str]) -> tuple[list[Any], list[int]]:
        """The new list: kept items as they are, each run written by `_write_items` (`wire_ids`: every call's
        wire id, in history order)."""
        calls_before = [0]
        for m in out:
            calls_before.append(calls_before[-1] + len(m.tool_calls))
        new_items: list[Any] = []
        rewritten: list[int] = []
        run_at = {run.start: run for run in runs}
        last: int | None = None  # the unit kept last: an item of several messages goes in once
        p = 0
        while p < len(out):
            run = run_at.get(p)
            if run is None:
                r = kept[p]
                assert r is not None
                if r != last:  # by position, not identity: a list may hold one dict object twice
                    new_items.append(items[r])
                    last = r
                p += 1
                continue
            written = self._write_run(new_items, out[run.lead:run.end],
                                      _assigners(wire_ids, calls_before[run.lead]), run.start - run.lead)
            rewritten.extend(range(len(new_items), len(new_items) + len(written)))
            new_items.extend(written)
            last = None
            p = run.end
        return new_items, rewritten

    def _write_run(self, before: list[Any], messages: list[ChatMessage], ids: Callable[[], IdAssigner],
                   lead: int) -> list[Any]:
        """Hook of `_rebuild`: a run's items (`_write_items`), written after `before`, the new list so far (its kept
        units and written items). Default: the run's lead is all the context its writer needs."""
        return self._write_items(messages, ids, lead)

    def _read_groups(self, items: list[Any]) -> list[list[ChatMessage]]:
        """The neutral messages of each item of the conversation list, in order, one list per item (hook: every
        adapter reads its items here, or its units in `_units` and its bodies in `from_request`). The reader of
        `from_request` and of `repair_body`'s neutral route, and what the neutral side of a stub-route repair is
        worked out from on first use."""
        raise NotImplementedError(f"{type(self).__name__} reads no items: it overrides _units and from_request")

    def _write_list(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner]) -> list[Any]:
        """The whole conversation list written anew from repaired messages (hook: default `_write_items` of them
        all; an adapter whose runs are written as they stand inside a body writes a whole body's list here)."""
        return self._write_items(messages, ids, 0)

    def _write_items(self, messages: list[ChatMessage], ids: Callable[[], IdAssigner], lead: int) -> list[Any]:
        """Wire items for `messages[lead:]`, a run of repaired messages, their wire ids from a fresh `ids()`;
        the first `lead` messages are written before them for context only (the calls the run answers) and
        left out.

        Hook: the default writes the whole run as a body's list, and the lead alone to know how many items it
        makes; an adapter whose writer merges across that boundary, or moves messages out of the list (a system
        message into a top-level field), overrides it.
        """
        written = self._list_of(messages, ids())
        if not lead:
            return written
        return written[len(self._list_of(messages[:lead], ids())):]

    def _list_of(self, messages: list[ChatMessage], ids: IdAssigner) -> list[Any]:
        """The conversation list `_write_body` writes for repaired messages."""
        result = RepairResult(messages=messages, interrupted=[],
                              final_ids=[c.id for m in messages for c in m.tool_calls])
        body = self._write_body(result, ids, "model", [], None, {})
        items: list[Any] = body[self.list_key]
        return items

    # ---------------------------------------------------------------------------------------------- check

    def check(self, body: Mapping[str, Any], *, model: str | None = None,
              platform: str | None = None) -> list[Problem]:
        """The 400s this provider would answer `body` with, predicted offline (empty when none).

        `model` is the model the body goes to (default: the body's own `model`, if any); `platform` one of
        the provider's `platforms` (`"vertex"` for Gemini on Vertex AI), None for its own API.
        """
        if platform is not None and platform not in self.platforms:
            known = ", ".join(self.platforms) or "none"
            raise ValueError(f"{self.name} knows no platform {platform!r} (known: {known})")
        if model is None and isinstance(body, Mapping):
            named = body.get("model")
            model = named if isinstance(named, str) else None
        problems = self._check(body, CheckContext(model=model, platform=platform))
        problems += self._surrogate_problems(body)
        if self.empty_list_error is not None and isinstance(body, Mapping) and body.get(self.list_key) == []:
            problems.insert(0, Problem(code=EMPTY, path=self.list_key, message=self.empty_list_error,
                                       provider=self.name))
        return problems

    def _surrogate_problems(self, body: Any) -> list[Problem]:
        """`JSON`: every string of the body that holds a lone surrogate, located, in the provider's words."""
        found = find_lone_surrogates(body)
        if not found:
            return []
        stops = _parser_stops(body, len(found))
        problems = []
        for k, lone in enumerate(found):
            template = self.lone_surrogate_errors[0 if lone.high else 1]
            if "{char}" in template and stops is None:
                template = Provider.lone_surrogate_errors[0 if lone.high else 1]
            char = stops[k] if stops is not None else 0
            message = template.format(escape=lone.escape, path=lone.path, column=char + 1, char=char)
            problems.append(Problem(code=JSON, path=lone.path, message=message, provider=self.name))
        return problems

    def repair_fixes(self, body: Mapping[str, Any]) -> list[Problem]:
        """The problems `check` finds in `body` that `repair_body` fixes (counted by code: the ones the repaired
        body no longer has); empty when `repair_body` leaves the body as it is. What `chatmend check` may promise
        `chatmend repair` fixes, and nothing more."""
        found = self.check(body)
        if not found:
            return []
        try:
            repaired = self.repair_body(body)
        except ChatmendError:
            return []
        if not repaired.changed:
            return []
        return problems_gone(found, self.check(repaired.body))

    @abstractmethod
    def _check(self, body: Any, context: CheckContext) -> list[Problem]:
        """`check`'s problems of `body` (any JSON value: a malformed one is reported, never raised)."""

    @abstractmethod
    def _create(self, client: Any, body: dict[str, Any]) -> Any:
        """Call the official SDK client with the body and return its response."""

    def _create_async(self, client: Any, body: dict[str, Any]) -> Awaitable[Any]:
        """The async twin of `_create`: the same call on the SDK's async client, which returns an awaitable, handed
        back unawaited (`send_async` awaits it). Gemini overrides it: its async client is `client.aio`."""
        return cast("Awaitable[Any]", self._create(client, body))

    def check_or_raise(self, body: Mapping[str, Any], *, model: str | None = None,
                       platform: str | None = None) -> None:
        """Raise CheckError with every problem when `check` finds any."""
        problems = self.check(body, model=model, platform=platform)
        if problems:
            raise CheckError(problems, provider=self.name)

    def send(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        """Send the history with the official SDK client and return the reply as a ChatMessage."""
        body = self._sdk_body(self.to_request(history, **kwargs), kwargs)
        return self._sdk_reply(self.from_response(self._create(client, body)), kwargs)

    async def send_async(self, client: Any, history: HistoryInput, **kwargs: Any) -> ChatMessage:
        """`send` with the SDK's async client: `await provider.send_async(client, history, ...)`."""
        body = self._sdk_body(self.to_request(history, **kwargs), kwargs)
        response = await self._create_async(client, body)
        return self._sdk_reply(self.from_response(response), kwargs)

    def _sdk_body(self, body: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """What `send` hands the SDK call for a body from `to_request` (hook: Gemini adds the model)."""
        return body

    def _sdk_reply(self, reply: ChatMessage, kwargs: dict[str, Any]) -> ChatMessage:
        """The reply as `send` returns it (hook: Mistral gives tool names back as the caller's tools name them)."""
        return reply

    def entry_points(self) -> EntryPoints:
        """The methods the adapter's module exports as its functions (`EntryPoints`)."""
        return EntryPoints(self.to_request, self.from_request, self.from_response, self.check, self.repair_body,
                           self.send, self.send_async)

    def __repr__(self) -> str:
        return f"<provider {self.name}>"


def _parser_stops(body: Any, count: int) -> list[int] | None:
    """Where a parser reading the body sent compact on one line (`JSON.stringify`'s, which escapes a lone
    surrogate as `\\udXXX`) stops at each lone surrogate: the character just after its escape. None when the
    body does not serialise, or its lone surrogates are not met in `find_lone_surrogates`' order."""
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    # each earlier lone half is one character here and six (its escape) in the text sent
    stops = [match.start() + 5 * k + 6 for k, match in enumerate(LONE_HALF.finditer(text))]
    return stops if len(stops) == count else None


def _part_kind(message: ChatMessage, j: int) -> tuple[str, str]:
    """Whose a part is and its type, as an unsupported part is named: a native part by its provider's own type
    name, any other by its neutral type."""
    part = message.content[j]
    assert not isinstance(part, str)
    if isinstance(part, NativePart):
        return part.provider, part.native_type
    return "chatmend", part.type


def _assigners(wire_ids: list[str], first_call: int) -> Callable[[], IdAssigner]:
    """Fresh assigners of wire ids already made (every call's, in history order), from call `first_call` on: the
    ids are made once per body, not once per run (which made a body of many runs quadratic)."""
    def assigner() -> IdAssigner:
        ids = IdAssigner(wire_ids)
        ids.skip(first_call)
        return ids
    return assigner


def _originals_kept(repaired: BodyRepair, body: Mapping[str, Any], items: list[Any], key: str) -> BodyRepair:
    """`repaired` with every item written anew that is the same JSON as the input's item at its place kept as the
    input's own object, and not counted as rewritten: a list written anew for a problem no repair fixes (a tool
    name the provider refuses, a role it does not know) comes back as it was, and says it did not change."""
    if not repaired.rewritten:
        return repaired
    new_items: list[Any] = repaired.body[key]
    same = {k for k in repaired.rewritten if k < len(items) and k < len(new_items)
            and _same_json(new_items[k], items[k])}
    if not same:
        return repaired
    kept = [items[k] if k in same else item for k, item in enumerate(new_items)]
    if len(kept) == len(items) and all(map(operator.is_, kept, items)):
        kept_body = dict(body)
    else:
        kept_body = {**repaired.body, key: kept}
    return repaired.replace(body=kept_body, rewritten=[k for k in repaired.rewritten if k not in same])


def _flattened(rebuilt: list[Any], written_at: set[int]) -> tuple[list[Any], list[int]]:
    """The list of `_rebuild`'s entries over units (a kept unit: its items; a written entry: one item), and the
    positions of the written items in it."""
    items: list[Any] = []
    rewritten: list[int] = []
    for k, entry in enumerate(rebuilt):
        if k in written_at:
            rewritten.append(len(items))
            items.append(entry)
        else:
            items.extend(entry)
    return items, rewritten


def _same_json(a: Any, b: Any) -> bool:
    """True when two JSON values are equal with their types (`1` is not `1.0` nor `true`), keys in any order."""
    if a is b:
        return True
    if a != b:
        return False
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return False


def _in_order(kept: list[int | None]) -> bool:
    """True when the kept items come out in their input order (a moved result is kept, but elsewhere)."""
    last = -1
    for r in kept:
        if r is not None:
            if r < last:
                return False
            last = r
    return True


def _every_item_kept(kept: list[int | None], n_items: int, groups: list[list[ChatMessage]]) -> bool:
    """True when every input item is kept (items holding no message, like an empty one, count as kept)."""
    held = {r for r in kept if r is not None}
    return all(r in held or not groups[r] for r in range(n_items))


def messages_of(data: Mapping[str, Any] | Sequence[Any]) -> list[Any]:
    """The `messages` list of a saved request body, or the message list itself; a ReadError for anything else."""
    if isinstance(data, Mapping):
        items = data.get("messages")
        if not isinstance(items, list):
            raise ReadError("a request body needs a 'messages' list", path="messages")
        return items
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return list(data)
    raise ReadError(f"expected a request body or a message list, got {type(data).__name__}")


def text_field(mapping: Mapping[str, Any], key: str = "type") -> str | None:
    """`mapping[key]` when it is a string, else None: what a shape test compares with a set of names (a list or
    an object where a name goes cannot be looked up in a set)."""
    value = mapping.get(key)
    return value if isinstance(value, str) else None


def repaired(
    history: HistoryInput,
    is_read_only: IsReadOnly | None = None,
    repairer: Repairer | None = None,
    *,
    assign_ids: bool = True,
    options: RepairOptions = DEFAULT_OPTIONS,
) -> RepairResult:
    """The repaired history (by the caller's `Repairer` when given): what every adapter encodes.

    Writers take each call's id from `final_ids` in order and each result's from the calls it answers, never
    from the messages: `repair_for_writers` then spares the copies that would only carry renamed ids, and the
    list of renames (and, with `assign_ids=False`, for a writer that mints ids by position, the final ids
    themselves). With a `repairer`, `options` other than the default ones must be the Repairer's own.
    """
    if repairer is None:
        return repair_for_writers(history, is_read_only=is_read_only, assign_ids=assign_ids, renames=False,
                                  options=options)
    if is_read_only is not None:
        raise ValueError("give is_read_only to the Repairer (Repairer(is_read_only=...)), not to to_request")
    if options != repairer.options and options != DEFAULT_OPTIONS:
        raise ValueError(f"the Repairer repairs with {repairer.options}, not {options}: give the repair options to "
                         "the Repairer (one Repairer never mixes results made under different options)")
    return repairer.repair(history)


def _refuse_open_calls(result: RepairResult) -> None:
    """An UnsupportedError when `leave_open_last` left calls open: no wire format takes a call without its result
    (and writers answer a reply's calls in order with the results after it)."""
    messages = result.messages
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].tool_calls), None)
    if last is None:
        return
    calls = messages[last].tool_calls
    results = list(itertools.takewhile(lambda m: m.role == "tool", messages[last + 1:last + 1 + len(calls)]))
    if len(results) < len(calls):
        # counted: a reply may use one id twice (Gemini's call_0)
        open_calls = unmatched(calls, (m.tool_call_id for m in results), key=operator.attrgetter("id"))
        names = ", ".join(f"{c.name} ({c.id or 'no id'})" for c in open_calls)
        raise UnsupportedError(f"leave_open_last left calls open ({names}): no provider takes a call without its "
                               "result; run them and add their results first, or repair without leave_open_last",
                               feature="open tool calls")


def without_error_mark(result: RepairResult) -> RepairResult:
    """`result` with its synthetic results as plain ones (`mark="field"` for a format with no error field)."""
    messages = list(result.messages)
    runs = result.origin_runs
    ends = [*runs[2::2], len(messages)]
    for start, source, end in zip(runs[::2], runs[1::2], ends):
        if source == SYNTHETIC_SOURCE:
            for position in range(start, end):
                messages[position] = replace(messages[position], is_error=False)
    return replace(result, messages=messages)


@cache
def _id_rule(limit: int | None, alphabet: str | None) -> tuple[Callable[[str, int], str], re.Pattern[str] | None]:
    """The `make` for `wire_ids` and the run of allowed characters, for one id length and alphabet."""
    if alphabet is None:
        assert limit is not None
        return shortening_id_maker(limit), None
    return sanitizing_id_maker(limit, alphabet), re.compile(f"[{alphabet}]*")


def sanitizing_id_maker(max_length: int | None, alphabet: str) -> Callable[[str, int], str]:
    """A `make` for `wire_ids` where only `alphabet`'s characters may stand in an id: each other one becomes
    `_`, and the id is cut to `max_length`. On a retry (`attempt` > 0) a digest of the id tells them apart.

    A valid id comes back as it is. The common case costs one byte translation (a table for ASCII ids, a
    regex for others), no hashing.
    """
    allowed = re.compile(f"[{alphabet}]")
    unsafe = re.compile(f"[^{alphabet}]")
    ascii_safe = bytes(c if allowed.fullmatch(chr(c)) else ord("_") for c in range(128)) + bytes(128)
    limit = max_length if max_length is not None else 1 << 62
    keep = limit - 11  # room for "_" and the digest

    def make(tool_id: str, attempt: int) -> str:
        safe = tool_id.encode().translate(ascii_safe).decode() if tool_id.isascii() else unsafe.sub("_", tool_id)
        if attempt == 0:
            return safe[:limit] or "call"
        return f"{safe[:keep] or 'call'}_{digest(f'{tool_id}#{attempt}', 10)}"

    return make


def coerce_tools(tools: ToolsInput) -> list[Tool]:
    """Tools as `Tool` objects."""
    if not tools:
        return []
    return [t if isinstance(t, Tool) else type_adapter(Tool).validate_python(t) for t in tools]


def arguments_json(call: ToolCall) -> str:
    """The call's arguments as JSON text: the text its provider sent when a reader kept it (`raw_arguments`),
    else compact JSON; text that was not valid JSON is sent verbatim."""
    raw = call.raw_arguments
    return raw if raw is not None else arguments_text(call.arguments)


def _not_json(value: object) -> object:
    """What json.dumps says of a value it cannot write."""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The C encoder behind json.dumps, made once: json.dumps builds one per call, which costs more than writing
# the few keys of a call's arguments. No circular-reference table: arguments come from JSON (a cycle would
# end in RecursionError instead of ValueError).
_c_make_encoder: Callable[..., Any] | None = getattr(json.encoder, "c_make_encoder", None)  # None without C
_c_encoder = (_c_make_encoder(None, _not_json, encode_basestring, None, ":", ",", False, False, True)
              if _c_make_encoder is not None else None)
_python_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def arguments_text(arguments: dict[str, Any] | str) -> str:
    """Arguments as compact JSON text (what `json.dumps(..., separators=(",", ":"), ensure_ascii=False)`
    gives); text that was not valid JSON verbatim."""
    if isinstance(arguments, str):
        return arguments
    if _c_encoder is None:  # a Python without the C accelerator
        return _python_encoder(arguments)
    return "".join(_c_encoder(arguments, 0))


def image_data_url(part: ImagePart) -> str:
    """The image as a URL: its own `url`, or a `data:` URI of its base64 bytes."""
    if part.url is not None:
        return part.url
    return f"data:{part.media_type};base64,{part.data}"


def split_data_url(url: str) -> tuple[str, str] | None:
    """(media type, base64 data) of a base64 `data:` URI (the media type "" when it names none), else None."""
    if not url.startswith("data:") or ";base64," not in url:
        return None
    head, data = url[5:].split(";base64,", 1)
    return head, data


def parse_data_url(url: str) -> ImagePart:
    """An ImagePart from a URL, inline when it is a base64 `data:` URI."""
    inline = split_data_url(url)
    if inline is None:
        return ImagePart(url=url)
    return ImagePart(media_type=inline[0] or "application/octet-stream", data=inline[1])


def plain_sdk(value: Any) -> Any:
    """SDK objects (at any depth of mappings and lists) as the JSON-shaped data of their `model_dump` (`to_dict`)."""
    if isinstance(value, Mapping):
        return {key: plain_sdk(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_sdk(item) for item in value]
    if not is_sdk_object(value):
        return value
    dump = getattr(value, "model_dump", None)
    # warnings=False, as in `to_plain`: a field holding a shape newer than its type is data to read
    return plain_sdk(dump(mode="json", exclude_none=True, warnings=False) if callable(dump) else value.to_dict())


def to_plain(response: Any, *, provider: str) -> dict[str, Any]:
    """A response as a plain dict: a dict as it is, an SDK object through its `model_dump`/`to_dict`."""
    if isinstance(response, Mapping):
        return dict(response)
    for method in ("model_dump", "to_dict"):
        dump = getattr(response, method, None)
        if callable(dump):
            # warnings=False: SDK models warn when a field holds a shape newer than their type (Mistral's
            # thinking chunks in `content`), and that is data to read, not a problem.
            data = dump(mode="json", exclude_none=True, warnings=False) if method == "model_dump" else dump()
            if isinstance(data, dict):
                return data
    raise ReadError(f"expected a response dict or SDK response object, got {type(response).__name__}",
                    provider=provider)
