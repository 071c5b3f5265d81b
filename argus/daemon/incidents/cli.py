"""``argus incidents`` and ``argus incident show|ack|resolve|expected|false-positive``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from argus.agent.clock import SystemClock
from argus.daemon.alerts.cli import split_collection
from argus.daemon.cli_output import stdout_console
from argus.daemon.incidents.errors import IncidentError
from argus.daemon.incidents.models import ACTIVE, Incident
from argus.daemon.incidents.notices import describe_age
from argus.daemon.store import PostgresStore
from argus.daemon.store.incidents import Action, IncidentBook

__all__ = ["NOTE_MAX", "OWNER_MAX", "check_text", "parse_id", "register"]

WithStore = Callable[[Callable[[PostgresStore], Any]], Any]
OWNER_MAX, NOTE_MAX = 200, 2000
_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan"}
Owner = Annotated[str | None, typer.Option(help="who owns it from now on", show_default="unchanged")]
Note = Annotated[str | None, typer.Option(help="why, for whoever reads its history")]
IncidentId = Annotated[str, typer.Argument(metavar="ID", help="the incident's id, as `argus incidents` prints it")]


class StatusFilter(StrEnum):
    active = "active"
    open = "open"
    acknowledged = "acknowledged"
    resolved = "resolved"
    expected = "expected"
    false_positive = "false_positive"
    all = "all"


class Format(StrEnum):
    table = "table"
    json = "json"


def parse_id(text: str) -> int:
    """``12`` or ``#12``; ``ValueError`` says what an id looks like."""
    value = text.strip().removeprefix("#")
    if not value.isdigit() or not 0 < int(value) < 2**63:
        raise ValueError(f"{text!r} is not an incident id (a number, as `argus incidents` prints it)")
    return int(value)


def check_text(what: str, value: str | None, limit: int) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if len(value) > limit:
        raise ValueError(f"{what} is {len(value):,} characters long; at most {limit:,}")
    return value or None


def _statuses(chosen: list[StatusFilter] | None) -> list[str] | None:
    picked = set(chosen or [StatusFilter.active])
    if StatusFilter.all in picked:
        return None
    out = {s.value for s in picked if s not in (StatusFilter.active,)}
    if StatusFilter.active in picked:
        out |= set(ACTIVE)
    return sorted(out)


