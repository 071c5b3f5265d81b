"""A defect stays reported, with its exact count, as it grows from 1% to 30% of the documents;
the same data gives the same findings whatever the sample held; an audit reads the collection
at most four times (issues 11 and 12)."""

from __future__ import annotations

from typing import Any

import pytest

from argus.agent.clock import ManualClock
from argus.agent.ejson import decode
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from tests.agent.planners.heuristic.growing import DEFECTS, NOW, bookings, damaged
from tests.conftest import RecordingCollection, memory_collection


def _audit(coll: Any, sample_seed: int | None = None) -> AuditReport:
    return run_audit(AuditTarget(coll, sample_seed=sample_seed), HeuristicPlanner(clock=ManualClock(NOW)),
                     clock=ManualClock(NOW))


def _collection(docs: list[dict[str, Any]]) -> Any:
    coll = memory_collection(docs, "bookings", database="travel")
    return coll


@pytest.mark.parametrize("share", [0.02, 0.3])
@pytest.mark.parametrize("kind", sorted(DEFECTS))
def test_a_growing_defect_stays_reported_with_its_exact_count(kind: str, share: float) -> None:
    field, category, _ = DEFECTS[kind]
    docs, affected = damaged(kind, share)
    coll = _collection(docs)
    report = _audit(coll)
    found = {(f.field, f.category.value): f for f in report.findings}
    assert (field, category) in found, f"{kind} at {share:.0%}: {sorted(found)}"
    finding = found[(field, category)]
    assert finding.affected_count == affected
    # The evidence as it ran (the report masks its literals outside privacy "full") reproduces the count.
    evidence = report.replay_evidence.get(finding.id, finding.evidence_query)
    assert coll.count_documents(decode(evidence)) == affected
    assert set(found) == {(field, category)}, f"{kind} at {share:.0%}: false positives {sorted(found)}"


def test_duplicates_of_the_collections_own_key_are_reported_when_most_documents_share_one() -> None:
    """``booking_ref`` in ``bookings`` names the document itself: pairs covering 60% of the
    documents are still duplicates, never the field's normal."""
    docs, affected = damaged("duplicate_key", 0.6)
    found = {(f.field, f.category.value): f for f in _audit(_collection(docs)).findings}
    assert found[("booking_ref", "duplicate_value")].affected_count == affected


def test_a_key_duplicated_in_pairs_stays_reported_when_the_collection_name_says_nothing() -> None:
    """``booking_ref`` in ``export_2025``: the name does not tie the key to the collection, but
    pairs (a retry writing each record twice) over 60% of the documents are duplicates."""
    docs, affected = damaged("duplicate_key", 0.6)
    coll = memory_collection(docs, "export_2025", database="travel")
    found = {(f.field, f.category.value): f for f in _audit(coll).findings}
    assert found[("booking_ref", "duplicate_value")].affected_count == affected


def test_a_reference_named_after_another_collection_is_not_a_key() -> None:
    """``booking_ref`` in ``payments`` names a booking, which a deposit and the balance both pay:
    its shared values are the relation, not duplicates."""
    docs, _ = damaged("duplicate_key", 0.6)
    coll = memory_collection(docs, "payments", database="travel")
    assert [(f.field, f.category.value) for f in _audit(coll).findings] == []


def test_more_than_a_thousand_duplicated_keys_are_all_counted() -> None:
    docs, affected = damaged("duplicate_key", 0.8, n=2600)  # 1,040 references used twice
    found = {(f.field, f.category.value): f for f in _audit(_collection(docs)).findings}
    assert found[("booking_ref", "duplicate_value")].affected_count == affected == 2080


def test_malformed_phones_that_coincide_are_one_format_defect_not_duplicates() -> None:
    """A tenth of the phones cut to six digits: several cut values coincide. That is the format
    defect, reported once, not a duplicate phone number besides."""
    docs = bookings()
    for i, d in enumerate(docs[:150]):
        d["phone"] = f"55501{i % 100:02d}"
    found = {(f.field, f.category.value): f.affected_count for f in _audit(_collection(docs)).findings}
    assert found == {("phone", "format_violation"): 150}


def test_malformed_emails_that_outgrow_the_good_ones_are_reported_as_mixed() -> None:
    docs, affected = damaged("malformed_email", 0.6)
    found = {(f.field, f.category.value): f for f in _audit(_collection(docs)).findings}
    finding = found[("guest_email", "format_violation")]
    assert finding.affected_count == affected and "mixed" in finding.description


def test_the_clean_control_is_silent() -> None:
    """Heavy tails, an optional field, future dates in a field of future events, rare cabins."""
    assert [(f.field, f.category.value) for f in _audit(_collection(bookings())).findings] == []


def test_phone_numbers_starting_with_plus_get_a_valid_pattern_and_a_finding() -> None:
    docs, affected = damaged("malformed_phone", 0.05)
    report = _audit(_collection(docs))
    errors = [e for e in report.trace if e.outcome == "error"]
    assert errors == []
    phone = next(f for f in report.findings if f.field == "phone")
    assert phone.affected_count == affected


def test_the_same_data_gives_the_same_findings_whatever_the_sample() -> None:
    docs, _ = damaged("duplicate_key", 0.004)  # 3 pairs: whether the sample holds one is chance
    for d in docs:  # a name that does not say "key": only the values' shape (BK-200004) does
        d["voucher"] = d.pop("booking_ref")
    coll = _collection(docs)
    runs = []
    for seed in range(4):
        report = _audit(coll, sample_seed=seed)  # a different sample each run
        runs.append(sorted((f.field, f.category.value, f.severity.value, f.affected_count) for f in report.findings))
    assert runs[0] == [("voucher", "duplicate_value", "medium", 6)]
    assert all(run == runs[0] for run in runs)


def test_an_audit_reads_the_collection_at_most_four_times() -> None:
    from tests.agent.planners.heuristic.datasets import NOW as SHOP_NOW
    from tests.agent.planners.heuristic.datasets import planted

    coll = memory_collection(planted(), "orders", database="shop")
    recording = RecordingCollection(coll)
    # the in-memory engine: on a server each finding's evidence is also counted on its own; a first
    # run's health baseline is one more read, once per collection (tests/agent/health/test_first_run.py)
    report = run_audit(AuditTarget(recording, in_memory=True), HeuristicPlanner(clock=ManualClock(SHOP_NOW)),
                       clock=ManualClock(SHOP_NOW), options=AuditOptions(health=HealthOptions(backfill=False)))
    assert len(report.findings) == 10
    passes = [name for name, _ in recording.calls if name in ("find", "count_documents", "aggregate")]
    assert len(passes) - 1 <= 4  # the first aggregate is the $sample


def test_an_outlier_finding_counts_both_impossible_and_detached_values() -> None:
    docs = bookings()
    for d in docs[:12]:
        d["fare"] = -d["fare"]
    for d in docs[12:20]:
        d["fare"] = 9_999_999.0
    report = _audit(_collection(docs))
    fare = next(f for f in report.findings if (f.field, f.category.value) == ("fare", "outlier_value"))
    assert fare.affected_count == 20
