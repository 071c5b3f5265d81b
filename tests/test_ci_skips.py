"""With CI=true a test that would skip for something missing fails, naming it; without CI it skips.
Run as a user would meet it: a real test (promtool's check of the rules) in a pytest whose PATH has no
promtool, and a skip that names nothing missing, which CI keeps."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROMTOOL_TEST = "tests/deploy/test_prometheus_rules.py::test_promtool_accepts_the_rules"


def _pytest(tmp_path: Path, ci: str, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CI": ci}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "--basetemp", str(tmp_path / f"bt-{ci or 'local'}"), *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


@pytest.mark.parametrize(("ci", "code", "words"), [
    ("", 0, "1 skipped"),
    ("true", 1, "CI=true but this test would skip: promtool is not installed"),
])
def test_a_missing_binary_skips_locally_and_fails_in_ci(tmp_path: Path, ci: str, code: int, words: str) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _pytest(tmp_path, ci, PROMTOOL_TEST, path=str(empty))
    assert done.returncode == code, done.stdout[-2000:]
    assert words in done.stdout


def test_a_skip_that_names_nothing_missing_stays_a_skip_in_ci(tmp_path: Path) -> None:
    test = tmp_path / "test_partial.py"
    test.write_text("import pytest\nfrom tests.ci_skips import not_missing\n\n"
                    "def test_check():\n    pytest.skip(not_missing('the generated test was deselected'))\n\n"
                    "def test_tool():\n    pytest.skip('frobtool is not installed')\n")
    done = _pytest(tmp_path, "true", "-p", "tests.ci_skips", "--rootdir", str(tmp_path), str(test))
    assert done.returncode == 1, done.stdout[-2000:]
    assert "1 failed, 1 skipped" in done.stdout
    assert "CI=true but this test would skip: frobtool is not installed" in done.stdout
