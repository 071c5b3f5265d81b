"""The audited collection, as tools see it: read methods only, each with a server time limit.

``AuditTarget`` wraps a pymongo ``Collection`` (or mongomock's, which has the same interface)
and exposes ``find``, ``count_documents``, ``aggregate``, ``estimated_document_count``, ``newest``
and ``indexed_fields`` and nothing else, so no code path from a tool can reach a write method.
Every query carries ``maxTimeMS``; pymongo errors are translated into ``ToolError`` / ``TargetUnavailable`` here.

An in-process engine (mongomock, behind ``--file``) ignores ``maxTimeMS``, and some of its stages
take quadratic time on large arrays, so there the same limit is enforced in Argus's process: a
timer raises ``QueryTimeout`` inside the query when the limit passes. A live server's replies are
decoded with ``DATETIME_AUTO``, so a date before year 1 or after 9999 arrives as a ``DatetimeMS``
instead of failing the whole read.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from bson.codec_options import DatetimeConversion
from pymongo import errors as mongo_errors
from pymongo.collection import Collection

from agent.errors import QueryTimeout, TargetUnavailable, ToolError

__all__ = ["AuditTarget"]

T = TypeVar("T")

DEFAULT_MAX_TIME_MS = 10_000


class AuditTarget:
    """One collection, read-only. ``max_time_ms`` bounds every query sent through it."""

    def __init__(self, collection: Any, *, connection_name: str = "default",
                 max_time_ms: int = DEFAULT_MAX_TIME_MS) -> None:
        self._in_process = not isinstance(collection, Collection)
        if not self._in_process:
            collection = collection.with_options(codec_options=collection.codec_options.with_options(
                datetime_conversion=DatetimeConversion.DATETIME_AUTO))
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
        limit_ms = self._limit_ms()
        with self._bounded("find", limit_ms):
            return list(self._collection.find(dict(query), projection).limit(limit).max_time_ms(limit_ms))

    def count_documents(self, query: Mapping[str, Any]) -> int:
        limit_ms = self._limit_ms()
        with self._bounded("count_documents", limit_ms):
            return int(self._collection.count_documents(dict(query), maxTimeMS=limit_ms))

    def aggregate(self, pipeline: list[dict[str, Any]]) -> list[Any]:
        limit_ms = self._limit_ms()
        with self._bounded("aggregate", limit_ms):
            return list(self._collection.aggregate(pipeline, maxTimeMS=limit_ms))

    def newest(self, field: str) -> Any:
        """The largest value of ``field`` (on an index: one key read), or None in an empty collection."""
        limit_ms = self._limit_ms()
        with self._bounded("find", limit_ms):
            query = {} if field == "_id" else {field: {"$exists": True}}
            cursor = self._collection.find(query, {field: 1}).sort(field, -1).limit(1).max_time_ms(limit_ms)
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
        limit_ms = self._limit_ms()
        with self._bounded("estimated_document_count", limit_ms):
            return int(self._collection.estimated_document_count(maxTimeMS=limit_ms))

    @contextmanager
    def _bounded(self, operation: str, limit_ms: int) -> Iterator[None]:
        with _translated(operation):
            if self._in_process:
                with _in_process_limit(limit_ms):
                    yield
            else:
                yield


class _InProcessTimeout(BaseException):
    """Raised inside an in-process query by its timer; BaseException so the engine cannot swallow it."""


@contextmanager
def _in_process_limit(limit_ms: int) -> Iterator[None]:
    """Interrupt the enclosed Python code when ``limit_ms`` passes, as ``maxTimeMS`` does on a server."""
    thread_id = threading.get_ident()
    lock = threading.Lock()
    state = {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                                           ctypes.py_object(_InProcessTimeout))

    timer = threading.Timer(limit_ms / 1000, fire)
    timer.daemon = True
    try:
        try:
            timer.start()
            yield
        finally:
            timer.cancel()
            with lock:
                state["done"] = True
                if state["fired"]:  # not delivered yet: clear it so it cannot surface later
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), None)
    except _InProcessTimeout:
        pass
    if state["fired"]:
        raise mongo_errors.ExecutionTimeout("operation exceeded time limit")


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
    except (NotImplementedError, TypeError, ValueError, KeyError, AttributeError, RecursionError, re.error) as exc:
        # mongomock raises plain Python errors for operators or BSON types it cannot emulate,
        # and re.error for a pattern a server would refuse with an OperationFailure.
        raise ToolError(f"{operation} failed in the database engine: {type(exc).__name__}") from exc


def _first_line(exc: mongo_errors.OperationFailure) -> str:
    details = exc.details or {}
    message = str(details.get("errmsg") or exc).splitlines()[0]
    return message[:200]
