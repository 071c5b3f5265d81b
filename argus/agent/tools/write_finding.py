"""``write_finding``: commit a confirmed finding, idempotent on ``(field, category)``."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID, uuid4

from argus.agent.findings import Category, Finding, WriteFindingInput

__all__ = ["FindingsCollector", "candidate_from", "write_finding"]


class FindingsCollector:
    """Committed findings keyed by ``(field, category)``: writing the same key again updates
    the finding in place and keeps its id, so a planner revisiting an issue never duplicates it."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, Category], Finding] = {}

    def id_for(self, field: str, category: Category) -> UUID:
        existing = self._by_key.get((field, category))
        return existing.id if existing else uuid4()

    def upsert(self, finding: Finding) -> UUID:
        key = (finding.field, finding.category)
        existing = self._by_key.get(key)
        if existing is not None:
            finding = finding.model_copy(update={"id": existing.id})
        self._by_key[key] = finding
        return finding.id

    def get(self, field: str, category: Category) -> Finding | None:
        return self._by_key.get((field, category))

    def __iter__(self) -> Iterator[Finding]:
        return iter(list(self._by_key.values()))

    def __len__(self) -> int:
        return len(self._by_key)


def candidate_from(collector: FindingsCollector, params: WriteFindingInput) -> Finding:
    """The finding ``params`` describes, carrying the id it will keep if committed."""
    return Finding(id=collector.id_for(params.field, params.category), **params.model_dump())


def write_finding(collector: FindingsCollector, params: WriteFindingInput) -> UUID:
    """Commit ``params`` (after the finding gate passed it) and return the finding's id."""
    return collector.upsert(candidate_from(collector, params))
