"""The audited collection, as tools see it: read methods only, each with a server time limit.

``AuditTarget`` wraps a pymongo ``Collection`` (or the in-process engine's ``MemoryCollection``,
which has the same read interface) and exposes ``find``, ``count_documents``, ``aggregate``,
``sample``, ``estimated_document_count``, ``newest`` and ``indexed_fields`` and nothing else, so no
code path from a tool can reach a write method. A scoped audit (``scope_to``) reads only the
documents of its window: the window's filter leads every read (a ``$match`` first in every pipeline,
ANDed into every ``find`` and count), added here so no tool can forget it, and the guard judges the
combined query. ``whole_collection()`` is the unscoped view collection-level measurements (health)
read through. Every call carries ``maxTimeMS`` and waits on the driver no longer than that
(``pymongo.timeout``), and every call is counted in the target's ``OperationLedger`` (passes,
documents examined, request units). Cosmos DB's throttling (16500, ``RetryAfterMs``) is retried
within the run's remaining time; pymongo errors are translated into ``ToolError`` /
``TargetUnavailable`` here.

The in-process engine (``argus.agent.engine``, behind ``--file``) keeps each read's ``maxTimeMS`` itself
and answers as a server does, refusals included (``OperationFailure``). Any other exception raised
inside it is a bug of the engine, not a server's word: it ends the audit (``EngineFault``) with a
log line naming the query's shape, never a quiet "refused". A live server's replies are
decoded with ``DATETIME_AUTO``, so a date before year 1 or after 9999 arrives as a ``DatetimeMS``
instead of failing the whole read.

Servers that refuse part of what is sent are met as a careful client would (``argus.agent.tools.compat``):
a refused ``$type`` alias is sent again as its numeric code, a refused ``$sample`` becomes a sample
drawn with ``find`` from random points of the ``_id`` index, a refused ``listIndexes`` or
``getLastRequestStatistics`` leaves what they tell unknown; each is noted once (``notes``). A
query the client stops waiting for (``NetworkTimeout``: the server ignored ``maxTimeMS``) is a
timeout of that query when the server still answers ``ping``, not a lost database.
"""

from __future__ import annotations

import copy
import random
import re
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import pymongo
import structlog
from bson.codec_options import DatetimeConversion
from bson.errors import BSONError
from pymongo import errors as mongo_errors
from pymongo.collection import Collection

from argus.agent.errors import ArgusError, EngineFault, QueryRejected, QueryTimeout, TargetUnavailable, ToolError
from argus.agent.segments.passes import SegmentPass
from argus.agent.tools.accounting import DatabaseCost, OperationLedger, OperationRecord, is_selective, pipeline_is_pass
from argus.agent.tools.batch_size import BatchSizing
from argus.agent.tools.compat import (
    NOT_BY_SUBTRACTION,
    ServerRefusals,
    complement_split,
    has_type_alias,
    named_operators,
    operators_in,
    refuses_type_alias,
    with_type_codes,
)
from argus.agent.tools.guard import check_filter, check_pipeline
from argus.agent.tools.sampling import draw_in_memory, random_points

__all__ = ["AuditTarget", "query_shape", "retry_after_ms"]

T = TypeVar("T")
log = structlog.get_logger(__name__)

DEFAULT_MAX_TIME_MS = 10_000
THROTTLED = 16500  # Cosmos DB: TooManyRequests (HTTP 429), the request used more RU than provisioned
EXCEEDED_TIME_LIMIT = 50
_STEPPED_DOWN = (10107, 11602, 13435, 189, 91)  # NotWritablePrimary, InterruptedDueToReplStateChange, ...
_NO_SUCH_COMMAND = (59,)  # CommandNotFound: MongoDB itself
_RETRY_AFTER = re.compile(r"RetryAfterMs=(\d+)")
_FALLBACK_RETRY_MS = 100
_MAX_RETRIES = 8
_FIND_SAMPLE_POINTS = 10  # random starting points of the _id index a find-based sample reads from
_PING_MS = 2000           # at most this long to ask a server that let a query time out whether it still answers
_LAST_READ_MS = 1000      # no optional read (one by one, a first-run baseline) starts with less than this left


def retry_after_ms(message: str, attempt: int) -> int:
    """The wait Cosmos DB asks for (``RetryAfterMs=N`` in its message), else exponential backoff."""
    found = _RETRY_AFTER.search(message)
    return int(found.group(1)) if found else _FALLBACK_RETRY_MS * 2 ** attempt


