"""The ReAct loop: propose, gate, act, observe, until a conclusion is accepted or a budget runs out.

The loop is the only code that mutates ``AgentState``. It always returns an ``AuditReport``:
``succeeded`` when the run gate accepted a conclusion, ``partial`` when the iteration,
wall-clock or LLM (tokens, USD) budget ran out first, ``failed`` when the database became
unreachable or the planner broke. A tool error (bad query, timeout) is an observation, not a failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol
from uuid import UUID, uuid4

import structlog
from pydantic import BaseModel

from agent.clock import Clock, SystemClock
from agent.ejson import decode, filter_key
from agent.errors import ArgusError, BudgetExhausted, QueryRefused, TargetUnavailable, ToolError
from agent.findings import WriteFindingInput
from agent.gates import GateSet, ProposedAction, action_key, parse_action
from agent.health.baseline import detect, usual_age
from agent.health.collect import collect_health
from agent.health.findings import anomaly_findings
from agent.health.models import HealthSnapshot
from agent.hints import zero_match_hints
from agent.history import HistoricalContext
from agent.llm.usage import LLMAccount
from agent.options import AuditOptions
from agent.planners.base import Planner
from agent.privacy import Masker, categorical_values
from agent.report import AuditReport, Outcome, TerminationReason, TraceEntry
from agent.state import AgentState, DismissedFinding, Observation, QueryRecord
from agent.tools import get_stats, run_query, schema_sample
from agent.tools.accounting import DatabaseCost
from agent.tools.count_many import count_many
from agent.tools.guard import filter_fields
from agent.tools.models import (
    CountManyInput,
    CountManyResult,
    GetStatsInput,
    RunQueryInput,
    RunQueryResult,
    SchemaSampleInput,
    SchemaSampleResult,
    StatsResult,
)
from agent.tools.registry import ActionName
from agent.tools.target import AuditTarget
from agent.tools.write_finding import candidate_from

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
) -> AuditReport:
    """Audit ``target`` with ``planner`` and return the report; never raises for audit failures.

    ``should_stop`` is asked before every iteration; when it says yes (a daemon shutting down)
    the run ends as ``partial`` with termination reason ``interrupted``. ``llm`` is the account
    the planner's and evaluators' model calls are recorded in: its usage, cost and notes reach
    the state (for the planner to see) and the report.
    """
    options = options or AuditOptions()
    clock = clock or SystemClock()
    gates = gates or GateSet()
    state = AgentState(connection_name=target.connection_name, database=target.database,
                       collection=target.name, options=options, run_id=run_id or uuid4(),
                       historical_context=historical_context)
    started_at = clock.now()
    start = clock.monotonic()

    def remaining_ms() -> int:
        return int((options.time_budget_s - (clock.monotonic() - start)) * 1000)

    target.cap_time_with(remaining_ms)
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
    while True:
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
        if observer is not None:
            observer.on_step(state, entry)
        if entry.outcome == "concluded":
            reason = "concluded"
            break

    outcome: Outcome = "succeeded" if reason == "concluded" else "failed" if reason == "error" else "partial"
    if outcome == "succeeded" and state.refused_checks:
        # Not every check ran: absence proves nothing for them, so the run resolves nothing (as any
        # partial run) and the next run is compared with the last one that checked everything.
        outcome = "partial"
    if outcome == "succeeded" and state.schema is not None and state.schema.not_profiled():
        outcome = "partial"  # fields the profiler never recorded were never checked either
    health, health_notes = _health_or_note(state, target, clock) if outcome != "failed" else (None, [])
    finished_at = clock.now()
    report = _build_report(state, planner, trace, started_at=started_at, finished_at=finished_at,
                           duration_s=clock.monotonic() - start, outcome=outcome, reason=reason, error=error,
                           llm=llm, note=note, database_cost=target.cost())
    report = report.model_copy(update={"health": health, "notes": [*report.notes, *health_notes]})
    log.info("audit_finished", outcome=outcome, termination_reason=reason, iterations=state.iteration,
             findings=len(report.findings), duration_s=round(report.duration_s, 3))
    return report


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
        _commit_finding(state, proposed, gates, entry)
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
            result = count_many(target, params)
        else:  # pragma: no cover - the registry lists exactly these read tools
            raise ToolError(f"{name} is not a read tool")
    except TargetUnavailable as exc:
        raise _Stop("error", str(exc)) from exc
    except (ToolError, QueryRefused) as exc:
        _tool_error(state, entry, name, str(exc))
        return
    except Exception as exc:  # a tool's own bug, or an input nothing foresaw: one failed step, not a lost run
        log.warning("tool_failed", tool=name, error=type(exc).__name__)
        _tool_error(state, entry, name, f"{name} failed unexpectedly ({type(exc).__name__}); try another query")
        return
    state.executed_keys[action_key(name, params)] = state.iteration
    record = QueryRecord(iteration=state.iteration, tool=name, key=action_key(name, params))
    if isinstance(result, SchemaSampleResult):
        state.schema = result
        state.documents_sampled = result.documents_sampled
        state.collection_size = result.collection_size
        entry.observation = (f"sampled {result.documents_sampled} of {result.collection_size} documents, "
                             f"{len(result.fields)} field paths")
    elif isinstance(result, RunQueryResult):
        fields = sorted(filter_fields(decode(result.filter)))
        state.evidence_counts[filter_key(result.filter)] = result.matched_count
        state.fields_investigated.update(fields)
        record.filter_key, record.matched_count, record.fields = filter_key(result.filter), result.matched_count, fields
        entry.observation = f"matched {result.matched_count} documents, returned {result.returned_count}"
        if result.matched_count == 0:
            record.hints = zero_match_hints(decode(result.filter), state.schema)
            entry.observation += "".join(f"; hint: {h}" for h in record.hints)
    elif isinstance(result, StatsResult):
        fields = [result.field, *sorted(filter_fields(decode(result.filter_used or {})))]
        state.fields_investigated.update(fields)
        record.fields = fields
        entry.observation = _stats_summary(result)
    elif isinstance(result, CountManyResult):
        refused, paths = _record_batch(state, result, record)
        entry.observation = (f"counted {len(result.counts)} queries and {len(result.stats)} statistics "
                             f"in one pass; {sum(1 for c in result.counts if c.matched_count)} queries matched")
        if refused:
            entry.observation += (f"; the database engine refused {refused} of them (an operator or a type "
                                  f"it does not support){' on ' + ', '.join(paths) if paths else ''}: not counted")
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
    except Exception as exc:
        log.warning("health_failed", error=type(exc).__name__)
        return None, [f"collection health was not measured: {type(exc).__name__}"]


def _health(state: AgentState, target: AuditTarget, clock: Clock) -> tuple[HealthSnapshot | None, list[str]]:
    """Measure the collection's health and commit the anomalies against earlier runs' baseline."""
    options = state.options.health
    if not options.enabled or state.schema is None:
        return None, []
    context = state.historical_context if isinstance(state.historical_context, HistoricalContext) else None
    past = context.health if context is not None else []
    snapshot = collect_health(target, state.schema, now=clock.now(), options=options,
                              privacy=state.options.privacy, previous=past[-1] if past else None)
    snapshot.usual_age_s = usual_age(past, snapshot.at, options)
    findings, notes = anomaly_findings(detect(past, snapshot, options), snapshot,
                                       where=(state.connection_name, state.database, state.collection),
                                       context=context)
    for finding in findings:
        state.findings.upsert(finding)
        log.info("anomaly_committed", field=finding.field, category=finding.category.value,
                 severity=finding.severity.value)
    return snapshot, notes


def _record_batch(state: AgentState, result: CountManyResult, record: QueryRecord) -> tuple[int, list[str]]:
    """Each counted filter of a batch is evidence exactly as a ``run_query`` of it would be: the
    same query-language match, counted over the whole collection, recorded with its count. Returns
    how many of the batch's checks the engine refused, and the fields they were about."""
    fields: set[str] = set()
    unchecked: set[str] = set()
    refused = 0
    for counted in result.counts:
        if counted.error is not None:  # refused by the engine: no count, so no evidence either way
            refused += 1
            unchecked.update(filter_fields(decode(counted.filter)))
            continue
        key = filter_key(counted.filter)
        paths = sorted(filter_fields(decode(counted.filter)))
        state.evidence_counts[key] = counted.matched_count
        state.queries_run.append(QueryRecord(iteration=state.iteration, tool="count_many", key=f"{record.key}#{key}",
                                             filter_key=key, matched_count=counted.matched_count, fields=paths))
        fields.update(paths)
    for stats in result.stats:
        if stats.error is not None:
            refused += 1
            unchecked.add(stats.field)
            continue
        fields.add(stats.field)
        fields.update(filter_fields(decode(stats.filter_used or {})))
    state.fields_investigated.update(fields)
    state.refused_checks += refused
    state.unchecked_fields.update(unchecked)
    record.fields = sorted(fields)
    return refused, sorted(unchecked)


