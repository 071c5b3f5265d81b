"""The audited collection, as tools see it: read methods only, each with a server time limit.

``AuditTarget`` wraps a collection and exposes ``find``, ``count_documents``, ``aggregate``,
``sample``, ``estimated_document_count``, ``newest`` and ``indexed_fields`` and nothing else (the
``CollectionReads`` of ``argus.agent.tools.target.reads``), so no code path from a tool can reach a
write method. ``AuditTarget(collection)`` is one of two adapters: ``ServerTarget`` for a pymongo
``Collection`` (``.server``) or ``EngineTarget`` for the in-process engine's ``MemoryCollection``
(``.engine``, behind ``--file``), chosen by ``in_memory`` (default: the collection says).

A scoped audit (``scope_to``) reads only the documents of its window: the window's filter leads
every read (a ``$match`` first in every pipeline, ANDed into every ``find`` and count), added here so
no tool can forget it, and the guard judges the combined query. ``whole_collection()`` is the
unscoped view collection-level measurements (health) read through. Every call carries ``maxTimeMS``
and waits on the driver no longer than that (``pymongo.timeout``), and every call is counted in the
target's ``OperationLedger`` (``.cost``). Retries of throttled reads happen within the run's
remaining time; pymongo errors are translated into ``ToolError`` / ``TargetUnavailable``
(``.translate``). A query the client stops waiting for (``NetworkTimeout``: the server ignored
``maxTimeMS``) is a timeout of that query when the server still answers ``ping``, not a lost database.
"""

from __future__ import annotations

import copy
import time
import zlib
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any, ClassVar, TypeVar

import pymongo
from pymongo import errors as mongo_errors

from argus.agent.errors import ArgusError, QueryRejected, QueryTimeout, TargetUnavailable, ToolError
from argus.agent.segments.passes import SegmentPass
from argus.agent.tools.accounting import DatabaseCost, OperationLedger, is_selective, pipeline_is_pass
from argus.agent.tools.batch_size import BatchSizing
from argus.agent.tools.compat import (
    NOT_BY_SUBTRACTION,
    ServerRefusals,
    complement_split,
    named_operators,
    with_type_codes,
)
from argus.agent.tools.field_profile import FieldProfile
from argus.agent.tools.guard import check_filter
from argus.agent.tools.guard_pipeline import check_pipeline
from argus.agent.tools.target.cost import record_operation
from argus.agent.tools.target.translate import Retry, Stalled, translated

__all__ = ["DEFAULT_MAX_TIME_MS", "AuditTarget"]

T = TypeVar("T")

DEFAULT_MAX_TIME_MS = 10_000
_MAX_RETRIES = 8
_PING_MS = 2000           # at most this long to ask a server that let a query time out whether it still answers
_LAST_READ_MS = 1000      # no optional read (one by one, a first-run baseline) starts with less than this left


