"""A declared rule that did not run never reads as one that passed: a contract too large for one pass
is split across passes, a rule left unchecked makes the run partial (exit 3) with the reason, and a
rule on a field no document holds is ``unmatched`` with the nearest field, not ``passed``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from argus.daemon.cli import app

DOCUMENTS = 60


def _orders(tmp_path: Path) -> Path:
    path = tmp_path / "orders.jsonl"
    path.write_text("".join(json.dumps({"_id": i, "status": ["paid", "shipped"][i % 2], "total": i * 1.5}) + "\n"
                            for i in range(DOCUMENTS)))
    return path


def _audit(tmp_path: Path, contract: str, *extra: str) -> tuple[int, dict, str]:
    (tmp_path / "c.yaml").write_text(contract)
    result = CliRunner().invoke(app, ["audit", "--file", str(_orders(tmp_path)), "--contract", str(tmp_path / "c.yaml"),
                                      "--no-store", "--format", "json", *extra])
    output = result.stdout
    return result.exit_code, json.loads(output[output.index("{"):]), result.output


def test_two_thousand_required_rules_on_absent_fields_are_all_checked_and_all_fail(tmp_path: Path) -> None:
    """Once every rule was unchecked (the one pass was over the limit and refused) and the run exited 0."""
    rules = "".join(f"  absent_{i}: {{required: true}}\n" for i in range(2000))
    code, report, _ = _audit(tmp_path, "fields:\n" + rules, "--max-iterations", "40")
    results = report["contract"]["rules"]
    assert len(results) == 2000
    assert {(r["result"], r["count"]) for r in results} == {("failed", DOCUMENTS)}
    assert report["outcome"] == "partial" and code == 3  # 2,000 findings need more steps than 40


def test_a_rule_left_unchecked_makes_the_run_partial_with_the_reason(tmp_path: Path) -> None:
    code, report, output = _audit(tmp_path, "fields:\n  total: {min: 0}\n  status: {references: customers.status}\n")
    rule = next(r for r in report["contract"]["rules"] if r["rule"] == "references")
    assert rule["result"] == "unchecked"
    assert report["outcome"] == "partial" and code == 3
    assert any(n.startswith("1 declared rule(s) of ") and "status references (line 3): " in n for n in report["notes"])
    assert "declared rules were not checked: see the notes" in " ".join(output.split())


def test_a_rule_on_a_misspelled_field_is_unmatched_and_fails_the_run(tmp_path: Path) -> None:
    code, report, _ = _audit(tmp_path, "fields:\n  staus: {in: [paid, shipped]}\n  total: {min: 0}\n")
    staus = report["contract"]["rules"][0]
    assert (staus["result"], staus["detail"]) == ("unmatched", "no document holds staus, so nothing could break the "
                                                              "rule (did you mean 'status'?)")
    assert report["outcome"] == "partial" and code == 3
    assert any("staus in (line 2): no document holds the field" in n for n in report["notes"])


def test_a_rule_on_a_field_declared_optional_is_unmatched_without_failing_the_run(tmp_path: Path) -> None:
    code, report, _ = _audit(tmp_path, "fields:\n  coupon: {required: false, pattern: '^SPRING'}\n"
                                       "  total: {min: 0}\n")
    assert [r["result"] for r in report["contract"]["rules"]] == ["unmatched", "passed"]
    assert report["outcome"] == "succeeded" and code == 0


def test_every_kind_a_missing_field_cannot_break_is_unmatched(tmp_path: Path) -> None:
    kinds = {"type": "string", "in": "[a]", "min": 0, "max": 9, "format": "email", "pattern": "'^x'",
             "max_length": 3, "unique": "true", "references": "orders._id"}
    contract = "fields:\n" + "".join(f"  nowhere_{k}: {{{k}: {v}}}\n" for k, v in kinds.items())
    _, report, _ = _audit(tmp_path, contract)
    assert {r["rule"]: r["result"] for r in report["contract"]["rules"]} == dict.fromkeys(kinds, "unmatched")


def test_a_table_shows_the_unmatched_rule_and_exits_3(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("fields:\n  staus: {in: [paid, shipped]}\n")
    result = CliRunner().invoke(app, ["audit", "--file", str(_orders(tmp_path)), "--contract",
                                      str(tmp_path / "c.yaml"), "--no-store"])
    assert result.exit_code == 3
    # the line wraps at the terminal's width, which differs between a terminal and CI
    assert "1 rule, 0 passed, 0 failed, 1 unmatched (no document holds the field)" in " ".join(result.output.split())
