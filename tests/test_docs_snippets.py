"""Every code block of the README and of the docs runs here, as a reader would run it.

- `python` blocks run in a fresh interpreter each, in a scratch folder holding a copy of `examples/` (a block
  marked `<!-- continues -->` runs after the blocks before it on its page, as one script). A block marked
  `<!-- extra: NAME -->` runs with only what `pip install '.[NAME]'` brings importable (every other installed
  distribution refuses to import), so the extra is proven to carry what its snippet needs.
- `sh` blocks run line by line with bash in the same scratch folder, `chatmend` on the PATH and an empty home (so
  `chatmend doctor` scans no real session); each line must exit as the block's `<!-- exit: N -->` says (0 when not
  said). A `pip install` line is resolved by pip itself against this checkout (`--dry-run`: every extra it names
  exists, and everything it needs is what the test install has); `python3 -m venv .venv` and the README's test
  command are what `.ci/run` runs on a fresh clone (tests/test_readme.py). `<!-- run: background -->` starts a
  server (`chatmend proxy`, on a free port instead of the one written) and waits for its `/healthz`.
- `json` blocks parse (one document, or JSON Lines), and `text` is only the verbatim quotation of the spec on
  the rules page.
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BIN = Path(sys.executable).parent
LANGUAGES = {"python", "sh", "json", "text"}
CI_TEST_COMMAND = ("python3 -m venv .venv && .venv/bin/pip install -q --no-compile -e '.[dev]' "
                   "&& .venv/bin/ruff check . && .venv/bin/mypy && .venv/bin/pytest -q -n auto "
                   "&& (cd js && npm ci --no-audit --no-fund && npm test)")


@dataclass
class Block:
    """One fenced code block of a page, with the directives in the HTML comments right above it."""

    page: Path
    line: int
    lang: str
    code: str
    directives: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\S*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        directives: dict[str, str] = {}
        j = i - 1
        while j >= 0 and (comment := re.match(r"^<!-- (\w+)(?:: (.*?))? -->$", lines[j])):
            directives[comment.group(1)] = comment.group(2) or ""
            j -= 1
        end = lines.index("```", i + 1)
        found.append(Block(page, i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n", directives))
        i = end + 1
    return found


ALL = [block for page in PAGES for block in blocks_of(page)]


def _of(lang: str) -> list[Block]:
    return [b for b in ALL if b.lang == lang]


def test_every_block_has_a_language_this_file_runs() -> None:
    assert ALL, "no code blocks found"
    assert {b.name: b.lang for b in ALL if b.lang not in LANGUAGES} == {}


def test_text_blocks_are_only_the_quoted_spec() -> None:
    assert [b.name for b in _of("text")] == [f"docs/rules.md:{_of('text')[0].line}"]
    assert "function repairHistory(messages, opts?): object;" in _of("text")[0].code


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A folder of the block's own holding a copy of `examples/` (a block may repair them in place), its files last
    modified two days ago (`doctor` leaves a session modified in the last minute alone, as in use), and an empty
    home."""
    where = tmp_path
    shutil.copytree(ROOT / "examples", where / "examples")
    old = time.time() - 2 * 86400
    for path in (where / "examples").rglob("*"):
        os.utime(path, (old, old))
    (where / "home").mkdir()
    return where


def _env(scratch: Path) -> dict[str, str]:
    """The environment of a snippet: this test install first on the PATH, an empty home, no agent's own folders
    named, and placeholder API keys (a snippet builds clients and agents; none sends a request)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CLAUDE_", "CODEX_", "GEMINI_", "OPENCODE_", "GOOSE_", "KIMI_", "XDG_"))}
    env.update(HOME=str(scratch / "home"), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", NO_COLOR="1",
               OPENAI_API_KEY="sk-placeholder", ANTHROPIC_API_KEY="sk-ant-placeholder",
               GEMINI_API_KEY="placeholder", MISTRAL_API_KEY="placeholder",
               LITELLM_LOCAL_MODEL_COST_MAP="True")  # LiteLLM fetches its price list on import otherwise
    return env


# --- python -------------------------------------------------------------------------------------------------------

_BLOCKER = '''
import sys
from importlib.abc import MetaPathFinder

class _OnlyTheExtra(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in ALLOWED or top.startswith("_"):
            return None
        raise ModuleNotFoundError(f"No module named {top!r} (not brought by chatmend[{EXTRA}])", name=top)

sys.meta_path.insert(0, _OnlyTheExtra())
'''


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extra_closure(extra: str) -> set[str]:
    """The distributions `pip install '.[EXTRA]'` installs: chatmend's requirements with that extra, and theirs
    (with the extras they are asked with), as the installed metadata says, by normalised name."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo: list[tuple[str, frozenset[str]]] = [("chatmend", frozenset({extra}))]
    names: set[str] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # a requirement for another platform or Python
        names.add(_normal(name))
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in {"", *extras}):
                todo.append((req.name, frozenset(req.extras)))
    return names


@functools.cache
def _modules() -> Mapping[str, list[str]]:
    """Each importable top-level module, with the installed distributions that provide it."""
    return metadata.packages_distributions()


