"""Replay first: re-check the patterns of earlier runs before planning anything new.

Right after the schema sample, the last evidence query of every pattern committed in an earlier
run (persistent ones first, then those seen once) is counted again as it was stored, all in one
``count_many`` pass over the collection; when it still matches, the finding is written again with
today's count. This costs one pass, whatever the number of patterns, and no planning (no LLM
call), keeps known defects from flapping with the randomness of a sample, and leaves the wrapped
planner's budget for new ground.

A planner that later finds the same field and category with evidence matching at least as many
documents overwrites the replayed finding (findings are idempotent on field and category). One
whose evidence matches fewer is not allowed to narrow it: a baseline that moved with the defect
would otherwise hide its growth, and the diff would call a growing pattern improved or resolved
while its old evidence still matches. The replayed finding is written again in its place.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from argus.agent.ejson import decode
from argus.agent.errors import QueryRefused
from argus.agent.health.findings import HEALTH_CATEGORIES
from argus.agent.history import HistoricalContext, Pattern, fingerprint
from argus.agent.planners.base import Planner
from argus.agent.privacy import has_masked
from argus.agent.severity import severity_for
from argus.agent.state import AgentAction, AgentState
from argus.agent.tools.guard import check_filter
from argus.agent.tools.models import COUNT_MANY_MAX, CountedQuery, CountManyResult

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
        if step is not None:
            return step.model_copy(update={"proposed_by": "replay"})
        return self._not_narrowed(self.inner.propose(state))

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
        # A field and category the contract declares is decided by its rule, counted by the contract stage.
        declared = {(r.field, r.category) for r in state.contract.rules} if state.contract is not None else set()
        patterns = [p for p in [*context.persistent, *context.one_off]
                    if _replayable(p) and (p.field, p.category) not in declared]
        for start in range(0, len(patterns), COUNT_MANY_MAX):
            batch = patterns[start:start + COUNT_MANY_MAX]
            # One pass over the collection counts every pattern's evidence (count_many), not one pass each.
            yield AgentAction(action="count_many", reasoning=f"replay: {len(batch)} pattern(s) of earlier runs",
                              action_input={"queries": [{"filter": p.last_evidence_query, "examples_of": p.field,
                                                         "examples": EXAMPLES} for p in batch]})
            obs = state.last_observation
            if obs is None or obs.kind != "result" or not isinstance(obs.result, CountManyResult):
                continue
            for pattern, counted in zip(batch, obs.result.counts, strict=False):
                write = self._finding(state, context, pattern, counted)
                if write is None:
                    continue
                self.replayed += 1
                yield write
                if state.last_observation is not None and state.last_observation.kind == "finding_committed":
                    self._written[(pattern.field, pattern.category.value)] = write

    @staticmethod
    def _finding(state: AgentState, context: HistoricalContext, pattern: Pattern,
                 result: CountedQuery) -> AgentAction | None:
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


def _replayable(pattern: Pattern) -> bool:
    """A committed pattern whose stored evidence can still be sent: not a health anomaly or a metric's
    breach (judged against its baseline or range each run), not masked by the privacy mode, and
    accepted by today's guard (one refused query must not sink the batch of every other pattern)."""
    if not pattern.committed_runs or pattern.category in HEALTH_CATEGORIES or pattern.category == "metric_breach":
        return False
    if has_masked(pattern.last_evidence_query):
        return False
    try:
        check_filter(decode(pattern.last_evidence_query))
    except (QueryRefused, ValueError):
        return False
    return True
