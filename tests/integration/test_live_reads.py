"""What only a real server shows: a contract looking values up in a second live collection, a scoped
audit reading through an index created on the server, and that nothing Argus sends writes."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bson import json_util
from pymongo import monitoring
from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.integration.audits import audit, finding_keys, load_jsonl

pytestmark = pytest.mark.live

READS = {"find", "aggregate", "getMore", "killCursors", "count", "distinct", "listIndexes", "listCollections",
         "collStats", "dbStats", "hello", "isMaster", "ismaster", "ping", "buildInfo", "buildinfo", "endSessions",
         "getLastRequestStatistics"}  # Cosmos DB's request charge of the last read: reads server state only


def _orders_and_customers(tmp_path: Path, live_db: Any) -> tuple[Path, Path]:
    customers = [{"customer_id": f"C{i:04d}", "name": f"n{i}"} for i in range(300)]
    orders = [{"order_id": f"O{i:05d}", "customer_id": f"C{i % 330:04d}", "qty": 1 + i % 5} for i in range(1200)]
    paths = []
    for name, documents in (("orders", orders), ("customers", customers)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json_util.dumps(doc) + "\n" for doc in documents))
        load_jsonl(live_db[name], path)
        paths.append(path)
    return paths[0], paths[1]


def test_contract_references_a_second_live_collection(tmp_path: Path, live_db: Any, live_uri: str) -> None:
    orders, customers = _orders_and_customers(tmp_path, live_db)
    contract = tmp_path / "orders.yaml"
    contract.write_text("collection: orders\nfields:\n  customer_id: {references: customers.customer_id}\n")
    code, live = audit("--uri", live_uri, "--database", live_db.name, "--collection", "orders",
                       "--contract", str(contract))
    file_code, file = audit("--file", str(orders), "--file", str(customers), "--contract", str(contract))
    orphans = sum(1 for i in range(1200) if i % 330 >= 300)
    assert ("customer_id", "orphan_reference", orphans) in finding_keys(live)
    assert (code, live["outcome"], finding_keys(live)) == (file_code, file["outcome"], finding_keys(file))


def test_scoped_audit_reads_the_window_through_an_index(live_db: Any, live_uri: str) -> None:
    now = datetime.now(UTC)
    events = []
    for i in range(2000):
        recent = i % 4 == 0  # 500 in the last day, 1500 weeks old
        events.append({"received_at": now - (timedelta(hours=i % 20) if recent else timedelta(days=10 + i % 30)),
                       "amount": -5.0 if i % 10 == 0 else 10.0 + i % 90, "kind": "a" if i % 2 else "b"})
    live_db.events.insert_many(events)
    live_db.events.create_index("received_at")  # createIndexes through the gateway
    assert any(ix["key"] == {"received_at": 1} for ix in live_db.events.list_indexes())

    _, report = audit("--uri", live_uri, "--database", live_db.name, "--collection", "events",
                      "--since", "24h", "--scope-field", "received_at")
    assert report["outcome"] == "succeeded"
    assert report["window"]["field"] == "received_at"
    assert report["window"]["documents"] == 500
    assert report["window"]["indexed"] is True
    amounts = [f for f in report["findings"] if f["field"] == "amount"]
    assert [f["affected_count"] for f in amounts] == [100]  # i % 20 == 0: the window's negatives, not all 200


class _Commands(monitoring.CommandListener):
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        with self._lock:
            self.sent.append((event.database_name, event.command_name))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def _catalog_and_documents(live_db: Any) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for info in sorted(live_db.list_collections(), key=lambda c: c["name"]):
        name = info["name"]
        state[name] = {
            "options": info.get("options"),
            "indexes": sorted(json_util.dumps(ix) for ix in live_db[name].list_indexes()),
            "count": live_db[name].count_documents({}),
            "documents": [json_util.dumps(d) for d in live_db[name].find({}).sort("_id", 1)],
        }
    state["databases"] = sorted(live_db.client.list_database_names())
    return state


def test_nothing_argus_sends_writes(tmp_path: Path, live_db: Any, live_uri: str) -> None:
    _orders_and_customers(tmp_path, live_db)
    contract = tmp_path / "orders.yaml"
    contract.write_text("fields:\n  customer_id: {references: customers.customer_id}\n  order_id: {unique: true}\n")
    before = _catalog_and_documents(live_db)
    listener = _Commands()
    monitoring.register(listener)  # every client created from here on, the audit's among them
    result = CliRunner().invoke(app, ["audit", "--uri", live_uri, "--database", live_db.name, "--collection",
                                      "orders", "--contract", str(contract), "--format", "json", "--no-store"])
    assert result.exit_code == 1, result.output  # the orphans are a high finding
    sent = {name for database, name in listener.sent if database in {live_db.name, "admin"}}
    assert {"aggregate", "find"} <= sent
    assert sent <= READS, f"Argus sent commands that are not reads: {sorted(sent - READS)}"
    assert _catalog_and_documents(live_db) == before
