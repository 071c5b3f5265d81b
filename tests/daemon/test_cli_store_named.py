"""Which history a command reads (issue 36): without ARGUS_DATA_DIR every command reads the same
per-user store, shared by every run on the machine, so each history listing names its store on its
first line, and `--help` says where history lives and how to choose another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from argus.daemon.cli import app
from tests.daemon.test_cli_new_user import History, _docs

runner = CliRunner()


@pytest.fixture
def history(pg_dsn: str, tmp_path: Path) -> History:
    return History(pg_dsn, tmp_path)


@pytest.mark.parametrize("command", [["runs"], ["incidents"], ["mutes"], ["alerts"], ["history", "customers"]])
def test_each_history_listing_names_its_store_on_its_first_line(history: History, command: list[str]) -> None:
    history.audit(_docs())
    result = history.cli(*command)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("history: PostgreSQL at "), result.stdout


def test_json_stays_json_without_the_store_line(history: History) -> None:
    history.audit(_docs())
    assert json.loads(history.cli("runs", "--format", "json").stdout)[0]["collection"] == "customers"


@pytest.mark.parametrize("command", [["--help"], ["runs", "--help"], ["incidents", "--help"], ["show", "--help"]])
def test_help_says_where_history_lives(command: list[str]) -> None:
    text = " ".join(runner.invoke(app, command, env={"COLUMNS": "200"}).stdout.split())
    assert "ARGUS_DATABASE_URL" in text and "ARGUS_DATA_DIR" in text and "~/.local/share/argus" in text, text
