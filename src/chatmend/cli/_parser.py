"""The command line's grammar: every command, its options and their help. A command names the module and function
that run it (`run`: `("_repair", "run_repair")`, imported only when it runs), and the choices that name formats and
providers are listed when argparse first reads them (a value checked, help printed), so that starting the program
loads neither.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from chatmend import __version__
from chatmend.cli._completion import SHELLS, script
from chatmend.cli._text import OK
from chatmend.files.io import MAX_JSON_SIZE

__all__ = ["command_line", "run_completion"]

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


def _epilog() -> str:
    """Where the formats are listed (`chatmend formats`, once), and the exit codes."""
    return ("formats: detected from content (--from overrides); `chatmend formats` lists them\n"
            "exit codes: 0 ok, 1 problems found, 2 bad input or usage, 3 internal error (a bug: please report it)\n"
            "docs: docs/ in the repository (the rules of every CODE: docs/rules.md)\n")


class _Listed(Sequence[str]):
    """Choices listed when first read (argparse reads them to check a value or print help, never to parse one)."""

    def __init__(self, names: Callable[[], list[str]]) -> None:
        self._names = names

    @cached_property
    def _listed(self) -> list[str]:
        return self._names()

    def __getitem__(self, index: Any) -> Any:
        return self._listed[index]

    def __len__(self) -> int:
        return len(self._listed)


def _readable() -> list[str]:
    """What `--from` takes: auto, or any format."""
    from chatmend.formats import formats

    return ["auto", *formats()]


def _providers() -> list[str]:
    """The registered providers' formats."""
    from chatmend.formats import provider_formats

    return list(provider_formats())


def _targets() -> list[str]:
    """What `convert --to` writes: the neutral JSON Lines or a provider's body."""
    from chatmend.formats import NEUTRAL

    return [NEUTRAL, *_providers()]


def _writable() -> list[str]:
    """What `repair --to` writes: a target of `convert`, or a transcript format."""
    from chatmend.formats import TRANSCRIPT_FORMATS

    return [*_targets(), *TRANSCRIPT_FORMATS]


def _platforms() -> list[str]:
    """Where a body may be sent besides its provider's own API (`check --platform`)."""
    from chatmend.formats import adapter

    return sorted({platform for name in _providers() for platform in adapter(name).platforms})


def run_completion(args: argparse.Namespace) -> int:
    """`chatmend completion SHELL`: the completion script on stdout."""
    sys.stdout.write(script(args.shell, command_line()))
    return OK


