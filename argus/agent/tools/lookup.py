"""``lookup_references``: which values of a reference exist in the collection they reference.

A contract's ``references: customers.customer_id`` is checked without ``$lookup`` (which the guard
refuses: it reads another collection inside the audited one's pipeline) and without a pass per
value: the distinct values come from the audit's batched statistics pass, and here they are
looked up in the referenced collection in batches of ``LOOKUP_BATCH``, each a
``[$match {field: {$in: batch}}, ... $group]`` that reads only the matching documents (the index
when the field is indexed). Each batch is recorded as a lookup in the run's cost, not a pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from bson import Decimal128, Int64

from argus.agent.ejson import decode, encode
from argus.agent.errors import ToolError
from argus.agent.tools.get_stats import build_pipeline
from argus.agent.tools.guard import check_field_path, check_filter
from argus.agent.tools.guard_pipeline import check_pipeline
from argus.agent.tools.models import LOOKUP_BATCH, LookupInput, LookupResult
from argus.agent.tools.target import AuditTarget

__all__ = ["lookup_references", "value_key"]


def value_key(value: Any) -> str:
    """Equal values give equal keys across numeric types (an int 5 in one collection finds a double
    5.0 in the other, as ``$in`` does)."""
    if isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float | Int64 | Decimal128 | Decimal):
        number = value.to_decimal() if isinstance(value, Decimal128) else value
        return f"n:{float(number)!r}"
    return json.dumps(encode(value), sort_keys=True)


def _batches(values: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(values), LOOKUP_BATCH):
        yield values[start:start + LOOKUP_BATCH]


def lookup_references(target: AuditTarget, params: LookupInput) -> LookupResult:
    """Look ``params.values`` up in ``params.collection``.``params.field``; return those not found."""
    check_field_path(params.field)
    if params.collection.startswith("system.") or "$" in params.collection or "\x00" in params.collection:
        raise ToolError(f"{params.collection!r} is not a collection Argus may read")
    values = [decode(v) for v in params.values]
    other = target.sibling(params.collection)
    documents = other.estimated_document_count()
    try:
        leading = other.indexed_fields()
    except ToolError:
        leading = None
    indexed: bool | None = None if leading is None else params.field in leading
    found: set[str] = set()
    lookups = 0
    for batch in _batches(values):
        query = {params.field: {"$in": batch}}
        check_filter(query)
        pipeline = build_pipeline(params.field, "distinct", query, None, LOOKUP_BATCH)
        check_pipeline(pipeline)
        found.update(value_key(row["_id"]) for row in other.lookup(pipeline))
        lookups += 1
    missing = [encode(v) for v in values if value_key(v) not in found]
    return LookupResult(collection=params.collection, field=params.field, checked=len(values), missing=missing,
                        lookups=lookups, indexed=indexed, documents=documents)
