"""Numbers of few distinct values are a set as well as a range, and a key's few duplicates in a
small collection are counted (issue 31). Each collection is generated here and audited on the
in-process engine behind ``argus audit --file``; each finding's count is the planted one."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from bson import json_util

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.daemon.sources import load_jsonl

NOW = datetime(2026, 3, 1, tzinfo=UTC)
Doc = dict[str, Any]


def _found(tmp_path: Path, docs: list[Doc], name: str = "t") -> dict[tuple[str, str], int]:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json_util.dumps(d) + "\n" for d in docs), encoding="utf-8")
    report = run_audit(load_jsonl(path), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))
    return {(f.field, f.category.value): f.affected_count for f in report.findings}


def _set_field(rng: random.Random, values: list[float], weights: list[int], n: int = 3000) -> list[Doc]:
    return [{"f1": rng.choices(values, weights=weights)[0], "f2": f"item {i}"} for i in range(n)]


@pytest.mark.parametrize(("values", "weights", "factor"), [
    ([0.05, 0.1, 0.2], [50, 30, 20], 10),          # rates written ten times too large
    ([5, 10, 20], [50, 30, 20], 0.01),              # percents written as fractions in a few documents
    ([0, 0.07, 0.19], [10, 30, 60], 10),            # the bulk holds 0 too
])
@pytest.mark.parametrize("seed", range(3, 9))
def test_a_set_member_moved_by_a_power_of_ten_is_found_with_its_exact_count(
        tmp_path: Path, values: list[float], weights: list[int], factor: float, seed: int) -> None:
    """About 1% of the documents hold a member moved by a power of ten: whatever the sample of
    1,000 shows of them (the seeds draw different ones), the whole collection's counts decide."""
    rng = random.Random(seed)
    docs = _set_field(rng, values, weights)
    moved = [d for d in rng.sample(docs, 30) if d["f1"] != 0]
    for d in moved:
        d["f1"] = round(d["f1"] * factor, 6)
    assert _found(tmp_path, docs) == {("f1", "outlier_value"): len(moved)}


@pytest.mark.parametrize(("values", "weights"), [
    ([1, 2, 3, 5, 10], [60, 20, 10, 7, 3]),        # quantities: 10 is one of them, not a 1 moved
    ([1, 10, 100], [70, 29, 1]),                    # pack sizes a power of ten apart
    ([0, 5, 10, 15], [75, 10, 10, 5]),              # discounts in percent, 0 the most common
])
def test_a_set_whose_members_are_powers_of_ten_apart_stays_quiet(
        tmp_path: Path, values: list[float], weights: list[int]) -> None:
    assert _found(tmp_path, _set_field(random.Random(4), values, weights)) == {}


@pytest.mark.parametrize(("values", "weights", "outsider"), [
    ([1, 2, 3, 4, 5], [40, 25, 15, 12, 8], 33),                 # a status typed twice: 33 for 3
    ([1, 2, 3, 4, 5], [40, 25, 15, 12, 8], 3.5),                # off the integers' grid
    ([10, 20, 30, 40, 50], [40, 25, 15, 12, 8], 25),            # off the tens' grid
    ([0.05, 0.1, 0.2], [50, 30, 20], 0.12),                     # a rate of none of the plans
    ([100, 200, 300, 400], [40, 30, 20, 10], 250),
])
@pytest.mark.parametrize("seed", range(3, 6))
def test_a_rare_value_outside_a_set_is_found_with_its_exact_count(
        tmp_path: Path, values: list[float], weights: list[int], outsider: float, seed: int) -> None:
    """Three documents in 3,000 (0.1%; the sample of 1,000 may hold none of them) hold a value the
    set's members neither hold nor carry on: the whole collection's counts find exactly those."""
    rng = random.Random(seed)
    docs = _set_field(rng, values, weights)
    for d in rng.sample(docs, 3):
        d["f1"] = outsider
    assert _found(tmp_path, docs) == {("f1", "outlier_value"): 3}


@pytest.mark.parametrize(("values", "weights"), [
    (list(range(9)), [300, 250, 200, 120, 60, 30, 12, 5, 2]),  # children per household: a long tail thinning out
    ([0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12], [200, 200, 180, 150, 100, 60, 30, 20, 10, 3, 1]),  # floors of a building
    ([1, 2, 3, 4, 5], [3, 40, 150, 400, 407]),                 # 1-star ratings, rare, one step below the rest
    ([1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5], [2, 3, 10, 20, 60, 120, 300, 280, 205]),  # half stars
    ([1, 2, 4, 8, 16], [100, 300, 400, 150, 1]),                # memory sizes: 16 carries on the doubling
    ([0, 0.07, 0.16, 0.19], [100, 300, 1, 500]),                # a tax rate used for a few months
    ([1, 2, 3, 4, 5, 7], [1200, 750, 450, 360, 240, 1]),        # 7 within the set's own spread past 5
])
@pytest.mark.parametrize("seed", range(3, 5))
def test_a_rare_value_that_carries_a_set_on_stays_quiet(
        tmp_path: Path, values: list[float], weights: list[int], seed: int) -> None:
    assert _found(tmp_path, _set_field(random.Random(seed), values, weights)) == {}


@pytest.mark.parametrize("size", [2000, 4000])
def test_two_duplicated_emails_in_a_few_thousand_documents_are_found(tmp_path: Path, size: int) -> None:
    """Two values written twice in 4,000 documents (0.1%): chance expects a hundredth of a
    coincidence among such addresses, so they are duplicates, counted over the whole collection."""
    rng = random.Random(5)
    docs = [{"f1": f"user{rng.randint(0, 10**9)}@mail.org", "f2": round(rng.gauss(50, 10), 1)} for _ in range(size)]
    for i in rng.sample(range(0, size - 1, 2), 2):
        docs[i + 1]["f1"] = docs[i]["f1"]
    assert _found(tmp_path, docs) == {("f1", "duplicate_value"): 4}


def test_random_codes_colliding_as_often_as_chance_says_stay_quiet(tmp_path: Path) -> None:
    """Six-character codes drawn at random for 3,000 documents collide about 45 times by chance
    (five digits after a letter): no duplicates are reported for them."""
    rng = random.Random(6)
    docs = [{"f1": f"Z{rng.randint(10**4, 10**5 - 1)}", "f2": round(rng.gauss(50, 10), 1)} for _ in range(3000)]
    assert _found(tmp_path, docs) == {}
