"""The field profile on the real engine: DocumentDB groups every numeric type, NaN, infinities, nulls,
missing values and arrays as the in-process engine does, every count the profile decides there equals
the server's own ``count_documents``, and so do the counts of a wide batch (150 fields, 3,000 documents,
900 checks) answered from a profile and one more pass."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from bson.decimal128 import Decimal128
from pymongo.errors import OperationFailure

from argus.agent.ejson import encode
from argus.agent.engine import MemoryCollection
from argus.agent.tools.count_many import count_many
from argus.agent.tools.field_profile import profile_paths, profile_pipeline, read_profile
from argus.agent.tools.models import CountManyInput
from argus.agent.tools.target import AuditTarget
from argus.daemon.sources import open_uri
from tests.agent.tools.profile_cases import documents, filters, near_numbers, refused_filters
from tests.agent.tools.test_field_profile import _planner_like, _wide

pytestmark = pytest.mark.live


def _value(value: Any) -> Any:
    """A least or greatest value as compared: equal values are one (0.0 and -0.0: which the server returns
    is its own), NaN is NaN."""
    if isinstance(value, Decimal128):
        value = value.to_decimal()
    return "NaN" if value != value else value


def _groups(profile: Any) -> dict[str, list[tuple[Any, ...]]]:
    return {path: sorted(((g.type, g.n, _value(g.lo), _value(g.hi)) for g in groups), key=repr)
            for path, groups in profile.groups.items()}


@pytest.mark.parametrize("seed", [1, 4])
def test_the_profile_and_its_counts_are_the_servers(live_db: Any, live_uri: str, seed: int) -> None:
    docs = documents(seed)
    name = f"mixed{seed}"
    live_db[name].insert_many(docs)
    target = open_uri(live_uri, database=live_db.name, collection=name, max_time_ms=30_000, connect_timeout_ms=5000)
    queries = filters()
    paths = profile_paths(queries)

    live = read_profile(paths, target.aggregate(profile_pipeline(paths)))
    engine = AuditTarget(MemoryCollection.of(docs, name=name, database="db"))
    local = read_profile(paths, engine.aggregate(profile_pipeline(paths)))

    assert live is not None and local is not None
    assert _groups(live) == _groups(local)
    decided = [(q, n) for q in queries if (n := live.count(q)) is not None]
    assert len(decided) >= len(queries) // 2
    assert [(q, n) for q, n in decided if n != target.count_documents(q)] == []


def test_a_wide_batch_takes_a_profile_and_one_pass_with_the_servers_counts(live_db: Any, live_uri: str) -> None:
    live_db["wide"].insert_many(_wide(3000, 150))
    target = open_uri(live_uri, database=live_db.name, collection="wide", max_time_ms=10_000, connect_timeout_ms=5000)
    queries = _planner_like(150)

    result = count_many(target, CountManyInput(queries=[{"filter": encode(q)} for q in queries]))

    assert all(c.error is None for c in result.counts)
    assert target.cost().passes == 2
    for query, counted in list(zip(queries, result.counts, strict=True))[::7]:
        assert counted.matched_count == target.count_documents(query), query


def test_the_filters_a_profile_leaves_undecided_as_refused_are_refused_by_the_server(live_db: Any) -> None:
    live_db["refused"].insert_many([{"_id": i, "a": i} for i in range(5)])
    answered = []
    for query in refused_filters():
        with contextlib.suppress(OperationFailure):
            answered.append((query, live_db["refused"].count_documents(query)))
    assert answered == []


def test_a_count_decided_over_numbers_one_double_apart_is_the_servers(live_db: Any) -> None:
    """DocumentDB compares a decimal and a double, or a long and a double at 2**63, otherwise than MongoDB
    (see ``near_numbers``): a profile decides none of those, so each count it decides is the server's."""
    docs, queries = near_numbers()
    wrong = []
    for doc in docs:
        name = f"near{doc['_id']}"
        live_db[name].insert_one(doc)
        profile = read_profile(["a"], list(live_db[name].aggregate(profile_pipeline(["a"]))))
        assert profile is not None
        wrong += [(doc, q, n) for q in queries if (n := profile.count(q)) is not None
                  and n != live_db[name].count_documents(q)]
    assert wrong == []
