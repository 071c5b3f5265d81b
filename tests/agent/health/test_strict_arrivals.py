"""In strict privacy the stored newest-document time is kept to the minute; a quiet collection audited
again must still count nothing arrived.

Counting from the truncated minute counted the previous newest document (and its minute's siblings) again
on every run, so a collection nobody wrote to reported "1 arrived, usual 0" as a volume anomaly."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from bson import ObjectId

from argus.agent.health.collect import collect_health
from argus.agent.health.models import HealthOptions, HealthSnapshot
from argus.agent.tools.models import SchemaSampleInput
from argus.agent.tools.schema_sample import schema_sample
from argus.daemon.sources import load_path

NEWEST = datetime(2026, 11, 26, 11, 40, 37, tzinfo=UTC)


def _write(path: Path, times: list[datetime]) -> None:
    path.write_text("".join(json.dumps({"_id": {"$oid": str(ObjectId.from_datetime(t))}, "v": i,
                                        "at": {"$date": t.isoformat().replace("+00:00", "Z")}}) + "\n"
                            for i, t in enumerate(times)))


def _health(path: Path, now: datetime, privacy: str, options: HealthOptions,
            previous: HealthSnapshot | None = None) -> HealthSnapshot:
    target = load_path(path)
    schema = schema_sample(target, SchemaSampleInput(sample_size=500))
    return collect_health(target, schema, now=now, options=options, privacy=privacy,  # type: ignore[arg-type]
                          previous=previous)


@pytest.mark.parametrize("privacy", ["strict", "shapes"])
def test_a_quiet_collection_audited_again_counts_nothing_arrived(tmp_path: Path, privacy: str) -> None:
    options = HealthOptions()
    path = tmp_path / "quiet.jsonl"
    # the newest document and two siblings written earlier in its minute
    _write(path, [NEWEST - timedelta(hours=h) for h in range(1, 50)] + [NEWEST - timedelta(seconds=20),
                                                                        NEWEST - timedelta(seconds=5), NEWEST])
    first = _health(path, NEWEST + timedelta(hours=1), privacy, options)
    second = _health(path, NEWEST + timedelta(hours=2), privacy, options, previous=first)
    assert (first.time_source, second.inserts) == ("_id", 0)


@pytest.mark.parametrize("privacy", ["strict", "shapes"])
def test_documents_written_after_the_previous_minute_are_counted(tmp_path: Path, privacy: str) -> None:
    path = tmp_path / "busy.jsonl"
    times = [NEWEST - timedelta(hours=h) for h in range(1, 50)] + [NEWEST]
    _write(path, times)
    first = _health(path, NEWEST + timedelta(seconds=1), privacy, HealthOptions())
    _write(path, [*times, NEWEST + timedelta(minutes=3), NEWEST + timedelta(minutes=7)])
    second = _health(path, NEWEST + timedelta(minutes=10), privacy, HealthOptions(), previous=first)
    assert second.inserts == 2
