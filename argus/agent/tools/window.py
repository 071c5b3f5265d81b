"""Open the window of a scoped audit on its target (see ``argus.agent.window``).

The field is resolved (``_id``'s ObjectId time when none is named), one ``listIndexes``
(read-only) says whether an index leads with it, the window's documents are counted, and the
target is scoped so every later read carries the window's filter first.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bson import ObjectId

from argus.agent.errors import ArgusError
from argus.agent.options import ScopeOptions
from argus.agent.tools.target import AuditTarget
from argus.agent.window import AuditWindow, unusable_filters, window_filter

__all__ = ["open_window"]


def open_window(target: AuditTarget, scope: ScopeOptions, now: datetime) -> tuple[AuditWindow, list[str]]:
    """Resolve, measure and apply the window; returns it and the notes the report carries.
    Raises ``ArgusError`` when no field is named and ``_id`` holds no ObjectIds (nothing to scope by)."""
    notes: list[str] = []
    field = scope.field or "_id"
    if scope.field is None:
        newest = target.newest("_id")
        if newest is not None and not isinstance(newest, ObjectId):
            raise ArgusError(f"scope needs a field: _id here is a {type(newest).__name__}, not an ObjectId with a "
                             f"creation time; name a date field (scope: {{field: created_at, since: 24h}})")
    since = now - timedelta(seconds=scope.since_s)
    query = window_filter(field, since)
    leading = target.indexed_fields()
    indexed = None if leading is None else field in leading
    documents = target.scope_to(query, indexed=bool(indexed))
    if indexed is False:
        notes.append(f"no index leads with {field}: each pass of this scoped audit still reads the whole collection; "
                     f"an index on {{{field}: 1}} makes it read only the window's documents")
    if documents == 0 and (target.ledger.collection_size or 0) > 0:
        notes.append(f"no document has {field} in the window (since {since:%Y-%m-%d %H:%M} UTC): "
                     f"nothing was audited; is {field} a date?")
    missing, not_dates = _unusable(target, field)
    if missing is None or not_dates is None:
        notes.append(f"the documents without a usable {field} (missing or not a date) could not be counted: a "
                     f"scoped run never audits them")
    elif missing or not_dates:
        kind = "an ObjectId" if field == "_id" else "a date"
        parts = [f"{missing:,} lack {field}" if missing else "",
                 f"{not_dates:,} hold a value of {field} that is not {kind}" if not_dates else ""]
        notes.append(f"{' and '.join(p for p in parts if p)} (of {target.ledger.collection_size or 0:,} documents): "
                     f"they are in no window, so no scoped run audits them; see the finding on {field}")
    window = AuditWindow(field=field, since=since, span_s=scope.since_s, documents=documents, indexed=indexed,
                         missing=missing, not_dates=not_dates)
    return window, notes


def _unusable(target: AuditTarget, field: str) -> tuple[int | None, int | None]:
    """Documents of the whole collection without ``field``, and with a value no window compares; None
    when the server refused or timed out the count (the note says so, the run goes on)."""
    whole = target.whole_collection()
    counts: list[int | None] = []
    for query in unusable_filters(field):
        try:
            counts.append(whole.count_documents(query))
        except ArgusError:
            counts.append(None)
    return counts[0], counts[1]
