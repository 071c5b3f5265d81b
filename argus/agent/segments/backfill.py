"""A first run's per-segment baseline: the time field's hourly buckets, per segment, from the same read.

``argus.agent.health.backfill`` buckets arrivals by hour with one aggregation (a ``$group`` by hour); with
segments the group is by hour and segment, and ``segment_points`` gives each rebuilt point its
segments' arrivals and newest document, as a measured run would have.
"""

from __future__ import annotations

from bisect import bisect_left
from datetime import datetime, timedelta
from itertools import accumulate

from argus.agent.health.models import HealthSnapshot
from argus.agent.segments.health import folded
from argus.agent.segments.models import SegmentHealth
from argus.agent.segments.passes import SegmentPass

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
    series = {label: _Series(buckets) for label, buckets in by_segment.items()}
    out: list[HealthSnapshot] = []
    for point in points:
        tick = point.at
        listed: list[SegmentHealth] = []
        for label, known in series.items():
            if not known.hours or known.hours[0] >= tick:
                continue
            newest = known.newest_before(tick)
            if newest is not None and privacy == "strict":
                newest = newest.replace(second=0, microsecond=0)
            listed.append(SegmentHealth(segment=label, inserts=known.between(tick - spacing, tick), newest_at=newest,
                                        freshness_s=(tick - newest).total_seconds() if newest else None))
        out.append(point.model_copy(update={"segment_by": list(segments.options.by),
                                            "segments": folded(listed, segments.options.top)}))
    return out


class _Series:
    """One segment's hourly buckets, ordered, with running sums and maxima: each point's figures by bisection."""

    def __init__(self, buckets: Buckets) -> None:
        self.hours = sorted(buckets)
        self._sums = list(accumulate(buckets[h][0] for h in self.hours))
        self._newest: list[datetime | None] = []
        latest: datetime | None = None
        for hour in self.hours:
            moment = buckets[hour][1]
            if moment is not None and (latest is None or moment > latest):
                latest = moment
            self._newest.append(latest)

    def _upto(self, when: datetime) -> int:
        """Documents of the hours before ``when``."""
        i = bisect_left(self.hours, when)
        return self._sums[i - 1] if i else 0

    def between(self, low: datetime, high: datetime) -> int:
        return self._upto(high) - self._upto(low)

    def newest_before(self, tick: datetime) -> datetime | None:
        """The newest arrival before ``tick`` (ticks fall on the hour, so every earlier hour's bucket is before it)."""
        i = bisect_left(self.hours, tick)
        return self._newest[i - 1] if i else None
