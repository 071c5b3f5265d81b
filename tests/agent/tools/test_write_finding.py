"""write_finding is idempotent on (field, category)."""

from __future__ import annotations

from argus.agent.findings import Category, Severity, WriteFindingInput
from argus.agent.tools.write_finding import FindingsCollector, write_finding


def _params(**over) -> WriteFindingInput:  # type: ignore[no-untyped-def]
    base = dict(field="age", category=Category.OUTLIER_VALUE, severity=Severity.HIGH, description="d",
                evidence_query={"age": {"$gt": 130}}, affected_count=5, affected_pct=0.01)
    return WriteFindingInput(**(base | over))


def test_same_field_and_category_updates_in_place_and_keeps_the_id() -> None:
    collector = FindingsCollector()
    first = write_finding(collector, _params())
    second = write_finding(collector, _params(affected_count=7, description="updated"))
    assert first == second and len(collector) == 1
    finding = collector.get("age", Category.OUTLIER_VALUE)
    assert finding is not None and (finding.affected_count, finding.description) == (7, "updated")


def test_another_category_on_the_same_field_is_a_new_finding() -> None:
    collector = FindingsCollector()
    a = write_finding(collector, _params())
    b = write_finding(collector, _params(category=Category.NULL_RATE))
    assert a != b and len(collector) == 2
