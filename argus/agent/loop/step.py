"""One iteration: the planner's action through the gates, then read, committed or concluded, and observed."""

from __future__ import annotations

import time

import structlog
from pydantic import BaseModel

from argus.agent.contracts.compile import stat_key
from argus.agent.contracts.results import lookup_key
from argus.agent.ejson import decode, filter_key
from argus.agent.errors import ArgusError, BudgetExhausted, EngineFault, QueryRefused, TargetUnavailable, ToolError
from argus.agent.failing import asking_failing, attached
from argus.agent.findings import Finding, WriteFindingInput
from argus.agent.gates import GateSet, ProposedAction, action_key, parse_action
from argus.agent.hints import zero_match_hints
from argus.agent.loop.batch import record_batch, unanswered_batch
from argus.agent.planners.base import Planner
from argus.agent.report import TerminationReason, TraceEntry
from argus.agent.segments.passes import null_fields
from argus.agent.state import AgentState, DismissedFinding, Observation, QueryRecord
from argus.agent.tools import get_stats, run_query, schema_sample
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
from argus.agent.tools.write_finding import candidate_from
from argus.agent.window import Window

__all__ = ["Stop", "step"]

log = structlog.get_logger("argus.agent")


class Stop(Exception):
    """Ends the run: why (``reason``), the error that failed it, and a note for the report."""

    def __init__(self, reason: TerminationReason, error: str | None = None, *, note: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error = error
        self.note = note


def step(state: AgentState, target: AuditTarget, planner: Planner, gates: GateSet) -> TraceEntry:
    t0 = time.perf_counter()
    try:
        action = planner.propose(state)
    except BudgetExhausted as exc:
        raise Stop("llm_budget", note=f"{exc}: the run ended before the audit concluded") from exc
    except ArgusError as exc:
        raise Stop("error", f"planner failed: {exc}") from exc
    except Exception as exc:  # a planner bug must not take the process down with it
        raise Stop("error", f"planner failed: {type(exc).__name__}: {exc}") from exc
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
        raise Stop("error", str(exc)) from exc
    except (ToolError, QueryRefused) as exc:
        if isinstance(params, CountManyInput):  # every check of the batch went unanswered
            state.unanswered += unanswered_batch(params, exc)
        _tool_error(state, entry, name, str(exc))
        return
    except Exception as exc:  # a tool's own bug, or an input nothing foresaw: one failed step, not a lost run
        log.warning("tool_failed", tool=name, error=type(exc).__name__)
        if isinstance(params, CountManyInput):
            state.unanswered += unanswered_batch(params, exc)
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
        unanswered = record_batch(state, target, result, record, params)
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
        raise Stop("error", str(exc)) from exc
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


