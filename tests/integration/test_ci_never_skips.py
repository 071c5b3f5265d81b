"""A live test meets no server: skipped on a developer's machine, a failure naming what is missing
with CI=true, so CI never passes by skipping what it was meant to test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemon.process import free_port

REPO = Path(__file__).resolve().parents[2]
TEST = "tests/integration/test_live_reads.py::test_nothing_argus_sends_writes"


def _run(tmp_path: Path, ci: str) -> subprocess.CompletedProcess[str]:
    dead = f"mongodb://127.0.0.1:{free_port()}"  # nothing listens there
    env = {**os.environ, "ARGUS_TEST_MONGODB_URI": dead, "CI": ci}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "--basetemp", str(tmp_path / ci), TEST], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=180, check=False)


@pytest.mark.parametrize(("ci", "code", "words"), [("", 0, "1 skipped"), ("true", 1, "CI=true but the server at")])
def test_a_missing_server_skips_locally_and_fails_in_ci(tmp_path: Path, ci: str, code: int, words: str) -> None:
    done = _run(tmp_path, ci)
    assert done.returncode == code, done.stdout[-2000:]
    assert words in done.stdout
