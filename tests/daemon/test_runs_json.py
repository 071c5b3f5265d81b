"""`argus runs --format json` reports what each run cost the audited database, as `argus show` does
(issue 36: it said zero queries, passes and documents examined for every run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.daemon.test_cli_new_user import History, _docs


@pytest.fixture
def history(pg_dsn: str, tmp_path: Path) -> History:
    return History(pg_dsn, tmp_path)


def test_runs_as_json_carry_the_cost_argus_show_reports(history: History) -> None:
    report = history.audit(_docs())
    cost = report["database_cost"]
    assert cost["queries_sent"] > 0 and cost["passes"] > 0 and cost["documents_examined"] > 0
    [listed] = json.loads(history.cli("runs", "--format", "json").stdout)
    shown = json.loads(history.cli("show", report["run_id"], "--format", "json").stdout)["database_cost"]
    for key in ("queries_sent", "passes", "documents_examined", "throttled", "request_units"):
        assert listed[key] == shown[key] == cost[key], key
