"""The providers' own words for the problems repair fixes: the checkers' sentences, for every wire format."""

from __future__ import annotations

from chatmend import ChatMessage, ToolCall, providers
from chatmend.providers.words import provider_words

HISTORY = [ChatMessage(role="user", content="go"),
           ChatMessage(role="assistant", tool_calls=(ToolCall(id="call_a", name="ls"),))]


def test_each_family_says_what_its_checker_says() -> None:
    assert provider_words("openai_chat", unanswered=["call_a"]) == [
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_a"]
    assert provider_words("mistral", orphans=["x"]) == provider_words("openai_chat", orphans=["x"])
    assert provider_words("anthropic", unanswered=["a"], duplicates=["a"]) == [
        "`tool_use` ids were found without `tool_result` blocks immediately after: a. Each `tool_use` block must "
        "have a corresponding `tool_result` block in the next message.", "`tool_use` ids must be unique"]
    assert provider_words("openai_responses", unanswered=["a"], orphans=["b"]) == [
        "No tool output found for function call a.", "No tool call found for function call output with call_id b."]
    assert len(provider_words("gemini", unanswered=["a"], orphans=["b"])) == 1
    assert provider_words("bedrock", unanswered=["a"]) == [] and provider_words("nope", unanswered=["a"]) == []
    assert provider_words("openai_chat") == []


def test_the_words_are_the_checkers_own() -> None:
    """A body that has the problem draws the same sentence from the provider's checker."""
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}, {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}]}
    assert [p.message for p in providers.get("openai_chat").check(chat)] == provider_words(
        "openai_chat", unanswered=["call_a"])
    responses = {"model": "gpt-5", "input": [{"role": "user", "content": "go"},
                                             {"type": "function_call", "call_id": "call_a", "name": "ls",
                                              "arguments": "{}"}]}
    assert [p.message for p in providers.get("openai_responses").check(responses)] == provider_words(
        "openai_responses", unanswered=["call_a"])
    anthropic = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_a", "name": "ls", "input": {}}]},
        {"role": "user", "content": "next"}]}
    [said] = [p.message for p in providers.get("anthropic").check(anthropic) if p.code == "AN1"]
    assert said.split(": ", 1)[1] == provider_words("anthropic", unanswered=["call_a"])[0]
