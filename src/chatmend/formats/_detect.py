"""Which format a file is in, decided from its content (never from its name).

Each check looks for shapes only one format has (a `tool_use` block, a `functionCall` part, a `payload`
envelope); when the signs conflict or there are none that matter, detection says so and asks for `--from`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chatmend import providers
from chatmend.files.io import InputError, json_kind
from chatmend.providers.base import Provider, text_field
from chatmend.transcripts.stores import file_formats

__all__ = ["NEUTRAL", "detect_document", "detect_records"]

SAMPLE = 200
"""How many records or messages detection looks at."""
NEUTRAL = "chatmend"
"""The neutral format's name."""


def _adapters() -> list[Provider]:
    """Every registered provider, in the registry's order."""
    return [providers.get(name) for name in providers.names()]


def _own_lists(adapters: Sequence[Provider]) -> list[Provider]:
    """The providers whose list key no other provider shares: their bodies and items tell themselves apart."""
    keys = [p.list_key for p in adapters]
    return [p for p in adapters if keys.count(p.list_key) == 1]


def _chat_shapes(adapters: Sequence[Provider]) -> list[Provider]:
    """The other providers that speak a shape of their own, the one plain text is read as first."""
    own = set(map(id, _own_lists(adapters)))
    shapes = [p for p in adapters if id(p) not in own and p.shape_of is None]
    return sorted(shapes, key=lambda p: not p.plain_default)


def _family(owner: Provider, adapters: Sequence[Provider]) -> list[Provider]:
    """A shape's provider and the providers that speak its shape."""
    return [p for p in adapters if p is owner or p.shape_of == owner.name]


def _unsure(what: str, candidates: Sequence[str], prefer: str | None) -> str:
    """`prefer` when it is among the candidates; else the error that says detection is unsure and which `--from`
    to give."""
    if prefer is not None and prefer in candidates:
        return prefer
    options = " or ".join(f"--from {c}" for c in candidates)
    raise InputError(f"cannot tell the format: {what}; say which with {options}")


def detect_document(value: object, prefer: str | None = None) -> str:
    """The format of a whole JSON document: a request body or a message/item/content list (`prefer`, a
    provider's name: the one read as when the shape is shared)."""
    adapters = _adapters()
    for store in file_formats().values():
        if store.holds_document is not None and store.holds_document(value):
            return store.name
    if isinstance(value, Mapping):
        for provider in _own_lists(adapters):
            if provider.holds_history(value):
                return provider.name
        messages = value.get("messages")
        if isinstance(messages, list):
            return _classify_messages(messages, value, adapters, allow_neutral=False, plain=None, prefer=prefer)
        keys = sorted({f"'{p.list_key}'" for p in adapters}, key=lambda k: (k != "'messages'", k))
        raise InputError(f"a JSON object with no {', '.join(keys[:-1])} or {keys[-1]} list; expected a request "
                         "body or a list of messages")
    if isinstance(value, list):
        if not value:
            raise InputError("an empty list; expected a list of messages")
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise InputError(f"[{i}]: expected a message (a JSON object), got {json_kind(item)}")
        plain = _chat_shapes(adapters)[0].name
        return _classify_items(value, adapters, allow_neutral=True, plain=plain, prefer=prefer)
    raise InputError(f"the file holds {json_kind(value)}; expected a request body (a JSON object) or a list of "
                     "messages")


def detect_records(records: Sequence[object], prefer: str | None = None) -> str:
    """The format of JSON Lines from its first records."""
    objects = [r for r in records[:SAMPLE] if isinstance(r, Mapping)]
    if not objects:
        return NEUTRAL  # let the neutral reader say what is wrong with the first line
    for store in file_formats().values():
        if store.holds_records is not None and store.holds_records(objects):
            return store.name
    if len(records) == 1 and not isinstance(objects[0].get("role"), str):
        return detect_document(objects[0], prefer)
    return _classify_items(objects, _adapters(), allow_neutral=True, plain=NEUTRAL, prefer=prefer)


def _listed(value: object) -> list[Any]:
    """A field that should hold a list, as one (anything else holds no items to look at)."""
    return value if isinstance(value, list) else []


