"""What a user declares of segments, and what one run learns of them.

A segment is the value (or the values) of a few fields a user names, ``tenant`` or ``[region,
pipeline]``: its documents are counted, and its arrivals and freshness judged, on their own. The
labels (``tenant=acme``) are document values: in ``strict`` privacy they are replaced by a
stable hash (``tenant=#3f2a9c01d4``) before anything leaves the pass that read them.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

__all__ = ["MAX_TOP", "OTHER", "SegmentBreakdown", "SegmentCount", "SegmentHealth", "SegmentNulls", "SegmentOptions",
           "SegmentTotals", "metric_label"]

MAX_TOP = 200  # the hard cap on named segments: Prometheus series per schedule stay bounded
OTHER = "other"  # the segments past ``top``, folded together


def metric_label(segment: str) -> str:
    """A segment's label in Prometheus: ``other`` as itself, any other as ``seg_`` and a digest of
    its name (``tenant=acme``), in every privacy mode: metric labels never carry document values.
    The report and the stored run print each segment with this label beside it."""
    if segment == OTHER:
        return OTHER
    return "seg_" + hashlib.sha256(segment.encode("utf-8", "surrogatepass")).hexdigest()[:10]


class SegmentOptions(BaseModel):
    """``segments: {by: tenant, top: 50}`` of a schedule, a contract or ``argus audit --segment-by``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    by: list[str] = Field(min_length=1, max_length=3, description="one field or up to three (dotted paths "
                                                                   "allowed) whose values name a segment")
    top: int = Field(50, ge=1, description="segments named, by documents; the rest are counted "
                                                       f"together as '{OTHER}' (at most {MAX_TOP})")

    @field_validator("by", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("top")
    @classmethod
    def _capped(cls, value: int) -> int:
        if value > MAX_TOP:
            raise ValueError(f"at most {MAX_TOP}: a hard cap that keeps each schedule's Prometheus series bounded "
                             f"(the segments past top are counted together as '{OTHER}')")
        return value

    @field_validator("by")
    @classmethod
    def _paths(cls, value: list[str]) -> list[str]:
        from argus.agent.errors import QueryRefused
        from argus.agent.tools.guard import check_field_path  # the guard imports the findings vocabulary

        for path in value:
            try:
                check_field_path(path)
            except QueryRefused:
                raise ValueError(f"{path!r} is not a field path (dot notation such as customer.region, no '$', "
                                 f"no empty part)") from None
        if len(set(value)) != len(value):
            raise ValueError("a field is named twice")
        return value


class SegmentCount(BaseModel):
    """Documents of one segment: a finding's breakdown, or the collection's."""

    segment: str
    documents: int


class SegmentBreakdown(BaseModel):
    """A finding's documents per segment, counted in the pass that counted the finding."""

    by: list[str]
    counts: list[SegmentCount] = Field(description="largest first, at most top + 1 ('other')")
    concentrated_in: str | None = Field(None, description="the one segment holding nearly all of them (90% or "
                                                          "more) while the collection has others")

    def text(self, total: int) -> str:
        """``150 of them tenant=acme``; with three segments or more, the largest three."""
        if not self.counts:
            return ""
        if self.concentrated_in is not None:
            head = self.counts[0]
            return f"{head.documents:,} of them {head.segment}: concentrated in one segment"
        shown = ", ".join(f"{c.documents:,} {c.segment}" for c in self.counts[:3])
        more = f" and {len(self.counts) - 3} more" if len(self.counts) > 3 else ""
        return f"of the {total:,}: {shown}{more}"


    def line(self, affected: int) -> str:
        """``157 documents; 150 of them tenant=acme, 5 tenant=beta, 2 other``: the report's and alerts' line."""
        if not self.counts:
            return f"{affected:,} documents"
        head, rest = self.counts[0], self.counts[1:6]
        more = f" and {len(self.counts) - 6} more" if len(self.counts) > 6 else ""
        tail = "".join(f", {c.documents:,} {c.segment}" for c in rest)
        alone = " (concentrated in one segment)" if self.concentrated_in is not None else ""
        return f"{affected:,} documents; {head.documents:,} of them {head.segment}{alone}{tail}{more}"


class SegmentHealth(BaseModel):
    """One segment's arrivals in one run (or one rebuilt interval of a first run)."""

    segment: str
    documents: int | None = Field(None, description="documents of the segment in the collection (the audit's "
                                                    "first batched pass), None when not counted")
    inserts: int | None = Field(None, description="documents of the segment inserted since the previous snapshot "
                                                  "(None: not counted)")
    newest_at: datetime | None = Field(None, description="the segment's newest arrival known")
    freshness_s: float | None = None

    @computed_field(  # type: ignore[prop-decorator]
        description="the segment's Prometheus label (argus_segment_*): 'other', or 'seg_' and a digest of its "
                    "name, since labels never carry document values")
    @property
    def metric_label(self) -> str:
        return metric_label(self.segment)


class SegmentNulls(BaseModel):
    segment: str
    documents: int
    nulls: list[int] = Field(default_factory=list, description="null or missing, per field of SegmentTotals.fields")


class SegmentTotals(BaseModel):
    """The collection's documents and nulls per segment, from the run's first batched pass."""

    fields: list[str]
    segments: list[SegmentNulls]
    documents: int = Field(description="documents of the pass, all segments")
    nulls: list[int] = Field(default_factory=list, description="null or missing per field, all segments")
    complete: bool = Field(True, description="False when there were more than GROUPS_KEPT segments")
