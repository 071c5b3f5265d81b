"""Where audited collections come from: a live MongoDB / Cosmos DB URI, or Extended JSON lines.

A ``.jsonl`` file (as ``mongoexport`` writes it) is loaded into an in-memory mongomock database,
so demos and tests audit the same way a live server is audited. URIs never appear in errors or
logs with their password.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import mongomock
from bson import json_util
from bson.errors import InvalidDocument
from pymongo import MongoClient

from agent.errors import DataLoadError, TargetUnavailable
from agent.tools.target import AuditTarget

__all__ = ["load_jsonl", "open_uri", "redact_uri"]

_BATCH = 1000
_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:@/]*)(:(?P<password>[^@/]*))?@", re.I)


def redact_uri(uri: str) -> str:
    """``mongodb://app:s3cret@host/db`` → ``mongodb://app:***@host/db``."""
    return _CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}{':***' if m['password'] is not None else ''}@", uri)


def load_jsonl(path: str | Path, *, collection: str | None = None, database: str = "files",
               connection_name: str = "file", max_time_ms: int = 10_000,
               client: Any | None = None) -> AuditTarget:
    """Load an Extended JSON lines file into an in-memory collection and return it as a target.

    The collection is named after the file (``orders.jsonl`` → ``orders``) unless ``collection``
    is given. Errors name the file and line. ``client`` lets several files share one database.
    """
    file = Path(path)
    name = collection or file.name.removesuffix(".jsonl").removesuffix(".json")
    if not file.is_file():
        raise DataLoadError(f"{file}: no such file")
    coll = (client or mongomock.MongoClient())[database][name]
    batch: list[dict[str, Any]] = []
    first_line = 1
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                doc = json_util.loads(line)
            except (ValueError, TypeError) as exc:
                raise DataLoadError(f"{file}:{number}: not valid Extended JSON ({type(exc).__name__})") from exc
            if not isinstance(doc, dict):
                raise DataLoadError(f"{file}:{number}: expected a JSON object, found {type(doc).__name__}")
            if not batch:
                first_line = number
            batch.append(doc)
            if len(batch) >= _BATCH:
                _insert(coll, batch, file, first_line)
                batch = []
    if batch:
        _insert(coll, batch, file, first_line)
    return AuditTarget(coll, connection_name=connection_name, max_time_ms=max_time_ms)


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
             max_time_ms: int = 10_000, connect_timeout_ms: int = 10_000) -> AuditTarget:
    """A read-only target on a live server. Nothing is sent until the first query."""
    lowered = uri.lower()
    timeouts = {name: connect_timeout_ms for name in ("serverSelectionTimeoutMS", "connectTimeoutMS")
                if name.lower() not in lowered}  # options written in the URI win over our defaults
    try:
        client: MongoClient[dict[str, Any]] = MongoClient(uri, appname="argus", retryWrites=False, **timeouts)
    except Exception as exc:  # pymongo validates the URI eagerly
        raise TargetUnavailable(f"cannot use MongoDB URI {redact_uri(uri)}: {type(exc).__name__}") from exc
    return AuditTarget(client[database][collection], connection_name=connection_name, max_time_ms=max_time_ms)
