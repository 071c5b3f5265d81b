"""Detection that does not hang on names (issue 20): a name may add a check or raise a severity,
never be the only reason a field goes unchecked. Each defect below was missed because of a name
alone; each comes with a clean control that must stay silent."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from argus.agent.clock import ManualClock
from argus.agent.health.models import FieldHealth, HealthSnapshot
from argus.agent.history import HistoricalContext
from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from tests.conftest import memory_collection

NOW = datetime(2026, 3, 1, tzinfo=UTC)
SIZE = 2000
Doc = dict[str, Any]


def _audit(collection: str, docs: list[Doc]) -> AuditReport:
    coll = memory_collection(docs, collection, database="names")
    return run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))


def _found(report: AuditReport) -> dict[tuple[str, str], int]:
    return {(f.field, f.category.value): f.affected_count for f in report.findings}


def _sales(rng: random.Random, key: str = "order_id", flag: str = "paid") -> list[Doc]:
    """A shop's sales: an order number, a customer who buys about six times, a log-normal amount,
    a sale date, a region, a paid flag, a tax rate written as a fraction, a parcel's weight in
    kilograms and the seconds it took to pack."""
    customers = [f"CU-{rng.randint(10**5, 10**6 - 1)}" for _ in range(SIZE // 6)]
    return [{key: f"SO-{400_000 + i}", "customer_id": rng.choice(customers),
             "amount": round(math.exp(rng.gauss(math.log(60), 0.9)), 2),
             "sold_at": NOW - timedelta(days=rng.uniform(1, 700), seconds=rng.randint(0, 86_399)),
             "region": rng.choices(["north", "south", "east", "west"], weights=[4, 3, 2, 1])[0],
             flag: rng.random() < 0.8,
             "tax_rate": round(min(0.6, math.exp(rng.gauss(math.log(0.08), 0.8))), 4),
             "weight_kg": round(math.exp(rng.gauss(math.log(2.5), 0.4)), 3),
             "packing_s": round(math.exp(rng.gauss(math.log(40), 0.5)), 1)} for i in range(SIZE)]


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


@pytest.mark.parametrize("flag", ["paid", "refunded", "approved", "shipped"])
def test_nulls_in_a_true_false_flag_are_found_whatever_its_name(flag: str) -> None:
    """A flag named like a later stage of a record (``paid``) still holds true or false in every
    document: 6% nulls are a writer's defect, not a stage that has not happened yet."""
    docs = _sales(random.Random(1), flag=flag)
    for i in random.Random(3).sample(range(SIZE), round(0.06 * SIZE)):
        docs[i][flag] = None
    assert _found(_audit("sales", docs)) == {(flag, "null_rate"): round(0.06 * SIZE)}


@pytest.mark.parametrize(("field", "factor", "share"), [
    ("tax_rate", 100, 0.01),      # 0.19 beside 19.0: a percent among fractions
    ("weight_kg", 1000, 0.005),   # grams among kilograms
    ("packing_s", 1000, 0.03),    # milliseconds among seconds
    ("packing_s", 0.001, 0.01),   # kiloseconds: a thousand times too small
])
def test_a_unit_written_another_way_is_counted_exactly(field: str, factor: float, share: float) -> None:
    """The moved values sit a power of ten off the bulk, a second cluster on a log scale that the
    tail fences (wary of the bulk's own long tail) never isolate."""
    docs = _sales(random.Random(1))
    for i in random.Random(4).sample(range(SIZE), round(share * SIZE)):
        docs[i][field] = round(docs[i][field] * factor, 4)
    assert _found(_audit("sales", docs)) == {(field, "outlier_value"): round(share * SIZE)}


def test_rare_negatives_below_positive_values_are_found_in_a_field_named_as_signed() -> None:
    """``balance_change`` is named like a signed difference, yet its values are all positive but for
    a few: the values ask for the sign rule, and the name no longer takes it away."""
    docs = _sales(random.Random(1))
    rng = random.Random(6)
    for d in docs:
        d["balance_change"] = round(rng.lognormvariate(3, 0.8), 2)
    for i in rng.sample(range(SIZE), 12):
        docs[i]["balance_change"] = -docs[i]["balance_change"]
    assert _found(_audit("sales", docs)) == {("balance_change", "outlier_value"): 12}


def test_a_future_date_is_found_in_a_field_named_as_if_it_could_be_planned() -> None:
    """Every ``due_date`` in the sample lies in the past: the field records what happened, so a date
    a month ahead is a defect whatever the name promises."""
    docs = _sales(random.Random(1))
    rng = random.Random(7)
    for d in docs:
        d["due_date"] = d["sold_at"] + timedelta(days=rng.uniform(0, 1))
    for i in rng.sample(range(SIZE), 8):
        docs[i]["due_date"] = NOW + timedelta(days=rng.uniform(20, 40))
    assert _found(_audit("sales", docs)) == {("due_date", "outlier_value"): 8}


