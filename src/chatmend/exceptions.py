"""Every error chatmend raises on purpose, and the `Problem` value that `check()` returns.

The tree::

    ChatmendError
    ├── HistoryError (ValueError)       bad neutral input: .index, .field, .line, .column
    ├── InputError (ValueError)         a file or stream the command line cannot read: .line, .column
    ├── ReadError (ValueError)          a provider body, response or transcript that cannot be read
    ├── UnsupportedError                neutral content a provider cannot carry
    ├── CheckError (ValueError)         problems found, raised only when asked for
    └── UnknownProviderError (KeyError) a provider name that is not registered
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import attrgetter
from typing import TypeVar

__all__ = [
    "ChatmendError",
    "CheckError",
    "HistoryError",
    "InputError",
    "Problem",
    "ReadError",
    "UnknownProviderError",
    "UnsupportedError",
    "error_context",
    "model_rejections_at",
    "unmatched",
    "validation_reason",
]

_T = TypeVar("_T")


class ChatmendError(Exception):
    """Base of every error chatmend raises on purpose."""


class HistoryError(ChatmendError, ValueError):
    """A neutral history that cannot be read: says which message (or file line) and which field."""

    def __init__(
        self,
        message: str,
        *,
        index: int | None = None,
        field: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.reason = message
        self.index = index
        self.field = field
        self.line = line
        self.column = column
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}" if self.column is None else f"line {self.line} column {self.column}")
        if self.index is not None:
            where.append(f"message {self.index}")
        if self.field:
            where.append(f"field {self.field!r}")
        return f"{', '.join(where)}: {self.reason}" if where else self.reason

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_history_error, (self.reason, self.index, self.field, self.line, self.column))


def _rebuild_history_error(
    reason: str, index: int | None, field: str | None, line: int | None, column: int | None
) -> HistoryError:
    return HistoryError(reason, index=index, field=field, line=line, column=column)


class InputError(ChatmendError, ValueError):
    """Input that cannot be read (a file, stdin): where (line, column) and what was expected."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        super().__init__(self.in_file("<input>"))

    def in_file(self, file: str) -> str:
        """`FILE:LINE:COL: message`, leaving out what is unknown."""
        where = file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_input_error, (self.message, self.line, self.column))


def _rebuild_input_error(message: str, line: int | None, column: int | None) -> InputError:
    return InputError(message, line=line, column=column)


class _InBody(ChatmendError):
    """An error at a place of a provider's body: `provider: path: reason`, leaving out what is unknown
    (`error_context` fills in the provider and the path on the way out)."""

    def __init__(self, message: str, *, provider: str | None = None, path: str | None = None) -> None:
        self.reason = message
        self.provider = provider
        self.path = path
        super().__init__(self._render())

    def _render(self) -> str:
        where = ": ".join(x for x in (self.provider, self.path) if x)
        return f"{where}: {self.reason}" if where else self.reason


class ReadError(_InBody, ValueError):
    """A provider body, response or saved transcript that cannot be read into the neutral model."""

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_read_error, (self.reason, self.provider, self.path))


def _rebuild_read_error(reason: str, provider: str | None, path: str | None) -> ReadError:
    return ReadError(reason, provider=provider, path=path)


class UnsupportedError(_InBody):
    """Neutral content that the target provider cannot carry (every such place, collected)."""

    def __init__(self, message: str, *, provider: str | None = None, path: str | None = None,
                 feature: str | None = None) -> None:
        self.feature = feature
        super().__init__(message, provider=provider, path=path)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_unsupported, (self.reason, self.provider, self.path, self.feature))


def _rebuild_unsupported(reason: str, provider: str | None, path: str | None,
                         feature: str | None) -> UnsupportedError:
    return UnsupportedError(reason, provider=provider, path=path, feature=feature)


