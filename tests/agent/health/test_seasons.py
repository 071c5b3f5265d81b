"""Seasons beyond the weekday, used only where the history shows them, and anomalies kept out of the
baselines they are judged against."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from argus.agent.health.baseline import detect
from argus.agent.health.models import HealthOptions, HealthSnapshot

START = datetime(2026, 1, 5, 0, 0, tzinfo=UTC)  # a Monday


def series(at: list[datetime], inserts: list[int]) -> list[HealthSnapshot]:
    documents = 100_000
    out = []
    for i, (when, n) in enumerate(zip(at, inserts, strict=True)):
        documents += n
        out.append(HealthSnapshot(at=when, documents=documents, inserts=n if i else None))
    return out


def volume(history: list[HealthSnapshot], today: HealthSnapshot, options: HealthOptions) -> list[str]:
    return [f"{a.direction} ({a.season})" for a in detect(history, today, options) if a.kind == "volume_anomaly"]


# --- hour of the day -------------------------------------------------------------------------------

def _hourly(hours: int, rng: random.Random) -> tuple[list[datetime], list[int]]:
    """Busy by day (about 100 an hour from 08:00 to 20:00), quiet by night (about 10)."""
    at = [START + timedelta(hours=h) for h in range(hours)]
    return at, [rng.randint(90, 110) if 8 <= t.hour < 20 else rng.randint(8, 12) for t in at]


HOURLY = HealthOptions(window=24 * 6)


def test_a_quiet_night_hour_is_not_a_drop_once_the_history_shows_the_hour_of_day() -> None:
    at, inserts = _hourly(24 * 6, random.Random(1))
    history = series(at, inserts)
    night = history[-1].model_copy(update={"at": at[-1] + timedelta(hours=1), "inserts": 10})  # 00:00
    assert volume(history, night, HOURLY) == []


def test_a_night_rate_at_noon_is_a_drop_at_the_same_hour_of_day() -> None:
    at, inserts = _hourly(24 * 6 + 12, random.Random(2))  # the last one: 11:00
    history = series(at, inserts)
    noon = history[-1].model_copy(update={"at": at[-1] + timedelta(hours=1), "inserts": 10})
    assert noon.at.hour == 12
    assert volume(history, noon, HOURLY) == ["drop (hour of day)"]


# --- day of the month ------------------------------------------------------------------------------

def _daily(days: int, rng: random.Random) -> tuple[list[datetime], list[int]]:
    """About 1,000 a day, and ten times that on the first of each month (a billing run)."""
    at = [START + timedelta(days=d) for d in range(days)]
    return at, [10 * rng.randint(950, 1050) if t.day == 2 else rng.randint(950, 1050) for t in at]


MONTHLY = HealthOptions(window=150)


def test_the_monthly_billing_day_is_no_jump_once_three_months_show_it() -> None:
    at, inserts = _daily(130, random.Random(3))  # Jan 5 .. May 14: the 2nd of Feb, Mar, Apr and May
    history = series(at[:-1], inserts[:-1])
    day = next(i for i in range(100, 130) if at[i].day == 2)
    assert volume(series(at[:day], inserts[:day]), series(at[:day + 1], inserts[:day + 1])[-1], MONTHLY) == []
    assert history  # the run on an ordinary day with the same volume is a jump
    ordinary = series(at[:day + 5], inserts[:day + 5])
    spike = ordinary[-1].model_copy(update={"at": ordinary[-1].at + timedelta(days=1), "inserts": 10_000})
    assert volume(ordinary, spike, MONTHLY)[0].startswith("jump")


def test_a_month_without_the_billing_day_in_the_history_keeps_the_weekday_baseline() -> None:
    at, inserts = _daily(40, random.Random(4))  # only the 2nd of February
    day = next(i for i in range(25, 40) if at[i].day == 2)
    found = volume(series(at[:day], inserts[:day]), series(at[:day + 1], inserts[:day + 1])[-1], MONTHLY)
    assert found and found[0].startswith("jump") and "day of month" not in found[0]


# --- anomalies out of their own baseline ------------------------------------------------------------

def _outage(flagged: bool) -> tuple[list[HealthSnapshot], HealthSnapshot]:
    """Eight ordinary days, then seven days of a tenth of the volume, each reported as a drop (or not)."""
    rng = random.Random(5)
    at = [START + timedelta(days=d) for d in range(16)]
    inserts = [rng.randint(950, 1050) for _ in range(8)] + [rng.randint(90, 110) for _ in range(8)]
    history = series(at[:15], inserts[:15])
    if flagged:
        history = [h.model_copy(update={"anomalies": ["volume_anomaly"]}) if i >= 8 else h
                   for i, h in enumerate(history)]
    return history, series(at, inserts)[-1]


def test_an_outage_reported_every_day_is_still_reported_while_it_lasts() -> None:
    history, today = _outage(flagged=True)
    assert volume(history, today, HealthOptions(seasonality="off")) == ["drop (None)"]


def test_the_same_outage_unreported_would_have_become_the_baseline() -> None:
    history, today = _outage(flagged=False)
    assert volume(history, today, HealthOptions(seasonality="off")) == []
