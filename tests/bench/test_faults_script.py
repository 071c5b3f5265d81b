"""bench/faults.py says when a fault measured nothing and exits non-zero, never 'ok'.

A fault measures nothing when its daemon cannot get where the fault needs it (it exited, or a wait
ran out) or when no run was triggered at all: such a fault is NOT MEASURED, and a run of the script
that measured no fault exits 2.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "bench/faults.py", *args], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=300)


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_faults", ROOT / "bench" / "faults.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_fault_whose_daemon_cannot_start_is_not_measured_and_the_script_exits_two(tmp_path: Path) -> None:
    done = _run("--quick", ARGUS_SHUTDOWN_GRACE_S="soon", ARGUS_DATA_DIR=str(tmp_path), HOME=str(tmp_path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "llm-filter-nested-200" in done.stdout and "NOT MEASURED: daemon exited (2)" in done.stdout
    assert "shutdown_grace_s" in done.stdout.lower()  # the line says why: the daemon's own error
    assert " ok" not in done.stdout
    assert "measured nothing" in done.stderr


def test_a_fault_that_triggered_no_run_is_not_measured_not_ok() -> None:
    faults = _script()
    nothing = faults.Measured(triggered=0, stored=0, lost=0, queued=0, delivered=0, doubled=0, longest_s=0.0,
                              budget_s=0.0)
    assert not nothing.ok()
    assert nothing.line("sigterm-mid-audit").endswith("NOT MEASURED: no run triggered")
    one = faults.Measured(triggered=1, stored=1, lost=0, queued=0, delivered=0, doubled=0, longest_s=1.0,
                          budget_s=30.0)
    assert one.ok() and one.line("sigterm-mid-audit").endswith("ok")


def test_an_unknown_fault_name_is_refused_with_the_names_there_are() -> None:
    done = _run("--only", "sigkil-mid-audit")
    assert done.returncode == 2
    assert "no fault named sigkil-mid-audit" in done.stderr and "sigkill-mid-audit" in done.stderr
