"""Min/max statistics of a live server in one ``$group`` pass (``group_stats``), not a ``$facet``
branch each, with the same values as each statistic's own branch: numbers only under a number
fence (a string sorts above every number; NaN matches no comparison), dates only under a date
fence, and a field holding arrays asked in its branch (where ``$unwind`` flattens it)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from bson.decimal128 import Decimal128

from argus.agent.ejson import encode
from argus.agent.engine import MemoryCollection
from argus.agent.tools.count_many import count_many
from argus.agent.tools.models import CountManyInput, GetStatsInput
from argus.agent.tools.target import AuditTarget

_T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _products(n: int = 400) -> list[dict[str, Any]]:
    rng = random.Random(7)
    docs = []
    for i in range(n):
        doc: dict[str, Any] = {"_id": i, "spec": {}}
        for k in range(8):
            if rng.random() < 0.1:
                continue  # missing
            doc["spec"][f"a{k}"] = rng.choice([rng.randint(1, 1000), rng.random() * 10, rng.randint(-5, 0)])
        doc["price"] = rng.choice([rng.uniform(1, 500), "12.50 EUR", None, float("nan"), Decimal128("7.25")]) \
            if i % 9 == 0 else rng.uniform(1, 500)
        doc["sold"] = _T0 + timedelta(days=rng.randint(0, 700)) if i % 11 else "2024-13-01"
        if i % 17 == 0:
            doc["sizes"] = [rng.randint(1, 60), "XL", [rng.randint(1, 9)]]
        elif i % 3:
            doc["sizes"] = rng.randint(1, 60)
        docs.append(doc)
    docs[5]["price"] = 99999.0  # an outlier beyond every fence
    return docs


def _stats() -> list[GetStatsInput]:
    stats = []
    fields = [f"spec.a{k}" for k in range(8)] + ["price", "sizes"]
    for path in fields:
        for bound in (0, 50.5, 400, 1000):
            stats += [GetStatsInput(field=path, operation="min", value_filter={"$gt": bound}),
                      GetStatsInput(field=path, operation="max", value_filter={"$lte": bound}),
                      GetStatsInput(field=path, operation="min", value_filter={"$gt": 0, "$lt": bound})]
        stats += [GetStatsInput(field=path, operation="max"), GetStatsInput(field=path, operation="min")]
    day = encode(_T0 + timedelta(days=300))
    stats += [GetStatsInput(field="sold", operation="max", value_filter={"$lte": day}),
              GetStatsInput(field="sold", operation="min", value_filter={"$gt": day}),
              GetStatsInput(field="sold", operation="max"),
              GetStatsInput(field="price", operation="max", filter={"sold": {"$type": "string"}})]  # a branch
    return stats


class _Counting:
    """A server (the in-process engine behind pymongo's calling convention) that records each pipeline."""

    def __init__(self, docs: list[dict[str, Any]]) -> None:
        self._inner = MemoryCollection.of(docs, name="products", database="db")
        self.name, self.database = "products", self._inner.database
        self.pipelines: list[list[dict[str, Any]]] = []

    def aggregate(self, pipeline: list[dict[str, Any]], **kwargs: Any) -> Any:
        self.pipelines.append(pipeline)
        return self._inner.aggregate(pipeline, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_grouped_statistics_equal_their_own_branches_in_one_pass() -> None:
    docs, stats = _products(), _stats()
    facet = count_many(AuditTarget(MemoryCollection.of(docs, name="products", database="db")),
                       CountManyInput(stats=stats))
    server = _Counting(docs)
    target = AuditTarget(server, in_memory=False)

    grouped = count_many(target, CountManyInput(stats=stats))

    assert [(s.field, s.operation, s.value, s.error) for s in grouped.stats] == \
        [(s.field, s.operation, s.value, s.error) for s in facet.stats]
    assert any(s.value == 99999.0 for s in grouped.stats)  # the outlier is seen
    # One $group for every fence, riding as one branch ("grp") of the $facet that asks the unbounded and the
    # filtered ones; the fences of the field the group found holding arrays are asked as branches after it.
    assert len(server.pipelines) == 2 and target.cost().passes == 2
    first, then = (next(s["$facet"] for s in p if "$facet" in s) for p in server.pipelines)
    assert "$group" in first["grp"][-1]
    assert len(first) - 1 == sum(1 for s in stats if not s.value_filter or s.filter)
    assert len(then) == sum(1 for s in stats if s.field == "sizes" and s.value_filter and not s.filter)


def test_a_batch_that_fits_one_pass_is_not_split_into_a_group_and_a_facet() -> None:
    """A few fences beside a few other statistics fit one $facet: a $group beside it would add a pass
    (sensors, customers and events took a pass more on DocumentDB when every batch grouped its fences)."""
    docs = _products()
    stats = [s for s in _stats() if s.field in ("price", "spec.a0")][:20]
    server = _Counting(docs)
    target = AuditTarget(server, in_memory=False)

    count_many(target, CountManyInput(stats=stats))

    assert target.cost().passes == 1 and not any("$group" in stage for p in server.pipelines for stage in p
                                                 if "$facet" not in stage)


def test_counts_and_statistics_keep_their_places_when_the_group_leaves_some_over_in_small_passes() -> None:
    """The fences of a field holding arrays come back from the group and went to the batch before its counts;
    a pass answers counts first, so a count and a statistic swapped slots and statistics came back in
    another order (on DocumentDB, 82 of 1,800 fences of a random batch carried another fence's value)."""
    docs, stats = _products(), _stats()
    queries = [{"filter": {"price": {"$gt": bound}}} for bound in (0, 100, 400)] + [{"filter": {"sizes": None}}]
    asked = CountManyInput(queries=queries, stats=stats)
    facet = count_many(AuditTarget(MemoryCollection.of(docs, name="products", database="db")), asked)
    target = AuditTarget(_Counting(docs), in_memory=False)
    target.sizing.checks.update(counts=4, stats=4)  # a server where a pass carries four checks

    result = count_many(target, asked)

    assert [(c.filter, c.matched_count) for c in result.counts] == [(c.filter, c.matched_count) for c in facet.counts]
    assert [(s.field, s.operation, s.value, s.error) for s in result.stats] == \
        [(s.field, s.operation, s.value, s.error) for s in facet.stats]
