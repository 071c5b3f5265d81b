"""The heuristic planner: a deterministic audit that needs no language model.

It samples the collection, turns every field's statistics into hypotheses (data, not queries
sent one by one), and confirms them all in three passes over the collection with ``count_many``:

1. every hypothesis's exact count;
2. the server-side statistics some verdicts need: exact value counts of categorical fields,
   duplicates of key-like fields, the values nearest each statistical fence;
3. the evidence of each finding: its exact count (for evidence built from pass 2, such as an
   enum's bad values) and a few example values.

The sample only decides which hypotheses to ask, with generous margins; every verdict comes from
an exact count over the whole collection. So the same data gives the same findings whatever the
sample held, and a defect that grows stays reported. Each finding's evidence query is a plain
filter whose count, run on its own, is its ``affected_count``.

The strategy is a generator: each ``yield`` hands the loop one action and receives the
observation it produced, so the audit reads top to bottom like the procedure it is.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import structlog

from argus.agent.clock import Clock, SystemClock
from argus.agent.ejson import encode, filter_key
from argus.agent.errors import ArgusError
from argus.agent.findings import Category, Severity
from argus.agent.history import HistoricalContext, fingerprint
from argus.agent.planners.heuristic.declared import steered
from argus.agent.planners.heuristic.hypotheses import by_shape, hypotheses
from argus.agent.planners.heuristic.plan import Check
from argus.agent.planners.heuristic.statistics import from_statistics
from argus.agent.privacy import categorical_values
from argus.agent.severity import severity_for
from argus.agent.shapes.models import ShapeCounts
from argus.agent.shapes.privacy import for_report
from argus.agent.shapes.scoping import counted as by_count
from argus.agent.shapes.scoping import newest_stats, with_newest
from argus.agent.state import AgentAction, AgentState, Observation
from argus.agent.tools.models import CountManyResult, SchemaSampleResult
from argus.agent.tools.profiling import values_at

__all__ = ["HeuristicPlanner"]
log = structlog.get_logger("argus.planner")
Steps = Generator[AgentAction, Observation | None, Any]
EXAMPLES = 5
_LOWER = {Severity.CRITICAL: Severity.HIGH, Severity.HIGH: Severity.MEDIUM, Severity.MEDIUM: Severity.LOW,
          Severity.LOW: Severity.LOW}


class PlannerGaveUp(ArgusError):
    """The audit cannot go on (the sample itself failed)."""


class HeuristicPlanner:
    """Deterministic, free, and quiet on healthy data. One instance audits one run."""

    name = "heuristic"
    model: str | None = None

    def __init__(self, *, clock: Clock | None = None, shapes: bool = True) -> None:
        self._clock = clock or SystemClock()
        self._by_shape = shapes  # False: every rule judged over the whole collection (bench/shapes.py compares)
        self._proc: Steps | None = None
        self._notes: list[str] = []  # checks the audit skipped, and why: its conclusion hands them to the report
        self._counts: dict[str, int] = {}  # the first pass's counts, by filter key
        self._shape_counts: ShapeCounts | None = None  # the first pass's counts of the sample's shapes: the report's

    def propose(self, state: AgentState) -> AgentAction:
        try:
            if self._proc is None:
                self._proc = self._audit(state)
                return next(self._proc)
            return self._proc.send(state.last_observation)
        except StopIteration:
            return AgentAction(action="conclude", reasoning="every hypothesis has been checked",
                               action_input=self._conclusion())

    def _conclusion(self) -> dict[str, Any]:
        out: dict[str, Any] = {"notes": self._notes}
        if self._shape_counts is not None:
            out["shape_counts"] = self._shape_counts.model_dump()
        return out

    # --- the audit ---------------------------------------------------------------------------

    def _audit(self, state: AgentState) -> Steps:
        obs = yield AgentAction(action="schema_sample", action_input={"sample_size": state.options.sample_size},
                                reasoning="survey the implicit schema before anything else")
        # Read the sample from the state, not the observation: a wrapper (ReplayFirst) may have
        # run other steps in between.
        schema = state.schema
        if not isinstance(schema, SchemaSampleResult):
            raise PlannerGaveUp(f"the schema sample failed: {obs.message if obs else 'no observation'}")
        if schema.documents_sampled == 0:
            return
        now = self._clock.now()
        fields = sorted((f for f in schema.fields if f.queryable and f.path != "_id"), key=lambda f: f.path)
        plan = steered(hypotheses(fields, now, collection=state.collection, size=schema.collection_size,
                                   sampled=schema.documents_sampled, history=state.historical_context),
                       state.contract)
        if self._by_shape:
            by_shape(plan, schema.shapes, for_report(schema.shapes, state.options.privacy, categorical_values(schema)),
                      state.historical_context)
        self._notes = plan.notes
        queries = _unique([c.query for c in plan.checks] + [q for q, _ in plan.fences] + plan.counted)
        counted = yield from self._batch(queries, [], f"count {len(queries)} hypotheses on {len(fields)} "
                                                      f"fields in one pass")
        size = max(state.collection_size, 1)
        confirmed: list[Check] = []
        counts: dict[str, int] = {}
        if counted is not None:
            counts = {filter_key(encode(q)): c.matched_count for q, c in zip(queries, counted.counts, strict=True)}
            confirmed = [c for c in plan.checks if counts.get(filter_key(encode(c.query)), 0) > 0
                         and (c.max_share is None or counts[filter_key(encode(c.query))]
                              <= c.max_share * _base(c, counts, size))]
            self._counts = counts
            self._shape_counts = by_count(schema.shapes, lambda q: counts.get(filter_key(encode(q))))
        # A fence's gap is measured only when something lies beyond it.
        probes = plan.probes + [p for q, pair in plan.fences if counts.get(filter_key(encode(q)), 0) for p in pair]
        newest = newest_stats(schema.shapes) if probes and self._by_shape else []  # each form's last write
        measured = yield from self._batch([], [p.spec for p in probes] + newest,
                                          f"compute {len(probes)} statistics in one pass")
        if measured is not None:  # a verified fence widens the hard rules' evidence: it goes first
            confirmed = from_statistics(plan, probes, measured.stats[:len(probes)], size) + confirmed
            self._shape_counts = with_newest(self._shape_counts, schema.shapes, measured.stats[len(probes):])
        confirmed = _one_per_field_and_category(confirmed)
        if confirmed:
            second = yield from self._batch([c.query for c in confirmed], [],
                                            f"count and show the evidence of {len(confirmed)} findings",
                                            examples_of=[c.path for c in confirmed])
            if second is not None:
                for check, evidence in zip(confirmed, second.counts, strict=True):
                    yield from self._write(state, check, evidence.filter, evidence.matched_count, evidence.documents)
        obs = yield AgentAction(action="conclude", reasoning="all fields checked", action_input=self._conclusion())
        if obs is not None and obs.kind == "run_rejected":
            attempted = state.fields_investigated | state.unanswered_fields()  # unanswered: no $exists stand-in
            missing = [p for p in state.auditable_fields() if p not in attempted]
            if missing:
                yield from self._batch([{p: {"$exists": True}} for p in missing], [],
                                       "cover the fields no check has touched yet")

    def _batch(self, queries: list[dict[str, Any]], stats: list[dict[str, Any]], why: str, *,
               examples_of: list[str] | None = None) -> Generator[AgentAction, Observation | None,
                                                                  CountManyResult | None]:
        items: list[dict[str, Any]] = []
        for i, query in enumerate(queries):
            item: dict[str, Any] = {"filter": encode(query)}
            if examples_of is not None:
                item.update(examples_of=examples_of[i], examples=EXAMPLES)
            items.append(item)
        if not items and not stats:
            return None
        obs = yield AgentAction(action="count_many", action_input={"queries": items, "stats": stats}, reasoning=why)
        if obs is None or obs.kind != "result" or not isinstance(obs.result, CountManyResult):
            log.warning("batch_failed", queries=len(items), stats=len(stats))
            return None
        return obs.result

    def _write(self, state: AgentState, check: Check, evidence: dict[str, Any], count: int,
               documents: list[dict[str, Any]]) -> Steps:
        if count == 0:
            return
        size = max(state.collection_size, 1)
        share = count / size
        if self._held_back(state, check.path, check.category, share):
            return
        among, within = size, share
        if check.within is not None:  # judged among the shape's documents: counted in the first pass
            among = max(_base(check, self._counts, size), count)
            within = count / among
        examples: list[Any] = []
        for doc in documents:
            examples.extend(values_at(doc, check.path))
        severity = severity_for(check.category, within, critical_min_share=state.options.critical_min_share,
                                identifier=check.identifier)
        if check.optional:
            severity = _LOWER[severity]
        yield AgentAction(action="write_finding", reasoning=f"{count} documents confirm it", action_input={
            "field": check.path, "category": check.category.value, "severity": severity.value,
            "description": (f"{check.lead}; " if check.lead else "") + (
                f"{count:,} of {among:,} documents of shape {check.scope} ({within:.2%}) {check.description}"
                if check.scope else f"{count:,} of {size:,} documents ({share:.2%}) {check.description}"),
            "hypothesis": check.hypothesis, "evidence_query": evidence, "affected_count": count,
            "affected_pct": round(share, 6), "sample_values": examples[:EXAMPLES],
        })

    @staticmethod
    def _held_back(state: AgentState, path: str, category: Category, share: float) -> bool:
        """Users called it a false positive, or a gate dismissed it last run, and it has not grown."""
        context = state.historical_context
        if not isinstance(context, HistoricalContext):
            return False
        fp = fingerprint(state.connection_name, state.database, state.collection, path, category)
        if context.suppressed(fp, share):
            return True
        dismissed = next((p for p in context.dismissed if p.fingerprint == fp and not p.committed_runs), None)
        return dismissed is not None and share <= dismissed.last_share * context.growth_factor


def _unique(queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for q in queries:
        seen.setdefault(filter_key(encode(q)), q)
    return list(seen.values())


def _base(check: Check, counts: dict[str, int], size: int) -> int:
    """The documents a check's share is of: its shapes' (counted in the first pass), or all."""
    if check.within is None:
        return size
    return counts.get(filter_key(encode(check.within)), size)


def _one_per_field_and_category(checks: list[Check]) -> list[Check]:
    """The first confirmed check of each (field, category), in a stable order."""
    seen: dict[tuple[str, Category], Check] = {}
    for c in checks:
        seen.setdefault((c.path, c.category), c)
    return sorted(seen.values(), key=lambda c: (c.path, c.category.value))
