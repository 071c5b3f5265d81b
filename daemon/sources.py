"""Where audited collections come from: a live MongoDB / Cosmos DB URI, or Extended JSON lines.

A ``.jsonl`` file (as ``mongoexport`` writes it) is loaded into an in-memory mongomock database,
so demos and tests audit the same way a live server is audited. A URI never appears in an
error or a log: it is checked before pymongo sees it (``check_mongodb_uri``), and the error says
what is wrong and where the URI came from.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

import mongomock
from bson import Decimal128, json_util
from bson.codec_options import DatetimeConversion
from bson.errors import BSONError, InvalidDocument, InvalidId
from bson.json_util import JSONOptions
from pymongo import MongoClient
from pymongo.errors import ConfigurationError

from agent.ejson import MAX_NESTING, depth_of
from agent.errors import DataLoadError, TargetUnavailable
from agent.tools.target import AuditTarget
from config.schedules import Connection
from config.settings import check_mongodb_uri

__all__ = ["SourceCache", "load_jsonl", "open_uri"]

_BATCH = 1000
# Canonical-or-relaxed input as mongoexport writes it; dates outside years 1-9999 stay DatetimeMS.
_FILE_JSON = JSONOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)


def load_jsonl(path: str | Path, *, collection: str | None = None, database: str = "files",
               connection_name: str = "file", max_time_ms: int = 10_000,
               client: Any | None = None) -> AuditTarget:
    """Load an Extended JSON lines file into an in-memory collection and return it as a target.

    The collection is named after the file (``orders.jsonl`` → ``orders``) unless ``collection``
    is given. Errors name the file and line. ``client`` lets several files share one database.
    """
    coll = _load_collection(Path(path), collection, database, client)
    return AuditTarget(coll, connection_name=connection_name, max_time_ms=max_time_ms, in_memory=True)


def _load_collection(file: Path, collection: str | None, database: str, client: Any | None) -> Any:
    name = collection or file.name.removesuffix(".jsonl").removesuffix(".json")
    if file.is_dir():
        raise DataLoadError(f"{file}: is a directory; give one .jsonl file")
    if not file.is_file():
        raise DataLoadError(f"{file}: no such file")
    coll = (client or mongomock.MongoClient())[database][name]
    batch: list[dict[str, Any]] = []
    first_line = 1
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            doc = _parse_line(line, file, number)
            if not batch:
                first_line = number
            batch.append(doc)
            if len(batch) >= _BATCH:
                _insert(coll, batch, file, first_line)
                batch = []
    if batch:
        _insert(coll, batch, file, first_line)
    return coll


def _parse_line(line: str, file: Path, number: int) -> dict[str, Any]:
    try:
        doc = json_util.loads(line, json_options=_FILE_JSON)
    except RecursionError:
        raise DataLoadError(f"{file}:{number}: the document is nested deeper than {MAX_NESTING} levels, "
                            "MongoDB's limit") from None
    except InvalidId as exc:
        raise DataLoadError(f"{file}:{number}: not valid Extended JSON: an $oid must be 24 hexadecimal "
                            "characters") from exc
    except (ValueError, TypeError, BSONError, ArithmeticError) as exc:  # decimal.InvalidOperation, OverflowError
        raise DataLoadError(f"{file}:{number}: not valid Extended JSON ({type(exc).__name__})") from exc
    if not isinstance(doc, dict):
        raise DataLoadError(f"{file}:{number}: expected a JSON object, found {type(doc).__name__}")
    if depth_of(doc) > MAX_NESTING:
        raise DataLoadError(f"{file}:{number}: the document is nested deeper than {MAX_NESTING} levels, "
                            "MongoDB's limit")
    if "$numberDecimal" in line:
        doc = _comparable(doc)
    return doc


def _comparable(value: Any) -> Any:
    """``value`` with every Decimal128 as a double: the in-memory engine cannot compare Decimal128
    values (every range check of such a field would be refused), and a server compares them as
    numbers anyway. A decimal keeps about 16 significant digits."""
    if isinstance(value, Decimal128):
        return float(value.to_decimal())
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


def _insert(coll: Any, batch: list[dict[str, Any]], file: Path, first_line: int) -> None:
    try:
        coll.insert_many(batch, ordered=True)
    except (InvalidDocument, ValueError, TypeError) as exc:
        raise DataLoadError(f"{file}: a document in lines {first_line}-{first_line + len(batch) - 1} "
                            f"cannot be stored: {exc}") from exc
    except Exception as exc:  # duplicate _id and other mongomock write errors
        raise DataLoadError(f"{file}: a document in lines {first_line}-{first_line + len(batch) - 1} "
                            f"cannot be stored: {type(exc).__name__}") from exc


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

    Files connections load each Extended JSON lines file once into an in-memory database and
    reload it when the file changes; URI connections keep one pymongo client (thread-safe,
    pooled) per connection, rebuilt when the connection's definition changes.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[tuple[str, str, str], tuple[tuple[int, int], Any]] = {}
        self._clients: dict[tuple[str, str], MongoClient[dict[str, Any]]] = {}

    def target(self, connection_name: str, connection: Connection, database: str, collection: str, *,
               max_time_ms: int, where: str = "") -> AuditTarget:
        """``where`` names the connection's definition in errors (``schedules.yaml:12 connections.prod``)."""
        if connection.files is not None:
            path = connection.files.get(collection)
            if path is None:
                raise DataLoadError(f"connection {connection_name!r} has no file for collection {collection!r}")
            return self._file_target(connection_name, path, database, collection, max_time_ms)
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
                     max_time_ms: int) -> AuditTarget:
        try:
            stat = path.stat()
        except OSError as exc:
            raise DataLoadError(f"{path}: {exc.strerror}") from None
        version = (stat.st_mtime_ns, stat.st_size)
        key = (connection_name, database, collection)
        with self._lock:
            cached = self._files.get(key)
            if cached is None or cached[0] != version:
                cached = (version, _load_collection(path, collection, database, None))
                self._files[key] = cached
        return AuditTarget(cached[1], connection_name=connection_name, max_time_ms=max_time_ms, in_memory=True)

    def close(self) -> None:
        with self._lock:
            for client in self._clients.values():
                client.close()
            self._clients.clear()
            self._files.clear()
