"""A file whose documents have no _id: auditing it again reports nothing inserted since the last run.

The earlier engine gave each such document an ObjectId made when the file was loaded, so a re-run of
the same file read as 2,000 documents "inserted since the last run · newest 2s old"."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from argus.agent.health.collect import collect_health
from argus.agent.health.models import HealthOptions
from argus.agent.tools.models import SchemaSampleInput
from argus.agent.tools.schema_sample import schema_sample
from argus.daemon.sources import load_path

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)


def _health(path: Path, now: datetime, previous: object = None) -> object:
    target = load_path(path)
    schema = schema_sample(target, SchemaSampleInput(sample_size=500))
    return collect_health(target, schema, now=now, options=HealthOptions(), privacy="shapes",
                          previous=previous)  # type: ignore[arg-type]


def test_a_rerun_of_a_file_without_ids_counts_no_inserts(tmp_path: Path) -> None:
    path = tmp_path / "readings.jsonl"
    path.write_text("".join(json.dumps({"sensor": f"s{i % 9}", "value": i % 17}) + "\n" for i in range(2000)))
    first = _health(path, NOW)
    second = _health(path, NOW + timedelta(seconds=2), previous=first)
    assert (second.inserts, second.newest_at, second.documents) == (None, None, 2000)  # type: ignore[attr-defined]
