"""The report assembled from the run's state: the privacy boundary, the notes that explain the outcome, the
contract's rule-by-rule results."""

from __future__ import annotations

from typing import Any

from argus.agent.contracts.model import ContractReport, RuleResult
from argus.agent.contracts.results import contract_report
from argus.agent.evidence import vocabulary
from argus.agent.failing import bounded
from argus.agent.llm.usage import LLMAccount
from argus.agent.planners.base import Planner
from argus.agent.privacy import Masker
from argus.agent.report import AuditReport, Outcome, TerminationReason, TraceEntry
from argus.agent.shapes.privacy import for_report
from argus.agent.state import AgentState, UnansweredCheck
from argus.agent.tools.accounting import DatabaseCost
from argus.agent.tools.target import AuditTarget

__all__ = ["build_report", "server_notes"]


def server_notes(target: AuditTarget, state: AgentState) -> list[str]:
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


def build_report(state: AgentState, planner: Planner, trace: list[TraceEntry], *, started_at: Any,
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
