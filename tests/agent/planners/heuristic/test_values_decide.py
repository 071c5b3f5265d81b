"""Names add, values decide (issue 31): with every field named ``f1``, ``f2``… and the collection
``t``, a sign flipped on part of a positive field, events dated after the audit's now and
impossible counts are found from the values alone, each with its exact count; fields that hold
both signs or planned dates by nature stay quiet. Collections are generated here and audited on
the in-process engine behind ``argus audit --file``."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bson import json_util

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.daemon.sources import load_jsonl

NOW = datetime(2026, 3, 1, tzinfo=UTC)
SIZE = 3000
Doc = dict[str, Any]


def _found(tmp_path: Path, docs: list[Doc]) -> dict[tuple[str, str], int]:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json_util.dumps(d) + "\n" for d in docs), encoding="utf-8")
    report = run_audit(load_jsonl(path), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))
    return {(f.field, f.category.value): f.affected_count for f in report.findings}


def _ago(rng: random.Random, days: float) -> datetime:
    return NOW - timedelta(days=rng.uniform(0.5, days))


def _docs(rng: random.Random, f1: Any) -> list[Doc]:
    """``f1`` the field under test (a callable of the generator and the position), ``f2`` a label."""
    return [{"f1": f1(rng, i), "f2": rng.choice(["a", "b", "c"])} for i in range(SIZE)]


def _plant(rng: random.Random, docs: list[Doc], rate: float, change: Any) -> int:
    chosen = rng.sample(docs, round(rate * SIZE))
    for d in chosen:
        d["f1"] = change(rng, d["f1"])
    return len(chosen)


@pytest.mark.parametrize("rate", [0.03, 0.08, 0.2])
def test_a_sign_flipped_on_part_of_a_positive_field_is_found(tmp_path: Path, rate: float) -> None:
    """Log-normal amounts, some written negative: their magnitudes mirror the positive bulk."""
    rng = random.Random(1)
    docs = _docs(rng, lambda r, i: round(math.exp(r.gauss(math.log(40), 1.0)), 2))
    planted = _plant(rng, docs, rate, lambda r, v: -v)
    assert _found(tmp_path, docs) == {("f1", "outlier_value"): planted}


@pytest.mark.parametrize("rate", [0.03, 0.1, 0.2])
def test_events_dated_after_now_in_a_field_of_past_events_are_found(tmp_path: Path, rate: float) -> None:
    """Dates of the last two years, some written a month to two years ahead (a wrong year, a
    clock far off): they stand apart from the past values, which reach up to today."""
    rng = random.Random(2)
    docs = _docs(rng, lambda r, i: _ago(r, 730))
    planted = _plant(rng, docs, rate, lambda r, v: NOW + timedelta(days=r.uniform(30, 700)))
    assert _found(tmp_path, docs) == {("f1", "outlier_value"): planted}


@pytest.mark.parametrize(("rate", "written"), [(0.05, [-1, -7, 0]), (0.1, [-1, -7, 0]), (0.2, [-1, -7])])
def test_impossible_counts_beside_non_negative_integers_are_found(tmp_path: Path, rate: float,
                                                                  written: list[int]) -> None:
    """Items per order (1 to 12), some written -1 or -7, and some 0 (an order of nothing) while
    zeros stay rarer than a state would be (at most 5% of the documents)."""
    rng = random.Random(3)
    docs = _docs(rng, lambda r, i: r.choices([1, 2, 3, 4, 6, 12], weights=[40, 25, 15, 10, 7, 3])[0])
    planted = _plant(rng, docs, rate, lambda r, v: r.choice(written))
    assert _found(tmp_path, docs) == {("f1", "outlier_value"): planted}


QUIET: dict[str, Any] = {
    # both signs by nature: negatives near zero, far below the positive middle, or in a fair share
    "temperatures crossing zero": lambda r, i: round(r.gauss(8, 12), 1),
    "warm temperatures, rarely below zero": lambda r, i: round(r.gauss(20, 9), 1),
    "whole-degree temperatures": lambda r, i: round(r.gauss(12, 9)),
    "balances": lambda r, i: round(r.gauss(1500, 2500), 2),
    "deltas around zero": lambda r, i: round(r.gauss(0.5, 10), 2),
    "score changes": lambda r, i: r.choice([-3, -2, -1, 0, 1, 1, 2, 2, 3, 3, 4, 5]),
    # planned dates: due a few weeks after a past issue date, so the latest run on past today
    "due dates": lambda r, i: _ago(r, 700) + timedelta(days=r.choice([15, 30, 45, 60])),
    # appointments booked up to a month ahead beside those held in the last year
    "bookings": lambda r, i: NOW + timedelta(days=r.uniform(-365, 30)),
    # expiry dates: most still ahead
    "expiry dates": lambda r, i: NOW + timedelta(days=r.uniform(-60, 3 * 365)),
}


@pytest.mark.parametrize("kind", sorted(QUIET))
def test_fields_that_hold_both_signs_or_planned_dates_stay_quiet(tmp_path: Path, kind: str) -> None:
    assert _found(tmp_path, _docs(random.Random(4), QUIET[kind])) == {}
