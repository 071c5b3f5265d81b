"""docs/scope.md: every schedules.yaml a user would copy from it loads as the page says."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from argus.config.schedules import load_schedules

PAGE = Path(__file__).resolve().parents[2] / "docs" / "scope.md"
_YAML = re.compile(r"```yaml\n(.*?)```", re.DOTALL)


def _blocks() -> list[str]:
    return _YAML.findall(PAGE.read_text())


def test_the_scoped_schedules_load_with_the_windows_the_page_describes(tmp_path: Path) -> None:
    (tmp_path / "schedules.yaml").write_text(_blocks()[0])
    loaded = load_schedules(tmp_path / "schedules.yaml")
    now = datetime(2026, 3, 2, 12, tzinfo=UTC)

    events = loaded.schedules["events-hourly"].settings.scope
    assert events is not None
    window, why = events.for_run(now - timedelta(days=1), now)
    assert window is not None and (window.field, window.since_s, why) == ("received_at", 6 * 3600.0, None)
    assert events.for_run(now - timedelta(days=8), now)[0] is None  # a full audit is due
    orders = loaded.schedules["orders-hourly"].settings.scope
    assert orders is not None
    window, _ = orders.for_run(None, now)
    assert window is not None and (window.field, window.since_s) == (None, 86400.0)


def test_the_exclusions_load_as_spans_in_utc(tmp_path: Path) -> None:
    (tmp_path / "schedules.yaml").write_text(_blocks()[1])
    health = load_schedules(tmp_path / "schedules.yaml").schedules["orders-daily"].settings.audit_options().health
    assert [(e.start, e.end, e.reason) for e in health.exclude] == [
        (datetime(2026, 12, 24, tzinfo=UTC), datetime(2026, 12, 27, tzinfo=UTC), "holidays"),
        (datetime(2026, 3, 1, 2, tzinfo=UTC), datetime(2026, 3, 1, 4, tzinfo=UTC), "planned maintenance")]
