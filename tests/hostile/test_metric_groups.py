"""A metric's groups hold what the documents hold: a group holding an escape sequence or a NUL is
shown escaped, so no report, table or stored row carries a character a terminal would obey."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from argus.daemon.cli import app


def test_a_group_holding_control_characters_is_shown_escaped(
        tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGUS_DATABASE_URL", pg_dsn)
    (tmp_path / "events.jsonl").write_text("".join(json.dumps({"_id": i, "region": ["\x1b[2Jeu", "us\x00"][i % 2]})
                                                   + "\n" for i in range(40)))
    (tmp_path / "schedules.yaml").write_text("""\
version: 1
connections:
  f: {files: {events: events.jsonl}}
schedules:
  - name: s
    connection: f
    database: d
    collection: events
    trigger: {every: 1h}
    metrics:
      - name: per_region
        pipeline: [{$group: {_id: "$region", v: {$sum: 1}}}]
        fail: {above: 1000}
""")
    result = CliRunner().invoke(app, ["run", "s", "--schedules", str(tmp_path / "schedules.yaml"), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    [metric] = json.loads(result.stdout)["metrics"]
    assert sorted(v["group"] for v in metric["values"]) == ["\\u001b[2Jeu", "us\\u0000"]
