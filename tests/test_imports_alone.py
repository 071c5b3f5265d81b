"""Each of these modules imports on its own, first in a fresh interpreter: the order a user's
script, a plugin or a test happens to import them in must not decide whether Argus starts.
Merging segments, custom metrics and failing documents once made ``import argus.agent.options`` fail
(options -> custom_metrics -> tools -> segments.passes -> options)."""

from __future__ import annotations

import subprocess
import sys

import pytest

FIRST_IMPORTS = ["argus.agent.options", "argus.agent.tools.models", "argus.agent.segments.passes",
                 "argus.agent.custom_metrics.models", "argus.agent.failing", "argus.agent.findings",
                 "argus.agent.health.models", "argus.agent.shapes.models", "argus.agent.report",
                 "argus.config.schedules", "argus.daemon.cli"]


@pytest.mark.parametrize("module", FIRST_IMPORTS)
def test_the_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
