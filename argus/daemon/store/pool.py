"""Connections to the history database: a psycopg pool, migrated on first use, whose errors leave
as the store's own (``StoreUnavailable`` when the database cannot be reached, ``StoreError`` when
it refused an operation), never naming the password.

``Connects`` is what the store's books (incidents, the outbox, metric values) need of a store:
a connection for a block. They take one, so that nothing under ``store`` imports the store back.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import psycopg
import structlog
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from argus.daemon.store.errors import StoreError, StoreUnavailable
from argus.daemon.store.migrations import migrate
from argus.daemon.store.text import keep_text_storable

__all__ = ["Connections", "Connects", "describe_dsn", "lock_key"]

log = structlog.get_logger("argus.store")


class Connects(Protocol):
    """Lends a connection of the history database for a block."""

    def _conn(self, timeout: float | None = None) -> AbstractContextManager[psycopg.Connection[Any]]: ...


def describe_dsn(dsn: str) -> str:
    """``host:port/dbname`` of a DSN, for messages: never the password."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "an unparseable DSN"
    host = str(parts.get("host") or "localhost")
    where = "a local socket" if host.startswith("/") else f"{host}:{parts.get('port') or 5432}"
    return f"{where}/{parts.get('dbname') or ''}"


def lock_key(name: str) -> int:
    """The advisory lock key of ``name`` (a collection, a schedule)."""
    digest = hashlib.sha256(name.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class Connections:
    """A pool on one database, migrated before the first connection is lent."""

    def __init__(self, dsn: str, *, pool_size: int = 4, connect_timeout_s: float = 5.0, wait: bool = True) -> None:
        """Open a pool on ``dsn`` and migrate. With ``wait=False`` (a daemon starting while the
        database is down) nothing blocks: connections and migrations happen on first use."""
        self._where = describe_dsn(dsn)
        self._migrated = False
        self._migrate_lock = threading.Lock()
        self._pool = ConnectionPool(dsn, min_size=1, max_size=max(pool_size, 1), open=False, timeout=connect_timeout_s,
                                    kwargs={"connect_timeout": max(int(connect_timeout_s), 1)},
                                    check=ConnectionPool.check_connection, configure=keep_text_storable,
                                    name="argus-store")
        if not wait:
            self._pool.open(wait=False)
            return
        try:
            self._pool.open(wait=True, timeout=connect_timeout_s)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreUnavailable(f"cannot reach PostgreSQL at {self._where}") from exc
        with self._conn():
            pass

    @property
    def where(self) -> str:
        return self._where

    def close(self) -> None:
        self._pool.close()

    @contextmanager
    def _conn(self, timeout: float | None = None) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection(timeout=timeout) as conn:
                if not self._migrated:
                    self._ensure_migrated(conn)
                yield conn
        except PoolTimeout as exc:
            raise StoreUnavailable(f"cannot reach PostgreSQL at {self._where}") from exc
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"lost PostgreSQL at {self._where}: {type(exc).__name__}") from exc
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL at {self._where} refused an operation: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:200]}") from exc

    def _ensure_migrated(self, conn: psycopg.Connection[Any]) -> None:
        with self._migrate_lock:
            if self._migrated:
                return
            applied = migrate(conn)
            self._migrated = True
        if applied:
            log.info("store_migrated", versions=applied, database=self._where)
