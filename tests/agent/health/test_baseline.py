"""Baselines from earlier runs: robust to a bad run, aware of the week, silent until they know enough."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from argus.agent.health.baseline import detect
from argus.agent.health.models import ExcludedSpan, FieldHealth, HealthOptions, HealthSnapshot

MONDAY = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
OPTIONS = HealthOptions()


def usual_inserts(day: datetime, rng: random.Random) -> int:
    return rng.randint(270, 330) if day.weekday() >= 5 else rng.randint(950, 1050)


def run_days(days: int, *, seed: int = 1, override: dict[int, int] | None = None) -> list[HealthSnapshot]:
    """Daily snapshots with weekday/weekend inserts; ``override`` sets a day's inserts."""
    rng = random.Random(seed)
    out: list[HealthSnapshot] = []
    documents = 10_000
    for i in range(days):
        at = MONDAY + timedelta(days=i)
        inserts = (override or {}).get(i, usual_inserts(at, rng))
        documents += inserts
        out.append(HealthSnapshot(at=at, documents=documents, inserts=inserts if i else None,
                                  newest_at=at - timedelta(seconds=rng.randint(30, 300)),
                                  freshness_s=float(rng.randint(30, 300)), documents_sampled=1000,
                                  fields=[FieldHealth(path="coupon", null_share=rng.uniform(0.006, 0.014),
                                                      types={"string": 1.0}, distinct_share=0.02)]))
    return out


def kinds(history: list[HealthSnapshot], today: HealthSnapshot) -> list[tuple[str, str]]:
    return [(a.kind, a.direction) for a in detect(history, today, OPTIONS)]


def test_an_ordinary_weekend_after_four_weeks_of_weekday_rhythm_is_not_an_anomaly() -> None:
    days = run_days(35)
    saturdays = [i for i in range(28, 35) if days[i].at.weekday() >= 5]
    for i in range(28, 35):
        assert kinds(days[:i], days[i]) == [], f"day {i} ({days[i].at:%a})"
    assert saturdays  # the window really held weekend days


def test_a_weekday_with_a_third_of_the_usual_inserts_is_one_volume_drop() -> None:
    days = run_days(30, override={29: 330})
    assert days[29].at.weekday() < 5
    assert kinds(days[:29], days[29]) == [("volume_anomaly", "drop")]


def test_no_anomaly_is_raised_before_the_baseline_has_its_minimum_history() -> None:
    days = run_days(9, override={8: 50})
    # Seven earlier runs give six insert rates (the first run has nothing to compare with): too few.
    assert kinds(days[:7], days[7].model_copy(update={"inserts": 50})) == []
    assert kinds(days[:8], days[8]) == [("volume_anomaly", "drop")]


def test_a_single_bad_run_in_the_history_does_not_hide_the_next_anomaly() -> None:
    days = run_days(30, override={15: 5, 29: 400})
    assert days[15].at.weekday() == days[29].at.weekday()  # the bad run is in today's own weekday baseline
    assert kinds(days[:29], days[29]) == [("volume_anomaly", "drop")]


def test_a_stall_with_no_new_documents_raises_freshness() -> None:
    days = run_days(20)
    stalled = days[19].model_copy(update={"inserts": 0, "freshness_s": 26 * 3600.0})
    found = detect(days[:19], stalled, OPTIONS)
    assert ("freshness", "stale") in [(a.kind, a.direction) for a in found]


def test_an_expected_cadence_speaks_from_the_first_run() -> None:
    today = run_days(1)[0].model_copy(update={"freshness_s": 7200.0})
    found = detect([], today, HealthOptions(cadence_s=3600))
    assert [(a.kind, a.expected) for a in found] == [("freshness", 3600)]


def test_a_null_share_jumping_from_one_to_fifteen_percent_is_distribution_drift() -> None:
    days = run_days(15)
    today = days[14].model_copy(update={"fields": [FieldHealth(path="coupon", null_share=0.15,
                                                               types={"string": 1.0}, distinct_share=0.02)]})
    (drift,) = detect(days[:14], today, OPTIONS)
    assert (drift.kind, drift.field, drift.metric, drift.direction) == ("distribution_drift", "coupon",
                                                                        "null_share", "up")


