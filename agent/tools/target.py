"""The audited collection, as tools see it: read methods only, each with a server time limit.

``AuditTarget`` wraps a pymongo ``Collection`` (or mongomock's, which has the same interface)
and exposes ``find``, ``count_documents``, ``aggregate``, ``sample``, ``estimated_document_count``,
``newest`` and ``indexed_fields`` and nothing else, so no code path from a tool can reach a write
method. Every call carries ``maxTimeMS`` and waits on the driver no longer than that
(``pymongo.timeout``), and every call is counted in the target's ``OperationLedger`` (passes,
documents examined, request units). Cosmos DB's throttling (16500, ``RetryAfterMs``) is retried
within the run's remaining time; pymongo errors are translated into ``ToolError`` /
``TargetUnavailable`` here.

An in-process engine (mongomock, behind ``--file``) ignores ``maxTimeMS``, and some of its stages
take quadratic time on large arrays, so there each read runs in a forked child killed at the limit
(``agent.tools.engine_deadline``; a regex holds the interpreter lock, so no thread could stop it),
and ends in ``QueryTimeout`` as on a server. A live server's replies are
decoded with ``DATETIME_AUTO``, so a date before year 1 or after 9999 arrives as a ``DatetimeMS``
instead of failing the whole read.
"""

from __future__ import annotations

import copy
import functools
import random
import re
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import pymongo
from bson.codec_options import DatetimeConversion
from bson.errors import BSONError
from pymongo import errors as mongo_errors
from pymongo.collection import Collection

from agent.errors import QueryRejected, QueryTimeout, TargetUnavailable, ToolError
from agent.tools.accounting import DatabaseCost, OperationLedger, OperationRecord, is_selective, pipeline_is_pass
from agent.tools.engine_deadline import honours_max_time, within

__all__ = ["AuditTarget", "retry_after_ms"]

T = TypeVar("T")

DEFAULT_MAX_TIME_MS = 10_000
THROTTLED = 16500  # Cosmos DB: TooManyRequests (HTTP 429), the request used more RU than provisioned
EXCEEDED_TIME_LIMIT = 50
_STEPPED_DOWN = (10107, 11602, 13435, 189, 91)  # NotWritablePrimary, InterruptedDueToReplStateChange, ...
_RETRY_AFTER = re.compile(r"RetryAfterMs=(\d+)")
_FALLBACK_RETRY_MS = 100
_MAX_RETRIES = 8


def retry_after_ms(message: str, attempt: int) -> int:
    """The wait Cosmos DB asks for (``RetryAfterMs=N`` in its message), else exponential backoff."""
    found = _RETRY_AFTER.search(message)
    return int(found.group(1)) if found else _FALLBACK_RETRY_MS * 2 ** attempt


