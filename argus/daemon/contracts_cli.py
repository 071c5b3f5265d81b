"""``argus contract suggest`` and ``argus contract validator``: drafting a contract from the data, and
exporting one as a MongoDB ``$jsonSchema`` validator with the count of documents that would fail it."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from bson import json_util
from bson.json_util import JSONOptions
from rich.console import Console

from argus.agent.clock import SystemClock
from argus.agent.contracts.compile import compile_contract
from argus.agent.contracts.model import Contract
from argus.agent.contracts.suggest import draft_contract
from argus.agent.contracts.validator import validator_for
from argus.agent.ejson import encode
from argus.agent.errors import ArgusError
from argus.agent.tools.count_many import count_many
from argus.agent.tools.elements import array_paths
from argus.agent.tools.models import CountManyInput, SchemaSampleInput
from argus.agent.tools.schema_sample import schema_sample
from argus.agent.tools.target import AuditTarget
from argus.config.contracts import ContractError, load_contract
from argus.config.schedules import ScheduleError, load_schedules
from argus.config.settings import Settings
from argus.daemon.contract_diff_cli import register as register_diff
from argus.daemon.contract_diff_cli import validator_alone
from argus.daemon.files import FILE_FORMATS
from argus.daemon.sources import SourceCache

__all__ = ["register"]

TargetFactory = Callable[[list[Path] | None, str | None, str | None, str | None, int], AuditTarget]


class Action(StrEnum):
    warn = "warn"
    error = "error"


class Privacy(StrEnum):
    strict = "strict"
    shapes = "shapes"
    full = "full"


def register(app: typer.Typer, make_target: TargetFactory, fail: Callable[[str], typer.Exit],
             settings: Callable[[], Settings], *, panel: str | None = None) -> None:
    contract_app = typer.Typer(no_args_is_help=True, help="Draft a data contract from the data, or export one as "
                                                          "a MongoDB validator (see docs/contracts.md).")
    app.add_typer(contract_app, name="contract", rich_help_panel=panel)

    def source(schedule: str | None, file: list[Path] | None, uri: str | None, database: str | None,
               collection: str | None, schedules: Path | None) -> tuple[AuditTarget, Contract | None, str]:
        """The collection (and a schedule's contract): from a schedule's name, --file or --uri; its reads
        bounded by the audit time budget (ARGUS_TIME_BUDGET_S) as a whole, and each by its server limit."""
        target, contract, where = _source(schedule, file, uri, database, collection, schedules)
        budget = settings().time_budget_s
        deadline = time.monotonic() + budget
        target.cap_time_with(lambda: int((deadline - time.monotonic()) * 1000))
        return target, contract, where

    def _source(schedule: str | None, file: list[Path] | None, uri: str | None, database: str | None,
                collection: str | None, schedules: Path | None) -> tuple[AuditTarget, Contract | None, str]:
        if schedule is None:
            target = make_target(file, uri, database, collection, settings().max_time_ms)
            return target, None, f"{target.database}.{target.name}"
        if file or uri:
            raise fail("give a schedule's name, or --file / --uri, not both")
        try:
            loaded = load_schedules(schedules or settings().schedules)
        except ScheduleError as exc:
            raise fail("the schedules file is invalid:\n" + "\n".join(exc.problems)) from None
        found = loaded.schedules.get(schedule)
        if found is None:
            raise fail(f"no schedule named {schedule!r} (known: {', '.join(sorted(loaded.schedules)) or 'none'})")
        try:
            target = SourceCache().target(found.connection, loaded.connections[found.connection], found.database,
                                          found.collection, max_time_ms=found.settings.max_time_ms,
                                          where=loaded.connection_where(found.connection))
        except ArgusError as exc:
            raise fail(str(exc)) from None
        return target, found.contract, f"schedule {schedule} ({found.database}.{found.collection})"

    register_diff(contract_app, source, fail)

    @contract_app.command("suggest")
    def suggest(
        schedule: Annotated[str | None, typer.Argument(metavar="[SCHEDULE]", help="a schedule's name: its "
                                                                                  "collection")] = None,
        file: Annotated[list[Path] | None, typer.Option("--file", help=f"file to read: {FILE_FORMATS}")] = None,
        uri: Annotated[str | None, typer.Option("--uri", envvar="ARGUS_MONGODB_URI", show_envvar=True,
                                                help="MongoDB / Cosmos DB connection string")] = None,
        database: Annotated[str | None, typer.Option("--database", help="database (with --uri)")] = None,
        collection: Annotated[str | None, typer.Option("--collection", help="collection (needed with --uri)",
                                                       show_default="with --file: the file's name")] = None,
        schedules: Annotated[Path | None, typer.Option("--schedules", help="the schedules file (with SCHEDULE)",
                                                       show_default="ARGUS_SCHEDULES or ./schedules.yaml")] = None,
        out: Annotated[Path | None, typer.Option("--out", "-o", help="write the contract here",
                                                 show_default="stdout")] = None,
        sample_size: Annotated[int, typer.Option(min=1, max=10_000, help="documents to sample")] = 1000,
        privacy: Annotated[Privacy, typer.Option(help="strict drafts no value set (they are document values)")] =
            Privacy.shapes,
    ) -> None:
        """Draft a contract from the collection's data, each rule commented with its evidence.

        Types, required fields, keys, value sets, ranges and formats; a rule today's data breaks is marked
        BROKEN TODAY with its count."""
        target, _, where = source(schedule, file, uri, database, collection, schedules)
        now = SystemClock().now()
        try:
            draft = draft_contract(target, now=now, sample_size=sample_size, privacy=privacy.value)
        except ArgusError as exc:
            raise fail(f"cannot draft a contract: {exc}") from None
        text = draft.yaml(source=where, now=now)
        broken = sum(1 for d in draft.rules if d.broken)
        unchecked = sum(1 for d in draft.rules if d.unchecked is not None)
        if out is not None:
            out.write_text(text)
        else:
            sys.stdout.write(text)
        Console(stderr=True).print(f"drafted {len(draft.rules)} rules for {where} in {draft.passes} passes"
                                   + (f"; {broken} are broken by today's data (marked BROKEN TODAY)" if broken else "")
                                   + (f"; {unchecked} could not be checked against today's data (marked NOT CHECKED "
                                      f"TODAY)" if unchecked else "")
                                   + (f"; written to {out}" if out else ""), highlight=False, markup=False,
                                   soft_wrap=True)

    @contract_app.command("validator")
    def validator(
        schedule: Annotated[str | None, typer.Argument(metavar="[SCHEDULE]", help="a schedule's name: its "
                                                                                  "collection and contract")] = None,
        contract_file: Annotated[Path | None, typer.Option("--contract", help="the contract file",
                                                           show_default="the schedule's contract")] = None,
        file: Annotated[list[Path] | None, typer.Option("--file", help=f"file to read: {FILE_FORMATS}")] = None,
        uri: Annotated[str | None, typer.Option("--uri", envvar="ARGUS_MONGODB_URI", show_envvar=True,
                                                help="MongoDB connection string (read-only use)")] = None,
        database: Annotated[str | None, typer.Option("--database", help="database (with --uri)")] = None,
        collection: Annotated[str | None, typer.Option("--collection", help="collection (needed with --uri)",
                                                       show_default="with --file: the file's name")] = None,
        schedules: Annotated[Path | None, typer.Option("--schedules", help="the schedules file (with SCHEDULE)",
                                                       show_default="ARGUS_SCHEDULES or ./schedules.yaml")] = None,
        action: Annotated[Action, typer.Option(help="validationAction: warn logs, error rejects the write")] =
            Action.warn,
    ) -> None:
        """Print the contract as a collMod $jsonSchema validator and count the documents that would fail it.

        The count is read-only, with the audit's own filters. Argus never runs collMod: review the command,
        then run it yourself. With --contract and no data source it prints the validator alone (for CI)."""
        if schedule is None and not file and uri is None and contract_file is not None:
            alone = validator_alone(contract_file, collection, action.value)
            if isinstance(alone, list):
                raise fail("the contract is invalid:\n" + "\n".join(alone))
            return
        target, declared_contract, where = source(schedule, file, uri, database, collection, schedules)
        contract = declared_contract
        if contract_file is not None:
            try:
                contract = load_contract(contract_file, collection=target.name)
            except ContractError as exc:
                raise fail("the contract is invalid:\n" + "\n".join(exc.problems)) from None
        if contract is None:
            raise fail("give --contract FILE (or a schedule that has a contract)")
        try:
            sample = schema_sample(target, SchemaSampleInput(sample_size=1000))
            exported = validator_for(contract, arrays=array_paths(sample.fields))
            failing = _would_fail(target, contract, exported.exported, sample)
        except ArgusError as exc:
            raise fail(f"cannot count the documents that would fail: {exc}") from None
        command = exported.command(target.name, action=action.value)
        sys.stdout.write(json_util.dumps(command, indent=2, json_options=JSONOptions(json_mode=1)) + "\n")
        err = Console(stderr=True)
        err.print(f"{failing:,} of {sample.collection_size:,} documents in {where} would fail this validator "
                  f"({len(exported.exported)} rules of {contract.source}; counted read-only)", highlight=False,
                  markup=False, soft_wrap=True)
        for left in exported.left_out:
            err.print(f"not in the validator: {left}", highlight=False, markup=False, soft_wrap=True)
        err.print("Argus never runs collMod: review the command, then run it in mongosh with "
                  "db.runCommand(...). Cosmos DB for MongoDB (RU) has no $jsonSchema.", highlight=False,
                  markup=False, soft_wrap=True)


def _would_fail(target: AuditTarget, contract: Contract, rules: list[Any], sample: Any) -> int:
    """Documents breaking at least one exported rule: the $or of the filters the audit counts them with."""
    if not rules:
        return 0
    declared = compile_contract(Contract(source=contract.source, rules=tuple(rules)), sample,
                                SystemClock().now())
    violations = [c.violation for c in declared.checks if c.violation is not None]
    query = violations[0] if len(violations) == 1 else {"$or": violations}
    result = count_many(target, CountManyInput(queries=[{"filter": encode(query)}]))
    return result.counts[0].matched_count
