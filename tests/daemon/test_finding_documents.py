"""``argus finding show ID --documents``: the documents that break a finding, read in its evidence
pass at audit time, stored with the run as the privacy mode allows, bounded, and pruned with it."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from bson import ObjectId, json_util
from prometheus_client import CollectorRegistry
from typer.testing import CliRunner

from argus.agent.failing import bounded
from argus.agent.findings import Category, FailingDocument, FailingDocuments, Finding, Severity
from argus.daemon.cli import app
from argus.daemon.findings_view import stored_finding
from argus.daemon.http import HttpServer
from argus.daemon.store import NotFound, PostgresStore

runner = CliRunner()
STATUS, QTY = "PLANTEDSTATUS", "PLANTEDQTY"  # values no output of strict mode may hold


def _orders(tmp_path: Path, *, bad_status: int = 3, bad_qty: int = 8) -> tuple[Path, Path, list[str], list[str]]:
    """400 orders; ``bad_status`` break the contract's ``in`` list, ``bad_qty`` hold text among numbers."""
    docs: list[dict[str, Any]] = [{"_id": ObjectId(), "order_no": f"SO-{i:05d}", "status": ("paid", "new")[i % 2],
                                   "qty": 1 + i % 7} for i in range(400)]
    for d in docs[10:10 + bad_status]:
        d["status"] = STATUS
    for d in docs[100:100 + bad_qty]:
        d["qty"] = QTY
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in docs))
    contract = tmp_path / "contract.yaml"
    contract.write_text("fields:\n  status:\n    in: [paid, new]\n")
    return (path, contract, [str(d["_id"]) for d in docs[10:10 + bad_status]],
            [str(d["_id"]) for d in docs[100:100 + bad_qty]])


