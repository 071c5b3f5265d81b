"""The ``argus`` command line. Exit codes are defined, with their meaning, in ``argus.daemon.exit_codes``."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Callable
from datetime import UTC, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar
from uuid import UUID

import click
import httpx
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from argus.agent.clock import SystemClock
from argus.agent.contracts.model import Contract
from argus.agent.errors import ArgusError
from argus.agent.findings import Severity
from argus.agent.history import RunDiff
from argus.agent.llm.options import PlannerKind
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.report import ARGUS_VERSION, AuditReport
from argus.agent.secrets import SECRETS
from argus.agent.segments.models import SegmentOptions
from argus.agent.tools.target import AuditTarget
from argus.config.alerts import AlertsConfig
from argus.config.contracts import ContractError, load_contract
from argus.config.schedules import ScheduleError, ScopeSettings, format_duration, load_schedules
from argus.config.settings import Settings
from argus.daemon.alerts.cli import register as register_alert_commands
from argus.daemon.alerts.policy import AlertPolicy
from argus.daemon.alerts.sender import AlertSender
from argus.daemon.cli_output import FormatOption, OutputFormat, age, emit, option_problems, stdout_console
from argus.daemon.contracts_cli import register as register_contract_commands
from argus.daemon.custom_metrics_cli import register as register_metric_commands
from argus.daemon.exit_codes import ExitCode, audit_help
from argus.daemon.files import FILE_FORMATS
from argus.daemon.files.reader import LoadDeadline
from argus.daemon.findings_cli import register as register_finding_commands
from argus.daemon.http import parse_listen
from argus.daemon.incidents.chores import queue_due
from argus.daemon.incidents.cli import register as register_incident_commands
from argus.daemon.logs import configure_logging
from argus.daemon.metrics import Metrics
from argus.daemon.progress import AuditLines, LoadProgress
from argus.daemon.record import diff_runs, record_report
from argus.daemon.render import ProgressDisplay, StepLog, print_diff, print_report, print_runs
from argus.daemon.runner import ScheduleRunner
from argus.daemon.service import Daemon
from argus.daemon.sources import load_files, open_uri
from argus.daemon.spool import Spool
from argus.daemon.store import (
    CollectionRef,
    Label,
    NotFound,
    PostgresStore,
    StoreError,
    describe_store,
    open_store,
    store_configured,
)
from argus.daemon.store.outbox import AlertOutbox
from argus.daemon.triggers import next_fire_times

__all__ = ["app", "main"]

# suggest_commands off: click already says "Did you mean 'audit'?", typer said it a second time
app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, suggest_commands=False,
                  help="Argus: data-quality audits for MongoDB and Azure Cosmos DB.")

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_PARTIAL, EXIT_FAILED = (ExitCode.OK, ExitCode.FINDINGS, ExitCode.ERROR,
                                                                 ExitCode.PARTIAL, ExitCode.FAILED)

# `argus --help` lists the commands in the order a user meets them.
AUDIT, HISTORY, DAEMON, ALERTS = "Audit", "History", "Daemon", "Alerts"


class FailOn(StrEnum):
    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"
    none = "none"


class Verdict(StrEnum):
    tp = "tp"
    fp = "fp"
    expected = "expected"


class PlannerChoice(StrEnum):
    heuristic = "heuristic"
    llm = "llm"
    hybrid = "hybrid"


class Evaluators(StrEnum):
    fast = "fast"
    balanced = "balanced"
    thorough = "thorough"


class Privacy(StrEnum):
    strict = "strict"
    shapes = "shapes"
    full = "full"


def _version(value: bool) -> None:
    if value:
        Console().print(f"argus {ARGUS_VERSION}", highlight=False)
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                               help="print the version and exit")] = False) -> None:
    """Argus: data-quality audits for MongoDB and Azure Cosmos DB."""


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"argus: error: {SECRETS.redact(message)}", highlight=False, markup=False,
                               soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def _settings() -> Settings:
    """Settings from the environment; a bad ``ARGUS_*`` value is one line naming the variable
    (never its value, which may be a secret)."""
    try:
        return Settings()
    except ValidationError as exc:
        messages = [(e["loc"], e["msg"].removeprefix("Value error, "))
                    for e in exc.errors(include_input=False, include_url=False)]
        problems = [f"{'ARGUS_' + '_'.join(map(str, loc)).upper()}: {msg[:1].lower()}{msg[1:]}"
                    for loc, msg in messages]
        raise _fail(f"invalid environment variable {'; '.join(problems)}") from None


@app.command(rich_help_panel=AUDIT, help=audit_help(
    "Audit one collection and print its report (with its diff against the last run when stored)."))
def audit(
    file: Annotated[list[Path] | None, typer.Option("--file", help=f"file to audit: {FILE_FORMATS}; repeat it to "
                                                                    "load more collections beside the first (a "
                                                                    "contract's references)")] = None,
    uri: Annotated[str | None, typer.Option("--uri", envvar="ARGUS_MONGODB_URI", show_envvar=True,
                                            help="MongoDB / Cosmos DB connection string (read-only use)")] = None,
    database: Annotated[str | None, typer.Option("--database", help="database (with --uri)")] = None,
    collection: Annotated[str | None, typer.Option("--collection", help="collection (needed with --uri)",
                                                   show_default="with --file: the file's name")] = None,
    output: Annotated[OutputFormat, typer.Option("--format", help="table or json (the report on stdout)")] = \
        OutputFormat.table,
    fail_on: Annotated[FailOn | None, typer.Option("--fail-on", help="exit 1 when a finding is at least this severe",
                                                   show_default="ARGUS_FAIL_ON or high")] = None,
    sample_size: Annotated[int | None, typer.Option(min=1, max=10_000, help="documents $sample reads",
                                                    show_default="ARGUS_SAMPLE_SIZE or 1000")] = None,
    max_iterations: Annotated[int | None, typer.Option(min=1, help="planner steps before the run ends partial",
                                                       show_default="ARGUS_MAX_ITERATIONS or 200")] = None,
    time_budget: Annotated[float | None, typer.Option(help="wall-clock budget in seconds",
                                                      show_default="ARGUS_TIME_BUDGET_S or 300")] = None,
    max_time_ms: Annotated[int | None, typer.Option(min=1, help="server time limit of every query",
                                                    show_default="ARGUS_MAX_TIME_MS or 10000")] = None,
    privacy: Annotated[Privacy | None, typer.Option(help="strict, shapes or full: sample values in the report",
                                                    show_default="ARGUS_PRIVACY or shapes")] = None,
    store: Annotated[bool | None, typer.Option("--store/--no-store", help="keep the report in the history database "
                                                                         "(--store starts the embedded one if needed)",
                                               show_default="store only when ARGUS_DATABASE_URL is set")] = None,
    planner_choice: Annotated[PlannerChoice | None, typer.Option(
        "--planner", help="heuristic (no model), llm, or hybrid (rules first, then the model)",
        show_default="ARGUS_PLANNER or heuristic")] = None,
    model: Annotated[str | None, typer.Option("--model", help="model name (Azure: the model behind the deployment)",
                                              show_default="ARGUS_LLM_MODEL or gpt-4o-mini")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint, e.g. "
                                                                    "http://localhost:11434/v1 for Ollama",
                                                 show_default="ARGUS_LLM_BASE_URL or the provider's")] = None,
    evaluators: Annotated[Evaluators | None, typer.Option(help="fast (rules only), balanced or thorough",
                                                          show_default="ARGUS_LLM_EVALUATORS or fast")] = None,
    contract_file: Annotated[Path | None, typer.Option("--contract", help="a data contract (YAML: Argus's rules or "
                                                                          "ODCS) to check besides what Argus infers; "
                                                                          "see docs/contracts.md")] = None,
    since: Annotated[str | None, typer.Option("--since", help="audit only documents this recent, e.g. 24h (a scoped "
                                                              "audit; see docs/scope.md)",
                                              show_default="the whole collection")] = None,
    scope_field: Annotated[str | None, typer.Option("--scope-field", help="date field of --since",
                                                    show_default="the ObjectId time of _id")] = None,
    full_every: Annotated[str | None, typer.Option("--full-every", help="with --since and a history: audit the whole "
                                                                        "collection when the last full audit is "
                                                                        "older than this, e.g. 7d")] = None,
    segment_by: Annotated[list[str] | None, typer.Option("--segment-by", help="break findings down, and judge "
                                                                               "volume, freshness and null rates, "
                                                                               "by this field's values (repeat for "
                                                                               "up to 3 fields); see "
                                                                               "docs/segments.md")] = None,
    segment_top: Annotated[int, typer.Option("--segment-top", help="segments named, by documents; the rest count "
                                                                   "as 'other'")] = 50,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="log each step to stderr")] = False,
) -> None:
    """Audit one collection and print its report; the help text, exit codes included, is set above."""
    settings = _settings()
    configure_logging("INFO" if verbose else "WARNING", settings.log_format)
    threshold = settings.fail_on if fail_on is None else None if fail_on == FailOn.none else Severity(fail_on.value)
    try:
        options = settings.audit_options(sample_size=sample_size, max_iterations=max_iterations,
                                         time_budget_s=time_budget, max_time_ms=max_time_ms,
                                         privacy=privacy.value if privacy else None)
        options = options.model_copy(update={"fail_on": threshold})
        if segment_by:
            options = options.model_copy(update={"segments": SegmentOptions(by=segment_by, top=segment_top)})
    except ValidationError as exc:
        if segment_by and any(e["loc"][:1] in (("by",), ("top",)) for e in exc.errors()):
            problem = exc.errors()[0]
            flag = "--segment-by" if problem["loc"][0] == "by" else "--segment-top"
            raise _fail(f"invalid option {flag}: {str(problem['msg']).removeprefix('Value error, ')}") from None
        raise _fail(f"invalid option {option_problems(exc)}") from None
    except ValueError as exc:
        raise _fail(f"invalid option: {exc}") from None
    loading = LoadDeadline.after(options.time_budget_s)
    target = _target(file, uri, database, collection, options.max_time_ms, loading)
    # Loading a file counted against the budget: the audit gets what is left of it.
    options = options.model_copy(update={"time_budget_s": max(round(loading.at - loading.clock(), 2), 0.01)})
    contract = _contract(contract_file, target.name)
    console = Console(stderr=True)
    # Predictable: a plain `argus audit` stores only when a history database is configured, never
    # because the daemon happened to create the embedded one.
    keep = store if store is not None else settings.database_url is not None
    history_store = _open_store(settings) if keep else None
    context = None
    if history_store is not None:
        ref = CollectionRef(target.connection_name, target.database, target.name)
        context = _store_call(lambda: history_store.history(
            ref, runs=settings.history_runs, drift_tolerance=settings.drift_tolerance,
            growth_factor=settings.growth_factor, health_runs=options.health.window))
    options, why_full = _scope(options, since, scope_field, full_every, history_store, target)
    kind: PlannerKind = planner_choice.value if planner_choice is not None else settings.planner
    try:
        llm = None if kind == "heuristic" else settings.llm_options(
            model=model, base_url=base_url, evaluators=evaluators.value if evaluators else None)
        setup = make_planner(kind, llm=llm)
    except (ArgusError, ValueError) as exc:
        raise _fail(str(exc)) from None
    label = f"{target.database}.{target.name}"
    steps = StepLog() if verbose else None
    if output == OutputFormat.table and console.is_terminal:
        with ProgressDisplay(console, label, steps) as progress:
            report = run_audit(target, setup.planner, options=options, observer=progress, historical_context=context,
                               gates=setup.gates, llm=setup.account, contract=contract)
    else:
        report = run_audit(target, setup.planner, options=options, observer=AuditLines(console, label, steps),
                           historical_context=context, gates=setup.gates, llm=setup.account, contract=contract)
    if why_full:
        report = report.model_copy(update={"notes": [why_full, *report.notes]})
    if history_store is not None:
        report = _store_call(lambda: record_report(history_store, report, growth_factor=settings.growth_factor),
                             unsaved=report)
        history_store.close()
    if output == OutputFormat.json:
        emit(report.model_dump_json(indent=2))
    else:
        print_report(report, stdout_console())
    if history_store is not None:
        why = "--store" if store else "ARGUS_DATABASE_URL is set"
        (Console(stderr=True) if output == OutputFormat.json else stdout_console()).print(
            f"stored as run {str(report.run_id)[:8]} in {describe_store(settings)} ({why}; --no-store skips)",
            highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(_exit_code(report, options.fail_on))


def _contract(path: Path | None, collection: str) -> Contract | None:
    if path is None:
        return None
    try:
        return load_contract(path, collection=collection)
    except ContractError as exc:
        raise _fail("the contract is invalid:\n" + "\n".join(exc.problems)) from None


def _scope(options: AuditOptions, since: str | None, field: str | None, full_every: str | None,
           history_store: PostgresStore | None, target: AuditTarget) -> tuple[AuditOptions, str | None]:
    """The audit's window from --since/--scope-field/--full-every (a usage error names the option)."""
    if since is None:
        if field is not None or full_every is not None:
            raise _fail(f"{'--scope-field' if field is not None else '--full-every'} needs --since (e.g. --since 24h)")
        return options, None
    try:
        scope = ScopeSettings.model_validate({"field": field, "since": since, "full_every": full_every})
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        option = {"since": "--since", "full_every": "--full-every", "field": "--scope-field"}[str(problem["loc"][0])]
        raise _fail(f"invalid option {option}: {problem['msg'].removeprefix('Value error, ')}") from None
    last_full = None
    if full_every is not None:
        if history_store is None:
            raise _fail("--full-every needs the history of earlier audits: add --store (or set ARGUS_DATABASE_URL)")
        last_full = _store_call(lambda: history_store.last_full_audit(
            CollectionRef(target.connection_name, target.database, target.name)))
    window, why_full = scope.for_run(last_full, SystemClock().now())
    return options.model_copy(update={"scope": window}), why_full


