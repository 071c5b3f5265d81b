"""The shapes section as a privacy mode lets it be written.

A discriminator's values are document values. ``full`` writes them; ``shapes`` writes a value
that belongs to the field's sampled vocabulary (as finding examples do, ``argus.agent.privacy``) and
names any other shape by its index; ``strict`` names every shape by index (``#1`` is the most
common) and writes no value. Paths, types, counts, shares and times are kept in every mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from argus.agent.options import PrivacyMode
from argus.agent.shapes.models import Shapes

__all__ = ["for_report"]


def for_report(shapes: Shapes | None, mode: PrivacyMode, categorical: Mapping[str, frozenset[Any]]) -> Shapes | None:
    if shapes is None or mode == "full" or shapes.discriminator is None:
        return shapes
    vocabulary = categorical.get(shapes.discriminator, frozenset()) if mode == "shapes" else frozenset()
    masked = False
    out = []
    for i, shape in enumerate(shapes.shapes, start=1):
        if isinstance(shape.value, str) and shape.value in vocabulary:
            out.append(shape)
        else:
            masked = True
            out.append(shape.model_copy(update={"label": f"#{i}", "value": None}))
    return shapes.model_copy(update={"shapes": out, "masked": masked})