def _allowed_modules(extra: str) -> set[str]:
    closure = extra_closure(extra)
    return {module for module, dists in _modules().items() if any(_normal(d) in closure for d in dists)} | {"chatmend"}


def _python_source(block: Block) -> str:
    """The block's code, after the blocks before it on its page when it says `<!-- continues -->`."""
    if "continues" not in block.directives:
        return block.code
    page = [b for b in _of("python") if b.page == block.page]
    before = page[:page.index(block)]
    start = max((i for i, b in enumerate(before) if "continues" not in b.directives), default=0)
    return "\n".join(b.code for b in [*before[start:], block])


@pytest.mark.parametrize("block", _of("python"), ids=lambda b: b.name)
def test_python_block_runs(block: Block, scratch: Path) -> None:
    source = _python_source(block)
    extra = block.directives.get("extra")
    if extra is not None:
        source = f"ALLOWED = {sorted(_allowed_modules(extra))!r}\nEXTRA = {extra!r}\n{_BLOCKER}\n{source}"
    done = subprocess.run([sys.executable, "-c", source], cwd=scratch, env=_env(scratch), capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, f"{block.name}:\n{source}\n--- stderr:\n{done.stderr[-3000:]}"


def test_the_extra_blocker_refuses_what_an_extra_does_not_bring(scratch: Path) -> None:
    """The pydantic-ai snippet's model needs `openai`: the extra brings it; the `llama-index` extra does not."""
    assert "openai" in _allowed_modules("pydantic-ai")
    assert "langchain_openai" in _allowed_modules("langchain")
    assert "litellm" in _allowed_modules("litellm")
    assert "pydantic_ai" not in _allowed_modules("llama-index")
    source = f"ALLOWED = {sorted(_allowed_modules('llama-index'))!r}\nEXTRA = 'llama-index'\n{_BLOCKER}\nimport openai"
    done = subprocess.run([sys.executable, "-c", source], cwd=scratch, env=_env(scratch), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert "not brought by chatmend[llama-index]" in done.stderr


# --- sh -----------------------------------------------------------------------------------------------------------

def _commands(block: Block) -> list[str]:
    """The block's command lines (a line ending in a backslash goes on), without blank ones."""
    return [line for line in block.code.replace("\\\n", " ").splitlines() if line.strip()]


def _pip_install(command: str) -> None:
    """`pip install [-q] TARGET`, a checkout's `.` with or without extras: pip resolves it against this checkout
    and the test install (`--dry-run --no-index`), and refuses an extra the project does not have."""
    words = shlex.split(command)
    targets = [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    assert len(targets) == 1 and re.fullmatch(r"\.(\[[a-z,-]+\])?", targets[0]), command
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-build-isolation",
                           "--quiet", f"{ROOT}{targets[0][1:]}"], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "does not provide the extra" not in done.stderr, done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(command: str, scratch: Path) -> None:
    """Start a server command on a free port, wait for its `/healthz`, then stop it with SIGTERM."""
    port = _free_port()
    command = re.sub(r"--port \d+", f"--port {port}", command)
    assert f"--port {port}" in command, "a background block names its port, so the test can move it"
    log = scratch / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=scratch, env=_env(scratch), stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        status = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/healthz")
                status = conn.getresponse().status
                conn.close()
                break
            except OSError:
                time.sleep(0.2)
        assert status == 200, f"{command}: no /healthz (exit {server.poll()})\n{log.read_text(errors='replace')}"
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _run_line(line: str, expected: int, scratch: Path) -> None:
    done = subprocess.run(["bash", "-c", line], cwd=scratch, env=_env(scratch), capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == expected, f"{line}\nexit {done.returncode}, expected {expected}\n{done.stderr[-3000:]}"


@pytest.mark.parametrize("block", _of("sh"), ids=lambda b: b.name)
def test_sh_block_runs(block: Block, scratch: Path) -> None:
    expected = int(block.directives.get("exit", "0"))
    for line in _commands(block):
        command = line.split(" #", 1)[0].strip()
        if command == CI_TEST_COMMAND:
            assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
            continue
        rest = []
        for part in command.split(" && "):
            if part == "python3 -m venv .venv":
                continue  # the test install stands for it (CI makes one on a fresh clone: .ci/run)
            if re.match(r"^(\.venv/bin/)?pip install ", part):
                _pip_install(part)
                continue
            rest.append(part.removeprefix(".venv/bin/"))
        if not rest:
            continue
        if block.directives.get("run") == "background":
            _serve(" && ".join(rest), scratch)
        else:
            _run_line(" && ".join(rest), expected, scratch)


# --- json ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("block", _of("json"), ids=lambda b: b.name)
def test_json_block_parses(block: Block) -> None:
    """One JSON document, or several one after the other (JSON Lines, or messages written over several lines)."""
    decoder = json.JSONDecoder()
    text = block.code.strip()
    values = []
    while text:
        value, end = decoder.raw_decode(text)
        values.append(value)
        text = text[end:].strip()
    assert values and all(isinstance(v, (dict, list)) for v in values)