@dataclass(frozen=True)
class Problem:
    """One reason a provider would answer a request body with a 400, predicted offline."""

    code: str
    """The rule's id in the rules page (docs/rules.md), e.g. `AN1`."""
    path: str
    """Where in the body, e.g. `messages[3].content[0]`."""
    message: str
    """The provider's own wording of the error."""
    provider: str = ""
    """The provider whose rule this is."""

    def __str__(self) -> str:
        return f"{self.path}: {self.code}: {self.message}"


def problems_gone(before: Sequence[Problem], after: Iterable[Problem]) -> list[Problem]:
    """The problems of `before` that `after` (the problems of the body repaired) no longer has, counted by code:
    what a repair fixed."""
    return unmatched(before, (problem.code for problem in after), key=attrgetter("code"))


def unmatched(items: Iterable[_T], keys: Iterable[Hashable], *, key: Callable[[_T], Hashable]) -> list[_T]:
    """The items, in order, left once each of `keys` has matched the first item of its key not yet matched (counted,
    as a multiset: two equal keys match two items)."""
    remaining = Counter(keys)
    left = []
    for item in items:
        k = key(item)
        if remaining[k]:
            remaining[k] -= 1
        else:
            left.append(item)
    return left


class CheckError(ChatmendError, ValueError):
    """A body that the provider would reject; carries every problem found, not just the first."""

    def __init__(self, problems: Sequence[Problem], *, provider: str | None = None) -> None:
        self.problems = list(problems)
        self.provider = provider
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{provider or 'provider'} would reject this body ({len(self.problems)} problems):\n{lines}")

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_check_error, (self.problems, self.provider))


def _rebuild_check_error(problems: list[Problem], provider: str | None) -> CheckError:
    return CheckError(problems, provider=provider)


class UnknownProviderError(ChatmendError, KeyError):
    """A provider name that is not registered; suggests the nearest one."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        import difflib

        self.name = name
        self.known = list(known)
        close = difflib.get_close_matches(name, self.known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        self.text = f"unknown provider {name!r}; known: {', '.join(self.known)}.{hint}"
        super().__init__(self.text)

    def __str__(self) -> str:
        return self.text

    def __reduce__(self) -> tuple[object, ...]:
        return (UnknownProviderError, (self.name, self.known))


def _joined(outer: str, inner: str | None) -> str:
    """`inner`, a path within `outer`, as one path: `messages[3]` and `content[0]` make `messages[3].content[0]`,
    `system` and `[2]` make `system[2]`."""
    if not inner:
        return outer
    return f"{outer}{inner}" if inner.startswith("[") else f"{outer}.{inner}"


@contextmanager
def error_context(*, provider: str | None = None, path: str | None = None) -> Iterator[None]:
    """Fill in the provider of a ReadError or UnsupportedError leaving the block, and put `path` before its path
    (`content[0].source` inside `messages[3]` is `messages[3].content[0].source`; a path of its own starting with
    `[` is an index: `[2]` inside `system` is `system[2]`). A value the neutral model rejects becomes a ReadError
    at `path`."""
    try:
        yield
    except HistoryError as exc:
        raise ReadError(validation_reason(exc), provider=provider, path=path) from None
    except _InBody as exc:
        if exc.provider is None and provider is not None:
            exc.provider = provider
        if path is not None:
            exc.path = _joined(path, exc.path)
        exc.args = (exc._render(),)
        raise


@contextmanager
def model_rejections_at(path: str) -> Iterator[None]:
    """A value the neutral model rejects (a number where a name goes) as a ReadError at `path`, for readers that
    raise their own errors with whole paths (which `error_context(path=...)` would prefix again)."""
    try:
        yield
    except HistoryError as exc:
        raise ReadError(validation_reason(exc), path=path) from None


def validation_reason(error: HistoryError) -> str:
    """A model's refusal of a value read from outside, in a reader's words: `field: why`."""
    return f"{error.field}: {error.reason}" if error.field else error.reason