def test_a_sample_wobble_of_a_share_is_not_drift() -> None:
    days = run_days(15)
    today = days[14].model_copy(update={"fields": [FieldHealth(path="coupon", null_share=0.02,
                                                               types={"string": 1.0}, distinct_share=0.02)]})
    assert detect(days[:14], today, OPTIONS) == []


def test_a_steady_history_does_not_turn_a_small_wobble_into_a_finding() -> None:
    flat = [HealthSnapshot(at=MONDAY + timedelta(days=i), documents=1000 * (i + 1), inserts=1000 if i else None,
                           freshness_s=60.0) for i in range(10)]
    today = HealthSnapshot(at=MONDAY + timedelta(days=10), documents=11_950, inserts=950, freshness_s=90.0)
    assert detect(flat, today, OPTIONS) == []


def test_a_run_inside_an_excluded_span_raises_nothing() -> None:
    days = run_days(30, override={29: 100})
    maintenance = ExcludedSpan(start=days[28].at + timedelta(hours=1), end=days[29].at + timedelta(hours=1),
                               reason="planned maintenance")
    assert kinds(days[:29], days[29]) == [("volume_anomaly", "drop")]
    assert detect(days[:29], days[29], HealthOptions(exclude=[maintenance])) == []


def test_quiet_excluded_days_in_the_stored_runs_do_not_widen_the_baseline() -> None:
    """Two weeks of holidays at a sixth of the usual inserts, then a weekday at 60%: judged against
    a baseline the holidays widened it passes; with the holidays excluded it is a drop."""
    days = run_days(30, override={**{i: 150 for i in range(8, 22)}, 29: 600})
    holidays = ExcludedSpan(start=MONDAY + timedelta(days=7, hours=12), end=MONDAY + timedelta(days=21, hours=12),
                            reason="holidays")
    assert kinds(days[:29], days[29]) == []
    found = detect(days[:29], days[29], HealthOptions(exclude=[holidays]))
    assert [(a.kind, a.direction) for a in found] == [("volume_anomaly", "drop")]


def _hourly(hours: int, end: datetime, per_hour: int = 100) -> list[HealthSnapshot]:
    """Hourly snapshots of a collection receiving ``per_hour`` documents an hour (give or take)."""
    rng = random.Random(5)
    out, documents = [], 5_000
    for k in range(hours, 0, -1):
        at = end - timedelta(hours=k)
        inserts = rng.randint(per_hour - 10, per_hour + 10)
        documents += inserts
        out.append(HealthSnapshot(at=at, documents=documents, inserts=inserts, newest_at=at - timedelta(seconds=30),
                                  freshness_s=30.0, documents_sampled=1000))
    return out


def _runs_twenty_seconds_apart(history: list[HealthSnapshot], count: int, inserts: list[int]) -> list[HealthSnapshot]:
    last = history[-1]
    out = []
    for i in range(count):
        arrived = inserts[i] if i < len(inserts) else 0
        at = last.at + timedelta(seconds=20)
        last = HealthSnapshot(at=at, documents=last.documents + arrived, inserts=arrived,
                              newest_at=at if arrived else last.newest_at, freshness_s=30.0, documents_sampled=1000)
        out.append(last)
    return out


def test_no_document_in_twenty_seconds_at_a_hundred_an_hour_is_no_volume_drop() -> None:
    history = _hourly(30, MONDAY)
    today = _runs_twenty_seconds_apart(history, 1, [0])[0]
    assert kinds(history, today) == []


def test_one_document_after_a_dozen_quiet_twenty_second_runs_is_no_volume_jump() -> None:
    """The quiet runs of one hour do not become that hour of the day's own rhythm (a rate of zero)."""
    history = _hourly(30, MONDAY)
    quiet = _runs_twenty_seconds_apart(history, 12, [])
    today = _runs_twenty_seconds_apart(quiet, 1, [1])[0]
    assert kinds(history + quiet, today) == []


def test_no_document_for_a_day_at_a_hundred_an_hour_is_still_a_volume_drop() -> None:
    history = _hourly(30, MONDAY)
    today = HealthSnapshot(at=MONDAY + timedelta(hours=23), documents=history[-1].documents, inserts=0,
                           newest_at=history[-1].newest_at, freshness_s=30.0, documents_sampled=1000)
    assert ("volume_anomaly", "drop") in kinds(history, today)
