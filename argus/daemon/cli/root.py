"""The root of the ``argus`` command line: the app, its panels, and what every command group shares
(settings from the environment, one-line errors, the history store, exit codes)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import click
import typer
from pydantic import ValidationError
from rich.console import Console

from argus.agent.errors import ArgusError
from argus.agent.findings import Severity
from argus.agent.report import ARGUS_VERSION, AuditReport
from argus.agent.secrets import SECRETS
from argus.agent.tools.target import AuditTarget
from argus.config.settings import Settings
from argus.daemon.cli_output import emit
from argus.daemon.exit_codes import ExitCode
from argus.daemon.files.reader import LoadDeadline
from argus.daemon.logs import configure_logging
from argus.daemon.progress import LoadProgress
from argus.daemon.sources import load_files, open_uri
from argus.daemon.store import PostgresStore, StoreError, describe_store, open_store, store_configured

__all__ = ["ALERTS", "AUDIT", "DAEMON", "EXIT_ERROR", "EXIT_FAILED", "EXIT_FINDINGS", "EXIT_OK", "EXIT_PARTIAL",
           "HISTORY", "STORE_HELP", "app", "env_settings", "exit_code", "fail", "open_history_store", "open_target",
           "store_call", "with_store"]

# suggest_commands off: click already says "Did you mean 'audit'?", typer said it a second time
app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, suggest_commands=False,
                  help="Argus: data-quality audits for MongoDB and Azure Cosmos DB.")

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_PARTIAL, EXIT_FAILED = (ExitCode.OK, ExitCode.FINDINGS, ExitCode.ERROR,
                                                                 ExitCode.PARTIAL, ExitCode.FAILED)

# The panels of `argus --help`, in the order a user meets them.
AUDIT, HISTORY, DAEMON, ALERTS = "Audit", "History", "Daemon", "Alerts"


def _version(value: bool) -> None:
    if value:
        Console().print(f"argus {ARGUS_VERSION}", highlight=False)
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                               help="print the version and exit")] = False) -> None:
    """Argus: data-quality audits for MongoDB and Azure Cosmos DB."""


def fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"argus: error: {SECRETS.redact(message)}", highlight=False, markup=False,
                               soft_wrap=True)
    return typer.Exit(EXIT_ERROR)


def env_settings() -> Settings:
    """Settings from the environment; a bad ``ARGUS_*`` value is one line naming the variable
    (never its value, which may be a secret)."""
    try:
        return Settings()
    except ValidationError as exc:
        messages = [(e["loc"], e["msg"].removeprefix("Value error, "))
                    for e in exc.errors(include_input=False, include_url=False)]
        problems = [f"{'ARGUS_' + '_'.join(map(str, loc)).upper()}: {msg[:1].lower()}{msg[1:]}"
                    for loc, msg in messages]
        raise fail(f"invalid environment variable {'; '.join(problems)}") from None


def open_target(files: list[Path] | None, uri: str | None, database: str | None, collection: str | None,
            max_time_ms: int, deadline: LoadDeadline | None = None) -> AuditTarget:
    if (not files) == (uri is None):
        raise fail("give exactly one of --file PATH or --uri URI")
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
            raise fail(f"{source} needs --database and --collection")
        return open_uri(uri, database=database, collection=collection, max_time_ms=max_time_ms, source=source)
    except ArgusError as exc:
        raise fail(str(exc)) from None


def open_history_store(settings: Settings) -> PostgresStore:
    try:
        opened = open_store(settings)
    except StoreError as exc:
        raise fail(str(exc)) from None
    return opened


T = TypeVar("T")


def store_call(call: Callable[[], T], unsaved: AuditReport | None = None) -> T:
    try:
        return call()
    except StoreError as exc:
        if unsaved is not None:
            emit(unsaved.model_dump_json(indent=2))
            raise fail(f"report {unsaved.run_id} was not stored: {exc}") from None
        raise fail(str(exc)) from None


STORE_HELP = ("History is read from ARGUS_DATABASE_URL when set, else from the embedded PostgreSQL in "
               "ARGUS_DATA_DIR (default ~/.local/share/argus), shared by every Argus command and daemon of this "
               "user on this machine; each listing names its store on its first line.")
_LISTINGS = {"runs", "show", "diff", "history", "mutes", "alerts", "incidents", "incident show"}


def with_store(action: Callable[[PostgresStore], T]) -> T:
    settings = env_settings()
    configure_logging("WARNING", settings.log_format)
    if not store_configured(settings):
        raise fail(f"no history yet in {describe_store(settings)}: set ARGUS_DATABASE_URL or ARGUS_DATA_DIR, "
                    "or run `argus audit ... --store` first")
    with open_history_store(settings) as opened:
        result = store_call(lambda: action(opened))
    _name_store(describe_store(settings))
    return result


def _name_store(where: str) -> None:
    """A listing's first line says which history it read (not in JSON, which stays one document)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.command_path.split(" ", 1)[-1] not in _LISTINGS or ctx.params.get("output") == "json":
        return
    emit(f"history: {where}")


def exit_code(report: AuditReport, fail_on: Severity | None) -> int:
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

