"""A defect that grows from run to run stays reported, as regressed, with the store on.

The same collection is audited three times through ``argus audit --file`` against a real
PostgreSQL while one defect grows from 1% to 5% to 20% of the documents.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app
from argus.daemon.store import CollectionRef, PostgresStore

runner = CliRunner()
SIZE = 1000
RATES = (0.01, 0.05, 0.20)


def _refills(rate: float, corrupt: str = "") -> list[dict[str, Any]]:
    """A pharmacy's refills; ``rate`` of them carry the ``corrupt`` defect (the same documents
    first, so a larger rate contains the smaller one, as a defect spreading through the data does)."""
    rng = random.Random(5)
    docs = [{"refill_id": f"RF-{i:06d}", "quantity": rng.choice([10, 14, 28, 30, 56, 90]),
             "amount": round(math.exp(rng.gauss(math.log(30.0), 0.8)), 2),
             "pharmacy": rng.choice(["north", "south", "harbour", "station"])} for i in range(SIZE)]
    for doc in docs[:round(rate * SIZE)]:
        if corrupt == "quantity_as_text":
            doc["quantity"] = str(doc["quantity"])
        else:
            doc["amount"] = -doc["amount"]
    return docs


def _audit(dsn: str, file: Path, docs: list[dict[str, Any]]) -> dict[str, Any]:
    file.write_text("\n".join(json_util.dumps(d) for d in docs))
    result = runner.invoke(app, ["audit", "--file", str(file), "--format", "json", "--fail-on", "none"],
                           env={"ARGUS_DATABASE_URL": dsn})
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _grow(dsn: str, folder: Path, corrupt: str, field: str) -> list[tuple[str, int] | None]:
    """(diff status, affected count) of ``field``'s pattern in each of the three runs."""
    seen: list[tuple[str, int] | None] = []
    for rate in RATES:
        report = _audit(dsn, folder / "refills.jsonl", _refills(rate, corrupt))
        entry = next((e for e in report["diff"]["entries"] if e["field"] == field), None)
        seen.append((entry["status"], entry["affected_count"]) if entry else None)
    return seen


def test_a_type_mismatch_growing_from_1_to_20_percent_is_new_then_regressed(pg_dsn: str, tmp_path: Path) -> None:
    assert _grow(pg_dsn, tmp_path, "quantity_as_text", "quantity") == [
        ("new", 10), ("regressed", 50), ("regressed", 200)]


def test_negative_amounts_growing_from_1_to_20_percent_are_new_then_regressed(pg_dsn: str, tmp_path: Path) -> None:
    assert _grow(pg_dsn, tmp_path, "negative_amount", "amount") == [
        ("new", 10), ("regressed", 50), ("regressed", 200)]


def test_the_next_run_knows_what_a_flagged_field_looked_like_when_healthy(pg_dsn: str, tmp_path: Path) -> None:
    _audit(pg_dsn, tmp_path / "refills.jsonl", _refills(0.0))
    _audit(pg_dsn, tmp_path / "refills.jsonl", _refills(0.05, "quantity_as_text"))
    with PostgresStore(pg_dsn, pool_size=1) as store:
        healthy = store.history(CollectionRef("file", "files", "refills")).healthy
    assert (healthy["quantity"].types, healthy["quantity"].null_share) == ({"int": 1.0}, 0.0)
    shown = runner.invoke(app, ["history", "refills"], env={"ARGUS_DATABASE_URL": pg_dsn})
    assert shown.exit_code == 0, shown.output
    line = next(x for x in shown.stdout.splitlines() if x.startswith("- quantity: "))
    assert line.startswith("- quantity: int 100%, null 0.0%, p05..p95 "), line
