"""Baselines learned from earlier runs, and the measurements of today that fall outside them.

Each series (insert rate, freshness, a field's null share, type shares, quantiles) is judged by a
robust z-score: the median of the history is the centre and 1.4826 x MAD its spread, so one bad
run in the history neither moves the centre nor widens the spread enough to hide the next
anomaly. With ``seasonality: auto`` and three or more earlier runs on today's weekday (until then,
two or more on today's side of the weekend), the centre is the median of those runs and the
spread the larger of theirs and the spread of every run around its own group's median (a weekly
rhythm is not an anomaly; noise is pooled across days).
Beyond the weekday, the hour of the day and the day of the month are used when the history shows
them: three or more earlier points at today's hour (or on today's day of the month) whose median
stands apart from the rest of the history by more than three spreads, or groups that explain most
of the history's spread (hourly runs of a collection busy by day and quiet by night; a billing
run on the first of each month).
Each series has a floor under its spread so that a perfectly steady history does not turn a
small wobble into a finding.

What does not enter a baseline: a run's value that was itself reported as an anomaly (it would
widen the baseline it is judged against, as Elementary's issues 980 and 1589 ask), and anything
measured over a ``health.exclude`` span (planned maintenance, holidays); a run whose interval
overlaps such a span raises nothing either. ``timeline`` puts the points a first run rebuilt from
the time field's history (``argus.agent.health.backfill``) before the runs that followed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from statistics import median
from typing import Literal

from argus.agent.health.models import ExcludedSpan, FieldHealth, HealthOptions, HealthSnapshot

__all__ = ["Anomaly", "Baseline", "anomaly_key", "detect", "learn", "timeline", "usual_age"]

AnomalyKind = Literal["volume_anomaly", "freshness", "distribution_drift"]
Direction = Literal["drop", "jump", "stale", "up", "down"]

_MAD_SCALE = 1.4826
_SEASONAL_MIN = 3  # earlier runs on today's weekday before the weekday's own median is the centre
_STANDS_APART = 3.0  # an hour of day or day of month whose median is this many spreads from the rest
_EXPLAINS = 0.5      # ... or groups whose pooled spread is at most this share of the history's
_MIN_RATE_SPAN = timedelta(hours=1)  # runs closer than this are taken together for a baseline's rate


@dataclass(frozen=True)
class Baseline:
    centre: float
    spread: float
    points: int
    seasonal: bool
    season: str | None = None  # "weekday", "weekend", "hour of day", "day of month"

    def z(self, value: float) -> float:
        return (value - self.centre) / self.spread


@dataclass(frozen=True)
class Anomaly:
    kind: AnomalyKind
    field: str
    metric: str
    value: float
    expected: float
    z: float
    direction: Direction
    baseline_runs: int
    seasonal: bool
    span_h: float | None = None  # volume: hours since the previous run
    season: str | None = None

    @property
    def magnitude(self) -> float:
        """Size of the deviation in [0, 1]: for rates and ages the ratio on a log scale (a tenfold
        change per third), for shares the difference itself. Labels compare it across runs."""
        if self.metric in ("inserts_per_hour", "freshness_s") or self.metric.startswith("p"):
            low, high = sorted((abs(self.value), abs(self.expected)))
            if high == 0:
                return 0.0
            return min(1.0, math.log10(high / low) / 3) if low > 0 else 1.0
        return min(1.0, abs(self.value - self.expected))


def learn(points: Sequence[tuple[datetime, float]], at: datetime, *, floor: float,
          seasonality: Literal["auto", "off"] = "auto", relative: float = 0.0) -> Baseline | None:
    """The baseline of ``points`` (earlier runs' values) for a measurement taken ``at``. Its spread is
    at least ``floor``, and at least ``relative`` times its centre (a season's own centre, when one
    is used: a busy hour's wobble is larger than a quiet one's)."""
    if not points:
        return None
    values = [v for _, v in points]
    if seasonality == "auto":
        shown = [b for key, name in ((_hour, "hour of day"), (_day_of_month, "day of month"))
                 if (b := _shown_season(points, at, key, name, floor, relative)) is not None]
        if shown:
            return min(shown, key=lambda b: b.spread)
        for key, name in ((_weekday, "weekday"), (_weekend, "weekend")):
            groups = _grouped(points, key)
            same = groups.get(key(at), [])
            if len(groups) > 1 and len(same) >= (_SEASONAL_MIN if key is _weekday else 2):
                spread = max(_mad(same), _pooled(groups), floor, relative * abs(median(same)))
                return Baseline(median(same), spread, len(points), seasonal=True, season=name)
    centre = median(values)
    return Baseline(centre, max(_mad(values), floor, relative * abs(centre)), len(points), seasonal=False)


def _grouped(points: Sequence[tuple[datetime, float]], key: Callable[[datetime], int]) -> dict[int, list[float]]:
    groups: dict[int, list[float]] = defaultdict(list)
    for when, value in points:
        groups[key(when)].append(value)
    return groups


def _pooled(groups: dict[int, list[float]]) -> float:
    """The noise around each group's own median, pooled across groups."""
    residuals = [v - median(group) for group in groups.values() if len(group) >= 2 for v in group]
    return _MAD_SCALE * median(abs(r) for r in residuals) if residuals else 0.0


def _shown_season(points: Sequence[tuple[datetime, float]], at: datetime, key: Callable[[datetime], int],
                  name: str, floor: float, relative: float) -> Baseline | None:
    """A season beyond the weekday, only where the history shows it (see the module docstring)."""
    groups = _grouped(points, key)
    same = groups.get(key(at), [])
    if len(groups) < 2 or len(same) < _SEASONAL_MIN:
        return None
    values = [v for _, v in points]
    pooled = _pooled(groups)
    spread = max(_mad(same), pooled, floor, relative * abs(median(same)))
    rest = [v for k, group in groups.items() if k != key(at) for v in group]
    apart = abs(median(same) - median(rest)) > _STANDS_APART * spread
    explains = _mad(values) > 0 and pooled <= _EXPLAINS * _mad(values)
    if not (apart or explains):
        return None
    return Baseline(median(same), spread, len(points), seasonal=True, season=name)


def _hour(when: datetime) -> int:
    return when.hour


def _day_of_month(when: datetime) -> int:
    return when.day


def _weekday(when: datetime) -> int:
    return when.weekday()


def _weekend(when: datetime) -> int:
    """Until three of today's weekday are known, weekends are compared with weekends."""
    return int(when.weekday() >= 5)


def _mad(values: Sequence[float]) -> float:
    centre = median(values)
    return _MAD_SCALE * median(abs(v - centre) for v in values)


def detect(history: Sequence[HealthSnapshot], today: HealthSnapshot, options: HealthOptions) -> list[Anomaly]:
    """Anomalies of ``today`` against ``history`` (earlier snapshots of the same collection, any order).

    A baseline speaks only with ``options.min_history`` earlier values of its series; an expected
    cadence (``options.cadence_s``) speaks from the first run.
    """
    past = sorted((h for h in history if h.at < today.at), key=lambda h: h.at)[-options.window:]
    if _excluded(options.exclude, today.at, today.at):
        return []  # measured inside an excluded span: nothing raised
    found: list[Anomaly] = []
    found += _volume(past, today, options)
    found += _freshness(past, today, options)
    found += _drift(past, today, options)
    return found


def anomaly_key(anomaly: Anomaly) -> str:
    """How a snapshot records an anomaly it reported (``HealthSnapshot.anomalies``)."""
    return anomaly.kind if anomaly.kind != "distribution_drift" else f"distribution_drift:{anomaly.field}"


def timeline(snapshots: Sequence[HealthSnapshot]) -> list[HealthSnapshot]:
    """Stored snapshots with the points a first run rebuilt from history put before them, oldest first
    (a point at or after a measured snapshot's time is the measurement's to give, and is dropped)."""
    measured = sorted(snapshots, key=lambda h: h.at)
    first = measured[0].at if measured else None
    rebuilt = [p for h in measured for p in h.baseline_points if first is None or p.at < first]
    return sorted({p.at: p for p in rebuilt}.values(), key=lambda h: h.at) + measured


def _excluded(spans: Sequence[ExcludedSpan], start: datetime, end: datetime) -> bool:
    """Does ``[start, end]`` touch an excluded span (a single moment when they are equal)?"""
    return any(span.start <= end and start < span.end if start == end else span.overlaps(start, end)
               for span in spans)


def _judge(kind: AnomalyKind, field: str, metric: str, points: list[tuple[datetime, float]], today_at: datetime,
           value: float, options: HealthOptions, *, floor: float, sides: Literal["both", "high"],
           relative: float = 0.0) -> Anomaly | None:
    if len(points) < options.min_history:
        return None
    base = learn(points, today_at, floor=floor, seasonality=options.seasonality, relative=relative)
    if base is None:
        return None
    z = base.z(value)
    if z > options.sensitivity:
        direction: Direction = "stale" if kind == "freshness" else "jump" if kind == "volume_anomaly" else "up"
    elif z < -options.sensitivity and sides == "both":
        direction = "drop" if kind == "volume_anomaly" else "down"
    else:
        return None
    return Anomaly(kind, field, metric, value, base.centre, z, direction, base.points, base.seasonal,
                   season=base.season)


# --- volume ---------------------------------------------------------------------------------------

def _rate(previous: HealthSnapshot, current: HealthSnapshot) -> float | None:
    """Documents arriving per hour between two snapshots: inserts where known, else net growth."""
    hours = (current.at - previous.at).total_seconds() / 3600
    if hours <= 0:
        return None
    arrived = current.inserts if current.inserts is not None else current.documents - previous.documents
    return arrived / hours


def _rates(past: list[HealthSnapshot], exclude: Sequence[ExcludedSpan] = ()) -> list[tuple[datetime, float]]:
    """Insert rates between runs, without those already reported as anomalous or measured over an
    excluded span. Runs closer than an hour are taken together until an hour has passed: a rate
    over twenty seconds is mostly chance (no document, or one), and a dozen of them in one hour
    would read as that hour of the day's own rhythm."""
    out = []
    start = 0
    for end in range(1, len(past)):
        if past[end].at - past[start].at < _MIN_RATE_SPAN:
            continue
        span = past[start:end + 1]
        a, b = span[0], span[-1]
        if all("volume_anomaly" not in h.anomalies for h in span[1:]) and not _excluded(exclude, a.at, b.at) \
                and (r := _span_rate(span)) is not None:
            out.append((b.at, r))
        start = end
    return out


def _span_rate(span: list[HealthSnapshot]) -> float | None:
    """The rate from the first snapshot of ``span`` to its last: the inserts each counted since the one
    before it, else net growth."""
    if len(span) == 2:
        return _rate(span[0], span[1])
    hours = (span[-1].at - span[0].at).total_seconds() / 3600
    if hours <= 0:
        return None
    inserts = [h.inserts for h in span[1:]]
    arrived = sum(i for i in inserts if i is not None) if None not in inserts \
        else span[-1].documents - span[0].documents
    return arrived / hours


def _volume(past: list[HealthSnapshot], today: HealthSnapshot, options: HealthOptions) -> list[Anomaly]:
    if not past or _excluded(options.exclude, past[-1].at, today.at):
        return []
    rates = _rates(past, options.exclude)
    value = _rate(past[-1], today)
    if value is None:
        return []
    anomaly = _judge("volume_anomaly", "(collection)", "inserts_per_hour", rates, today.at, value, options,
                     floor=1.0 / 24, relative=0.1, sides="both")
    span_h = (today.at - past[-1].at).total_seconds() / 3600
    if anomaly is None or not _improbable_count(value * span_h, anomaly.expected * span_h, options.sensitivity):
        return []
    return [replace(anomaly, span_h=span_h)]


def _improbable_count(seen: float, expected: float, sensitivity: float) -> bool:
    """Would randomly timed arrivals at the usual rate give a count this far from ``expected`` less
    often than the z-score's own tail (0.13% at sensitivity 3)? Runs twenty seconds apart at a
    hundred documents an hour expect half a document each: none arriving is no drop, and one
    arriving no jump, however far the rate of so short a span lies from the baseline."""
    tail = 0.5 * math.erfc(sensitivity / math.sqrt(2))
    k = round(seen)
    if expected <= 0:
        return k > 0
    if k > 4 * expected + 50:
        return True  # far beyond any tail: not worth summing the terms
    if expected > 1000:  # the normal approximation, with continuity correction
        z = (k + (0.5 if k < expected else -0.5) - expected) / math.sqrt(expected)
        return 0.5 * math.erfc(abs(z) / math.sqrt(2)) < tail
    log_terms = [i * math.log(expected) - expected - math.lgamma(i + 1) for i in range(k + 1)]
    below = math.fsum(math.exp(t) for t in log_terms)  # P(X <= k)
    if k < expected:
        return below < tail
    return 1.0 - below + math.exp(log_terms[k]) < tail  # P(X >= k)


# --- freshness ------------------------------------------------------------------------------------

def _freshness(past: list[HealthSnapshot], today: HealthSnapshot, options: HealthOptions) -> list[Anomaly]:
    """Stale when the newest document is older than the history says is usual and, where the
    insert rate is known, so old that at the usual rate ``3 x sensitivity`` documents would have
    arrived meanwhile (the newest of randomly timed inserts is sometimes old by chance alone)."""
    if today.freshness_s is None:
        return []
    field = "(collection)"
    if today.newest_at is not None and _excluded(options.exclude, today.newest_at, today.at):
        return []  # nothing arrived during planned maintenance: not stale
    if options.cadence_s is not None and today.freshness_s > options.cadence_s:
        return [Anomaly("freshness", field, "freshness_s", today.freshness_s, options.cadence_s,
                        math.inf, "stale", 0, False)]
    ages = [(h.at, h.freshness_s) for h in past if h.freshness_s is not None and "freshness" not in h.anomalies
            and not _excluded(options.exclude, h.newest_at or h.at, h.at)]
    anomaly = _judge("freshness", field, "freshness_s", ages, today.at, today.freshness_s, options,
                     floor=60.0, relative=0.25, sides="high")
    if anomaly is None:
        return []
    rate = learn(_rates(past, options.exclude), today.at, floor=0.0, seasonality=options.seasonality)
    if rate is not None and rate.centre > 0 and rate.centre * today.freshness_s / 3600 < 3 * options.sensitivity:
        return []
    return [anomaly]


def usual_age(history: Sequence[HealthSnapshot], at: datetime, options: HealthOptions) -> float | None:
    """The oldest the newest document usually is (centre + sensitivity x spread), for the
    "no new documents for N times the usual" alert rule; None before the minimum history."""
    ages = [(h.at, h.freshness_s) for h in history if h.freshness_s is not None and h.at < at
            and "freshness" not in h.anomalies and not _excluded(options.exclude, h.newest_at or h.at, h.at)]
    ages = ages[-options.window:]
    if len(ages) < options.min_history:
        return None
    base = learn(ages, at, floor=60.0, seasonality=options.seasonality, relative=0.25)
    return None if base is None else base.centre + options.sensitivity * base.spread


# --- fields ---------------------------------------------------------------------------------------

def _share_floor(share: float, n: int) -> float:
    """A share moves by sampling alone: one standard error of a sample of ``n``, and one point."""
    se = math.sqrt(max(share * (1 - share), 0.0) / n) if n > 0 else 0.0
    return max(se, 0.01)


def _drift(past: list[HealthSnapshot], today: HealthSnapshot, options: HealthOptions) -> list[Anomaly]:
    out: list[Anomaly] = []
    comparable = [h for h in past if h.scope == today.scope and not _excluded(options.exclude, h.at, h.at)]
    for now_field in today.fields:
        series = [(h.at, f) for h in comparable if (f := h.field(now_field.path)) is not None
                  and f"distribution_drift:{now_field.path}" not in h.anomalies]
        strongest: Anomaly | None = None
        for metric, value, points, floor in _field_series(now_field, series, today.documents_sampled):
            anomaly = _judge("distribution_drift", now_field.path, metric, points, today.at, value, options,
                             floor=floor, sides="both")
            if anomaly and (strongest is None or abs(anomaly.z) > abs(strongest.z)):
                strongest = anomaly
        if strongest is not None:
            out.append(strongest)
    return out


def _field_series(today: FieldHealth, series: list[tuple[datetime, FieldHealth]], n: int,
                  ) -> list[tuple[str, float, list[tuple[datetime, float]], float]]:
    out = []
    nulls = [(at, f.null_share) for at, f in series]
    if nulls:
        out.append(("null_share", today.null_share, nulls, _share_floor(median(v for _, v in nulls), n)))
    for kind in sorted(set(today.types).union(*(f.types for _, f in series))):
        points = [(at, f.types.get(kind, 0.0)) for at, f in series]
        if points:
            out.append((f"type:{kind}", today.types.get(kind, 0.0), points,
                        _share_floor(median(v for _, v in points), n)))
    for q, value in today.quantiles.items():
        points = [(at, f.quantiles[q]) for at, f in series if q in f.quantiles]
        if points:
            centre = median(v for _, v in points)
            out.append((q, value, points, max(0.05 * abs(centre), 1e-9)))
    return out
