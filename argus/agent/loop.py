"""The ReAct loop: propose, gate, act, observe, until a conclusion is accepted or a budget runs out.

The loop is the only code that mutates ``AgentState``. It always returns an ``AuditReport``:
``succeeded`` when the run gate accepted a conclusion and every check the planner planned
(``count_many``) was answered, ``partial`` when a planned check went unanswered (refused, timed
out, not asked within the budgets: named in the notes) or the iteration, wall-clock, request unit
or LLM (tokens, USD) budget ran out first, ``failed`` when the database became unreachable or the
planner broke. A tool error (bad query, timeout) is an observation, not a failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID, uuid4

import structlog
from pydantic import BaseModel

from argus.agent.clock import Clock, SystemClock
from argus.agent.contracts.compile import compile_contract, stat_key
from argus.agent.contracts.model import Contract, ContractReport, RuleResult
from argus.agent.contracts.results import contract_report, lookup_key, not_checked
from argus.agent.custom_metrics.measure import MeasuredMetrics, measure_metrics
from argus.agent.ejson import decode, encode, filter_key
from argus.agent.errors import (
    ArgusError,
    BudgetExhausted,
    EngineFault,
    QueryRefused,
    QueryRejected,
    QueryTimeout,
    TargetUnavailable,
    ToolError,
)
from argus.agent.evidence import vocabulary
from argus.agent.failing import asking_failing, attached, bounded
from argus.agent.findings import Category, Finding, Severity, WriteFindingInput
from argus.agent.gates import GateSet, ProposedAction, action_key, parse_action
from argus.agent.health.backfill import backfill
from argus.agent.health.baseline import anomaly_key, detect, timeline, usual_age
from argus.agent.health.collect import collect_health, newest_document
from argus.agent.health.findings import anomaly_findings
from argus.agent.health.models import HealthOptions, HealthSnapshot
from argus.agent.hints import zero_match_hints
from argus.agent.history import HistoricalContext, fingerprint
from argus.agent.llm.usage import LLMAccount
from argus.agent.options import AuditOptions
from argus.agent.planners.base import Planner
from argus.agent.privacy import Masker
from argus.agent.report import AuditReport, Outcome, TerminationReason, TraceEntry
from argus.agent.segments.findings import hidden_null_rates, segment_health_findings, with_breakdown
from argus.agent.segments.health import changes as segment_changes
from argus.agent.segments.health import judge as judge_segments
from argus.agent.segments.passes import SegmentPass, null_fields, segment_pass
from argus.agent.shapes.privacy import for_report
from argus.agent.state import AgentState, DismissedFinding, Observation, QueryRecord, UnansweredCheck
from argus.agent.tools import get_stats, run_query, schema_sample
from argus.agent.tools.accounting import DatabaseCost
from argus.agent.tools.compat import refusal_reason
from argus.agent.tools.count_many import count_many
from argus.agent.tools.guard import filter_fields
from argus.agent.tools.lookup import lookup_references
from argus.agent.tools.models import (
    ConcludeInput,
    CountManyInput,
    CountManyResult,
    GetStatsInput,
    LookupInput,
    LookupResult,
    RunQueryInput,
    RunQueryResult,
    SchemaSampleInput,
    SchemaSampleResult,
    StatsResult,
)
from argus.agent.tools.registry import ActionName
from argus.agent.tools.target import AuditTarget
from argus.agent.tools.window import open_window
from argus.agent.tools.write_finding import candidate_from
from argus.agent.window import AuditWindow, Window, unusable_filters

__all__ = ["AuditObserver", "run_audit"]

log = structlog.get_logger("argus.agent")


class AuditObserver(Protocol):
    def on_step(self, state: AgentState, entry: TraceEntry) -> None:
        """Called after every iteration, for progress displays and status pages."""
        ...


class _Stop(Exception):
    def __init__(self, reason: TerminationReason, error: str | None = None, *, note: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error
        self.note = note


def run_audit(
    target: AuditTarget,
    planner: Planner,
    *,
    options: AuditOptions | None = None,
    clock: Clock | None = None,
    gates: GateSet | None = None,
    historical_context: Any = None,
    observer: AuditObserver | None = None,
    run_id: UUID | None = None,
    should_stop: Callable[[], bool] | None = None,
    llm: LLMAccount | None = None,
    contract: Contract | None = None,
) -> AuditReport:
    """Audit ``target`` with ``planner`` and return the report; never raises for audit failures.

    ``should_stop`` is asked before every iteration; when it says yes (a daemon shutting down)
    the run ends as ``partial`` with termination reason ``interrupted``. ``llm`` is the account
    the planner's and evaluators' model calls are recorded in: its usage, cost and notes reach
    the state (for the planner to see) and the report. ``contract``: what the user declares of the
    collection; it is compiled against the sample, checked by the planner's contract stage
    (``argus.agent.contracts.stage``) and reported rule by rule.
    """
    options = options or AuditOptions()
    clock = clock or SystemClock()
    gates = gates or GateSet()
    state = AgentState(connection_name=target.connection_name, database=target.database,
                       collection=target.name, options=options, run_id=run_id or uuid4(),
                       historical_context=historical_context, contract=contract)
    started_at = clock.now()
    start = clock.monotonic()

    def remaining_ms() -> int:
        return int((options.time_budget_s - (clock.monotonic() - start)) * 1000)

    target.cap_time_with(remaining_ms)
    target.ru_budget = options.ru_budget
    target.segments = segment_pass(options, contract)
    if isinstance(historical_context, HistoricalContext):  # what the last run of the collection learned of the server
        target.sizing.checks = {**historical_context.batch_checks, **target.sizing.checks}
    if llm is not None:  # every model call (planner and evaluators) waits at most for what is left
        llm.bind_deadline(lambda: options.time_budget_s - (clock.monotonic() - start))
    with structlog.contextvars.bound_contextvars(run_id=str(state.run_id), database=state.database,
                                                 collection=state.collection):
        return _loop(state, target, planner, gates, clock, start, started_at, observer, should_stop, llm)


def _loop(state: AgentState, target: AuditTarget, planner: Planner, gates: GateSet, clock: Clock, start: float,
          started_at: Any, observer: AuditObserver | None, should_stop: Callable[[], bool] | None,
          llm: LLMAccount | None) -> AuditReport:
    options = state.options
    trace: list[TraceEntry] = []
    log.info("audit_started", planner=planner.name, iteration_budget=options.max_iterations,
             time_budget_s=options.time_budget_s)

    reason: TerminationReason
    error: str | None = None
    note: str | None = None
    opened = _open_window(state, target, started_at)
    if target.segments is not None:
        target.segments.scoped = state.window is not None
    while opened is None:
        try:
            if state.iteration >= options.max_iterations:
                raise _Stop("iteration_budget")
            if clock.monotonic() - start >= options.time_budget_s:
                raise _Stop("time_budget")
            if should_stop is not None and should_stop():
                raise _Stop("interrupted")
            _check_ru_budget(target, options.ru_budget)
            try:
                entry = _step(state, target, planner, gates)
            finally:
                if llm is not None:
                    state.total_usage = llm.total
        except _Stop as stop:
            reason, error, note = stop.reason, stop.error, stop.note
            break
        trace.append(entry)
        state.iteration += 1
        if state.contract is not None and state.declared is None and state.schema is not None:
            state.declared = compile_contract(state.contract, state.schema, clock.now())
        if observer is not None:
            observer.on_step(state, entry)
        if entry.outcome == "concluded":
            reason = "concluded"
            break
    if opened is not None:
        reason, error = "error", opened

    outcome: Outcome = "succeeded" if reason == "concluded" else "failed" if reason == "error" else "partial"
    if outcome == "succeeded" and state.unanswered:
        # Not every planned check was answered: absence proves nothing for them, so the run resolves
        # nothing (as any partial run); it is still a baseline for what it did check.
        outcome = "partial"
    if outcome == "succeeded" and state.schema is not None and state.schema.not_profiled():
        outcome = "partial"  # fields the profiler never recorded were never checked either
    if outcome == "succeeded" and state.declared is not None:
        missed = not_checked(state.declared, state.recorded())
        if missed is not None:  # a declared rule that did not run must not read as one that passed
            outcome = "partial"
            state.notes.append(missed)
    health: HealthSnapshot | None = None
    health_notes: list[str] = []
    if outcome != "failed" and target.segments is not None:
        _segment_findings(state, target.segments)
    if outcome != "failed":
        try:
            health, health_notes = _health_or_note(state, target, clock)
        except EngineFault as exc:
            outcome, reason, error = "failed", "error", str(exc)
    measured = _metrics(state, target, started_at) if outcome != "failed" and options.metrics else None
    if measured is not None:
        health_notes += measured.notes
        if measured.unmeasured and outcome == "succeeded":
            outcome = "partial"  # a metric not read proves nothing: this run must not resolve its breach
    finished_at = clock.now()
    if target.segments is not None:
        for finding in list(state.findings):
            state.findings.upsert(with_breakdown(finding, target.segments))
    report = _build_report(state, planner, trace, started_at=started_at, finished_at=finished_at,
                           duration_s=clock.monotonic() - start, outcome=outcome, reason=reason, error=error,
                           llm=llm, note=note, database_cost=target.cost())
    report = report.model_copy(update={"health": health, "metrics": measured.results if measured else [],
                                       "notes": [*report.notes, *_server_notes(target, state), *health_notes]})
    log.info("audit_finished", outcome=outcome, termination_reason=reason, iterations=state.iteration,
             findings=len(report.findings), duration_s=round(report.duration_s, 3))
    return report


def _open_window(state: AgentState, target: AuditTarget, now: Any) -> str | None:
    """Scope the target to the run's window, if it has one; the error that ends the run, or None."""
    if state.options.scope is None:
        return None
    try:
        state.window, notes = open_window(target, state.options.scope, now)
    except ArgusError as exc:
        return f"the audit's window could not be opened: {exc}"
    state.notes += notes
    for finding in _unusable_findings(state.window, target):
        state.findings.upsert(finding)
    log.info("window_opened", field=state.window.field, documents=state.window.documents,
             indexed=state.window.indexed)
    return None


