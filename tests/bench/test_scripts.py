"""Every bench script runs from the repository root as docs/benchmarks.md says, on a tiny input.

Each ``bench/*.py`` must accept ``--quick`` (a smoke run on generated data that finishes in
seconds and needs nothing outside the repository) and exit 0 with its figures. A script that
measured nothing must say so and exit non-zero. New scripts are picked up by the glob.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import missing

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(ROOT.glob("bench/*.py"))
PACKAGES = {p.parent.name for p in ROOT.glob("*/__init__.py")}


def _run(script: Path, *args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARGUS_DATA_DIR": str(tmp / "data"), "HOME": str(tmp)}
    return subprocess.run([sys.executable, str(script.relative_to(ROOT)), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)


def test_no_bench_script_shadows_a_package() -> None:
    """``python bench/X.py`` puts bench/ first on sys.path: a script named like a package hides it."""
    assert {s.stem for s in SCRIPTS} & PACKAGES == set()


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.name)
def test_bench_script_runs_quick_from_the_repository_root(script: Path, tmp_path: Path) -> None:
    if "ARGUS_TEST_MONGODB_URI" in script.read_text() and not os.environ.get("ARGUS_TEST_MONGODB_URI"):
        missing(f"{script.name} measures a live server and ARGUS_TEST_MONGODB_URI is not set")
    result = _run(script, "--quick", tmp=tmp_path)
    assert result.returncode == 0, f"{script.name} --quick exited {result.returncode}:\n{result.stderr[-3000:]}"
    assert result.stdout.strip(), f"{script.name} --quick printed no figures"
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", ["detect.py", "prompts.py"])
def test_benchmark_without_its_data_says_nothing_was_measured(name: str, tmp_path: Path) -> None:
    result = _run(ROOT / "bench" / name, str(tmp_path / "missing"), tmp=tmp_path)
    assert result.returncode != 0
    assert "targets met: yes" not in result.stdout
    assert "nothing measured" in result.stderr
    assert "see docs/benchmarks.md" in result.stderr and (ROOT / "docs" / "benchmarks.md").is_file()
