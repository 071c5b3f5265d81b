"""How documents are drawn where ``$sample`` is not the way: in process for the in-memory engine,
and from random points of the ``_id`` index for a server that refuses ``$sample``. Pure helpers;
``AuditTarget`` sends the reads.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from bson import ObjectId

__all__ = ["draw_in_memory", "random_points"]


def draw_in_memory(collection: Any, size: int, seed: int, scope: Mapping[str, Any] | None) -> list[Any]:
    """A uniform sample repeatable for a seed: the in-process engine (``argus.agent.engine``) draws positions
    itself, without a ``$sample`` stage's shuffle of every document; another in-process collection is
    asked for ``$sample``. In a scoped audit the window's documents are read (one read) and the sample
    drawn among them."""
    if scope:
        inside = list(collection.find(dict(scope)))
        chosen = random.Random(seed).sample(range(len(inside)), min(size, len(inside)))
        return [inside[i] for i in sorted(chosen)]
    if getattr(collection, "in_process", False) is True:
        return list(collection.draw_sample(size, seed))
    return list(collection.aggregate([{"$sample": {"size": size}}]))


def random_points(low: Any, high: Any, count: int, rng: random.Random) -> list[Any]:
    """``count`` sorted random values between two ``_id``s of one kind (ObjectIds by their time,
    numbers by value); none for other kinds, which have no arithmetic."""
    if isinstance(low, ObjectId) and isinstance(high, ObjectId):
        start, end = low.generation_time.timestamp(), high.generation_time.timestamp()
        if end <= start:
            return [low]
        times = sorted(rng.uniform(start, end) for _ in range(count - 1))
        return [low, *(ObjectId.from_datetime(datetime.fromtimestamp(t, UTC)) for t in times)]
    numbers = (int, float)
    if isinstance(low, numbers) and isinstance(high, numbers) and not isinstance(low, bool) \
            and not isinstance(high, bool):
        if high <= low:
            return [low]
        return [low, *sorted(rng.uniform(low, high) for _ in range(count - 1))]
    return []
