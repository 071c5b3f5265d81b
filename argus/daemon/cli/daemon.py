"""The Daemon panel: `argus daemon` (the scheduler) and `argus run` (one schedule, once, now)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Annotated

import httpx
import typer
from rich.console import Console

from argus.agent.clock import SystemClock
from argus.agent.errors import ArgusError
from argus.agent.llm.extra import require_llm_extra_for
from argus.agent.report import AuditReport
from argus.config.alerts import AlertsConfig
from argus.config.schedules import ScheduleError, load_schedules
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.alerts.sender import AlertSender
from argus.daemon.cli.root import DAEMON, EXIT_OK, env_settings, exit_code, fail, open_history_store
from argus.daemon.cli_output import FormatOption, OutputFormat, emit, stdout_console
from argus.daemon.exit_codes import audit_help
from argus.daemon.http import parse_listen
from argus.daemon.incidents.chores import queue_due
from argus.daemon.logs import configure_logging
from argus.daemon.metrics import Metrics
from argus.daemon.render import print_report
from argus.daemon.runner import ScheduleRunner
from argus.daemon.service import Daemon
from argus.daemon.spool import Spool
from argus.daemon.store import PostgresStore, StoreError
from argus.daemon.store.outbox import AlertOutbox

__all__ = ['register']


def daemon(schedules: Annotated[Path | None, typer.Option("--schedules", help="the schedules file",
                                                          show_default="ARGUS_SCHEDULES or ./schedules.yaml")] = None,
           listen: Annotated[str | None, typer.Option(help="HOST:PORT of /status and /metrics (0.0.0.0:9464 "
                                                           "listens on every interface)",
                                                      show_default="ARGUS_LISTEN or 127.0.0.1:9464")] = None,
           ) -> None:
    """Run the scheduler: audit every schedule on its trigger, store reports, serve /metrics and /status."""
    settings = env_settings()
    configure_logging(settings.log_level, settings.log_format)
    try:
        address = parse_listen(listen or settings.listen)
    except ValueError as exc:
        raise fail(str(exc)) from None
    service = Daemon(settings, schedules_path=schedules or settings.schedules, listen=address)
    # before start: a SIGTERM while it starts (audits already running, /readyz answering) is a clean stop
    service.install_signal_handlers()
    try:
        service.start()
    except ScheduleError as exc:
        raise fail("the schedules file is invalid:\n" + "\n".join(exc.problems)) from None
    except (ArgusError, OSError) as exc:
        raise fail(f"cannot start: {exc}") from None
    host, port = (str(service.http.address[0]), int(service.http.address[1])) if service.http else address
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    Console(stderr=True).print(f"argus daemon: status http://{shown}:{port}/status · metrics http://{shown}:{port}"
                               f"/metrics · history in {service.store_where}", markup=False, highlight=False)
    while not service.wait(1.0):
        pass
    service.shutdown()
    if service.must_exit_now() or any(t.is_alive() for t in threading.enumerate()
                                      if t is not threading.main_thread() and not t.daemon):
        # an audit thread stuck in a query past its time limit (its run is recorded as interrupted):
        # a normal exit would join it, the audit pool's threads included, however long it takes
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_OK)
    raise typer.Exit(EXIT_OK)


def run(name: Annotated[str, typer.Argument(metavar="SCHEDULE", help="the schedule's name")],
        schedules: Annotated[Path | None, typer.Option("--schedules", help="the schedules file",
                                                       show_default="ARGUS_SCHEDULES or ./schedules.yaml")] = None,
        output: FormatOption = OutputFormat.table) -> None:
    """Run one schedule once, now; its exit code follows the schedule's fail_on."""
    settings = env_settings()
    configure_logging("WARNING", settings.log_format)
    try:
        loaded = load_schedules(schedules or settings.schedules)
    except ScheduleError as exc:
        raise fail("the schedules file is invalid:\n" + "\n".join(exc.problems)) from None
    if name not in loaded.schedules:
        raise fail(f"no schedule named {name!r} (known: {', '.join(sorted(loaded.schedules)) or 'none'})")
    try:
        require_llm_extra_for({name: loaded.schedules[name].settings.planner})
    except ArgusError as exc:
        raise fail(str(exc)) from None
    history_store = open_history_store(settings)
    runner = ScheduleRunner(store=history_store, spool=Spool(settings.data_dir / "spool"), metrics=Metrics(),
                            settings=settings)
    runner.alerts = AlertPolicy.of(loaded)
    schedule = loaded.schedules[name]
    unusable = None
    try:  # what `argus audit` refuses as bad input; the run below records it as a failed run too
        runner.sources.target(schedule.connection, loaded.connections[schedule.connection], schedule.database,
                              schedule.collection, max_time_ms=schedule.settings.max_time_ms,
                              where=loaded.connection_where(schedule.connection))
    except ArgusError as exc:
        unusable = str(exc)
    try:
        report = runner.run(loaded, name)
        if report is not None:
            report = _stored(history_store, report)
        if report is not None and loaded.alerts.channels:
            _queue_incident_notices(history_store, runner.alerts)
            _deliver_alerts(history_store, loaded.alerts)
    finally:
        runner.sources.close()
        history_store.close()
    if report is None:
        raise fail(f"schedule {name!r} was not run: another process is running it, or the history database "
                    f"could not be reached")
    if output == OutputFormat.json:
        emit(report.model_dump_json(indent=2))
    else:
        print_report(report, stdout_console())
    if unusable is not None and report.outcome == "failed":
        raise fail(f"{unusable} (stored as failed run {str(report.run_id)[:8]})")
    raise typer.Exit(exit_code(report, loaded.schedules[name].settings.fail_on))


def _stored(history_store: PostgresStore, report: AuditReport) -> AuditReport:
    """The report as stored, with its diff (as `argus show` prints it); the runner's copy when the
    history database did not take it (it waits in the spool)."""
    try:
        return history_store.get_report(report.run_id)
    except StoreError:
        return report


def _queue_incident_notices(history_store: PostgresStore, policy: AlertPolicy | None) -> None:
    """Reminders due now and notices of status changes made since the last run (no daemon does it)."""
    try:
        queue_due(history_store, SystemClock().now(), policy)
    except StoreError as exc:
        Console(stderr=True).print(f"incidents: reminders not queued: {exc}", markup=False, highlight=False)


def _deliver_alerts(history_store: PostgresStore, config: AlertsConfig) -> None:
    """One delivery attempt in the foreground; what fails waits in the outbox for the daemon."""
    outbox = AlertOutbox(history_store)
    with httpx.Client() as client:
        try:
            sent = AlertSender(outbox=outbox, config=lambda: config, client=client).deliver_due()
            pending = outbox.pending()
        except StoreError as exc:
            Console(stderr=True).print(f"alerts: not delivered: {exc}", markup=False, highlight=False)
            return
    if sent or pending:
        Console(stderr=True).print(f"alerts: {sent} delivered, {pending} waiting in the outbox", highlight=False)


def register(app: typer.Typer) -> None:
    app.command(rich_help_panel=DAEMON)(daemon)
    app.command(rich_help_panel=DAEMON, help=audit_help(
        "Run one schedule once, now, in the foreground (for cron-style deployment and trying a schedule)."))(run)