def _target(files: list[Path] | None, uri: str | None, database: str | None, collection: str | None,
            max_time_ms: int, deadline: LoadDeadline | None = None) -> AuditTarget:
    if (not files) == (uri is None):
        raise _fail("give exactly one of --file PATH or --uri URI")
    try:
        if files:
            with contextlib.ExitStack() as stack:
                def progress(name: str) -> Any:
                    return stack.enter_context(LoadProgress(Console(stderr=True), name))

                return load_files(files, collection=collection, max_time_ms=max_time_ms, progress=progress,
                                  deadline=deadline)
        assert uri is not None
        source = "ARGUS_MONGODB_URI" if os.environ.get("ARGUS_MONGODB_URI") == uri else "--uri"
        if not database or not collection:
            raise _fail(f"{source} needs --database and --collection")
        return open_uri(uri, database=database, collection=collection, max_time_ms=max_time_ms, source=source)
    except ArgusError as exc:
        raise _fail(str(exc)) from None


def _open_store(settings: Settings) -> PostgresStore:
    try:
        opened = open_store(settings)
    except StoreError as exc:
        raise _fail(str(exc)) from None
    return opened


T = TypeVar("T")


def _store_call(call: Callable[[], T], unsaved: AuditReport | None = None) -> T:
    try:
        return call()
    except StoreError as exc:
        if unsaved is not None:
            emit(unsaved.model_dump_json(indent=2))
            raise _fail(f"report {unsaved.run_id} was not stored: {exc}") from None
        raise _fail(str(exc)) from None


