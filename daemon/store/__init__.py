"""Run history: reports, diffs, cross-run memory and labels in PostgreSQL."""

from __future__ import annotations

import structlog

from config.settings import Settings
from daemon.store.embedded import embedded_exists, start_embedded
from daemon.store.errors import NotFound, StoreError, StoreUnavailable
from daemon.store.postgres import CollectionRef, Label, PostgresStore, RunSummary, describe_dsn

__all__ = [
    "CollectionRef",
    "Label",
    "NotFound",
    "PostgresStore",
    "RunSummary",
    "StoreError",
    "StoreUnavailable",
    "open_store",
    "store_configured",
]

log = structlog.get_logger("argus.store")


def store_configured(settings: Settings) -> bool:
    """A history database is configured (``ARGUS_DATABASE_URL``) or the embedded one exists."""
    return settings.database_url is not None or embedded_exists(settings.data_dir)


def open_store(settings: Settings) -> PostgresStore:
    """The configured store: the DSN when given, else the embedded server (started if needed)."""
    if settings.database_url is not None:
        dsn = settings.database_url.get_secret_value()
        log.info("store_opening", database=describe_dsn(dsn))
    else:
        dsn = start_embedded(settings.data_dir).uri
    return PostgresStore(dsn, pool_size=settings.store_pool_size)
