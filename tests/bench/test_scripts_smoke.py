"""The benchmark scripts run as documented (`python bench/NAME.py` from the repository root)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bson import json_util

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_sweep_prints_the_matrix_and_exits_zero_when_it_measured() -> None:
    done = _run("bench/sweep.py", "--size", "200", "--kinds", "required_null", "--rates", "0.05", "--no-control")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("kind"))
    assert header.split() == ["kind", "field", "5%", "found"]
    row = next(line for line in lines if line.startswith("required_null"))
    # 5% of 200 trips: 10 planted nulls, found and counted exactly.
    assert row.split()[1:] == ["trips.vehicle_id", "Y", "10/10", "1/1"]
    assert "cells found: 1/1" in lines
    assert any(line.startswith("false positives on clean fields: ") for line in lines)


def test_sweep_runs_its_second_set_of_domains() -> None:
    done = _run("bench/sweep.py", "--set", "second", "--size", "200", "--kinds", "impossible_range", "--rates", "0.05")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("impossible_range"))
    assert row.split()[1] == "readings.humidity_pct"
    assert "control (clean invoices, readings)" in done.stdout


def test_sweep_names_the_kinds_of_the_set_it_runs() -> None:
    done = _run("bench/sweep.py", "--kinds", "impossible_range")
    assert done.returncode == 2 and "the first set has the kinds" in done.stderr


def test_sweep_refuses_rates_it_cannot_plant() -> None:
    done = _run("bench/sweep.py", "--rates", "0.7")
    assert done.returncode == 2 and "every rate between 0 and 0.5" in done.stderr


def test_neutral_names_prints_each_kind_named_beside_neutral() -> None:
    done = _run("bench/neutral.py", "--size", "200", "--kinds", "null_flag", "--rates", "0.05")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("kind"))
    assert header.split()[:3] == ["kind", "field", "named:"] and "neutral:" in header
    row = next(line for line in lines if line.startswith("null_flag"))
    assert row.split()[1] == "sales.paid"
    assert "control (clean sales): named " in done.stdout


def test_stability_prints_a_row_per_collection(tmp_path: Path) -> None:
    docs = [{"visit_id": f"V{i:04d}", "ward": ["a", "b", "c"][i % 3], "minutes": 10 + i % 50} for i in range(150)]
    docs[7]["ward"] = None  # one defect the runs must agree on: the collection is read, not an empty stand-in
    (tmp_path / "visits.jsonl").write_text("\n".join(json_util.dumps(d) for d in docs))
    done = _run("bench/stability.py", str(tmp_path), "--runs", "2")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line.strip()}
    assert rows["collection"][:3] == ["collection", "findings", "differ"]
    assert rows["visits"][2] == "0" and "2 succeeded" in " ".join(rows["visits"])
    assert int(rows["visits"][1]) >= 1, done.stdout


def test_stability_without_a_bench_says_so_and_exits_one(tmp_path: Path) -> None:
    done = _run("bench/stability.py", str(tmp_path / "missing"))
    assert done.returncode == 1
    assert "nothing measured" in done.stderr and done.stdout == ""


def test_contracts_round_trip_finds_the_planted_defects_and_passes_the_clean_copy() -> None:
    done = _run("bench/contracts.py", "--quick")
    assert done.returncode == 0, done.stderr
    row = done.stdout.splitlines()[0].split()
    assert row[0] == "tickets" and "found 3/3" in done.stdout
    assert "0 failed" in done.stdout.split("clean copy")[1] and "audit passes 3" in done.stdout


def test_contracts_without_a_bench_says_so_and_exits_one(tmp_path: Path) -> None:
    done = _run("bench/contracts.py", str(tmp_path))
    assert done.returncode == 1 and "nothing measured" in done.stderr


def test_segments_prints_the_same_passes_with_and_without_and_the_defects_found() -> None:
    done = _run("bench/segments.py", "--quick")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.strip().startswith("6,000"))
    cells = row.split()
    assert cells[1] == cells[3] and cells[4] == cells[6]  # passes, queries: without / with
    assert row.endswith("shop-003 drop Y, shop-005 nulls 92")


def test_shapes_prints_precision_and_recall_of_each_measure() -> None:
    done = _run("bench/shapes.py", "--quick", "--cases", "payments", "readings", "contacts")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "(a) discriminator discovery: precision 1.00 recall 1.00 (tp 1, fp 0, fn 0)" in lines
    assert "(b) missing values, per shape: precision 1.00 recall 1.00 (tp 2, fp 0, fn 0)" in lines
    assert "(c) renames: precision 1.00 recall 1.00 (tp 1, fp 0, fn 0)" in lines
    assert any(line.startswith("throughput: per shape ") for line in lines)


def test_neutral_counts_the_kinds_that_once_needed_a_name_in_a_total_of_their_own() -> None:
    done = _run("bench/neutral.py", "--size", "400", "--all-kinds", "--kinds", "negative_amount", "--rates", "0.05")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    total = next(line for line in lines if line.startswith("name-free total"))
    every = next(line for line in lines if line.startswith("every kind, * included"))
    assert total.split()[2:4] == ["0/0", "0/0"]  # a sign rests on no name now, but the * total leaves it out
    # negative fares and negative amounts due (two domains), found and counted exactly, named and neutral
    assert every.split()[4:6] == ["2/2", "2/2"] and every.split()[7:9] == ["2/2", "2/2"]
