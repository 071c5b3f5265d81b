"""The suggest round trip on a shared bench collection, through the commands a user runs: the draft,
fed back with --contract, finds every planted defect of the truth file with its count, and passes on
a clean copy of the data (the collection without the documents the inferred audit's finding on each
planted defect matches: the truth names defects, not documents)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.conftest import memory_collection

BENCH = Path(__file__).resolve().parents[3].parent / "shared" / "bench"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not (BENCH / "orders.jsonl").is_file(),
                                                   reason=f"shared bench collections not found in {BENCH}")]


def _audit(runner: CliRunner, path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """The exit code and the JSON report (Extended JSON read back: dates are datetimes again)."""
    done = runner.invoke(app, ["audit", "--file", str(path), "--format", "json", "--no-store", "--privacy", "full",
                               "--time-budget", "3600", *extra])
    assert done.exit_code in (0, 1), done.output
    return done.exit_code, json_util.loads(done.stdout)


def _hits(findings: list[dict[str, Any]], defect: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in findings if f["field"] == defect["field"] and f["category"] in defect["accept"]]


def test_a_drafted_contract_finds_the_bench_orders_defects_and_passes_a_clean_copy(tmp_path: Path) -> None:
    source = BENCH / "orders.jsonl"
    truth = json_util.loads((BENCH / "orders.truth.json").read_text())
    runner = CliRunner()
    contract = tmp_path / "orders.contract.yaml"
    drafted = runner.invoke(app, ["contract", "suggest", "--file", str(source), "--out", str(contract)])
    assert drafted.exit_code == 0, drafted.output

    # the dirty data: every planted defect is a declared finding with the truth's count
    _, dirty = _audit(runner, source, "--contract", str(contract))
    declared = [f for f in dirty["findings"] if f["rule"]]
    for defect in truth["defects"]:
        counts = {f["affected_count"] for f in _hits(declared, defect)}
        assert counts & {defect["affected"], defect.get("affected_alt")}, (defect["field"], counts)
    assert dirty["database_cost"]["passes"] <= 4

    # a clean copy: without the documents the inferred audit finds for each planted defect
    _, inferred = _audit(runner, source)
    docs = [json_util.loads(line) for line in source.read_text().splitlines() if line.strip()]
    coll: Any = memory_collection([dict(d, __line=i) for i, d in enumerate(docs)], "orders", database="bench")
    drop = {d["__line"] for defect in truth["defects"] for f in _hits(inferred["findings"], defect)
            for d in coll.find(f["evidence_query"], {"__line": 1})}
    assert 0 < len(drop) < len(docs) // 10
    (tmp_path / "clean").mkdir()
    clean = tmp_path / "clean" / "orders.jsonl"
    clean.write_text("".join(json_util.dumps(d) + "\n" for i, d in enumerate(docs) if i not in drop))

    _, report = _audit(runner, clean, "--contract", str(contract))
    rules = report["contract"]["rules"]
    assert {r["result"] for r in rules} == {"passed"}, [(r["field"], r["rule"], r["count"]) for r in rules
                                                         if r["result"] != "passed"]
    assert not [f for f in report["findings"] if f["rule"]] and len(rules) >= 30
