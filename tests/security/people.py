"""Generated collections of personal data for the secrets and value scans: names, SSNs, phones,
emails, card numbers, with a small status vocabulary, a typo in it, and duplicated keys."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

__all__ = ["PERSONAL", "VOCABULARY", "people", "write_people"]

PERSONAL = ("name", "ssn", "phone", "email", "card")
VOCABULARY = ("bronze", "silver", "platinum")  # words Argus never writes itself
_FIRST = ("Amelia", "Bartholomew", "Cordelia", "Desmond", "Evangeline", "Fitzgerald", "Gwendolyn", "Horatio")
_LAST = ("Abernathy", "Blackwood", "Castellano", "Delacroix", "Ellsworth", "Fairweather", "Gallagher")


def people(n: int, *, seed: int = 7) -> list[dict[str, Any]]:
    r = random.Random(seed)
    docs = []
    for i in range(n):
        first, last = r.choice(_FIRST), r.choice(_LAST)
        docs.append({
            "_id": i + 1,
            "name": f"{first} {last}-{i:04d}",
            "ssn": f"{r.randint(100, 899)}-{r.randint(10, 99)}-{r.randint(1000, 9999)}",
            "phone": f"+1-{r.randint(200, 999)}-{r.randint(200, 999)}-{r.randint(1000, 9999)}",
            "email": f"{first.lower()}.{last.lower()}{i}@example-mail.org" if i % 11 else f"{first} at home",
            "card": str(4111111111110000 + r.randint(0, 9999)) if i % 9 else "4111-1111-1111-1111",
            "status": r.choice(VOCABULARY) if i % 17 else "silvr",
            "age": r.randint(18, 90) if i % 13 else -5,
        })
    for a, b in ((2, 3), (4, 5), (6, 7)):  # duplicated keys: a duplicate_value finding needs their values
        if b < n:
            docs[b]["ssn"], docs[b]["card"] = docs[a]["ssn"], docs[a]["card"]
    return docs


def write_people(path: Path, n: int, *, seed: int = 7) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in people(n, seed=seed)))
    return path
