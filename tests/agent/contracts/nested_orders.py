"""Generated orders with nested data (arrays of objects, arrays of strings, objects, a field written
as text in old documents and as an object in new ones), and a contract on every level of them.

``orders(planted=True)`` breaks each rule in a known number of documents, each defect in documents
of its own, so every rule's count is exact; ``orders(planted=False)`` is the clean copy."""

from __future__ import annotations

import random
from typing import Any

__all__ = ["CONTRACT", "ELEMENTS", "PLANTED", "SECRET", "orders"]

CONTRACT = """\
fields:
  order_id: {required: true}
  items:
    type: array
    min_items: 1
    max_items: 5
    items:
      required_fields: [sku, qty]
      fields:
        sku: {pattern: '^SKU-[0-9]+$'}
        qty: {type: int, min: 1}
        dims: {fields: {w: {required: true}}}
  tags: {unique_items: true, items: {type: string, max_length: 8}}
  shipping:
    type: object
    required_fields: [city]
    additional_fields: false
    fields: {street: {type: string}, city: {type: string}, zip: {pattern: '^[0-9]{5}$'}}
  address:
    one_of:
      - {type: string, max_length: 30}
      - {type: object, required_fields: [city, street], fields: {city: {in: [Paris, Lyon, Nantes]}}}
"""

# (shown field, rule) -> documents breaking it, as planted below
PLANTED: dict[tuple[str, str], int] = {
    ("items", "min_items"): 6,             # items: []
    ("items", "max_items"): 4,             # seven lines
    ("items[]", "required_fields"): 5,     # a line without sku
    ("items.sku", "pattern"): 7,
    ("items.qty", "min"): 9,               # qty 0 in one line, or in two (ELEMENTS)
    ("items.dims.w", "required"): 3,
    ("tags", "unique_items"): 8,
    ("tags[]", "max_length"): 5,
    ("tags[]", "type"): 4,                 # a number among the tags
    ("shipping", "required_fields"): 6,
    ("shipping", "additional_fields"): 7,  # a key 'notes' the contract does not declare
    ("shipping.zip", "pattern"): 3,
    ("address", "type"): 2,                # neither text nor an object
    ("address", "max_length"): 3,          # text over 30 characters
    ("address", "required_fields"): 4,     # an object without city
    ("address.city", "in"): 5,
}
ELEMENTS = 12          # lines with qty 0 among the 9 orders: 3 orders have two
SECRET = "leave at the back door, code 4471"   # the value of the undeclared key: never in any output


def orders(n: int = 1200, *, planted: bool = True, seed: int = 11) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    pool = ["gift", "promo", "fragile", "bulk", "eco", "express"]
    docs = []
    for i in range(n):
        items = [{"sku": f"SKU-{rng.randrange(10_000)}", "qty": rng.randrange(1, 6),
                  "dims": {"w": round(rng.uniform(1, 50), 1), "h": round(rng.uniform(1, 50), 1)}}
                 for _ in range(rng.randrange(1, 5))]
        city = ["Paris", "Lyon", "Nantes"][i % 3]
        docs.append({"order_id": f"O-{i}", "items": items, "tags": rng.sample(pool, rng.randrange(0, 4)),
                     "shipping": {"street": f"{i} rue Haute", "city": city, "zip": f"{rng.randrange(10**5):05d}"},
                     "address": f"{i} rue Basse, {city}" if i % 3 == 0 else {"street": f"{i} rue Basse",
                                                                              "city": city}})
    if planted:
        _plant(docs, rng)
    return docs


def _plant(docs: list[dict[str, Any]], rng: random.Random) -> None:
    rest = iter(docs[50:])

    def take(count: int, condition: Any = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while len(out) < count:
            doc = next(rest)
            if condition is None or condition(doc):
                out.append(doc)
        return out

    def line() -> dict[str, Any]:
        return {"sku": "SKU-1", "qty": 2, "dims": {"w": 1.0, "h": 1.0}}

    for doc in take(6):
        doc["items"] = []
    for doc in take(4):
        doc["items"] = [line() for _ in range(7)]
    for doc in take(5):
        del doc["items"][0]["sku"]
    for doc in take(7):
        doc["items"][-1]["sku"] = "sku-77"
    twice = 0
    for doc in take(9, lambda d: len(d["items"]) >= 2):
        doc["items"][0]["qty"] = 0
        if twice < ELEMENTS - 9:
            doc["items"][1]["qty"] = 0
            twice += 1
    for doc in take(3):
        del doc["items"][0]["dims"]["w"]
    for doc in take(8, lambda d: len(d["tags"]) >= 1):
        doc["tags"].append(doc["tags"][0])
    for doc in take(5):
        doc["tags"] = [*doc["tags"], "seasonal-clearance"]
    for doc in take(4):
        doc["tags"] = [*doc["tags"], 42]
    for doc in take(6):
        del doc["shipping"]["city"]
    for doc in take(7):
        doc["shipping"]["notes"] = SECRET
    for doc in take(3):
        doc["shipping"]["zip"] = "F-75001"
    for doc in take(2):
        doc["address"] = rng.randrange(10**5)
    for doc in take(3, lambda d: isinstance(d["address"], str)):
        doc["address"] = doc["address"] + ", second floor, door on the left"
    for doc in take(4, lambda d: isinstance(d["address"], dict)):
        del doc["address"]["city"]
    for doc in take(5, lambda d: isinstance(d["address"], dict)):
        doc["address"]["city"] = "Berlin"
