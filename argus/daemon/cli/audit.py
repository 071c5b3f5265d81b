"""`argus audit`: one collection, audited now, its report printed (and stored)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from argus.agent.clock import SystemClock
from argus.agent.contracts.model import Contract
from argus.agent.errors import ArgusError
from argus.agent.findings import Severity
from argus.agent.llm.options import PlannerKind
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.segments.models import SegmentOptions
from argus.agent.tools.target import AuditTarget
from argus.config.contracts import ContractError, load_contract
from argus.config.schedule_models import ScopeSettings
from argus.daemon.cli.root import AUDIT, env_settings, exit_code, fail, open_history_store, open_target, store_call
from argus.daemon.cli_output import OutputFormat, emit, option_problems, stdout_console
from argus.daemon.exit_codes import audit_help
from argus.daemon.files import FILE_FORMATS
from argus.daemon.files.reader import LoadDeadline
from argus.daemon.logs import configure_logging
from argus.daemon.progress import AuditLines
from argus.daemon.record import record_report
from argus.daemon.render import ProgressDisplay, StepLog, print_report
from argus.daemon.store import CollectionRef, PostgresStore, describe_store

__all__ = ['register']


class FailOn(StrEnum):
    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"
    none = "none"



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
    settings = env_settings()
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
            raise fail(f"invalid option {flag}: {str(problem['msg']).removeprefix('Value error, ')}") from None
        raise fail(f"invalid option {option_problems(exc)}") from None
    except ValueError as exc:
        raise fail(f"invalid option: {exc}") from None
    loading = LoadDeadline.after(options.time_budget_s)
    target = open_target(file, uri, database, collection, options.max_time_ms, loading)
    # Loading a file counted against the budget: the audit gets what is left of it.
    options = options.model_copy(update={"time_budget_s": max(round(loading.at - loading.clock(), 2), 0.01)})
    contract = _contract(contract_file, target.name)
    console = Console(stderr=True)
    # Predictable: a plain `argus audit` stores only when a history database is configured, never
    # because the daemon happened to create the embedded one.
    keep = store if store is not None else settings.database_url is not None
    history_store = open_history_store(settings) if keep else None
    context = None
    if history_store is not None:
        ref = CollectionRef(target.connection_name, target.database, target.name)
        context = store_call(lambda: history_store.history(
            ref, runs=settings.history_runs, drift_tolerance=settings.drift_tolerance,
            growth_factor=settings.growth_factor, health_runs=options.health.window))
    options, why_full = _scope(options, since, scope_field, full_every, history_store, target)
    kind: PlannerKind = planner_choice.value if planner_choice is not None else settings.planner
    try:
        llm = None if kind == "heuristic" else settings.llm_options(
            model=model, base_url=base_url, evaluators=evaluators.value if evaluators else None)
        setup = make_planner(kind, llm=llm)
    except (ArgusError, ValueError) as exc:
        raise fail(str(exc)) from None
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
        report = store_call(lambda: record_report(history_store, report, growth_factor=settings.growth_factor),
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
    raise typer.Exit(exit_code(report, options.fail_on))


def _contract(path: Path | None, collection: str) -> Contract | None:
    if path is None:
        return None
    try:
        return load_contract(path, collection=collection)
    except ContractError as exc:
        raise fail("the contract is invalid:\n" + "\n".join(exc.problems)) from None


def _scope(options: AuditOptions, since: str | None, field: str | None, full_every: str | None,
           history_store: PostgresStore | None, target: AuditTarget) -> tuple[AuditOptions, str | None]:
    """The audit's window from --since/--scope-field/--full-every (a usage error names the option)."""
    if since is None:
        if field is not None or full_every is not None:
            raise fail(f"{'--scope-field' if field is not None else '--full-every'} needs --since (e.g. --since 24h)")
        return options, None
    try:
        scope = ScopeSettings.model_validate({"field": field, "since": since, "full_every": full_every})
    except ValidationError as exc:
        problem = exc.errors(include_url=False)[0]
        option = {"since": "--since", "full_every": "--full-every", "field": "--scope-field"}[str(problem["loc"][0])]
        raise fail(f"invalid option {option}: {problem['msg'].removeprefix('Value error, ')}") from None
    last_full = None
    if full_every is not None:
        if history_store is None:
            raise fail("--full-every needs the history of earlier audits: add --store (or set ARGUS_DATABASE_URL)")
        last_full = store_call(lambda: history_store.last_full_audit(
            CollectionRef(target.connection_name, target.database, target.name)))
    window, why_full = scope.for_run(last_full, SystemClock().now())
    return options.model_copy(update={"scope": window}), why_full



def register(app: typer.Typer) -> None:
    app.command(rich_help_panel=AUDIT, help=audit_help(
        "Audit one collection and print its report (with its diff against the last run when stored)."))(audit)
