"""The smallest breakage each contract rule kind must catch (issue 36: changing the `unique` check so
that one shared value passes left every contract test green). A clean collection with one document
breaking one rule (one value shared by two documents, for `unique`): the rule fails with that count,
and the same collection without the breakage passes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.agent.contracts.test_declared_audit import NOW, _audit

Doc = dict[str, Any]


def _clean(n: int = 300) -> list[Doc]:
    return [{"order_id": f"ORD-{i:05d}", "status": ["pending", "paid", "shipped"][i % 3], "total": 10 + i % 90,
             "email": f"user{i}@mail.org", "customer_id": f"C{i % 400:04d}", "note": "ok" if i % 2 else "fine",
             "created_at": NOW - timedelta(hours=1 + i)} for i in range(n)]


def _set(field: str, value: Any) -> Callable[[list[Doc]], None]:
    def apply(docs: list[Doc]) -> None:
        docs[150][field] = value
    return apply


def _drop(field: str) -> Callable[[list[Doc]], None]:
    def apply(docs: list[Doc]) -> None:
        del docs[150][field]
    return apply


def _share_one(docs: list[Doc]) -> None:
    docs[151]["order_id"] = docs[150]["order_id"]


def _two_nulls(docs: list[Doc]) -> None:  # 2 of 300 is 0.67%, past a 0.5% limit; 1 would be within it
    docs[150]["email"] = None
    docs[151]["email"] = None


def _one_more(docs: list[Doc]) -> None:
    docs.append(dict(docs[0], order_id="ORD-99999"))


def _all_old(docs: list[Doc]) -> None:
    for d in docs:
        d["created_at"] -= timedelta(days=30)


# (kind, field line of the contract, field the result is on, how to break it, failing count)
CASES: list[tuple[str, str, str, Callable[[list[Doc]], None], int]] = [
    ("required", "fields:\n  order_id: {required: true}\n", "order_id", _drop("order_id"), 1),
    ("unique", "fields:\n  order_id: {unique: true}\n", "order_id", _share_one, 2),
    ("type", "fields:\n  total: {type: number}\n", "total", _set("total", "12"), 1),
    ("in", "fields:\n  status: {in: [pending, paid, shipped]}\n", "status", _set("status", "Paid"), 1),
    ("min", "fields:\n  total: {min: 0}\n", "total", _set("total", -1), 1),
    ("max", "fields:\n  total: {max: 1000}\n", "total", _set("total", 1001), 1),
    ("format", "fields:\n  email: {format: email}\n", "email", _set("email", "n/a"), 1),
    ("pattern", "fields:\n  order_id: {pattern: '^ORD-[0-9]+$'}\n", "order_id", _set("order_id", "ORD-12a"), 1),
    ("max_length", "fields:\n  note: {max_length: 4}\n", "note", _set("note", "fines"), 1),
    ("max_null_share", "fields:\n  email: {max_null_share: 0.005}\n", "email", _two_nulls, 2),
    ("references", "fields:\n  customer_id: {references: customers.customer_id}\n", "customer_id",
     _set("customer_id", "Z0001"), 1),
    ("documents", "documents: {max: 300}\n", "(collection)", _one_more, 301),
    ("freshness", "freshness: {field: created_at, max_age: 24h}\n", "(collection)", _all_old, None),
]


def _rule(report: Any, kind: str) -> Any:
    assert report.contract is not None
    [result] = [r for r in report.contract.rules if r.rule == kind]
    return result


@pytest.mark.parametrize(("kind", "contract", "field", "breaks", "count"), CASES, ids=[c[0] for c in CASES])
def test_one_breakage_fails_the_rule_and_none_passes_it(tmp_path: Path, kind: str, contract: str, field: str,
                                                        breaks: Callable[[list[Doc]], None], count: int | None) -> None:
    clean = _audit(tmp_path, "orders", contract, _clean())
    assert (_rule(clean, kind).result, _rule(clean, kind).count) == ("passed", 0), _rule(clean, kind)
    docs = _clean()
    breaks(docs)
    broken = _rule(_audit(tmp_path, "orders", contract, docs), kind)
    assert broken.result == "failed" and broken.field == field, broken
    if count is not None:
        assert broken.count == count, broken
