"""The audited collection, as tools see it: read methods only, each with a server time limit.

``AuditTarget`` wraps a pymongo ``Collection`` (or mongomock's, which has the same interface)
and exposes ``find``, ``count_documents``, ``aggregate``, ``estimated_document_count``, ``newest``
and ``indexed_fields`` and nothing else, so no code path from a tool can reach a write method.
Every query carries ``maxTimeMS``; pymongo errors are translated into ``ToolError`` / ``TargetUnavailable`` here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from pymongo import errors as mongo_errors

from agent.errors import QueryTimeout, TargetUnavailable, ToolError

__all__ = ["AuditTarget"]

T = TypeVar("T")

DEFAULT_MAX_TIME_MS = 10_000


class AuditTarget:
    """One collection, read-only. ``max_time_ms`` bounds every query sent through it."""

    def __init__(self, collection: Any, *, connection_name: str = "default",
                 max_time_ms: int = DEFAULT_MAX_TIME_MS) -> None:
        self._collection = collection
        self.connection_name = connection_name
        self.database = collection.database.name
        self.name = collection.name
        self.max_time_ms = max_time_ms
        self._time_cap: Callable[[], int | None] = lambda: None

    def cap_time_with(self, remaining_ms: Callable[[], int | None]) -> None:
        """Let the loop shrink each query's limit to the audit's remaining wall-clock budget."""
        self._time_cap = remaining_ms

    def _limit_ms(self) -> int:
        cap = self._time_cap()
        return max(1, min(self.max_time_ms, cap)) if cap is not None else self.max_time_ms

    def find(self, query: Mapping[str, Any], projection: Mapping[str, Any] | None, limit: int) -> list[Any]:
        with _translated("find"):
            cursor = self._collection.find(dict(query), projection).limit(limit).max_time_ms(self._limit_ms())
            return list(cursor)

    def count_documents(self, query: Mapping[str, Any]) -> int:
        with _translated("count_documents"):
            return int(self._collection.count_documents(dict(query), maxTimeMS=self._limit_ms()))

    def aggregate(self, pipeline: list[dict[str, Any]]) -> list[Any]:
        with _translated("aggregate"):
            return list(self._collection.aggregate(pipeline, maxTimeMS=self._limit_ms()))

    def newest(self, field: str) -> Any:
        """The largest value of ``field`` (on an index: one key read), or None in an empty collection."""
        with _translated("find"):
            query = {} if field == "_id" else {field: {"$exists": True}}
            cursor = (self._collection.find(query, {field: 1}).sort(field, -1).limit(1)
                      .max_time_ms(self._limit_ms()))
            for doc in cursor:
                value: Any = doc
                for part in field.split("."):
                    value = value.get(part) if isinstance(value, Mapping) else None
                return value
            return None

    def indexed_fields(self) -> set[str]:
        """Fields that lead an index (a sort or range on them reads the index, not the collection)."""
        with _translated("list_indexes"):
            return {next(iter(index["key"])) for index in self._collection.list_indexes() if index.get("key")}

    def estimated_document_count(self) -> int:
        with _translated("estimated_document_count"):
            return int(self._collection.estimated_document_count(maxTimeMS=self._limit_ms()))


@contextmanager
def _translated(operation: str) -> Iterator[None]:
    try:
        yield
    except mongo_errors.ExecutionTimeout as exc:
        raise QueryTimeout(f"{operation} reached its server time limit (maxTimeMS); narrow the query") from exc
    except (mongo_errors.ConnectionFailure, mongo_errors.ServerSelectionTimeoutError) as exc:
        raise TargetUnavailable(f"{operation} could not reach the database: {type(exc).__name__}") from exc
    except mongo_errors.OperationFailure as exc:
        code = f" (code {exc.code})" if exc.code is not None else ""
        raise ToolError(f"{operation} was refused by the server{code}: {_first_line(exc)}") from exc
    except mongo_errors.PyMongoError as exc:
        raise ToolError(f"{operation} failed: {type(exc).__name__}") from exc
    except (NotImplementedError, TypeError, ValueError, KeyError, re.error) as exc:
        # mongomock raises plain Python errors for operators or BSON types it cannot emulate,
        # and re.error for a pattern a server would refuse with an OperationFailure.
        raise ToolError(f"{operation} failed in the database engine: {type(exc).__name__}") from exc


def _first_line(exc: mongo_errors.OperationFailure) -> str:
    details = exc.details or {}
    message = str(details.get("errmsg") or exc).splitlines()[0]
    return message[:200]
