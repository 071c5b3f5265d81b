"""Cron expressions as crontab(5) reads them, checked and translated for APScheduler.

Weekday 0 and 7 are Sunday, 1 is Monday; when both the day of month and the day of week are
restricted, either one matching fires the schedule (``CronSpec.day_or_weekday``); the macros
``@daily``, ``@hourly`` and the like stand for their five fields. The other fields are checked by
APScheduler's own cron trigger, exactly as the scheduler will read them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CronSpec", "parse_cron"]

_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_APS_DAYS = {0: "sun", 1: "mon", 2: "tue", 3: "wed", 4: "thu", 5: "fri", 6: "sat"}
_MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
           "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_CRON_HINT = "(five fields, e.g. '0 6 * * 1')"


@dataclass(frozen=True)
class CronSpec:
    minute: str
    hour: str
    day: str
    month: str
    day_of_week: str | None   # APScheduler names, or None for any day
    day_or_weekday: bool      # both restricted: crontab fires when either matches


def _weekday_number(token: str) -> int:
    token = token.lower()
    if token in _DAYS:
        return _DAYS.index(token)
    if token.isdigit() and 0 <= int(token) <= 7:
        return int(token) % 7
    raise ValueError(token)


def _weekdays(field: str) -> set[int]:
    days: set[int] = set()
    for part in field.split(","):
        base, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if step < 1:
            raise ValueError(part)
        if base == "*":
            lo, hi = 0, 6
        elif "-" in base:
            a, b = base.split("-", 1)
            lo, hi = _weekday_number(a), _weekday_number(b)
            if b.strip() == "7":
                hi = 7
        else:
            lo = hi = _weekday_number(base)
            if step_text:
                hi = 6
        if hi < lo:
            raise ValueError(part)
        days.update(d % 7 for d in range(lo, hi + 1, step))
    return days


def parse_cron(expr: str) -> CronSpec:
    """Validate a crontab expression and translate its weekdays for APScheduler."""
    text = _MACROS.get(str(expr).strip().lower(), str(expr))
    fields = text.split()
    if len(fields) != 5:
        raise ValueError(f"{expr!r} is not a cron expression {_CRON_HINT}")
    minute, hour, day, month, dow = fields
    try:
        days = _weekdays(dow)
    except (ValueError, IndexError):
        raise ValueError(f"{expr!r} is not a cron expression: day of week {dow!r} is not 0-7 or sun-sat "
                         f"{_CRON_HINT}") from None
    from apscheduler.triggers.cron import CronTrigger as _Cron  # validate the other fields exactly as used

    try:
        _Cron(minute=minute, hour=hour, day=day, month=month)
    except ValueError as exc:
        raise ValueError(f"{expr!r} is not a cron expression: {exc} {_CRON_HINT}") from None
    weekday = None if days == set(range(7)) else ",".join(_APS_DAYS[d] for d in sorted(days))
    return CronSpec(minute, hour, day, month, weekday, day_or_weekday=weekday is not None and day != "*")
