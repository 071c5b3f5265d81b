"""A bookings collection with one defect grown to a chosen share: the defects a baseline that
moves with the data would lose as they grow (issue 11)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

NOW = datetime(2026, 6, 1, tzinfo=UTC)


_FIRST = ["Ada", "Bruno", "Chen", "Dana", "Eli", "Farah", "Gus", "Hiro", "Ines", "Jon", "Kemal", "Lia", "Moses"]
_LAST = ["Adams", "Berg", "Costa", "Diaz", "Evans", "Fujita", "Gomez", "Horvat", "Iqbal", "Jensen", "Kowalski"]


def bookings(n: int = 1500, seed: int = 3) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        doc: dict[str, Any] = {
            "booking_ref": f"BK-{200000 + i}",
            "guest_email": f"guest{i}@{rng.choice(['mail.org', 'corp.net', 'inbox.io'])}",
            "phone": f"+{rng.randint(1, 49)} ({rng.randint(100, 999)}) "
                     f"{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
            "fare": round(rng.lognormvariate(5, 1.0), 2),
            "views": int(10 * rng.paretovariate(1.8)),
            "birth_date": NOW - timedelta(days=rng.uniform(18 * 365, 80 * 365)),
            "shipped_at": NOW - timedelta(days=rng.uniform(1, 500)),
            "due_date": NOW + timedelta(days=rng.uniform(-200, 400)),
            "cabin": rng.choices(["economy", "premium", "business", "first"], [70, 15, 12, 3])[0],
            "guest_name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
            "checkin_duration_min": rng.choice([5, 10, 15, 20, 30, 45]),
        }
        if rng.random() < 0.4:
            doc["notes"] = rng.choice(["window seat", "vegetarian", "late arrival"])
        docs.append(doc)
    return docs


def _negative_fare(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["fare"] = -d["fare"]


def _duplicate_ref(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["booking_ref"] = f"BK-{200000 + i // 2 * 2}"  # pairs share one reference


def _bad_email(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["guest_email"] = d["guest_email"].replace("@", " at ")


def _future_birth(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["birth_date"] = NOW + timedelta(days=rng.uniform(31, 3 * 365))


def _future_shipment(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["shipped_at"] = NOW + timedelta(days=rng.uniform(31, 3 * 365))


def _bad_phone(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["phone"] = f"{rng.randint(100, 999)}.{rng.randint(100, 999)}.{rng.randint(1000, 9999)}"


def _case_variant(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["cabin"] = d["cabin"].upper()


def _fare_as_text(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["fare"] = str(d["fare"])


def _placeholder_name(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["guest_name"] = rng.choice(["N/A", "unknown", "TBD", "none", "?", "-"])


def _cabin_typo(d: dict[str, Any], rng: random.Random, i: int) -> None:
    cabin = d["cabin"]  # two neighbours swapped, or a letter typed twice (never the same word)
    d["cabin"] = rng.choice([cabin[1] + cabin[0] + cabin[2:], cabin[:2] + cabin[3] + cabin[2] + cabin[4:],
                             cabin[:3] + cabin[2] + cabin[3:]])


def _impossible_duration(d: dict[str, Any], rng: random.Random, i: int) -> None:
    d["checkin_duration_min"] = rng.choice([-10, 0, 7 * 1440, 99_999])


# kind -> (field, category, how one document is damaged)
DEFECTS: dict[str, tuple[str, str, Callable[[dict[str, Any], random.Random, int], None]]] = {
    "negative_amount": ("fare", "outlier_value", _negative_fare),
    "duplicate_key": ("booking_ref", "duplicate_value", _duplicate_ref),
    "malformed_email": ("guest_email", "format_violation", _bad_email),
    "future_birth_date": ("birth_date", "outlier_value", _future_birth),
    "future_shipment": ("shipped_at", "outlier_value", _future_shipment),
    "malformed_phone": ("phone", "format_violation", _bad_phone),
    "case_variant": ("cabin", "enum_violation", _case_variant),
    "number_as_text": ("fare", "type_mismatch", _fare_as_text),
    "placeholder_name": ("guest_name", "empty_value", _placeholder_name),
    "cabin_typo": ("cabin", "enum_violation", _cabin_typo),
    "impossible_duration": ("checkin_duration_min", "outlier_value", _impossible_duration),
}


def damaged(kind: str, share: float, n: int = 1500, seed: int = 3) -> tuple[list[dict[str, Any]], int]:
    """The collection with ``share`` of its documents damaged, and how many documents carry the defect."""
    docs = bookings(n, seed)
    rng = random.Random(seed + 1)
    k = max(1, round(share * n))
    _, _, damage = DEFECTS[kind]
    if kind == "duplicate_key":
        k -= k % 2
        for i in range(k):  # documents 0..k-1 form pairs with one shared reference
            damage(docs[i], rng, i)
        return docs, k
    for i in sorted(rng.sample(range(n), k)):
        damage(docs[i], rng, i)
    return docs, k