def _audit(path: Path, contract: Path, privacy: str, *, store: bool = True) -> tuple[str, dict[str, Any]]:
    result = runner.invoke(app, ["audit", "--file", str(path), "--contract", str(contract), "--privacy", privacy,
                                 "--store" if store else "--no-store", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    return result.output, report


def _finding(report: dict[str, Any], field: str) -> str:
    return next(f["id"] for f in report["findings"] if f["field"] == field)


@pytest.fixture
def stored(monkeypatch: pytest.MonkeyPatch, pg_dsn: str) -> str:
    monkeypatch.setenv("ARGUS_DATABASE_URL", pg_dsn)
    return pg_dsn


def test_documents_lists_the_failing_ids_and_values_of_a_declared_and_an_inferred_finding(
        tmp_path: Path, stored: str) -> None:
    path, contract, bad_status, bad_qty = _orders(tmp_path)
    _, report = _audit(path, contract, "full")
    declared = runner.invoke(app, ["finding", "show", _finding(report, "status")[:8], "--documents"])
    assert declared.exit_code == 0, declared.output
    assert "3 of 3 failing documents (status enum_violation)" in declared.stdout
    assert all(f'"$oid": "{i}"' in declared.stdout for i in bad_status)
    assert declared.stdout.count(f'status: "{STATUS}"') == 3
    inferred = runner.invoke(app, ["finding", "show", _finding(report, "qty")[:8], "--documents"])
    assert inferred.exit_code == 0, inferred.output
    assert "8 of 8 failing documents (qty type_mismatch)" in inferred.stdout
    assert all(f'"$oid": "{i}"' in inferred.stdout for i in bad_qty)
    assert inferred.stdout.count(f'qty: "{QTY}"') == 8


def _everything_stored(dsn: str) -> str:
    """Every row of every table of the history database, as text."""
    with psycopg.connect(dsn) as conn:
        tables = [r[0] for r in conn.execute("select tablename from pg_tables where schemaname = 'public'")]
        return "\n".join(str(row) for t in tables for row in conn.execute(f'select * from "{t}"'))


def test_strict_keeps_no_id_and_no_value_in_any_output_or_in_the_store(tmp_path: Path, stored: str) -> None:
    path, contract, bad_status, bad_qty = _orders(tmp_path)
    outputs, report = _audit(path, contract, "strict")
    outputs += runner.invoke(app, ["audit", "--file", str(path), "--contract", str(contract), "--privacy", "strict",
                                   "--store"]).output
    outputs += runner.invoke(app, ["show", report["run_id"][:8]]).output
    outputs += runner.invoke(app, ["show", report["run_id"][:8], "--format", "json"]).output
    for field in ("status", "qty"):
        fid = _finding(report, field)[:8]
        for flags in ([], ["--documents"], ["--evidence"], ["--documents", "--evidence", "--format", "json"]):
            shown = runner.invoke(app, ["finding", "show", fid, *flags])
            assert shown.exit_code == 0, shown.output
            outputs += shown.output
    assert "withheld: strict privacy: no _id or value of a document is written (3 read)" in outputs
    everything = outputs + _everything_stored(stored)
    planted = [STATUS, QTY, *bad_status, *bad_qty]
    assert [p for p in planted if p in everything] == []


def test_shapes_keeps_object_ids_and_shows_values_by_their_shape(tmp_path: Path, stored: str) -> None:
    path, contract, _, bad_qty = _orders(tmp_path)
    _, report = _audit(path, contract, "shapes")
    shown = runner.invoke(app, ["finding", "show", _finding(report, "qty")[:8], "--documents"])
    assert all(f'"$oid": "{i}"' in shown.stdout for i in bad_qty)
    assert QTY not in shown.stdout and shown.stdout.count('qty: "shape:A+"') == 8


def test_a_finding_keeps_at_most_the_configured_number_of_documents(tmp_path: Path, stored: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path, contract, _, _ = _orders(tmp_path, bad_qty=45)
    _, report = _audit(path, contract, "full")
    qty = next(f for f in report["findings"] if f["field"] == "qty")
    assert qty["affected_count"] == 45 and len(qty["failing"]["documents"]) == 20  # the default
    monkeypatch.setenv("ARGUS_FAILING_DOCUMENTS", "5")
    _, report = _audit(path, contract, "full")
    assert {f["field"]: len(f["failing"]["documents"]) for f in report["findings"]} == {"qty": 5, "status": 3}
    monkeypatch.setenv("ARGUS_FAILING_DOCUMENTS", "0")
    _, report = _audit(path, contract, "full")
    assert [f["failing"] for f in report["findings"]] == [None, None]
    shown = runner.invoke(app, ["finding", "show", _finding(report, "qty")[:8], "--documents"])
    assert "no failing documents were stored for this finding of 45 documents" in shown.stdout


def test_the_failing_documents_ride_in_the_evidence_pass(tmp_path: Path, stored: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path, contract, _, _ = _orders(tmp_path)
    _, asked = _audit(path, contract, "full", store=False)  # neither run has a history the other lacks
    monkeypatch.setenv("ARGUS_FAILING_DOCUMENTS", "0")
    _, not_asked = _audit(path, contract, "full", store=False)
    cost = ("passes", "queries_sent")
    assert [asked["database_cost"][k] for k in cost] == [not_asked["database_cost"][k] for k in cost]
    assert asked["findings"][0]["failing"] is not None and not_asked["findings"][0]["failing"] is None


def _finding_with(n: int) -> Finding:
    return Finding(field="a", category=Category.TYPE_MISMATCH, severity=Severity.LOW, description="d",
                   evidence_query={"a": {"$type": "string"}}, affected_count=n, affected_pct=0.1,
                   failing=FailingDocuments(documents=[FailingDocument(id=i) for i in range(n)], read=n))


def test_a_run_keeps_at_most_its_bound_of_failing_documents_in_all() -> None:
    kept = bounded([_finding_with(20), _finding_with(20), _finding_with(20)], limit=45)
    assert [len(f.failing.documents) for f in kept if f.failing] == [20, 20, 5]
    assert [f.failing.withheld for f in kept if f.failing] == [None, None, "the run keeps at most 45 failing "
                                                                           "documents in all"]


def test_the_failing_documents_go_with_their_run_when_it_is_pruned(tmp_path: Path, stored: str) -> None:
    path, contract, _, _ = _orders(tmp_path)
    _, report = _audit(path, contract, "full")
    with PostgresStore(stored) as st:
        st.find_finding(_finding(report, "qty"))
        assert st.prune(datetime.now(UTC) + timedelta(days=1), retention_days=0.5) == 1
        with pytest.raises(NotFound):
            st.find_finding(_finding(report, "qty"))
    assert STATUS not in _everything_stored(stored)


def test_the_http_api_serves_a_finding_with_its_failing_documents(tmp_path: Path, stored: str) -> None:
    path, contract, bad_status, _ = _orders(tmp_path)
    _, report = _audit(path, contract, "full")
    with PostgresStore(stored) as st:
        server = HttpServer(("127.0.0.1", 0), registry=CollectorRegistry(), ready=lambda: (True, []),
                            status=lambda: {}, finding=lambda fid: stored_finding(st, fid))
        server.start()
        try:
            fid = _finding(report, "status")
            answer = _get(server, f"/findings/{fid[:8]}")
            short = _get(server, f"/findings/{fid[:4]}")
        finally:
            server.stop()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 ")
    view = json.loads(body)
    assert [d["id"]["$oid"] for d in view["finding"]["failing"]["documents"]] == bad_status
    assert view["evidence_mongosh"].startswith('db.getSiblingDB("files").getCollection("orders").find(')
    assert short.startswith(b"HTTP/1.0 404 ")  # a short prefix enumerates nothing


def _get(server: HttpServer, path: str) -> bytes:
    with socket.create_connection(("127.0.0.1", int(server.address[1])), timeout=5) as conn:
        conn.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    return received


def test_the_evidence_query_is_masked_alike_by_every_command_and_runs_in_mongosh(tmp_path: Path,
                                                                                stored: str) -> None:
    path, contract, _, _ = _orders(tmp_path)
    contract.write_text("fields:\n  status:\n    in: [paid, new, refunded]\n")  # refunded: in no document
    _, report = _audit(path, contract, "shapes")
    declared = '"$nin": ["paid", "new", "refunded"]'
    shown = runner.invoke(app, ["show", report["run_id"]]).stdout
    line = next(x for x in shown.splitlines() if x.startswith("evidence status enum_violation: "))
    assert declared in line and "$masked" not in line
    evidence = runner.invoke(app, ["finding", "show", _finding(report, "status")[:8], "--evidence"]).stdout
    command = evidence.splitlines()[0]
    assert command.startswith('db.getSiblingDB("files").getCollection("orders").find({"status": {')
    assert declared in command and "$masked" not in evidence
    incident = json.loads(runner.invoke(app, ["incident", "show", "1", "--format", "json"]).stdout)
    text = json.dumps(incident, separators=(", ", ": "))
    assert declared in text and "$masked" not in text
