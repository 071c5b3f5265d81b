"""Generated multi-tenant orders: a steady daily volume per tenant, with the defects a test asks for."""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from bson import ObjectId

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)  # a Monday


@dataclass
class Tenants:
    """``per_day`` orders a day for each tenant over ``days`` days before ``NOW``."""

    names: list[str]
    per_day: dict[str, int]
    days: int = 35
    stopped: dict[str, float] = field(default_factory=dict)  # tenant -> hours before NOW it stopped sending
    started: dict[str, float] = field(default_factory=dict)  # tenant -> hours before NOW it began
    missing: dict[str, float] = field(default_factory=dict)  # tenant -> share of its orders without "shipping"
    coupon_missing: dict[str, float] = field(default_factory=dict)  # tenant -> share without "coupon" (default 0.35)
    seed: int = 5

    def documents(self) -> list[dict[str, Any]]:
        rng = random.Random(self.seed)
        docs = []
        serial = 0
        for ago in range(self.days, 0, -1):
            for name in self.names:
                usual = self.per_day[name]
                for _ in range(rng.randint(usual - usual // 10, usual + usual // 10)):
                    created = NOW - timedelta(days=ago - 1) - timedelta(seconds=rng.uniform(1, 86_399))
                    hours_ago = (NOW - created).total_seconds() / 3600
                    if name in self.stopped and hours_ago < self.stopped[name]:
                        continue
                    if name in self.started and hours_ago > self.started[name]:
                        continue
                    serial += 1
                    oid = ObjectId(struct.pack(">I", int(created.timestamp())) + serial.to_bytes(8, "big"))
                    doc: dict[str, Any] = {"_id": oid, "tenant": name, "total": rng.randint(10, 500),
                                           "status": rng.choice(["paid", "shipped", "new"])}
                    if rng.random() >= self.missing.get(name, 0.0):
                        doc["shipping"] = rng.choice(["ground", "air"])
                    if rng.random() >= self.coupon_missing.get(name, 0.35):
                        doc["coupon"] = rng.choice(["SPRING", "VIP", "NONE"])
                    docs.append(doc)
        return docs


def count(docs: list[dict[str, Any]], tenant: str, *, without: str | None = None,
          since: datetime | None = None) -> int:
    """Documents of ``tenant`` (lacking ``without``, arrived after ``since``): the exact figures tests expect."""
    return sum(1 for d in docs if d["tenant"] == tenant and (without is None or without not in d)
               and (since is None or d["_id"].generation_time > since))
