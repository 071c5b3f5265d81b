"""The History panel: stored runs listed, shown, compared, labelled, summarized and pruned."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from enum import StrEnum
from typing import Annotated
from uuid import UUID

import typer

from argus.agent.clock import SystemClock
from argus.agent.history import RunDiff
from argus.config.schedules import format_duration
from argus.daemon.cli.root import HISTORY, env_settings, fail, with_store
from argus.daemon.cli_output import FormatOption, OutputFormat, age, emit, stdout_console
from argus.daemon.record import diff_runs
from argus.daemon.render import print_diff, print_report, print_runs
from argus.daemon.store import Label, NotFound, PostgresStore

__all__ = ['register']


class Verdict(StrEnum):
    tp = "tp"
    fp = "fp"
    expected = "expected"



def runs(collection: Annotated[str | None, typer.Option(help="collection, database.collection or "
                                                            "connection/database.collection",
                                                       show_default="every collection")] = None,
         limit: Annotated[int, typer.Option(min=1, help="runs to list")] = 20,
         output: FormatOption = OutputFormat.table) -> None:
    """List stored runs, newest first."""
    rows = with_store(lambda st: st.list_runs(
        collection=st.resolve_collection(collection) if collection else None, limit=limit))
    if output == OutputFormat.json:
        emit(json.dumps([r.model_dump(mode="json") for r in rows], indent=2))
    else:
        print_runs(rows, stdout_console())


def show(run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="run id (or a unique prefix)")],
         output: FormatOption = OutputFormat.table) -> None:
    """Show a stored report."""
    report = with_store(lambda st: st.get_report(st.find_run(run_id)))
    if output == OutputFormat.json:
        emit(report.model_dump_json(indent=2))
    else:
        print_report(report, stdout_console(), finding_ids=True)


def diff(run_ids: Annotated[list[str] | None, typer.Argument(metavar="[RUN_A] RUN_B", show_default=False,
                                                           help="compare RUN_B with RUN_A (RUN_A left out: with "
                                                                "the previous successful run)")] = None,
         collection: Annotated[str | None, typer.Option(help="compare the latest two runs of this collection")] = None,
         output: FormatOption = OutputFormat.table) -> None:
    """Compare two runs of one collection: new, resolved, persisting, regressed, improved."""
    given = list(run_ids or [])
    if len(given) > 2 or (not given and not collection):
        raise fail("give RUN_B, RUN_A RUN_B, or --collection C")
    settings = env_settings()

    def compute(st: PostgresStore) -> tuple[UUID, UUID, RunDiff]:
        if len(given) == 2:
            older, newer = st.find_run(given[0]), st.find_run(given[1])
        elif given:
            newer = st.find_run(given[0])
            report = st.get_report(newer)
            if report.diff is None or report.diff.previous_run_id is None:
                raise NotFound(f"run {newer} has no earlier successful run to compare with")
            older = report.diff.previous_run_id
        else:
            assert collection is not None
            latest = st.latest_runs(st.resolve_collection(collection), 2)
            if len(latest) < 2:
                raise NotFound(f"collection {collection!r} has fewer than two stored runs")
            newer, older = latest
        return older, newer, diff_runs(st, older, newer, growth_factor=settings.growth_factor)

    older, newer, result = with_store(compute)
    if output == OutputFormat.json:
        emit(result.model_dump_json(indent=2))
    else:
        print_diff(older, newer, result, stdout_console())


def label(run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="run id (or a unique prefix)")],
          finding_id: Annotated[str, typer.Argument(metavar="FINDING_ID", help="finding id (or a unique prefix), "
                                                                               "see `argus show`")],
          verdict: Annotated[Verdict, typer.Argument(metavar="VERDICT", help="tp: a real defect; fp: a false "
                                                                             "positive; expected: a planned anomaly "
                                                                             "(volume, freshness, drift)")],
          note: Annotated[str | None, typer.Option(help="why, for whoever reads the history")] = None) -> None:
    """Label a finding as a true or false positive, or an anomaly as expected; later audits take it into account."""

    def apply(st: PostgresStore) -> Label:
        run = st.find_run(run_id)
        report = st.get_report(run)
        matches = [f for f in report.findings if str(f.id).startswith(finding_id.lower())]
        if len(matches) != 1:
            raise NotFound(f"run {run} has {'no' if not matches else 'more than one'} finding matching "
                           f"{finding_id!r} (see `argus show {run}`)")
        return st.add_label(run, matches[0].id, verdict.value, note)

    result = with_store(apply)
    stdout_console().print(f"labelled {result.field} {result.category} as {result.verdict} "
                    f"(pattern {result.fingerprint[:12]})", highlight=False)


def history(collection: Annotated[str, typer.Argument(metavar="COLLECTION", help="collection, database.collection "
                                                                                 "or connection/database.collection")],
            runs_: Annotated[int | None, typer.Option("--runs", min=1, help="runs to consider",
                                                      show_default="ARGUS_HISTORY_RUNS or 10")] = None) -> None:
    """Show the historical context as the planner will see it."""
    settings = env_settings()
    context = with_store(lambda st: st.history(st.resolve_collection(collection),
                                                runs=runs_ or settings.history_runs,
                                                drift_tolerance=settings.drift_tolerance,
                                                growth_factor=settings.growth_factor))
    emit(context.render())


def prune(older_than: Annotated[str | None, typer.Option(help="delete runs that started longer ago than this: 90d, "
                                                                "12h, 30m (a bare number is days)",
                                                           show_default="ARGUS_RETENTION_DAYS or 90 days")] = None,
          dry_run: Annotated[bool, typer.Option("--dry-run", help="count what would be deleted; delete nothing")]
          = False,
          yes: Annotated[bool, typer.Option("--yes", "-y", help="delete without asking (scripts, cron)")] = False,
          ) -> None:
    """Delete runs older than the retention age (labels are kept). Asks first, unless --yes."""
    settings = env_settings()
    cutoff = age(older_than, option="--older-than") if older_than is not None else \
        timedelta(days=settings.retention_days)
    if cutoff.total_seconds() <= 0:
        raise fail("--older-than must be longer than zero (0 would delete every run)")
    days = cutoff.total_seconds() / 86400
    now = SystemClock().now()
    label = f"older than {format_duration(cutoff)} (started before {(now - cutoff).isoformat(timespec='seconds')})"
    count = with_store(lambda st: st.count_older(now, days))
    console = stdout_console()
    if dry_run or count == 0:
        console.print(f"{'would delete' if dry_run else 'nothing to delete:'} {count} run(s) {label}",
                      highlight=False)
        return
    if not yes:
        if not sys.stdin.isatty():
            raise fail(f"{count} run(s) {label} would be deleted: add --yes to delete them without asking, "
                        f"or --dry-run to only count them")
        if not typer.confirm(f"delete {count} run(s) {label}?", default=False):
            console.print("nothing deleted", highlight=False)
            return
    deleted = with_store(lambda st: st.prune(now, days))
    console.print(f"pruned {deleted} run(s) {label}", highlight=False)


def register(app: typer.Typer) -> None:
    for command in (runs, show, diff, label, history, prune):
        app.command(rich_help_panel=HISTORY)(command)
