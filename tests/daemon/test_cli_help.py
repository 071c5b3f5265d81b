"""`--help` of every command, as a user reads it at 200 columns: every default shown, no Rich
markup or typer internals left over, usage lines in plain metavars, commands grouped."""

from __future__ import annotations

import re

import click
import pytest
import typer.main
from typer.testing import CliRunner

from argus.daemon.cli import app

ROOT = typer.main.get_command(app)


def _commands(group: click.Command = ROOT, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = [(path, group)]
    if isinstance(group, click.Group):
        for name, sub in group.commands.items():
            found += _commands(sub, (*path, name))
    return found


COMMANDS = _commands()
LEAVES = [(p, c) for p, c in COMMANDS if not isinstance(c, click.Group)]


def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="argus", env={"COLUMNS": "200"},
                                terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def _rows(text: str) -> dict[str, str]:
    """Each parameter's row of the help panels, continuation lines joined."""
    rows: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        start = re.match(r"^│\s{1,4}(?:\*\s+)?(--[\w-]+|[a-z_]+)\s", line)
        if start:
            current = start.group(1)
            rows[current] = line
        elif current and line.startswith("│ ") and line.strip("│ ").strip():
            rows[current] += " " + line.strip("│ ").strip()
        else:
            current = None if not line.startswith("│") else current
    return {k: re.sub(r"\s+", " ", v) for k, v in rows.items()}


def _label(param: click.Parameter) -> str:
    return param.opts[0] if isinstance(param, click.Option) else str(param.name)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "argus")
def test_help_has_no_markup_residue_and_a_plain_usage_line(path: tuple[str, ...]) -> None:
    text = _help(path)
    for residue in ("[/", "[bold", "\\[", "<bool>", "<list", "<str>", "{", "}"):
        assert residue not in text, f"{residue!r} in `argus {' '.join(path)} --help`"
    usage = next(line for line in text.splitlines() if "Usage:" in line).strip()
    plain = r"Usage: argus( [a-z][a-z-]*)* \[OPTIONS\]( (COMMAND \[ARGS\]\.\.\.|[A-Z_\[\] ]+))?"
    assert re.fullmatch(plain, usage), usage


@pytest.mark.parametrize("path,command", LEAVES, ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_every_parameter_has_help_and_every_optional_one_its_default(path: tuple[str, ...],
                                                                      command: click.Command) -> None:
    rows = _rows(_help(path))
    for param in command.params:
        label = _label(param)
        if label == "--help":
            continue
        row = rows.get(label)
        assert row is not None, f"`argus {' '.join(path)} --help` has no row for {label}"
        assert re.search(r"[a-z]{3}", row.split(label, 1)[1]), f"{label} has no help: {row}"
        assert "default" not in (getattr(param, "help", None) or "").lower(), \
            f"{label}: a default written in the help text is eaten as markup; use show_default"
        flag_off = isinstance(param, click.Option) and param.is_flag and not param.secondary_opts
        if not param.required and not flag_off and (param.default is not None or isinstance(param.show_default, str)):
            assert re.search(r"\[default: [^\]\s][^\]]*\]", row), f"{label} shows no default: {row}"


def test_dynamic_defaults_are_printed_not_eaten_as_markup() -> None:
    rows = _rows(_help(("audit",)))
    assert "[default: (ARGUS_FAIL_ON or high)]" in rows["--fail-on"]
    assert "ARGUS_PLANNER or heuristic" in rows["--planner"]
    assert "[default: (store only when ARGUS_DATABASE_URL is set)]" in rows["--store"]
    assert "ARGUS_RETENTION_DAYS or 90" in _rows(_help(("prune",)))["--older-than"]
    assert "the schedules file" in _rows(_help(("daemon",)))["--schedules"]


def test_root_help_groups_commands_the_way_a_user_works() -> None:
    text = _help(())
    panels: dict[str, list[str]] = {}
    panel = None
    for line in text.splitlines():
        title = re.match(r"^╭─ (\w+) ", line)
        if title:
            panel = title.group(1)
            panels[panel] = []
        elif panel and (row := re.match(r"^│ ([a-z]+)\s", line)):
            panels[panel].append(row.group(1))
    assert panels["Audit"] == ["audit", "contract"]
    assert panels["History"] == ["runs", "show", "diff", "label", "history", "prune", "finding", "metrics"]
    assert panels["Daemon"] == ["daemon", "run", "schedules"]
    assert panels["Alerts"] == ["mute", "unmute", "mutes", "alerts", "incidents", "incident"]


@pytest.mark.parametrize("path", [p for p, c in LEAVES if any("--file" in o.opts for o in c.params)],
                         ids=" ".join)
def test_every_file_option_names_every_format_it_reads(path: tuple[str, ...]) -> None:
    """The loader reads arrays, BSON and gzip for every command; "JSON lines" alone sent users elsewhere."""
    text = " ".join(_help(path).split())
    assert "JSON (lines or an array), mongodump BSON or its folder, gzipped or not" in re.sub(r"[│|] ?", "", text)


def test_the_walk_of_the_help_sees_every_command() -> None:
    """The tests above walk click's command tree; a typer that builds it from other classes (0.29.2, the
    latest, vendors its own click as ``typer._click``) would leave them nothing
    to check and pass (pyproject.toml says why typer and click are pinned)."""
    paths = {p for p, _ in COMMANDS}
    assert {("audit",), ("diff",), ("daemon",), ("contract", "suggest"), ("contract", "validator")} <= paths
