"""What a batched pass answers on the real engine: each statistic as its own pipeline answers it, when
the batch reads a narrowed document; and under a time limit that splits the batches, no finding the
file audit does not make (a statistic that timed out once read as "no value inside a fence")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from argus.agent.tools import get_stats
from argus.agent.tools.count_many import count_many
from argus.agent.tools.models import CountManyInput, GetStatsInput
from argus.daemon.sources import open_uri
from tests.agent.tools.test_count_many import _NESTED
from tests.integration.audits import audit, finding_keys, load_jsonl

pytestmark = pytest.mark.live


def test_a_narrowed_batch_answers_as_each_statistic_alone_on_the_server(live_db: Any, live_uri: str) -> None:
    live_db["nested"].insert_many([dict(d) for d in _NESTED])
    target = open_uri(live_uri, database=live_db.name, collection="nested", max_time_ms=10_000,
                      connect_timeout_ms=5000)
    specs = [GetStatsInput(field="p.q", operation=op) for op in ("duplicates", "value_counts", "min", "max", "count",
                                                                 "distinct")]
    specs += [GetStatsInput(field="p.q", operation="max", value_filter={"$lt": 3}),
              GetStatsInput(field="s", operation="duplicates", filter={"p.r": {"$exists": False}}),
              GetStatsInput(field="p.r", operation="distinct", filter={"$or": [{"s": 5}, {"p.q": 2}]})]

    result = count_many(target, CountManyInput(stats=specs))
    batched = result.stats
    alone = [get_stats(target, spec) for spec in specs]

    assert result.query_used.startswith('[{"$project"')  # the batch read a narrowed document
    assert [(s.value, s.totals, s.capped) for s in batched] == [(s.value, s.totals, s.capped) for s in alone]


@pytest.mark.slow  # products under a limit its batches run past: a minute or more under load
def test_batches_split_under_a_tight_limit_find_nothing_the_file_audit_does_not(bench_dir: Path, live_db: Any,
                                                                                live_uri: str) -> None:
    path = bench_dir / "products.jsonl"
    load_jsonl(live_db["products"], path)
    _, live = audit("--uri", live_uri, "--database", live_db.name, "--collection", "products",
                       "--max-time-ms", "1500", timeout=600)
    _, file = audit("--file", str(path))

    assert live["outcome"] in ("succeeded", "partial"), live.get("error")
    assert any("later passes of" in note for note in live["notes"])  # a batch did time out and was split
    assert set(finding_keys(live)) <= set(finding_keys(file))
    if live["outcome"] == "succeeded":
        assert finding_keys(live) == finding_keys(file)
