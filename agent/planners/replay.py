"""Replay first: re-check the patterns of earlier runs before planning anything new.

Right after the schema sample, the last evidence query of every pattern committed in an earlier
run (persistent ones first, then those seen once) is run again as it was stored; when it still
matches, the finding is written again with today's count. This costs one query per pattern and
no planning (no LLM call), keeps known defects from flapping with the randomness of a sample,
and leaves the wrapped planner's budget for new ground.

A planner that later finds the same field and category with evidence matching at least as many
documents overwrites the replayed finding (findings are idempotent on field and category). One
whose evidence matches fewer is not allowed to narrow it: a baseline that moved with the defect
would otherwise hide its growth, and the diff would call a growing pattern improved or resolved
while its old evidence still matches. The replayed finding is written again in its place.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent.health.findings import HEALTH_CATEGORIES
from agent.history import HistoricalContext, Pattern, fingerprint
from agent.planners.base import Planner
from agent.privacy import has_masked
from agent.severity import severity_for
from agent.state import AgentAction, AgentState
from agent.tools.models import RunQueryResult

__all__ = ["ReplayFirst"]

EXAMPLES = 3  # not the planners' 5, so a planner re-confirming the same filter is not a repeat


class ReplayFirst:
    """Wraps a planner: after its first action (the sample), replays history, then hands back."""

    def __init__(self, inner: Planner) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self._steps: Iterator[AgentAction] | None = None
        self._written: dict[tuple[str, str], AgentAction] = {}  # (field, category) -> the replayed write
        self.replayed = 0

    def propose(self, state: AgentState) -> AgentAction:
        if state.schema is None:
            return self.inner.propose(state)
        if self._steps is None:
            self._steps = self._replay(state)
        step = next(self._steps, None)
        return step if step is not None else self._not_narrowed(self.inner.propose(state))

    def _not_narrowed(self, action: AgentAction) -> AgentAction:
        """``action``, unless it would replace a replayed finding with one matching fewer documents."""
        if action.action != "write_finding":
            return action
        key = (str(action.action_input.get("field")), str(action.action_input.get("category")))
        replayed = self._written.get(key)
        if replayed is None:
            return action
        count = action.action_input.get("affected_count")
        if isinstance(count, int) and count >= replayed.action_input["affected_count"]:
            return action
        return replayed.model_copy(update={"reasoning": "replayed evidence matches more documents than the new "
                                                        "evidence: keep it, so the pattern's growth stays visible"})

    def _replay(self, state: AgentState) -> Iterator[AgentAction]:
        context = state.historical_context
        if not isinstance(context, HistoricalContext):
            return
        for pattern in [*context.persistent, *context.one_off]:
            if not pattern.committed_runs or pattern.category in HEALTH_CATEGORIES:
                continue  # a health anomaly is judged against its baseline each run, not replayed
            if has_masked(pattern.last_evidence_query):
                continue  # masked by the privacy mode: it no longer selects the defect
            yield AgentAction(action="run_query", reasoning=f"replay: {pattern.category.value} on {pattern.field} "
                                                            f"was seen in {pattern.runs_seen} earlier run(s)",
                              action_input={"filter": pattern.last_evidence_query, "limit": EXAMPLES,
                                            "projection": {pattern.field: 1, "_id": 0}})
            obs = state.last_observation
            if obs is None or obs.kind != "result" or not isinstance(obs.result, RunQueryResult):
                continue
            write = self._finding(state, context, pattern, obs.result)
            if write is not None:
                self.replayed += 1
                yield write
                if state.last_observation is not None and state.last_observation.kind == "finding_committed":
                    self._written[(pattern.field, pattern.category.value)] = write

    @staticmethod
    def _finding(state: AgentState, context: HistoricalContext, pattern: Pattern,
                 result: RunQueryResult) -> AgentAction | None:
        count, size = result.matched_count, max(state.collection_size, 1)
        share = count / size
        fp = fingerprint(state.connection_name, state.database, state.collection, pattern.field, pattern.category)
        if count == 0 or context.suppressed(fp, share):
            return None
        examples: list[Any] = []
        for doc in result.documents:
            value: Any = doc
            for part in pattern.field.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if value is not None and not isinstance(value, dict | list):
                examples.append(value)
        severity = severity_for(pattern.category, share, critical_min_share=state.options.critical_min_share)
        return AgentAction(action="write_finding", reasoning="replayed evidence still matches", action_input={
            "field": pattern.field, "category": pattern.category.value, "severity": severity.value,
            "description": f"{count:,} of {size:,} documents ({share:.2%}) still match the "
                           f"{pattern.category.value} evidence for {pattern.field} seen in {pattern.runs_seen} "
                           f"earlier runs",
            "hypothesis": "a known, persistent defect", "evidence_query": result.filter, "affected_count": count,
            "affected_pct": round(share, 6), "sample_values": examples})
