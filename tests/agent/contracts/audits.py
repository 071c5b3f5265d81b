"""One audit of generated documents under a contract, as ``argus audit --file … --contract`` makes it:
the in-process engine, the heuristic planner and its gates, a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from argus.agent.clock import ManualClock
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from argus.config.contracts import load_contract
from tests.conftest import memory_collection

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def audit_under(tmp_path: Path, docs: list[dict[str, Any]], contract: str | None, *, file: str, collection: str,
                database: str, privacy: str) -> AuditReport:
    """``docs`` as ``database.collection`` audited at ``NOW``, under ``contract`` (YAML text written to
    ``tmp_path/file`` and loaded as the CLI loads it) when one is given."""
    setup = make_planner("heuristic")
    declared = None
    if contract is not None:
        (tmp_path / file).write_text(contract)
        declared = load_contract(tmp_path / file, shown_as=file)
    return run_audit(AuditTarget(memory_collection(docs, collection, database=database)), setup.planner,
                     gates=setup.gates, clock=ManualClock(NOW), contract=declared,
                     options=AuditOptions(privacy=privacy))  # type: ignore[arg-type]
