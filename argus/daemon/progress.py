"""Progress on stderr for what takes more than a couple of seconds: loading a file, and an audit.

Quiet for the first ``AFTER_S`` seconds (a small file or a quick audit prints nothing). Past that a
terminal gets a ``rich`` progress bar for the load, and anything else (a CI log, a pipe) gets a
plain line every ``EVERY_S`` seconds, which a log keeps readable. Lines name the file or the
collection, never a document value.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

from argus.agent.report import TraceEntry
from argus.agent.state import AgentState

__all__ = ["AFTER_S", "EVERY_S", "AuditLines", "LoadProgress"]

AFTER_S = 2.0
EVERY_S = 5.0


class LoadProgress:
    """``progress(bytes_read, size)`` for ``load_file``; a context manager that clears the bar."""

    def __init__(self, console: Console, label: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._console, self._label, self._clock = console, label, clock
        self._started = clock()
        self._last_line = 0.0
        self._bar: Progress | None = None
        self._task: Any = None

    def __enter__(self) -> LoadProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, done: int, size: int) -> None:
        now = self._clock()
        if now - self._started < AFTER_S:
            return
        if self._console.is_terminal:
            if self._bar is None:
                self._bar = Progress(TextColumn("loading {task.description}"), BarColumn(), DownloadColumn(),
                                     TimeElapsedColumn(), console=self._console, transient=True)
                self._task = self._bar.add_task(self._label, total=size or None)
                self._bar.start()
            self._bar.update(self._task, completed=done)
        elif now - self._last_line >= EVERY_S:
            self._last_line = now
            share = f"{done / size:.0%} of " if size else ""
            self._console.print(f"loading {self._label}: {share}{size / 1e6:,.1f} MB read in "
                                f"{now - self._started:.0f} s", highlight=False, markup=False, soft_wrap=True)


class AuditLines:
    """An ``AuditObserver`` printing a plain progress line at most every ``EVERY_S`` seconds, once an
    audit has run ``AFTER_S`` seconds: for stderr that is no terminal, where a spinner cannot show."""

    def __init__(self, console: Console, label: str, inner: Any = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._console, self._label, self._inner, self._clock = console, label, inner, clock
        self._started = clock()
        self._last_line = self._started

    def on_step(self, state: AgentState, entry: TraceEntry) -> None:
        now = self._clock()
        if now - self._started >= AFTER_S and now - self._last_line >= EVERY_S:
            self._last_line = now
            self._console.print(f"auditing {self._label}: iteration {state.iteration}/{state.iteration_budget}, "
                                f"{entry.action}, {len(state.findings)} findings, {now - self._started:.0f} s",
                                highlight=False, markup=False, soft_wrap=True)
        if self._inner is not None:
            self._inner.on_step(state, entry)
