"""A stored finding as the HTTP API and ``argus finding show --format json`` give it, and its
evidence query as a mongosh command."""

from __future__ import annotations

import json
from typing import Any

from argus.agent.findings import Finding
from argus.agent.privacy import has_masked
from argus.agent.report import AuditReport
from argus.daemon.store import PostgresStore, StoreError

__all__ = ["finding_view", "mongosh_find", "stored_finding"]

_SCALARS = ("$oid", "$date", "$numberLong", "$numberDecimal", "$numberInt", "$numberDouble", "$binary", "$uuid",
            "$regularExpression", "$timestamp", "$minKey", "$maxKey")


def _ejson_scalars(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k in _SCALARS for k in value) or any(_ejson_scalars(v) for v in value.values())
    if isinstance(value, list):
        return any(_ejson_scalars(v) for v in value)
    return False


def mongosh_find(database: str, collection: str, query: Any) -> str:
    """A mongosh command that runs ``query`` (Extended JSON) on the collection; Extended JSON
    scalars (ObjectIds, dates, 64-bit integers) go through ``EJSON.deserialize``, mongosh's own."""
    text = json.dumps(query, ensure_ascii=False, separators=(", ", ": "))
    if _ejson_scalars(query):
        text = f"EJSON.deserialize({text})"
    return f"db.getSiblingDB({json.dumps(database)}).getCollection({json.dumps(collection)}).find({text})"


def finding_view(report: AuditReport, finding: Finding) -> dict[str, Any]:
    """The finding as ``/findings/ID`` and ``finding show --format json`` give it: as stored (masked by
    the run's privacy mode), with its run and the mongosh command of its evidence query."""
    return {"run_id": str(report.run_id), "database": report.database, "collection": report.collection,
            "privacy": report.options.privacy, "finished_at": report.finished_at.isoformat(),
            "finding": finding.model_dump(mode="json"),
            "evidence_mongosh": mongosh_find(report.database, report.collection, finding.evidence_query),
            "evidence_runnable": not has_masked(finding.evidence_query)}


def stored_finding(store: PostgresStore, finding_id: str) -> dict[str, Any] | None:
    """``finding_view`` of a stored finding from its id or a prefix of at least 8 characters (a
    prefix as tables print it, not a way to enumerate findings); None when there is no such finding."""
    if len(finding_id) < 8:
        return None
    try:
        run_id, fid = store.find_finding(finding_id)
        report = store.get_report(run_id)
    except StoreError:
        return None
    found = next((f for f in report.findings if f.id == fid), None)
    return finding_view(report, found) if found is not None else None