_STORE_HELP = ("History is read from ARGUS_DATABASE_URL when set, else from the embedded PostgreSQL in "
               "ARGUS_DATA_DIR (default ~/.local/share/argus), shared by every Argus command and daemon of this "
               "user on this machine; each listing names its store on its first line.")
_LISTINGS = {"runs", "show", "diff", "history", "mutes", "alerts", "incidents", "incident show"}


def _with_store(action: Callable[[PostgresStore], T]) -> T:
    settings = _settings()
    configure_logging("WARNING", settings.log_format)
    if not store_configured(settings):
        raise _fail(f"no history yet in {describe_store(settings)}: set ARGUS_DATABASE_URL or ARGUS_DATA_DIR, "
                    "or run `argus audit ... --store` first")
    with _open_store(settings) as opened:
        result = _store_call(lambda: action(opened))
    _name_store(describe_store(settings))
    return result


def _name_store(where: str) -> None:
    """A listing's first line says which history it read (not in JSON, which stays one document)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.command_path.split(" ", 1)[-1] not in _LISTINGS or ctx.params.get("output") == "json":
        return
    emit(f"history: {where}")


@app.command(rich_help_panel=HISTORY)
def runs(collection: Annotated[str | None, typer.Option(help="collection, database.collection or "
                                                            "connection/database.collection",
                                                       show_default="every collection")] = None,
         limit: Annotated[int, typer.Option(min=1, help="runs to list")] = 20,
         output: FormatOption = OutputFormat.table) -> None:
    """List stored runs, newest first."""
    rows = _with_store(lambda st: st.list_runs(
        collection=st.resolve_collection(collection) if collection else None, limit=limit))
    if output == OutputFormat.json:
        emit(json.dumps([r.model_dump(mode="json") for r in rows], indent=2))
    else:
        print_runs(rows, stdout_console())


@app.command(rich_help_panel=HISTORY)
def show(run_id: Annotated[str, typer.Argument(metavar="RUN_ID", help="run id (or a unique prefix)")],
         output: FormatOption = OutputFormat.table) -> None:
    """Show a stored report."""
    report = _with_store(lambda st: st.get_report(st.find_run(run_id)))
    if output == OutputFormat.json:
        emit(report.model_dump_json(indent=2))
    else:
        print_report(report, stdout_console(), finding_ids=True)


@app.command(rich_help_panel=HISTORY)
def diff(run_ids: Annotated[list[str] | None, typer.Argument(metavar="[RUN_A] RUN_B", show_default=False,
                                                           help="compare RUN_B with RUN_A (RUN_A left out: with "
                                                                "the previous successful run)")] = None,
         collection: Annotated[str | None, typer.Option(help="compare the latest two runs of this collection")] = None,
         output: FormatOption = OutputFormat.table) -> None:
    """Compare two runs of one collection: new, resolved, persisting, regressed, improved."""
    given = list(run_ids or [])
    if len(given) > 2 or (not given and not collection):
        raise _fail("give RUN_B, RUN_A RUN_B, or --collection C")
    settings = _settings()

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

    older, newer, result = _with_store(compute)
    if output == OutputFormat.json:
        emit(result.model_dump_json(indent=2))
    else:
        print_diff(older, newer, result, stdout_console())


@app.command(rich_help_panel=HISTORY)
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

    result = _with_store(apply)
    stdout_console().print(f"labelled {result.field} {result.category} as {result.verdict} "
                    f"(pattern {result.fingerprint[:12]})", highlight=False)


@app.command(rich_help_panel=HISTORY)
def history(collection: Annotated[str, typer.Argument(metavar="COLLECTION", help="collection, database.collection "
                                                                                 "or connection/database.collection")],
            runs_: Annotated[int | None, typer.Option("--runs", min=1, help="runs to consider",
                                                      show_default="ARGUS_HISTORY_RUNS or 10")] = None) -> None:
    """Show the historical context as the planner will see it."""
    settings = _settings()
    context = _with_store(lambda st: st.history(st.resolve_collection(collection),
                                                runs=runs_ or settings.history_runs,
                                                drift_tolerance=settings.drift_tolerance,
                                                growth_factor=settings.growth_factor))
    emit(context.render())


@app.command(rich_help_panel=HISTORY)
def prune(older_than: Annotated[str | None, typer.Option(help="delete runs that started longer ago than this: 90d, "
                                                                "12h, 30m (a bare number is days)",
                                                           show_default="ARGUS_RETENTION_DAYS or 90 days")] = None,
          dry_run: Annotated[bool, typer.Option("--dry-run", help="count what would be deleted; delete nothing")]
          = False,
          yes: Annotated[bool, typer.Option("--yes", "-y", help="delete without asking (scripts, cron)")] = False,
          ) -> None:
    """Delete runs older than the retention age (labels are kept). Asks first, unless --yes."""
    settings = _settings()
    cutoff = age(older_than, option="--older-than") if older_than is not None else \
        timedelta(days=settings.retention_days)
    if cutoff.total_seconds() <= 0:
        raise _fail("--older-than must be longer than zero (0 would delete every run)")
    days = cutoff.total_seconds() / 86400
    now = SystemClock().now()
    label = f"older than {format_duration(cutoff)} (started before {(now - cutoff).isoformat(timespec='seconds')})"
    count = _with_store(lambda st: st.count_older(now, days))
    console = stdout_console()
    if dry_run or count == 0:
        console.print(f"{'would delete' if dry_run else 'nothing to delete:'} {count} run(s) {label}",
                      highlight=False)
        return
    if not yes:
        if not sys.stdin.isatty():
            raise _fail(f"{count} run(s) {label} would be deleted: add --yes to delete them without asking, "
                        f"or --dry-run to only count them")
        if not typer.confirm(f"delete {count} run(s) {label}?", default=False):
            console.print("nothing deleted", highlight=False)
            return
    deleted = _with_store(lambda st: st.prune(now, days))
    console.print(f"pruned {deleted} run(s) {label}", highlight=False)


register_alert_commands(app, _with_store, _fail, panel=ALERTS)
register_contract_commands(app, _target, _fail, _settings, panel=AUDIT)
register_incident_commands(app, _with_store, _fail, panel=ALERTS)
register_finding_commands(app, _with_store, _fail, panel=HISTORY)
register_metric_commands(app, _with_store, panel=HISTORY)

schedules_app = typer.Typer(no_args_is_help=True, help="Work with schedules files: `argus schedules check`.")
app.add_typer(schedules_app, name="schedules", rich_help_panel=DAEMON)


@schedules_app.command("check")
def schedules_check(file: Annotated[Path | None, typer.Argument(metavar="[FILE]", help="the schedules file",
                                                                show_default="ARGUS_SCHEDULES or ./schedules.yaml")
                                    ] = None,
                    count: Annotated[int, typer.Option(min=1, help="fire times to show per schedule")] = 3) -> None:
    """Validate a schedules file and print each schedule's next fire times; exit 1 on errors."""
    path = file or _settings().schedules
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


