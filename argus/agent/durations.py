"""Durations as people write them in YAML: ``90``, ``"90s"``, ``"30m"``, ``"1h30m"``, ``"2d"``, ``"500ms"``."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

__all__ = ["format_duration", "parse_duration", "shortened"]

_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)\s*d)?\s*(?:(\d+(?:\.\d+)?)\s*h)?\s*(?:(\d+(?:\.\d+)?)\s*m(?!s))?"
                       r"\s*(?:(\d+(?:\.\d+)?)\s*s)?\s*(?:(\d+)\s*ms)?\s*$")


def format_duration(value: timedelta) -> str:
    """timedelta(minutes=90) → ``"1h30m"``: the way durations are written in the file."""
    total = value.total_seconds()
    if total < 1:
        return f"{round(total * 1000)}ms"
    out = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if total >= size:
            out += f"{int(total // size)}{unit}"
            total -= (total // size) * size
    if total or not out:
        out += f"{total:g}s"
    return out


def parse_duration(value: Any) -> timedelta:
    """``90``, ``"90s"``, ``"30m"``, ``"1h30m"``, ``"2d"``, ``"500ms"`` → timedelta."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration (e.g. 30s, 5m, 1h30m)")
    try:
        if isinstance(value, int | float):
            return _bounded(timedelta(seconds=float(value)), value)
        if isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
            return _bounded(timedelta(seconds=float(value)), value)
        m = _DURATION.match(str(value)) if isinstance(value, str) and value.strip() else None
        if not m or not any(m.groups()):
            raise ValueError(f"{value!r} is not a duration (e.g. 30s, 5m, 1h30m)")
        d, h, mi, s, ms = (float(x) if x else 0.0 for x in m.groups())
        return _bounded(timedelta(days=d, hours=h, minutes=mi, seconds=s, milliseconds=ms), value)
    except OverflowError:
        raise ValueError(f"{shortened(value)} is too long a duration (at most {_MAX_DURATION.days}d)") from None


_MAX_DURATION = timedelta(days=3660)  # ten years: longer is a typo, and would overflow the scheduler's dates


def shortened(value: Any) -> str:
    """``repr(value)``, cut to 40 characters: enough to recognise a bad value in a message."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _bounded(value: timedelta, given: Any) -> timedelta:
    if value > _MAX_DURATION:
        raise OverflowError(given)
    return value
