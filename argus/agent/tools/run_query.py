"""``run_query``: a bounded ``find`` with the exact number of matching documents."""

from __future__ import annotations

from argus.agent.ejson import decode, encode
from argus.agent.tools.guard import check_filter
from argus.agent.tools.guard_pipeline import check_projection
from argus.agent.tools.models import RunQueryInput, RunQueryResult
from argus.agent.tools.target import AuditTarget

__all__ = ["run_query"]


def run_query(target: AuditTarget, params: RunQueryInput) -> RunQueryResult:
    """Return up to ``params.limit`` documents and ``matched_count`` from ``count_documents``.

    ``matched_count`` covers the whole collection, so it is what a finding's affected count
    comes from. A limit of 0 counts without fetching any document.
    """
    query = decode(params.filter)
    check_filter(query)
    check_projection(params.projection)
    matched = target.count_documents(query)
    documents = target.find(query, params.projection, params.limit) if params.limit and matched else []
    return RunQueryResult(
        collection=target.name,
        filter=encode(query),
        documents=[encode(d) for d in documents],
        matched_count=matched,
        returned_count=len(documents),
        truncated=matched > len(documents),
    )
