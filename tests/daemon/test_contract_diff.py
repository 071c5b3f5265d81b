"""``argus contract diff OLD NEW``: a contract pull request's CI gate, and ``argus contract validator``
from a contract alone."""

from __future__ import annotations

import json
from pathlib import Path

from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app

runner = CliRunner()
STATUSES = ("paid", "shipped", "new", "refunded")


def _data(tmp_path: Path) -> tuple[Path, int]:
    """300 invoices, statuses cycling through four values (and a few with none); how many are 'shipped'."""
    docs = [{"invoice": f"INV-{i:04d}", "status": STATUSES[i % 4] if i % 29 else None, "amount": 5 + i % 40}
            for i in range(300)]
    path = tmp_path / "invoices.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in docs))
    return path, sum(1 for d in docs if d["status"] == "shipped")


def _contract(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_tightened_in_list_that_todays_data_breaks_is_counted_and_exits_1(tmp_path: Path) -> None:
    data, shipped = _data(tmp_path)
    old = _contract(tmp_path, "old.yaml", "fields:\n  status:\n    in: [paid, shipped, new, refunded]\n")
    new = _contract(tmp_path, "new.yaml", "fields:\n  status:\n    in: [paid, new, refunded]\n")
    result = runner.invoke(app, ["contract", "diff", str(old), str(new), "--file", str(data)])
    assert result.exit_code == 1, result.output
    assert (f"tightened  status in: in [paid, shipped, new, refunded] → in [paid, new, refunded]  "
            f"(today: {shipped:,} documents newly fail)") in result.stdout
    assert f"1 of 1 tightening change(s) break today's data in files.invoices (up to {shipped} of 300 documents)" \
        in result.stdout


def test_a_loosened_rule_exits_0(tmp_path: Path) -> None:
    data, _ = _data(tmp_path)
    old = _contract(tmp_path, "old.yaml", "fields:\n  status:\n    in: [paid, new, refunded]\n")
    new = _contract(tmp_path, "new.yaml", "fields:\n  status:\n    in: [paid, shipped, new, refunded]\n")
    result = runner.invoke(app, ["contract", "diff", str(old), str(new), "--file", str(data)])
    assert result.exit_code == 0, result.output
    assert "loosened   status in: in [paid, new, refunded] → in [paid, shipped, new, refunded]" in result.stdout


def test_a_tightening_todays_data_keeps_exits_0_with_a_zero_count(tmp_path: Path) -> None:
    data, _ = _data(tmp_path)
    old = _contract(tmp_path, "old.yaml", "fields:\n  amount:\n    min: 0\n")
    new = _contract(tmp_path, "new.yaml", "fields:\n  amount:\n    min: 5\n    max: 44\n")
    result = runner.invoke(app, ["contract", "diff", str(old), str(new), "--file", str(data), "--format", "json"])
    assert result.exit_code == 0, result.output
    changes = json.loads(result.stdout)["changes"]
    assert [(c["kind"], c["rule"], c["newly_failing"]) for c in changes] == [("tightened", "min", 0),
                                                                           ("added", "max", 0)]


def test_each_change_is_classified_and_a_renamed_field_is_counted_as_new(tmp_path: Path) -> None:
    data, _ = _data(tmp_path)
    old = _contract(tmp_path, "old.yaml", "fields:\n  invoice: {required: true, max_length: 12}\n  amount: {max: 50}\n"
                                          "  note: {max_length: 10}\n")
    new = _contract(tmp_path, "new.yaml", "fields:\n  invoice_no: {required: true, max_length: 12}\n"
                                          "  amount: {max: 60}\n  status: {required: true}\n")
    result = runner.invoke(app, ["contract", "diff", str(old), str(new), "--file", str(data), "--format", "json"])
    changes = {(c["kind"], c["field"], c["rule"]): c["newly_failing"] for c in json.loads(result.stdout)["changes"]}
    missing_status = sum(1 for i in range(300) if i % 29 == 0)
    assert changes == {("renamed", "invoice_no", "required"): 300, ("renamed", "invoice_no", "max_length"): 0,
                       ("loosened", "amount", "max"): None,
                       ("added", "status", "required"): missing_status, ("removed", "note", "max_length"): None}
    assert result.exit_code == 1


def test_without_data_the_diff_classifies_and_counts_nothing(tmp_path: Path) -> None:
    old = _contract(tmp_path, "old.yaml", "fields:\n  status:\n    in: [paid, shipped]\n")
    new = _contract(tmp_path, "new.yaml", "fields:\n  status:\n    in: [paid]\n")
    result = runner.invoke(app, ["contract", "diff", str(old), str(new)])
    assert result.exit_code == 0, result.output
    assert "1 change(s) can fail documents; give --file or --uri to count today's data" in result.stdout


def test_the_validator_is_printed_from_a_contract_alone(tmp_path: Path) -> None:
    contract = _contract(tmp_path, "c.yaml", "fields:\n  status:\n    in: [paid, new]\n  amount: {min: 1}\n")
    result = runner.invoke(app, ["contract", "validator", "--contract", str(contract), "--collection", "invoices"])
    assert result.exit_code == 0, result.output
    command = json.loads(result.stdout)
    assert command["collMod"] == "invoices"
    assert command["validator"]["$jsonSchema"]["properties"]["amount"] == {"minimum": 1}
    assert "no data source, so no count of the documents that would fail it" in result.stderr
