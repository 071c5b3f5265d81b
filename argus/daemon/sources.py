"""Where audited collections come from: a live MongoDB / Cosmos DB URI, or a file.

A file (``mongoexport``'s JSON lines or array, ``mongodump``'s BSON, either gzipped, or a dump
folder) is read by ``argus.daemon.files`` into Argus's in-process engine, so demos and tests audit the
same way a live server is audited. A URI never appears in an error or a log: it is checked before
pymongo sees it (``check_mongodb_uri``), and the error says what is wrong and where the URI came
from.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pymongo import MongoClient
from pymongo.errors import ConfigurationError

from argus.agent.engine import MemoryCollection
from argus.agent.errors import DataLoadError, TargetUnavailable
from argus.agent.tools.target import AuditTarget
from argus.config.schedule_models import Connection
from argus.config.settings import check_mongodb_uri
from argus.daemon.files import load_file
from argus.daemon.files.reader import LoadDeadline

__all__ = ["SourceCache", "load_files", "load_jsonl", "load_path", "open_uri"]


def load_path(path: str | Path, *, collection: str | None = None, database: str = "files",
              connection_name: str = "file", max_time_ms: int = 10_000,
              progress: Callable[[int, int], None] | None = None, deadline: LoadDeadline | None = None) -> AuditTarget:
    """Load a file (or a mongodump folder) into the in-process engine and return it as a target.

    The collection is named by a dump's metadata or after the file (``orders.jsonl.gz`` →
    ``orders``) unless ``collection`` is given. Errors name the file and the line or byte offset.
    """
    coll = load_file(path, collection=collection, database=database, progress=progress, deadline=deadline)
    return AuditTarget(coll, connection_name=connection_name, max_time_ms=max_time_ms, in_memory=True)


def load_files(paths: list[Path], *, collection: str | None = None, database: str = "files",
               connection_name: str = "file", max_time_ms: int = 10_000,
               progress: Callable[[str], Callable[[int, int], None] | None] | None = None,
               deadline: LoadDeadline | None = None) -> AuditTarget:
    """The first file audited, every other loaded beside it as a collection of the same database,
    named after its file: where a contract's ``references`` look values up. ``collection`` names the
    first; ``progress(file name)`` gives each load's progress callback; every load stops at ``deadline``."""
    def load(path: Path, name: str | None) -> AuditTarget:
        return load_path(path, collection=name, database=database, connection_name=connection_name,
                         max_time_ms=max_time_ms, progress=progress(path.name) if progress else None,
                         deadline=deadline)

    target = load(paths[0], collection)
    others = {t.name: t for t in (load(p, None) for p in paths[1:])}

    def sibling(name: str) -> AuditTarget:
        found = others.get(name)
        if found is None:
            raise DataLoadError(f"no collection {name!r} was loaded beside {target.name!r}: give its file "
                                f"with another --file")
        return found

    target.set_siblings(sibling)
    return target


def load_jsonl(path: str | Path, *, collection: str | None = None, database: str = "files",
               connection_name: str = "file", max_time_ms: int = 10_000) -> AuditTarget:
    """``load_path`` under its earlier name (bench scripts call it): each file is a collection of its
    own, read through the returned target (there is no client to reach it by another way)."""
    return load_path(path, collection=collection, database=database, connection_name=connection_name,
                     max_time_ms=max_time_ms)


def open_uri(uri: str, *, database: str, collection: str, connection_name: str = "default",
             max_time_ms: int = 10_000, connect_timeout_ms: int = 10_000, source: str = "the MongoDB URI",
             ) -> AuditTarget:
    """A read-only target on a live server. Nothing is sent until the first query. ``source``
    names where the URI came from in errors (``ARGUS_MONGODB_URI``)."""
    client = _client(check_mongodb_uri(uri, source), connect_timeout_ms, source)
    return AuditTarget(client[database][collection], connection_name=connection_name, max_time_ms=max_time_ms)