def _unusable_findings(window: AuditWindow, target: AuditTarget) -> list[Finding]:
    """A finding on the window's own field for the documents no window holds (missing, or not a date):
    a scoped run never audits them, so a rule on that field would pass without seeing them."""
    size = max(target.ledger.collection_size or 0, 1)
    missing, other = unusable_filters(window.field)
    kind = "an ObjectId" if window.field == "_id" else "a date"
    out = []
    for count, category, query, what in ((window.missing, Category.NULL_RATE, missing, f"lack {window.field}"),
                                         (window.not_dates, Category.TYPE_MISMATCH, other,
                                          f"hold a value of {window.field} that is not {kind}")):
        if count:
            out.append(Finding(field=window.field, category=category, severity=Severity.HIGH, confirmed=True,
                               description=f"{count:,} of {size:,} documents {what}: they are in no window of "
                                           f"this scoped audit, so no scoped run ever audits them",
                               hypothesis="the scope field is not written (or not as a date) by every writer",
                               evidence_query=encode(query), affected_count=count,
                               affected_pct=round(min(count / size, 1.0), 6)))
    return out


def _check_ru_budget(target: AuditTarget, budget: float | None) -> None:
    spent = target.ledger.request_units
    if budget is not None and spent is not None and spent >= budget:
        raise _Stop("ru_budget", note=f"Cosmos DB request unit budget of {budget:g} RU is spent ({spent:g} RU): "
                                      f"the run ended before the audit concluded")


