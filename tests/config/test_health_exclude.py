"""health.exclude and health.backfill in schedules.yaml: spans as dates or times, errors naming the
file, line and key."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from argus.agent.health.models import ExcludedSpan
from argus.config.schedules import ScheduleError, load_schedules


def _load(tmp_path: Path, health: str) -> object:
    (tmp_path / "schedules.yaml").write_text(textwrap.dedent("""\
        connections:
          files: {files: {orders: orders.jsonl}}
        defaults: {trigger: {every: 1h}}
        schedules:
          - name: orders
            connection: files
            database: shop
            collection: orders
            health:
        """) + textwrap.indent(textwrap.dedent(health), " " * 14))
    return load_schedules(tmp_path / "schedules.yaml")


def test_exclusions_as_dates_and_times_become_spans_in_utc(tmp_path: Path) -> None:
    loaded = _load(tmp_path, """\
        backfill: false
        exclude:
          - {start: 2026-12-24, end: 2026-12-27, reason: holidays}
          - {start: "2026-03-01T02:00:00+01:00", end: "2026-03-01T04:00:00+01:00"}
    """)
    options = loaded.schedules["orders"].settings.audit_options().health  # type: ignore[attr-defined]
    assert options.backfill is False
    assert options.exclude == [
        ExcludedSpan(start=datetime(2026, 12, 24, tzinfo=UTC), end=datetime(2026, 12, 27, tzinfo=UTC),
                     reason="holidays"),
        ExcludedSpan(start=datetime(2026, 3, 1, 1, tzinfo=UTC), end=datetime(2026, 3, 1, 3, tzinfo=UTC))]


@pytest.mark.parametrize(("health", "problem"), [
    ("exclude: [{start: 2026-12-27, end: 2026-12-24}]",
     "schedules[0].health.exclude[0]: end (2026-12-24 00:00) must be after start (2026-12-27 00:00)"),
    ("exclude: [{start: christmas, end: 2026-12-27}]",
     "schedules[0].health.exclude[0].start: 'christmas' is not a date or a time (e.g. 2026-12-24 or "
     "2026-12-24T02:00:00Z)"),
])
def test_a_bad_exclusion_names_the_line_and_key(tmp_path: Path, health: str, problem: str) -> None:
    with pytest.raises(ScheduleError) as caught:
        _load(tmp_path, health)
    assert caught.value.problems == [f"{tmp_path / 'schedules.yaml'}:10 {problem}"]


def test_a_misspelt_key_of_an_exclusion_is_named_with_the_nearest_valid_one(tmp_path: Path) -> None:
    with pytest.raises(ScheduleError) as caught:
        _load(tmp_path, "exclude: [{start: 2026-12-24, ends: 2026-12-27}]")
    where = f"{tmp_path / 'schedules.yaml'}:10 schedules[0].health.exclude[0]"
    assert caught.value.problems == [f"{where}.end: required key is missing",
                                     f"{where}.ends: unknown key (did you mean 'end'?)"]
