"""Which fields are keys: a reference to another collection's documents repeats by design, a
measurement is unique only by spread, a field empty by meaning is no null defect; the
collection's own key and a record's generic key stay checked, with exact counts."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.planners.heuristic.hypotheses import duplicates
from argus.agent.planners.heuristic.names import hints_for
from argus.agent.planners.heuristic.plan import Plan, Probe
from argus.agent.planners.heuristic.statistics import duplicate_check
from argus.agent.report import AuditReport
from argus.agent.tools.models import StatsResult
from argus.agent.tools.profiling import profile_documents
from argus.agent.tools.target import AuditTarget
from tests.conftest import memory_collection

NOW = datetime(2026, 3, 1, tzinfo=UTC)
Doc = dict[str, Any]


def _audit(collection: str, docs: list[Doc]) -> AuditReport:
    coll = memory_collection(docs, collection, database="keys")
    return run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))


def _found(report: AuditReport) -> dict[tuple[str, str], tuple[int, str]]:
    return {(f.field, f.category.value): (f.affected_count, f.severity.value) for f in report.findings}


def _shop_lines(n: int, rng: random.Random) -> list[Doc]:
    """Lines of a shop's orders: each order has one to five lines, each line one product of 9,000."""
    docs: list[Doc] = []
    order = 70_000
    while len(docs) < n:
        order += 1
        for k in range(rng.choice([1, 1, 2, 3, 5])):
            docs.append({"line_id": f"LI-{len(docs):07d}", "order_id": f"SO{order}",
                         "product_sku": f"{rng.choice('KLMNPQ')}{rng.randint(100, 1599)}-{rng.choice('SML')}",
                         "line_no": k + 1, "qty": rng.randint(1, 4)})
    return docs[:n]


def _parcels(n: int, rng: random.Random) -> list[Doc]:
    """A courier's parcels: customers from a population twenty times larger, one to three parcels each;
    numeric recipient ids; a route number driven every day; a bare ``acct`` code."""
    docs: list[Doc] = []
    while len(docs) < n:
        customer = f"CU-{rng.randint(1, 40 * n):07d}"
        for _ in range(rng.choice([1, 1, 2, 3])):
            docs.append({"parcel_id": f"{rng.getrandbits(48):012x}", "customerId": customer,
                         "recipient_id": rng.randint(1, 25 * n), "routeNo": f"R{rng.randint(1, 3000)}",
                         "acct": f"AC{rng.randint(10000, 99999)}", "weight_g": rng.randint(50, 30_000)})
    return docs[:n]


@pytest.mark.parametrize("collection", ["order_lines", "shop_order_lines"])
def test_a_parent_key_and_a_product_reference_in_child_lines_are_not_duplicates(collection: str) -> None:
    """``order_id`` in order lines is the parent order (shared by its lines), ``product_sku`` the
    product sold: neither is the lines' key, however distinct the sample looks."""
    report = _audit(collection, _shop_lines(2500, random.Random(5)))
    assert [k for k in _found(report) if k[1] == "duplicate_value"] == []


def test_references_into_a_large_population_are_not_duplicates() -> None:
    """Customers with one to three parcels, in a population 40 times the collection: the sample is
    mostly distinct, and the repeats are the relation, not a retry."""
    report = _audit("parcels", _parcels(2500, random.Random(8)))
    assert _found(report) == {}


def test_the_own_key_of_child_lines_stays_checked_with_its_exact_count() -> None:
    docs = _shop_lines(2500, random.Random(5))
    for i in range(1, 121, 2):  # 60 lines written twice
        docs[i]["line_id"] = docs[i - 1]["line_id"]
    assert _found(_audit("order_lines", docs)) == {("line_id", "duplicate_value"): (120, "high")}


@pytest.mark.parametrize(("collection", "field", "make"), [
    ("parcels_2025", "parcel_id", lambda i, rng: f"PC{i:08d}"),          # the collection's own key, a year beside
    ("archived_parcels", "parcelId", lambda i, rng: f"PC{i:08d}"),
    ("ledger", "txn_id", lambda i, rng: f"{rng.getrandbits(64):016x}"),  # a record's generic key, any collection
    ("ledger", "ref", lambda i, rng: f"REF-{i:06d}"),
    ("prescriptions", "rxId", lambda i, rng: f"RX{i:07d}"),               # an abbreviation of the collection
])
def test_own_and_generic_keys_stay_checked_with_their_exact_count(collection: str, field: str, make: Any) -> None:
    rng = random.Random(2)
    docs = [{field: make(i, rng), "amount": round(rng.lognormvariate(3, 1), 2)} for i in range(2000)]
    for i in range(1, 61, 2):  # 30 records written twice
        docs[i][field] = docs[i - 1][field]
    assert _found(_audit(collection, docs)) == {(field, "duplicate_value"): (60, "high")}


