"""One small collection with planted defects of kinds whose checks use different operators, for
audits over servers that refuse some of them: a quantity written as text (``$not`` + ``$type``),
malformed emails (``$not`` + ``$regex``), negative prices (a range), a misspelt status (value
counts, then ``$in``), an order delivered before it was shipped (``$expr``), a duplicated key
(duplicates, in ``$facet``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bson import ObjectId

__all__ = ["DOCS", "NOW", "TRUTH"]

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
_START = NOW - timedelta(days=40)


def _doc(i: int) -> dict[str, Any]:
    created = _START + timedelta(minutes=72 * i)
    shipped = created + timedelta(hours=2 + i % 5)
    return {"_id": ObjectId.from_datetime(created), "order_no": f"ORD-{100000 + i}", "qty": 1 + (i * 7) % 19,
            "price": round(5 + (i * 37) % 4500 / 100, 2), "status": ("open", "shipped", "delivered")[i % 3],
            "email": f"buyer{i}@mail.example.org", "shipped_at": shipped,
            "delivered_at": shipped + timedelta(days=1 + i % 4), "created_at": created}


def _docs() -> list[dict[str, Any]]:
    docs = [_doc(i) for i in range(600)]
    for i in range(3, 600, 100):       # 6 quantities written as text
        docs[i]["qty"] = str(docs[i]["qty"])
    for i in range(11, 600, 120):      # 5 negative prices
        docs[i]["price"] = -docs[i]["price"]
    for i in range(17, 600, 150):      # 4 misspelt statuses
        docs[i]["status"] = "shiped"
    for i in range(29, 600, 200):      # 3 malformed emails
        docs[i]["email"] = docs[i]["email"].replace("@", " at ")
    for i in range(41, 600, 300):      # 2 deliveries before shipping
        docs[i]["delivered_at"] = docs[i]["shipped_at"] - timedelta(days=1)
    docs[77]["order_no"] = docs[76]["order_no"]  # one order number used twice
    return docs


DOCS = _docs()
TRUTH = {("qty", "type_mismatch"): 6, ("price", "outlier_value"): 5, ("status", "enum_violation"): 4,
         ("email", "format_violation"): 3, ("delivered_at", "cross_field"): 2, ("order_no", "duplicate_value"): 2}
