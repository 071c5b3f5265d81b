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
_TIMEOUTS = ("QueryTimeout", "NetworkTimeout")

# products (3,000 documents, 830 checks) costs a minute or more of DocumentDB's time under load: slow.
BENCH_NAMES = [pytest.param(name, marks=[pytest.mark.slow]) if name == "products" else name
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
    # The default time limit: on a loaded machine products' batches run past it and are split, and the
    # answers must not change (a statistic that timed out once made a clean field an outlier).
    live = audit("--uri", live_uri, "--database", live_db.name, "--collection", name, timeout=600)
    _assert_same(live, audit("--file", str(path)))
    # At most 4 passes on the real engine, as on the in-process one (products took 7 before its checks
    # were answered from a field profile); a pass the server let time out under load is not counted.
    cost = live[1]["database_cost"]
    timed_out = sum(1 for o in cost["operations"] if o["full_pass"] and o["error"] in _TIMEOUTS)
    assert cost["passes"] - timed_out <= 4, cost["operations"]


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
