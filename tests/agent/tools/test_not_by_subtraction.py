"""A check written with ``$not`` is answered on a server that refuses ``$not`` (some MongoDB-compatible
servers do): ``count(Q AND NOT P) = count(Q) - count(Q AND P)``, which holds under MongoDB's array
and missing-field semantics because ``$not`` matches exactly the documents its condition does not
match (the manual, ``$not``: "documents that do not match the operator expression. This includes
documents that do not contain the field"). Over the wire (pymongo, mockupdb answering from the
in-process engine), the counts equal the engine's own ``$not`` counts, in a batch and in a window."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest

from argus.agent.ejson import encode
from argus.agent.errors import QueryRejected
from argus.agent.tools.compat import NOT_BY_SUBTRACTION
from argus.agent.tools.count_many import count_many
from argus.agent.tools.models import CountManyInput
from argus.agent.tools.target import AuditTarget
from tests.agent.tools.engine_server import EngineServer, refuse, uses
from tests.conftest import memory_collection

NOT_IMPLEMENTED = "Operator '$not' is not currently implemented"
DOCS: list[dict[str, Any]] = [
    {"_id": i, "t": datetime(2026, 1, 1 + i % 20), "b": i % 3, "a": value}
    for i, value in enumerate([1, "x1", "s", None, [1, "x"], [[2]], [], 5.5, "xy", {"k": 1}, True, [3, 4]] * 5)
] + [{"_id": 100 + i, "t": datetime(2026, 1, 1 + i), "b": 1} for i in range(6)]  # no field a at all
FILTERS: list[dict[str, Any]] = [
    {"a": {"$not": {"$type": "number"}}},
    {"a": {"$exists": True, "$ne": None, "$not": {"$type": "string"}}},
    {"a": {"$type": "string", "$not": {"$regex": "^x"}}},
    {"b": 1, "a": {"$not": {"$gt": 2}}},
    {"a": {"$not": {"$size": 0}}},
]
WINDOW = {"t": {"$gte": datetime(2026, 1, 9)}}


@pytest.fixture
def server() -> Iterator[EngineServer]:
    started = EngineServer(DOCS, collection="things", refusals=[refuse("$not", NOT_IMPLEMENTED)])
    started.start()
    yield started
    started.close()


def _target(server: EngineServer) -> AuditTarget:
    return server.target()


def _engine(query: dict[str, Any]) -> int:
    return memory_collection(DOCS, "things").count_documents(query)


def test_the_server_really_refuses_not(server: EngineServer) -> None:
    with pytest.raises(QueryRejected, match=r"\$not"):
        _target(server).aggregate([{"$match": FILTERS[0]}])


def test_each_count_with_not_equals_the_engines_and_not_is_sent_once(server: EngineServer) -> None:
    target = _target(server)
    counts = [target.count_documents(f) for f in FILTERS]

    assert counts == [_engine(f) for f in FILTERS]
    assert all(counts)
    assert NOT_BY_SUBTRACTION in target.notes
    assert sum(1 for doc in server.commands("aggregate") if uses(doc, "$not")) == 1  # refused once, then learned


def test_a_batch_of_checks_with_not_is_counted_by_subtraction(server: EngineServer) -> None:
    target = _target(server)
    result = count_many(target, CountManyInput(queries=[{"filter": encode(f)} for f in FILTERS] +
                                               [{"filter": {"b": 2}}]))

    assert [c.error for c in result.counts] == [None] * (len(FILTERS) + 1)
    assert [c.matched_count for c in result.counts] == [_engine(f) for f in [*FILTERS, {"b": 2}]]
    assert NOT_BY_SUBTRACTION in target.notes
    later = count_many(target, CountManyInput(queries=[{"filter": encode(FILTERS[0])}]))
    assert later.counts[0].matched_count == _engine(FILTERS[0])
    # the batch, then its first check alone (refused both times); never again once learned
    assert sum(1 for doc in server.commands("aggregate") if uses(doc, "$not")) == 2


def test_in_a_window_not_is_counted_among_the_windows_documents(server: EngineServer) -> None:
    target = _target(server)
    target.scope_to(WINDOW, indexed=False)
    alone = [target.count_documents(f) for f in FILTERS]
    batched = count_many(target, CountManyInput(queries=[{"filter": encode(f)} for f in FILTERS]))

    expected = [_engine({"$and": [WINDOW, f]}) for f in FILTERS]
    assert alone == [c.matched_count for c in batched.counts] == expected
    assert expected != [_engine(f) for f in FILTERS]  # the window changes the answer