@app.command(rich_help_panel=DAEMON)
def daemon(schedules: Annotated[Path | None, typer.Option("--schedules", help="the schedules file",
                                                          show_default="ARGUS_SCHEDULES or ./schedules.yaml")] = None,
           listen: Annotated[str | None, typer.Option(help="HOST:PORT of /status and /metrics (0.0.0.0:9464 "
                                                           "listens on every interface)",
                                                      show_default="ARGUS_LISTEN or 127.0.0.1:9464")] = None,
           ) -> None:
    """Run the scheduler: audit every schedule on its trigger, store reports, serve /metrics and /status."""
    settings = _settings()
    configure_logging(settings.log_level, settings.log_format)
    try:
        address = parse_listen(listen or settings.listen)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    service = Daemon(settings, schedules_path=schedules or settings.schedules, listen=address)
    # before start: a SIGTERM while it starts (audits already running, /readyz answering) is a clean stop
    service.install_signal_handlers()
    try:
        service.start()
    except ScheduleError as exc:
        raise _fail("the schedules file is invalid:\n" + "\n".join(exc.problems)) from None
    except (ArgusError, OSError) as exc:
        raise _fail(f"cannot start: {exc}") from None
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


@app.command(rich_help_panel=DAEMON, help=audit_help(
    "Run one schedule once, now, in the foreground (for cron-style deployment and trying a schedule)."))
