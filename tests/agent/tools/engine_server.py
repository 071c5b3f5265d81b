"""A MongoDB-wire server (mockupdb) whose answers come from a real query engine (mongomock).

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

import mongomock
from bson.regex import Regex
from mockupdb import MockupDB

__all__ = ["STALL", "EngineServer", "Refusal", "refuse", "uses"]


@dataclass(frozen=True)
class Refusal:
    errmsg: str
    code: int | None = None


STALL = Refusal("stall")
Rule = Callable[[str, dict[str, Any]], Refusal | None]
Tamper = Callable[[str, dict[str, Any], list[dict[str, Any]]], list[dict[str, Any]]]

_NUMERIC_TYPES = {1: "double", 2: "string", 3: "object", 4: "array", 5: "binData", 7: "objectId", 8: "bool",
                  9: "date", 10: "null", 11: "regex", 16: "int", 17: "timestamp", 18: "long", 19: "decimal"}


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


def _plain(value: Any) -> Any:
    """The request as mongomock takes it: plain dicts, numeric ``$type`` codes as aliases."""
    if isinstance(value, dict):
        out = {}
        for key, inner in value.items():
            if key == "$type" and isinstance(inner, int) and inner in _NUMERIC_TYPES:
                out[key] = _NUMERIC_TYPES[inner]
            elif key == "$type" and inner == [1, 16, 18, 19]:  # mongomock knows the alias, not the list
                out[key] = "number"
            else:
                out[key] = _plain(inner)
        return out
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class EngineServer:
    """Answers ``find``, ``aggregate``, ``count``, ``listIndexes`` and ``ping`` from a mongomock
    collection; ``getLastRequestStatistics`` as MongoDB does (no such command) unless
    ``request_charge`` makes it Cosmos DB. Every request is kept in ``received``."""

    def __init__(self, documents: list[dict[str, Any]], *, database: str = "db", collection: str = "items",
                 refusals: list[Rule] | None = None, indexes: list[str] | None = None,
                 request_charge: float | None = None, statistics_error: Refusal | None = None,
                 tamper: Tamper | None = None) -> None:
        """``tamper`` changes the documents a command answers with (a server's bug)."""
        self.collection = mongomock.MongoClient()[database][collection]
        if documents:
            self.collection.insert_many([dict(d) for d in documents])
        for name in indexes or []:
            self.collection.create_index(name)
        self.refusals = list(refusals or [])
        self.request_charge = request_charge
        self.statistics_error = statistics_error
        self.tamper = tamper
        self.received: list[Any] = []
        self.stalled: list[Any] = []
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
        except Exception as exc:  # the engine itself refuses: as a server would, an error reply
            request.reply({"ok": 0, "errmsg": f"{type(exc).__name__}: {exc}"[:300], "code": 2})

    def _run(self, request: Any, name: str, doc: dict[str, Any]) -> None:
        coll = self.collection
        if name == "aggregate":
            self._cursor(request, list(coll.aggregate(_plain(doc["pipeline"]))), doc)
        elif name == "find":
            cursor = coll.find(_plain(doc.get("filter") or {}), doc.get("projection") or None)
            if doc.get("sort"):
                cursor = cursor.sort(list(doc["sort"].items()))
            if doc.get("limit"):
                cursor = cursor.limit(int(doc["limit"]))
            self._cursor(request, list(cursor), doc)
        elif name == "count":
            request.ok(n=coll.count_documents(_plain(doc.get("query") or {})))
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
