"""`chatmend check --format json`: the problems for programs, each with its file, path, code, message, line and
the link to its rule on the docs' rules page.

The document is one JSON object on stdout:

    {"problems": [{"file", "session", "path", "code", "message", "line", "docs"}, ...],
     "files": N, "unreadable": [{"file", "error"}, ...]}

`session` is the session's id in a store of many (else null), `line` the line of the file the problem was read
from (else null), `docs` the rule's anchor (`docs/rules.md#an1`; null for a line with no rule id). Exit codes are
those of `check`: 0 no problem, 1 problems, 2 a file that cannot be read (the others are still checked).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

from chatmend.cli._text import BAD_INPUT, OK, PROBLEMS, display
from chatmend.formats import InputError

__all__ = ["parse_line", "run_check_json"]

RULE_ID = r"R\d|[A-Z]{2}\d{1,2}[a-z]?|EMPTY|SHAPE|UNSUPPORTED"
_LINE = re.compile(
    rf"^(?:session (?P<session>\S+): )?(?:line (?P<at>\d+): )?(?P<path>.*?): (?P<code>{RULE_ID}): (?P<message>.*?)"
    r"(?: \(line (?P<line>\d+)[^()]*\))?$", re.DOTALL)


def parse_line(text: str, file: str) -> dict[str, Any]:
    """One of `check`'s lines (`[session ID: ][line N: ]PATH: CODE: message[ (line N)]`) as a problem object; a line
    of no such shape is kept whole as its message, with no code."""
    from chatmend.cli._check import rule_anchor

    match = _LINE.match(text)
    if match is None:
        return {"file": file, "session": None, "path": None, "code": None, "message": text, "line": None,
                "docs": None}
    line = match.group("line") or match.group("at")
    return {"file": file, "session": match.group("session"), "path": match.group("path"), "code": match.group("code"),
            "message": match.group("message"), "line": int(line) if line else None,
            "docs": rule_anchor(match.group("code"))}


def run_check_json(args: argparse.Namespace) -> int:
    """`chatmend check FILE|DIR|STORE --format json`."""
    from chatmend.cli._check import check_file, file_problem_lines, files_to_check, store_problem_lines
    from chatmend.cli._shared import store_of

    problems: list[dict[str, Any]] = []
    unreadable: list[dict[str, str]] = []
    store = store_of(args)
    if store is not None:
        with store:
            lines, _ = store_problem_lines(store, args)
        problems = [parse_line(line, display(args.file)) for line in lines]
        paths = [args.file]
    elif os.path.isdir(args.file):
        paths = files_to_check(args.file)
        for path in paths:
            lines, error = check_file(path, args)
            if error is not None:
                unreadable.append({"file": path, "error": error.in_file(path) if isinstance(error, InputError)
                                   else str(error)})
            problems += [parse_line(line, path) for line in lines]
    else:
        paths = [args.file]
        lines, _ = file_problem_lines(args.file, args)
        problems = [parse_line(line, display(args.file)) for line in lines]
    json.dump({"problems": problems, "files": len(paths), "unreadable": unreadable}, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    sys.stdout.flush()
    return BAD_INPUT if unreadable else PROBLEMS if problems else OK
