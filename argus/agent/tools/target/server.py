"""The adapter for a live server (MongoDB, Cosmos DB, DocumentDB) read through pymongo.

Its replies are decoded with ``DATETIME_AUTO``, so a date before year 1 or after 9999 arrives as a
``DatetimeMS`` instead of failing the whole read. Servers that refuse part of what is sent are met as
a careful client would (``argus.agent.tools.compat``): a refused ``$type`` alias is sent again as its
numeric code, a refused ``$sample`` becomes a sample drawn with ``find`` from random points of the
``_id`` index, a refused ``listIndexes`` or ``getLastRequestStatistics`` leaves what they tell
unknown; each is noted once (``notes``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeVar

import pymongo
from bson.codec_options import DatetimeConversion
from pymongo.collection import Collection

from argus.agent.errors import QueryRejected, TargetUnavailable
from argus.agent.tools.compat import has_type_alias, refuses_type_alias
from argus.agent.tools.sampling import random_points
from argus.agent.tools.target.base import AuditTarget
from argus.agent.tools.target.cost import request_charge
from argus.agent.tools.target.translate import translated

__all__ = ["ServerTarget"]

T = TypeVar("T")

_FIND_SAMPLE_POINTS = 10  # random starting points of the _id index a find-based sample reads from


class ServerTarget(AuditTarget, in_memory=False):
    """A collection on a server: each query's ``maxTimeMS`` protects the server; the server is reached
    once before the first read; its request charges are counted."""

    def __init__(self, collection: Any, **kwargs: Any) -> None:
        if isinstance(collection, Collection):
            collection = collection.with_options(codec_options=collection.codec_options.with_options(
                datetime_conversion=DatetimeConversion.DATETIME_AUTO))
        super().__init__(collection, **kwargs)
        self._reached = False

    def _limit_ms(self) -> int:
        """A server's query gets ``max_time_ms`` (it protects the server), cut to the run's remaining time."""
        cap = self._time_cap()
        return max(1, min(self.max_time_ms, cap)) if cap is not None else self.max_time_ms


    def _reshaped(self, value: Any, send: Callable[[Any], T]) -> T:
        """``send(value)``; when the server refuses a ``$type`` alias, learn it and send the numeric codes."""
        try:
            return send(value)
        except QueryRejected as exc:
            if self.refusals.refuses("type_aliases") or not has_type_alias(value) \
                    or not refuses_type_alias(exc):
                raise
            self.refusals.learn("type_aliases", "the server refused a $type alias (such as 'number'): every $type "
                                                "was sent again as its numeric BSON type code")
            return send(value)


    def sample(self, size: int) -> list[Any]:
        """Up to ``size`` documents drawn with ``$sample``; a server that refuses ``$sample`` is read
        with ``find`` from random points of ``_id``."""
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


    def _before_read(self, kind: str) -> None:
        """Wait for a server as long as the client's serverSelectionTimeoutMS says (the URI's, when it sets
        one), once: a query's own time limit (pymongo.timeout) would override it, and an unreachable server
        would hold every run for the whole query limit."""
        if self._reached:
            return
        self._reached = True
        client = getattr(self._collection.database, "client", None)
        wait = getattr(getattr(client, "options", None), "server_selection_timeout", None)
        if client is None or not isinstance(wait, int | float):
            return
        try:
            with translated(kind), pymongo.timeout(min(wait, self._limit_ms() / 1000)):
                # the reads' own read preference: with secondaryPreferred, a secondary answering is enough
                client.admin.command("ping", read_preference=self._collection.read_preference)
        except TargetUnavailable as exc:
            raise TargetUnavailable(f"{exc} (no server answered within the URI's serverSelectionTimeoutMS, "
                                    f"{wait:g} s)") from exc.__cause__


    def _request_charge(self) -> float | None:
        return request_charge(self._collection, self._limit_ms(), self.ledger, self.refusals)
