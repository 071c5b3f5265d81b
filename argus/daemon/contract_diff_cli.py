"""``argus contract diff OLD NEW``: a contract's pull request, rule by rule, and (given the data) how
many of today's documents the tightened rules would newly fail: a CI gate, as ``soda`` and ``dbt``
give one. Exit 0: nothing today's data breaks; 1: a tightening today's data breaks; 3: a tightening
whose count got no answer; 2: a usage error."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from bson import json_util
from bson.json_util import JSONOptions
from rich.console import Console

from argus.agent.clock import SystemClock
from argus.agent.contracts.compile import compile_contract
from argus.agent.contracts.diff import ContractChange, diff_contracts, newly_failing
from argus.agent.contracts.model import Contract
from argus.agent.contracts.validator import validator_for
from argus.agent.ejson import encode
from argus.agent.errors import ArgusError
from argus.agent.tools.count_many import count_many
from argus.agent.tools.models import CountManyInput, SchemaSampleInput
from argus.agent.tools.schema_sample import schema_sample
from argus.agent.tools.target import AuditTarget
from argus.config.contracts import ContractError, load_contract
from argus.daemon.cli_output import FormatOption, OutputFormat
from argus.daemon.exit_codes import ExitCode
from argus.daemon.files import FILE_FORMATS

__all__ = ["register", "validator_alone"]

Source = Callable[..., tuple[AuditTarget, Contract | None, str]]


def _load(path: Path, collection: str | None, fail: Callable[[str], typer.Exit]) -> Contract:
    try:
        return load_contract(path, collection=collection)
    except ContractError as exc:
        raise fail(f"the contract {path} is invalid:\n" + "\n".join(exc.problems)) from None


def _counts(target: AuditTarget, old: Contract, new: Contract,
            changes: list[ContractChange]) -> tuple[dict[int, int | str], int]:
    """Change index -> documents today's data newly fails (or why it was not counted), in one pass."""
    sample = schema_sample(target, SchemaSampleInput(sample_size=1000))
    now = SystemClock().now()
    before, after = compile_contract(old, sample, now), compile_contract(new, sample, now)
    out: dict[int, int | str] = {}
    asked: list[tuple[int, dict[str, Any]]] = []
    for i, change in enumerate(changes):
        if not change.can_fail_documents:
            continue
        query = newly_failing(change, before, after)
        if query is None:
            out[i] = "not counted: a statistic over the collection, not a per-document rule"
        else:
            asked.append((i, query))
    if asked:
        result = count_many(target, CountManyInput(queries=[{"filter": encode(q)} for _, q in asked]))
        for (i, _), counted in zip(asked, result.counts, strict=True):
            out[i] = f"not counted: {counted.error}" if counted.error else counted.matched_count
    return out, sample.collection_size


def validator_alone(path: Path, collection: str | None, action: str) -> list[str] | None:
    """Print the contract's validator from the contract alone (no data source: nothing is counted);
    the contract's problems when it is invalid."""
    try:
        contract = load_contract(path, collection=collection)
    except ContractError as exc:
        return exc.problems
    exported = validator_for(contract)
    name = collection or contract.collection or path.stem
    named = "" if collection or contract.collection else " (the contract file's name; --collection names another)"
    command = exported.command(name, action=action)
    sys.stdout.write(json_util.dumps(command, indent=2, json_options=JSONOptions(json_mode=1)) + "\n")
    err = Console(stderr=True, soft_wrap=True, highlight=False, markup=False)
    err.print(f"{len(exported.exported)} rules of {contract.source} exported for collection {name}{named}; no data "
              f"source, so no count of the documents that would fail it (give --file or --uri to count them)")
    for left in exported.left_out:
        err.print(f"not in the validator: {left}")
    err.print("Argus never runs collMod: review the command, then run it in mongosh with db.runCommand(...). "
              "Without data, fields inside arrays of objects are not known as such: give --file or --uri for them.")
    return None


