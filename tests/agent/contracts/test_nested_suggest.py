"""argus contract suggest on nested data: the draft nests the fields of arrays of objects under
``items: {fields: ...}`` and of objects under ``fields:``, gives arrays their length range and their
elements' type and values, and a field written two ways both types; fed back, it passes on the clean
copy and finds the planted breakage."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.agent.contracts.nested_orders import orders


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("suggest")
    (folder / "clean").mkdir()
    (folder / "clean" / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in orders(planted=False)))
    (folder / "orders.jsonl").write_text("\n".join(json_util.dumps(d) for d in orders()))
    result = CliRunner().invoke(app, ["contract", "suggest", "--file", str(folder / "clean" / "orders.jsonl"),
                                      "--out", str(folder / "draft.yaml")])
    assert result.exit_code == 0, result.output
    return folder, (folder / "draft.yaml").read_text()


def test_the_draft_nests_arrays_of_objects_and_objects(drafted: tuple[Path, str]) -> None:
    _, text = drafted
    assert "  items:\n    type: array  #" in text
    assert "    min_items: 1  # no sampled array of the 1,000 is shorter\n" \
           "    max_items: 4  # no sampled array of the 1,000 is longer\n" \
           "    items:\n      fields:\n        sku:\n          type: string  #" in text
    assert "        dims:\n          type: object  #" in text and "          fields:\n            w:\n" in text
    assert "  shipping:\n    type: object  #" in text and "    fields:\n      street:\n" in text


def test_the_draft_gives_scalar_elements_their_type_and_values(drafted: tuple[Path, str]) -> None:
    _, text = drafted
    assert "    items:\n      type: string  # all 1,756 elements of the whole collection are string\n" \
           '      in: ["bulk", "eco", "express", "fragile", "gift", "promo"]  #' in text


def test_a_field_written_two_ways_is_drafted_with_both_types(drafted: tuple[Path, str]) -> None:
    _, text = drafted
    assert re.search(r'  address:\n    type: \["object", "string"\]  # written two ways: object \(6\d\.\d%\) or '
                     r'string \(3\d\.\d%\)', text)  # a third of the sample, as of the documents


def test_the_draft_passes_on_the_clean_copy_and_finds_the_planted_breakage(drafted: tuple[Path, str]) -> None:
    folder, _ = drafted
    runner = CliRunner()
    clean = runner.invoke(app, ["audit", "--file", str(folder / "clean" / "orders.jsonl"), "--contract",
                                str(folder / "draft.yaml"), "--format", "json", "--no-store"])
    report = json_util.loads(clean.stdout)
    rules = report["contract"]["rules"]
    assert len(rules) >= 40 and {r["result"] for r in rules} == {"passed"}
    assert clean.exit_code == 0, clean.stderr
    dirty = runner.invoke(app, ["audit", "--file", str(folder / "orders.jsonl"), "--contract",
                                str(folder / "draft.yaml"), "--format", "json", "--no-store"])
    failed = {(r["field"], r["rule"]): r["count"] for r in json_util.loads(dirty.stdout)["contract"]["rules"]
              if r["result"] == "failed"}
    assert failed[("items", "min_items")] == 6 and failed[("items", "max_items")] == 4
    assert failed[("items.sku", "pattern")] == 7 and failed[("items.dims.w", "required")] == 3
    assert failed[("shipping.city", "required")] == 6 and failed[("address", "type")] == 2
    assert failed[("address.city", "required")] == 4  # an address object without city; text addresses pass
