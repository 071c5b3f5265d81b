"""``MemoryCollection``: a read-only collection in this process, answering as a server would.

It has the read methods ``AuditTarget`` calls on a pymongo ``Collection`` (``find`` with
``limit``/``sort``/``max_time_ms``, ``count_documents``, ``aggregate``,
``estimated_document_count``, ``list_indexes``) with the same arguments and answers, and no write
method at all. Each read is one pass over the stored documents, bounded by its ``maxTimeMS``
(``ExecutionTimeout``, code 50, as a server), so no read needs a process of its own. Files and
demo collections are loaded into one of these (``argus.daemon.files``).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from bson.son import SON
from pymongo.errors import OperationFailure

from argus.agent.engine.deadline import Deadline
from argus.agent.engine.expressions import field_getter
from argus.agent.engine.match import compile_filter
from argus.agent.engine.pipeline import build_pipeline, sort_documents, sort_value
from argus.agent.engine.projection import Projection
from argus.agent.engine.store import DocumentStore

__all__ = ["MemoryCollection", "MemoryDatabase"]


@contextmanager
def _as_server_error() -> Iterator[None]:
    """A value the engine cannot compute (a decimal sNaN in arithmetic, a date past year 9999) fails
    the read as a server's error does, naming what went wrong, never with a Python traceback. A
    ``TypeError`` is no such value but the engine's own bug: it goes up as it is (``EngineFault``)."""
    try:
        yield
    except (ArithmeticError, ValueError, RecursionError, OverflowError) as exc:
        raise OperationFailure(f"the in-memory engine could not evaluate the query: {type(exc).__name__}",
                               2) from exc


class MemoryDatabase:
    """The database a ``MemoryCollection`` names (``collection.database.name``)."""

    def __init__(self, name: str) -> None:
        self.name = name


class MemoryCollection:
    """Documents held in this process, read with MongoDB's query semantics.

    ``indexes`` are the index keys a dump's ``metadata.json`` names (``_id`` always leads one);
    they change no answer, only what ``list_indexes`` reports.
    """

    in_process = True

    def __init__(self, store: DocumentStore, *, name: str, database: str = "files",
                 indexes: Iterable[Mapping[str, Any]] = ()) -> None:
        self._store = store
        self.name = name
        self.database = MemoryDatabase(database)
        keys = [dict(k) for k in indexes if k]
        if not any(list(k) == ["_id"] for k in keys):
            keys.insert(0, {"_id": 1})
        self._indexes = keys

    @classmethod
    def of(cls, documents: Iterable[Any], *, name: str = "documents", database: str = "files") -> MemoryCollection:
        """A collection holding ``documents`` (dicts of BSON values), in that order."""
        return cls(DocumentStore.of(documents), name=name, database=database)

    def __len__(self) -> int:
        return len(self._store)

    @property
    def nbytes(self) -> int:
        return self._store.nbytes

    # --- reads ----------------------------------------------------------------------------------

    def _scan(self, deadline: Deadline) -> Iterator[list[dict[str, Any]]]:
        for batch in self._store.batches():
            deadline.check()
            yield batch

    def count_documents(self, filter: Mapping[str, Any], maxTimeMS: int | None = None, **_: Any) -> int:
        deadline = Deadline(maxTimeMS)
        with _as_server_error():
            test = compile_filter(dict(filter), deadline)
            total = 0
            for batch in self._scan(deadline):
                total += sum(map(test, batch)) if filter else len(batch)
            return total

    def aggregate(self, pipeline: list[Mapping[str, Any]], maxTimeMS: int | None = None,
                  **_: Any) -> list[Any]:
        deadline = Deadline(maxTimeMS)
        with _as_server_error():
            stream = build_pipeline(list(pipeline), deadline, rng=random.Random())
            out: list[Any] = []
            for batch in self._scan(deadline):
                out.extend(stream.feed(batch))  # what no blocking stage holds back comes out here
                if stream.done:
                    break
            return out + stream.finish()

    def find(self, filter: Mapping[str, Any] | None = None, projection: Any = None) -> _Cursor:
        return _Cursor(self, dict(filter or {}), projection)

    def estimated_document_count(self, maxTimeMS: int | None = None, **_: Any) -> int:
        return len(self._store)

    def list_indexes(self) -> list[SON[str, Any]]:
        return [SON([("v", 2), ("key", SON(key.items())), ("name", "_".join(f"{k}_{v}" for k, v in key.items()))])
                for key in self._indexes]

    def draw_sample(self, size: int, seed: int) -> list[dict[str, Any]]:
        """``size`` documents drawn uniformly without replacement, the same ones for the same seed."""
        chosen = random.Random(seed).sample(range(len(self._store)), min(size, len(self._store)))
        return self._store.documents(chosen)


class _Cursor:
    """What ``find`` returns: ``limit``, ``sort`` and ``max_time_ms`` chain; iterating runs the read."""

    def __init__(self, collection: MemoryCollection, query: dict[str, Any], projection: Any) -> None:
        self._collection = collection
        self._query = query
        self._projection = projection
        self._limit = 0
        self._sort: dict[str, int] = {}
        self._max_time_ms: int | None = None

    def limit(self, n: int) -> _Cursor:
        self._limit = int(n)
        return self

    def sort(self, key: Any, direction: int = 1) -> _Cursor:
        if isinstance(key, list):
            self._sort.update(dict(key))
        else:
            self._sort[key] = direction
        return self

    def max_time_ms(self, ms: int | None) -> _Cursor:
        self._max_time_ms = ms
        return self

    def __iter__(self) -> Iterator[dict[str, Any]]:
        with _as_server_error():
            return iter(self._run())

    def _run(self) -> list[dict[str, Any]]:
        deadline = Deadline(self._max_time_ms)
        test = compile_filter(self._query, deadline)
        project = Projection(self._projection, deadline) if self._projection else None
        limit = abs(self._limit)
        found: list[dict[str, Any]] = []
        if self._sort and limit and len(self._sort) == 1:
            (path, direction), = self._sort.items()
            get = field_getter(path)
            descending = direction == -1
            pick = heapq.nlargest if descending else heapq.nsmallest
            for batch in self._collection._scan(deadline):
                found = pick(limit, [*found, *filter(test, batch)],
                             key=lambda d: sort_value(get(d), descending))
        else:
            for batch in self._collection._scan(deadline):
                found.extend(filter(test, batch))
                if limit and not self._sort and len(found) >= limit:
                    break
            if self._sort:
                found = sort_documents(found, self._sort)
        if limit:
            found = found[:limit]
        return [project(d) for d in found] if project else found

