"""What every command line command shares about its output and its arguments: the ``--format`` option,
a stdout that a reader may close (``argus runs | head -1``), tables that do not wrap into fragments
when piped, durations written as ``7d`` or ``12h``, and pydantic errors as one line naming the option.

Commands in modules of their own (``argus/daemon/alerts/cli.py``) use these too, so each behaves the same.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from datetime import timedelta
from enum import StrEnum
from typing import Annotated, Any, TextIO

import typer
from pydantic import ValidationError
from rich.console import Console

from argus.config.schedules import parse_duration

__all__ = ["FormatOption", "OutputFormat", "age", "emit", "option_problems", "stdout", "stdout_console"]


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", help="table, or json for scripts (on stdout)")]

_PIPED_WIDTH = 10_000  # piped or redirected: one line per row, however long, so grep and cut see whole rows


class _ReaderMayLeave:
    """stdout for command output: when the reader goes away (``| head -1``) the rest is dropped quietly,
    so the command ends with its own exit code (click would exit 1, the code of 'findings')."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def _leave(self) -> None:
        self._gone = True
        try:  # the interpreter flushes stdout at exit: let that land nowhere instead of raising again
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    @property
    def encoding(self) -> str:
        return getattr(self._stream, "encoding", "utf-8")


def stdout() -> Any:
    """sys.stdout, closable by its reader."""
    return _ReaderMayLeave(sys.stdout)


def stdout_console() -> Console:
    """A console for command output: the terminal's width on a terminal; piped, rows never wrap
    (unless ``COLUMNS`` asks for a width: shells do not export it, tools that want one do)."""
    out = stdout()
    piped = not out.isatty()
    asked = os.environ.get("COLUMNS", "")
    width = None if not piped or asked.isdigit() else _PIPED_WIDTH
    return Console(file=out, width=width, soft_wrap=piped and width == _PIPED_WIDTH)


def emit(text: str) -> None:
    """One block of text (JSON) on stdout, closable by its reader."""
    out = stdout()
    out.write(text if text.endswith("\n") else text + "\n")
    out.flush()


def age(text: str, *, option: str, bare_unit: str = "d") -> timedelta:
    """A duration given on the command line: ``7d``, ``12h``, ``90m``, ``1d12h``; a bare number is in
    ``bare_unit`` (``--older-than 90`` is 90 days, as it always was)."""
    value = text.strip()
    try:
        return parse_duration(value + bare_unit if value.replace(".", "", 1).isdigit() else value)
    except ValueError as exc:
        raise typer.BadParameter(f"{exc} (e.g. 7d, 12h or 30m)", param_hint=option) from None


_OPTION_NAMES = {"time_budget_s": "--time-budget", "max_time_ms": "--max-time-ms", "sample_size": "--sample-size",
                 "max_iterations": "--max-iterations", "privacy": "--privacy"}


def option_problems(exc: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """A pydantic error as one line per option, ``--time-budget: input should be greater than 0``: no
    input echoed (it may be a secret), no documentation URL."""
    known = {**_OPTION_NAMES, **(names or {})}
    problems = []
    for err in exc.errors(include_input=False, include_url=False):
        field = str(err["loc"][0]) if err["loc"] else ""
        name = known.get(field, "--" + field.replace("_", "-") if field else "input")
        message = str(err["msg"])
        problems.append(f"{name}: {message[:1].lower()}{message[1:]}")
    return "; ".join(problems)
