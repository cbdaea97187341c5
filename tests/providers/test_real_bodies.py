"""Every real request body in ../shared/real-world (issue #43): the bodies the provider accepted check clean and
come back from `repair` byte for byte; the ones it refused, or would refuse, are found, repaired and re-check
clean.

The bodies are read in place (pydantic-ai's cassettes, the claude-nexus captures of Claude Code, the
mistral-common samples), never copied; every test skips when ../shared is absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from chatmend import providers
from chatmend.cli import main
from chatmend.formats import read

ROOT = Path(__file__).resolve().parents[2]
REAL_WORLD = ROOT.parent / "shared" / "real-world"

_BY_URI = {"api.anthropic.com/v1/messages": "anthropic", "/chat/completions": "openai_chat",
           "/responses": "openai_responses", "generativelanguage.googleapis.com": "gemini"}


@dataclass(frozen=True)
class RealBody:
    """One request body as it was sent, and what the provider answered."""

    name: str
    provider: str
    body: dict[str, Any]
    status: int | None
    """The HTTP status recorded with it (None: not recorded)."""


def _provider_of(uri: str) -> str:
    if "api.mistral.ai" in uri:
        return "mistral"
    if "api.deepseek.com" in uri and "/chat/completions" in uri:
        return "deepseek"
    return next(name for part, name in _BY_URI.items() if part in uri)


def real_bodies() -> Iterator[RealBody]:
    """The request bodies of section B of ../shared/real-world/README.md."""
    yaml = pytest.importorskip("yaml")
    for path in sorted(REAL_WORLD.glob("pydantic__pydantic-ai__*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for k, interaction in enumerate(data.get("interactions", [])):
            request = interaction.get("request", {})
            if isinstance(request.get("parsed_body"), dict):
                yield RealBody(f"{path.name}[{k}]", _provider_of(request["uri"]), request["parsed_body"],
                               interaction["response"]["status"]["code"])
    for path in sorted(REAL_WORLD.glob("Moonsong-Labs__claude-nexus__*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for side in ("parent", "child"):
            if isinstance(data.get(side), dict) and isinstance(data[side].get("body"), dict):
                yield RealBody(f"{path.name}:{side}", "anthropic", data[side]["body"], None)
    for path in sorted(REAL_WORLD.glob("mistralai__mistral-common__*.json")):
        yield RealBody(path.name, "mistral", json.loads(path.read_text(encoding="utf-8")), None)


REFUSED = {
    # mistral-common's sample with two parallel calls under one id, answered twice (MI4 in Mistral's words)
    "parallel_calls__sample": "MI4",
}
"""The bodies the provider refused or would refuse, by a part of their name, with the rule `check` finds."""

NOT_MODELLED = (
    # a 400 `unsupported_file` for an audio file in a function_call_output: a file type rule chatmend lacks
    "direct-url-audio-openai_responses].yaml[1]",
    # DeepSeek's own Responses endpoint refuses an assistant message between a call and its output; the
    # openai_responses rules are OpenAI's, which have no such rule known (docs/rules.md §11)
    "test_deepseek_responses_rejects_interleaved_function_calls.yaml[0]",
)
"""Refused bodies whose reason is a rule no adapter here has: `check` finds nothing, so `repair` changes
nothing (it changes only what `check` finds)."""


def _refused(body: RealBody) -> str | None:
    return next((code for part, code in REFUSED.items() if part in body.name), None)


def _bodies() -> list[RealBody]:
    if not REAL_WORLD.is_dir():
        pytest.skip("../shared/real-world is absent")
    found = list(real_bodies())
    assert len(found) >= 40  # 32 cassette requests, 8 captures, 4 samples
    return found


def test_every_accepted_body_checks_clean_and_repair_leaves_it_as_it_is() -> None:
    seen = 0
    bodies = _bodies()
    assert all(any(name in real.name for real in bodies) for name in NOT_MODELLED)
    for real in bodies:
        if _refused(real):
            continue
        provider = providers.get(real.provider)
        assert provider.check(real.body) == [], real.name
        repaired = provider.repair_body(real.body)
        assert not repaired.changed and repaired.body == real.body, real.name
        seen += 1
    assert seen >= 40


def test_every_refused_body_is_found_repaired_and_rechecks_clean() -> None:
    refused = [real for real in _bodies() if _refused(real)]
    assert len(refused) == len(REFUSED)
    for real in refused:
        provider = providers.get(real.provider)
        assert _refused(real) in {p.code for p in provider.check(real.body)}, real.name
        repaired = provider.repair_body(real.body)
        assert repaired.changed, real.name
        assert provider.check(repaired.body) == [], real.name
        again = provider.repair_body(repaired.body)
        assert not again.changed and again.body == repaired.body, real.name


def test_repair_through_the_cli_writes_an_accepted_body_back_byte_for_byte(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str],
                                                                            ) -> None:
    """The files as saved (the samples' own indentation) and each body saved compact, as a proxy saves it."""
    if not REAL_WORLD.is_dir():
        pytest.skip("../shared/real-world is absent")
    files = sorted(REAL_WORLD.glob("mistralai__mistral-common__*get_weather*.json"))
    for real in _bodies():
        if real.provider == "anthropic" and "claude-nexus" in real.name:
            compact = tmp_path / f"{len(files)}.json"
            compact.write_text(json.dumps(real.body, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
            files.append(compact)
    for path in files:
        out = tmp_path / "out.json"
        assert main(["check", str(path), "--from", "mistral" if "mistral" in path.name else "anthropic"]) == 0
        assert main(["repair", str(path), "-o", str(out)]) == 0, path.name
        assert out.read_bytes() == path.read_bytes(), path.name
        assert "nothing to repair" in capsys.readouterr().out, path.name


def test_the_refused_sample_is_repaired_through_the_cli_and_rechecks_clean(tmp_path: Path) -> None:
    if not REAL_WORLD.is_dir():
        pytest.skip("../shared/real-world is absent")
    (path,) = REAL_WORLD.glob("mistralai__mistral-common__*parallel_calls*.json")
    out = tmp_path / "out.json"
    assert main(["check", str(path), "--from", "mistral"]) == 1
    assert main(["repair", str(path), "--from", "mistral", "-o", str(out)]) == 0
    assert main(["check", str(out), "--from", "mistral"]) == 0
    session = read(str(out), "mistral")
    assert session.body is not None and providers.get("mistral").check(session.body) == []
