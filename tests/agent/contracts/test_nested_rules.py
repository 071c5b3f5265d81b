"""Rules on arrays and nested objects: each finds its planted breakage with the exact number of
documents (and of elements where it speaks of elements), passes on the clean copy, and is counted
in the audit's existing passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from argus.agent.ejson import decode
from argus.agent.report import AuditReport
from argus.config.contracts import ContractError, load_contract
from tests.agent.contracts.audits import audit_under
from tests.agent.contracts.nested_orders import CONTRACT, ELEMENTS, PLANTED, SECRET, orders
from tests.conftest import memory_collection


def _audit(tmp_path: Path, docs: list[dict[str, Any]], contract: str | None = CONTRACT,
           privacy: str = "shapes") -> AuditReport:
    return audit_under(tmp_path, docs, contract, file="nested.yaml", collection="orders", database="shop",
                       privacy=privacy)


@pytest.fixture(scope="module")
def dirty(tmp_path_factory: pytest.TempPathFactory) -> AuditReport:
    return _audit(tmp_path_factory.mktemp("dirty"), orders(), privacy="full")


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> AuditReport:
    return _audit(tmp_path_factory.mktemp("clean"), orders(planted=False))


def _result(report: AuditReport, shown: str, rule: str) -> Any:
    assert report.contract is not None
    found = [r for r in report.contract.rules if r.id.endswith(f" {shown} {rule}")]
    assert len(found) == 1, [r.id for r in report.contract.rules]
    return found[0]


@pytest.mark.parametrize(("shown", "rule"), sorted(PLANTED))
def test_each_nested_rule_counts_the_documents_that_break_it(dirty: AuditReport, shown: str, rule: str) -> None:
    result = _result(dirty, shown, rule)
    assert (result.result, result.count) == ("failed", PLANTED[(shown, rule)])
    finding = next(f for f in dirty.findings if f.id == result.finding_id)
    assert result.id in (finding.rule or "")


def test_every_rule_passes_on_the_clean_copy(clean: AuditReport) -> None:
    assert clean.contract is not None
    assert clean.contract.summary() == "22 rules, 22 passed, 0 failed"
    assert clean.outcome == "succeeded"
    assert not [f for f in clean.findings if f.rule]


def test_the_evidence_query_of_each_nested_finding_reproduces_its_count(dirty: AuditReport) -> None:
    collection = memory_collection(orders(), "orders", database="shop")
    declared = [f for f in dirty.findings if f.rule]
    assert len(declared) == 13  # 16 broken rules; rules of one field and category share a finding
    for f in declared:
        assert collection.count_documents(decode(f.evidence_query)) == f.affected_count, f.rule


def test_a_rule_inside_an_array_of_objects_counts_the_broken_elements_beside_the_documents(
        dirty: AuditReport) -> None:
    result = _result(dirty, "items.qty", "min")
    assert (result.count, result.detail) == (9, f"{ELEMENTS} elements")
    finding = next(f for f in dirty.findings if f.id == result.finding_id)
    assert finding.description.startswith("9 of 1,200 documents (0.75%) break min 1")
    assert finding.description.endswith(f": {ELEMENTS} elements")


def test_undeclared_keys_are_named_and_their_values_never_written(dirty: AuditReport) -> None:
    result = _result(dirty, "shipping", "additional_fields")
    assert result.detail == "undeclared keys in the sample: notes"
    finding = next(f for f in dirty.findings if f.id == result.finding_id)
    assert finding.description.endswith("undeclared keys in the sample: notes")
    assert SECRET not in dirty.model_dump_json()  # privacy full: sample values shown, but never this key's value


def test_nested_rules_cost_no_pass(tmp_path: Path, dirty: AuditReport, clean: AuditReport) -> None:
    """The same audits with only a flat rule make as many passes (fewer on the clean copy, where the
    declared shapes leave the inference no finding to show the evidence of): the nested rules ride along."""
    flat = "fields:\n  order_id: {required: true}\n"
    assert _audit(tmp_path, orders(), contract=flat).database_cost.passes == dirty.database_cost.passes == 3
    assert _audit(tmp_path, orders(planted=False), contract=flat).database_cost.passes == 3
    assert clean.database_cost.passes == 2


def test_a_declared_required_key_replaces_the_inferred_null_rate_of_that_key(dirty: AuditReport) -> None:
    """shipping without city is the required_fields rule's finding, not a second, inferred one."""
    assert not [f for f in dirty.findings if f.field == "shipping.city" and f.category.value == "null_rate"]
    assert not [f for f in dirty.findings if f.field == "items.sku" and f.category.value == "null_rate"]


@pytest.mark.parametrize(("contract", "problem"), [
    ("fields:\n  tags:\n    items:\n      unique: true\n",
     "c.yaml:4 fields.tags.items.unique: unique is not a rule of each element"),
    ("fields:\n  tags: {min_items: 0}\n",
     "c.yaml:2 fields.tags.min_items: min_items is a whole number of elements from 1 to 1,000,000"),
    ("fields:\n  address:\n    one_of: [{type: string}]\n",
     "c.yaml:3 fields.address.one_of: one_of is a list of two or more shapes"),
    ("fields:\n  qty: {min: 1, warn: lots}\n",
     "c.yaml:2 fields.qty.warn: 'lots' is no threshold: write '> 0', '>= 10' or '> 1%'"),
    ("fields:\n  items:\n    items:\n      fields: {sku: {type: string}}\n      additional_fields: false\n",
     "c.yaml:5 fields.items.items.additional_fields: additional_fields: not checked inside an array of objects"),
    ("fields:\n  items:\n    items:\n      fields:\n        sku: {requird: true}\n",
     "c.yaml:5 fields.items.items.fields.sku.requird: unknown rule (did you mean 'required'?)"),
    ("fields:\n  tags: {min_items: 3, max_items: 2}\n",
     "c.yaml:2 fields.tags.min_items: min_items 3 is above max_items 2"),
    ("fields:\n  qty: {min: 1, mostly: 0.99, fail: '> 2%'}\n",
     "c.yaml:2 fields.qty.mostly: give mostly or fail, not both"),
])
def test_a_bad_nested_rule_is_refused_at_its_file_and_line(tmp_path: Path, contract: str, problem: str) -> None:
    (tmp_path / "c.yaml").write_text(contract)
    with pytest.raises(ContractError) as refused:
        load_contract(tmp_path / "c.yaml", shown_as="c.yaml")
    assert any(p.removeprefix(str(tmp_path) + "/").startswith(problem) for p in refused.value.problems), \
        refused.value.problems
