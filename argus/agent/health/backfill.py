"""The first run's baselines, from the collection's own history.

A new deployment would stay blind to volume for a week: baselines need ``min_history`` stored
runs. When the collection records when its documents arrived (``_id``'s ObjectId time, or
``health.time_field``), the first audit buckets that field by hour over the health window
(``window`` intervals of the schedule's spacing, ``run_every_s``, daily by default) with one
read-only aggregation, counted as a pass and bounded as every read is, and rebuilds the points the
earlier runs would have measured: one per interval, with its inserts, newest document and
freshness. So a drop yesterday is reported on the first run. Intervals before the collection's
first document are left out (a collection one day old has no history to learn from).

A server that refuses the aggregation (``$dateToString`` of an ObjectId, ``$group``) is asked one
count per interval instead, within the run's budgets (volume only), and that is noted. The
in-memory engine, which has no server to spare, reads the times once and buckets them itself.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import structlog

from argus.agent.errors import ArgusError, EngineFault, QueryRejected
from argus.agent.health.models import HealthOptions, HealthSnapshot
from argus.agent.options import PrivacyMode
from argus.agent.segments.backfill import add_bucket, segment_points
from argus.agent.segments.health import moment_of
from argus.agent.tools.models import SchemaSampleResult
from argus.agent.tools.target import AuditTarget
from argus.agent.window import window_filter

__all__ = ["backfill"]

log = structlog.get_logger("argus.health")

_HOUR = timedelta(hours=1)
_DAY_S = 86_400.0
_KEY_FORMAT = "%Y-%m-%dT%H"

Buckets = dict[datetime, tuple[int, datetime | None]]  # hour -> (documents, newest arrival in it)


def backfill(target: AuditTarget, schema: SchemaSampleResult, now: datetime, options: HealthOptions,
             privacy: PrivacyMode, source: str | None) -> tuple[list[HealthSnapshot], list[str]]:
    """Points standing for the earlier runs a first run does not have (oldest first), and notes.
    ``source``: where arrivals are recorded (``newest_document``'s answer); None: nothing to rebuild."""
    if source is None or target.exhausted() is not None:
        return [], []
    field = source.removeprefix("sample:")
    spacing = _HOUR * max(1, round((options.run_every_s or _DAY_S) / 3600))
    end = now.replace(minute=0, second=0, microsecond=0)
    ticks = [end - spacing * k for k in range(options.window, 0, -1)]
    start = ticks[0] - spacing
    notes: list[str] = []
    indexed = not source.startswith("sample:")  # _id, or a time field that leads an index
    by_segment: dict[str, Buckets] = {}  # with segments: the same buckets per segment, from the same read
    try:
        if target.in_memory:  # Argus's own engine: no server to spare, one read of the times
            buckets = _read_and_bucketed(target, field, start, indexed, by_segment)
        else:
            buckets = _bucketed_or_counted(target, field, start, ticks, indexed, notes, options, by_segment)
    except EngineFault:  # a bug of the in-process engine ends the run, not this measurement
        raise
    except ArgusError as exc:
        log.warning("health_backfill_failed", error=str(exc))
        return [], [f"the first run's baseline was not built: {type(exc).__name__}"]
    total = schema.total_documents if schema.total_documents is not None else schema.collection_size
    points = _points(buckets, ticks, spacing, start, total, source, privacy)
    if target.segments is not None and by_segment:
        points = segment_points(points, by_segment, spacing, target.segments, privacy)
    if points:
        log.info("health_backfilled", points=len(points), source=source)
    return points, notes


def _bucketed_or_counted(target: AuditTarget, field: str, start: datetime, ticks: list[datetime], indexed: bool,
                         notes: list[str], options: HealthOptions, by_segment: dict[str, Buckets]) -> Buckets:
    try:
        return _bucketed(target, field, start, indexed, by_segment)
    except QueryRejected as exc:
        code = f" (code {exc.code})" if exc.code is not None else ""
        notes.append(f"the server refused the hourly bucketing of {field}{code}: the first run's volume baseline "
                     f"came from one count per interval, and freshness has no baseline until "
                     f"{options.min_history} runs are stored")
        return _counted_per_interval(target, field, [start, *ticks])


def _bucketed(target: AuditTarget, field: str, start: datetime, indexed: bool,
              by_segment: dict[str, Buckets]) -> Buckets:
    """One aggregation: documents and the newest arrival per hour since ``start`` (on an index, it
    examines only those); with segments, per hour and segment."""
    hour_key: Any = {"$dateToString": {"format": _KEY_FORMAT, "date": f"${field}"}}
    segments = target.segments
    rows = target.aggregate([
        {"$match": window_filter(field, start)},
        {"$group": {"_id": hour_key if segments is None else {"h": hour_key, "s": segments.key},
                    "n": {"$sum": 1}, "newest": {"$max": f"${field}"}}},
    ], full_pass=True)
    buckets: Buckets = {}
    for row in rows:
        key = row["_id"]
        try:
            hour = datetime.strptime(str(key["h"] if segments is not None else key), _KEY_FORMAT).replace(tzinfo=UTC)
        except (ValueError, TypeError, KeyError):  # a document without the field, or not a date: no arrival time
            continue
        count, newest = int(row["n"]), moment_of(row.get("newest"))
        if segments is not None:
            add_bucket(by_segment, segments.label(key.get("s")), hour, count, newest)
            before, latest = buckets.get(hour, (0, None))
            count, newest = before + count, newest if latest is None or (newest and newest > latest) else latest
        buckets[hour] = (count, newest)
    if indexed:
        target.examined(sum(count for count, _ in buckets.values()))
    return buckets


def _read_and_bucketed(target: AuditTarget, field: str, start: datetime, indexed: bool,
                       by_segment: dict[str, Buckets]) -> Buckets:
    """The in-memory engine: the arrival times read once (no server to spare), bucketed here."""
    buckets: Buckets = {}
    segments = target.segments
    projection = {field: 1, **({p: 1 for p in segments.options.by} if segments is not None else {})}
    read = target.find(window_filter(field, start), projection, 0, full_pass=True)
    if indexed:
        target.examined(len(read))
    for doc in read:
        moment = moment_of(_value_at(doc, field))
        if moment is None:
            continue
        hour = moment.replace(minute=0, second=0, microsecond=0)
        if segments is not None:
            values = [_value_at(doc, p) for p in segments.options.by]
            add_bucket(by_segment, segments.label(values[0] if len(values) == 1 else
                                                  {f"k{i}": v for i, v in enumerate(values)}), hour, 1, moment)
        count, newest = buckets.get(hour, (0, None))
        buckets[hour] = (count + 1, moment if newest is None or moment > newest else newest)
    return buckets


def _counted_per_interval(target: AuditTarget, field: str, bounds: list[datetime]) -> Buckets:
    """A server that refused the bucketing: one count per interval, while the run's budgets last."""
    buckets: Buckets = {}
    for low, high in pairwise(bounds):
        if target.exhausted() is not None:
            break
        low_filter, high_filter = window_filter(field, low)[field], window_filter(field, high)[field]
        count = target.count_documents({field: {"$gte": low_filter["$gte"], "$lt": high_filter["$gte"]}})
        buckets[low] = (count, None)
    return buckets


def _points(buckets: Buckets, ticks: list[datetime], spacing: timedelta, start: datetime, total: int,
            source: str, privacy: PrivacyMode) -> list[HealthSnapshot]:
    filled = sorted(hour for hour, (count, _) in buckets.items() if count)
    if not filled:
        return []
    # The collection began inside the span: intervals before its first document have no history.
    began = None if filled[0] <= start else filled[0]
    points: list[HealthSnapshot] = []
    previous_newest: datetime | None = None
    for tick in ticks:
        low = tick - spacing
        inserts = sum(count for hour, (count, _) in buckets.items() if low <= hour < tick)
        later = sum(count for hour, (count, _) in buckets.items() if hour >= tick)
        newest = max((n for hour, (_, n) in buckets.items() if hour < tick and n is not None and n < tick),
                     default=None)
        if began is not None and low < began:
            previous_newest = newest
            continue
        if newest is not None and privacy == "strict":
            newest = newest.replace(second=0, microsecond=0)
        points.append(HealthSnapshot(
            at=tick, documents=max(total - later, 0), inserts=inserts, inserts_since=previous_newest,
            newest_at=newest, freshness_s=(tick - newest).total_seconds() if newest is not None else None,
            time_source=source, backfilled=True))
        previous_newest = newest
    return points



def _value_at(doc: Any, path: str) -> Any:
    for part in path.split("."):
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc
