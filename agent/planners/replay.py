"""Replay first: re-check the persistent patterns of earlier runs before planning anything new.

Right after the schema sample, each persistent pattern's last evidence query is run again as
it was stored; when it still matches, the finding is written again with today's count. This
costs one query per pattern and no planning (no LLM call), keeps known defects from flapping
with the randomness of a sample, and leaves the wrapped planner's budget for new ground. A
planner that later finds the same field and category with fresher evidence overwrites the
replayed finding (findings are idempotent on field and category).
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
        self.replayed = 0

    def propose(self, state: AgentState) -> AgentAction:
        if state.schema is None:
            return self.inner.propose(state)
        if self._steps is None:
            self._steps = self._replay(state)
        step = next(self._steps, None)
        return step.model_copy(update={"proposed_by": "replay"}) if step is not None else self.inner.propose(state)

    def _replay(self, state: AgentState) -> Iterator[AgentAction]:
        context = state.historical_context
        if not isinstance(context, HistoricalContext):
            return
        for pattern in context.persistent:
            if not pattern.committed_runs or pattern.category in HEALTH_CATEGORIES:
                continue  # a health anomaly is judged against its baseline each run, not replayed
            if has_masked(pattern.last_evidence_query):
                continue  # masked by the privacy mode: it no longer selects the defect
            yield AgentAction(action="run_query", reasoning=f"replay: {pattern.category.value} on {pattern.field} "
                                                            f"was seen in {pattern.runs_seen} earlier runs",
                              action_input={"filter": pattern.last_evidence_query, "limit": EXAMPLES,
                                            "projection": {pattern.field: 1, "_id": 0}})
            obs = state.last_observation
            if obs is None or obs.kind != "result" or not isinstance(obs.result, RunQueryResult):
                continue
            write = self._finding(state, context, pattern, obs.result)
            if write is not None:
                self.replayed += 1
                yield write

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
