"""The read interface tools are given: what an audit may ask of a collection, and nothing that writes.

``AuditTarget`` (and so both of its adapters) is one; a tool that needs only these reads can be
given any other, a recording wrapper in a test for instance.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

__all__ = ["CollectionReads"]


class CollectionReads(Protocol):
    """Read methods only, each bounded by the run's time limit and counted in its cost."""

    def find(self, query: Mapping[str, Any], projection: Mapping[str, Any] | None, limit: int, *,
             sort: list[tuple[str, int]] | None = None, full_pass: bool | None = None) -> list[Any]:
        """Documents matching ``query`` (``limit`` 0: every one)."""
        ...

    def count_documents(self, query: Mapping[str, Any]) -> int:
        """How many documents ``query`` matches."""
        ...

    def aggregate(self, pipeline: list[dict[str, Any]], *, full_pass: bool | None = None,
                  kind: str = "aggregate") -> list[Any]:
        """The results of a read-only pipeline."""
        ...

    def sample(self, size: int) -> list[Any]:
        """Up to ``size`` documents drawn at random."""
        ...

    def estimated_document_count(self) -> int:
        """The collection's size from its metadata."""
        ...

    def newest(self, field: str) -> Any:
        """The largest value of ``field``, or None in an empty collection."""
        ...

    def indexed_fields(self) -> set[str] | None:
        """Fields that lead an index; None when the server will not say."""
        ...
