"""The default planner: deterministic rules, no language model, no cost."""

from agent.planners.heuristic.planner import HeuristicPlanner

__all__ = ["HeuristicPlanner"]
