"""``bench/differential.py`` exits non-zero when it compared nothing, and prints its figures when it did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "bench/differential.py", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_a_run_of_no_examples_says_nothing_was_measured() -> None:
    done = _run("--examples", "0")
    assert done.returncode == 1
    assert "nothing measured" in done.stderr


def test_a_short_run_prints_what_it_compared() -> None:
    done = _run("--examples", "3")
    assert done.returncode == 0, done.stderr
    assert "examples 3  filters compared 60  disagreements 0" in done.stdout
