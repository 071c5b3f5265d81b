"""Generated polymorphic collections with known shapes, defects and renames (for the shapes tests)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from bson import ObjectId

__all__ = ["START", "customers", "oid_at", "payments", "renamed_orders"]

START = datetime(2026, 1, 1, tzinfo=UTC)


def oid_at(at: datetime, n: int) -> ObjectId:
    """An ObjectId whose time is ``at`` (its counter ``n`` keeps them distinct)."""
    return ObjectId(int(at.timestamp()).to_bytes(4, "big") + n.to_bytes(8, "big"))


def payments(n: int = 1000, *, missing_iban: int = 0, cards: int = 60, ibans: int = 37,
             seed: int = 7) -> list[dict[str, Any]]:
    """Of each hundred payments, ``cards`` by card, ``ibans`` by IBAN transfer, the rest cash (by
    position, so shares are exact); the first ``missing_iban`` transfers lack their ``iban``."""
    rnd = random.Random(seed)
    docs: list[dict[str, Any]] = []
    lacking = 0
    for i in range(n):
        doc: dict[str, Any] = {"_id": oid_at(START + timedelta(minutes=i), i), "amount": round(rnd.uniform(5, 500), 2),
                               "currency": rnd.choice(["EUR", "USD", "GBP"]), "customer": f"C{rnd.randrange(300):04d}"}
        if i % 100 < cards:
            doc["method"] = "card"
            doc["card"] = {"last4": f"{rnd.randrange(10000):04d}", "brand": rnd.choice(["visa", "mastercard"])}
        elif i % 100 < cards + ibans:
            doc["method"] = "iban"
            if lacking < missing_iban:
                lacking += 1
            else:
                doc["iban"] = f"DE{rnd.randrange(10**18):018d}"
            doc["bic"] = rnd.choice(["DEUTDEFF", "COBADEFF", "GENODEM1"])
        else:
            doc["method"] = "cash"
        docs.append(doc)
    return docs


def renamed_orders(n: int = 1000, *, at: int = 600, seed: int = 11) -> list[dict[str, Any]]:
    """Orders one minute apart whose ``customerId`` is written ``customer_id`` from document ``at`` on."""
    rnd = random.Random(seed)
    docs = []
    for i in range(n):
        customer = f"CU-{rnd.randrange(400):05d}"
        doc: dict[str, Any] = {"_id": oid_at(START + timedelta(minutes=i), i), "total": round(rnd.uniform(1, 90), 2),
                               "status": rnd.choice(["open", "paid", "shipped"])}
        doc["customerId" if i < at else "customer_id"] = customer
        docs.append(doc)
    return docs


def customers(n: int = 1000, *, strings_until: int = 300, seed: int = 5) -> list[dict[str, Any]]:
    """Customers one minute apart whose ``address`` is a string up to document ``strings_until``
    and an object after; every fifth one's ``tags`` mix strings, numbers and an object."""
    rnd = random.Random(seed)
    docs = []
    for i in range(n):
        city = rnd.choice(["Lyon", "Graz", "Turin", "Ghent"])
        street = f"{rnd.randrange(1, 200)} Main St"
        doc: dict[str, Any] = {"_id": oid_at(START + timedelta(minutes=i), i), "name": f"N{rnd.randrange(10**6)}",
                               "address": f"{street}, {city}" if i < strings_until else {"street": street,
                                                                                          "city": city},
                               "tags": ["new", "eu"] if i % 5 else ["vip", 3, {"source": "import"}]}
        docs.append(doc)
    return docs
