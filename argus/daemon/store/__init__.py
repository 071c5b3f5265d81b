"""Run history: reports, diffs, cross-run memory and labels in PostgreSQL."""

from __future__ import annotations

import structlog

from argus.agent.errors import ArgusError
from argus.config.settings import Settings
from argus.daemon.store.embedded import embedded_exists, start_embedded
from argus.daemon.store.errors import NotFound, StoreError, StoreUnavailable
from argus.daemon.store.postgres import (
    LOST_RUN,
    CollectionRef,
    Label,
    PostgresStore,
    RunSummary,
    TriggerClaim,
    describe_dsn,
)

__all__ = [
    "LOST_RUN",
    "CollectionRef",
    "Label",
    "NotFound",
    "PostgresStore",
    "RunSummary",
    "StoreError",
    "StoreUnavailable",
    "TriggerClaim",
    "describe_store",
    "open_store",
    "store_configured",
]

log = structlog.get_logger("argus.store")


def store_configured(settings: Settings) -> bool:
    """A history database is configured (``ARGUS_DATABASE_URL``) or the embedded one exists."""
    return settings.database_url is not None or embedded_exists(settings.data_dir)


def describe_store(settings: Settings) -> str:
    """Where history lives, fit for a log or a terminal (no password)."""
    if settings.database_url is not None:
        try:
            dsn = settings.database_dsn()
        except ArgusError:
            return "PostgreSQL (ARGUS_DATABASE_URL is not valid)"
        return f"PostgreSQL at {describe_dsn(dsn or '')}"
    return f"embedded PostgreSQL in {settings.data_dir / 'pgdata'}"


def open_store(settings: Settings, *, pool_size: int | None = None, wait: bool = True) -> PostgresStore:
    """The configured store: the DSN when given, else the embedded server (started if needed).
    A DSN that does not parse is refused here, before a pool (and its logger) sees it."""
    if settings.database_url is not None:
        try:
            dsn = settings.database_dsn() or ""
        except ArgusError as exc:
            raise StoreError(str(exc)) from None
        log.info("store_opening", database=describe_dsn(dsn))
    else:
        dsn = start_embedded(settings.data_dir).uri
    return PostgresStore(dsn, pool_size=pool_size or settings.store_pool_size, wait=wait)
