"""Measure a collection's health during an audit, without another pass over it.

Everything comes from what the audit already has (the server's document count and the sample's
field statistics) plus at most two index-bounded reads: the newest ``_id`` (or the newest value
of an indexed time field) and the count of documents inserted since the previous run's newest.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from bson import ObjectId

from argus.agent.errors import ArgusError, EngineFault
from argus.agent.health.models import FieldHealth, HealthOptions, HealthSnapshot
from argus.agent.options import PrivacyMode
from argus.agent.segments.health import Arrivals, arrivals, with_arrivals
from argus.agent.tools.models import FieldStats, SchemaSampleResult
from argus.agent.tools.target import AuditTarget

__all__ = ["collect_health", "newest_document"]

log = structlog.get_logger("argus.health")

_QUANTILES = ("p05", "p50", "p95")
_CLOCK_SKEW = timedelta(days=1)
_IDENTIFIER_SHARE = 0.9  # numeric fields this distinct in the sample are counters or keys: no quantiles


def collect_health(target: AuditTarget, schema: SchemaSampleResult, *, now: datetime, options: HealthOptions,
                   privacy: PrivacyMode, previous: HealthSnapshot | None,
                   newest: tuple[datetime | None, str | None] | None = None) -> HealthSnapshot:
    """``newest``: what ``newest_document`` answered already in this run (else it is asked)."""
    newest_at, source = newest if newest is not None else newest_document(target, schema, options, now)
    since = _counted_until(previous, privacy)
    inserts, arrived = _inserts(target, source, previous, since) if newest_at is not None else (None, None)
    if newest_at is not None and privacy == "strict":
        newest_at = newest_at.replace(second=0, microsecond=0)
    snapshot = HealthSnapshot(
        at=now, documents=schema.total_documents if schema.total_documents is not None else schema.collection_size,
        inserts=inserts,
        inserts_since=since if inserts is not None else None,
        newest_at=newest_at, freshness_s=max((now - newest_at).total_seconds(), 0.0) if newest_at else None,
        time_source=source, documents_sampled=schema.documents_sampled,
        fields=_fields(schema, options, privacy))
    if target.segments is not None:
        snapshot = with_arrivals(snapshot, previous, arrived, target.segments, privacy)
    return snapshot


def newest_document(target: AuditTarget, schema: SchemaSampleResult, options: HealthOptions,
                    now: datetime) -> tuple[datetime | None, str | None]:
    """When the newest document arrived, and where that came from: ``_id`` (ObjectId time), an indexed
    ``time_field``, ``sample:<field>`` (only the sample had it), or (None, None)."""
    newest_at, source = _newest(target, schema, options)
    if newest_at is not None and newest_at > now + _CLOCK_SKEW:
        # Ids or times from the future: they do not record when documents arrived (random ObjectIds,
        # a time field holding something else). Freshness is unknown rather than negative.
        log.info("health_time_source_unusable", source=source)
        return None, None
    return newest_at, source


def _newest(target: AuditTarget, schema: SchemaSampleResult,
            options: HealthOptions) -> tuple[datetime | None, str | None]:
    field = options.time_field
    try:
        if field is None:
            id_stats = schema.field("_id")
            if id_stats is None or "objectId" not in id_stats.types:
                return None, None
            value = target.newest("_id")
            return (value.generation_time, "_id") if isinstance(value, ObjectId) else (None, None)
        if field in (target.indexed_fields() or set()):  # listIndexes refused: the sample tells
            value = target.newest(field)
            if isinstance(value, datetime):
                return _aware(value), field
            return None, None
    except EngineFault:  # a bug of the in-process engine ends the run, not this measurement
        raise
    except ArgusError as exc:  # a failed read leaves freshness unknown for this run, nothing more
        log.warning("health_read_failed", error=str(exc))
        return None, None
    stats = schema.field(field)
    if stats is not None and stats.dates is not None:
        return _aware(stats.dates.max), f"sample:{field}"
    return None, None


def _counted_until(previous: HealthSnapshot | None, privacy: PrivacyMode) -> datetime | None:
    """The time the previous run counted arrivals up to: its newest document's. In strict privacy that
    time was stored to the minute, so the whole minute counts as seen: a document written later in that
    minute, after the previous run read, is missed (at most a minute of arrivals, once), where counting
    from the minute's start would count the previous newest again on every run and call a quiet
    collection's "1 arrived, usual 0" a volume anomaly."""
    if previous is None or previous.newest_at is None:
        return None
    if privacy == "strict":
        return previous.newest_at.replace(second=0, microsecond=0) + timedelta(minutes=1) - timedelta(microseconds=1)
    return previous.newest_at


def _inserts(target: AuditTarget, source: str | None, previous: HealthSnapshot | None,
             since: datetime | None) -> tuple[int | None, Arrivals | None]:
    """Documents newer than ``since`` (what the previous run counted up to), counted on an index (None when
    no index tells), and with segments, the same documents per segment in the same read."""
    if previous is None or since is None or previous.time_source != source:
        return None, None
    query: dict[str, Any]
    if source == "_id":
        # ObjectIds hold whole seconds: count from the next second, so the previous newest is not counted.
        after = since.replace(microsecond=0) + timedelta(seconds=1)
        query = {"_id": {"$gte": ObjectId.from_datetime(after)}}
    elif source is not None and not source.startswith("sample:"):
        query = {source: {"$gt": since}}
    else:
        return None, None
    try:
        if target.segments is not None:
            arrived = arrivals(target, target.segments, query, source)
            return sum(n for n, _ in arrived.values()), arrived
        return target.count_documents(query), None
    except EngineFault:  # a bug of the in-process engine ends the run, not this measurement
        raise
    except ArgusError as exc:
        log.warning("health_read_failed", error=str(exc))
        return None, None


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _fields(schema: SchemaSampleResult, options: HealthOptions, privacy: PrivacyMode) -> list[FieldHealth]:
    ranked = sorted((f for f in schema.fields if f.path != "_id"), key=lambda f: (-f.present_count, f.path))
    return [_field(f, privacy) for f in ranked[:options.max_fields]]


def _field(stats: FieldStats, privacy: PrivacyMode) -> FieldHealth:
    values = sum(stats.types.values()) or 1
    quantiles: dict[str, float] = {}
    if privacy != "strict" and stats.numeric is not None and stats.distinct_ratio < _IDENTIFIER_SHARE:
        quantiles = {q: stats.numeric.quantiles[q] for q in _QUANTILES if q in stats.numeric.quantiles}
    return FieldHealth(path=stats.path, null_share=round(stats.null_rate, 6),
                       types={t: round(n / values, 6) for t, n in sorted(stats.types.items())},
                       distinct_share=round(stats.distinct_ratio, 6), quantiles=quantiles)