def test_measurements_unique_in_the_sample_are_not_keys() -> None:
    """Uptime in seconds and odometer kilometres are integers spread far wider than the collection
    is large: a handful of equal readings are equal amounts, not duplicated records."""
    rng = random.Random(3)
    docs = [{"uptimeSeconds": int(rng.lognormvariate(13, 1.3)), "mileage_km": rng.randint(5_000, 320_000),
             "reading": int(rng.lognormvariate(11, 1.0))} for _ in range(3000)]
    assert _found(_audit("telemetry", docs)) == {}


def test_an_unnamed_counter_stays_checked() -> None:
    """Integers dense like a sequence over the collection's documents: a counter, whatever its name."""
    rng = random.Random(4)
    docs = [{"seq": 50_000 + i, "level": rng.choice(["info", "warn", "error"])} for i in range(2000)]
    for i in range(1, 41, 2):
        docs[i]["seq"] = docs[i - 1]["seq"]
    assert _found(_audit("events", docs)) == {("seq", "duplicate_value"): (40, "medium")}


def test_a_hierarchys_root_is_no_null_defect_but_free_text_is_checked_like_any_field() -> None:
    """``manager_id`` is written like ``employee_id`` beside it and repeats: a link between the
    collection's own documents, empty at the top. ``notes`` and ``middle_name`` missing from a
    quarter and a fifth of the documents are counted like any field the bulk carries: their names
    alone no longer excuse them."""
    rng = random.Random(6)
    docs: list[Doc] = []
    for i in range(2400):
        doc: Doc = {"employee_id": f"E{i:05d}", "manager_id": f"E{rng.randint(0, 199):05d}" if i >= 200 else None,
                    "reports_to": f"E{rng.randint(0, 199):05d}" if i >= 200 else None}
        if rng.random() < 0.75:
            doc["notes"] = rng.choice(["remote", "part time", "on leave"])
        if rng.random() < 0.8:
            doc["middle_name"] = rng.choice(["J.", "Maria", "Lee"])
        docs.append(doc)
    without = {name: sum(1 for d in docs if name not in d) for name in ("notes", "middle_name")}
    assert _found(_audit("employees", docs)) == {("notes", "null_rate"): (without["notes"], "high"),
                                                 ("middle_name", "null_rate"): (without["middle_name"], "high")}


def test_a_missing_contact_detail_is_reported_a_step_lower_and_a_required_field_is_not() -> None:
    """A fifth of the contacts gave no phone: worth seeing (medium), not paging for (high). A fifth
    without the account they belong to is a writer's defect: high, as before."""
    rng = random.Random(7)
    docs = []
    for i in range(2000):
        doc: Doc = {"contact_id": f"CT{i:06d}", "name": f"n{i}", "account": f"A{rng.randint(1, 50)}"}
        if i % 5:
            doc["phone"] = f"+49 30 {rng.randint(1_000_000, 9_999_999)}"
        else:
            doc["account"] = None
        docs.append(doc)
    assert _found(_audit("contacts", docs)) == {("phone", "null_rate"): (400, "medium"),
                                                ("account", "null_rate"): (400, "high")}


def test_codes_drawn_at_random_collide_by_chance_and_are_no_duplicates() -> None:
    """Five-digit codes drawn at random for 3,000 documents share about 45 values by chance alone
    (the birthday problem): whatever the field is called, that is no duplicated record."""
    rng = random.Random(9)
    docs = [{"pin": f"{rng.randint(0, 99_999):05d}", "kg": round(rng.lognormvariate(1, 0.4), 2)}
            for _ in range(3000)]
    assert _found(_audit("returns", docs)) == {}


def test_a_key_too_large_to_group_in_memory_is_left_out_with_a_note() -> None:
    """The duplicates count groups every value inside $facet, which cannot spill to disk: past the
    memory one stage may use, the check is skipped and the report is told why, not the server."""
    fields, _, _ = profile_documents([{"order_no": f"SO-{400_000 + i}"} for i in range(1000)])
    plan = Plan()
    duplicates(fields[0], hints_for("order_no"), plan, collection="sales", size=2_000_000, sampled=1000)
    assert plan.probes == []
    assert plan.notes == ["duplicates of order_no were not counted: grouping 2,000,000 values would take about "
                          "217 MB, more than the 80 MB one $group inside $facet may use (it cannot spill to disk); "
                          "check them with an aggregation that may (allowDiskUse) or a unique index"]


def test_a_duplicates_probe_without_a_key_plan_is_a_key_at_any_share() -> None:
    """Another module may add a duplicates probe for a key it was told of (a contract): its repeated
    values are duplicates however many documents share them."""
    probe = Probe("sku", "duplicates", {"field": "sku", "operation": "duplicates"})
    result = StatsResult(collection="c", field="sku", operation="duplicates", value=[{"value": "A1", "count": 900}],
                         totals={"values": 1, "documents": 900}, query_used="")
    check = duplicate_check(probe, result, 1000)
    assert check is not None and check.query == {"sku": {"$in": ["A1"]}}
