"""Declared facts steer the name-free inference of issue 20 (keys found from the values, nulls
checked by type, units written another way): what a contract declares is not inferred a second
time, and every field it does not declare is still inferred.

Each audit runs on a collection whose name hints at nothing (``sales``); ``dismissed_findings``
stays empty, so the inference itself left the declared slots alone (the finding gate, which would
refuse an inferred finding there, had nothing to refuse)."""

from __future__ import annotations

import math
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

NOW = datetime(2026, 3, 1, tzinfo=UTC)
SIZE = 2000
DUPLICATED = 20          # order ids written twice: 40 documents
NULL_FLAGS = 120         # paid is null in 6% of the documents
PERCENT_RATES = 20       # tax_rate written as a percent in 1% of the documents
TYPO_REGIONS = 7         # "nort" beside north
Doc = dict[str, Any]


def _sales() -> list[Doc]:
    """Orders with planted defects the name-free inference finds from the values alone."""
    rng = random.Random(1)
    docs: list[Doc] = [{
        "order_id": f"SO-{400_000 + i}",
        "amount": round(math.exp(rng.gauss(math.log(60), 0.9)), 2),
        "sold_at": NOW - timedelta(days=rng.uniform(1, 700)),
        "region": rng.choices(["north", "south", "east", "west"], weights=[4, 3, 2, 1])[0],
        "paid": rng.random() < 0.8,
        "tax_rate": round(min(0.6, math.exp(rng.gauss(math.log(0.08), 0.8))), 4),
    } for i in range(SIZE)]
    picks = iter(random.Random(2).sample(range(1, SIZE, 2), DUPLICATED + NULL_FLAGS + PERCENT_RATES + TYPO_REGIONS))
    for _ in range(DUPLICATED):  # odd positions: the even one before, the original, is never a copy
        i = next(picks)
        docs[i]["order_id"] = docs[i - 1]["order_id"]
    for _ in range(NULL_FLAGS):
        docs[next(picks)]["paid"] = None
    for _ in range(PERCENT_RATES):
        i = next(picks)
        docs[i]["tax_rate"] = round(docs[i]["tax_rate"] * 100, 2)
    for _ in range(TYPO_REGIONS):
        docs[next(picks)]["region"] = "nort"
    return docs


INFERRED = {("order_id", "duplicate_value"): 2 * DUPLICATED, ("paid", "null_rate"): NULL_FLAGS,
            ("tax_rate", "outlier_value"): PERCENT_RATES, ("region", "enum_violation"): TYPO_REGIONS}


def _audit(tmp_path: Path, contract: str | None) -> AuditReport:
    coll = memory_collection(_sales(), "sales", database="shop")
    loaded = None
    if contract is not None:
        path = tmp_path / "sales.yaml"
        path.write_text(contract)
        loaded = load_contract(path, shown_as="sales.yaml")
    return _run(coll, loaded)


def _run(coll: Any, contract: Any) -> AuditReport:
    setup = make_planner("heuristic", clock=ManualClock(NOW))
    return run_audit(AuditTarget(coll, in_memory=True), setup.planner, gates=setup.gates, clock=ManualClock(NOW),
                     contract=contract)


def _found(report: AuditReport) -> dict[tuple[str, str], tuple[int, bool]]:
    """(field, category) -> (count, declared)."""
    refused = [(d.finding.field, d.finding.category.value) for d in report.dismissed_findings]
    assert not refused, refused
    return {(f.field, f.category.value): (f.affected_count, f.rule is not None) for f in report.findings}


def _duplicates_asked(report: AuditReport, field: str) -> int:
    """How many duplicates statistics on ``field`` the audit sent."""
    return sum(1 for t in report.trace if t.action == "count_many" for s in t.action_input.get("stats") or []
               if s.get("field") == field and s.get("operation") == "duplicates")


def test_without_a_contract_the_values_alone_find_every_planted_defect(tmp_path: Path) -> None:
    """The control: what each test below declares is otherwise inferred, with these counts."""
    report = _audit(tmp_path, None)
    assert _found(report) == {k: (n, False) for k, n in INFERRED.items()}
    assert _duplicates_asked(report, "order_id") == 1


def test_a_declared_key_is_checked_once_and_reported_as_declared(tmp_path: Path) -> None:
    report = _audit(tmp_path, "fields:\n  order_id: {unique: true}\n")
    assert _found(report) == {**{k: (n, False) for k, n in INFERRED.items()},
                              ("order_id", "duplicate_value"): (2 * DUPLICATED, True)}
    assert _duplicates_asked(report, "order_id") == 1


