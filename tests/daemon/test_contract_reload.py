"""A schedule's contract in the real daemon: its rules counted in metrics, an edit to the contract file
picked up without a restart, and a broken edit refused with file:line while the last good contract runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from bson import json_util

from tests.daemon.process import DaemonProcess


def _write(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)


@pytest.mark.slow
def test_a_declared_rule_is_hot_reloaded_and_a_typo_is_refused_with_file_and_line(pg_dsn: str,
                                                                                 tmp_path: Path) -> None:
    docs = [{"order_no": f"O-{i}", "status": ["paid", "shipped", "returned"][i % 3]} for i in range(300)]
    (tmp_path / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in docs))
    (tmp_path / "contracts").mkdir()
    contract = tmp_path / "contracts" / "orders.yaml"
    _write(contract, "fields:\n  order_no: {required: true, unique: true}\n"
                     "  status: {in: [paid, shipped, returned]}\n")
    schedules = tmp_path / "schedules.yaml"
    _write(schedules, yaml.safe_dump({
        "connections": {"files": {"files": {"orders": "orders.jsonl"}}},
        "defaults": {"trigger": {"every": "1s"}},
        "schedules": [{"name": "orders", "connection": "files", "database": "shop", "collection": "orders",
                       "contract": "contracts/orders.yaml"}]}))
    env = {"ARGUS_DATABASE_URL": pg_dsn, "ARGUS_DATA_DIR": str(tmp_path / "data"), "ARGUS_RELOAD_POLL_S": "0.2",
           "ARGUS_SHUTDOWN_GRACE_S": "20"}
    daemon = DaemonProcess(schedules, env, tmp_path / "daemon.log")
    try:
        daemon.wait_until("the contract's three rules passed", lambda: daemon.metric(
            "argus_contract_rules", schedule="orders", result="passed") == 3)
        assert daemon.metric("argus_contract_rules", schedule="orders", result="failed") == 0

        # the business drops 'returned': only the contract file changes, and the next audit counts it
        _write(contract, "fields:\n  order_no: {required: true, unique: true}\n  status: {in: [paid, shipped]}\n")
        daemon.wait_until("the narrowed rule to fail", lambda: daemon.metric(
            "argus_contract_rules", schedule="orders", result="failed") == 1)

        # a typo in the contract is refused with its file and line; the last good contract keeps running
        _write(contract, "fields:\n  order_no: {required: true, uniqe: true}\n  status: {in: [paid, shipped]}\n")
        daemon.wait_until("the reload error", lambda: daemon.metric("argus_schedule_reload_errors_total") == 1)
        assert daemon.status()["reload"]["error"] == [
            f"{contract}:2 fields.order_no.uniqe: unknown rule (did you mean 'unique'?)"]
        before = daemon.metric("argus_audit_runs_total", schedule="orders", outcome="succeeded")
        daemon.wait_until("the last good contract to keep running", lambda: daemon.metric(
            "argus_audit_runs_total", schedule="orders", outcome="succeeded") > before + 1)
        assert daemon.metric("argus_contract_rules", schedule="orders", result="failed") == 1
        assert daemon.metric("argus_contract_rules", schedule="orders", result="passed") == 2
    finally:
        code = daemon.stop()
    assert code == 0, daemon.tail()
