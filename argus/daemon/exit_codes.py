"""The exit codes of ``argus``: the one place that defines them, their meaning included.

``argus audit`` and ``argus run`` use all five; the other commands exit 0 on success and 2 on a usage or
configuration error (``argus schedules check`` exits 1 when the file has errors). Codes 3 and up follow
Soda's convention (3+ for runs that did not complete): they outrank 1, so a CI gate fails on an incomplete
audit whatever it found. The CLI reference (``docs/reference/exit-codes.md``) is generated from this module.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode", "audit_help"]


class ExitCode(IntEnum):
    OK = 0
    FINDINGS = 1
    ERROR = 2
    PARTIAL = 3
    FAILED = 4
    INTERRUPTED = 130

    @property
    def meaning(self) -> str:
        """What the code means, in a sentence (the exit codes reference)."""
        return _MEANINGS[self][1]

    @property
    def summary(self) -> str:
        """A few words (``argus audit --help``)."""
        return _MEANINGS[self][0]


_MEANINGS: dict[ExitCode, tuple[str, str]] = {
    ExitCode.OK: (
        "clean",
        "the audit finished, nothing at or above `--fail-on` (default `high`; `none` never fails)"),
    ExitCode.FINDINGS: (
        "a finding at or above --fail-on",
        "the audit finished with a finding at or above `--fail-on`; for `argus schedules check`: the file has "
        "errors"),
    ExitCode.ERROR: (
        "usage or configuration error",
        "a usage or configuration error (bad file, bad option, missing model settings): one line on stderr, no "
        "traceback; `argus run` also stores the run as failed"),
    ExitCode.PARTIAL: (
        "partial audit (a time, iteration or LLM budget ran out, it was interrupted, a planned check or a "
        "contract rule went unchecked, or some fields were not profiled; the report keeps what it found)",
        "partial audit: a time, iteration or LLM budget ran out, it was interrupted, a planned check went "
        "unanswered (refused by the server, timed out, or not asked within the budgets; the report's notes name "
        "them), a contract's rule was left unchecked or matched no document (a misspelled field; not for a field "
        "declared `required: false`), or some fields were not profiled (more than 2,000 field paths, or nested "
        "deeper than 20 levels); the report keeps what it found, but not everything was checked, so it never "
        "passes as clean"),
    ExitCode.FAILED: (
        "failed audit (the database became unreachable, the planner broke, or the in-process engine failed)",
        "failed audit: the database became unreachable, the planner broke, or the in-process engine raised an "
        "internal error instead of answering (a bug, never counted as a server's refusal; the report says why)"),
    ExitCode.INTERRUPTED: (
        "stopped by Ctrl-C",
        "a command in the foreground was stopped by Ctrl-C (SIGINT), as shells count 128 + 2: `argus audit` and "
        "`argus run` print no report. `argus daemon` is different: SIGINT and SIGTERM stop it "
        "cleanly, its running audits are stored as `partial` (`interrupted`), and it exits 0"),
}


def audit_help(summary: str) -> str:
    """``summary`` followed by the exit codes, for the help of the commands that audit."""
    codes = ", ".join(f"{code.value} {code.summary}" for code in ExitCode if code != ExitCode.INTERRUPTED)
    return f"{summary}\n\nExit codes: {codes}."
