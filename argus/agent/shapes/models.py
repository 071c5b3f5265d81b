"""What the sample says about a collection's shapes: one model, held by the schema sample, handed
on by the planner's conclusion with exact counts, and written (masked) into the report.

A *shape* is the set of documents sharing one value of the collection's discriminator, a
low-cardinality field whose value predicts which other paths (and which forms of them) a
document holds: ``type: card`` documents carry ``card.last4``, ``type: iban`` ones ``iban``.
Discriminator values are document values: ``label`` is what the report may print (the value
itself when the privacy mode lets it, else ``#1``, ``#2`` by share); ``value`` is None in a
masked report.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["Rename", "Shape", "ShapeCounts", "ShapePath", "Shapes", "TypeMix"]


class ShapePath(BaseModel):
    path: str
    presence: float = Field(description="share of the shape's sampled documents holding the path (not null)")
    types: dict[str, int] = Field(default_factory=dict, description="forms of the path's values in the shape")


class Shape(BaseModel):
    label: str = Field(description="the shape's name in the report: its discriminator value, or #n in strict mode")
    value: Any = Field(None, description="the discriminator's value (Extended JSON); None when masked")
    sampled: int = Field(description="sampled documents of this shape")
    share: float = Field(description="of the sampled documents")
    count: int | None = Field(None, description="documents of this shape in the whole collection (or window), "
                                                "counted in the audit's first pass; None when not counted")
    specific: list[str] = Field(default_factory=list, description="paths (or a path's form, 'path: array<array>') "
                                                                  "this shape holds and the others rarely do")
    paths: list[ShapePath] = Field(default_factory=list)


class TypeMix(BaseModel):
    """A polymorphic field (a string in some documents, an object in others) or an array whose
    elements mix types: the forms and how many sampled values (or documents, once counted) take each."""

    path: str
    elements: bool = Field(False, description="the mix is among an array's elements")
    sampled: dict[str, int] = Field(description="type -> sampled values (elements) of that type")
    counted: dict[str, int] | None = Field(None, description="type -> documents holding it, over the collection")
    last_written: dict[str, datetime] = Field(
        default_factory=dict, description="type -> when the newest document holding that form was written (its "
                                          "ObjectId's time, over the collection once measured, else in the sample)")


class Rename(BaseModel):
    """One path stops in newer documents while another, holding the same kind of values, starts."""

    old: str
    new: str
    boundary: datetime | None = Field(None, description="when the new name took over, by the documents' times")
    old_sampled: int
    new_sampled: int
    value_overlap: float = Field(description="share of the new name's distinct sampled values the old name also "
                                             "held (compared by hash; never quoted)")
    separation: float = Field(description="the smaller of the shares of the old name's sampled documents before "
                                          "the boundary and of the new name's after it")


class ShapeCounts(BaseModel):
    """The exact counts a planner's first pass made of the sample's shapes, in their order: numbers
    only, so a conclusion (and the trace that records it) carries no document value."""

    shapes: list[int | None] = Field(default_factory=list)
    mixes: list[dict[str, int] | None] = Field(default_factory=list)
    newest: list[dict[str, datetime]] = Field(default_factory=list, description="per type mix: type -> the time of "
                                                                               "the newest document holding it")


class Shapes(BaseModel):
    discriminator: str | None = Field(None, description="the field whose value predicts the shape; None: one shape")
    explained: float = Field(0.0, description="share of the presence variation among paths the discriminator "
                                              "explains (entropy), in the sample")
    sampled: int = 0
    shapes: list[Shape] = Field(default_factory=list)
    mixes: list[TypeMix] = Field(default_factory=list)
    renames: list[Rename] = Field(default_factory=list)
    masked: bool = Field(False, description="shapes named by index (#1 the most common): the privacy mode keeps "
                                            "discriminator values out")

    def with_counts(self, counts: ShapeCounts | None) -> Shapes:
        """These shapes with a planner's exact counts (ignored unless they match the shapes one for one)."""
        if counts is None or len(counts.shapes) != len(self.shapes) or len(counts.mixes) != len(self.mixes):
            return self
        return self.model_copy(update={
            "shapes": [s.model_copy(update={"count": n}) for s, n in zip(self.shapes, counts.shapes, strict=True)],
            "mixes": [m.model_copy(update={"counted": n, "last_written": {**m.last_written, **newest}})
                      for m, n, newest in zip(self.mixes, counts.mixes, counts.newest or [{} for _ in self.mixes],
                                              strict=True)]})

    def shape_of(self, value: Any) -> Shape | None:
        return next((s for s in self.shapes if s.value == value), None)

    def summary(self) -> str:
        """One line: ``3 shapes by `type`: card 58% (card.last4, card.brand), iban 39% (iban, bic), cash 3%``."""
        if self.discriminator is None or not self.shapes:
            return "one shape"
        counts = [s.count for s in self.shapes]
        total = sum(n for n in counts if n is not None)
        exact = total > 0 and None not in counts  # exact shares once every shape was counted
        parts = []
        for s in self.shapes:
            share = (s.count or 0) / total if exact else s.share
            shown = ", ".join(s.specific[:4]) + (", …" if len(s.specific) > 4 else "")
            parts.append(f"{s.label} {share:.0%}" + (f" ({shown})" if shown else ""))
        return f"{len(self.shapes)} shapes by `{self.discriminator}`: " + ", ".join(parts)