def register(contract_app: typer.Typer, source: Source, fail: Callable[[str], typer.Exit]) -> None:
    @contract_app.command("diff")
    def diff(
        old_file: Annotated[Path, typer.Argument(metavar="OLD", help="the contract as it was (e.g. on main)")],
        new_file: Annotated[Path, typer.Argument(metavar="NEW", help="the contract as proposed")],
        file: Annotated[list[Path] | None, typer.Option("--file", help=f"today's data: {FILE_FORMATS}")] = None,
        uri: Annotated[str | None, typer.Option("--uri", envvar="ARGUS_MONGODB_URI", show_envvar=True,
                                                help="today's data: MongoDB connection string (read-only use)")]
            = None,
        database: Annotated[str | None, typer.Option("--database", help="database (with --uri)")] = None,
        collection: Annotated[str | None, typer.Option("--collection", help="collection (needed with --uri)",
                                                       show_default="with --file: the file's name")] = None,
        output: FormatOption = OutputFormat.table,
    ) -> None:
        """Say what changed between two contracts, rule by rule, and how many of today's documents the
        tightened rules would newly fail.

        Each change is tightened, loosened, changed, added, removed or renamed (a field's rules moved to
        another name). With --file or --uri the new rules are counted read-only in one pass; exit 1 when
        a tightening breaks today's data, 0 when it breaks nothing or only loosens (a CI gate)."""
        target = source(None, file, uri, database, collection, None)[0] if file or uri else None
        name = target.name if target is not None else collection
        old, new = _load(old_file, name, fail), _load(new_file, name, fail)
        changes = diff_contracts(old, new)
        counts: dict[int, int | str] = {}
        size = None
        if target is not None:
            try:
                counts, size = _counts(target, old, new, changes)
            except ArgusError as exc:
                raise fail(f"cannot count today's documents: {exc}") from None
        breaking = [i for i, n in counts.items() if isinstance(n, int) and n > 0]
        unanswered = [i for i, n in counts.items() if isinstance(n, str) and n.startswith("not counted: ")
                      and "statistic" not in n]
        where = f"{target.database}.{target.name}" if target is not None else None
        if output == OutputFormat.json:
            sys.stdout.write(json.dumps({
                "old": str(old_file), "new": str(new_file), "data": where, "documents": size,
                "changes": [{"kind": c.kind, "field": c.field, "rule": c.rule, "detail": c.detail,
                             "newly_failing": counts.get(i) if isinstance(counts.get(i), int) else None,
                             "not_counted": counts.get(i) if isinstance(counts.get(i), str) else None}
                            for i, c in enumerate(changes)]}, indent=2, ensure_ascii=False) + "\n")
        else:
            _print(changes, counts, old_file, new_file, where, size)
        raise typer.Exit(ExitCode.FINDINGS if breaking else ExitCode.PARTIAL if unanswered else ExitCode.OK)


def _print(changes: list[ContractChange], counts: dict[int, int | str], old: Path, new: Path, where: str | None,
           size: int | None) -> None:
    out = Console(soft_wrap=True, highlight=False, markup=False)
    out.print(f"contract diff {old} → {new}: {len(changes)} change(s)")
    for i, change in enumerate(changes):
        n = counts.get(i)
        tail = "" if n is None else f"  (today: {n:,} documents newly fail)" if isinstance(n, int) \
            else f"  ({n})"
        out.print(f"  {change.text()}{tail}")
    tightening = [i for i, c in enumerate(changes) if c.can_fail_documents]
    if where is None:
        if tightening:
            out.print(f"{len(tightening)} change(s) can fail documents; give --file or --uri to count today's data")
        return
    breaking = [i for i in tightening if isinstance(counts.get(i), int) and counts[i]]
    if breaking:
        worst = max(counts[i] for i in breaking)
        out.print(f"{len(breaking)} of {len(tightening)} tightening change(s) break today's data in {where} "
                  f"(up to {worst:,} of {size or 0:,} documents): exit 1")
    elif tightening:
        out.print(f"today's data in {where} ({size or 0:,} documents) breaks none of the {len(tightening)} "
                  f"tightening change(s)")
