"""The hybrid planner: the heuristic sweep first, then the language model with what budget is left.

The rules are cheap and exact on what they can see (types, nulls, ranges, enums, shapes,
duplicates). When the sweep wants to conclude, the model takes over instead, told that the sweep
is done, to look at what rules cannot see: cross-field consistency, semantic formats, and
borderline or dismissed candidates. If the model fails, the suspended sweep resumes where it
stopped (it concludes, covering any fields the run gate still misses).
"""

from __future__ import annotations

from collections.abc import Callable

from argus.agent.planners.base import Planner
from argus.agent.planners.llm import LLMPlanner
from argus.agent.state import AgentAction, AgentState

__all__ = ["HybridPlanner"]


class HybridPlanner:
    name = "hybrid"

    def __init__(self, heuristic: Planner, llm: Callable[[Planner], LLMPlanner]) -> None:
        """``llm`` builds the model planner given its fallback (the suspended sweep)."""
        self.heuristic = heuristic
        self.llm = llm(heuristic)
        self.model: str | None = self.llm.model
        self._sweep_done_at: int | None = None

    def propose(self, state: AgentState) -> AgentAction:
        if self._sweep_done_at is None:
            action = self.heuristic.propose(state)
            if action.action != "conclude":
                return action.model_copy(update={"proposed_by": "heuristic"})
            self._sweep_done_at = state.iteration
            self.llm.notes = [f"# Rule sweep\nThe rule-based sweep finished at iteration {state.iteration} with "
                              f"{len(state.findings)} findings committed and {len(state.dismissed_findings)} "
                              f"dismissed (listed below). Its steps show masked inputs."]
        return self.llm.propose(state)
