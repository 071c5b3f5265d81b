"""Synthetic collections with known truth: a healthy one, and the same with planted defects."""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime, timedelta
from typing import Any

NOW = datetime(2026, 1, 1, tzinfo=UTC)
FIRST = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fatima", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena"]
LAST = ["Silva", "Smith", "Tanaka", "Garcia", "Haddad", "Rossi", "Ivanova", "Okafor"]


def healthy(n: int = 3000, seed: int = 1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        doc: dict[str, Any] = {
            "order_no": f"O-{100000 + i}",
            "customer_id": f"C{rng.randint(0, 799):05d}",
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{i}@{rng.choice(['mail.org', 'corp.net', 'inbox.io'])}",
            "age": rng.randint(18, 90),
            "amount": round(rng.lognormvariate(4, 1.2), 2),
            "balance": round(rng.gauss(100, 300), 2),
            "duration_ms": int(rng.lognormvariate(6, 0.8)),
            "tier": rng.choices(["bronze", "silver", "gold", "platinum"], [60, 25, 12, 3])[0],
            "status": rng.choices(["delivered", "shipped", "paid", "placed", "cancelled"], [50, 20, 15, 10, 5])[0],
            "country": rng.choice(["US", "BR", "FR", "DE", "GB", "CA", "IN", "JP"]),
            "created_at": NOW - timedelta(days=rng.uniform(1, 700)),
            "address": {"city": rng.choice(["Springfield", "Riverton", "Lakeside", "Hillview"]),
                        "zip": f"{rng.randint(10000, 99999)}"},
            "items": [{"sku": f"SKU-{rng.randint(0, 299):04d}", "qty": rng.randint(1, 5),
                       "unit_price": round(rng.uniform(1, 250), 2)} for _ in range(rng.randint(1, 4))],
            "is_active": rng.random() < 0.8,
            "rating": rng.randint(1, 5),
        }
        if rng.random() < 0.4:
            doc["coupon"] = rng.choice(["SPRING10", "VIP", "WELCOME5"])
        docs.append(doc)
    return docs


# (field, category) -> exact number of affected documents
PLANTED = {
    ("address.zip", "null_rate"): 90,
    ("amount", "type_mismatch"): 60,
    ("age", "outlier_value"): 15,
    ("items.qty", "outlier_value"): 20,
    ("country", "enum_violation"): 30,
    ("email", "format_violation"): 60,
    ("order_no", "duplicate_value"): 50,
    ("status", "empty_value"): 30,
    ("customer_id", "schema_drift"): 300,
    ("created_at", "outlier_value"): 15,
}


def planted(n: int = 3000, seed: int = 1) -> list[dict[str, Any]]:
    docs = copy.deepcopy(healthy(n, seed))
    rng = random.Random(seed + 1)

    def pick(k: int) -> list[dict[str, Any]]:
        return rng.sample(docs, k)

    for d in pick(90):
        del d["address"]["zip"]
    for d in pick(60):
        d["amount"] = str(d["amount"])
    for d in pick(15):
        d["age"] = 999
    for d in pick(20):
        d["items"][0]["qty"] = -rng.randint(1, 5)
    for d in pick(30):
        d["country"] = d["country"].lower()
    for d in pick(60):
        d["email"] = d["email"].replace("@", "")
    originals = pick(50)
    for src, dst in zip(originals[:25], originals[25:], strict=True):
        dst["order_no"] = src["order_no"]
    for d in pick(30):
        d["status"] = ""
    for d in pick(300):
        d["customerId"] = d.pop("customer_id")
    for d in pick(15):
        d["created_at"] = datetime(2035, rng.randint(1, 12), 1, tzinfo=UTC)
    return docs
