"""The in-process query engine behind files and demo collections: MongoDB's read semantics, fast.

``MemoryCollection`` answers ``find``, ``count_documents``, ``aggregate`` and the metadata reads
as a server would, over documents kept as BSON (``store``), with filters compiled once into
predicates (``match``), aggregation expressions (``expressions``), streaming pipelines
(``pipeline``) and its own time limit (``deadline``).
"""

from argus.agent.engine.collection import MemoryCollection
from argus.agent.engine.store import DocumentStore

__all__ = ["DocumentStore", "MemoryCollection"]
