"""The one provider contract: every adapter fills the base's templates and reads the flags the base declares."""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from chatmend import ChatMessage, ToolCall, providers
from chatmend.providers.base import EntryPoints, Provider


@pytest.mark.parametrize("name", providers.names())
def test_an_option_named_like_the_conversation_list_is_refused_by_every_adapter(name: str) -> None:
    adapter = providers.get(name)
    history = [ChatMessage(role="user", content="hi")]
    with pytest.raises(ValueError, match="first argument"):
        options: dict[str, Any] = {adapter.list_key: []}
        adapter.to_request(history, model="m", **options)


@pytest.mark.parametrize("name", providers.names())
def test_every_provider_module_exports_the_same_functions_bound_to_its_adapter(name: str) -> None:
    module = importlib.import_module(f"chatmend.providers.{name}")
    for function in EntryPoints._fields:
        assert function in module.__all__
        bound = getattr(module, function)
        assert bound.__self__ is module.PROVIDER and bound.__name__ == function


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "requests"


def _edit_everything(value: Any) -> None:
    """Edit every dict and list of a body in place, as a caller adding fields to what it got might."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
            item["edited"] = True
        elif isinstance(item, list):
            stack.extend(item)
            item.append("edited")


@pytest.mark.parametrize("name", providers.names())
def test_editing_a_written_body_never_edits_the_history(name: str) -> None:
    # (the Anthropic and Bedrock writers put a call's own arguments dict into the body: editing the body edited
    # the frozen history, and a Repairer's cached messages with it)
    arguments = {"query": "weather", "where": {"city": "Paris", "days": [1, 2]}}
    history = [ChatMessage(role="user", content="hi"),
               ChatMessage(role="assistant", content="", tool_calls=(
                   ToolCall(id="call_1", name="search", arguments=arguments),)),
               ChatMessage(role="tool", tool_call_id="call_1", content="sunny")]
    before = [asdict(message) for message in history]
    _edit_everything(providers.get(name).to_request(history, model="m", on_unsupported=lambda dropped: None))
    assert [asdict(message) for message in history] == before


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.json")),
                         ids=lambda path: path.stem)
def test_editing_the_body_written_from_a_shipped_example_never_edits_its_history(example: Path) -> None:
    body = json.loads(example.read_text(encoding="utf-8"))
    adapter = providers.get(example.stem)
    history = adapter.from_request(body)
    before = [asdict(message) for message in history]
    _edit_everything(adapter.to_request(history, model=body.get("model", "m")))
    assert [asdict(message) for message in history] == before


def test_the_flags_no_code_read_are_gone() -> None:
    for flag in ("id_pattern", "arguments_as_string", "images_in_tool_results"):
        assert not hasattr(Provider, flag)
        assert all(not hasattr(type(providers.get(n)), flag) for n in providers.names())


SRC = Path(__file__).resolve().parents[2] / "src" / "chatmend"


def test_formats_and_the_command_line_name_no_provider() -> None:
    # Everything they need to know about a provider is declared on its class (list key, signs, fields).
    files = [*sorted((SRC / "formats").glob("*.py")), *sorted((SRC / "cli").glob("*.py"))]
    for name in providers.names():
        for file in files:
            text = file.read_text()
            assert f'"{name}"' not in text and f"'{name}'" not in text, f"{file.name} names {name}"


def _declared(cls: type) -> list[str]:
    """The class attributes a class declares (annotated), not inherited."""
    return [name for name in vars(cls).get("__annotations__", {}) if not name.startswith("_")]


def test_every_provider_flag_and_declaration_is_read_outside_its_definition() -> None:
    source = "\n".join(p.read_text() for p in SRC.rglob("*.py"))
    for flag in _declared(Provider):
        if flag == "name":
            continue
        reads = re.findall(rf"\.{flag}\b", source)
        assert reads, f"Provider.{flag} is read by no code"
