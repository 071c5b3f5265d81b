"""The failing documents of a finding: asked for in the evidence pass, attached to the finding its
evidence query proves, and bounded per run.

Every evidence pass (the heuristic planner's, the contract stage's, a model's ``count_many`` with
``examples_of``) reads a few example documents of each query in a ``$facet`` branch; asking that
branch for ``_id`` too, and for up to ``AuditOptions.failing_documents`` documents, costs no pass
and no branch of its own. The privacy mode decides what of them a report keeps
(``argus.agent.privacy.Masker.failing``); ``FAILING_PER_RUN`` bounds a run's stored documents in all.
"""

from __future__ import annotations

from typing import Any

from argus.agent.ejson import filter_key
from argus.agent.failing_bounds import FAILING_PER_RUN
from argus.agent.findings import FailingDocument, FailingDocuments, Finding
from argus.agent.tools.models import CountManyInput
from argus.agent.tools.profiling import values_at

__all__ = ["asking_failing", "attached", "bounded"]


def asking_failing(params: CountManyInput, n: int) -> CountManyInput:
    """``params`` with each evidence query (one that asks for examples) asking for ``n`` failing documents."""
    if n <= 0 or not any(q.examples_of is not None and q.failing < n for q in params.queries):
        return params
    queries = [q.model_copy(update={"failing": n}) if q.examples_of is not None and q.failing < n else q
               for q in params.queries]
    return params.model_copy(update={"queries": queries})


def attached(finding: Finding, failing: dict[str, list[dict[str, Any]]]) -> Finding:
    """The finding with the documents its evidence query matched in the evidence pass, if that pass
    read any: each document's ``_id`` and the values of the finding's field in it (raw: the report's
    privacy boundary masks them)."""
    try:
        rows = failing.get(filter_key(finding.evidence_query))
    except (ValueError, TypeError):
        return finding
    if not rows:
        return finding
    if _keys_only(finding):
        documents = [FailingDocument(id=row.get("_id")) for row in rows]
        kept = FailingDocuments(documents=documents, read=len(documents),
                                withheld="an additional_fields rule names keys, never their values")
        return finding.model_copy(update={"failing": kept})
    documents = [FailingDocument(id=row.get("_id"), values=values_at(row, finding.field)) for row in rows]
    return finding.model_copy(update={"failing": FailingDocuments(documents=documents, read=len(documents))})


def _keys_only(finding: Finding) -> bool:
    """A finding of undeclared keys: its field's value is the whole object, whose undeclared values
    the rule promises never to write, in any privacy mode (``argus.agent.contracts.results``)."""
    return finding.rule is not None and " additional_fields" in finding.rule


def bounded(findings: list[Finding], limit: int = FAILING_PER_RUN) -> list[Finding]:
    """The findings with at most ``limit`` failing documents kept among them, the first findings first;
    a finding cut short says so."""
    left = limit
    out = []
    for f in findings:
        kept = f.failing
        if kept is not None and len(kept.documents) > left:
            kept = kept.model_copy(update={
                "documents": kept.documents[:left],
                "withheld": f"the run keeps at most {limit:,} failing documents in all"})
        left -= len(kept.documents) if kept is not None else 0
        out.append(f if kept is f.failing else f.model_copy(update={"failing": kept}))
    return out