def _client(uri: str, connect_timeout_ms: int = 10_000, source: str = "the MongoDB URI",
            ) -> MongoClient[dict[str, Any]]:
    lowered = uri.lower()
    timeouts: dict[str, Any] = {name: connect_timeout_ms for name in ("serverSelectionTimeoutMS", "connectTimeoutMS")
                                if name.lower() not in lowered}  # options written in the URI win over our defaults
    try:
        return MongoClient(uri, appname="argus", retryWrites=False, **timeouts)
    except ConfigurationError as exc:  # pymongo validates the URI eagerly, and resolves mongodb+srv:// names
        raise TargetUnavailable(f"cannot use {source}: {_configuration_problem(exc, uri)}") from None
    except Exception as exc:
        raise TargetUnavailable(f"cannot use {source}: {type(exc).__name__}") from None


def _configuration_problem(exc: ConfigurationError, uri: str) -> str:
    """pymongo's reason without the host it names (it is part of the URI, which is a secret)."""
    reason = str(exc).split(":", 1)[0].strip().rstrip(".")
    if uri.lower().startswith("mongodb+srv://") and any(w in reason.lower() for w in ("dns", "resolution", "query")):
        return (f"the mongodb+srv:// host has no DNS SRV record Argus could resolve ({reason}); check the host "
                f"name, the network's DNS, or use a mongodb:// URI that lists the hosts")
    return f"{reason} (ConfigurationError)" if reason else "ConfigurationError"


class SourceCache:
    """Audit targets for schedules, reusing what is expensive to build.

    Files connections load each file once into the in-process engine and reload it when the file
    changes; URI connections keep one pymongo client (thread-safe,
    pooled) per connection, rebuilt when the connection's definition changes.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[tuple[str, str, str], tuple[tuple[int, int], MemoryCollection]] = {}
        self._clients: dict[tuple[str, str], MongoClient[dict[str, Any]]] = {}

    def target(self, connection_name: str, connection: Connection, database: str, collection: str, *,
               max_time_ms: int, where: str = "", deadline: LoadDeadline | None = None) -> AuditTarget:
        """``where`` names the connection's definition in errors (``schedules.yaml:12 connections.prod``);
        loading a file stops at ``deadline`` (the run's time budget)."""
        if connection.files is not None:
            path = connection.files.get(collection)
            if path is None:
                raise DataLoadError(f"connection {connection_name!r} has no file for collection {collection!r}")
            target = self._file_target(connection_name, path, database, collection, max_time_ms, deadline)
            # a contract's references read the connection's other files, as collections of one database
            target.set_siblings(lambda name: self.target(connection_name, connection, database, name,
                                                         max_time_ms=max_time_ms, where=where,
                                                         deadline=deadline))
            return target
        where = where or f"connection {connection_name!r}"
        uri = connection.uri(where).get_secret_value()
        key = (connection_name, hashlib.sha256(uri.encode()).hexdigest())
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                for old in [k for k in self._clients if k[0] == connection_name]:
                    self._clients.pop(old).close()
                client = _client(uri, source=f"{where} URI")
                self._clients[key] = client
        return AuditTarget(client[database][collection], connection_name=connection_name, max_time_ms=max_time_ms)

    def _file_target(self, connection_name: str, path: Path, database: str, collection: str,
                     max_time_ms: int, deadline: LoadDeadline | None = None) -> AuditTarget:
        try:
            stat = path.stat()
        except OSError as exc:
            raise DataLoadError(f"{path}: {exc.strerror}") from None
        version = (stat.st_mtime_ns, stat.st_size)
        key = (connection_name, database, collection)
        with self._lock:
            cached = self._files.get(key)
            if cached is None or cached[0] != version:
                cached = (version, load_file(path, collection=collection, database=database, deadline=deadline))
                self._files[key] = cached
        return AuditTarget(cached[1], connection_name=connection_name, max_time_ms=max_time_ms, in_memory=True)

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
            self._files.clear()
