"""`argus schedules check`: a schedules file validated, each schedule's next fire times shown."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from argus.agent.clock import SystemClock
from argus.agent.errors import ArgusError
from argus.config.schedules import ScheduleError, load_schedules
from argus.daemon.cli.root import DAEMON, EXIT_FINDINGS, env_settings
from argus.daemon.cli_output import stdout_console
from argus.daemon.triggers import next_fire_times

__all__ = ['register']


schedules_app = typer.Typer(no_args_is_help=True, help="Work with schedules files: `argus schedules check`.")


@schedules_app.command("check")
def schedules_check(file: Annotated[Path | None, typer.Argument(metavar="[FILE]", help="the schedules file",
                                                                show_default="ARGUS_SCHEDULES or ./schedules.yaml")
                                    ] = None,
                    count: Annotated[int, typer.Option(min=1, help="fire times to show per schedule")] = 3) -> None:
    """Validate a schedules file and print each schedule's next fire times; exit 1 on errors."""
    path = file or env_settings().schedules
    try:
        loaded = load_schedules(path)
    except ScheduleError as exc:
        err = Console(stderr=True)
        for problem in exc.problems:
            err.print(problem, markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FINDINGS) from None
    console = stdout_console()
    now = SystemClock().now()
    table = Table(header_style="bold")
    for column in ("schedule", "enabled", "collection", "trigger", "next fire times (UTC)"):
        table.add_column(column, overflow="fold")
    for name, s in sorted(loaded.schedules.items()):
        times = ", ".join(t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") for t in next_fire_times(s.trigger, now,
                                                                                                   count))
        table.add_row(name, "yes" if s.enabled else "no", f"{s.connection}/{s.database}.{s.collection}",
                      s.trigger.describe(), times if s.enabled else f"(disabled) {times}")
    console.print(table)
    for name, s in sorted(loaded.schedules.items()):
        if s.contract is not None:
            console.print(f"{name}: contract {s.contract.source}: {len(s.contract.checks)} rules", markup=False,
                          highlight=False, soft_wrap=True)
            for note in s.contract.notes:
                console.print(f"warning: {name}: {s.contract.source} {note}", markup=False, highlight=False,
                              soft_wrap=True)
    missing = []
    for name, conn in sorted(loaded.connections.items()):
        if conn.files is None:
            try:
                conn.uri(loaded.connection_where(name))
            except ArgusError as exc:
                console.print(f"warning: {exc}; its schedules will fail until it is",
                              markup=False, highlight=False)
            continue
        for collection, data in sorted(conn.files.items()):
            if not data.is_file():
                missing.append(f"{loaded.connection_where(name)}.files.{collection}: {data} "
                               f"{'is a directory' if data.is_dir() else 'does not exist'}")
    for name, channel in sorted(loaded.alerts.channels.items()):
        try:  # read as a delivery would; only the error is printed, never what was read
            channel.resolve_url()
            channel.resolve_secret()
        except ArgusError as exc:
            console.print(f"warning: alerts.channels.{name}: {exc}; alerts to it will fail until it is",
                          markup=False, highlight=False, soft_wrap=True)
    if missing:
        err = Console(stderr=True)
        for problem in missing:
            err.print(problem, markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FINDINGS)
    console.print(f"{path}: {len(loaded.schedules)} schedule(s), valid", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(schedules_app, name="schedules", rich_help_panel=DAEMON)