def _stats_summary(result: StatsResult) -> str:
    if isinstance(result.value, list):
        size = f"{len(result.value)}{'+' if result.capped else ''} values"
        if result.totals is not None:
            size += f", {result.totals['values']} duplicated values in {result.totals['documents']} documents"
        return f"{result.operation} of {result.field}: {size}"
    if result.operation == "count":
        return f"count of {result.field}: {result.value}"
    return f"{result.operation} of {result.field} computed"


def _commit_finding(state: AgentState, proposed: ProposedAction, gates: GateSet, entry: TraceEntry) -> None:
    params = proposed.params
    assert isinstance(params, WriteFindingInput)
    candidate = candidate_from(state.findings, params)
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
    state.findings.upsert(candidate)
    state.last_critique = None
    state.last_observation = Observation("finding_committed", "write_finding", result=candidate)
    entry.outcome = "committed"
    entry.observation = f"{candidate.category.value} on {candidate.field}: {candidate.affected_count} documents"
    log.info("finding_committed", field=candidate.field, category=candidate.category.value,
             severity=candidate.severity.value, affected_count=candidate.affected_count)


def _build_report(state: AgentState, planner: Planner, trace: list[TraceEntry], *, started_at: Any,
                  finished_at: Any, duration_s: float, outcome: Outcome, reason: TerminationReason,
                  error: str | None, llm: LLMAccount | None = None, note: str | None = None,
                  database_cost: DatabaseCost | None = None) -> AuditReport:
    # The privacy boundary: what the report (and so the store, /runs, alerts) may hold of documents.
    masker = Masker(state.options.privacy, categorical_values(state.schema))
    findings = [masker.finding(f) for f in state.findings]
    dismissed = [d.model_copy(update={"finding": masker.finding(d.finding)}) for d in state.dismissed_findings]
    notes: list[str] = []
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
    if state.refused_checks:
        where = sorted(state.unchecked_fields)
        notes.append(f"the database engine refused {state.refused_checks} check(s) (an operator or a type it does "
                     f"not support){' on ' + ', '.join(where) if where else ''}: they were not counted, so the run "
                     f"is partial and resolves no earlier finding")
    unprofiled = state.schema.not_profiled() if state.schema is not None else None
    if unprofiled:
        notes.append(f"{unprofiled}: those fields were not checked, so the run is partial")
    cost = database_cost or DatabaseCost()
    if cost.throttled:
        notes.append(f"the server throttled {cost.throttled} request(s) (code 16500, TooManyRequests); "
                     f"Argus waited as asked and retried")
    fields = state.auditable_fields()
    report = AuditReport(
        run_id=state.run_id, connection=state.connection_name, database=state.database,
        collection=state.collection, planner=planner.name, model=planner.model,
        started_at=started_at, finished_at=finished_at, duration_s=duration_s,
        outcome=outcome, termination_reason=reason, error=error, iterations=state.iteration,
        options=state.options, documents_sampled=state.documents_sampled, collection_size=state.collection_size,
        fields_total=len(fields), fields_investigated=sum(1 for f in fields if f in state.fields_investigated),
        findings=findings, dismissed_findings=dismissed, trace=[masker.trace_entry(e) for e in trace],
        evaluations=state.evaluation_records, token_usage=llm.total if llm else state.total_usage,
        cost_usd=round(llm.cost_usd, 6) if llm else 0.0, llm=llm.report() if llm else None, notes=notes,
        database_cost=cost,
    )
    # Replay needs the evidence as it was run: kept in memory only, for the next run in this process.
    report.replay_evidence.update({raw.id: raw.evidence_query for raw, written in zip(state.findings, findings,
                                                                                      strict=True)
                                   if written.evidence_query != raw.evidence_query})
    return report