def _step(state: AgentState, target: AuditTarget, planner: Planner, gates: GateSet) -> TraceEntry:
    t0 = time.perf_counter()
    try:
        action = planner.propose(state)
    except BudgetExhausted as exc:
        raise _Stop("llm_budget", note=f"{exc}: the run ended before the audit concluded") from exc
    except ArgusError as exc:
        raise _Stop("error", f"planner failed: {exc}") from exc
    except Exception as exc:  # a planner bug must not take the process down with it
        raise _Stop("error", f"planner failed: {type(exc).__name__}: {exc}") from exc
    state.history.append(action)
    proposed = parse_action(action)
    verdict = gates.action.evaluate(proposed, state)
    state.evaluation_records.append(verdict)
    entry = TraceEntry(iteration=state.iteration, action=action.action, reasoning=action.reasoning[:500],
                       action_input=action.action_input, verdict=verdict.verdict, outcome="ok",
                       proposed_by=action.proposed_by, failed_answers=action.failed_answers)
    if verdict.verdict == "FAIL":
        critique = verdict.critique or "action refused"
        state.last_critique = critique
        state.last_observation = Observation("rejected", action.action, message=critique)
        entry.outcome, entry.critique = "rejected", critique
    elif action.action == "write_finding":
        _commit_finding(state, target, proposed, gates, entry)
    elif action.action == "conclude":
        run_verdict = gates.run.evaluate(action, state)
        state.evaluation_records.append(run_verdict)
        if run_verdict.verdict == "FAIL":
            critique = run_verdict.critique or "conclusion refused"
            state.last_critique = critique
            state.last_observation = Observation("run_rejected", "conclude", message=critique)
            entry.outcome, entry.critique = "run_rejected", critique
        else:
            entry.outcome = "concluded"
            if isinstance(proposed.params, ConcludeInput):
                state.planner_notes = list(proposed.params.notes)
                state.shape_counts = proposed.params.shape_counts
    else:
        _read(state, target, proposed, entry)
    entry.duration_ms = round((time.perf_counter() - t0) * 1000, 3)
    return entry


