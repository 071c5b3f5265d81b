"""Per-schedule series that exist from the moment a schedule is loaded: its interval and its run
counters and histograms, set at start-up and on every reload, gone (the interval) when the schedule is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from prometheus_client import CollectorRegistry

from argus.config.settings import Settings
from argus.daemon.service import Daemon

ROOT = Path(__file__).resolve().parents[2]


def _schedules(path: Path, schedules: list[dict[str, Any]]) -> None:
    path.write_text(yaml.safe_dump({
        "connections": {"demo": {"files": {"orders": str(ROOT / "deploy/demo/orders.jsonl")}}},
        "schedules": [{"connection": "demo", "database": "shop", "collection": "orders", **s} for s in schedules],
    }))


def test_intervals_follow_the_loaded_schedules(pg_dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    _schedules(path, [{"name": "hourly", "trigger": {"every": "1h"}},
                      {"name": "weekdays", "trigger": {"cron": "0 6 * * 1-5", "timezone": "Europe/Berlin"}},
                      {"name": "off", "trigger": {"every": "5m"}, "enabled": False}])
    registry = CollectorRegistry()
    daemon = Daemon(Settings(database_url=pg_dsn, data_dir=tmp_path / "data"), schedules_path=path,
                    listen=("127.0.0.1", 0), registry=registry)

    def interval(name: str) -> float | None:
        return registry.get_sample_value("argus_schedule_interval_seconds", {"schedule": name})

    daemon.start()
    try:
        assert interval("hourly") == 3600
        assert interval("weekdays") == 3 * 86400          # the weekend gap
        assert interval("off") is None                    # a disabled schedule cannot be late
        assert registry.get_sample_value("argus_audit_runs_total", {"schedule": "hourly", "outcome": "failed"}) == 0
        # the 'Run duration' panel divides two rates: a histogram born at the first run has no
        # rate until its second scrape, so a schedule would be missing from the panel after it ran
        for histogram in ("argus_audit_duration_seconds_count", "argus_audit_iterations_count"):
            assert registry.get_sample_value(histogram, {"schedule": "hourly"}) == 0
        # the first critical finding ever must show as an increase on the 'new findings' panel
        assert registry.get_sample_value("argus_findings_new_total", {"schedule": "hourly",
                                                                      "severity": "critical"}) == 0
        assert registry.get_sample_value("argus_db_passes_total", {"schedule": "hourly"}) == 0
        assert registry.get_sample_value("process_start_time_seconds") is not None

        _schedules(path, [{"name": "hourly", "trigger": {"every": "30m"}},
                          {"name": "off", "trigger": {"every": "5m"}}])
        assert daemon.reload("test")
        assert (interval("hourly"), interval("weekdays"), interval("off")) == (1800, None, 300)
    finally:
        daemon.request_stop()
        daemon.shutdown()
