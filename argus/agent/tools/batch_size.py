"""How many checks one batched pass (one ``$facet``) may carry on this server within its time limit.

A ``$facet``'s branches cannot use indexes, and what each costs depends on the engine: on the
in-process engine a pass of 700 checks over 3,000 wide documents takes seconds, on DocumentDB it
runs past a 10 s ``maxTimeMS``. Rather than asking each check alone once a pass times out (a pass
per check), a batch is sent in chunks that fit: the first chunk of a batch whose size is not known
yet carries ``FIRST_CHUNK`` checks, and its duration gives a check's cost; the rest go in as few
chunks as fill ``FILL`` of the time limit. A chunk that still times out is halved, and the size
learned shrinks with it. Each chunk is a pass over the collection and is counted as one.

Statistics cost more a check than counts (which see only the documents some filter matches), so
each kind is sized apart. The sizes learned are reported (``DatabaseCost.batch_checks``) and
stored with the run, and the next run of the same collection starts from them
(``HistoricalContext.batch_checks``), so a schedule pays for the first chunk's timing once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = ["FILL", "FIRST_CHUNK", "BatchSizing"]

FIRST_CHUNK = 64  # checks in the first chunk of a batch whose size on this server is not known yet
FILL = 0.5        # share of the time limit a chunk is sized to take (the rest is headroom for load)

T = TypeVar("T")


@dataclass
class BatchSizing:
    """The checks a batched pass may carry, per kind of batch (``counts``: filters counted after the
    ``$or`` of them; ``stats``: statistics over every document, dearer a check); absent until timed."""

    checks: dict[str, int] = field(default_factory=dict)
    ceiling: dict[str, int] = field(default_factory=dict)  # below a pass of this run that timed out

    def first_chunk(self, kind: str, total: int) -> int:
        """How many of ``total`` checks the next pass of ``kind`` carries before the rest are sized."""
        return min(total, self.checks.get(kind, FIRST_CHUNK))

    def known(self, kind: str) -> int | None:
        return self.checks.get(kind)

    def learn(self, kind: str, checks: int, elapsed_ms: float, limit_ms: int) -> None:
        """A pass of ``checks`` took ``elapsed_ms``: size later passes to fill ``FILL`` of ``limit_ms``."""
        if checks <= 0:
            return
        per_check = max(elapsed_ms, 1.0) / checks
        size = max(1, math.floor(limit_ms * FILL / per_check))
        self.checks[kind] = min(size, self.ceiling.get(kind, size))

    def timed_out(self, kind: str, checks: int) -> int:
        """A pass of ``checks`` reached the time limit: no later pass carries more than half of it."""
        half = max(1, checks // 2)
        self.ceiling[kind] = min(self.ceiling.get(kind, half), half)
        self.checks[kind] = min(self.checks.get(kind, half), half)
        return self.checks[kind]

    def chunks(self, kind: str, items: Sequence[T]) -> list[list[T]]:
        """``items`` in as few chunks of at most the size learned as there can be, of even sizes."""
        if not items:
            return []
        size = max(1, self.checks.get(kind, len(items)))
        parts = math.ceil(len(items) / size)
        step = math.ceil(len(items) / parts)
        return [list(items[i:i + step]) for i in range(0, len(items), step)]