class AuditTarget:
    """One collection, read-only. ``max_time_ms`` bounds every query sent through it.

    ``in_memory`` says the collection is the in-process engine's (files, demos): it picks the adapter
    (``EngineTarget``, else ``ServerTarget``; default: the collection says). ``sleep``
    waits between retries (tests pass a fake); ``sample_seed`` makes the
    in-memory sample repeatable (default: from the namespace, so each run of a collection draws
    the same documents while they stay, and two collections draw independently).
    """

    in_memory: ClassVar[bool] = False
    _adapters: ClassVar[dict[bool, type[AuditTarget]]] = {}

    def __init_subclass__(cls, *, in_memory: bool, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.in_memory = in_memory
        AuditTarget._adapters[in_memory] = cls

    def __new__(cls, collection: Any = None, *args: Any, in_memory: bool | None = None, **kwargs: Any) -> AuditTarget:
        """``AuditTarget(collection)`` is the adapter the collection needs: the in-process engine's (or
        ``in_memory=True``: any collection in this process) or a live server's."""
        if cls is AuditTarget:
            if in_memory is None:
                in_memory = getattr(collection, "in_process", False) is True
            cls = AuditTarget._adapters[in_memory]
        return object.__new__(cls)

    def __init__(self, collection: Any, *, connection_name: str = "default",
                 max_time_ms: int = DEFAULT_MAX_TIME_MS, in_memory: bool | None = None,
                 sleep: Callable[[float], None] = time.sleep, sample_seed: int | None = None,
                 siblings: Callable[[str], AuditTarget] | None = None) -> None:
        self._collection = collection
        self.connection_name = connection_name
        self.database = collection.database.name
        self.name = collection.name
        self.max_time_ms = max_time_ms
        self.ledger = OperationLedger(server="memory" if self.in_memory else "unknown")
        self._sleep = sleep
        self.refusals = ServerRefusals()
        self.sizing = BatchSizing()  # checks per batched pass on this server (count_many); a run may start it
        self._seed = zlib.crc32(f"{self.database}.{self.name}".encode()) if sample_seed is None else sample_seed
        self._time_cap: Callable[[], int | None] = lambda: None
        self._siblings = siblings
        self._is_sibling = False
        self.ru_budget: float | None = None
        self.segments: SegmentPass | None = None  # a run with segments: count_many groups by them (the loop sets it)
        self._scope: dict[str, Any] | None = None
        self.window_documents: int | None = None  # a scoped audit: the documents of its window
        self.field_profile: FieldProfile | None = None  # the run's last profile pass (count_many), for its statistics


    def cap_time_with(self, remaining_ms: Callable[[], int | None]) -> None:
        """Let the loop shrink each query's limit to the audit's remaining wall-clock budget."""
        self._time_cap = remaining_ms

    def sibling(self, name: str) -> AuditTarget:
        """Another collection of the same database, read through the same wrapper (a reference check's
        lookups): its reads share this target's ledger, time cap and retries, and are recorded as
        lookups, never as passes over the audited collection. ``siblings`` (a files connection, whose
        collections are loaded one file each) finds it; by default it is ``database[name]``."""
        try:
            other = self._siblings(name) if self._siblings is not None else type(self)(
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
        """``send(value)``; an adapter may send it again reshaped for what the server refuses."""
        return send(value)


    def cost(self) -> DatabaseCost:
        """What the operations sent so far cost: the report's ``database_cost``."""
        return self.ledger.summary().model_copy(update={"batch_checks": dict(self.sizing.checks)})


    def _limit_ms(self) -> int:
        """The time limit of the next query (its ``maxTimeMS``, and how long the driver waits): the adapter's."""
        raise NotImplementedError

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
        """Up to ``size`` documents drawn at random: the adapter's."""
        raise NotImplementedError

    # --- one operation: time limit, retries, accounting, translated errors --------------------

    def _before_read(self, kind: str) -> None:
        """Called before every operation (a live server is reached once, first)."""

    def _faults(self, kind: str, query: Any) -> AbstractContextManager[None]:
        """What an operation raises that no server's answer explains (the engine's bugs): judged here."""
        return nullcontext()

    def _call(self, kind: str, full_pass: bool, operation: Callable[[int], T], *, query: Any = None) -> T:
        """``operation(limit_ms)`` with retries, accounting and translated errors; ``query`` (the filter
        or pipeline sent) only names the read's shape if the in-process engine fails on it."""
        self._before_read(kind)
        attempt = 0
        t0 = time.perf_counter()
        while True:
            limit_ms = self._limit_ms()
            try:
                with translated(kind), self._faults(kind, query), pymongo.timeout(limit_ms / 1000):
                    result = operation(limit_ms)
                break
            except Stalled as stalled:
                self._record(kind, full_pass, t0, error="NetworkTimeout")
                raise self._stalled(kind, limit_ms) from stalled.__cause__
            except Retry as retry:
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
        record_operation(self.ledger, self.refusals, kind, full_pass, t0, error=error, scoped=self._scope is not None,
                         request_charge=self._request_charge)

    def _request_charge(self) -> float | None:
        """What the last operation cost in request units, when the server tells (Cosmos DB)."""
        return None
