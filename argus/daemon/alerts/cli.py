"""``argus mute``, ``argus unmute``, ``argus mutes`` and ``argus alerts``: the alert commands."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from argus.agent.clock import SystemClock
from argus.agent.findings import Category
from argus.config.schedules import parse_duration
from argus.daemon.cli_output import stdout_console
from argus.daemon.store import PostgresStore
from argus.daemon.store.outbox import AlertOutbox

__all__ = ["register", "split_collection"]

T = TypeVar("T")
WithStore = Callable[[Callable[[PostgresStore], Any]], Any]


def split_collection(name: str) -> tuple[str | None, str | None, str]:
    """``collection``, ``database.collection`` or ``connection/database.collection`` (database
    names cannot hold a dot, collection names can)."""
    connection, _, rest = name.rpartition("/") if "/" in name else (None, "", name)
    database, dot, collection = rest.partition(".")
    if not dot:
        return connection or None, None, rest
    return connection or None, database, collection


def register(app: typer.Typer, with_store: WithStore, fail: Callable[[str], typer.Exit], *,
             panel: str | None = None) -> None:
    @app.command(rich_help_panel=panel)
    def mute(fingerprint: Annotated[str | None, typer.Option(help="a pattern's fingerprint or its first 8+ "
                                                                   "characters, as `argus alerts` and `argus show` "
                                                                   "print it")] = None,
             collection: Annotated[str | None, typer.Option(help="collection, database.collection or "
                                                                 "connection/database.collection")] = None,
             category: Annotated[Category | None, typer.Option(help="a finding category")] = None,
             for_: Annotated[str | None, typer.Option("--for", help="how long, e.g. 2h or 7d",
                                                      show_default="no end: until `argus unmute`")] = None,
             reason: Annotated[str | None, typer.Option(help="why, for whoever reads `argus mutes`")] = None,
             ) -> None:
        """Stop alerts on a pattern, a collection or a category (combined: all must match)."""
        if fingerprint is None and collection is None and category is None:
            raise fail("give --fingerprint, --collection or --category")
        if fingerprint is not None and len(fingerprint) < 8:
            raise fail("--fingerprint: give at least 8 characters (alerts print 12)")
        now = SystemClock().now()
        try:
            expires = now + parse_duration(for_) if for_ is not None else None
        except ValueError as exc:
            raise fail(f"--for: {exc}") from None
        if expires is not None and expires <= now:
            raise fail("--for must be longer than zero")
        connection, database, name = split_collection(collection) if collection else (None, None, None)

        def add(st: PostgresStore) -> Any:
            if collection is not None and not st.collections_matching(collection)[0]:
                # a mute may come before the first run, so it is kept; a typo must not pass unseen
                stored = ", ".join(f"{r.database}.{r.collection}" for r in st.collections_matching(collection)[1][:10])
                Console(stderr=True).print(f"warning: no stored runs for collection {collection!r} (stored: "
                                           f"{stored or 'none yet'}); the mute applies once it is audited under "
                                           f"that name", markup=False, highlight=False, soft_wrap=True)
            return AlertOutbox(st).mute(
            now=now, fingerprint=fingerprint, connection=connection, database=database, collection=name,
            category=category.value if category else None, expires_at=expires, reason=reason)

        added = with_store(add)
        until = f"until {expires.isoformat(timespec='minutes')}" if expires else \
            f"with no end (lift it with `argus unmute {added.id}`)"
        stdout_console().print(f"mute {added.id}: {added.describe()} {until}", highlight=False, markup=False)

    @app.command(rich_help_panel=panel)
    def unmute(mute_id: Annotated[int, typer.Argument(metavar="MUTE_ID", help="the id `argus mutes` shows")]) -> None:
        """Lift a mute."""
        removed = with_store(lambda st: AlertOutbox(st).unmute(mute_id))
        stdout_console().print(f"unmuted {removed.id}: {removed.describe()}", highlight=False, markup=False)

    @app.command(rich_help_panel=panel)
    def mutes() -> None:
        """List the mutes in force."""
        now = SystemClock().now()
        rows = with_store(lambda st: AlertOutbox(st).mutes(now))
        table = Table("id", "mutes", "ends", "reason", box=None)
        for m in rows:
            table.add_row(str(m.id), m.describe(), _when(m.expires_at, now), m.reason or "")
        stdout_console().print(table if rows else "no mutes in force")

    @app.command(rich_help_panel=panel)
    def alerts(limit: Annotated[int, typer.Option(min=1, help="alerts to list")] = 20) -> None:
        """List the newest alerts in the outbox with their delivery state."""
        rows = with_store(lambda st: AlertOutbox(st).rows(limit=limit))
        table = Table("queued", "channel", "kind", "status", "attempts", "last error", "pattern", "title", box=None)
        for r in rows:
            # the pattern's short fingerprint, as `argus mute --fingerprint` takes it
            table.add_row(r["created_at"].isoformat(timespec="seconds"), r["channel"], r["kind"], r["status"],
                          str(r["attempts"]), r["last_error"] or "", (r["alert"].get("fingerprint") or "")[:12],
                          r["alert"]["title"])
        stdout_console().print(table if rows else "no alerts yet", highlight=False)


def _when(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "no end"
    left = moment - now
    return f"{moment.isoformat(timespec='minutes')} (in {_human(left)})"


def _human(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"
