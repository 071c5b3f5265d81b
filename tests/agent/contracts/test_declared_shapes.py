"""A contract's ``shapes:``: each shape's rules are judged within its documents with exact counts, a
document of an undeclared shape is a finding, all in the passes the audit makes anyway, and a bad
declaration is refused at its file, line and key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from argus.agent.ejson import decode
from argus.agent.report import AuditReport
from argus.config.contracts import ContractError, load_contract
from tests.agent.contracts.audits import audit_under
from tests.agent.contracts.shaped_events import CONTRACT, PLANTED, events
from tests.conftest import memory_collection


def _audit(tmp_path: Path, docs: list[dict[str, Any]], contract: str = CONTRACT,
           privacy: str = "full") -> AuditReport:
    return audit_under(tmp_path, docs, contract, file="events.yaml", collection="events", database="app",
                       privacy=privacy)


@pytest.fixture(scope="module")
def dirty(tmp_path_factory: pytest.TempPathFactory) -> AuditReport:
    return _audit(tmp_path_factory.mktemp("dirty"), events())


def _result(report: AuditReport, shown: str, rule: str) -> Any:
    assert report.contract is not None
    found = [r for r in report.contract.rules if r.id.endswith(f" {shown} {rule}")]
    assert len(found) == 1, [r.id for r in report.contract.rules]
    return found[0]


@pytest.mark.parametrize(("shown", "rule"), sorted(PLANTED))
def test_each_shape_rule_counts_exactly_the_documents_of_its_shape_that_break_it(
        dirty: AuditReport, shown: str, rule: str) -> None:
    result = _result(dirty, shown, rule)
    assert (result.result, result.count) == ("failed", PLANTED[(shown, rule)])


def test_a_field_of_one_shape_is_not_reported_missing_in_the_others(dirty: AuditReport) -> None:
    """page is in every view and no other event: only the 3 views without it are missing it."""
    missing = {f.field: f.affected_count for f in dirty.findings if f.category.value == "null_rate"}
    assert missing.get("page") == 3
    assert missing.get("total") == 7
    assert "order_id" not in missing and "reason" not in missing


def test_an_undeclared_shape_is_a_schema_drift_finding_naming_it(dirty: AuditReport) -> None:
    result = _result(dirty, "kind", "shape")
    assert result.expect == "a declared shape: kind in [view, purchase, refund, logout]"
    finding = next(f for f in dirty.findings if f.id == result.finding_id)
    assert (finding.category.value, finding.affected_count) == ("schema_drift", 5)
    assert finding.sample_values == ["signup"]
    assert finding.description.startswith("5 of 2,000 documents (0.25%) break a declared shape: kind in [view, ")


def test_the_evidence_queries_reproduce_the_counts(dirty: AuditReport) -> None:
    collection = memory_collection(events(), "events", database="app")
    declared = [f for f in dirty.findings if f.rule]
    assert len(declared) == 4
    for f in declared:
        assert collection.count_documents(decode(f.evidence_query)) == f.affected_count, f.rule


def test_every_rule_passes_on_the_clean_copy(tmp_path: Path) -> None:
    clean = _audit(tmp_path, events(planted=False))
    assert clean.contract is not None
    assert clean.contract.summary() == "12 rules, 12 passed, 0 failed"
    assert not [f for f in clean.findings if f.rule]


def test_declared_shapes_cost_no_pass(tmp_path: Path, dirty: AuditReport) -> None:
    """The same audit with the collection-wide rules only makes as many passes: the shapes' rules ride along."""
    flat = CONTRACT.split("shapes:")[0]
    assert _audit(tmp_path, events(), contract=flat).database_cost.passes == dirty.database_cost.passes


def test_strict_privacy_names_no_shape_value_of_the_data(tmp_path: Path) -> None:
    report = _audit(tmp_path, events(), privacy="strict")
    assert "signup" not in report.model_dump_json()
    assert _result(report, "kind", "shape").expect == "one of the 4 declared shapes by kind"


@pytest.mark.parametrize(("shapes", "problem"), [
    ("shapes:\n  view: {fields: {page: {required: true}}}\n",
     "events.yaml:3 shapes: shapes needs by: the field whose value names a document's shape (by: type)"),
    ("shapes:\n  by: kind\n  view: {}\n",
     "events.yaml:5 shapes.view: the shape view has no fields: give {fields: {...}} with its fields' rules "
     "({fields: {}} for a shape with no fields of its own)"),
    ("shapes:\n  by: kind\n  view:\n    feilds: {page: {required: true}}\n",
     "events.yaml:6 shapes.view.feilds: unknown key of a shape (did you mean 'fields'?)"),
    ("shapes:\n  by: kind\n  view:\n    fields:\n      page: {requird: true}\n",
     "events.yaml:7 shapes.view.fields.page.requird: unknown rule (did you mean 'required'?)"),
    ("shapes:\n  by: kind\n", "events.yaml:3 shapes: shapes declares no shape beside by: give each value of kind "
                              "with its fields, e.g. {by: type, card: {fields: {card.last4: {required: true}}}, "
                              "iban: {fields: {iban: {required: true}}}}"),
    ("shapes:\n  by: $kind\n  view: {fields: {}}\n",
     "events.yaml:4 shapes.by: by is the field path whose value names a document's shape (by: type)"),
])
def test_a_bad_shapes_declaration_is_refused_at_its_line(tmp_path: Path, shapes: str, problem: str) -> None:
    (tmp_path / "events.yaml").write_text("fields:\n  user: {required: true}\n" + shapes)
    with pytest.raises(ContractError) as caught:
        load_contract(tmp_path / "events.yaml", shown_as="events.yaml")
    assert caught.value.problems == [f"{tmp_path / 'events.yaml'}{problem.removeprefix('events.yaml')}"]


def test_the_validator_export_holds_the_declared_shapes_and_lists_each_shapes_rules_as_left_out(
        tmp_path: Path) -> None:
    """The discriminator's declared values become an enum (a document without it passes, as the audit
    counts it); a shape's rules are scoped by where, which a validator cannot hold, and say so."""
    from argus.agent.contracts.validator import validator_for

    (tmp_path / "events.yaml").write_text(CONTRACT)
    exported = validator_for(load_contract(tmp_path / "events.yaml", shown_as="events.yaml"), arrays=frozenset())
    schema = exported.command("events")["validator"]["$jsonSchema"]
    assert schema["properties"]["kind"] == {"enum": ["view", "purchase", "refund", "logout", None]}
    assert [r.kind for r in exported.exported] == ["required", "required", "type", "shape"]
    assert len(exported.left_out) == 8
    assert all("scoped by where" in line for line in exported.left_out)


def test_a_contract_diff_reads_a_dropped_shape_as_a_tightening_and_a_new_one_as_a_loosening(tmp_path: Path) -> None:
    from argus.agent.contracts.diff import diff_contracts

    def contract(name: str, shapes: str) -> Any:
        (tmp_path / name).write_text(f"shapes:\n  by: kind\n{shapes}")
        return load_contract(tmp_path / name)

    two = contract("two.yaml", "  view: {fields: {page: {required: true}}}\n  logout: {fields: {}}\n")
    one = contract("one.yaml", "  view: {fields: {page: {required: true}}}\n")
    assert [(c.kind, c.rule) for c in diff_contracts(two, one)] == [("tightened", "shape")]
    assert [(c.kind, c.rule) for c in diff_contracts(one, two)] == [("loosened", "shape")]