class AuditTarget:
    """One collection, read-only. ``max_time_ms`` bounds every query sent through it.

    ``in_memory`` says the collection is mongomock's (files, demos): samples are then drawn in
    process instead of with ``$sample``, which mongomock answers by copying and shuffling every
    document. ``sleep`` waits between retries (tests pass a fake); ``sample_seed`` makes the
    in-memory sample repeatable (default: from the namespace, so each run of a collection draws
    the same documents while they stay, and two collections draw independently).
    """

    def __init__(self, collection: Any, *, connection_name: str = "default",
                 max_time_ms: int = DEFAULT_MAX_TIME_MS, in_memory: bool | None = None,
                 sleep: Callable[[float], None] = time.sleep, sample_seed: int | None = None) -> None:
        if isinstance(collection, Collection):
            collection = collection.with_options(codec_options=collection.codec_options.with_options(
                datetime_conversion=DatetimeConversion.DATETIME_AUTO))
        self._collection = collection
        self.connection_name = connection_name
        self.database = collection.database.name
        self.name = collection.name
        self.max_time_ms = max_time_ms
        if in_memory is None:
            in_memory = getattr(collection, "in_process", False) is True or not honours_max_time(collection)
        self.in_memory = in_memory
        self.ledger = OperationLedger(server="memory" if self.in_memory else "unknown")
        self._sleep = sleep
        self._probing = not self.in_memory
        self._seed = zlib.crc32(f"{self.database}.{self.name}".encode()) if sample_seed is None else sample_seed
        self._time_cap: Callable[[], int | None] = lambda: None
        self._reached = False

    def cap_time_with(self, remaining_ms: Callable[[], int | None]) -> None:
        """Let the loop shrink each query's limit to the audit's remaining wall-clock budget."""
        self._time_cap = remaining_ms

    def cost(self) -> DatabaseCost:
        """What the operations sent so far cost: the report's ``database_cost``."""
        return self.ledger.summary()

    def _limit_ms(self) -> int:
        """A server's query gets ``max_time_ms`` (it protects the server), cut to the run's remaining
        time. The in-memory engine is Argus's own process, with no server to protect: its queries
        get the run's remaining time, so one batched pass over a wide file is not cut at 10 s."""
        cap = self._time_cap()
        if self.in_memory and cap is not None:
            return max(1, cap)
        return max(1, min(self.max_time_ms, cap)) if cap is not None else self.max_time_ms

    def find(self, query: Mapping[str, Any], projection: Mapping[str, Any] | None, limit: int) -> list[Any]:
        def run(limit_ms: int) -> list[Any]:
            return list(self._collection.find(dict(query), projection).limit(limit).max_time_ms(limit_ms))
        return self._call("find", not is_selective(query), run)

    def count_documents(self, query: Mapping[str, Any]) -> int:
        return self._call("count_documents", not is_selective(query),
                          lambda limit_ms: int(self._collection.count_documents(dict(query), maxTimeMS=limit_ms)))

    def aggregate(self, pipeline: list[dict[str, Any]]) -> list[Any]:
        return self._call("aggregate", pipeline_is_pass(pipeline),
                          lambda limit_ms: list(self._collection.aggregate(pipeline, maxTimeMS=limit_ms)))

    def estimated_document_count(self) -> int:
        size = self._call("estimated_document_count", False,
                          lambda limit_ms: int(self._collection.estimated_document_count(maxTimeMS=limit_ms)))
        self.ledger.collection_size = size
        return size

    def newest(self, field: str) -> Any:
        """The largest value of ``field`` (on an index: one key read), or None in an empty collection."""
        query = {} if field == "_id" else {field: {"$exists": True}}

        def run(limit_ms: int) -> Any:
            for doc in self._collection.find(query, {field: 1}).sort(field, -1).limit(1).max_time_ms(limit_ms):
                value: Any = doc
                for part in field.split("."):
                    value = value.get(part) if isinstance(value, Mapping) else None
                return value
            return None
        return self._call("find", False, run)

    def indexed_fields(self) -> set[str]:
        """Fields that lead an index (a sort or range on them reads the index, not the collection)."""
        return self._call("list_indexes", False, lambda _: {
            next(iter(index["key"])) for index in self._collection.list_indexes() if index.get("key")})

    def sample(self, size: int) -> list[Any]:
        """Up to ``size`` documents drawn at random: ``$sample`` on a server, in process in memory."""
        if self.in_memory:
            drawn = self._call("sample", False, lambda _: _draw_in_memory(self._collection, size, self._seed))
        else:
            drawn = self.aggregate([{"$sample": {"size": size}}])
        self.ledger.records[-1].documents_examined = len(drawn)
        return drawn

    # --- one operation: time limit, retries, accounting, translated errors --------------------

    def _reach(self, kind: str) -> None:
        """Wait for a server as long as the client's serverSelectionTimeoutMS says (the URI's, when it sets
        one), once: a query's own time limit (pymongo.timeout) would override it, and an unreachable server
        would hold every run for the whole query limit."""
        self._reached = True
        client = getattr(self._collection.database, "client", None)
        wait = getattr(getattr(client, "options", None), "server_selection_timeout", None)
        if client is None or not isinstance(wait, int | float):
            return
        try:
            with _translated(kind), pymongo.timeout(min(wait, self._limit_ms() / 1000)):
                # the reads' own read preference: with secondaryPreferred, a secondary answering is enough
                client.admin.command("ping", read_preference=self._collection.read_preference)
        except TargetUnavailable as exc:
            raise TargetUnavailable(f"{exc} (no server answered within the URI's serverSelectionTimeoutMS, "
                                    f"{wait:g} s)") from exc.__cause__

    def _call(self, kind: str, full_pass: bool, operation: Callable[[int], T]) -> T:
        if not self._reached and not self.in_memory:
            self._reach(kind)
        attempt = 0
        t0 = time.perf_counter()
        while True:
            limit_ms = self._limit_ms()
            try:
                with _translated(kind), pymongo.timeout(limit_ms / 1000):
                    result = within(self._collection, limit_ms, functools.partial(operation, limit_ms),
                                    operation=kind)
                break
            except _Retry as retry:
                attempt += 1
                wait_ms = retry.wait_ms(attempt)
                if retry.throttle:
                    self.ledger.throttle()
                remaining = self._time_cap()
                if attempt > _MAX_RETRIES or (remaining is not None and wait_ms >= remaining):
                    self._record(kind, full_pass, t0, error=retry.give_up)
                    raise retry.final from retry.__cause__
                self._sleep(wait_ms / 1000)
            except Exception as exc:
                self._record(kind, full_pass, t0, error=type(exc).__name__)
                raise
        self._record(kind, full_pass, t0)
        return result

    def _record(self, kind: str, full_pass: bool, t0: float, *, error: str | None = None) -> None:
        record = OperationRecord(kind=kind, full_pass=full_pass and error is None,
                                 duration_ms=round((time.perf_counter() - t0) * 1000, 3), error=error)
        if error is None and self._probing and self.ledger.server in ("unknown", "cosmosdb"):
            record.request_charge = self._request_charge()
        self.ledger.record(record)

    def _request_charge(self) -> float | None:
        """Cosmos DB's charge for the last operation on this connection; the first answer also tells
        whether the server is Cosmos DB at all (MongoDB does not know the command)."""
        try:
            with pymongo.timeout(max(self._limit_ms(), 1) / 1000):
                reply = self._collection.database.command("getLastRequestStatistics",
                                                          read_preference=self._collection.read_preference)
        except mongo_errors.OperationFailure as exc:
            if exc.code != THROTTLED:  # a throttled probe says nothing about the server
                self.ledger.server = "mongodb"
            return None
        except mongo_errors.PyMongoError:  # unreachable now: the next operation reports it
            return None
        except Exception:  # an engine that is no server at all (a wrapped mongomock): stop asking
            self._probing = False
            return None
        charge = reply.get("RequestCharge") if isinstance(reply, Mapping) else None
        if not isinstance(charge, int | float):
            self.ledger.server = "mongodb"
            return None
        self.ledger.server = "cosmosdb"
        return float(charge)


