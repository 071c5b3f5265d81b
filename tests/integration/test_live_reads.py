"""What Argus reads on the real server, as a user runs it (`argus audit --uri …`): a contract whose
`references` rule looks across two live collections, a scoped audit over an indexed scope field, and
the read-only promise checked on the wire and in the server's catalog."""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pymongo
from bson import json_util
from pymongo import monitoring
from typer.testing import CliRunner

from daemon.cli import app
from tests.integration.live_audit import audit, copy_into

_READS = {"aggregate", "find", "getMore", "killCursors", "count", "distinct", "listIndexes", "listCollections",
          "collStats", "dbStats", "ping", "hello", "isMaster", "ismaster", "buildInfo", "endSessions",
          "getLastRequestStatistics", "explain"}


def _argus(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(app, ["audit", *args, "--no-store", "--format", "json"])
    body = result.stdout[result.stdout.index("{"):] if "{" in result.stdout else "{}"
    return result.exit_code, json.loads(body)


def _customers_and_orders(live_db: Any) -> None:
    rng = random.Random(3)
    customers = [{"customer_id": f"C{i:05d}", "name": f"n{i}"} for i in range(800)]
    orders = [{"order_id": f"O{i:06d}", "customer_id": f"C{rng.randrange(800):05d}", "total": rng.randint(5, 300)}
              for i in range(2500)]
    for i in range(0, 2500, 125):  # 20 orders point at customers that do not exist
        orders[i]["customer_id"] = f"X{i:05d}"
    copy_into(customers, live_db["customers"])
    copy_into(orders, live_db["orders"])


def test_a_references_rule_across_two_live_collections_counts_the_orphans(live_db: Any, live_uri: str,
                                                                         tmp_path: Path) -> None:
    _customers_and_orders(live_db)
    contract = tmp_path / "orders.yaml"
    contract.write_text("fields:\n  customer_id: {references: customers.customer_id}\n")

    code, report = _argus("--uri", live_uri, "--database", live_db.name, "--collection", "orders",
                          "--contract", str(contract))

    orphans = [f for f in report["findings"] if f["category"] == "orphan_reference"]
    assert [(f["field"], f["affected_count"]) for f in orphans] == [("customer_id", 20)]
    assert report["outcome"] == "succeeded", report.get("notes")
    assert code == 1  # an orphan reference is at least high


def test_a_scoped_audit_over_an_indexed_scope_field_reads_only_its_window(live_db: Any, live_uri: str) -> None:
    now = datetime.now(UTC)
    rng = random.Random(4)
    documents = []
    for i in range(3000):
        recent = i % 3 == 0  # 1,000 documents in the last 10 days, 2,000 older
        updated = now - timedelta(days=rng.uniform(0.1, 9.5) if recent else rng.uniform(40, 400))
        doc = {"sku": f"S{i:05d}", "updated": updated, "price": rng.randint(100, 900)}
        if recent and i % 30 == 0:  # every tenth recent document (100) without a price
            del doc["price"]
        documents.append(doc)
    live = live_db["catalog"]
    copy_into(documents, live)
    live.create_index([("updated", pymongo.ASCENDING)])

    code, report = _argus("--uri", live_uri, "--database", live_db.name, "--collection", "catalog",
                          "--since", "10d", "--scope-field", "updated")

    assert report["outcome"] == "succeeded", report.get("notes")
    nulls = {f["field"]: f["affected_count"] for f in report["findings"] if f["category"] == "null_rate"}
    assert nulls == {"price": 100}
    assert (report["window"]["documents"], report["window"]["indexed"]) == (1000, True)
    assert code == (1 if {f["severity"] for f in report["findings"]} & {"high", "critical"} else 0)


def _catalog(db: Any) -> str:
    """Everything a write would change: collections with options, indexes, and every document."""
    state = []
    for name in sorted(db.list_collection_names()):
        documents = sorted(json_util.dumps(d, sort_keys=True) for d in db[name].find({}))
        state.append([name, json_util.dumps(db[name].options(), sort_keys=True),
                      sorted(json_util.dumps(i, sort_keys=True) for i in db[name].list_indexes()),
                      hashlib.sha256("\n".join(documents).encode()).hexdigest(), len(documents)])
    return json.dumps(state)


class _Commands(monitoring.CommandListener):
    def __init__(self) -> None:
        self.names: list[str] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.names.append(event.command_name)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def test_an_audit_sends_only_reads_and_leaves_the_server_as_it_was(live_db: Any, live_uri: str) -> None:
    _customers_and_orders(live_db)
    live_db["orders"].create_index("order_id", unique=True)
    before = _catalog(live_db)
    commands = _Commands()
    client: pymongo.MongoClient[Any] = pymongo.MongoClient(live_uri, event_listeners=[commands])

    report = audit(client[live_db.name]["orders"])

    assert report.outcome == "succeeded"
    assert commands.names and set(commands.names) <= _READS, sorted(set(commands.names) - _READS)
    assert _catalog(live_db) == before
    client.close()
