"""The loop itself: the run set up, then propose, gate, act, observe until a stop; then the run's outcome."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol
from uuid import UUID, uuid4

import structlog

from argus.agent.clock import Clock, SystemClock
from argus.agent.contracts.compile import compile_contract
from argus.agent.contracts.model import Contract
from argus.agent.contracts.results import not_checked
from argus.agent.ejson import encode
from argus.agent.errors import ArgusError, EngineFault
from argus.agent.findings import Category, Finding, Severity
from argus.agent.gates import GateSet
from argus.agent.health.models import HealthSnapshot
from argus.agent.history import HistoricalContext
from argus.agent.llm.usage import LLMAccount
from argus.agent.loop.aftermath import custom_metrics, health_or_note, segment_findings
from argus.agent.loop.assembly import build_report, server_notes
from argus.agent.loop.step import Stop, step
from argus.agent.options import AuditOptions
from argus.agent.planners.base import Planner
from argus.agent.report import AuditReport, Outcome, TerminationReason, TraceEntry
from argus.agent.segments.findings import with_breakdown
from argus.agent.segments.passes import segment_pass
from argus.agent.state import AgentState
from argus.agent.tools.target import AuditTarget
from argus.agent.tools.window import open_window
from argus.agent.window import AuditWindow, unusable_filters

__all__ = ["AuditObserver", "run_audit"]

log = structlog.get_logger("argus.agent")


class AuditObserver(Protocol):
    def on_step(self, state: AgentState, entry: TraceEntry) -> None:
        """Called after every iteration, for progress displays and status pages."""
        ...


def wrap_up_s(budget_s: float) -> float:
    """Seconds of a run's budget kept from model calls for what follows the last one (judging, the
    report, the evidence replay): 5% of the budget, at most 1.5 s."""
    return min(1.5, 0.05 * budget_s)


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
        # less the time the run needs after its last call to judge and report (wrap_up_s): a model that
        # never answers must not take the report past the budget. A call cut short so ends the run as
        # out of time (partial, time_budget), however the planner answers it.
        reserve = wrap_up_s(options.time_budget_s)
        llm.bind_deadline(lambda: options.time_budget_s - reserve - (clock.monotonic() - start))
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
                raise Stop("iteration_budget")
            if clock.monotonic() - start >= options.time_budget_s:
                raise Stop("time_budget")
            if should_stop is not None and should_stop():
                raise Stop("interrupted")
            _check_ru_budget(target, options.ru_budget)
            try:
                entry = step(state, target, planner, gates)
            finally:
                if llm is not None:
                    state.total_usage = llm.total
        except Stop as stop:
            reason, error, note = stop.reason, stop.error, stop.note
            break
        trace.append(entry)
        state.iteration += 1
        if state.contract is not None and state.declared is None and state.schema is not None:
            state.declared = compile_contract(state.contract, state.schema, clock.now())
        if observer is not None:
            observer.on_step(state, entry)
        if llm is not None and llm.deadline_reached:
            reason = "time_budget"
            break
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
        segment_findings(state, target.segments)
    if outcome != "failed":
        try:
            health, health_notes = health_or_note(state, target, clock)
        except EngineFault as exc:
            outcome, reason, error = "failed", "error", str(exc)
    measured = custom_metrics(state, target, started_at) if outcome != "failed" and options.metrics else None
    if measured is not None:
        health_notes += measured.notes
        if measured.unmeasured and outcome == "succeeded":
            outcome = "partial"  # a metric not read proves nothing: this run must not resolve its breach
    finished_at = clock.now()
    if target.segments is not None:
        for finding in list(state.findings):
            state.findings.upsert(with_breakdown(finding, target.segments))
    report = build_report(state, planner, trace, started_at=started_at, finished_at=finished_at,
                          duration_s=clock.monotonic() - start, outcome=outcome, reason=reason, error=error,
                          llm=llm, note=note, database_cost=target.cost())
    report = report.model_copy(update={"health": health, "metrics": measured.results if measured else [],
                                       "notes": [*report.notes, *server_notes(target, state), *health_notes]})
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
        raise Stop("ru_budget", note=f"Cosmos DB request unit budget of {budget:g} RU is spent ({spent:g} RU): "
                                     f"the run ended before the audit concluded")


