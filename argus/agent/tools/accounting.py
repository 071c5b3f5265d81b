"""What an audit cost the audited database: every operation Argus sent, counted where it is sent.

``AuditTarget`` records each read here, so a tool added later is counted without doing anything.
A *pass* is a read that visits the whole collection (``count_documents``, ``find``, ``aggregate``
without a selective ``_id`` path); ``$sample`` and the metadata count are not passes. Documents
examined are known for a pass once the collection size is (every document is visited) and for a
sample (the documents drawn). A scoped audit whose window field leads an index visits only the
window's documents on each pass: its passes count the window's size, from the window's own count.
Request units come from Cosmos DB's ``getLastRequestStatistics``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["DatabaseCost", "OperationLedger", "OperationRecord", "ServerKind", "is_selective", "pipeline_is_pass"]

ServerKind = Literal["unknown", "mongodb", "cosmosdb", "memory"]


class OperationRecord(BaseModel):
    """One operation sent to the audited collection (no filter or value: only its shape)."""

    kind: str
    full_pass: bool
    documents_examined: int | None = None
    duration_ms: float = 0.0
    request_charge: float | None = None
    throttled: int = Field(0, description="times the server answered 16500 (TooManyRequests) before this one ran")
    error: str | None = None


class DatabaseCost(BaseModel):
    """Per-run totals: the report's ``database_cost``, stored with the run and exported as metrics."""

    server: ServerKind = "unknown"
    queries_sent: int = Field(0, description="operations sent to the audited collection")
    passes: int = Field(0, description="operations that visited the whole collection ($sample excluded)")
    lookups: int = Field(0, description="reads of referenced collections by reference checks ($in over a batch of "
                                        "values: index lookups where the referenced field is indexed); not passes")
    metric_reads: int = Field(0, description="reads of the schedule's own metrics (metrics:), one per metric; each "
                                             "is also a pass unless its pipeline starts with a selective $match")
    documents_examined: int = Field(0, description="documents visited, where known (passes x collection size, "
                                                   "or x the window's documents in a scoped audit whose field "
                                                   "leads an index, plus sampled documents)")
    throttled: int = Field(0, description="requests the server refused with 16500 (TooManyRequests) and Argus retried")
    request_units: float | None = Field(None, description="Cosmos DB request units charged (getLastRequestStatistics);"
                                                          " None when the server is not Cosmos DB")
    database_time_s: float = Field(0.0, description="wall-clock seconds spent waiting on the database")
    batch_checks: dict[str, int] = Field(default_factory=dict, description="checks one batched pass ($facet) of "
                                         "each kind (counts, stats) carries within the time limit on this server, "
                                         "as learned in this run; the next run of the collection starts from it")
    operations: list[OperationRecord] = Field(default_factory=list)


def is_selective(query: Mapping[str, Any] | None) -> bool:
    """A filter the ``_id`` index answers without visiting the collection: ``_id`` equality, ``$in``
    or a range (the health check counts documents newer than the last run's newest ``_id``)."""
    if not query or set(query) != {"_id"}:
        return False
    value = query["_id"]
    return not isinstance(value, Mapping) or set(value) <= {"$eq", "$in", "$gt", "$gte", "$lt", "$lte"}


def pipeline_is_pass(pipeline: Sequence[Mapping[str, Any]]) -> bool:
    """An aggregation visits the whole collection unless it starts with ``$sample`` or a selective ``$match``."""
    if not pipeline:
        return True
    first = pipeline[0]
    if "$sample" in first:
        return False
    return not ("$match" in first and is_selective(first["$match"]))


@dataclass
class OperationLedger:
    """The running account of one target. Only ``AuditTarget`` writes to it."""

    server: ServerKind = "unknown"
    collection_size: int | None = None
    window_documents: int | None = None  # a scoped audit with an index on its field: what one pass visits
    records: list[OperationRecord] = field(default_factory=list)
    pending_throttles: int = 0

    def record(self, record: OperationRecord) -> None:
        if record.full_pass and record.documents_examined is None:
            size = self.window_documents if self.window_documents is not None else self.collection_size
            if size is not None:
                record.documents_examined = size
        record.throttled, self.pending_throttles = self.pending_throttles, 0
        self.records.append(record)

    def throttle(self) -> None:
        self.pending_throttles += 1

    @property
    def request_units(self) -> float | None:
        if self.server != "cosmosdb":
            return None
        return round(sum(r.request_charge or 0.0 for r in self.records), 3)

    def summary(self) -> DatabaseCost:
        return DatabaseCost(
            server=self.server,
            queries_sent=len(self.records),
            passes=sum(1 for r in self.records if r.full_pass),
            lookups=sum(1 for r in self.records if r.kind == "lookup"),
            metric_reads=sum(1 for r in self.records if r.kind == "metric"),
            documents_examined=sum(r.documents_examined or 0 for r in self.records),
            throttled=sum(r.throttled for r in self.records) + self.pending_throttles,
            request_units=self.request_units,
            database_time_s=round(sum(r.duration_ms for r in self.records) / 1000, 3),
            operations=[r.model_copy() for r in self.records],
        )
