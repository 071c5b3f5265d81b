"""warn and fail thresholds: a rule broken within its warn band is warned and the audit exits 0; past
fail it is failed and the audit exits 1, as ``soda scan`` does."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from argus.daemon.cli import app

THRESHOLDS = """\
fields:
  items:
    items:
      fields:
        qty: {min: 1, warn: "> 0", fail: "> 1%"}
"""


def _orders(bad: int, n: int = 1000) -> list[dict[str, Any]]:
    rng = random.Random(5)
    docs = [{"order_id": f"O-{i}", "items": [{"sku": f"SKU-{rng.randrange(999)}", "qty": rng.randrange(1, 9)}
                                             for _ in range(rng.randrange(1, 4))]} for i in range(n)]
    for doc in docs[100:100 + bad]:
        doc["items"][-1]["qty"] = 0
    return docs


def _audit(tmp_path: Path, bad: int, contract: str = THRESHOLDS) -> tuple[int, dict[str, Any], str]:
    (tmp_path / "orders.jsonl").write_text("\n".join(json.dumps(d) for d in _orders(bad)))
    (tmp_path / "c.yaml").write_text(contract)
    args = ["audit", "--file", str(tmp_path / "orders.jsonl"), "--contract", str(tmp_path / "c.yaml"), "--no-store"]
    table = CliRunner().invoke(app, args)
    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == table.exit_code, table.output
    return result.exit_code, json.loads(result.stdout), " ".join(table.stdout.split())  # as read, unwrapped


def test_a_rule_broken_inside_its_warn_band_is_warned_and_the_audit_exits_0(tmp_path: Path) -> None:
    code, report, table = _audit(tmp_path, bad=5)  # 0.5%: past warn > 0, within fail > 1%
    assert code == 0
    (rule,) = report["contract"]["rules"]
    assert (rule["result"], rule["count"]) == ("warned", 5)
    assert rule["detail"] == "5 documents (0.50%) break it, past warn > 0, within fail > 1%; 5 elements"
    assert "1 rule, 0 passed, 1 warned, 0 failed" in table
    (finding,) = [f for f in report["findings"] if f["rule"]]
    assert (finding["severity"], finding["affected_count"]) == ("low", 5)


def test_a_rule_past_its_fail_threshold_is_failed_and_the_audit_exits_1(tmp_path: Path) -> None:
    code, report, table = _audit(tmp_path, bad=20)  # 2%
    assert code == 1
    (rule,) = report["contract"]["rules"]
    assert (rule["result"], rule["count"]) == ("failed", 20)
    assert "1 rule, 0 passed, 1 failed" in table
    (finding,) = [f for f in report["findings"] if f["rule"]]
    assert finding["severity"] == "high"


def test_a_warned_rule_does_not_fail_the_audit_even_at_fail_on_low(tmp_path: Path) -> None:
    (tmp_path / "orders.jsonl").write_text("\n".join(json.dumps(d) for d in _orders(5)))
    (tmp_path / "c.yaml").write_text(THRESHOLDS)
    result = CliRunner().invoke(app, ["audit", "--file", str(tmp_path / "orders.jsonl"), "--contract",
                                      str(tmp_path / "c.yaml"), "--no-store", "--fail-on", "low"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("spelled", "bad", "outcome"), [
    ("mostly: 0.99", 5, "passed"),              # 99.5% keep it
    ("mostly: 0.99", 20, "failed"),
    ("warn_if: '!= 0', error_if: '>= 20'", 5, "warned"),   # dbt's names, Argus's syntax
    ("warn_if: '!= 0', error_if: '>= 20'", 20, "failed"),
    ("fail: '> 10'", 5, "passed"),              # a count, not a share
])
def test_thresholds_spelled_as_gx_and_dbt_users_write_them(tmp_path: Path, spelled: str, bad: int,
                                                           outcome: str) -> None:
    contract = f"fields:\n  items.qty: {{min: 1, {spelled}}}\n"
    code, report, _ = _audit(tmp_path, bad=bad, contract=contract)
    (rule,) = report["contract"]["rules"]
    assert (rule["result"], rule["count"], code) == (outcome, bad, 1 if outcome == "failed" else 0)
