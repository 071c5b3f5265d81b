"""The ``argus`` command line. Exit codes: 0 clean, 1 findings at or above --fail-on, 2 error."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agent.errors import ArgusError
from agent.findings import Severity
from agent.loop import run_audit
from agent.planners.heuristic import HeuristicPlanner
from agent.report import AuditReport
from agent.tools.target import AuditTarget
from config.settings import Settings
from daemon.logs import configure_logging
from daemon.render import ProgressDisplay, print_report
from daemon.sources import load_jsonl, open_uri, redact_uri

__all__ = ["app", "main"]

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="Argus: data-quality audits for MongoDB and Azure Cosmos DB.")

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


class FailOn(StrEnum):
    low = "low"
    medium = "medium"
    high = "high"
    critical = "critical"
    none = "none"


class Privacy(StrEnum):
    strict = "strict"
    shapes = "shapes"
    full = "full"


@app.callback()
def _root() -> None:
    """Argus: data-quality audits for MongoDB and Azure Cosmos DB."""


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"argus: error: {message}", highlight=False, markup=False, soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


@app.command()
def audit(
    file: Annotated[Path | None, typer.Option("--file", help="MongoDB Extended JSON lines file to audit")] = None,
    uri: Annotated[str | None, typer.Option("--uri", envvar="ARGUS_MONGODB_URI", show_envvar=True,
                                            help="MongoDB / Cosmos DB connection string (read-only use)")] = None,
    database: Annotated[str | None, typer.Option("--database", help="database (with --uri)")] = None,
    collection: Annotated[str | None, typer.Option("--collection",
                                                   help="collection (default: the file's name)")] = None,
    output: Annotated[OutputFormat, typer.Option("--format", help="table or json")] = OutputFormat.table,
    fail_on: Annotated[FailOn | None, typer.Option("--fail-on", help="exit 1 when a finding is at least this severe "
                                                                      "[default: high]")] = None,
    sample_size: Annotated[int | None, typer.Option(min=1, max=10_000)] = None,
    max_iterations: Annotated[int | None, typer.Option(min=1)] = None,
    time_budget: Annotated[float | None, typer.Option(help="wall-clock budget in seconds")] = None,
    max_time_ms: Annotated[int | None, typer.Option(min=1, help="server time limit per query")] = None,
    privacy: Annotated[Privacy | None, typer.Option(help="strict, shapes or full: sample values in the report")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="log each step to stderr")] = False,
) -> None:
    """Audit one collection and print its report."""
    settings = Settings()
    configure_logging("INFO" if verbose else "WARNING", settings.log_format)
    threshold = fail_on.value if fail_on is not None else settings.fail_on.value
    try:
        options = settings.audit_options(sample_size=sample_size, max_iterations=max_iterations,
                                         time_budget_s=time_budget, max_time_ms=max_time_ms,
                                         privacy=privacy.value if privacy else None)
        options = options.model_copy(update={"fail_on": None if threshold == "none" else Severity(threshold)})
    except ValueError as exc:
        raise _fail(f"invalid option: {exc}") from None
    target = _target(file, uri, database, collection, options.max_time_ms)
    console = Console(stderr=True)
    planner = HeuristicPlanner()
    label = f"{target.database}.{target.name}"
    if output == OutputFormat.table and console.is_terminal:
        with ProgressDisplay(console, label) as progress:
            report = run_audit(target, planner, options=options, observer=progress)
    else:
        report = run_audit(target, planner, options=options)
    if output == OutputFormat.json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        print_report(report, Console())
    raise typer.Exit(_exit_code(report, options.fail_on))


def _target(file: Path | None, uri: str | None, database: str | None, collection: str | None,
            max_time_ms: int) -> AuditTarget:
    if (file is None) == (uri is None):
        raise _fail("give exactly one of --file PATH or --uri URI")
    try:
        if file is not None:
            return load_jsonl(file, collection=collection, max_time_ms=max_time_ms)
        assert uri is not None
        if not database or not collection:
            raise _fail(f"--uri {redact_uri(uri)} needs --database and --collection")
        return open_uri(uri, database=database, collection=collection, max_time_ms=max_time_ms)
    except ArgusError as exc:
        raise _fail(str(exc)) from None


def _exit_code(report: AuditReport, fail_on: Severity | None) -> int:
    if report.outcome == "failed":
        Console(stderr=True).print(f"argus: error: audit failed: {report.error}", markup=False, highlight=False)
        return EXIT_ERROR
    if fail_on is not None and report.findings_at_or_above(fail_on):
        return EXIT_FINDINGS
    return EXIT_OK


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # last resort: one line, no traceback
        Console(stderr=True).print(f"argus: error: internal error: {type(exc).__name__}: {exc}", markup=False)
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":
    main()
