"""Nested contract rules on a real server: each rule's filter ($elemMatch on elements, an index
position for array lengths, $expr with $setUnion and $objectToArray) counts on DocumentDB what it
counts on the in-process engine, and an audit of the live collection reports the file audit's counts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bson
import pytest
from bson import json_util

from argus.agent.contracts.compile import rule_filters
from argus.config.contracts import load_contract
from tests.agent.contracts.nested_orders import CONTRACT, PLANTED, orders
from tests.conftest import memory_collection
from tests.integration.audits import audit, load_jsonl

pytestmark = pytest.mark.live


def test_each_nested_rule_counts_on_the_server_what_it_counts_in_process(tmp_path: Path, live_db: Any,
                                                                         live_uri: str) -> None:
    docs = [bson.decode(bson.encode(d)) for d in orders()]
    path = tmp_path / "orders.jsonl"
    path.write_text("".join(json_util.dumps(d) + "\n" for d in docs))
    load_jsonl(live_db["orders"], path)
    (tmp_path / "nested.yaml").write_text(CONTRACT)
    contract = load_contract(tmp_path / "nested.yaml")
    memory = memory_collection(docs, "orders")
    now = datetime(2026, 3, 1, tzinfo=UTC)
    for rule in contract.checks:
        (query,) = rule_filters(rule, now)
        expected = PLANTED.get((rule.shown_field, rule.kind), 0)
        assert live_db["orders"].count_documents(query) == memory.count_documents(query) == expected, rule.id

    code, live = audit("--uri", live_uri, "--database", live_db.name, "--collection", "orders",
                       "--contract", str(tmp_path / "nested.yaml"))
    file_code, file = audit("--file", str(path), "--contract", str(tmp_path / "nested.yaml"))

    def results(report: dict[str, Any]) -> list[tuple[str, str, int | None]]:
        return [(r["id"].split(" ", 1)[1], r["result"], r["count"]) for r in report["contract"]["rules"]]

    assert (code, results(live)) == (file_code, results(file))
    assert sum(1 for r in live["contract"]["rules"] if r["result"] == "failed") == len(PLANTED)
