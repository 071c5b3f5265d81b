"""Shapes against their history (pure): a new shape, a vanished one, a share moved far.

A shape is known across runs by its discriminator and the paths that set it apart, never by
its value: a stored run in ``strict`` mode names shapes ``#1``, ``#2`` by share, and those
labels move when shares do. Shapes with no path of their own (``cash``) are matched by label,
which only a run that could write their value keeps stable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from argus.agent.shapes.models import Shape, Shapes

__all__ = ["MOVE_FACTOR", "MOVE_POINTS", "ShapeDrift", "drift"]

MOVE_FACTOR = 2.0   # a share moved: more than twice the largest earlier one, or under half the smallest ...
MOVE_POINTS = 0.05  # ... and at least five points away from it


@dataclass(frozen=True)
class ShapeDrift:
    query: dict[str, Any]   # today's documents of the shape: the finding's evidence
    description: str        # follows "N of M documents (p%)"


def _key(shapes: Shapes, shape: Shape, label: str) -> tuple[str | None, frozenset[str] | str]:
    return shapes.discriminator, frozenset(shape.specific) if shape.specific else label


def _share(shapes: Shapes, shape: Shape) -> float:
    counts = [s.count for s in shapes.shapes]
    total = sum(n for n in counts if n is not None)
    return (shape.count or 0) / total if total and None not in counts else shape.share


def drift(today: Shapes, named: Shapes, history: list[Shapes]) -> tuple[list[ShapeDrift], list[str]]:
    """Findings to ask (new shapes, shares moved) and notes (vanished shapes), against earlier runs
    with the same discriminator; ``named`` is ``today`` labelled as the privacy mode allows."""
    disc = today.discriminator
    earlier = [h for h in history if h.discriminator == disc and h.shapes]
    if disc is None or not earlier:
        return [], []
    seen: dict[Any, list[float]] = {}
    labels: dict[Any, str] = {}
    for past in earlier:
        for shape in past.shapes:
            seen.setdefault(_key(past, shape, shape.label), []).append(_share(past, shape))
            labels.setdefault(_key(past, shape, shape.label), shape.label)
    found: list[ShapeDrift] = []
    keys = set()
    for shape, label in zip(today.shapes, (s.label for s in named.shapes), strict=True):
        key = _key(today, shape, label)
        keys.add(key)
        within = {disc: shape.value}
        if key not in seen:
            found.append(ShapeDrift(within, f"are of shape {label} (by {disc}), which none of the {len(earlier)} "
                                            f"earlier runs saw"))
            continue
        shares, share = seen[key], shape.share
        high, low = max(shares), min(shares)
        if share > max(MOVE_FACTOR * high, high + MOVE_POINTS) or share < min(low / MOVE_FACTOR, low - MOVE_POINTS):
            found.append(ShapeDrift(within, f"are of shape {label} (by {disc}), about {share:.0%} of the sample "
                                            f"where {len(shares)} earlier runs saw {low:.0%} to {high:.0%}"))
    gone = [labels[k] for k in seen if k not in keys and len(seen[k]) == len(earlier)]
    notes = [f"shape {label} (by {disc}), seen in each of the {len(earlier)} earlier runs, is not in this run's "
             f"sample" for label in sorted(gone)]
    return found, notes
