"""Defects inside arrays of subdocuments count every document that holds one bad element, not
only documents whose every element is bad: an order with one bad line among good ones is affected."""

from __future__ import annotations

import random
from typing import Any

from argus.agent.clock import ManualClock
from argus.agent.ejson import decode
from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.elements import per_element
from argus.agent.tools.target import AuditTarget
from tests.agent.planners.heuristic.growing import NOW
from tests.conftest import memory_collection


def _audit(docs: list[dict[str, Any]]) -> tuple[AuditReport, Any]:
    coll = memory_collection(docs, "shipments", database="shop")
    return run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW)), coll


def _orders(rng: random.Random, n: int) -> list[dict[str, Any]]:
    return [{"order_no": f"SO-{100000 + i}",
             "items": [{"sku": f"SKU-{rng.randint(1000, 9999)}", "qty": rng.choice([1, 1, 2, 3, 5]),
                        "unit_price": round(rng.lognormvariate(3, 0.6), 2),
                        "buyer_email": f"c{i}.{k}@shop.example"}
                       for k in range(rng.randint(2, 4))]}
            for i in range(n)]


def test_one_bad_element_among_good_ones_makes_its_document_affected() -> None:
    rng = random.Random(8)
    docs = _orders(rng, 1200)
    bad = rng.sample(range(len(docs)), 48)
    for i in bad:
        line = docs[i]["items"][-1]              # the last line only; the others stay good
        line["qty"] = str(line["qty"])
        line["buyer_email"] = "c.at.shop.example"
    report, coll = _audit(docs)
    found = {(f.field, f.category.value): f for f in report.findings}
    for key in (("items.qty", "type_mismatch"), ("items.buyer_email", "format_violation")):
        assert key in found, sorted(found)
        assert found[key].affected_count == len(bad)
        evidence = report.replay_evidence.get(found[key].id, found[key].evidence_query)
        assert coll.count_documents(decode(evidence)) == len(bad)
    assert set(found) == {("items.qty", "type_mismatch"), ("items.buyer_email", "format_violation")}


def test_two_conditions_on_one_array_speak_of_the_same_element() -> None:
    arrays = frozenset({"items", "items.parts"})
    query = {"items.qty": {"$exists": False}, "items.quantity": {"$exists": True}, "items.parts.w": {"$lt": 0},
             "order_no": {"$type": "string"}}
    assert per_element(query, arrays) == {
        "order_no": {"$type": "string"},
        "items": {"$elemMatch": {"qty": {"$exists": False}, "quantity": {"$exists": True},
                                 "parts": {"$elemMatch": {"w": {"$lt": 0}}}}}}
