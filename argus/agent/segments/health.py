"""Volume and freshness per segment, with the collection's own baselines engine.

Each run already counts the documents inserted since the previous run (one index-bounded read,
``argus.agent.health.collect``); with segments that read is a ``$group`` by segment of the same
documents (their count and newest arrival per segment), so it costs nothing more. A first run's
bucketing of the time field's history (``argus.agent.health.backfill``) groups by segment too. Each
segment's series is then judged by ``argus.agent.health.baseline.detect`` exactly as the collection's
(seasonality, exclusions, ``min_history``, the same sensitivity), so "acme sent 0 documents in the
last 6 hours where it sends ~400" is a ``volume_anomaly`` of ``(segment tenant=acme)``, and its
newest document growing old a ``freshness`` one, while the collection's totals stay in their
baseline. A segment that appears (arrivals, none in any earlier run) or disappears (no document
left where the previous run counted some) is a ``segment_change``; both are judged only while no
segment is folded into ``other`` (past ``top``, which names change is not known).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from bson import ObjectId

from argus.agent.health.baseline import Anomaly, detect
from argus.agent.health.models import HealthOptions, HealthSnapshot
from argus.agent.segments.models import OTHER, SegmentHealth
from argus.agent.segments.passes import SegmentPass

__all__ = ["Arrivals", "Change", "arrivals", "changes", "folded", "judge", "measured", "segment_field", "with_arrivals"]

Arrivals = dict[str, tuple[int, datetime | None]]  # label -> (documents, newest arrival)


def segment_field(label: str) -> str:
    """How a segment's health finding names its subject (its fingerprint, so its own incident)."""
    return f"(segment {label})"


def arrivals(target: Any, segments: SegmentPass, query: dict[str, Any], field: str) -> Arrivals:
    """The documents ``query`` selects (those inserted since the previous run), per segment: one
    ``$group`` read where the collection's health counted them with one ``count_documents``."""
    rows = target.aggregate([{"$match": query},
                             {"$group": {"_id": segments.key, "n": {"$sum": 1}, "newest": {"$max": f"${field}"}}}])
    out: Arrivals = {}
    for row in rows:
        label = segments.label(row.get("_id"))
        count, newest = out.get(label, (0, None))
        moment = moment_of(row.get("newest"))
        out[label] = (count + int(row.get("n", 0)), _later(newest, moment))
    return out


def with_arrivals(today: HealthSnapshot, previous: HealthSnapshot | None, arrived: Arrivals | None,
                  segments: SegmentPass, privacy: str) -> HealthSnapshot:
    """``today`` with each segment's arrivals, newest document and documents (the run's totals, where
    its first batched pass counted them); a segment without arrivals keeps its newest from before."""
    before = {s.segment: s for s in previous.segments} if previous is not None \
        and previous.segment_by == segments.options.by else {}
    documents = {s.segment: s.documents for s in segments.totals.segments} \
        if segments.totals is not None and segments.totals.complete and not segments.scoped else None
    labels = set(arrived or {}) | set(documents or {}) | {s for s, h in before.items()
                                                          if documents is None or h.documents != 0}
    out: list[SegmentHealth] = []
    for label in labels:
        count, newest = (arrived or {}).get(label, (0, None))
        newest = _later(newest, before[label].newest_at if label in before else None)
        if newest is not None and privacy == "strict":
            newest = newest.replace(second=0, microsecond=0)
        out.append(SegmentHealth(segment=label, inserts=count if arrived is not None else None,
                                 documents=documents.get(label, 0) if documents is not None else None,
                                 newest_at=newest,
                                 freshness_s=max((today.at - newest).total_seconds(), 0.0) if newest else None))
    return today.model_copy(update={"segment_by": list(segments.options.by),
                                    "segments": folded(out, segments.options.top)})


