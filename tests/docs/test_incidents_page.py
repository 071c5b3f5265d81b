"""docs/incidents.md against the code it describes (tests/docs/test_examples.py runs its commands
and parses its blocks with every other page's): its configuration block is the defaults, and it
names every status and notice."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from argus.config.alerts import AlertsConfig, IncidentsConfig
from argus.config.schedules import load_schedules
from argus.daemon.incidents.models import IncidentStatus, NoticeKind

PAGE = Path(__file__).resolve().parents[2] / "docs" / "incidents.md"


def test_the_configuration_block_shows_the_defaults(tmp_path: Path) -> None:
    block = re.search(r"```yaml\n(alerts:.*?)```", PAGE.read_text(), re.S)
    assert block is not None
    path = tmp_path / "schedules.yaml"
    path.write_text("schedules: []\n" + block.group(1))
    alerts = load_schedules(path).alerts
    assert alerts.incidents == IncidentsConfig()
    assert (alerts.per, alerts.min_severity) == (AlertsConfig().per, AlertsConfig().min_severity)


def test_every_status_and_notice_kind_is_named() -> None:
    text = PAGE.read_text()
    assert [s for s in get_args(IncidentStatus) if f"`{s}`" not in text] == []
    assert [k for k in get_args(NoticeKind) if k != "incident_refresh" and f"`{k}`" not in text] == []