@pytest.mark.parametrize("seed", range(4))
def test_long_natural_tails_are_no_unit_written_another_way(seed: int) -> None:
    """A Pareto tail (trips of a few kilometres, now and then a hundred times that) and tiers of
    small counts thin out or repeat the bulk's values: no band, no copy of the bulk moved by a power
    of ten."""
    rng = random.Random(seed)
    docs = [{"distance_km": round(rng.paretovariate(1.6) * 3.0, 1), "fare": round(rng.lognormvariate(3, 1.2), 2),
             "copies": rng.choices([1, 2, 3, 5, 12], [80, 12, 5, 2, 1])[0]} for _ in range(SIZE)]
    assert _found(_audit("trips", docs)) == {}


def _phone(rng: random.Random) -> str:
    area, exchange = rng.randint(200, 989), rng.randint(200, 989)
    return f"+{rng.choice([1, 33, 44, 49])} ({area}) {exchange}-{rng.randint(0, 9999):04d}"


@pytest.mark.parametrize("share", [0.01, 0.2])
def test_a_phones_format_is_known_by_its_digit_runs_whatever_the_field_is_called(share: float) -> None:
    """Phones in one format with country codes of one and two digits: no single shape holds 95% of
    them, yet the digit runs between the same separators are one format, which the name ``phone``
    used to be needed for."""
    rng = random.Random(8)
    docs = _sales(random.Random(1))
    for d in docs:
        d["reach"] = _phone(rng)
    for i in rng.sample(range(SIZE), round(share * SIZE)):
        digits = "".join(c for c in docs[i]["reach"] if c.isdigit())
        docs[i]["reach"] = rng.choice([digits, f"+{digits}", f"({digits[:3]} {digits[3:]}"])
    assert _found(_audit("sales", docs)) == {("reach", "format_violation"): round(share * SIZE)}


def test_a_short_code_drawn_at_random_collides_by_chance_in_a_small_collection() -> None:
    """Promo codes PR100 to PR999 on a third of 400 trips: a few equal codes are chance, not copies."""
    rng = random.Random(3)
    docs: list[Doc] = []
    for i in range(400):
        doc: Doc = {"trip": f"TR{i:06d}", "km": round(rng.lognormvariate(2, 0.5), 1)}
        if rng.random() < 0.3:
            doc["f2"] = f"PR{rng.randint(100, 999)}"
        docs.append(doc)
    assert sum(1 for d in docs if "f2" in d) - len({d["f2"] for d in docs if "f2" in d}) > 0  # a chance pair
    assert _found(_audit("t", docs)) == {}


@pytest.mark.parametrize("seed", range(6))
def test_a_lone_low_value_of_a_normal_spread_is_no_unit_written_another_way(seed: int) -> None:
    """Humidity around 60 with a spread of 15: on a log scale its low tail reaches far, and a lone 4
    is that tail, not a tenth of the bulk."""
    rng = random.Random(seed)
    docs = [{"f1": round(min(99.9, max(2.0, rng.gauss(60, 15))), 1)} for _ in range(400)]
    docs[7]["f1"] = round(rng.uniform(3.5, 6.5), 1)
    assert _found(_audit("t", docs)) == {}


def _deliveries(rng: random.Random, missing: float) -> list[Doc]:
    docs: list[Doc] = []
    for i in range(SIZE):
        shipped = NOW - timedelta(days=rng.uniform(2, 300))
        doc: Doc = {"parcel": f"PX{700_000 + i}", "shipped_at": shipped, "weight_kg": round(rng.uniform(0.2, 9), 2)}
        if rng.random() >= missing:
            doc["delivered_at"] = shipped + timedelta(days=rng.uniform(0.5, 1.5))
        docs.append(doc)
    return docs


def _earlier_run(null_share: float) -> HistoricalContext:
    snapshot = HealthSnapshot(at=NOW - timedelta(days=1), documents=SIZE, documents_sampled=1000,
                              fields=[FieldHealth(path="delivered_at", null_share=null_share, distinct_share=1.0)])
    return HistoricalContext(runs_considered=1, health=[snapshot])


@pytest.mark.parametrize(("earlier", "missing", "reported"), [
    (None, 0.1, False),   # a first run: nothing says the share jumped
    (0.1, 0.1, False),    # as many parcels on their way as last time
    (0.1, 0.3, True),     # three times as many: a writer stopped writing the date
])
def test_a_later_stage_date_may_be_missing_while_its_share_holds_steady(earlier: float | None, missing: float,
                                                                        reported: bool) -> None:
    docs = _deliveries(random.Random(5), missing)
    coll = memory_collection(docs, "parcels", database="names")
    report = run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW),
                       historical_context=_earlier_run(earlier) if earlier is not None else None)
    without = sum(1 for d in docs if "delivered_at" not in d)
    assert _found(report) == ({("delivered_at", "null_rate"): without} if reported else {})
