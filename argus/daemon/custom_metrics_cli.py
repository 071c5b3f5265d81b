"""``argus metrics ls`` and ``argus metrics show NAME``: the stored history of schedules' own metrics."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from argus.daemon.cli_output import FormatOption, OutputFormat, emit, stdout_console
from argus.daemon.store import PostgresStore
from argus.daemon.store.metric_values import MetricBook, MetricRow, MetricSeries

__all__ = ["register"]

WithStore = Callable[[Callable[[PostgresStore], Any]], Any]
_STYLE = {"fail": "red", "anomaly": "red", "error": "red", "warn": "yellow", "no_value": "yellow", "ok": "green",
          "learning": "cyan", "excluded": "cyan"}
ScheduleOption = Annotated[str | None, typer.Option("--schedule", help="only this schedule's metrics")]


def register(app: typer.Typer, with_store: WithStore, *, panel: str | None = None) -> None:
    metrics_app = typer.Typer(no_args_is_help=True, help="The history of schedules' own metrics (metrics: in "
                                                         "schedules.yaml): `argus metrics ls`, `argus metrics show "
                                                         "NAME`.")
    app.add_typer(metrics_app, name="metrics", rich_help_panel=panel)

    @metrics_app.command("ls")
    def ls(schedule: ScheduleOption = None, output: FormatOption = OutputFormat.table) -> None:
        """List every stored metric with its latest value and verdict."""
        rows: list[MetricSeries] = with_store(lambda st: MetricBook(st).series(schedule=schedule))
        if output == OutputFormat.json:
            emit(json.dumps([r.model_dump(mode="json") for r in rows], indent=2))
            return
        console = stdout_console()
        if not rows:
            console.print("no metric values stored yet (declare metrics: in a schedule, see docs/metrics.md)",
                          highlight=False)
            return
        table = Table("schedule", "metric", "runs", "last run", "value", "verdict", box=None, header_style="bold")
        for r in rows:
            value = f"{r.last_value:.6g}" if r.last_value is not None else f"{r.segments} segments" \
                if r.segments else ""
            table.add_row(escape(r.schedule), escape(r.metric), str(r.runs), r.last_at.isoformat(timespec="seconds"),
                          value, f"[{_STYLE[r.verdict]}]{r.verdict}[/]")
        console.print(table)

    @metrics_app.command("show")
    def show(name: Annotated[str, typer.Argument(metavar="NAME", help="the metric's name")],
             schedule: ScheduleOption = None,
             limit: Annotated[int, typer.Option(min=1, help="runs to show, newest first")] = 20,
             output: FormatOption = OutputFormat.table) -> None:
        """Show a metric's values run by run (each segment of a grouped metric), newest first."""
        owner, rows = with_store(lambda st: MetricBook(st).show(name, schedule=schedule, limit=limit))
        if output == OutputFormat.json:
            emit(json.dumps({"schedule": owner, "metric": name,
                             "values": [r.model_dump(mode="json") for r in rows]}, indent=2))
            return
        console = stdout_console()
        runs = len({r.run_id for r in rows})
        console.print(f"metric {name} of schedule {owner}: {runs} run{'s' if runs != 1 else ''}", markup=False,
                      highlight=False)
        table = Table("run at", "run", "segment", "value", "verdict", "expected", box=None, header_style="bold")
        for r in rows:
            table.add_row(r.at.isoformat(timespec="seconds"), str(r.run_id)[:8], escape(_segment(r)),
                          "" if r.value is None else f"{r.value:.6g}", f"[{_STYLE[r.verdict]}]{r.verdict}[/]",
                          escape(r.error or r.expected or ""))
        console.print(table)


def _segment(row: MetricRow) -> str:
    if row.segment is None:
        return ""
    return f"{row.group} ({row.segment})" if row.group and row.group != row.segment else row.segment
