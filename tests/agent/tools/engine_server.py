"""A MongoDB-wire server (mockupdb) whose answers come from Argus's in-process engine (``argus.agent.engine``).

Real pymongo talks to it over TCP, so the driver path is the one a live server sees (wire
protocol, cursors, ``maxTimeMS``, ``NetworkTimeout``), and every answer has MongoDB query semantics,
so the findings of an audit can be compared across servers. ``refusals`` script what the server
will not do, as older servers and look-alikes refuse: each is a function of the command that
returns an error to send instead of the answer (``Refusal``), or ``STALL`` to send nothing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bson.regex import Regex
from mockupdb import MockupDB
from pymongo.errors import OperationFailure

from argus.agent.tools.target import AuditTarget
from argus.daemon.sources import open_uri
from tests.conftest import memory_collection

__all__ = ["STALL", "EngineServer", "Refusal", "refuse", "uses"]


@dataclass(frozen=True)
class Refusal:
    errmsg: str
    code: int | None = None


STALL = Refusal("stall")
Rule = Callable[[str, dict[str, Any]], Refusal | None]
Tamper = Callable[[str, dict[str, Any], list[dict[str, Any]]], list[dict[str, Any]]]


def _walk(value: Any) -> Iterator[tuple[str, Any]]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                yield key, inner
                stack.append(inner)
        elif isinstance(item, list):
            for inner in item:
                yield "", inner
                stack.append(inner)


def uses(doc: dict[str, Any], operator: str) -> bool:
    """Does a command's filter or pipeline use ``operator`` anywhere (a BSON regex counts as ``$regex``)?"""
    return any(key == operator or (operator == "$regex" and isinstance(value, Regex | re.Pattern))
               for key, value in _walk(doc))


def refuse(operator: str, errmsg: str, code: int | None = None, *, commands: tuple[str, ...] = ("aggregate", "find"),
           when: Callable[[dict[str, Any]], bool] | None = None) -> Rule:
    """Refuse every ``commands`` request that uses ``operator`` (and, with ``when``, that also satisfies it)."""
    def rule(name: str, doc: dict[str, Any]) -> Refusal | None:
        if name in commands and uses(doc, operator) and (when is None or when(doc)):
            return Refusal(errmsg, code)
        return None
    return rule


class EngineServer:
    """Answers ``find``, ``aggregate``, ``count``, ``listIndexes`` and ``ping`` from an in-process
    engine's collection; ``getLastRequestStatistics`` as MongoDB does (no such command) unless
    ``request_charge`` makes it Cosmos DB. Every request is kept in ``received``."""

    def __init__(self, documents: list[dict[str, Any]], *, database: str = "db", collection: str = "items",
                 refusals: list[Rule] | None = None, indexes: list[str] | None = None,
                 request_charge: float | None = None, statistics_error: Refusal | None = None,
                 tamper: Tamper | None = None) -> None:
        """``tamper`` changes the documents a command answers with (a server's bug)."""
        self.collection = memory_collection(documents, collection, database=database, indexes=indexes or [])
        self.refusals = list(refusals or [])
        self.request_charge = request_charge
        self.statistics_error = statistics_error
        self.tamper = tamper
        self.received: list[Any] = []
        self.stalled: list[Any] = []
        self.engine_errors: list[Exception] = []
        self.server = MockupDB(auto_ismaster={"maxWireVersion": 17, "minWireVersion": 0})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def uri(self) -> str:
        return str(self.server.uri)

    def start(self) -> str:
        self.server.run()
        self._thread.start()
        return self.uri

    def target(self, *, max_time_ms: int = 5000) -> AuditTarget:
        """A client of this server, on the collection it serves, opened as ``argus audit --uri`` opens one."""
        return open_uri(self.uri, database=self.collection.database.name, collection=self.collection.name,
                        max_time_ms=max_time_ms, connect_timeout_ms=2000)

    def close(self) -> None:
        self._stop.set()
        self.server.stop()

    def commands(self, name: str) -> list[dict[str, Any]]:
        return [r.doc for r in self.received if r.command_name == name]

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                request = self.server.receives(timeout=0.2)
            except AssertionError:
                continue
            except Exception:
                return
            if request is None:
                return
            self.received.append(request)
            try:
                self._answer(request)
            except Exception:  # a closed client connection
                continue

    def _answer(self, request: Any) -> None:
        name = request.command_name
        doc = dict(request.doc)
        for rule in self.refusals:
            refusal = rule(name, doc)
            if refusal is STALL:
                self.stalled.append(request)  # never answered: the client times out
                return
            if refusal is not None:
                reply: dict[str, Any] = {"ok": 0, "errmsg": refusal.errmsg}
                if refusal.code is not None:
                    reply["code"] = refusal.code
                request.reply(reply)
                return
        try:
            self._run(request, name, doc)
        except OperationFailure as exc:  # the engine refuses as a server would: its error reply
            request.reply({"ok": 0, "errmsg": str(exc.details.get("errmsg") if exc.details else exc)[:300],
                           "code": exc.code})
        except Exception as exc:  # an engine bug: the server's own InternalError, never a silent refusal
            self.engine_errors.append(exc)
            request.reply({"ok": 0, "errmsg": f"internal error: {type(exc).__name__}", "code": 1})

    def _run(self, request: Any, name: str, doc: dict[str, Any]) -> None:
        coll = self.collection
        if name == "aggregate":
            self._cursor(request, list(coll.aggregate(doc["pipeline"])), doc)
        elif name == "find":
            cursor = coll.find(doc.get("filter") or {}, doc.get("projection") or None)
            if doc.get("sort"):
                cursor = cursor.sort(list(doc["sort"].items()))
            if doc.get("limit"):
                cursor = cursor.limit(int(doc["limit"]))
            self._cursor(request, list(cursor), doc)
        elif name == "count":
            request.ok(n=coll.count_documents(doc.get("query") or {}))
        elif name == "listIndexes":
            self._cursor(request, [dict(index) for index in coll.list_indexes()])
        elif name == "getLastRequestStatistics":
            if self.statistics_error is not None:
                reply = {"ok": 0, "errmsg": self.statistics_error.errmsg}
                if self.statistics_error.code is not None:
                    reply["code"] = self.statistics_error.code
                request.reply(reply)
            elif self.request_charge is None:
                request.command_err(code=59, errmsg="no such command: 'getLastRequestStatistics'")
            else:
                request.ok(CommandName="find", RequestCharge=self.request_charge, RequestDurationInMilliSeconds=1)
        else:
            request.ok()

    def _cursor(self, request: Any, docs: list[dict[str, Any]], doc: dict[str, Any] | None = None) -> None:
        if self.tamper is not None and doc is not None:
            docs = self.tamper(request.command_name, doc, docs)
        namespace = f"db.{request.doc.get(request.command_name, 'items')}"
        request.ok(cursor={"id": 0, "ns": namespace, "firstBatch": docs})
