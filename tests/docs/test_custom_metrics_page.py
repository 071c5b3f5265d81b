"""docs/custom-metrics.md: the output it shows is what a run of the demo's metrics prints, and the
refusal it quotes is the one a refused stage gets (the page's examples cannot drift silently)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from rich.console import Console

from argus.agent.loop import run_audit
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.config.schedules import ScheduleError, load_schedules
from argus.daemon.render import print_metrics
from argus.daemon.sources import SourceCache

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "custom-metrics.md"


def _text_blocks() -> list[str]:
    return re.findall(r"```text\n(.*?)```", PAGE.read_text(), re.DOTALL)


def test_the_demo_output_on_the_page_is_what_the_demo_metrics_print() -> None:
    loaded = load_schedules(ROOT / "deploy" / "demo" / "metrics.yaml")
    schedule = loaded.schedules["demo-order-metrics"]
    sources = SourceCache()
    try:
        target = sources.target(schedule.connection, loaded.connections[schedule.connection], schedule.database,
                                schedule.collection, max_time_ms=10_000, where="demo")
        report = run_audit(target, HeuristicPlanner(), options=schedule.settings.audit_options())
    finally:
        sources.close()
    console = Console(width=200, record=True, color_system=None)
    print_metrics(report.metrics, console)
    printed = {line.rstrip() for line in console.export_text().splitlines()}
    shown = [line.rstrip() for line in _text_blocks()[1].splitlines() if line.strip()]
    assert [line for line in shown if line not in printed] == []


def test_the_refusal_on_the_page_is_the_one_a_refused_stage_gets(tmp_path: Path) -> None:
    path = tmp_path / "schedules.yaml"
    path.write_text(textwrap.dedent("""\
        connections: {prod: {uri_env: X}}
        schedules:
          - name: orders
            connection: prod
            database: shop
            collection: orders
            trigger: {every: 1h}
            metrics:
              - name: fine
                pipeline: [{$count: n}]
                between: [0, 1]
              - name: copy
                pipeline:
                  - {$match: {status: paid}}
                  - {$out: copied}
                between: [0, 1]
    """))
    with pytest.raises(ScheduleError) as info:
        load_schedules(path)
    [problem] = info.value.problems
    assert problem.replace(str(tmp_path) + "/", "") == _text_blocks()[0].strip()
