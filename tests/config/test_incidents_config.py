"""alerts.incidents in schedules.yaml: defaults, the repository's example, and errors that name
the file, the line and the key."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from argus.config.alerts import AlertsConfig
from argus.config.schedules import ScheduleError, load_schedules
from tests.config.test_alerts import _with_alerts

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_are_one_incident_per_collection_alerting_per_incident() -> None:
    config = AlertsConfig()
    assert config.per == "incident"
    incidents = config.incidents
    assert (incidents.group_by, incidents.resolve_after, incidents.reopen_within, incidents.remind_after,
            incidents.min_severity.value) == ("collection", 2, timedelta(hours=24), timedelta(hours=24), "low")


def test_the_repository_example_sets_every_incident_key(tmp_path: Path) -> None:
    text = (ROOT / "schedules.yaml").read_text()
    block = text[text.index("# alerts:"):]
    path = _with_alerts(tmp_path, "\n".join(re.sub(r"^# ?", "", line) for line in block.splitlines()) + "\n")
    alerts = load_schedules(path).alerts
    assert alerts.per == "incident"
    assert alerts.incidents.model_dump() == {"group_by": "collection", "resolve_after": 2,
                                             "reopen_within": timedelta(hours=24),
                                             "remind_after": timedelta(hours=24), "min_severity": "low",
                                             "notify_joined": True}


def test_durations_and_null_read_as_written(tmp_path: Path) -> None:
    path = _with_alerts(tmp_path, "alerts:\n  per: finding\n  incidents:\n    group_by: pattern\n"
                                  "    reopen_within: 90m\n    remind_after: null\n    resolve_after: 1\n")
    alerts = load_schedules(path).alerts
    assert alerts.per == "finding"
    assert (alerts.incidents.group_by, alerts.incidents.reopen_within, alerts.incidents.remind_after,
            alerts.incidents.resolve_after) == ("pattern", timedelta(minutes=90), None, 1)


@pytest.mark.parametrize(("yaml", "problem"), [
    ("  incidents:\n    group_by: table\n",
     "alerts.incidents.group_by: Input should be 'collection', 'category' or 'pattern'"),
    ("  incidents:\n    resolve_afer: 3\n",
     "alerts.incidents.resolve_afer: unknown key (did you mean 'resolve_after'?)"),
    ("  incidents:\n    reopen_within: soon\n",
     "alerts.incidents.reopen_within: 'soon' is not a duration (e.g. 30s, 5m, 1h30m)"),
    ("  incidents:\n    remind_after: 10s\n",
     "alerts.incidents.remind_after: remind at most once a minute (e.g. 4h), or null for never"),
    ("  incidents:\n    resolve_after: 0\n",
     "alerts.incidents.resolve_after: Input should be greater than or equal to 1"),
    ("  per: pattern\n", "alerts.per: Input should be 'incident' or 'finding'"),
])
def test_a_wrong_incident_setting_names_its_line_and_key(tmp_path: Path, yaml: str, problem: str) -> None:
    path = _with_alerts(tmp_path, "alerts:\n" + yaml)
    with pytest.raises(ScheduleError) as err:
        load_schedules(path)
    line = len(path.read_text().splitlines())
    assert err.value.problems == [f"{path}:{line} {problem}"]
