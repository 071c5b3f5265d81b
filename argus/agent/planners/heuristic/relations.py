"""Relations between fields of one document that their names promise: an end is not before its
start, and a total is its quantity times its unit price.

Two date fields name the two ends of one interval when their names, without the words that only
say "date" (``at``, ``on``, ``date``, ``time``), differ in exactly one word and that pair of words
is the start and the end of something (``checkIn``/``checkOut``, ``issued_at``/``due_date``,
``hire_date``/``termination_date``, ``startDatum``/``endDatum``, ``opened_at``/``closed_at``,
``created_at``/``updated_at``). A document whose end lies before its start is a defect whatever
share of documents holds one: no sample statistic is learned, so a growing defect cannot become
the norm. Only the names decide which fields pair up; two dates that merely tend to come in one
order (a due date and a payment date) are left alone, since both orders happen.

A ``total`` beside ``qty`` and ``unit_price`` is held to their product within rounding, unless a
sibling (a discount, tax, shipping, a fee) says something else enters it; and only while the
totals that differ stay a minority small enough to be defects (``PRODUCT_MAX_SHARE``).
"""

from __future__ import annotations

from dataclasses import dataclass

from argus.agent.planners.heuristic.names import words_of
from argus.agent.tools.models import FieldStats

__all__ = ["Interval", "Product", "intervals", "products"]

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
    dates = [f for f in fields if not f.in_array and _mostly(f, {"date"})]
    by_path = {f.path: [w for w in words_of(f.path) if w not in _DATE_WORDS] or words_of(f.path) for f in dates}
    out: list[Interval] = []
    for a in dates:
        for b in dates:
            if a.path == b.path or a.path.rpartition(".")[0] != b.path.rpartition(".")[0]:
                continue
            wa, wb = by_path[a.path], by_path[b.path]
            if len(wa) != len(wb):
                continue
            differ = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
            if len(differ) == 1 and differ[0] in _ENDS:
                out.append(Interval(a.path, b.path))
    return out


def _mostly(f: FieldStats, kinds: set[str]) -> bool:
    values = sum(n for t, n in f.types.items() if t != "null")
    return values > 0 and sum(f.types.get(k, 0) for k in kinds) >= 0.5 * values


_NUMBERS = {"int", "long", "double", "decimal"}
# A total that is by its names a quantity times a unit price: ``total`` beside ``qty`` and
# ``unit_price``. When anything else may enter the total (a discount, tax, shipping or a fee beside
# it), the names promise no product and the relation is not checked.
_QUANTITY = (("quantity",), ("qty",))
_UNIT_PRICE = (("unit", "price"), ("price", "per", "unit"), ("unit", "cost"), ("unitprice",), ("price",))
_TOTAL = (("total",), ("line", "total"), ("total", "price"), ("extended", "price"), ("total", "amount"),
          ("subtotal",), ("line", "amount"))
_OTHER_TERMS = frozenset({"discount", "tax", "vat", "shipping", "fee", "fees", "surcharge", "adjustment", "rebate",
                          "coupon", "tip", "freight", "handling", "deposit", "credit"})


@dataclass(frozen=True)
class Product:
    """``total`` is ``quantity`` times ``unit_price`` in every document (within half a percent)."""

    total: str
    quantity: str
    unit_price: str


def products(fields: list[FieldStats]) -> list[Product]:
    """Totals that their sibling fields' names make a quantity times a unit price."""
    out: list[Product] = []
    by_parent: dict[str, list[FieldStats]] = {}
    for f in fields:
        if not f.in_array:
            by_parent.setdefault(f.path.rpartition(".")[0], []).append(f)
    for siblings in by_parent.values():
        if any(_OTHER_TERMS.intersection(words_of(f.path)) for f in siblings):
            continue
        numbers = {tuple(words_of(f.path)): f.path for f in siblings if _mostly(f, _NUMBERS)}
        found = [next((numbers[n] for n in names if n in numbers), None) for names in (_TOTAL, _QUANTITY, _UNIT_PRICE)]
        total, quantity, unit_price = found
        if total and quantity and unit_price:
            out.append(Product(total, quantity, unit_price))
    return out
