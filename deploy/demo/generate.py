#!/usr/bin/env python3
"""Write the bundled demo collections (deterministic): shop orders and customers with a few
realistic defects planted, so `argus audit` and the demo schedules have something to find.

Usage: python deploy/demo/generate.py   (rewrites deploy/demo/*.jsonl)
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bson import ObjectId, json_util

HERE = Path(__file__).resolve().parent
START = datetime(2025, 1, 1, tzinfo=UTC)
NAMES = ["Ada", "Bo", "Cai", "Dee", "Eun", "Femi", "Gil", "Hui", "Ines", "Jo", "Kai", "Lou", "Mia", "Nia"]
SURNAMES = ["Berg", "Costa", "Diaz", "Endo", "Fox", "Gray", "Holm", "Ito", "Jain", "Kerr"]


def _oid(rng: random.Random) -> ObjectId:
    return ObjectId(bytes(rng.getrandbits(8) for _ in range(12)))


def _inserted_at(oid: ObjectId, when: datetime) -> ObjectId:
    """``oid`` with the insert time a server would have given it: its first four bytes are ``when``,
    so Argus reads the collection's freshness from the newest ``_id`` as on a live server."""
    return ObjectId(int(when.timestamp()).to_bytes(4, "big") + oid.binary[4:])


def customers(rng: random.Random, n: int = 1500) -> list[dict]:
    docs = []
    for i in range(n):
        first, last = rng.choice(NAMES), rng.choice(SURNAMES)
        docs.append({
            "_id": _oid(rng), "customer_id": f"CU-{i:05d}", "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}{i}@{rng.choice(['example.com', 'mail.test'])}",
            "age": rng.randint(18, 85), "country": rng.choice(["US", "DE", "FR", "JP", "BR", "IN"]),
            "plan": rng.choices(["free", "pro", "team"], [70, 25, 5])[0],
            "signed_up": START - timedelta(days=rng.uniform(0, 900)),
        })
        docs[-1]["_id"] = _inserted_at(docs[-1]["_id"], docs[-1]["signed_up"])
    for d in rng.sample(docs, 24):
        d["email"] = "unknown"                         # format_violation
    for d in rng.sample(docs, 18):
        d["country"] = d["country"].lower()            # enum_violation
    for d in rng.sample(docs, 30):
        d["signed_up"] = d["signed_up"].strftime("%d/%m/%Y")   # type_mismatch
    return docs


def orders(rng: random.Random, n: int = 2000) -> list[dict]:
    docs = []
    for i in range(n):
        items = [{"sku": f"SKU-{rng.randint(1, 120):03d}", "qty": rng.randint(1, 4),
                  "price": round(rng.lognormvariate(3, 0.9), 2)} for _ in range(rng.randint(1, 3))]
        docs.append({
            "_id": _oid(rng), "order_id": f"ORD-{50000 + i}", "customer_id": f"CU-{rng.randint(0, 1499):05d}",
            "status": rng.choices(["delivered", "shipped", "paid", "cancelled"], [60, 20, 15, 5])[0],
            "currency": rng.choices(["USD", "EUR"], [70, 30])[0], "items": items,
            "total": round(sum(it["qty"] * it["price"] for it in items), 2),
            "created_at": START + timedelta(days=rng.uniform(0, 300)),
            "shipping": {"method": rng.choice(["ground", "air", "pickup"]), "cost": round(rng.uniform(0, 25), 2)},
        })
        docs[-1]["_id"] = _inserted_at(docs[-1]["_id"], docs[-1]["created_at"])
    for d in rng.sample(docs, 16):
        d["items"][0]["qty"] = -d["items"][0]["qty"]   # outlier_value
    for d in rng.sample(docs, 60):
        del d["shipping"]["method"]                    # null_rate
    for d in rng.sample(docs, 12):
        d["created_at"] = datetime(2035, 6, 1, tzinfo=UTC)  # outlier_value (far future)
    return docs


def main() -> None:
    rng = random.Random(20261123)
    for name, docs in (("customers", customers(rng)), ("orders", orders(rng))):
        lines = [json_util.dumps(d, json_options=json_util.RELAXED_JSON_OPTIONS) for d in docs]
        (HERE / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        print(f"wrote {HERE / f'{name}.jsonl'}: {len(docs)} documents")


if __name__ == "__main__":
    main()