def folded(segments: list[SegmentHealth], top: int) -> list[SegmentHealth]:
    ranked = sorted(segments, key=lambda s: (-(s.documents if s.documents is not None else s.inserts or 0),
                                             s.segment))
    kept, rest = ranked[:top], ranked[top:]
    if rest:
        newest = max((s.newest_at for s in rest if s.newest_at is not None), default=None)
        known = [s.documents for s in rest if s.documents is not None]
        inserts = [s.inserts for s in rest if s.inserts is not None]
        kept.append(SegmentHealth(segment=OTHER, inserts=sum(inserts) if len(inserts) == len(rest) else None,
                                  documents=sum(known) if len(known) == len(rest) else None, newest_at=newest,
                                  freshness_s=min((s.freshness_s for s in rest if s.freshness_s is not None),
                                                  default=None)))
    return kept


def measured(history: Sequence[HealthSnapshot], today: HealthSnapshot) -> list[HealthSnapshot]:
    """Earlier snapshots whose segments were named by the same fields as today's."""
    return [h for h in history if h.at < today.at and h.segment_by == today.segment_by]


def judge(history: Sequence[HealthSnapshot], today: HealthSnapshot, options: HealthOptions) -> list[Anomaly]:
    """Volume and freshness anomalies of each named segment against its own series."""
    past = sorted(measured(history, today), key=lambda h: h.at)
    # A segment's cadence is its own: the collection's expected cadence does not apply to each tenant.
    per_segment = options.model_copy(update={"cadence_s": None})
    out: list[Anomaly] = []
    for seg in today.segments:
        if seg.segment == OTHER:
            continue
        series = [_as_collection(h, seg.segment) for h in past]
        points = [p for p in series if p is not None]
        for anomaly in detect(points, _as_collection(today, seg.segment) or today, per_segment):
            if anomaly.kind in ("volume_anomaly", "freshness"):
                out.append(replace(anomaly, field=segment_field(seg.segment)))
    return out


def _as_collection(snapshot: HealthSnapshot, label: str) -> HealthSnapshot | None:
    """One segment's view of a snapshot, as if it were a collection of its own (None: not measured)."""
    seg = next((s for s in snapshot.segments if s.segment == label), None)
    if seg is None or (seg.inserts is None and seg.documents is None):
        return None
    suffix = f"@{label}"
    return HealthSnapshot(at=snapshot.at, documents=seg.documents or 0, inserts=seg.inserts,
                          newest_at=seg.newest_at, freshness_s=seg.freshness_s, time_source=snapshot.time_source,
                          backfilled=snapshot.backfilled,
                          anomalies=[k.removesuffix(suffix) for k in snapshot.anomalies if k.endswith(suffix)])


class Change:
    """A segment that appeared or disappeared."""

    def __init__(self, label: str, kind: str, documents: int, before: int) -> None:
        self.label, self.kind, self.documents, self.before = label, kind, documents, before

    @property
    def key(self) -> str:
        return f"segment_change@{self.label}"


def changes(history: Sequence[HealthSnapshot], today: HealthSnapshot) -> list[Change]:
    past = sorted(measured(history, today), key=lambda h: h.at)
    if not past or any(s.segment == OTHER for s in today.segments) \
            or any(s.segment == OTHER for s in past[-1].segments):
        return []
    seen = {s.segment for h in past for s in h.segments}
    out: list[Change] = []
    for seg in today.segments:
        # Appeared means arrivals: a first run's rebuilt history lists a segment from its first
        # arrival in the window on, so one whose documents are all older was never in it.
        if seg.segment not in seen and (seg.inserts or (seg.inserts is None and seg.documents)):
            out.append(Change(seg.segment, "appeared", seg.documents or seg.inserts or 0, 0))
    last = {s.segment: s for s in past[-1].segments}
    now = {s.segment: s for s in today.segments}
    if all(s.documents is not None for s in today.segments) and today.segments:
        for label, before in last.items():
            if before.documents and not (now.get(label) and now[label].documents):
                out.append(Change(label, "disappeared", 0, before.documents))
    return out


def moment_of(value: Any) -> datetime | None:
    if isinstance(value, ObjectId):
        return value.generation_time
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return None


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)
