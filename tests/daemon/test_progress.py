"""Progress on stderr past two seconds, as plain lines where stderr is no terminal (a CI log)."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

from rich.console import Console

from argus.daemon.progress import AuditLines, LoadProgress


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def test_a_load_past_two_seconds_prints_a_line_every_five_seconds() -> None:
    console, out = _console()
    clock = _Clock()
    with LoadProgress(console, "big.jsonl", clock=clock) as progress:
        progress(1_000_000, 10_000_000)          # at once: quiet
        clock.now += 3
        progress(3_000_000, 10_000_000)          # past two seconds: a line
        clock.now += 1
        progress(4_000_000, 10_000_000)          # a second later: quiet
        clock.now += 5
        progress(9_000_000, 10_000_000)
    assert out.getvalue().splitlines() == ["loading big.jsonl: 30% of 10.0 MB read in 3 s",
                                           "loading big.jsonl: 90% of 10.0 MB read in 9 s"]


def test_an_audit_without_verbose_says_where_it_is() -> None:
    console, out = _console()
    clock = _Clock()
    seen: list[Any] = []
    lines = AuditLines(console, "files.events", SimpleNamespace(on_step=lambda s, e: seen.append(e)), clock=clock)
    state = SimpleNamespace(iteration=3, iteration_budget=200, findings=[1, 2])
    entry = SimpleNamespace(action="count_many")
    lines.on_step(state, entry)  # type: ignore[arg-type]
    clock.now += 6
    lines.on_step(state, entry)  # type: ignore[arg-type]
    assert out.getvalue().splitlines() == ["auditing files.events: iteration 3/200, count_many, 2 findings, 6 s"]
    assert len(seen) == 2  # each step still reaches --verbose's log
