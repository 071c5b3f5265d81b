"""Detection that does not hang on names (issue 20): a name may add a check or raise a severity,
never be the only reason a field goes unchecked. Each defect below was missed because of a name
alone; each comes with a clean control that must stay silent."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import mongomock
import pytest

from agent.clock import ManualClock
from agent.loop import run_audit
from agent.planners.heuristic import HeuristicPlanner
from agent.report import AuditReport
from agent.tools.target import AuditTarget

NOW = datetime(2026, 3, 1, tzinfo=UTC)
SIZE = 2000
Doc = dict[str, Any]


def _audit(collection: str, docs: list[Doc]) -> AuditReport:
    coll = mongomock.MongoClient()["names"][collection]
    coll.insert_many(docs)
    return run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))


def _found(report: AuditReport) -> dict[tuple[str, str], int]:
    return {(f.field, f.category.value): f.affected_count for f in report.findings}


def _sales(rng: random.Random, key: str = "order_id", flag: str = "paid") -> list[Doc]:
    """A shop's sales: an order number, a customer who buys about six times, a log-normal amount,
    a sale date, a region, a paid flag and a tax rate written as a fraction."""
    customers = [f"CU-{rng.randint(10**5, 10**6 - 1)}" for _ in range(SIZE // 6)]
    return [{key: f"SO-{400_000 + i}", "customer_id": rng.choice(customers),
             "amount": round(math.exp(rng.gauss(math.log(60), 0.9)), 2),
             "sold_at": NOW - timedelta(days=rng.uniform(1, 700), seconds=rng.randint(0, 86_399)),
             "region": rng.choices(["north", "south", "east", "west"], weights=[4, 3, 2, 1])[0],
             flag: rng.random() < 0.8,
             "tax_rate": round(min(0.6, math.exp(rng.gauss(math.log(0.08), 0.8))), 4)} for i in range(SIZE)]


@pytest.mark.parametrize(("collection", "key"), [("sales", "order_id"), ("shipments", "invoice_no")])
def test_a_clean_collection_whose_key_is_named_for_something_else_stays_silent(collection: str, key: str) -> None:
    assert _found(_audit(collection, _sales(random.Random(1), key=key))) == {}


@pytest.mark.parametrize("rate", [0.001, 0.02, 0.2])
@pytest.mark.parametrize(("collection", "key"), [("sales", "order_id"), ("shipments", "invoice_no")])
def test_duplicated_keys_are_found_whatever_the_collection_is_called(collection: str, key: str, rate: float) -> None:
    """``order_id`` in ``sales`` names another entity than the collection's: the values, all
    distinct but for the planted copies, say it is this collection's key."""
    docs = _sales(random.Random(1), key=key)
    copies = random.Random(2).sample(range(1, SIZE, 2), round(rate * SIZE))
    for i in copies:  # odd positions: the original (the even one before) is never itself a copy
        docs[i][key] = docs[i - 1][key]
    assert _found(_audit(collection, docs)) == {(key, "duplicate_value"): 2 * len(copies)}