def run(name: Annotated[str, typer.Argument(metavar="SCHEDULE", help="the schedule's name")],
        schedules: Annotated[Path | None, typer.Option("--schedules", help="the schedules file",
                                                       show_default="ARGUS_SCHEDULES or ./schedules.yaml")] = None,
        output: FormatOption = OutputFormat.table) -> None:
    """Run one schedule once, now; its exit code follows the schedule's fail_on."""
    settings = _settings()
    configure_logging("WARNING", settings.log_format)
    try:
        loaded = load_schedules(schedules or settings.schedules)
    except ScheduleError as exc:
        raise _fail("the schedules file is invalid:\n" + "\n".join(exc.problems)) from None
    if name not in loaded.schedules:
        raise _fail(f"no schedule named {name!r} (known: {', '.join(sorted(loaded.schedules)) or 'none'})")
    history_store = _open_store(settings)
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
        raise _fail(f"schedule {name!r} was not run: another process is running it, or the history database "
                    f"could not be reached")
    if output == OutputFormat.json:
        emit(report.model_dump_json(indent=2))
    else:
        print_report(report, stdout_console())
    if unusable is not None and report.outcome == "failed":
        raise _fail(f"{unusable} (stored as failed run {str(report.run_id)[:8]})")
    raise typer.Exit(_exit_code(report, loaded.schedules[name].settings.fail_on))


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


