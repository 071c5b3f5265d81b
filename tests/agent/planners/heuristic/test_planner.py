"""The heuristic planner finds planted defects with exact counts and stays quiet on healthy data."""

from __future__ import annotations

import pytest

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from tests.agent.planners.heuristic.datasets import NOW, PLANTED, healthy, planted
from tests.conftest import memory_collection


def _audit(make_target, docs) -> AuditReport:  # type: ignore[no-untyped-def]
    return run_audit(make_target(docs), HeuristicPlanner(clock=ManualClock(NOW)), options=AuditOptions(),
                     clock=ManualClock(NOW))


@pytest.fixture(scope="module")
def planted_report() -> AuditReport:

    from argus.agent.tools.target import AuditTarget

    coll = memory_collection(planted(), "orders", database="shop")
    return run_audit(AuditTarget(coll), HeuristicPlanner(clock=ManualClock(NOW)), clock=ManualClock(NOW))


def test_healthy_collection_has_no_findings(make_target) -> None:  # type: ignore[no-untyped-def]
    report = _audit(make_target, healthy())
    assert report.outcome == "succeeded"
    assert [(f.field, f.category.value, f.affected_count) for f in report.findings] == []


def test_every_planted_defect_is_found(planted_report: AuditReport) -> None:
    found = {(f.field, f.category.value) for f in planted_report.findings}
    assert set(PLANTED) <= found


def test_nothing_but_the_planted_defects_is_reported(planted_report: AuditReport) -> None:
    extra = {(f.field, f.category.value) for f in planted_report.findings} - set(PLANTED)
    assert extra == set()


@pytest.mark.parametrize(("field", "category"), sorted(PLANTED))
def test_affected_count_is_exact(planted_report: AuditReport, field: str, category: str) -> None:
    finding = next(f for f in planted_report.findings if (f.field, f.category.value) == (field, category))
    assert finding.affected_count == PLANTED[(field, category)]
    assert finding.affected_pct == pytest.approx(finding.affected_count / 3000, abs=1e-6)


def test_evidence_queries_reproduce_the_counts(planted_report: AuditReport) -> None:

    from argus.agent.ejson import decode

    coll = memory_collection(planted(), "again", database="shop")
    for f in planted_report.findings:
        # evidence masked by the privacy mode (duplicated keys) is kept as run in memory, for replay
        evidence = planted_report.replay_evidence.get(f.id, f.evidence_query)
        assert coll.count_documents(decode(evidence)) == f.affected_count, f.field


def test_severity_is_calibrated_to_the_share(planted_report: AuditReport) -> None:
    by_key = {(f.field, f.category.value): f.severity.value for f in planted_report.findings}
    assert by_key[("customer_id", "schema_drift")] == "critical"   # 10% of documents
    assert by_key[("amount", "type_mismatch")] == "high"
    assert by_key[("status", "empty_value")] == "low"


def test_findings_carry_no_raw_values_by_default(planted_report: AuditReport) -> None:
    email = next(f for f in planted_report.findings if f.field == "email")
    assert email.sample_values and all(str(v).startswith("shape:") for v in email.sample_values)
    country = next(f for f in planted_report.findings if f.field == "country")
    # categorical: the vocabulary the sample saw appears as itself, a value it missed as its shape
    vocabulary = {"us", "br", "fr", "de", "gb", "ca", "in", "jp"}
    assert set(country.sample_values) & vocabulary
    assert all(v in vocabulary or str(v).startswith("shape:") for v in country.sample_values)


def test_every_field_is_checked_before_concluding(planted_report: AuditReport) -> None:
    assert planted_report.fields_investigated == planted_report.fields_total
    assert planted_report.termination_reason == "concluded"


def test_an_outlier_description_names_only_the_rules_the_values_break(make_target) -> None:  # type: ignore[no-untyped-def]
    """Weights with a cluster of 99,999 and prices with negatives: no NaN and no zero in either,
    so neither description speaks of 'not a number' or a zero placeholder."""
    import random

    rng = random.Random(3)
    docs = [{"weight": round(rng.uniform(1, 500), 1), "price": round(rng.uniform(5, 400), 2)} for _ in range(1500)]
    for doc in docs[1:60:2]:
        doc["weight"], doc["price"] = 99_999.0, -doc["price"]
    found = {f.field: f.description for f in _audit(make_target, docs).findings}
    assert "far above every other value" in found["weight"]
    assert "negative" in found["price"] and "zero" not in found["price"]
    for description in found.values():
        assert "not a number" not in description and "zero placeholder" not in description


@pytest.mark.parametrize("debits", [0.05, 0.4, 0.7])
def test_a_ledger_writes_its_debits_negative_beside_their_direction(make_target, debits: float) -> None:  # type: ignore[no-untyped-def]
    """With a ``direction`` beside it the sign is the direction's, at any share of debits; without
    one, negative amounts are found while they are the minority."""
    import random

    rng = random.Random(int(debits * 100))
    docs = []
    for _ in range(1500):
        debit = rng.random() < debits
        amount = round(rng.lognormvariate(4, 1), 2)
        docs.append({"amount": -amount if debit else amount, "direction": "debit" if debit else "credit"})
    assert [f.field for f in _audit(make_target, docs).findings] == []
    bare = [{"amount": d["amount"]} for d in docs]
    negatives = sum(1 for d in bare if d["amount"] < 0)
    found = [(f.field, f.affected_count) for f in _audit(make_target, bare).findings]
    assert found == ([("amount", negatives)] if debits < 0.5 else [])