def command_line() -> argparse.ArgumentParser:
    """The argument parser: one subcommand a verb, each with its own help."""
    epilog = _epilog()
    parser = argparse.ArgumentParser(
        prog="chatmend",
        description="Make a saved tool-calling chat session valid to send again.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"chatmend {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    readable, names, targets = _Listed(_readable), _Listed(_providers), _Listed(_targets)

    def command(name: str, help: str, description: str) -> argparse.ArgumentParser:
        p = _subcommand(sub, name, help, description, epilog)
        p.add_argument("file", metavar="FILE", help="the session file, or - for stdin"
                       + (" (or a directory: every file under it)" if name == "check" else ""))
        p.add_argument("--from", dest="fmt", metavar="FORMAT", default="auto", choices=readable,
                       help="the format of FILE (default: detected from its content)")
        p.add_argument("--max-json-size", metavar="SIZE", type=_size, default=MAX_JSON_SIZE,
                       help="the largest line of JSON Lines, or whole JSON document, read, in bytes or with K, M, "
                            "G (default: 64M; input with no line end, or a NUL byte, is refused, not read whole)")
        p.add_argument("--session", metavar="ID",
                       help="in a store of many sessions (an opencode database...), only this one")
        return p

    repair = command("repair", "repair a session: every call answered right after it, ids unique",
                     "Repair a saved session, write it back in the format it was read in, and report "
                     "every change (on stderr, or on stdout when the session goes to a file).")
    where = repair.add_mutually_exclusive_group()
    where.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    where.add_argument("--in-place", action="store_true",
                       help="replace FILE (atomically), keeping the original as FILE.bak (or FILE.bak.N)")
    repair.add_argument("--force", action="store_true",
                        help="with --in-place: replace FILE even while another process (an agent) holds it open")
    repair.add_argument("--to", metavar="FORMAT", choices=_Listed(_writable),
                        help="write in this format instead of the one read")
    repair.add_argument("--model", metavar="M", help="the model named in a request body written with --to")
    _read_only_option(repair)
    _drop_unsupported_option(repair)
    repair.add_argument("--report", choices=["text", "json"], default="text",
                        help="the report of changes: for people (text) or for programs (json)")
    repair.set_defaults(run=("_repair", "run_repair"))

    convert = command("convert", "write a session as a provider's request body, or as neutral JSON Lines",
                      "Write the session as the request body for a provider (through its adapter, so "
                      "repaired and id-mapped), or as the neutral JSON Lines.")
    convert.add_argument("--to", metavar="PROVIDER", required=True, choices=targets,
                         help="one of: %(choices)s")
    convert.add_argument("--model", metavar="M", help="the model the body names (default: the file's own)")
    convert.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    _read_only_option(convert)
    _drop_unsupported_option(convert)
    convert.set_defaults(run=("_repair", "run_convert"))

    check = command("check", "list the problems a provider would answer with a 400",
                    "Print the problems a provider would reject the session with, one a line: "
                    "PATH: CODE: message. Exit 1 when there is any. Given a directory, checks every file "
                    "under it (FILE: PATH: CODE: message), and exits 2 when one cannot be read.")
    check.add_argument("--provider", metavar="PROVIDER", choices=names,
                       help="check against this provider (default: the format read decides); a shape it "
                            "shares with another provider is read as its own")
    check.add_argument("--model", metavar="M",
                       help="the model the body goes to, for rules that depend on it (default: the body's own)")
    check.add_argument("--platform", metavar="PLATFORM", choices=_Listed(_platforms),
                       help="where the body is sent, when not the provider's own API: one of %(choices)s")
    check.add_argument("--format", dest="output_format", choices=["text", "json"], default="text",
                       help="text: PATH: CODE: message a line; json: one document of every problem (file, path, "
                            "code, message, line, docs: its rule on docs/rules.md)")
    check.set_defaults(run=("_check", "run_check"))

    show = command("show", "print a readable timeline, marking what repair would change",
                   "Print who said what, each call with its result or its absence, and what repair "
                   "would change.")
    show.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                      help="color the output (default: when stdout is a terminal)")
    show.add_argument("--width", type=int, default=None, help="cut lines at this width (default: terminal)")
    show.set_defaults(run=("_show", "run_show"))

    trim = command("trim", "drop whole turns from the oldest end until the session fits a budget",
                   "Drop whole turns from the oldest end (never a call without its result; the system messages "
                   "at the top stay) until the session fits, and write it in the format read (or --to). Tokens "
                   "are counted roughly: a quarter of the characters of each message's neutral JSON line. "
                   "Exit 1 when not even the last turn fits (it is written anyway).")
    trim.add_argument("--max-tokens", type=_count, metavar="N", help="at most N tokens (rough count)")
    trim.add_argument("--max-messages", type=_count, metavar="N", help="at most N messages")
    trim.add_argument("--keep-first-user", action="store_true",
                      help="keep the first user message (the task) too")
    trim.add_argument("-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout")
    trim.add_argument("--to", metavar="FORMAT", choices=targets,
                      help="write in this format instead of the one read (transcripts: chatmend or a provider)")
    trim.add_argument("--model", metavar="M", help="the model named in a request body written with --to")
    trim.set_defaults(run=("_show", "run_trim"))
    _proxy_command(sub, epilog)
    _doctor_command(sub, epilog)
    listing = sub.add_parser("formats", help="list the formats every command reads", description="List the formats "
                             "every command reads (--from), the registered providers' among them.")
    listing.set_defaults(run=("_show", "run_formats"), file="-")
    completion = sub.add_parser("completion", help="print a shell completion script",
                                description="Print a completion script for bash, zsh or fish: "
                                            'eval "$(chatmend completion bash)" in ~/.bashrc (zsh: the same with zsh '
                                            "in ~/.zshrc), or chatmend completion fish > "
                                            "~/.config/fish/completions/chatmend.fish.")
    completion.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")
    completion.set_defaults(run=("_parser", "run_completion"), file="-")
    return parser


def _subcommand(sub: Any, name: str, help: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """A command's parser: its description filled to 100 columns, the exit codes and formats after its options."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=textwrap.fill(description, 100), epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser


def _size(text: str) -> int:
    """A `--max-json-size` value: bytes, or a whole number of K, M or G (KiB, MiB, GiB)."""
    match = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(?:i?B)?\s*", text, flags=re.IGNORECASE)
    if not match or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"expected a size such as 64M, 1G or 100000 (bytes), got {text!r}")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def _read_only_option(parser: argparse.ArgumentParser) -> None:
    """`--read-only`, shared by the commands that repair."""
    parser.add_argument("--read-only", metavar="NAME,NAME", action="append", default=[],
                        help="tools that only read: an interrupted call to one is safe to run again")


def _drop_unsupported_option(parser: argparse.ArgumentParser) -> None:
    """`--drop-unsupported`, shared by the commands that write for another provider."""
    parser.add_argument("--drop-unsupported", action="store_true",
                        help="leave out what the target provider cannot carry (another provider's native blocks, "
                             "a file where it takes none) and list each in the report; without it, that is an "
                             "error naming the part and where it was read (exit 2)")


def _count(text: str) -> int:
    """A `--max-*` value: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def _proxy_command(sub: Any, epilog: str) -> None:
    """`chatmend proxy`: its options (the defaults are `ProxyConfig`'s, read when the command runs)."""
    proxy = _subcommand(
        sub, "proxy", "repair every request in flight: point a client's base URL at it",
        "Serve an HTTP proxy that repairs the history of every Anthropic Messages, OpenAI Chat and Responses "
        "and Gemini request, and of every Bedrock Converse request, in its own format and forwards it to the "
        "upstream API, streaming the answer back as it comes. Point ANTHROPIC_BASE_URL at http://HOST:PORT, "
        "OPENAI_BASE_URL at http://HOST:PORT/v1, AWS_ENDPOINT_URL_BEDROCK_RUNTIME at http://HOST:PORT. "
        "Needs pip install 'chatmend[proxy]'.", epilog)
    proxy.add_argument("--host", help="the address to listen on (default 127.0.0.1: this machine only; any other "
                                      "needs --token)")
    proxy.add_argument("--token", help="a secret every client must send (header x-chatmend-token: TOKEN, or "
                                       "Proxy-Authorization: Bearer TOKEN); default: $CHATMEND_PROXY_TOKEN, which "
                                       "other users cannot read in the process list")
    proxy.add_argument("--port", type=int, help="the port to listen on (default 8787)")
    proxy.add_argument("--upstream", metavar="NAME=URL", action="append", default=[],
                       help="where a route family goes: anthropic, openai (a base ending in /v1, as the OpenAI "
                            "SDK's base_url), gemini or bedrock (a bedrock-runtime endpoint); default: the "
                            "providers' own APIs (Bedrock's in us-east-1)")
    proxy.add_argument("--chat-provider", metavar="PROVIDER",
                       help="the adapter for /v1/chat/completions when the openai upstream is an OpenAI-compatible "
                            "service (kimi, mistral, ...)")
    proxy.add_argument("--config", metavar="FILE", help="a JSON file of settings (options given here win)")
    proxy.add_argument("--dry-run", action="store_true", help="log what repair would change, forward the original")
    proxy.add_argument("--max-body-bytes", type=int, metavar="N", help="answer 413 above this (default 32 MiB)")
    proxy.add_argument("--max-inflight-bytes", type=int, metavar="N",
                       help="request bodies read, repaired and sent at once, in bytes; a request past it gets 503 "
                            "with Retry-After: 1, which the SDKs retry (default 128 MiB)")
    proxy.add_argument("--log-json", action="store_true", help="every log line one JSON object")
    proxy.add_argument("--log-level", choices=("debug", "info", "warning", "error"),
                       help="the proxy's own log level (default info; uvicorn and httpx2 log warnings only, "
                            "unless debug); keys are never logged")
    proxy.add_argument("--workers", type=int, metavar="N", help="worker processes (default 1; the proxy is "
                                                                "stateless)")
    proxy.add_argument("--sign-bedrock", action="store_true",
                       help="sign each Bedrock request again (SigV4) with this process's AWS credentials, so a "
                            "SigV4-signed request can be repaired and sent on to the upstream's host; without it "
                            "a signed request is forwarded as it came, unrepaired")
    proxy.add_argument("--grace-seconds", type=float, metavar="S",
                       help="on SIGTERM, how long in-flight streams may take to finish (default 30)")
    proxy.set_defaults(run=("_proxy", "run_proxy"), file=None)


def _doctor_command(sub: Any, epilog: str) -> None:
    """`chatmend doctor`: its options."""
    doctor = _subcommand(
        sub, "doctor", "find every saved session of every agent tool that would be refused, and fix them",
        "With no PATH, scan the default locations of every supported tool (Claude Code, honouring "
        "CLAUDE_CONFIG_DIR; Codex, CODEX_HOME, archived sessions too; Gemini CLI, GEMINI_CLI_HOME; opencode, "
        "OPENCODE_DB and XDG_DATA_HOME; and every other registered store), or the PATHs given (files, stores, "
        "folders), and print a table: tool, session, last modified, status and the problems found. --fix repairs every "
        "broken session in place after a backup and says how to resume it. A session in use (modified in "
        "the last minute, held open by another process, or its database locked) is reported and left "
        "alone unless --force. An empty session file is skipped. "
        "Exit 1 when a session is still broken (or cannot be read).", epilog)
    doctor.add_argument("paths", metavar="PATH", nargs="*", help="session files, stores or folders to scan "
                                                                  "(default: every tool's own locations)")
    doctor.add_argument("--fix", action="store_true", help="repair every broken session in place, after a backup")
    doctor.add_argument("--force", action="store_true",
                        help="also fix sessions in use (modified in the last minute, or a locked database)")
    doctor.add_argument("--json", action="store_true", help="one JSON object a session, for programs")
    doctor.add_argument("--workers", type=int, metavar="N", help="processes scanning in parallel (default: CPUs)")
    doctor.set_defaults(run=("_doctor", "run_doctor"), file="chatmend doctor")