@pytest.mark.parametrize("declaration", ["required: false", "max_null_share: 0.1"])
def test_a_declared_optional_field_gets_no_null_rate_finding_from_the_type_based_check(
        tmp_path: Path, declaration: str) -> None:
    """Every field the bulk carries is null-checked whatever its name (issue 20): a field the
    contract says may be empty is not, and a share under its declared bound passes."""
    report = _audit(tmp_path, f"fields:\n  paid: {{{declaration}}}\n")
    expected = {k: (n, False) for k, n in INFERRED.items() if k[0] != "paid"}
    assert _found(report) == expected
    assert report.contract is not None
    if declaration == "required: false":  # nothing to count: the inferred null count is not asked either
        assert not any(q.get("filter") == {"paid": None} for t in report.trace if t.action == "count_many"
                       for q in t.action_input.get("queries") or [])
    else:
        assert [(r.field, r.rule, r.result) for r in report.contract.rules] == [("paid", "max_null_share", "passed")]


def test_a_tighter_declared_null_share_decides_the_count(tmp_path: Path) -> None:
    report = _audit(tmp_path, "fields:\n  paid: {max_null_share: 0.01}\n")
    assert _found(report)[("paid", "null_rate")] == (NULL_FLAGS, True)


def test_a_declared_value_set_replaces_the_learned_one(tmp_path: Path) -> None:
    """``nort`` is a code the business added: declared, it is no typo; ``west`` is retired: every
    document holding it breaks the declared set, which no learned set would have said."""
    west = sum(1 for d in _sales() if d["region"] == "west")
    report = _audit(tmp_path, "fields:\n  region: {in: [north, nort, south, east]}\n")
    assert _found(report) == {**{k: (n, False) for k, n in INFERRED.items() if k[0] != "region"},
                              ("region", "enum_violation"): (west, True)}


def test_a_declared_range_decides_a_unit_written_another_way(tmp_path: Path) -> None:
    """The inferred scale check finds the percents; a declared ``max: 1`` counts the same documents
    as the declared finding, and the inferred one is not made as well."""
    report = _audit(tmp_path, "fields:\n  tax_rate: {min: 0, max: 1}\n")
    assert _found(report) == {**{k: (n, False) for k, n in INFERRED.items()},
                              ("tax_rate", "outlier_value"): (PERCENT_RATES, True)}


def test_a_declared_range_on_a_few_valued_field_decides_its_rare_values(tmp_path: Path) -> None:
    """A tier of 1 to 5 with 33 in three documents: the inferred set would find the 33s; with a
    declared range the declared rule counts them, and the audit neither infers them a second time
    nor fails (the set's statistic was still asked for a field whose inferred range was dropped)."""
    docs = _sales()
    rng = random.Random(3)
    for d in docs:
        d["tier"] = rng.choices([1, 2, 3, 4, 5], weights=[40, 25, 15, 12, 8])[0]
    for d in docs[5:8]:
        d["tier"] = 33
    path = tmp_path / "sales.yaml"
    path.write_text("fields:\n  tier: {min: 1, max: 5}\n")
    report = _run(memory_collection(docs, "sales", database="shop"), load_contract(path, shown_as="sales.yaml"))
    assert report.outcome == "succeeded"
    assert _found(report) == {**{k: (n, False) for k, n in INFERRED.items()}, ("tier", "outlier_value"): (3, True)}


def test_a_declared_type_list_silences_the_inferred_type_check(tmp_path: Path) -> None:
    docs = _sales()
    for d in docs[::50]:
        d["amount"] = str(d["amount"])  # 40 amounts written as text
    coll = memory_collection(docs, "sales", database="shop")
    path = tmp_path / "sales.yaml"
    path.write_text("fields:\n  amount: {type: [double, string]}\n")
    report = _run(coll, load_contract(path, shown_as="sales.yaml"))
    found = _found(report)
    assert ("amount", "type_mismatch") not in found
    assert found == {k: (n, False) for k, n in INFERRED.items()}
    assert report.contract is not None and [r.result for r in report.contract.rules] == ["passed"]


def test_a_field_declared_no_key_is_not_checked_for_duplicates_though_its_values_look_like_one(
        tmp_path: Path) -> None:
    """``unique: false`` says the values may repeat (a re-sent order keeps its number): the key the
    values suggest is not inferred."""
    report = _audit(tmp_path, "fields:\n  order_id: {unique: false}\n")
    assert _found(report) == {k: (n, False) for k, n in INFERRED.items() if k[0] != "order_id"}
    assert _duplicates_asked(report, "order_id") == 0
    assert report.contract is not None and report.contract.declared == ["order_id: not unique (sales.yaml:2)"]
