"""A live audit says what a file audit says: the same outcome, fields, categories and exact counts on
the real server (DocumentDB) as on the in-process engine behind ``argus audit --file``, for every
shared bench collection and for generated collections of our own with planted defects."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bson import Decimal128, ObjectId

from daemon.files import load_file
from tests.integration.conftest import missing, shared_bench
from tests.integration.live_audit import audit, copy_into, findings


def _documents(path: Path) -> tuple[Any, list[dict[str, Any]]]:
    engine = load_file(path)
    return engine, [d for batch in engine._store.batches() for d in batch]


def _bench_ids() -> list[str]:
    return [p.stem for p in shared_bench()] or ["(no shared bench)"]


@pytest.mark.parametrize("name", _bench_ids())
def test_live_audit_of_a_shared_bench_collection_equals_its_file_audit(name: str, live_db: Any) -> None:
    paths = {p.stem: p for p in shared_bench()}
    if name not in paths:
        missing("the shared bench is not at ../shared/bench")
    engine, documents = _documents(paths[name])
    live = live_db[name]
    copy_into(documents, live)

    on_file, on_server = audit(engine), audit(live)

    assert (on_server.outcome, findings(on_server)) == (on_file.outcome, findings(on_file))
    assert on_file.findings, "a shared bench collection holds planted defects"


def _shipments(seed: int) -> list[dict[str, Any]]:
    """3,000 shipments with defects of our own: weights stored as text, a nested carrier code missing,
    arrays of parcels with an absent weight, money as Decimal128, a mix of int/long/double."""
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    out = []
    for i in range(3000):
        doc: dict[str, Any] = {
            "_id": ObjectId(), "ref": f"SH-{i:06d}",
            "weight_kg": round(rng.uniform(0.2, 40), 2), "status": rng.choice(["booked", "in_transit", "delivered"]),
            "carrier": {"code": rng.choice(["DHL", "UPS", "DPD", "GLS"]), "service": "standard"},
            "fee": Decimal128(f"{rng.randint(300, 9000) / 100:.2f}"),
            "booked_at": start + timedelta(minutes=rng.randint(0, 400_000)),
            "parcels": [{"sku": f"P{rng.randint(1, 999):03d}", "kg": rng.randint(1, 20)}
                        for _ in range(rng.randint(1, 3))],
        }
        if i % 100 == 7:
            doc["weight_kg"] = f"{doc['weight_kg']} kg"
        if i % 60 == 11:
            del doc["carrier"]["code"]
        if i % 75 == 3:
            del doc["parcels"][0]["kg"]
        if i % 9 == 0:
            doc["weight_kg"] = int(doc["weight_kg"]) if isinstance(doc["weight_kg"], float) else doc["weight_kg"]
        out.append(doc)
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_live_audit_of_generated_shipments_equals_its_file_audit(seed: int, live_db: Any, tmp_path: Path) -> None:
    from bson import json_util

    documents = _shipments(seed)
    path = tmp_path / "shipments.jsonl"
    path.write_text("".join(json_util.dumps(d) + "\n" for d in documents))
    engine, _ = _documents(path)
    live = live_db[f"shipments_{seed}"]
    copy_into(documents, live)

    on_file, on_server = audit(engine), audit(live)

    assert (on_server.outcome, findings(on_server)) == (on_file.outcome, findings(on_file))
    found = {(f, c): n for f, c, n in findings(on_server)}
    assert found.get(("weight_kg", "type_mismatch")) == 30
    assert found.get(("carrier.code", "null_rate")) == 50
