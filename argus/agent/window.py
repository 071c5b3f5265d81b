"""The window of a scoped audit: only documents whose time field is recent are read.

A collection of billions, or a Cosmos DB account paying request units for every pass, is audited
on its recent documents (``scope: {field: created_at, since: 24h}``), as the warehouse monitors
scope a check to recent data. A finding counted in a window says so (``Finding.window``); its share
is of the window's documents. ``argus.agent.tools.window`` opens the window on a target.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bson import ObjectId
from pydantic import BaseModel, Field

__all__ = ["AuditWindow", "Window", "unusable_filters", "window_filter"]


class Window(BaseModel):
    """Which documents a finding was counted in: those whose ``field`` is at or after ``since``."""

    field: str
    since: datetime

    def describe(self) -> str:
        moment = self.since.strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"{'_id (ObjectId time)' if self.field == '_id' else self.field} since {moment}"


class AuditWindow(Window):
    """A scoped run's window as the report gives it."""

    span_s: float = Field(description="how far back the window reaches from the run's start, in seconds")
    documents: int = Field(description="documents in the window (the scoped count)")
    indexed: bool | None = Field(description="an index leads with the field, so a pass reads only the window's "
                                             "documents; None when the server refused listIndexes")
    missing: int | None = Field(None, description="documents of the collection without the field (or null): in no "
                                                 "window, never audited by a scoped run; None: not counted")
    not_dates: int | None = Field(None, description="documents whose field holds no date (no ObjectId for _id): "
                                                   "in no window either; None: not counted")

    @property
    def key(self) -> str:
        """Runs with the same key are compared with each other (like with like)."""
        return f"{self.field}:{self.span_s:g}"


def affected_words(count: int, share: float, collection_size: int, window: AuditWindow | None) -> str:
    """How many documents a finding holds, with the count its share is of: a scoped run's share is
    of its window, so the window is named beside the collection."""
    if window is None:
        return f"{count:,} of {collection_size:,} documents ({share:.2%})"
    return (f"{count:,} of {window.documents:,} documents in the window ({share:.2%}; "
            f"{collection_size:,} in the collection)")


def window_filter(field: str, since: datetime) -> dict[str, Any]:
    """The filter of a window: ``{field: {$gte: since}}``, ``_id`` compared as ObjectId time."""
    if field == "_id":
        return {"_id": {"$gte": ObjectId.from_datetime(since)}}
    return {field: {"$gte": since}}


def unusable_filters(field: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The documents no window of ``field`` can hold: without it (or null), and holding another type
    than the window compares (a date; an ObjectId for ``_id``): ``"yesterday"`` is in no window."""
    kind = "objectId" if field == "_id" else "date"
    return {field: None}, {field: {"$exists": True, "$ne": None, "$not": {"$type": kind}}}