class _Retry(Exception):
    """A server answer worth waiting out: Cosmos DB throttling, or a primary stepping down."""

    def __init__(self, final: Exception, give_up: str, *, throttle: bool, message: str = "") -> None:
        super().__init__(give_up)
        self.final, self.give_up, self.throttle, self.message = final, give_up, throttle, message

    def wait_ms(self, attempt: int) -> int:
        return retry_after_ms(self.message, attempt - 1) if self.throttle else _FALLBACK_RETRY_MS * 2 ** attempt


def _draw_in_memory(collection: Any, size: int, seed: int) -> list[Any]:
    """A uniform sample without mongomock's ``$sample`` (which copies and shuffles every document):
    pick ``_id``s from the in-memory store, copy only those documents. Repeatable for a seed.
    Argus's own engine (``agent.engine``) draws the same positions itself."""
    if getattr(collection, "in_process", False) is True:  # mongomock answers any attribute with a collection
        return list(collection.draw_sample(size, seed))
    store = getattr(collection, "_store", None)
    documents = getattr(store, "_documents", None)
    if not isinstance(documents, Mapping):  # another mongomock layout: fall back to $sample
        return list(collection.aggregate([{"$sample": {"size": size}}]))
    keys = list(documents.keys())
    chosen = random.Random(seed).sample(range(len(keys)), min(size, len(keys)))
    return [copy.deepcopy(documents[keys[i]]) for i in chosen]


@contextmanager
def _translated(operation: str) -> Iterator[None]:
    try:
        yield
    except mongo_errors.ExecutionTimeout as exc:
        if _first_line(exc).startswith("operation would exceed time limit"):  # pymongo's own deadline passed
            raise TargetUnavailable(f"{operation} got no answer within its time limit: the server is unreachable, "
                                    f"not answering, or has no primary (pymongo retried until the limit)") from exc
        raise QueryTimeout(f"{operation} reached its server time limit (maxTimeMS, code {EXCEEDED_TIME_LIMIT} "
                           f"ExceededTimeLimit); narrow the query, or on Cosmos DB raise the provisioned throughput: "
                           f"its server-side retries of throttled requests end in this error") from exc
    except mongo_errors.NotPrimaryError as exc:
        raise _Retry(TargetUnavailable(f"{operation} failed: the server stepped down from primary "
                                       f"({type(exc).__name__}) and no primary answered within the time limit; "
                                       f"use readPreference=secondaryPreferred"),
                     "stepped_down", throttle=False) from exc
    except mongo_errors.OperationFailure as exc:
        if exc.code == THROTTLED:
            message = _first_line(exc)
            raise _Retry(ToolError(f"{operation} was throttled by the server (code {THROTTLED}, TooManyRequests) "
                                   f"until the run's time ran out; raise the provisioned throughput (RU/s) or "
                                   f"schedule the audit when the collection is idle"),
                         "throttled", throttle=True, message=message) from exc
        if exc.code in _STEPPED_DOWN:
            raise _Retry(TargetUnavailable(f"{operation} failed: the replica set changed primary (code {exc.code}) "
                                           f"and no member answered within the time limit"),
                         "stepped_down", throttle=False) from exc
        code = f" (code {exc.code})" if exc.code is not None else ""
        raise QueryRejected(f"{operation} was refused by the server{code}: {_first_line(exc)}") from exc
    except (mongo_errors.ConnectionFailure, mongo_errors.ServerSelectionTimeoutError) as exc:
        raise TargetUnavailable(f"{operation} could not reach the database: {type(exc).__name__}") from exc
    except mongo_errors.PyMongoError as exc:
        raise ToolError(f"{operation} failed: {type(exc).__name__}") from exc
    except (BSONError, OverflowError) as exc:  # the guard refuses these first; a driver's word is final
        raise ToolError(f"{operation} could not send the query: it cannot be encoded as BSON "
                        f"({type(exc).__name__})") from exc
    except (NotImplementedError, TypeError, ValueError, KeyError, AttributeError, RecursionError, re.error) as exc:
        # mongomock raises plain Python errors for operators or BSON types it cannot emulate,
        # and re.error for a pattern a server would refuse with an OperationFailure.
        raise QueryRejected(f"{operation} failed in the database engine: {type(exc).__name__}") from exc


def _first_line(exc: mongo_errors.OperationFailure) -> str:
    details = exc.details or {}
    message = str(details.get("errmsg") or exc).splitlines()[0]
    return message[:200]
