"""OpenAI Agents SDK: a `Session` whose history comes back repaired, and a `call_model_input_filter`.

    from agents import Runner, RunConfig, SQLiteSession
    from chatmend.bridges.openai_agents import RepairedSession, call_model_input_filter

    session = RepairedSession(SQLiteSession("user-42", "chats.db"))     # get_items: repaired, storage untouched
    await Runner.run(agent, "go on", session=session)
    await Runner.run(agent, "go on", run_config=RunConfig(call_model_input_filter=call_model_input_filter))

Session items are Responses input items, so the repair is the Responses adapter's `repair_body`: every item it
leaves alone is the very same dict, every call type that pairs by `call_id` (function, custom, shell, computer,
apply_patch, ...) is answered by its own output type, reasoning stays with the turn it belongs to. Where the SDK
itself drops calls without outputs and the reasoning before them, chatmend answers them instead, and an orphan
output becomes a user note instead of vanishing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents import Session
from agents.run import CallModelData, ModelInputData

from chatmend import providers
from chatmend.repair import IsReadOnly

__all__ = ["RepairedSession", "call_model_input_filter", "repair_items"]


def repair_items(items: Sequence[Any], *, is_read_only: IsReadOnly | None = None) -> list[Any]:
    """Responses input items made valid (a new list; an item repair leaves alone is the input's own object)."""
    if not items:
        return list(items)
    repaired = providers.get("openai_responses").repair_body({"input": list(items)}, is_read_only=is_read_only)
    out: list[Any] = repaired.body["input"]
    return out


def call_model_input_filter(data: CallModelData[Any]) -> ModelInputData:
    """`RunConfig(call_model_input_filter=...)`: the input of every model call, repaired (the run's own items
    stay as they are)."""
    return ModelInputData(input=repair_items(data.model_data.input), instructions=data.model_data.instructions)


class RepairedSession:
    """Any `agents.Session`, whose `get_items` returns the history repaired; what is stored is never rewritten
    (`add_items`, `pop_item` and `clear_session` go to the wrapped session as they are)."""

    def __init__(self, session: Session, *, is_read_only: IsReadOnly | None = None) -> None:
        self.session = session
        self.session_id = session.session_id
        self.session_settings = getattr(session, "session_settings", None)
        self._is_read_only = is_read_only

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The stored items (the latest `limit`), repaired. A limit that cuts a call from its output leaves the
        output an orphan: it is read as a note, as any orphan."""
        return repair_items(await self.session.get_items(limit), is_read_only=self._is_read_only)

    async def add_items(self, items: list[Any]) -> None:
        await self.session.add_items(items)

    async def pop_item(self) -> Any:
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        await self.session.clear_session()