def register(app: typer.Typer, with_store: WithStore, fail: Callable[[str], typer.Exit], *,
             panel: str | None = None) -> None:
    incident_app = typer.Typer(no_args_is_help=True, help="Look at one incident or change its status: "
                                                          "`argus incident show ID`, `argus incident ack ID`.")
    app.add_typer(incident_app, name="incident", rich_help_panel=panel)

    @app.command(rich_help_panel=panel)
    def incidents(status: Annotated[list[StatusFilter] | None, typer.Option(
                      "--status", help="repeat for several; active is open and acknowledged; all for every status",
                      show_default="active")] = None,
                  collection: Annotated[str | None, typer.Option(help="collection, database.collection or "
                                                                      "connection/database.collection")] = None,
                  limit: Annotated[int, typer.Option(min=1, help="incidents to list, newest first")] = 50,
                  output: Annotated[Format, typer.Option("--format", help="table or json")] = Format.table) -> None:
        """List incidents: findings of a collection grouped into one problem with a status and an owner."""
        connection, database, name = split_collection(collection) if collection else (None, None, None)
        rows: list[Incident] = with_store(lambda st: IncidentBook(st).list(
            statuses=_statuses(status), connection=connection, database=database, collection=name, limit=limit))
        if output == Format.json:
            sys.stdout.write(json.dumps([i.model_dump(mode="json", exclude={"history"}) for i in rows], indent=2)
                             + "\n")
            return
        if not rows:
            Console().print("no incidents" + ("" if status else " open or acknowledged (--status all lists every "
                                                                 "incident)"), highlight=False)
            return
        now = SystemClock().now()
        table = Table("id", "status", "severity", "collection", "findings", "opened", "owner", "what", box=None,
                      header_style="bold")
        for i in rows:
            active = len(i.active_findings)
            what = ", ".join(f"{f.field} {f.category.value}" for f in i.active_findings) or "nothing active"
            table.add_row(str(i.id), i.status.replace("_", " "), f"[{_STYLE[i.severity.value]}]{i.severity.value}[/]",
                          escape(f"{i.connection}/{i.where}"), f"{active}/{len(i.findings)}",
                          f"{i.opened_at.isoformat(timespec='minutes')} ({describe_age(now - i.opened_at)} ago)",
                          escape(i.owner or ""), escape(what))
        stdout_console().print(table)

    @incident_app.command("show")
    def show(incident_id: IncidentId,
             output: Annotated[Format, typer.Option("--format", help="table or json")] = Format.table) -> None:
        """Show an incident: its findings with their counts and evidence, and its history."""
        number = _number(incident_id, fail)
        incident: Incident = with_store(lambda st: IncidentBook(st).get(number))
        if output == Format.json:
            sys.stdout.write(incident.model_dump_json(indent=2) + "\n")
            return
        _print(incident, stdout_console())

    def _action(action: Action, verb: str, incident_id: str, owner: str | None, note: str | None) -> None:
        number = _number(incident_id, fail)
        try:
            owner, note = check_text("--owner", owner, OWNER_MAX), check_text("--note", note, NOTE_MAX)
        except ValueError as exc:
            raise fail(str(exc)) from None

        def apply(st: PostgresStore) -> Incident:
            try:
                return IncidentBook(st).change_status(number, action, now=SystemClock().now(), source="cli",
                                                      owner=owner, note=note)
            except IncidentError as exc:
                raise fail(str(exc)) from None

        changed: Incident = with_store(apply)
        by = f" by {changed.owner}" if changed.owner else ""
        Console().print(f"incident {changed.id} {verb}{by}: {changed.where}, {len(changed.findings)} finding(s)",
                        highlight=False, markup=False, soft_wrap=True)
        if action in ("expected", "false_positive"):
            Console().print(f"labelled its findings {'expected' if action == 'expected' else 'fp'}: later audits "
                            f"hold them back until their share grows past the growth factor", highlight=False,
                            markup=False, soft_wrap=True)
        last = changed.history[-1] if changed.history else None
        if last is not None and last.notice is not None:
            Console().print("the alert channels hear of it from the daemon (or the next `argus run`)",
                            highlight=False, markup=False, soft_wrap=True)

    @incident_app.command("ack")
    def ack(incident_id: IncidentId, owner: Owner = None, note: Note = None) -> None:
        """Acknowledge an incident: someone is on it (no more reminders)."""
        _action("acknowledged", "acknowledged", incident_id, owner, note)

    @incident_app.command("resolve")
    def resolve(incident_id: IncidentId, owner: Owner = None, note: Note = None) -> None:
        """Resolve an incident now (it reopens if a finding of it comes back within the cool-off)."""
        _action("resolved", "resolved", incident_id, owner, note)

    @incident_app.command("expected")
    def expected(incident_id: IncidentId, owner: Owner = None, note: Note = None) -> None:
        """Close an incident as expected (a migration, a holiday): its findings are labelled expected."""
        _action("expected", "closed as expected", incident_id, owner, note)

    @incident_app.command("false-positive")
    def false_positive(incident_id: IncidentId, owner: Owner = None, note: Note = None) -> None:
        """Close an incident as a false positive: its findings are labelled fp, as `argus label` does."""
        _action("false_positive", "closed as a false positive", incident_id, owner, note)


def _number(text: str, fail: Callable[[str], typer.Exit]) -> int:
    try:
        return parse_id(text)
    except ValueError as exc:
        raise fail(str(exc)) from None


def _when(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment else "-"


def _print(incident: Incident, console: Console) -> None:
    console.print(f"[bold]Incident {incident.id}[/bold]  {escape(incident.connection + '/' + incident.where)}  "
                  f"{incident.status.replace('_', ' ')} · [{_STYLE[incident.severity.value]}]"
                  f"{incident.severity.value}[/]", highlight=False)
    grouping = {"collection": "per collection", "category": f"category {incident.group_key}",
                "pattern": f"pattern {incident.group_key[:12]}"}[incident.grouping]
    console.print(f"opened {_when(incident.opened_at)} · grouped {grouping} · schedule {incident.schedule or '-'} · "
                  f"owner {incident.owner or '-'} · acknowledged {_when(incident.acknowledged_at)} · "
                  f"resolved {_when(incident.resolved_at)}" + (f" · reopened {incident.reopened}x"
                                                                 if incident.reopened else ""),
                  highlight=False, markup=False)
    if incident.note:
        console.print(f"note: {incident.note}", highlight=False, markup=False)
    table = Table("state", "severity", "field", "category", "affected", "evidence", "last run", box=None,
                  header_style="bold")
    for f in incident.findings:
        table.add_row(f.state, f.severity.value, escape(f.field), f.category.value,
                      f"{f.affected_count:,} of {f.collection_size:,} ({f.affected_share:.2%})",
                      escape(json.dumps(f.evidence_query, ensure_ascii=False, sort_keys=True)[:120]),
                      str(f.last_run)[:8])
    console.print(table)
    history = Table("at", "event", "status", "by", "detail", box=None, header_style="bold")
    for e in incident.history:
        by = e.owner or e.source
        detail = e.detail + (f" ({e.note})" if e.note else "")
        history.add_row(_when(e.at), e.kind.replace("_", " "), e.status.replace("_", " "), escape(by), escape(detail))
    console.print(history)
