"""Tool call ids: the spec's final ids, `normalize_tool_id`, and collision-free per-provider wire ids."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable, Sequence

__all__ = ["FinalIds", "all_fit", "digest", "normalize_tool_id", "shortening_id_maker", "wire_ids"]

_SAFE = re.compile(r"[a-zA-Z0-9_-]+")
_UNSAFE_CHAR = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_LEN = 10


def digest(text: str, length: int = _HASH_LEN) -> str:
    """A short stable hex digest of `text` (the same in every process)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def normalize_tool_id(tool_id: str, *, max_length: int = 64) -> str:
    """An id matching `^[a-zA-Z0-9_-]+$` of at most `max_length` characters.

    A valid id comes back as it is. Otherwise other characters become `_` and a stable hash of the whole
    original id is appended (shortening the id to fit), so two different ids do not become one. An empty id
    gets a random `call_<hex>`: the one non-deterministic case, which `repair_history` never reaches.
    """
    if max_length < _HASH_LEN + 2:
        raise ValueError(f"max_length must be at least {_HASH_LEN + 2}, got {max_length}")
    if not tool_id:
        return ("call_" + secrets.token_hex(16))[:max_length]
    if len(tool_id) <= max_length and _SAFE.fullmatch(tool_id):
        return tool_id
    stem = _UNSAFE_CHAR.sub("_", tool_id)[: max_length - _HASH_LEN - 1]
    return f"{stem}_{digest(tool_id)}"


class FinalIds:
    """Allocates the spec's final ids in history order (rule 5): `call_{m}_{c}` for empty, `{id}_{k}` for repeats.

    The smallest free k for a base only grows (ids are never released), so each base remembers where its
    last search ended: a base repeated n times costs O(n) in all, not O(n²). The ids are kept twice: `used`,
    a set, answers "taken?", and `in_order` lists them as allocated (the result's final ids; `rollback`
    forgets the latest in O(their number)). One insertion-ordered dict would do both, but a lookup of a new
    id in a large dict also reads its entry table, which a long history puts far out of the CPU's cache: the
    time per message then grew with the history's length (bench/README.md has the runs).
    """

    __slots__ = ("_journal", "_next_k", "in_order", "used")

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.in_order: list[str] = []
        self._next_k: dict[str, int] = {}
        self._journal: list[tuple[str, int | None]] | None = None

    def take(self, raw_ids: Sequence[str]) -> int:
        """Rule 5's common case for the calls of one message: each id in turn is its own final id while it is
        new and not empty. Returns how many were taken (`allocate` gives the others theirs)."""
        used, in_order = self.used, self.in_order
        before = len(in_order)
        for raw_id in raw_ids:
            if not raw_id or raw_id in used:
                return len(in_order) - before
            used.add(raw_id)
            in_order.append(raw_id)
        return len(raw_ids)

    def allocate(self, raw_id: str, message_index: int, call_index: int) -> str:
        """The final id of the next call in history order, and mark it used."""
        used = self.used
        base = raw_id or f"call_{message_index}_{call_index}"
        if base not in used:
            used.add(base)
            self.in_order.append(base)
            return base
        next_k = self._next_k
        if self._journal is not None:
            self._journal.append((base, next_k.get(base)))
        k = next_k.get(base, 1)
        candidate = f"{base}_{k}"
        while candidate in used:
            k += 1
            candidate = f"{base}_{k}"
        next_k[base] = k + 1
        used.add(candidate)
        self.in_order.append(candidate)
        return candidate

    def mark(self) -> int:
        """Remember this point, so that `rollback` can forget every id allocated after it (one mark at a time)."""
        self._journal = []
        return len(self.in_order)

    def rollback(self, mark: int) -> None:
        """Forget the ids allocated since `mark()` returned `mark`, in O(their number)."""
        used, in_order, next_k, journal = self.used, self.in_order, self._next_k, self._journal or []
        while len(in_order) > mark:
            used.remove(in_order.pop())
        while journal:
            base, k = journal.pop()
            if k is None:
                del next_k[base]
            else:
                next_k[base] = k
        self._journal = None


def wire_ids(
    make: Callable[[str, int], str],
    final_ids: Sequence[str],
    max_length: int | None = None,
    allowed: re.Pattern[str] | None = None,
    *,
    first: Callable[[Sequence[str]], list[str]] | None = None,
) -> Sequence[str]:
    """The wire id of every call of a history, from its final ids in history order: collision-free.

    `make(id, attempt)` proposes a wire id; while a proposal is taken by an earlier call, the next attempt is
    asked for. Each wire id depends only on the ids before it, so a longer history keeps every wire id of a
    shorter one (prefix stability). With `max_length`, when every final id already fits (`all_fit`), they
    are the wire ids as they are: final ids are unique, and `make(id, 0)` must then be `id`. `first`, when
    given, makes every id's first proposal (`make(id, 0)`) in one go (a provider's batched digests).
    """
    if max_length is not None and all_fit(final_ids, max_length, allowed):
        return final_ids
    proposals = first(final_ids) if first is not None else [make(final_id, 0) for final_id in final_ids]
    if len(set(proposals)) == len(proposals):
        return proposals  # no first proposal is taken by an earlier one: each is its call's wire id
    taken: set[str] = set()
    wire: list[str] = []
    for final_id, proposal in zip(final_ids, proposals):
        attempt = 0
        while proposal in taken:
            attempt += 1
            proposal = make(final_id, attempt)
        taken.add(proposal)
        wire.append(proposal)
    return wire


def all_fit(final_ids: Sequence[str], max_length: int, allowed: re.Pattern[str] | None = None) -> bool:
    """True when every final id already is a wire id: 1 to `max_length` characters, all of them `allowed`.

    `allowed` matches a run of allowed characters; it is tried once on all the ids joined (one regex pass
    instead of a proposal and a set entry per call).
    """
    if not final_ids:
        return True
    lengths = set(map(len, final_ids))  # one pass over the ids (each is a memory access of its own), not two
    if max(lengths) > max_length or min(lengths) == 0:
        return False
    return allowed is None or allowed.fullmatch("".join(final_ids)) is not None


def shortening_id_maker(max_length: int) -> Callable[[str, int], str]:
    """A `make` for `wire_ids` where any character may stand in an id, but at most `max_length` of them.

    An id that fits stays as it is; a longer (or empty) one becomes its first characters, `_` and a stable digest
    of the whole id; on a retry (`attempt` > 0) the digest is salted with the attempt.
    """
    if max_length < _HASH_LEN + 2:
        raise ValueError(f"max_length must be at least {_HASH_LEN + 2}, got {max_length}")
    keep = max_length - _HASH_LEN - 1  # room for "_" and the digest

    def make(tool_id: str, attempt: int) -> str:
        if attempt == 0 and 0 < len(tool_id) <= max_length:
            return tool_id
        salt = tool_id if attempt == 0 else f"{tool_id}#{attempt}"
        return f"{tool_id[:keep]}_{digest(salt)}"

    return make
