"""Samples built to make shape discovery slow: each audit still ends within its time budget.

Shape discovery runs inside ``schema_sample`` as one pure computation the run's deadline cannot
interrupt, so its work has to be bounded by the sample, never by the square of its keys.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta

from bson import ObjectId

from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.tools.target import AuditTarget
from tests.conftest import memory_collection

BUDGET_S = 20.0


def test_documents_each_holding_a_random_half_of_2000_keys_are_audited_within_the_budget() -> None:
    """Every pair of the 2,000 optional keys looks like a rename candidate (together in about every
    document): compared pair by pair, the sample's renames took minutes; an object with that many
    optional keys is a map keyed by data, where nothing is renamed."""
    rng = random.Random(7)
    keys = [f"k{i:04d}" for i in range(2000)]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    docs = [{"_id": ObjectId.from_datetime(start + timedelta(minutes=i)), **dict.fromkeys(rng.sample(keys, 1000), 1)}
            for i in range(200)]
    collection = memory_collection(docs, "wide", database="db")
    started = time.monotonic()
    report = run_audit(AuditTarget(collection, max_time_ms=2000), HeuristicPlanner(),
                       options=AuditOptions(time_budget_s=BUDGET_S))
    seconds = time.monotonic() - started
    assert report.error is None and report.outcome != "failed"
    assert report.shapes is not None and report.shapes.renames == []
    assert seconds < BUDGET_S + 5
