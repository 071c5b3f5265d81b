"""Segment values a careless or hostile writer puts in the field segments are named by: control
characters, line breaks, bidi overrides. Each segment keeps one name from run to run, through the
history database, and no name carries a character a terminal or PostgreSQL would act on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from argus.daemon.cli import app

ODD = ["\x00nul", "\x1b[31mred", "line\nbreak", "\u202eevil", "plain"]


def _write(path: Path) -> Path:
    rows = [{"_id": {"$oid": f"{0x65000000 + i * 60:08x}{i:016x}"}, "tenant": ODD[i % len(ODD)], "n": i}
            for i in range(500)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_segment_holding_a_nul_or_an_escape_is_the_same_segment_in_the_next_stored_run(
        tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL keeps a NUL as U+FFFD: a name holding one read back as another segment, so every
    run said it had disappeared and appeared again."""
    monkeypatch.setenv("ARGUS_DATABASE_URL", pg_dsn)
    path = _write(tmp_path / "events.jsonl")
    args = ["audit", "--file", str(path), "--segment-by", "tenant", "--store", "--format", "json", "--fail-on", "none"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0, second.output
    report = json.loads(second.stdout)
    assert [f["description"] for f in report["findings"] if f["category"] == "segment_change"] == []
    names = sorted(s["segment"] for s in report["health"]["segments"])
    assert names == ["tenant=\\u0000nul", "tenant=\\u001b[31mred", "tenant=\\u202eevil", "tenant=line\\u000abreak",
                     "tenant=plain"]
