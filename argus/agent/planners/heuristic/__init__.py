"""The default planner: deterministic rules, no language model, no cost."""

from argus.agent.planners.heuristic.planner import HeuristicPlanner

__all__ = ["HeuristicPlanner"]