def _exit_code(report: AuditReport, fail_on: Severity | None) -> int:
    """A run that did not finish never looks clean: partial and failed outrank findings (as in Soda, 3+)."""
    if report.outcome == "failed":
        Console(stderr=True).print(f"argus: error: audit failed: {SECRETS.redact(report.error or '')}", markup=False,
                                   highlight=False)
        return EXIT_FAILED
    if report.outcome == "partial":
        why = "planned checks went unanswered or declared rules were not checked: see the notes" \
            if report.termination_reason == "concluded" \
            else report.termination_reason
        Console(stderr=True).print(f"argus: warning: partial audit ({why}): "
                                   f"{len(report.findings)} findings so far", markup=False, highlight=False)
        return EXIT_PARTIAL
    warned = report.contract.warned_only() if report.contract is not None else set()  # warn, never fail
    if fail_on is not None and [f for f in report.findings_at_or_above(fail_on) if f.id not in warned]:
        return EXIT_FINDINGS
    return EXIT_OK


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except Exception as exc:  # last resort: one line, no traceback
        Console(stderr=True).print(f"argus: error: internal error: {type(exc).__name__}: {SECRETS.redact(str(exc))}",
                                   markup=False)
        sys.exit(EXIT_ERROR)


app.info.epilog = _STORE_HELP
for _command in app.registered_commands:
    if _command.rich_help_panel in (HISTORY, ALERTS):
        _command.epilog = _STORE_HELP

if __name__ == "__main__":
    main()
