"""A bench script whose audits measured nothing says so and exits non-zero, never 'met' or 'identical'.

Each audit is made to measure nothing the way a user can: a time budget too short for any read
(the audit ends partial, its checks unanswered), or a process stopped at its time limit.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=240)


def test_passes_judges_no_target_on_an_audit_its_budget_cut_short() -> None:
    done = _run("bench/passes.py", "--quick", "--only", "long", "--time-budget", "0.001")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "(target <= 4: not judged)" in done.stdout and "target <= 4: met" not in done.stdout
    assert "measured nothing on long" in done.stderr


def test_parity_compares_nothing_when_an_engines_audit_ends_partial() -> None:
    done = _run("bench/parity.py", "--quick", "--time-budget", "0.001")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "identical: yes" not in done.stdout
    assert "nothing compared: the audit ended partial on the engine" in done.stdout


def test_contracts_exits_one_when_its_audits_end_partial() -> None:
    done = _run("bench/contracts.py", "--quick", "--time-budget", "0.001")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "NOT MEASURED: the dirty collection's audit ended partial" in done.stdout
    assert "nothing measured on tickets" in done.stderr


def test_filespeed_exits_one_when_the_audit_is_stopped_at_its_timeout() -> None:
    done = _run("bench/filespeed.py", "--quick", "--only", "events", "--pairs", "1", "--timeout", "0")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "A stopped after 0 s (--timeout)" in done.stdout
    assert "1 file(s) with a failed audit or nothing to compare" in done.stderr


def test_prompts_audits_end_within_their_time_budget_and_a_cut_short_one_is_not_measured() -> None:
    """prompts.py once audited mongomock, whose reads no deadline stops (a 100,000-document read ran
    minutes): the audit's own time budget must bound each audit, and one cut short measured nothing."""
    done = _run("bench/prompts.py", "--quick", "--time-budget", "0.001")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "partial" in done.stdout and "succeeded" not in done.stdout
    assert "targets met: NO" in done.stdout
