"""`argus incidents` and `argus incident show|ack|resolve|expected|false-positive` as a user types them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from argus.daemon.cli import app
from argus.daemon.record import record_report
from argus.daemon.store import PostgresStore
from tests.daemon.store.reports import finding, report

runner = CliRunner()


@pytest.fixture
def cli(store: PostgresStore, pg_dsn: str) -> Any:
    record_report(store, report([finding("total", "outlier_value", "high", count=100),
                              finding("zip", "null_rate", "medium", count=60)]))
    record_report(store, report([finding("name", "empty_value", "low", count=5)], collection="customers"))

    def invoke(*args: str) -> Any:
        return runner.invoke(app, list(args), env={"ARGUS_DATABASE_URL": pg_dsn, "COLUMNS": "200"})

    return invoke


def test_incidents_lists_the_active_ones_newest_first(cli: Any) -> None:
    listed = cli("incidents")
    assert listed.exit_code == 0, listed.output
    where, *lines = listed.stdout.splitlines()
    assert where.startswith("history: PostgreSQL at ")
    assert lines[0].split() == ["id", "status", "severity", "collection", "findings", "opened", "owner", "what"]
    assert lines[1].split()[:5] == ["2", "open", "low", "main/shop.customers", "1/1"]
    assert lines[2].split()[:5] == ["1", "open", "high", "main/shop.orders", "2/2"]
    assert lines[2].rstrip().endswith("total outlier_value, zip null_rate")
    only = cli("incidents", "--collection", "shop.orders", "--format", "json")
    assert [(i["id"], len(i["findings"])) for i in json.loads(only.stdout)] == [(1, 2)]


def test_show_prints_findings_and_history(cli: Any) -> None:
    cli("incident", "ack", "1", "--owner", "alice", "--note", "on it")
    shown = cli("incident", "show", "#1")
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines()[1] == "Incident 1  main/shop.orders  acknowledged · high"
    rows = [line.split() for line in shown.stdout.splitlines()]
    assert ["active", "high", "total", "outlier_value", "100", "of", "5,000", "(2.00%)"] in [r[:8] for r in rows]
    assert ["acknowledged", "acknowledged", "alice", "(on", "it)"] in [r[1:] for r in rows]
    as_json = json.loads(cli("incident", "show", "1", "--format", "json").stdout)
    assert [(e["kind"], e["owner"], e["note"]) for e in as_json["history"]] == [
        ("opened", None, None), ("acknowledged", "alice", "on it")]


def test_each_status_change_says_what_it_did(cli: Any) -> None:
    acked = cli("incident", "ack", "1", "--owner", "alice")
    assert acked.exit_code == 0 and acked.stdout == "incident 1 acknowledged by alice: shop.orders, 2 finding(s)\n"
    resolved = cli("incident", "resolve", "1")
    assert resolved.stdout.splitlines() == [
        "incident 1 resolved by alice: shop.orders, 2 finding(s)",
        "the alert channels hear of it from the daemon (or the next `argus run`)"]
    fp = cli("incident", "false-positive", "2", "--owner", "bob", "--note", "names may be blank")
    assert fp.stdout.splitlines()[:2] == [
        "incident 2 closed as a false positive by bob: shop.customers, 1 finding(s)",
        "labelled its findings fp: later audits hold them back until their share grows past the growth factor"]
    assert "no incidents open or acknowledged" in cli("incidents").stdout
    listed = json.loads(cli("incidents", "--status", "all", "--format", "json").stdout)
    assert [(i["id"], i["status"]) for i in listed] == [(2, "false_positive"), (1, "resolved")]


@pytest.mark.parametrize(("args", "error"), [
    (("incident", "ack", "one"), "'one' is not an incident id (a number, as `argus incidents` prints it)"),
    (("incident", "show", "9"), "no incident 9 (see `argus incidents --status all`)"),
    (("incident", "ack", "1", "--note", "x" * 2001), "--note is 2,001 characters long; at most 2,000"),
])
def test_mistakes_are_one_clear_line(cli: Any, args: tuple[str, ...], error: str) -> None:
    result = cli(*args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"argus: error: {error}"


def test_a_change_that_does_not_apply_is_refused(cli: Any) -> None:
    cli("incident", "resolve", "1")
    result = cli("incident", "ack", "1")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == ("argus: error: incident 1 is resolved: only an incident that is open or "
                                              "acknowledged can be marked acknowledged")


def test_piped_listings_keep_each_incident_and_finding_on_one_line(cli: Any, pg_dsn: str) -> None:
    """Piped (no COLUMNS, as shells do not export it) the tables do not squeeze to 80 columns and cut
    names and queries into one-word lines (issue 36), as `argus runs` and `argus audit` do not."""
    cli("incidents")  # the fixture's runs are stored
    env = {"ARGUS_DATABASE_URL": pg_dsn, "COLUMNS": None}
    listed = runner.invoke(app, ["incidents"], env=env).stdout.splitlines()
    assert [line.split()[:4] for line in listed[2:]] == [["2", "open", "low", "main/shop.customers"],
                                                        ["1", "open", "high", "main/shop.orders"]]
    shown = runner.invoke(app, ["incident", "show", "1"], env=env).stdout
    [total] = [line for line in shown.splitlines() if line.lstrip().startswith("active") and " total " in line]
    assert "outlier_value" in total and '{"total": null}' in total, shown
