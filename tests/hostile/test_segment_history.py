"""A first scheduled run rebuilds each segment's history from the time field: a tenant whose
documents are all older than that window has had no arrival in it, and did not "appear"."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from bson import ObjectId
from typer.testing import CliRunner

from argus.daemon.cli import app


def test_a_segment_silent_since_before_the_rebuilt_window_is_not_called_new_on_the_first_run(
        tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGUS_DATABASE_URL", pg_dsn)
    now = datetime.now(UTC)
    rows = [{"_id": {"$oid": str(ObjectId.from_datetime(now - timedelta(minutes=10 * i)))[:8] + f"{i:016x}"},
             "tenant": "steady"} for i in range(400)]
    rows += [{"_id": {"$oid": str(ObjectId.from_datetime(now - timedelta(days=5, minutes=i)))[:8] + f"{9000 + i:016x}"},
              "tenant": "retired"} for i in range(3)]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "schedules.yaml").write_text("""\
version: 1
connections:
  f: {files: {events: events.jsonl}}
schedules:
  - {name: s, connection: f, database: d, collection: events, trigger: {every: 1h}, segments: {by: tenant}}
""")
    result = CliRunner().invoke(app, ["run", "s", "--schedules", str(tmp_path / "schedules.yaml"), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    assert "tenant=retired" in [s["segment"] for s in report["health"]["segments"]]
    assert [f["description"] for f in report["findings"] if f["category"] == "segment_change"] == []
