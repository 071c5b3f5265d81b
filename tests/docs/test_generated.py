"""The generated references say what the code does: every schedules.yaml key, ARGUS_* setting, CLI
command and option, metric family and exit code, each with a description, and no page is stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
import typer.main
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel

from argus.config.schedule_models import ScheduleFile
from argus.config.settings import Settings
from argus.daemon.cli import app
from argus.daemon.exit_codes import ExitCode
from argus.daemon.metrics import Metrics, catalogue
from tests.daemon.process import DaemonProcess
from tests.docs.pages import DOCS, ROOT, generator

REFERENCE = DOCS / "reference"


def _page(name: str) -> str:
    return (REFERENCE / name).read_text()


def test_no_generated_part_is_stale() -> None:
    problems = generator().stale()
    assert not problems, "\n".join([*problems, "regenerate with: python docs/generate.py"])


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> list[type[BaseModel]]:
    gen = generator()
    found = [model]
    seen.add(model)
    for info in model.model_fields.values():
        for _, inner in gen._models_in(info.annotation):
            if inner not in seen:
                found += _models(inner, seen)
    return found


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| `")]


def test_every_schedules_yaml_key_is_in_the_reference_with_a_description() -> None:
    text = _page("schedules-yaml.md")
    rows = _rows(text)
    missing = [f"{m.__name__}.{key}" for m in _models(ScheduleFile, set()) for key in m.model_fields
               if not any(row.startswith(f"| `{key}` |") for row in rows)]
    assert not missing, f"keys missing from docs/reference/schedules-yaml.md: {missing}"
    assert "MISSING DESCRIPTION" not in text


def test_every_setting_is_in_the_environment_reference() -> None:
    text = _page("environment.md")
    missing = [f"ARGUS_{name.upper()}" for name in Settings.model_fields if f"| `ARGUS_{name.upper()}` |" not in text]
    assert not missing, f"settings missing from docs/reference/environment.md: {missing}"
    assert "MISSING DESCRIPTION" not in text


def _commands(group: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    if isinstance(group, click.Group):
        return [found for name, sub in group.commands.items() for found in _commands(sub, (*path, name))]
    return [(path, group)]


def test_every_command_and_option_is_in_the_cli_reference() -> None:
    text = _page("cli.md")
    missing = []
    for path, command in _commands(typer.main.get_command(app)):
        name = "argus " + " ".join(path)
        section = text.split(f"\n## {name}\n", 1)
        if len(section) != 2:
            missing.append(name)
            continue
        body = section[1].split("\n## ", 1)[0]
        for param in command.params:
            names = [param.human_readable_name] if isinstance(param, click.Argument) else param.opts
            missing += [f"{name} {n}" for n in names if param.name != "help" and f"`{n}`" not in body]
    assert not missing, f"missing from docs/reference/cli.md: {missing}"
    assert "MISSING DESCRIPTION" not in text


def test_every_exit_code_is_in_the_reference() -> None:
    text = _page("exit-codes.md")
    assert [code for code in ExitCode if f"| {code.value} | " not in text] == []


def _documented_metrics() -> dict[str, set[str]]:
    families: dict[str, set[str]] = {}
    for row in _rows(_page("metrics.md")):
        cells = [c.strip() for c in row.strip("|").split("|")]
        families[cells[0].strip("`")] = {label.strip(" `") for label in cells[2].split(",") if label.strip()}
    return families


def test_every_metric_family_of_the_registry_is_in_the_reference() -> None:
    registry = CollectorRegistry()
    Metrics(registry).daemon_gauges(open_findings=list, next_runs=list, schedules=list, spooled=lambda: 0,
                                    embedded_up=lambda: True)
    documented = _documented_metrics()
    assert {f.name: set(f.labels) for f in catalogue(registry)} == documented


@pytest.mark.slow
def test_a_running_daemon_exposes_only_documented_metrics_and_labels(tmp_path: Path) -> None:
    """The real /metrics of a real daemon, against the reference: a family registered anywhere
    else than the registry the reference is generated from shows up here."""
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(f"""version: 1
connections:
  demo: {{files: {{customers: {ROOT / 'deploy/demo/customers.jsonl'}}}}}
schedules:
  - {{name: demo-customers, connection: demo, database: shop, collection: customers,
     trigger: {{every: 1h}}, run_at_start: true}}
""")
    daemon = DaemonProcess(schedules, {"ARGUS_DATA_DIR": str(tmp_path / "data")}, tmp_path / "daemon.log")
    try:
        daemon.wait_until("a finished run", lambda: daemon.metric("argus_audit_runs_total") >= 1, timeout=180)
        exposed = _exposed(daemon.get("/metrics")[1])
    finally:
        daemon.stop()
    documented = _documented_metrics()
    assert sorted(set(exposed) - set(documented)) == []
    assert {name: labels - documented[name] for name, labels in exposed.items() if labels - documented[name]} == {}


def _exposed(text: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        name = family.name + ("_total" if family.type == "counter" else "")
        labels: set[Any] = found.setdefault(name, set())
        for sample in family.samples:
            labels |= set(sample.labels) - {"le"}
    return found