def _read(state: AgentState, target: AuditTarget, proposed: ProposedAction, entry: TraceEntry) -> None:
    name = proposed.action.action
    params = proposed.params
    assert params is not None  # the action gate fails actions whose input does not parse
    try:
        result: BaseModel
        if isinstance(params, SchemaSampleInput):
            result = schema_sample(target, params)
        elif isinstance(params, RunQueryInput):
            result = run_query(target, params)
        elif isinstance(params, GetStatsInput):
            result = get_stats(target, params)
        elif isinstance(params, CountManyInput):
            result = count_many(target, asking_failing(params, state.options.failing_documents))
        elif isinstance(params, LookupInput):
            result = lookup_references(target, params)
        else:  # pragma: no cover - the registry lists exactly these read tools
            raise ToolError(f"{name} is not a read tool")
    except (TargetUnavailable, EngineFault) as exc:
        raise _Stop("error", str(exc)) from exc
    except (ToolError, QueryRefused) as exc:
        if isinstance(params, CountManyInput):  # every check of the batch went unanswered
            state.unanswered += _unanswered_batch(params, exc)
        _tool_error(state, entry, name, str(exc))
        return
    except Exception as exc:  # a tool's own bug, or an input nothing foresaw: one failed step, not a lost run
        log.warning("tool_failed", tool=name, error=type(exc).__name__)
        if isinstance(params, CountManyInput):
            state.unanswered += _unanswered_batch(params, exc)
        _tool_error(state, entry, name, f"{name} failed unexpectedly ({type(exc).__name__}); try another query")
        return
    state.executed_keys[action_key(name, params)] = state.iteration
    record = QueryRecord(iteration=state.iteration, tool=name, key=action_key(name, params))
    if isinstance(result, SchemaSampleResult):
        state.schema = result
        state.documents_sampled = result.documents_sampled
        state.collection_size = result.collection_size
        state.total_documents = result.total_documents
        if target.segments is not None:
            target.segments.null_fields = null_fields(result, target.segments.options)
        entry.observation = (f"sampled {result.documents_sampled} of {result.collection_size} documents, "
                             f"{len(result.fields)} field paths")
    elif isinstance(result, RunQueryResult):
        fields = sorted(filter_fields(decode(result.filter)))
        state.evidence_counts[filter_key(result.filter)] = result.matched_count
        state.evidence_alone.add(filter_key(result.filter))
        state.fields_investigated.update(fields)
        record.filter_key, record.matched_count, record.fields = filter_key(result.filter), result.matched_count, fields
        entry.observation = f"matched {result.matched_count} documents, returned {result.returned_count}"
        if result.matched_count == 0:
            record.hints = zero_match_hints(decode(result.filter), state.schema)
            entry.observation += "".join(f"; hint: {h}" for h in record.hints)
    elif isinstance(result, StatsResult):
        assert isinstance(params, GetStatsInput)
        state.statistics[stat_key(params)] = result
        fields = [result.field, *sorted(filter_fields(decode(result.filter_used or {})))]
        state.fields_investigated.update(fields)
        record.fields = fields
        entry.observation = _stats_summary(result)
    elif isinstance(result, LookupResult):
        state.lookups[lookup_key(result.collection, result.field)] = result
        entry.observation = (f"looked up {result.checked} values in {result.collection}.{result.field} with "
                             f"{result.lookups} $in lookup(s): {len(result.missing)} not found")
    elif isinstance(result, CountManyResult):
        assert isinstance(params, CountManyInput)
        unanswered = _record_batch(state, target, result, record, params)
        if result.segment_totals is not None and target.segments is not None:
            target.segments.totals, target.segments.totals_counted = result.segment_totals, True
        entry.observation = (f"counted {len(result.counts)} queries and {len(result.stats)} statistics "
                             f"in one pass; {sum(1 for c in result.counts if c.matched_count)} queries matched")
        if unanswered:
            paths = sorted({p for u in unanswered for p in u.fields})
            reasons = sorted({u.reason for u in unanswered})
            entry.observation += (f"; {len(unanswered)} of them went unanswered ({'; '.join(reasons)})"
                                  f"{' on ' + ', '.join(paths) if paths else ''}: not counted")
    state.queries_run.append(record)
    state.last_observation = Observation("result", name, result=result)
    state.last_critique = None


