"""A first run's per-segment baseline: the time field's hourly buckets, per segment, from the same read.

``agent.health.backfill`` buckets arrivals by hour with one aggregation (a ``$group`` by hour); with
segments the group is by hour and segment, and ``segment_points`` gives each rebuilt point its
segments' arrivals and newest document, as a measured run would have.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent.health.models import HealthSnapshot
from agent.segments.health import folded
from agent.segments.models import SegmentHealth
from agent.segments.passes import SegmentPass

__all__ = ["add_bucket", "segment_points"]

Buckets = dict[datetime, tuple[int, datetime | None]]


def add_bucket(by_segment: dict[str, Buckets], label: str, hour: datetime, count: int,
               newest: datetime | None) -> None:
    buckets = by_segment.setdefault(label, {})
    before, latest = buckets.get(hour, (0, None))
    if latest is not None and (newest is None or latest > newest):
        newest = latest
    buckets[hour] = (before + count, newest)


def segment_points(points: list[HealthSnapshot], by_segment: dict[str, Buckets], spacing: timedelta,
                   segments: SegmentPass, privacy: str) -> list[HealthSnapshot]:
    """Each rebuilt point with its segments' arrivals in its interval and newest document before it;
    a segment is listed from its first arrival on."""
    out: list[HealthSnapshot] = []
    for point in points:
        tick, low = point.at, point.at - spacing
        listed: list[SegmentHealth] = []
        for label, buckets in by_segment.items():
            before = [hour for hour in buckets if hour < tick]
            if not before:
                continue
            inserts = sum(count for hour, (count, _) in buckets.items() if low <= hour < tick)
            newest = max((n for hour, (_, n) in buckets.items() if hour < tick and n is not None and n < tick),
                         default=None)
            if newest is not None and privacy == "strict":
                newest = newest.replace(second=0, microsecond=0)
            listed.append(SegmentHealth(segment=label, inserts=inserts, newest_at=newest,
                                        freshness_s=(tick - newest).total_seconds() if newest else None))
        out.append(point.model_copy(update={"segment_by": list(segments.options.by),
                                            "segments": folded(listed, segments.options.top)}))
    return out