def _classify_items(items: Sequence[Any], adapters: Sequence[Provider], *, allow_neutral: bool, plain: str,
                    prefer: str | None) -> str:
    """Items of a provider's own list shape (Gemini contents, Responses items), or chat messages of some shape."""
    sample = [i for i in items[:SAMPLE] if isinstance(i, Mapping)]
    for provider in _own_lists(adapters):
        if any(provider.marks(i) for i in sample):
            return provider.name
    return _classify_messages(sample, None, adapters, allow_neutral=allow_neutral, plain=plain, prefer=prefer)


def _neutral_signs(message: Mapping[str, Any]) -> bool:
    """True when a message has fields or parts only the neutral form has."""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls and all(
            isinstance(c, Mapping) and "name" in c and "function" not in c for c in calls):
        return True
    content = message.get("content")
    return "tool_name" in message or "is_error" in message or "provider_data" in message or (
        isinstance(content, list)
        and any(isinstance(p, Mapping) and p.get("type") == "image" and "media_type" in p for p in content)
    )


def _classify_messages(
    messages: Sequence[Any], body: Mapping[str, Any] | None, adapters: Sequence[Provider], *, allow_neutral: bool,
    plain: str | None, prefer: str | None,
) -> str:
    """Which chat shape (then which provider speaking it), or the neutral form."""
    shapes = _chat_shapes(adapters)
    default, others = shapes[0], shapes[1:]
    marked: set[str] = set()  # shapes whose own signs some message bears
    ruled_out: set[str] = set()  # shapes without the role of some message
    neutral = False
    ids: list[str] = []
    for message in messages[:SAMPLE]:
        if not isinstance(message, Mapping):
            continue
        here = {p.name for p in shapes if p.marks(message)}
        signed = _neutral_signs(message)
        marked |= here
        neutral = neutral or signed
        role = text_field(message, "role")  # a list or an object there is no role any shape has
        for other in others:
            # a tool message bearing another shape's signs (or the neutral one's) rules out no shape
            if other.roles and role not in other.roles and not (role == "tool" and (here or signed)):
                ruled_out.add(other.name)
        for call in _listed(message.get("tool_calls")):
            if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                ids.append(call["id"])
    if body is not None:
        marked |= {p.name for p in shapes if p.marks_body(body)}
    model = body.get("model") if body is not None else None
    for other in others:
        if other.name in marked and (default.name in marked or other.name in ruled_out or neutral):
            return _unsure(f"the messages mix {default.title} and {other.title} shapes",
                           [default.name, other.name], prefer)
        if other.name in marked:
            return _pick(other, adapters, model, ids, prefer)
    if neutral and allow_neutral:
        if default.name in marked:
            return _unsure(f"the messages mix neutral and {default.title} shapes", [NEUTRAL, default.name],
                           prefer)
        return NEUTRAL
    if ruled_out and plain == NEUTRAL and default.name not in marked:
        return plain  # tool and system roles read the same in the neutral form
    if default.name in marked or ruled_out or any(p.serves(model) for p in _family(default, adapters)):
        return _pick(default, adapters, model, ids, prefer)
    for other in others:
        if any(p.serves(model) for p in _family(other, adapters)):
            return _pick(other, adapters, model, ids, prefer)
    if prefer in {p.name for shape in shapes for p in _family(shape, adapters)}:
        assert prefer is not None
        return prefer  # plain text: the shape the caller names
    if plain is not None:
        return plain  # plain text messages read the same in every chat shape
    names = [p.title for p in shapes]
    titles = " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"
    return _unsure(f"the messages hold only plain text, which {titles} share", [p.name for p in shapes], prefer)


def _pick(owner: Provider, adapters: Sequence[Provider], model: object, ids: Sequence[str],
          prefer: str | None) -> str:
    """The provider of a shape's family: the one preferred, the body's model's, the one whose ids these are,
    or the shape's own."""
    family = _family(owner, adapters)
    chosen = (next((p for p in family if p.name == prefer), None) or next((p for p in family if p.serves(model)), None)
              or next((p for p in family if p.claims_ids(ids)), owner))
    return chosen.name