def _tool_error(state: AgentState, entry: TraceEntry, name: ActionName, message: str) -> None:
    state.last_observation = Observation("error", name, message=message)
    state.last_critique = None
    entry.outcome, entry.observation = "error", message


def _health_or_note(state: AgentState, target: AuditTarget,
                    clock: Clock) -> tuple[HealthSnapshot | None, list[str]]:
    """Health is measured after the audit proper: whatever breaks it leaves the audit's report whole."""
    try:
        return _health(state, target, clock)
    except EngineFault:
        raise
    except Exception as exc:
        log.warning("health_failed", error=type(exc).__name__)
        return None, [f"collection health was not measured: {type(exc).__name__}"]


def _health(state: AgentState, target: AuditTarget, clock: Clock) -> tuple[HealthSnapshot | None, list[str]]:
    """Measure the collection's health (the whole collection, whatever the audit's window) and commit
    the anomalies against earlier runs' baseline; a first run rebuilds that baseline from history."""
    options = state.options.health
    if not options.enabled or state.schema is None:
        return None, []
    context = state.historical_context if isinstance(state.historical_context, HistoricalContext) else None
    whole = target.whole_collection()
    now = clock.now()
    past = timeline(context.health if context is not None else [])
    points: list[HealthSnapshot] = []
    notes: list[str] = []
    newest = newest_document(whole, state.schema, options, now)
    if not past and options.backfill:
        points, notes = backfill(whole, state.schema, now, options, state.options.privacy, newest[1])
        past = points
    snapshot = collect_health(whole, state.schema, now=now, options=options, privacy=state.options.privacy,
                              previous=past[-1] if past else None, newest=newest)
    snapshot.usual_age_s = usual_age(past, snapshot.at, options)
    snapshot.scope = state.window.key if state.window is not None else None
    snapshot.baseline_points = points
    anomalies = detect(past, snapshot, options)
    snapshot.anomalies = [anomaly_key(a) for a in anomalies]  # out of the baselines of later runs
    findings, found_notes = anomaly_findings(anomalies, snapshot,
                                             where=(state.connection_name, state.database, state.collection),
                                             context=context)
    if whole.segments is not None:
        more, more_notes = _segment_health(state, whole.segments, past, snapshot, options, context)
        findings, found_notes = [*findings, *more], [*found_notes, *more_notes]
    for finding in findings:
        declared = state.findings.get(finding.field, finding.category)
        if declared is not None and declared.rule is not None:
            continue  # the contract's rule on the same (collection) category decided it: it stands
        state.findings.upsert(finding)
        # A segment's name is a document value: never logged (agent.segments).
        log.info("anomaly_committed", field="(segment)" if finding.field.startswith("(segment ") else finding.field,
                 category=finding.category.value, severity=finding.severity.value)
    if points:
        notes.append(f"no earlier run was stored: the volume and freshness baselines came from {len(points)} "
                     f"intervals of the collection's own history ({points[0].time_source})")
    return snapshot, [*notes, *found_notes]


def _metrics(state: AgentState, target: AuditTarget, started_at: datetime) -> MeasuredMetrics:
    """The schedule's own metrics, read after the audit proper (one read each) and judged as of the
    run's start, the time their values are stored under; their breaches are committed like health
    anomalies, unless users labelled the pattern a false positive."""
    context = state.historical_context if isinstance(state.historical_context, HistoricalContext) else None
    measured = measure_metrics(target, state.options.metrics, at=started_at,
                               history=context.metrics if context is not None else {},
                               options=state.options.health, privacy=state.options.privacy)
    for finding in measured.findings:
        fp = fingerprint(state.connection_name, state.database, state.collection, finding.field, finding.category)
        why = context.suppressed(fp, finding.affected_pct) if context is not None else None
        if why is not None:
            measured.notes.append(f"{finding.category.value} on {finding.field} not reported: {why}")
            continue
        state.findings.upsert(finding)
        log.info("metric_breach_committed", metric=finding.field, severity=finding.severity.value)
    return measured


