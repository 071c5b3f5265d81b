"""A contract's rules checked in an audit: each broken rule a finding with its exact count, each kept
rule passed, in the heuristic sweep's passes, whatever the collection is called."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.planners.factory import make_planner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from argus.config.contracts import load_contract
from tests.conftest import memory_collection

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
CONTRACT = """\
fields:
  order_id: {required: true, unique: true, type: string}
  status: {in: [pending, paid, shipped, cancelled]}
  total: {type: number, min: 0}
  customer.email: {format: email}
  customer_id: {references: customers.customer_id}
  shipped_at: {required: {where: {status: shipped}}}
  coupon: {required: false}
documents: {min: 1000, max: 5000}
"""
# What the data below plants, and what each rule must count.
DUPLICATED_DOCUMENTS = 58      # 29 order ids, each used twice
MISSING_ORDER_ID = 7
NUMBERS_AS_STRINGS = 11        # order_id written as a number
BAD_STATUS = 13
NEGATIVE_TOTAL = 9
BAD_EMAIL = 17
ORPHANS = 6
UNSHIPPED = 5                  # shipped without shipped_at


def _orders(n: int = 2000) -> list[dict[str, Any]]:
    rng = random.Random(7)
    docs: list[dict[str, Any]] = []
    for i in range(n):
        status = ["pending", "paid", "shipped", "cancelled"][i % 4]
        doc: dict[str, Any] = {"order_id": f"X{rng.randrange(10**9):09d}-{i}", "status": status,
                               "total": round(rng.uniform(1, 900), 2), "customer": {"email": f"user{i}@mail.org"},
                               "customer_id": f"C{rng.randrange(400):04d}",
                               "created_at": NOW - timedelta(hours=rng.uniform(1, 900))}
        if status == "shipped":
            doc["shipped_at"] = doc["created_at"] + timedelta(hours=5)
        if i % 3 == 0:
            doc["coupon"] = "SPRING"
        docs.append(doc)
    plain = [d for i, d in enumerate(docs) if d["status"] in ("pending", "paid") and i >= 100]
    for k in range(29):                              # duplicates: the second of a pair takes the first's id
        plain[2 * k + 1]["order_id"] = plain[2 * k]["order_id"]
    rest = iter(plain[60:])
    for _ in range(MISSING_ORDER_ID):
        del next(rest)["order_id"]
    for _ in range(NUMBERS_AS_STRINGS):
        next(rest)["order_id"] = rng.randrange(10**6)
    for _ in range(BAD_STATUS):
        next(rest)["status"] = "Paid "
    for _ in range(NEGATIVE_TOTAL):
        next(rest)["total"] = -rng.uniform(1, 50)
    for _ in range(BAD_EMAIL):
        next(rest)["customer"]["email"] = "n/a"
    for k in range(ORPHANS):
        next(rest)["customer_id"] = f"Z{k:04d}"
    shipped = [d for d in docs if d["status"] == "shipped"]
    for d in shipped[:UNSHIPPED]:
        del d["shipped_at"]
    return docs


def _target(name: str, docs: list[dict[str, Any]]) -> AuditTarget:
    """``shop.<name>`` beside ``shop.customers`` (the collection a references rule looks in)."""
    customers = memory_collection([{"customer_id": f"C{i:04d}"} for i in range(400)], "customers", database="shop")
    target = AuditTarget(memory_collection(docs, name, database="shop"))
    target.set_siblings(lambda other: AuditTarget(customers) if other == "customers" else _no_such(other))
    return target


def _no_such(name: str) -> AuditTarget:
    raise KeyError(name)


def _audit(tmp_path: Path, name: str, contract: str = CONTRACT, docs: list[dict[str, Any]] | None = None,
           planner: str = "heuristic") -> AuditReport:
    path = tmp_path / "contract.yaml"
    path.write_text(contract)
    setup = make_planner(planner)
    return run_audit(_target(name, docs if docs is not None else _orders()), setup.planner, gates=setup.gates,
                     clock=ManualClock(NOW), contract=load_contract(path, shown_as="contract.yaml"))


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> AuditReport:
    return _audit(tmp_path_factory.mktemp("c"), "export_2025")


def _finding(report: AuditReport, field: str, category: str) -> Any:
    found = [f for f in report.findings if f.field == field and f.category.value == category]
    assert len(found) == 1, [(f.field, f.category.value) for f in report.findings]
    return found[0]


def _result(report: AuditReport, field: str, rule: str) -> Any:
    assert report.contract is not None
    return next(r for r in report.contract.rules if r.field == field and r.rule == rule)


@pytest.mark.parametrize(("field", "rule", "category", "count"), [
    ("order_id", "unique", "duplicate_value", DUPLICATED_DOCUMENTS),
    ("order_id", "type", "type_mismatch", NUMBERS_AS_STRINGS),
    ("status", "in", "enum_violation", BAD_STATUS),
    ("total", "min", "outlier_value", NEGATIVE_TOTAL),
    ("customer.email", "format", "format_violation", BAD_EMAIL),
    ("customer_id", "references", "orphan_reference", ORPHANS),
    ("shipped_at", "required", "null_rate", UNSHIPPED),
])
def test_each_broken_rule_is_a_finding_with_its_exact_count(report: AuditReport, field: str, rule: str,
                                                            category: str, count: int) -> None:
    finding = _finding(report, field, category)
    assert finding.affected_count == count
    assert finding.rule is not None and "contract.yaml:" in finding.rule and finding.rule.endswith(f"{field} {rule}")
    result = _result(report, field, rule)
    assert (result.result, result.count, result.finding_id) == ("failed", count, finding.id)


def test_the_evidence_query_reproduces_each_declared_count(report: AuditReport) -> None:
    from argus.agent.ejson import decode

    orders = memory_collection(_orders(), "export_2025", database="shop")
    for f in report.findings:  # as run (the report masks literal values in the default privacy mode)
        if f.rule is not None and f.field != "(collection)":
            evidence = report.replay_evidence.get(f.id, f.evidence_query)
            assert orders.count_documents(decode(evidence)) == f.affected_count, f.field


def test_kept_rules_are_reported_passed(report: AuditReport) -> None:
    assert report.contract is not None
    assert _result(report, "total", "type").result == "passed"
    assert _result(report, "(collection)", "documents").result == "passed"
    # A missing order_id among documents that have one: the required rule counts it, besides the type rule.
    assert (_result(report, "order_id", "required").result, _result(report, "order_id", "required").count) == \
        ("failed", MISSING_ORDER_ID)
    assert report.contract.summary() == "10 rules, 2 passed, 8 failed"
    assert report.contract.declared == ["coupon: not required (contract.yaml:8)"]


def test_the_audit_still_makes_at_most_four_passes_and_counts_its_lookups(report: AuditReport) -> None:
    assert report.outcome == "succeeded"
    assert report.database_cost.passes <= 4
    assert report.database_cost.lookups == 1  # 400 distinct customer ids: one batch of $in
    assert not report.dismissed_findings


def test_a_declared_optional_field_gets_no_inferred_null_rate_finding(report: AuditReport) -> None:
    assert not [f for f in report.findings if f.field == "coupon"]


def test_a_collection_count_outside_the_declared_range_is_a_volume_finding(tmp_path: Path) -> None:
    report = _audit(tmp_path, "sales", contract="documents: {min: 5000}\n")
    finding = _finding(report, "(collection)", "volume_anomaly")
    assert finding.affected_count == 2000 and finding.rule == "contract.yaml:1 (collection) documents"
    assert _result(report, "(collection)", "documents").detail == "2,000 documents, fewer than the minimum of 5,000"


def test_strict_privacy_writes_no_declared_value_into_the_report(tmp_path: Path) -> None:
    path = tmp_path / "contract.yaml"
    path.write_text(CONTRACT)
    setup = make_planner("heuristic")
    from argus.agent.options import AuditOptions

    report = run_audit(_target("sales", _orders()), setup.planner, gates=setup.gates,
                       clock=ManualClock(NOW), contract=load_contract(path, shown_as="contract.yaml"),
                       options=AuditOptions(privacy="strict"))
    written = report.model_dump_json()
    for value in ("pending", "cancelled", "Paid ", "Z0001", "shipped"):
        assert f'"{value}"' not in written and f"{value}, " not in written and f"{value}]" not in written, value
    assert _result(report, "status", "in").expect == "in a list of 4 values"
    assert _finding(report, "status", "enum_violation").affected_count == BAD_STATUS


def test_strict_privacy_writes_no_declared_pattern_into_the_report(tmp_path: Path) -> None:
    """A declared pattern is the user's data as a value list is: its literal text ('X0') stays out of the
    description, the rule's expectation and the evidence query; its count does not change."""
    from argus.agent.options import AuditOptions

    docs = _orders()
    path = tmp_path / "contract.yaml"
    path.write_text("fields:\n  order_id: {pattern: '^XSECRETPREFIX[0-9]+'}\n")
    setup = make_planner("heuristic")
    report = run_audit(_target("sales", docs), setup.planner, gates=setup.gates,
                       clock=ManualClock(NOW), contract=load_contract(path, shown_as="contract.yaml"),
                       options=AuditOptions(privacy="strict"))
    assert "SECRETPREFIX" not in report.model_dump_json()
    strings = sum(1 for d in docs if isinstance(d.get("order_id"), str))
    assert _finding(report, "order_id", "format_violation").affected_count == strings
