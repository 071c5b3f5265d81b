"""A batched pass sized to the server: a ``$facet`` too large for the time limit goes in chunks
that fit (each chunk one pass), never check by check, and the size learned starts the next run.

The server is the in-process engine behind a scripted limit: a ``$facet`` of more than ``limit``
branches ends in error 50 (``ExceededTimeLimit``), as DocumentDB's does past ``maxTimeMS``."""

from __future__ import annotations

import time
from typing import Any

import pytest
from pymongo.errors import ExecutionTimeout

from argus.agent.clock import ManualClock
from argus.agent.ejson import encode
from argus.agent.engine import MemoryCollection
from argus.agent.health.models import HealthOptions
from argus.agent.history import HistoricalContext
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.tools.batch_size import FIRST_CHUNK, BatchSizing
from argus.agent.tools.count_many import count_many
from argus.agent.tools.models import CountManyInput
from argus.agent.tools.target import AuditTarget

_DOCS = [{"_id": i, "n": i, "s": str(i) if i % 7 else i, "tags": ["x", i] if i % 5 else None}
         for i in range(120)]


class _LimitedServer:
    """A collection whose server spends ``cost_ms`` on each branch of a ``$facet`` and on each path of a
    field profile (``field_profile``: a row per path), and ends with error 50 any that would run past its
    ``maxTimeMS``."""

    def __init__(self, docs: list[dict[str, Any]], cost_ms: float = 10.0) -> None:
        self._inner = MemoryCollection.of(docs, name="things", database="db")
        self.cost_ms = cost_ms
        self.name, self.database = "things", self._inner.database
        self.facets: list[int] = []  # branches of each $facet asked, in order

    def aggregate(self, pipeline: list[dict[str, Any]], maxTimeMS: int | None = None, **kwargs: Any) -> Any:
        facet = next((stage["$facet"] for stage in pipeline if "$facet" in stage), None)
        rows = next((stage["$project"]["r"] for stage in pipeline if isinstance(stage.get("$project", {}).get("r"),
                                                                                 list)), None)
        if facet is not None or rows is not None:
            if facet is not None:
                self.facets.append(len(facet))
            cost_ms = self.cost_ms * len(facet if facet is not None else rows)
            if maxTimeMS is not None and cost_ms > maxTimeMS:
                time.sleep(maxTimeMS / 1000)
                raise ExecutionTimeout("operation exceeded time limit", 50, {"code": 50})
            time.sleep(cost_ms / 1000)
        return self._inner.aggregate(pipeline, maxTimeMS=maxTimeMS, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


LIMIT_MS = 400  # 40 branches at 10 ms each


def _queries(n: int) -> CountManyInput:
    # Two fields each: a field profile (``field_profile``) answers no such count, so every check is batched.
    filters = [{"n": {"$gte": i}, "s": {"$exists": True}} for i in range(n)]
    return CountManyInput(queries=[{"filter": encode(f)} for f in filters])


def _target(server: _LimitedServer) -> AuditTarget:
    return AuditTarget(server, in_memory=False, max_time_ms=LIMIT_MS)


def test_a_facet_too_slow_for_the_limit_is_split_into_chunks_not_checks() -> None:
    server = _LimitedServer(_DOCS)
    target = _target(server)

    result = count_many(target, _queries(300))

    assert [c.matched_count for c in result.counts] == [max(0, 120 - i) for i in range(300)]
    assert all(c.error is None for c in result.counts)
    assert server.facets[:3] == [FIRST_CHUNK, FIRST_CHUNK // 2, FIRST_CHUNK // 2]  # timed out, then halved
    assert max(server.facets[1:]) <= 40 and len(server.facets) <= 3 + 300 // 10  # chunks, not 300 checks alone
    cost = target.cost()
    assert cost.passes == len(server.facets)  # each chunk is a pass, the one that timed out too
    errors = [o.error for o in cost.operations if o.error]  # the first chunk; under load a halved one may
    assert errors and set(errors) == {"QueryTimeout"}          # time out too, and is halved again (CI, once)
    assert cost.batch_checks["counts"] <= 20  # half of the limit
    assert "a batched pass reached its time limit: later passes of counts carry at most 32 checks each" \
        in target.notes


_WIDE = [{"_id": i, **{f"f{k}": (str(i) if (i + k) % 31 == 0 else i * k) for k in range(12)},
          "code": f"C-{i:04d}" if i % 40 else "??"} for i in range(300)]


@pytest.mark.slow  # two audits against a server that spends 10 ms a branch
def test_the_size_learned_starts_the_next_run_of_the_collection() -> None:
    first = _LimitedServer(_WIDE)
    clock = ManualClock()
    options = AuditOptions(health=HealthOptions(enabled=False), time_budget_s=120)
    report = run_audit(_target(first), HeuristicPlanner(clock=clock), clock=clock, options=options)
    learned = report.database_cost.batch_checks
    assert learned and max(learned.values()) <= 20 and report.outcome == "succeeded"
    # Most checks were answered by a field profile, whose time sized the batch of the rest: none met the limit.
    assert not [o for o in report.database_cost.operations if o.error] and max(first.facets) <= 40
    again = _LimitedServer(_WIDE)
    rerun = run_audit(_target(again), HeuristicPlanner(clock=clock), clock=clock, options=options,
                      historical_context=HistoricalContext(batch_checks=learned))

    assert again.facets[0] <= learned["counts"]  # the first pass started from the size learned, not from FIRST_CHUNK
    assert max(again.facets) <= 40 and not [o for o in rerun.database_cost.operations if o.error]  # none timed out
    assert {(f.field, f.category) for f in rerun.findings} == {(f.field, f.category) for f in report.findings}


def test_a_small_batch_is_one_pass_and_teaches_nothing_from_its_fixed_cost() -> None:
    server = _LimitedServer(_DOCS)
    target = _target(server)

    count_many(target, _queries(5))

    assert server.facets == [5] and target.cost().passes == 1
    assert target.sizing.checks == {}


def test_chunks_are_few_and_even() -> None:
    sizing = BatchSizing(checks={"counts": 250})
    assert [len(c) for c in sizing.chunks("counts", list(range(609)))] == [203, 203, 203]
    assert sizing.first_chunk("stats", 609) == FIRST_CHUNK  # statistics are sized apart
    sizing.learn("counts", 64, elapsed_ms=640.0, limit_ms=10_000)  # 10 ms a check: 5 s of 10 fits 500
    assert sizing.checks["counts"] == 500
    sizing.timed_out("counts", 400)
    sizing.learn("counts", 64, elapsed_ms=64.0, limit_ms=10_000)  # fast now, but a pass of 400 timed out
    assert sizing.checks["counts"] == 200
