"""The planner seam: the loop asks for one action at a time and knows nothing else about it."""

from __future__ import annotations

from typing import Protocol

from argus.agent.state import AgentAction, AgentState

__all__ = ["Planner"]


class Planner(Protocol):
    name: str
    model: str | None

    def propose(self, state: AgentState) -> AgentAction:
        """The next action, given everything the run has seen (``state.last_observation``,
        ``state.last_critique``). Must not mutate ``state``."""
        ...
