"""argus contract suggest on a polymorphic collection: the draft declares its shapes, each with its
own fields required where nearly all of the shape's documents hold them, and, fed back, finds the
breakage planted inside each shape with its exact count."""

from __future__ import annotations

from pathlib import Path

import pytest
from bson import json_util
from typer.testing import CliRunner

from argus.config.contracts import load_contract
from argus.daemon.cli import app
from tests.agent.contracts.shaped_events import PLANTED, events


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    here = tmp_path_factory.mktemp("suggest")
    (here / "clean").mkdir()
    clean = here / "clean" / "events.jsonl"
    clean.write_text("\n".join(json_util.dumps(d) for d in events(planted=False)) + "\n")
    result = CliRunner().invoke(app, ["contract", "suggest", "--file", str(clean), "--out", str(here / "c.yaml")])
    assert result.exit_code == 0, result.output
    return here, (here / "c.yaml").read_text(), result.stderr


def test_the_draft_declares_the_shapes_by_the_discriminator_found_in_the_data(drafted: tuple[Path, str, str]) -> None:
    _, text, stderr = drafted
    assert "\nshapes:\n  by: kind  # 4 shapes by kind in the 1,000 sampled documents (view " in text
    assert "  logout: {fields: {}}\n" in text
    assert "in 2 passes" in stderr and "# BROKEN TODAY" not in text


def test_a_field_of_one_shape_is_required_in_it_not_optional_across_the_collection(
        drafted: tuple[Path, str, str]) -> None:
    here, text, _ = drafted
    fields, shapes = text.split("\nshapes:\n")
    assert "\n  page:" not in fields and "\n  total:" not in fields
    view = shapes.split("\n  view:\n")[1]
    assert "      page:\n" in view
    assert "        required: true  # present and not null in 100.0% of the " in view
    contract = load_contract(here / "c.yaml")
    page = [r for r in contract.rules if r.field == "page" and r.kind == "required"]
    assert [(r.value, r.where) for r in page] == [(True, {"kind": "view"})]


def test_fed_back_the_draft_finds_the_breakage_inside_each_shape_and_passes_the_clean_copy(
        drafted: tuple[Path, str, str]) -> None:
    here, _, _ = drafted
    dirty = here / "events.jsonl"
    dirty.write_text("\n".join(json_util.dumps(d) for d in events()) + "\n")
    runner = CliRunner()
    audit = runner.invoke(app, ["audit", "--file", str(dirty), "--contract", str(here / "c.yaml"), "--format", "json",
                                "--no-store"])
    report = json_util.loads(audit.stdout)
    failed = {(r["field"], r["rule"]): r["count"] for r in report["contract"]["rules"] if r["result"] == "failed"}
    assert failed == dict(PLANTED)
    clean = runner.invoke(app, ["audit", "--file", str(here / "clean" / "events.jsonl"), "--contract",
                                str(here / "c.yaml"), "--format", "json", "--no-store"])
    assert json_util.loads(clean.stdout)["contract"]["rules"] and clean.exit_code == 0, clean.output


def test_in_strict_privacy_no_shape_is_drafted(drafted: tuple[Path, str, str]) -> None:
    here, _, _ = drafted
    result = CliRunner().invoke(app, ["contract", "suggest", "--file", str(here / "clean" / "events.jsonl"),
                                      "--privacy", "strict"])
    assert result.exit_code == 0, result.output
    assert "shapes:" not in result.stdout and "\n  view:" not in result.stdout
