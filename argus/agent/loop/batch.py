"""A batched pass (``count_many``) recorded as evidence, check by check, and the checks it left unanswered."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from argus.agent.contracts.compile import stat_key
from argus.agent.ejson import decode, filter_key
from argus.agent.errors import QueryRefused, QueryRejected, QueryTimeout
from argus.agent.state import AgentState, QueryRecord, UnansweredCheck
from argus.agent.tools.compat import refusal_reason
from argus.agent.tools.guard import filter_fields
from argus.agent.tools.models import CountManyInput, CountManyResult
from argus.agent.tools.target import AuditTarget

__all__ = ["record_batch", "unanswered_batch"]


def record_batch(state: AgentState, target: AuditTarget, result: CountManyResult, record: QueryRecord,
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


def unanswered_batch(params: CountManyInput, exc: Exception) -> list[UnansweredCheck]:
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


