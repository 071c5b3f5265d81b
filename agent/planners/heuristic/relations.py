"""Relations between fields of one document that their names promise: an end is not before its start.

Two date fields name the two ends of one interval when their names, without the words that only
say "date" (``at``, ``on``, ``date``, ``time``), differ in exactly one word and that pair of words
is the start and the end of something (``checkIn``/``checkOut``, ``issued_at``/``due_date``,
``hire_date``/``termination_date``, ``startDatum``/``endDatum``, ``opened_at``/``closed_at``,
``created_at``/``updated_at``). A document whose end lies before its start is a defect whatever
share of documents holds one: no sample statistic is learned, so a growing defect cannot become
the norm. Only the names decide which fields pair up; two dates that merely tend to come in one
order (a due date and a payment date) are left alone, since both orders happen.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.planners.heuristic.names import words_of
from agent.tools.models import FieldStats

__all__ = ["Interval", "intervals"]

# (start word, end word): the one word in which the two names of an interval differ.
_ENDS: frozenset[tuple[str, str]] = frozenset({
    ("start", "end"), ("started", "ended"), ("begin", "end"), ("beginning", "end"), ("start", "finish"),
    ("started", "finished"), ("started", "completed"), ("start", "stop"), ("started", "stopped"),
    ("from", "to"), ("from", "until"), ("from", "till"), ("valid", "expires"),
    ("in", "out"), ("checkin", "checkout"),                              # check_in / check_out
    ("open", "close"), ("opened", "closed"), ("opening", "closing"),
    ("departure", "arrival"), ("departed", "arrived"), ("depart", "arrive"), ("departs", "arrives"),
    ("pickup", "dropoff"), ("pickup", "delivery"), ("shipped", "delivered"), ("ship", "delivery"),
    ("ordered", "shipped"), ("order", "ship"), ("sent", "delivered"),
    ("hire", "termination"), ("hired", "terminated"), ("hire", "exit"), ("joined", "left"),
    ("admission", "discharge"), ("admitted", "discharged"), ("birth", "death"), ("born", "died"),
    ("issue", "expiry"), ("issued", "expires"), ("issue", "expiration"), ("issued", "expired"),
    ("effective", "expiration"), ("enrolled", "graduated"), ("enrollment", "graduation"),
    ("issued", "due"), ("issue", "due"), ("invoice", "due"), ("invoiced", "due"), ("billed", "due"),
    ("created", "updated"), ("created", "modified"), ("created", "closed"), ("created", "resolved"),
    ("created", "deleted"), ("opened", "resolved"), ("first", "last"),
    # German, Spanish, French, Portuguese: the same pairs as writers name them
    ("beginn", "ende"), ("anfang", "ende"), ("start", "ende"), ("von", "bis"),
    ("inicio", "fin"), ("desde", "hasta"), ("entrada", "salida"), ("debut", "fin"), ("inicio", "termino"),
})


# Words that only say "this is a date" (``issued_at`` and ``due_date`` are the issue and the due).
_DATE_WORDS = frozenset({"at", "on", "date", "time", "datetime", "timestamp", "ts", "dt", "day", "datum", "fecha",
                         "zeit", "heure"})


@dataclass(frozen=True)
class Interval:
    """Two date fields of one document that bound one interval."""

    start: str
    end: str


def intervals(fields: list[FieldStats]) -> list[Interval]:
    """Pairs of date fields whose names make them the start and the end of one interval; fields
    inside arrays are left out (one element's dates cannot be compared with a plain filter)."""
    dates = [f for f in fields if not f.in_array and _mostly_dates(f)]
    by_path = {f.path: [w for w in words_of(f.path) if w not in _DATE_WORDS] or words_of(f.path) for f in dates}
    out: list[Interval] = []
    for a in dates:
        for b in dates:
            if a.path == b.path or _parent(a.path) != _parent(b.path):
                continue
            wa, wb = by_path[a.path], by_path[b.path]
            if len(wa) != len(wb):
                continue
            differ = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
            if len(differ) == 1 and differ[0] in _ENDS:
                out.append(Interval(a.path, b.path))
    return out


def _mostly_dates(f: FieldStats) -> bool:
    values = sum(n for t, n in f.types.items() if t != "null")
    return values > 0 and f.types.get("date", 0) >= 0.5 * values


def _parent(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""
