"""A generated polymorphic ``events`` collection (an app's activity log), its shapes declared in a
contract, and the breakage planted in it with exact counts."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["CONTRACT", "KINDS", "PLANTED", "events"]

START = datetime(2026, 2, 1, tzinfo=UTC)
# of each 20 events: 10 page views, 6 purchases, 3 refunds, 1 logout (which has no payload of its own)
KINDS = ("view",) * 10 + ("purchase",) * 6 + ("refund",) * 3 + ("logout",)

CONTRACT = """\
fields:
  user: {required: true}
  at: {required: true, type: date}
shapes:
  by: kind
  view:
    fields:
      page: {required: true, type: string}
  purchase:
    fields:
      order_id: {required: true, pattern: '^ORD-[0-9]+$'}
      total: {required: true, min: 0}
  refund:
    fields:
      order_id: {required: true}
      reason: {in: [damaged, late, unwanted]}
  logout: {fields: {}}
"""

# (field shown, rule) -> documents breaking it, as events(planted=True) plants them
PLANTED = {("total", "required"): 7, ("reason", "in"): 4, ("kind", "shape"): 5,
           ("page", "required"): 3}


def events(n: int = 2000, *, planted: bool = True, seed: int = 3) -> list[dict[str, Any]]:
    """``n`` events a minute apart; planted: 7 purchases without a total, 3 views without a page,
    4 refunds with an unknown reason, 5 events of an undeclared kind (``signup``)."""
    rnd = random.Random(seed)
    left = {"total": 7, "page": 3, "reason": 4, "signup": 5} if planted else {}
    docs: list[dict[str, Any]] = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        doc: dict[str, Any] = {"user": f"U{rnd.randrange(500):04d}", "at": START + timedelta(minutes=i), "kind": kind}
        if kind == "view":
            doc["page"] = rnd.choice(["/", "/cart", "/help", "/product"])
            doc["ms"] = rnd.randrange(20, 900)
            if i > n // 2 and left.get("page", 0):
                left["page"] -= 1
                del doc["page"]
        elif kind == "purchase":
            doc.update(order_id=f"ORD-{i}", total=round(rnd.uniform(3, 300), 2))
            if i > n // 3 and left.get("total", 0):
                left["total"] -= 1
                del doc["total"]
        elif kind == "refund":
            doc.update(order_id=f"ORD-{i}", reason=rnd.choice(["damaged", "late", "unwanted"]))
            if i > n // 2 and left.get("reason", 0):
                left["reason"] -= 1
                doc["reason"] = "other"
        elif i > n // 2 and left.get("signup", 0):
            left["signup"] -= 1
            doc.update(kind="signup", referrer="ad")
        docs.append(doc)
    return docs