def _segment_health(state: AgentState, segments: SegmentPass, past: list[HealthSnapshot], snapshot: HealthSnapshot,
                    options: HealthOptions, context: HistoricalContext | None) -> tuple[list[Finding], list[str]]:
    """Each segment's volume and freshness against its own baseline, and segments that came or went;
    what is reported is kept out of the segment's later baselines, as the collection's is."""
    if _excluded_now(options, snapshot):
        return [], []
    anomalies = judge_segments(past, snapshot, options)
    changes = segment_changes(past, snapshot)
    snapshot.anomalies += [f"{a.kind}@{a.field.removeprefix('(segment ').removesuffix(')')}" for a in anomalies]
    snapshot.anomalies += [c.key for c in changes]
    return segment_health_findings(anomalies, changes, snapshot, segments,
                                   where=(state.connection_name, state.database, state.collection), context=context)


def _excluded_now(options: HealthOptions, snapshot: HealthSnapshot) -> bool:
    return any(span.start <= snapshot.at < span.end for span in options.exclude)


def _segment_findings(state: AgentState, segments: SegmentPass) -> None:
    """Null rates a segment hides in the collection's mix, from the totals the first batched pass counted."""
    context = state.historical_context if isinstance(state.historical_context, HistoricalContext) else None
    existing = {(f.field, f.category) for f in state.findings}
    for finding in hidden_null_rates(segments, where=(state.connection_name, state.database, state.collection),
                                     size=max(state.collection_size, 1), existing=existing, context=context):
        state.findings.upsert(finding)
        log.info("segment_finding_committed", field=finding.field, category=finding.category.value)


def _record_batch(state: AgentState, target: AuditTarget, result: CountManyResult, record: QueryRecord,
                  params: CountManyInput) -> list[UnansweredCheck]:
    """Each counted filter of a batch is evidence exactly as a ``run_query`` of it would be: the
    same query-language match, counted over the whole collection, recorded with its count. Returns
    the batch's checks that got no answer (also kept in the state)."""
    fields: set[str] = set()
    unanswered: list[UnansweredCheck] = []
    for counted in result.counts:
        if counted.error is not None:  # no count, so no evidence either way
            unanswered.append(UnansweredCheck(tool="count_many", fields=_check_fields(decode(counted.filter)),
                                              reason=counted.error))
            continue
        key = filter_key(counted.filter)
        paths = sorted(filter_fields(decode(counted.filter)))
        state.evidence_counts[key] = counted.matched_count
        if counted.failing:
            state.failing_documents[key] = counted.failing
        if counted.segments is not None and target.segments is not None:
            target.segments.breakdowns[key] = counted.segments
        state.queries_run.append(QueryRecord(iteration=state.iteration, tool="count_many", key=f"{record.key}#{key}",
                                             filter_key=key, matched_count=counted.matched_count, fields=paths))
        fields.update(paths)
    for spec, stats in zip(params.stats, result.stats, strict=True):
        state.statistics[stat_key(spec)] = stats
        if stats.error is not None:
            unanswered.append(UnansweredCheck(tool="count_many", fields=[stats.field], reason=stats.error))
            continue
        fields.add(stats.field)
        fields.update(filter_fields(decode(stats.filter_used or {})))
    state.fields_investigated.update(fields)
    state.unanswered += unanswered
    record.fields = sorted(fields)
    return unanswered


