"""With ``CI=true`` a skip is a failure: a test that skips in CI for a missing tool, binary, library or
the shared bench is a test that does not exist, so the report names what is missing and fails.

``.ci/run`` installs what the tests need (``.ci/install-tools``: Debian's prometheus,
prometheus-alertmanager, tini and libpcre2-8-0; the docs and test extras) and finds the shared bench
at ``../shared/bench`` beside the clone. A skip that says why it cannot happen in a whole CI run
(``not_missing(...)``: a check of a generated test that ``-k`` deselected) stays a skip.

The hook is imported by ``tests/conftest.py``; ``-p tests.ci_skips`` loads it into any pytest run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

NOT_MISSING = "nothing is missing: "


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def not_missing(reason: str) -> str:
    """A skip reason that CI keeps as a skip: it names no missing tool, only a run that left part out."""
    return NOT_MISSING + reason


def _reason(report: pytest.TestReport) -> str:
    longrepr: Any = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return str(reason).removeprefix("Skipped: ")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not (in_ci() and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = _reason(report)
    if reason.startswith(NOT_MISSING):
        return
    report.outcome = "failed"
    report.longrepr = (f"CI=true but this test would skip: {reason}. CI runs every test: .ci/run installs "
                       "the Debian packages (.ci/install-tools) and the extras, and the shared bench is at "
                       "../shared/bench beside the clone")
