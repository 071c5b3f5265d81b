"""``schema_sample``: sample the collection (``$sample`` on a server) and profile its implicit schema."""

from __future__ import annotations

from argus.agent.shapes.discover import discover
from argus.agent.tools.guard_pipeline import check_pipeline
from argus.agent.tools.models import SchemaSampleInput, SchemaSampleResult
from argus.agent.tools.profiling import profile
from argus.agent.tools.target import AuditTarget

__all__ = ["schema_sample"]


def schema_sample(target: AuditTarget, params: SchemaSampleInput) -> SchemaSampleResult:
    """Sample up to ``params.sample_size`` documents and return per-path statistics.

    The collection size comes from the server's metadata count, which is cheap on large
    collections; it is the denominator for affected shares, except in a scoped audit, where the
    window's documents are.
    """
    pipeline = [{"$sample": {"size": params.sample_size}}]
    check_pipeline(pipeline)
    documents = target.sample(params.sample_size)  # the same $sample on a server; drawn in process in memory
    size = target.estimated_document_count()
    found = profile(documents)
    if target.window_documents is not None:
        size, total = target.window_documents, size
    else:
        total = None
    return SchemaSampleResult(
        collection=target.name,
        collection_size=max(size, len(documents)),
        total_documents=total,
        documents_sampled=len(documents),
        fields=found.fields,
        truncated_paths=found.truncated_paths,
        paths_dropped=found.paths_dropped,
        unprofiled=found.unprofiled,
        shapes=discover(documents, time_field=_time_field(target)),
    )


def _time_field(target: AuditTarget) -> str | None:
    """The date field of a scoped audit's window (``{field: {$gte: since}}``): when documents were written."""
    scope = target.scope
    field = next(iter(scope), None) if scope is not None and len(scope) == 1 else None
    return None if field is None or field == "_id" else field
