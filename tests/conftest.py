"""Shared fixtures: audit targets on the in-process engine (``argus.agent.engine``) that ``argus audit --file``
runs on, a real PostgreSQL, a local OpenAI-compatible server."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from bson import ObjectId

from argus.agent.engine import DocumentStore, MemoryCollection
from argus.agent.tools.target import AuditTarget

# CI=true: a skip fails, naming what is missing (tests/ci_skips.py)
from tests.ci_skips import pytest_runtest_makereport  # noqa: F401

_names = itertools.count()


@pytest.fixture(autouse=True, scope="session")
def _own_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Tests never read or write the user's Argus data (an embedded history database there would
    change what `argus audit` prints), nor a database the shell happens to point at."""
    import os

    saved = {k: os.environ.get(k) for k in ("ARGUS_DATA_DIR", "ARGUS_DATABASE_URL")}
    os.environ["ARGUS_DATA_DIR"] = str(tmp_path_factory.mktemp("argus-data"))
    os.environ.pop("ARGUS_DATABASE_URL", None)
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def _fresh_logging() -> Any:
    """Each test starts with structlog's defaults, whatever an earlier test configured."""
    import structlog

    yield
    structlog.reset_defaults()


class RecordingCollection:
    """A real collection (the in-process engine's) that also records each read: its keyword arguments (``calls``)
    and what it asked (``reads``: the filter or pipeline)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.reads: list[tuple[str, tuple[Any, ...]]] = []
        self.database = inner.database
        self.name = inner.name

    def count_documents(self, query: dict[str, Any], **kwargs: Any) -> int:
        self.calls.append(("count_documents", kwargs))
        self.reads.append(("count_documents", (query,)))
        return int(self._inner.count_documents(query, **kwargs))

    def aggregate(self, pipeline: list[dict[str, Any]], **kwargs: Any) -> Any:
        self.calls.append(("aggregate", kwargs))
        self.reads.append(("aggregate", (pipeline,)))
        return self._inner.aggregate(pipeline, **kwargs)

    def estimated_document_count(self, **kwargs: Any) -> int:
        self.calls.append(("estimated_document_count", kwargs))
        return int(self._inner.estimated_document_count(**kwargs))

    def list_indexes(self) -> Any:
        return self._inner.list_indexes()

    def find(self, query: dict[str, Any], projection: Any = None) -> Any:
        recording = self
        self.reads.append(("find", (query,)))

        class _Cursor:
            def __init__(self) -> None:
                self._cursor = recording._inner.find(query, projection)

            def limit(self, n: int) -> Any:
                self._cursor = self._cursor.limit(n)
                return self

            def sort(self, key: Any, direction: int | None = None) -> Any:
                self._cursor = self._cursor.sort(key, direction) if direction is not None else self._cursor.sort(key)
                return self

            def max_time_ms(self, ms: int) -> Any:
                recording.calls.append(("find", {"max_time_ms": ms}))
                self._cursor = self._cursor.max_time_ms(ms)
                return self

            def __iter__(self) -> Any:
                return iter(self._cursor)

        return _Cursor()


def memory_collection(docs: Iterable[dict[str, Any]], name: str | None = None, *, database: str = "testdb",
                      indexes: Iterable[str] = ()) -> MemoryCollection:
    """``docs`` in the in-process engine, as a server holds them once inserted: each without an ``_id``
    gets an ObjectId (the driver's insert adds one), in the order given; ``indexes`` names fields that
    lead an index (``list_indexes`` reports them; no answer changes)."""
    stored = [d if "_id" in d else {"_id": ObjectId(), **d} for d in docs]
    return MemoryCollection(DocumentStore.of(stored), name=name or f"c{next(_names)}", database=database,
                            indexes=[{field: 1} for field in indexes])


@pytest.fixture
def make_collection() -> Callable[..., Any]:
    """A fresh collection holding ``docs``, on the engine ``argus audit --file`` runs on."""
    return memory_collection


@pytest.fixture
def make_target(make_collection: Callable[..., Any]) -> Callable[..., AuditTarget]:
    def make(docs: Iterable[dict[str, Any]], name: str | None = None, **kwargs: Any) -> AuditTarget:
        return AuditTarget(make_collection(docs, name), **kwargs)

    return make


# --- PostgreSQL: one real server per test session, a fresh database per test ---------------------

@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Admin DSN of a real PostgreSQL: ARGUS_TEST_DATABASE_URL, or an embedded server."""
    import os

    url = os.environ.get("ARGUS_TEST_DATABASE_URL")
    if url:
        yield url
        return
    from argus.daemon.store.embedded import start_embedded

    db = start_embedded(tmp_path_factory.mktemp("argus-pg"))
    yield db.admin_uri()
    db.server.cleanup()


@pytest.fixture
def pg_dsn(pg_server: str) -> Any:
    """DSN of a database created for this test and dropped after it."""
    import uuid

    import psycopg
    from psycopg.conninfo import make_conninfo

    name = f"argus_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'create database "{name}"')
    yield make_conninfo(pg_server, dbname=name)
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'drop database if exists "{name}" with (force)')


@pytest.fixture
def store(pg_dsn: str) -> Any:
    from argus.daemon.store import PostgresStore

    with PostgresStore(pg_dsn, pool_size=2) as opened:
        yield opened


# --- a local OpenAI-compatible server ----------------------------------------------------------

@pytest.fixture
def chat_server() -> Any:
    """Start ``LocalChatServer(replies)`` on an ephemeral port; every server started is stopped after."""
    from tests.doubles.model_server import LocalChatServer

    started: list[LocalChatServer] = []

    def start(replies: Any, **kwargs: Any) -> LocalChatServer:
        server = LocalChatServer(replies, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
