"""An end before its start is reported, whatever share of documents holds one; dates that the
names do not pair, and ends equal to their starts, stay quiet."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest

from argus.agent.clock import ManualClock
from argus.agent.ejson import decode
from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.planners.heuristic.relations import intervals
from argus.agent.tools.models import FieldStats
from argus.agent.tools.target import AuditTarget
from tests.agent.planners.heuristic.growing import NOW
from tests.conftest import memory_collection


def _bookings(rng: random.Random, n: int) -> list[dict[str, Any]]:
    docs = []
    for i in range(n):
        check_in = NOW - timedelta(days=rng.uniform(10, 600))
        docs.append({"bookingRef": f"HB{i:06d}", "checkIn": check_in,
                     "checkOut": check_in + timedelta(days=rng.choice([0, 1, 2, 3, 7])),  # day use: same day
                     "hire_date": check_in - timedelta(days=rng.uniform(100, 4000)),
                     "termination_date": check_in + timedelta(days=rng.uniform(1, 300)),
                     # not an interval: a payment may come before or after its due date
                     "due_date": check_in + timedelta(days=14),
                     "paid_at": check_in + timedelta(days=rng.uniform(0, 13) if rng.random() < 0.97 else 20)})
    return docs


def _audit(docs: list[dict[str, Any]], collection: str) -> tuple[dict[tuple[str, str], Any], Any, Any]:
    coll = memory_collection(docs, collection, database="shop")
    report = run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))
    return {(f.field, f.category.value): f for f in report.findings}, report, coll


@pytest.mark.parametrize("share", [0.01, 0.3])
def test_an_end_before_its_start_is_reported_with_its_exact_count(share: float) -> None:
    rng = random.Random(4)
    docs = _bookings(rng, 1500)
    bad = rng.sample(range(len(docs)), int(share * len(docs)))
    for i in bad:
        docs[i]["checkOut"] = docs[i]["checkIn"] - timedelta(days=rng.randint(1, 5))
    found, report, coll = _audit(docs, "hotel_bookings")
    assert set(found) == {("checkOut", "cross_field")}, sorted(found)
    finding = found[("checkOut", "cross_field")]
    assert finding.affected_count == len(bad)
    assert "checkOut before checkIn" in finding.description
    assert coll.count_documents(decode(report.replay_evidence.get(finding.id, finding.evidence_query))) == len(bad)


def _date_field(path: str, in_array: bool = False) -> FieldStats:
    return FieldStats(path=path, types={"date": 100}, present_count=100, missing_count=0, null_count=0, null_rate=0,
                      parent_present_count=100, in_array=in_array, value_count=100, cardinality=100,
                      cardinality_capped=True, distinct_ratio=1.0)


def test_only_names_that_differ_in_a_start_and_an_end_word_pair_up() -> None:
    paths = ["startDatum", "endDatum", "opened_at", "closed_at", "created_at", "due_date", "shipped_on",
             "address.valid_from", "valid_to", "items.start", "items.end", "issued_at", "paid_at", "ends_on"]
    pairs = {(p.start, p.end) for p in intervals([_date_field(p, p.startswith("items.")) for p in paths])}
    assert pairs == {("startDatum", "endDatum"), ("opened_at", "closed_at"), ("created_at", "closed_at"),
                     ("issued_at", "due_date")}   # ends_on: 'ends' is no end word of the list


def _lines(rng: random.Random, n: int, *, discount: bool = False) -> list[dict[str, Any]]:
    docs = []
    for i in range(n):
        qty, price = rng.choice([1, 2, 3, 7, 12]), round(rng.lognormvariate(3, 0.7), 2)
        doc: dict[str, Any] = {"line_id": f"L{i:06d}", "qty": qty, "unit_price": price,
                               "total": round(qty * price, 2)}  # rounded to the cent: not a defect
        if discount:
            doc["discount"] = 5 if rng.random() < 0.1 else 0  # few enough to pass for a defect
            doc["total"] = round(doc["total"] * (1 - doc["discount"] / 100), 2)
        docs.append(doc)
    return docs


@pytest.mark.parametrize("share", [0.01, 0.15])
def test_a_total_that_is_not_quantity_times_unit_price_is_reported(share: float) -> None:
    rng = random.Random(9)
    docs = _lines(rng, 1200)
    bad = rng.sample(range(len(docs)), int(share * len(docs)))
    for i in bad:
        docs[i]["total"] = round(docs[i]["total"] * rng.choice([0.5, 1.1, 2, 10]) + 1, 2)
    found, _, _ = _audit(docs, "sales_lines")
    assert set(found) == {("total", "cross_field")}, sorted(found)
    assert found[("total", "cross_field")].affected_count == len(bad)


def test_a_total_beside_a_discount_is_not_held_to_the_product() -> None:
    found, _, _ = _audit(_lines(random.Random(3), 1200, discount=True), "sales_lines")
    assert ("total", "cross_field") not in found, sorted(found)