class AuditTarget:
    """One collection, read-only. ``max_time_ms`` bounds every query sent through it.

    ``in_memory`` says the collection is the in-process engine's (files, demos): samples are then
    drawn in process instead of with ``$sample``, which would shuffle every document. ``sleep``
    waits between retries (tests pass a fake); ``sample_seed`` makes the
    in-memory sample repeatable (default: from the namespace, so each run of a collection draws
    the same documents while they stay, and two collections draw independently).
    """

    def __init__(self, collection: Any, *, connection_name: str = "default",
                 max_time_ms: int = DEFAULT_MAX_TIME_MS, in_memory: bool | None = None,
                 sleep: Callable[[float], None] = time.sleep, sample_seed: int | None = None,
                 siblings: Callable[[str], AuditTarget] | None = None) -> None:
        if isinstance(collection, Collection):
            collection = collection.with_options(codec_options=collection.codec_options.with_options(
                datetime_conversion=DatetimeConversion.DATETIME_AUTO))
        self._collection = collection
        self.connection_name = connection_name
        self.database = collection.database.name
        self.name = collection.name
        self.max_time_ms = max_time_ms
        if in_memory is None:
            in_memory = getattr(collection, "in_process", False) is True
        self.in_memory = in_memory
        self.ledger = OperationLedger(server="memory" if self.in_memory else "unknown")
        self._sleep = sleep
        self.refusals = ServerRefusals()
        self.sizing = BatchSizing()  # checks per batched pass on this server (count_many); a run may start it
        if self.in_memory:
            self.refusals.learn("getLastRequestStatistics", "")  # no server to ask (an empty note is not shown)
        self._seed = zlib.crc32(f"{self.database}.{self.name}".encode()) if sample_seed is None else sample_seed
        self._time_cap: Callable[[], int | None] = lambda: None
        self._siblings = siblings
        self._is_sibling = False
        self.ru_budget: float | None = None
        self.segments: SegmentPass | None = None  # a run with segments: count_many groups by them (the loop sets it)
        self._scope: dict[str, Any] | None = None
        self.window_documents: int | None = None  # a scoped audit: the documents of its window
        self._reached = False

    def cap_time_with(self, remaining_ms: Callable[[], int | None]) -> None:
        """Let the loop shrink each query's limit to the audit's remaining wall-clock budget."""
        self._time_cap = remaining_ms

    def sibling(self, name: str) -> AuditTarget:
        """Another collection of the same database, read through the same wrapper (a reference check's
        lookups): its reads share this target's ledger, time cap and retries, and are recorded as
        lookups, never as passes over the audited collection. ``siblings`` (a files connection, whose
        collections are loaded one file each) finds it; by default it is ``database[name]``."""
        try:
            other = self._siblings(name) if self._siblings is not None else AuditTarget(
                self._collection.database[name], connection_name=self.connection_name,
                max_time_ms=self.max_time_ms, in_memory=self.in_memory, sleep=self._sleep)
        except (TypeError, KeyError) as exc:  # a collection loaded alone (a file) has no database to look in
            raise ToolError(f"no collection {name!r} can be read beside {self.name!r}") from exc
        other.ledger = self.ledger
        other._is_sibling = True
        other._time_cap = self._time_cap
        other.sizing = self.sizing
        other.refusals = self.refusals  # the same server: what it refuses for one collection, it refuses for all
        return other

    def set_siblings(self, siblings: Callable[[str], AuditTarget]) -> None:
        """How ``sibling`` finds another collection of the same database (a files connection's file)."""
        self._siblings = siblings

    def lookup(self, pipeline: list[dict[str, Any]]) -> list[Any]:
        """An aggregation that reads only what its leading ``$match`` selects (an index lookup where the
        field is indexed): recorded as a lookup, not a pass."""
        return self._call("lookup", False,
                          lambda limit_ms: list(self._collection.aggregate(pipeline, maxTimeMS=limit_ms)),
                          query=pipeline)
    def exhausted(self) -> str | None:
        """Why no further optional read should be sent in this run (its time or request units are
        spent: a read started in the last second could not finish), or None."""
        remaining = self._time_cap()
        if remaining is not None and remaining < _LAST_READ_MS:
            return "the run's time budget ran out"
        spent = self.ledger.request_units
        if self.ru_budget is not None and spent is not None and spent >= self.ru_budget:
            return f"the run's request unit budget ({self.ru_budget:g} RU) is spent"
        return None

    @property
    def notes(self) -> list[str]:
        """What the server refused and how the reads degraded, one note each, for the report."""
        return [n for n in self.refusals.notes if n]

    # --- the window of a scoped audit ------------------------------------------------------

    def scope_to(self, query: Mapping[str, Any], *, indexed: bool) -> int:
        """Read only documents matching ``query`` from now on; returns how many there are (one count,
        a pass of the window). ``indexed``: an index leads with the window's field, so each later
        pass examines only the window's documents; otherwise each still visits the whole collection."""
        check_filter(query, where="the audit's window")
        if self.ledger.collection_size is None:
            self.estimated_document_count()
        documents = self.count_documents(query)
        counted = self.ledger.records[-1]
        counted.full_pass = True
        counted.documents_examined = documents if indexed else self.ledger.collection_size
        self._scope = dict(query)
        self.window_documents = documents
        self.ledger.window_documents = documents if indexed else None
        return documents

    def examined(self, documents: int) -> None:
        """The last operation examined ``documents`` (known only from its answer: an index-bounded read)."""
        if self.ledger.records:
            self.ledger.records[-1].documents_examined = documents

    @property
    def scope(self) -> dict[str, Any] | None:
        return None if self._scope is None else dict(self._scope)

    def whole_collection(self) -> AuditTarget:
        """The same collection, ledger and budgets without the window: for measurements of the
        collection itself (its size, newest document, inserts since the last run)."""
        view = copy.copy(self)
        view._scope = None
        view.window_documents = None
        return view

    def _filter(self, query: Mapping[str, Any]) -> dict[str, Any]:
        """What is sent for a tool's filter: the window first, then the refusals learned so far."""
        sent = dict(query)
        if self._scope is not None:
            sent = {"$and": [self._scope, sent]} if sent else dict(self._scope)
            check_filter(sent)
        return with_type_codes(sent) if self.refusals.refuses("type_aliases") else sent

    def _pipeline(self, pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sent = list(pipeline)
        if self._scope is not None:
            sent = [{"$match": dict(self._scope)}, *sent]
            check_pipeline(sent)
        return with_type_codes(sent) if self.refusals.refuses("type_aliases") else sent

    def _reshaped(self, value: Any, send: Callable[[Any], T]) -> T:
        """``send(value)``; when the server refuses a ``$type`` alias, learn it and send the numeric codes."""
        try:
            return send(value)
        except QueryRejected as exc:
            if self.in_memory or self.refusals.refuses("type_aliases") or not has_type_alias(value) \
                    or not refuses_type_alias(exc):
                raise
            self.refusals.learn("type_aliases", "the server refused a $type alias (such as 'number'): every $type "
                                                "was sent again as its numeric BSON type code")
            return send(value)

    def cost(self) -> DatabaseCost:
        """What the operations sent so far cost: the report's ``database_cost``."""
        return self.ledger.summary().model_copy(update={"batch_checks": dict(self.sizing.checks)})

    def _limit_ms(self) -> int:
        """A server's query gets ``max_time_ms`` (it protects the server), cut to the run's remaining
        time. The in-memory engine is Argus's own process, with no server to protect: its queries
        get the run's remaining time, so one batched pass over a wide file is not cut at 10 s."""
        cap = self._time_cap()
        if self.in_memory and cap is not None:
            return max(1, cap)
        return max(1, min(self.max_time_ms, cap)) if cap is not None else self.max_time_ms

    def find(self, query: Mapping[str, Any], projection: Mapping[str, Any] | None, limit: int, *,
             sort: list[tuple[str, int]] | None = None, full_pass: bool | None = None) -> list[Any]:
        """``limit`` 0 reads every match; ``full_pass`` overrides the ledger's judgement."""
        is_pass = not is_selective(query) if full_pass is None else full_pass

        def send(_: Any) -> list[Any]:
            sent = self._filter(query)

            def run(limit_ms: int) -> list[Any]:
                cursor = self._collection.find(sent, projection)
                if sort:
                    cursor = cursor.sort(sort)
                return list(cursor.limit(limit).max_time_ms(limit_ms))
            return self._call("find", is_pass, run, query=sent)
        return self._reshaped(query, send)

    def count_documents(self, query: Mapping[str, Any]) -> int:
        """The documents ``query`` matches (in the window, if scoped). On a server that refuses ``$not``,
        a filter with one ``$not`` on a field is counted as ``count(Q) - count(Q AND P)``, noted once."""
        def send(_: Any) -> int:
            sent = self._filter(query)
            return self._call("count_documents", not is_selective(query),
                              lambda limit_ms: int(self._collection.count_documents(sent, maxTimeMS=limit_ms)),
                              query=sent)
        split = complement_split(query)
        if split is not None and self.refusals.refuses("$not"):
            return self._by_subtraction(*split)
        try:
            return self._reshaped(query, send)
        except QueryRejected as exc:
            if split is None or "$not" not in named_operators(exc):
                raise
            self.refusals.learn("$not", NOT_BY_SUBTRACTION)
            return self._by_subtraction(*split)

    def _by_subtraction(self, positive: dict[str, Any], negated: dict[str, Any]) -> int:
        return self.count_documents(positive) - self.count_documents(negated)

    def aggregate(self, pipeline: list[dict[str, Any]], *, full_pass: bool | None = None,
                  kind: str = "aggregate") -> list[Any]:
        """``full_pass`` overrides the ledger's judgement (a bucketing of an ``_id`` range still reads it all);
        ``kind`` names the read in the run's database cost (a metric's read is its own line)."""
        is_pass = pipeline_is_pass(pipeline) if full_pass is None else full_pass

        def send(_: Any) -> list[Any]:
            sent = self._pipeline(pipeline)
            return self._call(kind, is_pass,
                              lambda limit_ms: list(self._collection.aggregate(sent, maxTimeMS=limit_ms)), query=sent)
        return self._reshaped(pipeline, send)

    def estimated_document_count(self) -> int:
        size = self._call("estimated_document_count", False,
                          lambda limit_ms: int(self._collection.estimated_document_count(maxTimeMS=limit_ms)))
        if not self._is_sibling:  # the audited collection's size: what a pass examines
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
        return self._call("find", False, run, query=query)

    def indexed_fields(self) -> set[str] | None:
        """Fields that lead an index (a sort or range on them reads the index, not the collection);
        None when the server refused ``listIndexes`` (a user without the privilege), noted once."""
        if self.refusals.refuses("listIndexes"):
            return None
        try:
            return self._call("list_indexes", False, lambda _: {
                next(iter(index["key"])) for index in self._collection.list_indexes() if index.get("key")})
        except QueryRejected as exc:
            code = f" (code {exc.code})" if exc.code is not None else ""
            self.refusals.learn("listIndexes", f"the server refused listIndexes{code}: which fields lead an index is "
                                               f"unknown, so documents examined count whole-collection passes and "
                                               f"freshness comes from the sample; grant the listIndexes action")
            return None

    def sample(self, size: int) -> list[Any]:
        """Up to ``size`` documents drawn at random: ``$sample`` on a server, in process in memory;
        a server that refuses ``$sample`` is read with ``find`` from random points of ``_id``."""
        if self.in_memory:
            drawn = self._call("sample", False, lambda _: draw_in_memory(self._collection, size, self._seed,
                                                                          self._scope), query=self._scope)
            self.ledger.records[-1].documents_examined = len(drawn)
            return drawn
        if not self.refusals.refuses("$sample"):
            try:
                drawn = self.aggregate([{"$sample": {"size": size}}], full_pass=False)
                self.ledger.records[-1].documents_examined = len(drawn)
                return drawn
            except QueryRejected as exc:
                code = f" (code {exc.code})" if exc.code is not None else ""
                self.refusals.learn("$sample", f"the server refused $sample{code}: the sample was read with find from "
                                               f"{_FIND_SAMPLE_POINTS} random points of the _id index, which is not "
                                               f"uniform (documents after a gap in _id are drawn more often)")
        return self._find_sample(size)

    def _find_sample(self, size: int) -> list[Any]:
        """``size`` documents read from random points between the smallest and largest ``_id``
        (ObjectIds and numbers), each read an ``_id`` range on its index, ranges never overlapping;
        for other ``_id`` kinds, the first ``size``."""
        ends = [self.find({}, {"_id": 1}, 1, sort=[("_id", direction)]) for direction in (1, -1)]
        low, high = (e[0].get("_id") if e else None for e in ends)
        points = random_points(low, high, _FIND_SAMPLE_POINTS, random.Random(self._seed))
        if not points:
            drawn = self.find({}, None, size)
            self.ledger.records[-1].documents_examined = len(drawn)
            return drawn
        per_point = -(-size // len(points))
        seen: dict[Any, Any] = {}
        after: Any = None
        for point in points:
            if len(seen) >= size:
                break
            bound = {"$gt": after} if after is not None and after >= point else {"$gte": point}
            read = self.find({"_id": bound}, None, per_point, sort=[("_id", 1)])
            self.ledger.records[-1].documents_examined = len(read)
            for doc in read:
                seen.setdefault(doc.get("_id"), doc)
            after = read[-1].get("_id") if read else after
        if len(seen) < size:  # the ranges near the end ran short: fill from the smallest _id
            read = self.find({"_id": {"$gte": low}}, None, size, sort=[("_id", 1)])
            self.ledger.records[-1].documents_examined = len(read)
            for doc in read:
                if len(seen) >= size:
                    break
                seen.setdefault(doc.get("_id"), doc)
        return list(seen.values())[:size]

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

    def _call(self, kind: str, full_pass: bool, operation: Callable[[int], T], *, query: Any = None) -> T:
        """``operation(limit_ms)`` with retries, accounting and translated errors; ``query`` (the filter
        or pipeline sent) only names the read's shape if the in-process engine fails on it."""
        if not self._reached and not self.in_memory:
            self._reach(kind)
        attempt = 0
        t0 = time.perf_counter()
        while True:
            limit_ms = self._limit_ms()
            try:
                with _translated(kind), _engine_faults(kind, query, in_memory=self.in_memory), \
                        pymongo.timeout(limit_ms / 1000):
                    result = operation(limit_ms)
                break
            except _Stalled as stalled:
                self._record(kind, full_pass, t0, error="NetworkTimeout")
                raise self._stalled(kind, limit_ms) from stalled.__cause__
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

    def _stalled(self, kind: str, limit_ms: int) -> ArgusError:
        """The client stopped waiting for one query. A server that still answers ``ping`` ignored the
        query's ``maxTimeMS`` (or the network held the answer): a timeout of that query, like error 50.
        A server that does not answer is unreachable."""
        remaining = self._time_cap()
        wait_ms = min(_PING_MS, remaining if remaining is not None else _PING_MS)
        if wait_ms > 0:
            try:
                with pymongo.timeout(wait_ms / 1000):
                    self._collection.database.command("ping")
            except mongo_errors.PyMongoError:
                return TargetUnavailable(f"{kind} got no answer within its time limit ({limit_ms} ms) and the server "
                                         f"no longer answers ping: it is unreachable")
        return QueryTimeout(f"{kind} got no answer within its time limit ({limit_ms} ms) although the server answers "
                            f"ping: the server does not stop queries at maxTimeMS, or this one is slow; it counts as "
                            f"a timeout of this query")

    def _record(self, kind: str, full_pass: bool, t0: float, *, error: str | None = None) -> None:
        # A read that timed out visited the collection until it was stopped: still a pass; a refused one did not.
        record = OperationRecord(kind=kind, full_pass=full_pass and error in (None, "QueryTimeout", "NetworkTimeout"),
                                 duration_ms=round((time.perf_counter() - t0) * 1000, 3), error=error)
        if record.full_pass and self._scope is None and self.ledger.window_documents is not None:
            record.documents_examined = self.ledger.collection_size  # the unscoped view of a scoped run
        if error is None and not self.refusals.refuses("getLastRequestStatistics") \
                and self.ledger.server in ("unknown", "cosmosdb"):
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
            if exc.code == THROTTLED:  # a throttled probe says nothing about the server
                return None
            if exc.code in _NO_SUCH_COMMAND or "no such" in _first_line(exc).lower():
                self.ledger.server = "mongodb"  # MongoDB does not know the command: nothing to count
            else:
                code = f" (code {exc.code})" if exc.code is not None else ""
                self.refusals.learn("getLastRequestStatistics", (
                    f"the server refused getLastRequestStatistics{code}: request units are not counted, so an "
                    f"ru_budget cannot be enforced; on Cosmos DB grant the command to Argus's user"))
            return None
        except mongo_errors.PyMongoError:  # unreachable now: the next operation reports it
            return None
        except AttributeError:  # a collection that is no client's (the engine, wrapped): nothing to ask
            self.refusals.learn("getLastRequestStatistics", "")
            return None
        charge = reply.get("RequestCharge") if isinstance(reply, Mapping) else None
        if not isinstance(charge, int | float):
            self.ledger.server = "mongodb"
            return None
        self.ledger.server = "cosmosdb"
        return float(charge)


class _Stalled(Exception):
    """The driver stopped waiting for an answer (``NetworkTimeout``); ``AuditTarget`` asks why."""


class _Retry(Exception):
    """A server answer worth waiting out: Cosmos DB throttling, or a primary stepping down."""

    def __init__(self, final: Exception, give_up: str, *, throttle: bool, message: str = "") -> None:
        super().__init__(give_up)
        self.final, self.give_up, self.throttle, self.message = final, give_up, throttle, message

    def wait_ms(self, attempt: int) -> int:
        return retry_after_ms(self.message, attempt - 1) if self.throttle else _FALLBACK_RETRY_MS * 2 ** attempt


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
    except mongo_errors.NetworkTimeout as exc:
        raise _Stalled(operation) from exc
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
        raise QueryRejected(f"{operation} was refused by the server{code}: {_first_line(exc)}", code=exc.code,
                            server_message=_first_line(exc)) from exc
    except (mongo_errors.ConnectionFailure, mongo_errors.ServerSelectionTimeoutError) as exc:
        raise TargetUnavailable(f"{operation} could not reach the database: {type(exc).__name__}") from exc
    except mongo_errors.PyMongoError as exc:
        raise ToolError(f"{operation} failed: {type(exc).__name__}") from exc
    except (BSONError, OverflowError) as exc:  # the guard refuses these first; a driver's word is final
        raise ToolError(f"{operation} could not send the query: it cannot be encoded as BSON "
                        f"({type(exc).__name__})") from exc


@contextmanager
def _engine_faults(operation: str, query: Any, *, in_memory: bool) -> Iterator[None]:
    """In the in-process engine, an exception that is no server's answer (``OperationFailure``,
    ``ExecutionTimeout``: the engine's refusals and time limit) is a bug: ``EngineFault``, logged with
    the query's operators and field paths, never its values. A live server's driver is not judged here."""
    try:
        yield
    except (mongo_errors.PyMongoError, ArgusError):
        raise
    except Exception as exc:
        if not in_memory:
            raise
        log.error("engine_fault", operation=operation, error=type(exc).__name__, **query_shape(query))
        raise EngineFault(f"internal error in the in-process engine: {operation} raised {type(exc).__name__}; "
                          f"the run is not counted as answered (the log line engine_fault names the query's "
                          f"shape: please report it)") from exc


def query_shape(query: Any) -> dict[str, list[str]]:
    """What a filter or pipeline asks, without a value: its operators and the field names it reads or
    writes (keys only; a value is never walked into, so neither a literal nor a document shows)."""
    fields: set[str] = set()
    stack = [query]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(i for i in item if isinstance(i, Mapping) and _operators_only(i))
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                if not isinstance(key, str):
                    continue
                if key.startswith("$"):  # an operator's operand: conditions, clauses, stages, expressions
                    stack.extend(i for i in inner if isinstance(i, Mapping)) if isinstance(inner, list) \
                        else stack.append(inner)
                    continue
                fields.add(key)
                if isinstance(inner, Mapping) and _operators_only(inner):
                    stack.append(inner)  # {field: {$op: ...}}, {output: {$sum: ...}}
                elif isinstance(inner, list) and inner and all(
                        isinstance(i, Mapping) and _operators_only(i) for i in inner):
                    stack.append(inner)  # a $facet's pipelines
    return {"operators": sorted(operators_in(query) if query is not None else ()), "fields": sorted(fields)}


def _operators_only(value: Mapping[str, Any]) -> bool:
    return bool(value) and all(isinstance(k, str) and k.startswith("$") for k in value)


def _first_line(exc: mongo_errors.OperationFailure) -> str:
    details = exc.details or {}
    message = str(details.get("errmsg") or exc).splitlines()[0]
    return message[:200]
