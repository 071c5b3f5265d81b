"""The alerts section of schedules.yaml: the repository's example, and errors that say where."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from argus.config.schedules import ScheduleError, load_schedules

ROOT = Path(__file__).resolve().parents[2]


def _with_alerts(tmp_path: Path, alerts: str) -> Path:
    path = tmp_path / "schedules.yaml"
    text = (ROOT / "schedules.yaml").read_text().replace("deploy/", f"{ROOT}/deploy/")
    path.write_text(text.split("# Alerts on new")[0] + alerts)
    return path


def test_the_commented_example_in_the_repository_is_valid_once_uncommented(tmp_path: Path) -> None:
    text = (ROOT / "schedules.yaml").read_text()
    block = text[text.index("# alerts:"):]
    path = _with_alerts(tmp_path, "\n".join(re.sub(r"^# ?", "", line) for line in block.splitlines()) + "\n")
    alerts = load_schedules(path).alerts
    assert sorted(alerts.channels) == ["alertmanager", "hook", "ops-slack"]
    assert [r.channels for r in alerts.effective_routes()] == [["ops-slack"], ["alertmanager", "hook"]]


def test_a_slack_url_written_inline_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = _with_alerts(tmp_path, "alerts:\n  channels:\n    s: {type: slack, url: https://hooks.slack.com/T1/B2/sek}\n")
    with pytest.raises(ScheduleError) as err:
        load_schedules(path)
    line = len(path.read_text().splitlines())
    assert err.value.problems == [f"{path}:{line} alerts.channels.s: a slack URL is a secret: give url_env or "
                                  f"url_file, not url"]
    assert "sek" not in str(err.value)


def test_a_route_to_an_unknown_channel_names_it(tmp_path: Path) -> None:
    path = _with_alerts(tmp_path, "alerts:\n  channels:\n    am: {type: alertmanager, url: http://am:9093}\n"
                                  "  routes:\n    - channels: [pager]\n")
    with pytest.raises(ScheduleError) as err:
        load_schedules(path)
    assert err.value.problems[0].endswith("alerts: route names unknown channel 'pager' (known: am)")


def test_a_misspelt_alerts_key_gets_a_suggestion(tmp_path: Path) -> None:
    path = _with_alerts(tmp_path, "alerts:\n  min_severty: high\n")
    with pytest.raises(ScheduleError) as err:
        load_schedules(path)
    assert err.value.problems[0].endswith("alerts.min_severty: unknown key (did you mean 'min_severity'?)")


def test_without_an_alerts_section_nothing_is_routed(tmp_path: Path) -> None:
    assert load_schedules(_with_alerts(tmp_path, "")).alerts.effective_routes() == []
