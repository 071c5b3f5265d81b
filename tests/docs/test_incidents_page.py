"""docs/incidents.md as a user copies from it: its commands run top to bottom on a fresh data
directory (as tests/test_readme.py runs the README's), and its schedules.yaml block loads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from config.schedules import load_schedules
from daemon.store.embedded import start_embedded
from tests.test_readme import NewUser, readme_steps

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "incidents.md"


def test_the_configuration_block_is_a_valid_alerts_section_with_the_defaults(tmp_path: Path) -> None:
    block = re.search(r"```yaml\n(alerts:.*?)```", PAGE.read_text(), re.S)
    assert block is not None
    path = tmp_path / "schedules.yaml"
    path.write_text("schedules: []\n" + block.group(1))
    alerts = load_schedules(path).alerts
    from config.alerts import AlertsConfig, IncidentsConfig

    assert alerts.incidents == IncidentsConfig()
    assert (alerts.per, alerts.min_severity) == (AlertsConfig().per, AlertsConfig().min_severity)


def test_every_status_and_notice_kind_the_page_names_exists() -> None:
    from typing import get_args

    from daemon.incidents.models import IncidentStatus, NoticeKind

    text = PAGE.read_text()
    assert all(f"`{s}`" in text for s in get_args(IncidentStatus))
    assert all(f"`{k}`" in text for k in get_args(NoticeKind) if k != "incident_refresh")


@pytest.mark.slow
def test_a_user_can_follow_the_commands_of_the_page(tmp_path: Path) -> None:
    user = NewUser(tmp_path)
    user.held = start_embedded(user.data_dir)  # one server for every command, as the daemon would keep it
    ran = []
    try:
        for step in readme_steps(PAGE.read_text()):
            if step.skip:
                continue
            result = user.shell(step.command)
            where = f"docs/incidents.md:{step.line} `{step.command}`"
            allowed = {0, 1} if step.command.startswith("argus audit") else {0}
            assert result.returncode in allowed, f"{where} exited {result.returncode}:\n{result.stderr[-2000:]}"
            assert "Traceback" not in result.stderr and "internal error" not in result.stderr, where
            ran.append((step.command, result.stdout))
    finally:
        user.held.server.cleanup()
    assert len(ran) == 8
    listed = json.loads(ran[-1][1])
    assert [(i["id"], i["status"], i["reopened"], i["note"]) for i in listed] == [
        (1, "expected", 1, "legacy orders, migrated next week")]
