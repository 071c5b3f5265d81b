"""One filter asked of the in-process engine every way Argus asks it, with one answer expected.

``matching(docs, query)`` runs ``query`` through ``find`` (the generated fast path), the general
path alone (``general_path``), ``count_documents`` and the batched ``$facet`` count ``count_many``
sends, asserts they agree, and returns the ``_id`` of the matching documents in stored order. The
conformance tests compare that list with the answer the cited MongoDB source gives.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from argus.agent.engine import MemoryCollection
from argus.agent.engine.match import compile_filter, general_path

__all__ = ["aggregate", "matching", "stored"]


def stored(collection: MemoryCollection) -> list[dict[str, Any]]:
    """The documents as the engine decodes them for a read (Int64, naive UTC dates)."""
    return [d for batch in collection._store.batches() for d in batch]


def matching(docs: Iterable[dict[str, Any]], query: dict[str, Any]) -> list[Any]:
    collection = MemoryCollection.of(list(docs))
    fast = [d["_id"] for d in collection.find(query)]
    with general_path():
        general_test = compile_filter(query)
    general = [d["_id"] for d in stored(collection) if general_test(d)]
    assert fast == general, f"fast path {fast} != general path {general} for {query}"
    assert collection.count_documents(query) == len(fast), query
    facet = collection.aggregate([{"$match": query if query else {}},
                                  {"$facet": {"q0": [{"$match": query}, {"$count": "n"}]}}])
    assert facet == [{"q0": [{"n": len(fast)}] if fast else []}], (query, facet)
    return fast


def aggregate(docs: Iterable[dict[str, Any]], pipeline: list[dict[str, Any]]) -> list[Any]:
    return MemoryCollection.of(list(docs)).aggregate(pipeline)
