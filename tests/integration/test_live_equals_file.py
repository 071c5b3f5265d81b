"""A live audit says what a file audit of the same documents says: outcome, exit code, and each
finding's field, category and count, on every shared bench collection and on collections of our own."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bson import json_util

from tests.integration.audits import audit, finding_keys, load_jsonl
from tests.integration.conftest import BENCH

pytestmark = pytest.mark.live

# products (3,000 documents, 673 checks) costs hundreds of passes on DocumentDB until batched passes
# are sized to the server (issue 30, item 2): minutes under load, hence slow.
BENCH_NAMES = [pytest.param(name, marks=pytest.mark.slow) if name == "products" else name
               for name in sorted(path.stem for path in BENCH.glob("*.jsonl"))] or ["(no shared bench)"]


def _assert_same(live: tuple[int, dict[str, Any]], file: tuple[int, dict[str, Any]]) -> None:
    (live_code, live_report), (file_code, file_report) = live, file
    assert live_report["outcome"] == file_report["outcome"] == "succeeded"
    assert live_code == file_code
    assert finding_keys(live_report) == finding_keys(file_report)


@pytest.mark.parametrize("name", BENCH_NAMES)
def test_live_audit_equals_file_audit_on_shared_bench(name: str, bench_dir: Path, live_db: Any, live_uri: str) -> None:
    path = bench_dir / f"{name}.jsonl"
    load_jsonl(live_db[name], path)
    # A time limit no batched pass reaches on a loaded CI machine: this compares what the two engines
    # answer. When a sized batch times out and is split, products' live audit has reported a clean
    # field (spec.attr_030, 15 outliers) that the file audit does not: an open defect of issue 30,
    # reproduced with `argus audit --uri ... --collection products --max-time-ms 1500`.
    live = audit("--uri", live_uri, "--database", live_db.name, "--collection", name, "--max-time-ms", "60000")
    _assert_same(live, audit("--file", str(path), "--max-time-ms", "60000"))


def _planted(n: int, seed: int) -> list[dict[str, Any]]:
    """Accounts of our own with defects planted at known rates (none of the shared bench's shapes)."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    documents = []
    for i in range(n):
        doc: dict[str, Any] = {
            "account": f"AC-{i:06d}",
            "email": f"user{i}@example.org",
            "balance": round(rng.uniform(0, 5000), 2),
            "opened": start + timedelta(hours=rng.randrange(0, 8000)),
            "tier": rng.choice(["bronze", "silver", "gold"]),
            "tags": rng.sample(["a", "b", "c", "d"], rng.randrange(0, 3)),
        }
        if i % 50 == 7:
            doc["email"] = f"user{i}-at-example.org"  # malformed
        if i % 40 == 3:
            doc["balance"] = str(doc["balance"])  # a number stored as text
        if i % 97 == 11:
            doc["opened"] = datetime(2199, 1, 1, tzinfo=UTC)  # in the future
        if i % 33 == 5:
            del doc["tier"]
        documents.append(doc)
    return documents


@pytest.mark.parametrize("seed", [7, 2026])
def test_live_audit_equals_file_audit_on_planted_defects(seed: int, live_db: Any, live_uri: str,
                                                         tmp_path: Path) -> None:
    documents = _planted(3000, seed)
    name = f"accounts_{seed}"
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json_util.dumps(doc) + "\n" for doc in documents))
    load_jsonl(live_db[name], path)
    live = audit("--uri", live_uri, "--database", live_db.name, "--collection", name)
    file = audit("--file", str(path))
    _assert_same(live, file)
    found = {(field, category) for field, category, _ in finding_keys(live[1])}
    assert {"email", "balance", "opened"} <= {field for field, _ in found}
