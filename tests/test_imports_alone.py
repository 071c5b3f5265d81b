"""Each of these modules imports on its own, first in a fresh interpreter: the order a user's
script, a plugin or a test happens to import them in must not decide whether Argus starts.
Merging segments, custom metrics and failing documents once made ``import agent.options`` fail
(options -> custom_metrics -> tools -> segments.passes -> options)."""

from __future__ import annotations

import subprocess
import sys

import pytest

FIRST_IMPORTS = ["agent.options", "agent.tools.models", "agent.segments.passes", "agent.custom_metrics.models",
                 "agent.failing", "agent.findings", "agent.health.models", "agent.shapes.models", "agent.report",
                 "config.schedules", "daemon.cli"]


@pytest.mark.parametrize("module", FIRST_IMPORTS)
def test_the_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
