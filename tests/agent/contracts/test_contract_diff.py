"""``diff_contracts``: each rule-level change classified as a reviewer would read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.agent.contracts.diff import diff_contracts
from argus.config.contracts import load_contract


def _changes(tmp_path: Path, old: str, new: str) -> list[tuple[str, str, str]]:
    (tmp_path / "old.yaml").write_text(f"fields:\n  f: {old}\n")
    (tmp_path / "new.yaml").write_text(f"fields:\n  f: {new}\n")
    changes = diff_contracts(load_contract(tmp_path / "old.yaml"), load_contract(tmp_path / "new.yaml"))
    return [(c.kind, c.rule, c.detail) for c in changes]


@pytest.mark.parametrize(("old", "new", "kind"), [
    ("{min: 1}", "{min: 2}", "tightened"), ("{min: 2}", "{min: 1}", "loosened"),
    ("{max: 9}", "{max: 5}", "tightened"), ("{max: 5}", "{max: 9}", "loosened"),
    ("{required: false}", "{required: true}", "tightened"), ("{required: true}", "{required: false}", "loosened"),
    ("{in: [a, b]}", "{in: [a]}", "tightened"), ("{in: [a]}", "{in: [a, c]}", "loosened"),
    ("{in: [a, b]}", "{in: [a, c]}", "changed"), ("{max_length: 9}", "{max_length: 4}", "tightened"),
    ("{pattern: '^a'}", "{pattern: '^b'}", "changed"), ("{type: [string, int]}", "{type: [string]}", "tightened"),
    ("{min: 2026-01-01}", "{min: 2026-02-01}", "tightened"),
])
def test_a_changed_value_is_classified_by_what_it_accepts(tmp_path: Path, old: str, new: str, kind: str) -> None:
    assert [k for k, _, _ in _changes(tmp_path, old, new)] == [kind]


def test_reordering_an_in_list_changes_nothing(tmp_path: Path) -> None:
    assert _changes(tmp_path, "{in: [a, b, c]}", "{in: [c, a, b]}") == []


def test_a_raised_severity_is_a_tightening_that_fails_no_document(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text("fields:\n  f: {in: [a], severity: low}\n")
    (tmp_path / "new.yaml").write_text("fields:\n  f: {in: [a], severity: critical}\n")
    (change,) = diff_contracts(load_contract(tmp_path / "old.yaml"), load_contract(tmp_path / "new.yaml"))
    assert (change.kind, change.detail, change.can_fail_documents) == ("tightened", "severity low → critical", False)
