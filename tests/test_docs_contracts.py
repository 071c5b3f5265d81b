"""The contracts page's examples are real: each contract in docs/contracts.md parses."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from argus.config.contracts import parse_contract

DOC = Path(__file__).resolve().parents[1] / "docs" / "contracts.md"


def test_every_contract_example_in_the_contracts_page_parses() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.S)
    contracts = [b for b in blocks if re.match(r"(#[^\n]*\n)*(collection|fields):", b)]
    contracts.append((DOC.parent.parent / "deploy" / "demo" / "contracts" / "orders.yaml").read_text())
    # the complete example, nested data, shapes, thresholds, the SodaCL side by side, the demo's contract file
    assert len(contracts) == 6
    for block in contracts:
        contract = parse_contract(yaml.safe_load(block), file="docs/contracts.md", lines={}, source="doc")
        assert contract.checks
    side_by_side = parse_contract(yaml.safe_load(contracts[4]), file="docs/contracts.md", lines={}, source="doc")
    assert len(side_by_side.checks) == 9  # one rule per SodaCL check