def _check_fields(query: Any) -> list[str]:
    """The fields an unanswered check reads, to name it: its filter's paths and, for a cross-field
    check, the ``"$path"`` references inside its ``$expr``."""
    paths = set(filter_fields(query)) if isinstance(query, Mapping) else set()
    stack: list[tuple[Any, bool]] = [(query, False)]
    while stack:
        item, in_expr = stack.pop()
        if in_expr and isinstance(item, str) and len(item) > 1 and item[0] == "$" and item[1] != "$":
            paths.add(item[1:])
        elif isinstance(item, Mapping):
            stack.extend((value, in_expr or key == "$expr") for key, value in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((value, in_expr) for value in item)
    return sorted(paths)


def _unanswered_batch(params: CountManyInput, exc: Exception) -> list[UnansweredCheck]:
    """A batch that failed as a whole: each of its checks, with why."""
    if isinstance(exc, QueryRejected):
        reason = refusal_reason(exc)
    elif isinstance(exc, QueryTimeout):
        reason = "timed out"
    elif isinstance(exc, QueryRefused):
        reason = "refused by Argus's read-only guard"
    else:
        reason = "the read failed"
    out = []
    for query in params.queries:
        try:
            paths = _check_fields(decode(query.filter))
        except (ValueError, TypeError):
            paths = []
        out.append(UnansweredCheck(tool="count_many", fields=paths, reason=reason))
    out += [UnansweredCheck(tool="count_many", fields=[stat.field], reason=reason) for stat in params.stats]
    return out


def _server_notes(target: AuditTarget, state: AgentState) -> list[str]:
    """How the reads degraded for what the server refused, and whether the request unit budget could hold."""
    notes = list(target.notes)
    if state.options.ru_budget is not None and target.refusals.refuses("getLastRequestStatistics") \
            and not target.in_memory:
        notes.append(f"the ru_budget of {state.options.ru_budget:g} RU was not enforced: the server does not "
                     f"report request units")
    return notes


def _unanswered_note(unanswered: list[UnansweredCheck]) -> str:
    """``3 planned check(s) went unanswered ...: qty, sku (the server refused $not); price (timed out)``."""
    by_reason: dict[str, set[str]] = {}
    for check in unanswered:
        by_reason.setdefault(check.reason, set()).update(check.fields)
    named = "; ".join(f"{', '.join(sorted(paths)) or 'a check'} ({reason})"
                      for reason, paths in sorted(by_reason.items()))
    return (f"{len(unanswered)} planned check(s) went unanswered, so the run is partial and resolves no earlier "
            f"finding: {named}")


def _contract_report(state: AgentState, findings: list[Any]) -> ContractReport | None:
    """Each declared rule's result; all unchecked when the run ended before the sample."""
    if state.contract is None:
        return None
    if state.declared is not None:
        return contract_report(state.declared, state.recorded(), findings,
                               values=state.options.privacy != "strict")
    return ContractReport(source=state.contract.source, warnings=list(state.contract.notes), rules=[
        RuleResult(id=r.id, source=r.source, line=r.line, field=r.field, rule=r.kind,
                   expect=r.expectation(values=state.options.privacy != "strict"),
                   category=r.category, severity=r.severity, result="unchecked",
                   detail="the audit ended before the sample") for r in state.contract.checks])


def _stats_summary(result: StatsResult) -> str:
    if isinstance(result.value, list):
        size = f"{len(result.value)}{'+' if result.capped else ''} values"
        if result.totals is not None:
            size += f", {result.totals['values']} duplicated values in {result.totals['documents']} documents"
        return f"{result.operation} of {result.field}: {size}"
    if result.operation == "count":
        return f"count of {result.field}: {result.value}"
    return f"{result.operation} of {result.field} computed"


def _commit_finding(state: AgentState, target: AuditTarget, proposed: ProposedAction, gates: GateSet,
                    entry: TraceEntry) -> None:
    params = proposed.params
    assert isinstance(params, WriteFindingInput)
    candidate = _counted_alone(state, target, candidate_from(state.findings, params))
    verdict = gates.finding.evaluate(candidate, state)
    state.evaluation_records.append(verdict)
    entry.finding_id = candidate.id
    if verdict.verdict == "FAIL":
        critique = verdict.critique or "finding refused"
        state.dismissed_findings.append(DismissedFinding(finding=candidate, critique=critique))
        state.last_critique = critique
        state.last_observation = Observation("finding_dismissed", "write_finding", result=candidate, message=critique)
        entry.outcome, entry.critique = "dismissed", critique
        log.info("finding_dismissed", field=candidate.field, category=candidate.category.value)
        return
    if state.window is not None:
        candidate = candidate.model_copy(update={"window": Window(field=state.window.field,
                                                                  since=state.window.since)})
    candidate = attached(candidate, state.failing_documents)
    state.findings.upsert(candidate)
    state.last_critique = None
    state.last_observation = Observation("finding_committed", "write_finding", result=candidate)
    entry.outcome = "committed"
    entry.observation = f"{candidate.category.value} on {candidate.field}: {candidate.affected_count} documents"
    log.info("finding_committed", field=candidate.field, category=candidate.category.value,
             severity=candidate.severity.value, affected_count=candidate.affected_count)


def _counted_alone(state: AgentState, target: AuditTarget, candidate: Finding) -> Finding:
    """On a server, a finding's count is confirmed by the batched pass that counted its evidence
    query (a ``[$match, $count]`` branch: the query language's own count, as ``count_documents``'s):
    where the finding carries that count, it stands, at no read of its own. Only where the two
    disagree is the evidence query counted on its own (``count_documents``), and that count is the
    finding's, noted. The in-memory engine answers both from one evaluator, so there they cannot differ."""
    try:
        key = filter_key(candidate.evidence_query)
    except (ValueError, TypeError):
        return candidate  # the gate says why
    batched = state.evidence_counts.get(key)
    if target.in_memory or batched is None or key in state.evidence_alone or candidate.affected_count == batched:
        return candidate
    what = f"{candidate.field} {candidate.category.value}"
    try:
        alone = target.count_documents(decode(candidate.evidence_query))
    except (TargetUnavailable, EngineFault) as exc:
        raise _Stop("error", str(exc)) from exc
    except (ToolError, QueryRefused, ValueError, TypeError) as exc:
        state.notes.append(f"the evidence query of {what} could not be counted on its own ({type(exc).__name__}): "
                           f"the finding carries the batched pass's count")
        return candidate
    state.evidence_counts[key] = alone
    state.evidence_alone.add(key)
    if alone != batched and alone == candidate.affected_count:
        state.notes.append(f"the evidence query of {what} counts {alone:,} documents on its own where the batched "
                           f"pass counted {batched:,}: the finding carries {alone:,}")
    return candidate  # else the gate weighs the finding against its query's own count


def _build_report(state: AgentState, planner: Planner, trace: list[TraceEntry], *, started_at: Any,
                  finished_at: Any, duration_s: float, outcome: Outcome, reason: TerminationReason,
                  error: str | None, llm: LLMAccount | None = None, note: str | None = None,
                  database_cost: DatabaseCost | None = None) -> AuditReport:
    # The privacy boundary: what the report (and so the store, /runs, alerts) may hold of documents.
    masker = Masker(state.options.privacy, vocabulary(state.schema, state.contract))
    findings = bounded([masker.finding(f) for f in state.findings])
    dismissed = [d.model_copy(update={"finding": masker.finding(d.finding)}) for d in state.dismissed_findings]
    notes: list[str] = list(dict.fromkeys([*state.planner_notes, *state.notes]))
    if reason == "iteration_budget":
        notes.append(f"iteration budget of {state.options.max_iterations} ran out before the audit concluded")
    elif reason == "time_budget":
        notes.append(f"time budget of {state.options.time_budget_s:g}s ran out before the audit concluded")
    elif reason == "interrupted":
        notes.append("the daemon shut down before the audit concluded")
    elif reason in ("llm_budget", "ru_budget") and note:
        notes.append(note)
    if llm is not None:
        if reason == "llm_budget" and note:
            llm.summary.budget_exhausted = note
        notes += [n for n in llm.notes() if n not in notes]
    if state.unanswered:
        notes.append(_unanswered_note(state.unanswered))
    unprofiled = state.schema.not_profiled() if state.schema is not None else None
    if unprofiled:
        notes.append(f"{unprofiled}: those fields were not checked, so the run is partial")
    cost = database_cost or DatabaseCost()
    if cost.throttled:
        notes.append(f"the server throttled {cost.throttled} request(s) (code 16500, TooManyRequests); "
                     f"Argus waited as asked and retried")
    fields = state.auditable_fields()
    contract = _contract_report(state, findings)
    report = AuditReport(
        run_id=state.run_id, connection=state.connection_name, database=state.database,
        collection=state.collection, planner=planner.name, model=planner.model,
        started_at=started_at, finished_at=finished_at, duration_s=duration_s,
        outcome=outcome, termination_reason=reason, error=error, iterations=state.iteration,
        options=state.options, documents_sampled=state.documents_sampled,
        collection_size=state.total_documents if state.total_documents is not None else state.collection_size,
        window=state.window,
        fields_total=len(fields), fields_investigated=sum(1 for f in fields if f in state.fields_investigated),
        findings=findings, dismissed_findings=dismissed, trace=[masker.trace_entry(e) for e in trace],
        evaluations=state.evaluation_records, token_usage=llm.total if llm else state.total_usage,
        cost_usd=round(llm.cost_usd, 6) if llm else 0.0, llm=llm.report() if llm else None, notes=notes,
        database_cost=cost, contract=contract, unanswered_checks=list(state.unanswered),
        shapes=for_report(state.schema.shapes.with_counts(state.shape_counts)
                          if state.schema is not None and state.schema.shapes is not None else None,
                          state.options.privacy, masker.categorical),
    )
    # Replay needs the evidence as it was run: kept in memory only, for the next run in this process.
    report.replay_evidence.update({raw.id: raw.evidence_query for raw, written in zip(state.findings, findings,
                                                                                      strict=True)
                                   if written.evidence_query != raw.evidence_query})
    return report
