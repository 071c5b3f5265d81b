"""A planner that replays a script: a real planner for tests, demos and reproducing a run."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from argus.agent.state import AgentAction, AgentState

__all__ = ["ScriptedPlanner"]

Step = AgentAction | Callable[[AgentState], AgentAction]


class ScriptedPlanner:
    """Proposes the given steps in order (a step may be a function of the state), then concludes."""

    name = "scripted"
    model: str | None = None

    def __init__(self, steps: Iterable[Step], *, then_conclude: bool = True) -> None:
        self._steps = list(steps)
        self._next = 0
        self._then_conclude = then_conclude
        self.seen: list[AgentState] = []

    def propose(self, state: AgentState) -> AgentAction:
        self.seen.append(state)
        if self._next < len(self._steps):
            step = self._steps[self._next]
            self._next += 1
            return step(state) if callable(step) else step
        if self._then_conclude:
            return AgentAction(action="conclude", reasoning="script finished")
        raise RuntimeError("scripted planner ran out of steps")
