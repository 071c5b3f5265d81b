"""Open the window of a scoped audit on its target (see ``agent.window``).

The field is resolved (``_id``'s ObjectId time when none is named), one ``listIndexes``
(read-only) says whether an index leads with it, the window's documents are counted, and the
target is scoped so every later read carries the window's filter first.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bson import ObjectId

from agent.errors import ArgusError
from agent.options import ScopeOptions
from agent.tools.target import AuditTarget
from agent.window import AuditWindow, window_filter

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
    window = AuditWindow(field=field, since=since, span_s=scope.since_s, documents=documents, indexed=indexed)
    return window, notes
