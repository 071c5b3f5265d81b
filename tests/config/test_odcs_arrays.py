"""ODCS array options and array items mapped to Argus's nested rules, counted like Argus's own syntax."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path

from argus.agent.contracts.compile import rule_filters
from argus.config.contracts import load_contract
from tests.conftest import memory_collection

ODCS = """\
kind: DataContract
apiVersion: v3.0.2
schema:
  - name: orders
    properties:
      - name: tags
        logicalType: array
        logicalTypeOptions: {minItems: 1, maxItems: 3, uniqueItems: true}
        items:
          logicalType: string
          logicalTypeOptions: {maxLength: 8}
      - name: shipping
        logicalType: object
        logicalTypeOptions: {minProperties: 2}
"""


def test_array_options_and_scalar_items_map_to_nested_rules(tmp_path: Path) -> None:
    (tmp_path / "odcs.yaml").write_text(ODCS)
    contract = load_contract(tmp_path / "odcs.yaml", shown_as="odcs.yaml")
    assert [r.id for r in contract.rules] == [
        "odcs.yaml:7 tags type", "odcs.yaml:8 tags min_items", "odcs.yaml:8 tags max_items",
        "odcs.yaml:8 tags unique_items", "odcs.yaml:10 tags[] type", "odcs.yaml:11 tags[] max_length",
        "odcs.yaml:13 shipping type"]
    assert contract.notes == ("line 14: shipping: minProperties is not mapped to an Argus rule",)
    docs = [{"tags": ["a", "b"]}, {"tags": []}, {"tags": ["a", "b", "c", "d"]}, {"tags": ["a", "a"]},
            {"tags": ["a", "toolongtag"]}, {"tags": ["a", 7]}, {"shipping": "x"}]
    collection = memory_collection(docs)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    counts = {r.id.split(" ", 1)[1]: collection.count_documents(rule_filters(r, now)[0]) for r in contract.rules}
    assert counts == {"tags type": 0, "tags min_items": 1, "tags max_items": 1, "tags unique_items": 1,
                      "tags[] type": 1, "tags[] max_length": 1, "shipping type": 1}


def test_a_minimum_of_zero_items_is_no_rule(tmp_path: Path) -> None:
    (tmp_path / "odcs.yaml").write_text(textwrap.dedent("""\
        kind: DataContract
        schema:
          - name: orders
            properties:
              - {name: tags, logicalType: array, logicalTypeOptions: {minItems: 0}}
        """))
    assert [r.kind for r in load_contract(tmp_path / "odcs.yaml").rules] == ["type"]
