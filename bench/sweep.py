#!/usr/bin/env python3
"""Dose-response benchmark: does a defect stay found as it grows, and does clean data stay quiet?

Usage: python bench/sweep.py [--size 3000] [--seed 7] [--set first|second|names] [--quick] [--kinds KIND ...]
                             [--rates R ...] [--strict]

Generates its own collections (a clinic's appointments, a fleet's trips, a library's loans; with
``--set second`` a supplier's invoices and a weather network's readings, where each defect is
written another way; with ``--set names`` a shop's sales, whose defects were once missed because
of a name alone: a key named for another entity than the collection's, a true/false flag named
like a later stage, a rate kept as a fraction written as a percent, weights in grams among
kilograms; its rates run from 0.1% to 20%), each
with exactly one planted defect of one kind on one field, at each rate, plus a clean copy of every
domain as the control. The clean data has heavy tails, optional fields, rare but well-formed
categories and dates in the future in fields of future events (``due_date``, ``expires_at``).
Each collection is written as Extended JSON lines and audited in-process exactly as
``argus audit --file`` does it (heuristic planner wrapped as the CLI wraps it, in-memory engine).

Prints the matrix (kind x rate), the false positives on clean fields and the control's findings.
Exit status: 0 when it measured, 1 when an audit failed or sampled no document (its cell, shown
ERR, measured nothing), and
with ``--strict`` also 1 when a cell is missed, a clean field is flagged or the control speaks.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as `python bench/sweep.py`, sys.path[0] is bench/, where bench/daemon.py would shadow the
# `daemon` package: drop that folder and make sure the repository root comes first.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402
from typing import Any  # noqa: E402

from bson import json_util  # noqa: E402

from argus.agent.loop import run_audit  # noqa: E402
from argus.agent.planners.factory import make_planner  # noqa: E402
from argus.agent.report import AuditReport  # noqa: E402
from argus.config.settings import Settings  # noqa: E402
from argus.daemon.logs import configure_logging  # noqa: E402
from argus.daemon.sources import load_jsonl  # noqa: E402

RATES = (0.001, 0.005, 0.02, 0.05, 0.10, 0.20, 0.30)
QUICK_RATES = (0.02, 0.20)
COUNT_TOLERANCE = 0.10  # relative
COUNT_SLACK = 1  # documents: 1 of 3 planted is not found
NOW = datetime.now(UTC).replace(microsecond=0)

Doc = dict[str, Any]

# --- clean domains ----------------------------------------------------------------------------

_FIRST = ["ana", "ben", "chloe", "dev", "emeka", "fatima", "goran", "hana", "ivan", "jun", "kofi", "lena", "mateo",
          "nora", "omar", "priya", "quinn", "rosa", "sven", "tariq", "uma", "vera", "wei", "ximena", "yusuf", "zoe"]
_LAST = ["ito", "khan", "lopez", "muller", "novak", "okafor", "petrov", "rossi", "silva", "tanaka", "weber", "zhang"]
_MAIL = ["mail.org", "post.net", "inbox.io", "clinic-mail.com"]


def _name(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST).title()} {rng.choice(_LAST).title()}"


def _email(rng: random.Random, i: int) -> str:
    return f"{rng.choice(_FIRST)}.{rng.choice(_LAST)}{i}@{rng.choice(_MAIL)}"


def _phone(rng: random.Random) -> str:
    country, area, exchange = rng.choice([1, 33, 44, 49]), rng.randint(200, 989), rng.randint(200, 989)
    return f"+{country} ({area}) {exchange}-{rng.randint(0, 9999):04d}"


def _past(rng: random.Random, days: int = 3 * 365) -> datetime:
    return NOW - timedelta(days=rng.uniform(1, days), seconds=rng.randint(0, 86_399))


def _money(rng: random.Random, median: float, sigma: float = 1.0) -> float:
    return round(math.exp(rng.gauss(math.log(median), sigma)), 2)  # log-normal: a heavy right tail


def appointments(rng: random.Random, n: int) -> list[Doc]:
    """A clinic's appointments."""
    docs = []
    for i in range(n):
        status = rng.choices(["completed", "scheduled", "cancelled", "no_show", "rescheduled"],
                             weights=[60, 25, 10, 4, 1])[0]
        doc: Doc = {"appointment_id": f"APT-{i:07d}", "patient_email": _email(rng, i), "patient_phone": _phone(rng),
                    "status": status, "visited_at": _past(rng), "fee": _money(rng, 80.0, 0.9),
                    "duration_min": rng.choice([10, 15, 20, 30, 45, 60, 90]), "clinician": _name(rng)}
        if rng.random() < 0.35:
            doc["follow_up_due"] = NOW + timedelta(days=rng.uniform(1, 400))
        if rng.random() < 0.2:
            doc["notes"] = rng.choice(["fasting", "interpreter", "wheelchair", "allergy: latex", "first visit"])
        docs.append(doc)
    return docs


def trips(rng: random.Random, n: int) -> list[Doc]:
    """A fleet's trips."""
    docs = []
    for i in range(n):
        distance = round(rng.paretovariate(1.6) * 3.0, 1)  # Pareto: a few very long trips
        doc: Doc = {"trip_id": f"TRP{i:08d}", "vehicle_id": f"VH-{rng.randint(1, 400):04d}",
                    "driver_email": _email(rng, i), "started_at": _past(rng, 2 * 365),
                    "distance_km": distance, "fare": _money(rng, 25.0, 1.1),
                    "passengers": rng.choices([1, 2, 3, 4, 5, 6], weights=[55, 25, 10, 6, 3, 1])[0],
                    "vehicle_class": rng.choices(["sedan", "van", "suv", "limousine"], weights=[70, 18, 11, 1])[0]}
        if rng.random() < 0.5:
            doc["tip"] = _money(rng, 4.0, 0.8)
        if rng.random() < 0.3:
            doc["promo_code"] = f"PR{rng.randint(100, 999)}"
        docs.append(doc)
    return docs


def loans(rng: random.Random, n: int) -> list[Doc]:
    """A library's loans."""
    docs = []
    for i in range(n):
        borrowed = _past(rng, 400)
        doc: Doc = {"loan_id": f"L-{i:06d}-{rng.randint(10, 99)}", "member_name": _name(rng),
                    "member_phone": _phone(rng), "borrowed_at": borrowed,
                    "due_date": borrowed + timedelta(days=rng.choice([14, 21, 28, 400, 800])),
                    "copies": rng.choices([1, 2, 3, 5, 12], weights=[80, 12, 5, 2, 1])[0],
                    "format": rng.choices(["hardcover", "paperback", "ebook", "audiobook", "dvd"],
                                          weights=[40, 35, 15, 9, 1])[0],
                    "card_expires_at": NOW + timedelta(days=rng.uniform(-30, 3 * 365))}
        if rng.random() < 0.25:
            doc["late_fee"] = _money(rng, 2.5, 1.2)
        docs.append(doc)
    return docs


def invoices(rng: random.Random, n: int) -> list[Doc]:
    """A supplier's invoices (second set)."""
    docs = []
    for i in range(n):
        issued = _past(rng, 700)
        terms = rng.choice([15, 30, 45, 60, 90])
        domain = rng.choice(["acme.com", "globex.org", "initech.net"])
        doc: Doc = {"invoice_no": f"INV-2024-{i:06d}", "customer_email": f"{rng.choice(_FIRST)}_{i}@{domain}",
                    "amount_due": round(rng.lognormvariate(5.5, 0.9), 2), "issued_at": issued,
                    "status": rng.choices(["paid", "open", "overdue", "void", "draft"], weights=[55, 20, 15, 8, 2])[0],
                    "billing_phone": f"+{rng.choice([1, 44, 61])}-{rng.randint(200, 999)}-{rng.randint(100, 999)}-"
                                     f"{rng.randint(1000, 9999)}",
                    "line_items": rng.choices([1, 2, 3, 4, 8, 20], weights=[40, 25, 15, 10, 7, 3])[0],
                    "contact_name": _name(rng), "payment_terms_days": terms}
        if rng.random() < 0.4:
            doc["due_date"] = issued + timedelta(days=terms)
        docs.append(doc)
    return docs


def readings(rng: random.Random, n: int) -> list[Doc]:
    """A weather network's sensor readings (second set): signed temperatures, bounded humidity."""
    return [{"reading_id": f"{rng.getrandbits(64):016x}", "sensor": f"S-{rng.randint(1, 60):03d}",
             "recorded_at": NOW - timedelta(minutes=rng.uniform(1, 60 * 24 * 90)),
             "temperature_c": round(rng.gauss(12, 9), 2),
             "humidity_pct": round(min(99.9, max(2.0, rng.gauss(60, 15))), 1),
             "battery_mv": rng.randint(2900, 3600),
             "firmware": rng.choices(["v1.2.0", "v1.3.1", "v2.0.0"], weights=[20, 70, 10])[0],
             "site": rng.choice(["north", "south", "east", "west", "harbour", "airport"])} for _ in range(n)]


def sales(rng: random.Random, n: int) -> list[Doc]:
    """A shop's sales (names set): an order number in a collection named for the sale, customers who
    buy a few times each, a paid flag, a tax rate kept as a fraction (1% to 60%, spread over more
    than a decade), a parcel's weight in kilograms."""
    customers = [f"CU-{rng.randint(10**5, 10**6 - 1)}" for _ in range(max(n // 5, 10))]
    return [{"order_id": f"SO-{400_000 + i}", "customer_id": rng.choice(customers),
             "amount": _money(rng, 60.0, 0.9), "sold_at": _past(rng, 700),
             "region": rng.choices(["north", "south", "east", "west"], weights=[4, 3, 2, 1])[0],
             "paid": rng.random() < 0.8,
             "tax_rate": round(min(0.6, max(0.01, math.exp(rng.gauss(math.log(0.08), 0.8)))), 4),
             "weight_kg": round(math.exp(rng.gauss(math.log(2.5), 0.4)), 3)} for i in range(n)]


DOMAINS: dict[str, Callable[[random.Random, int], list[Doc]]] = {
    "appointments": appointments, "trips": trips, "loans": loans, "invoices": invoices, "readings": readings,
    "sales": sales}

# --- defects ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Defect:
    kind: str
    domain: str
    field: str
    categories: frozenset[str]
    corrupt: Callable[[random.Random, Doc, int, list[Doc]], None]
    truth_is_groups: bool = False  # duplicates: every document of a duplicated value counts


def _set(field: str, make: Callable[[random.Random, Doc], Any]) -> Callable[[random.Random, Doc, int, list[Doc]], None]:
    def corrupt(rng: random.Random, doc: Doc, i: int, docs: list[Doc]) -> None:
        doc[field] = make(rng, doc)
    return corrupt


def _bad_email(rng: random.Random, doc: Doc) -> str:
    user = doc["driver_email"].split("@")[0]
    return rng.choice([f"{user}.mail.org", f"{user}@", f"{user} at mail.org", f"@{user}", f"{user}@@post.net"])


def _bad_phone(rng: random.Random, doc: Doc) -> str:
    digits = "".join(c for c in doc["member_phone"] if c.isdigit())
    return rng.choice([digits, f"+{digits}", f"({digits[:3]} {digits[3:]}", f"++{digits[:2]} ({digits[2:5]}",
                       f"{digits[:6]}"])


def _enum_variant(rng: random.Random, doc: Doc) -> str:
    status = doc["status"]
    return rng.choice([status.upper(), status.title(), status.replace("e", "", 1) + "e", status[:-1],
                       {"completed": "compelted", "scheduled": "sheduled", "cancelled": "canceled",
                        "no_show": "no-show", "rescheduled": "re-scheduled"}[status]])


def _duplicate(field: str) -> Callable[[random.Random, Doc, int, list[Doc]], None]:
    def corrupt(rng: random.Random, doc: Doc, i: int, docs: list[Doc]) -> None:
        doc[field] = docs[i - 1][field]  # the previous document is never corrupted (see _plant)
    return corrupt


def _status_typo(rng: random.Random, doc: Doc) -> str:
    status = doc["status"]
    swapped = status[0] + status[2] + status[1] + status[3:] if len(status) > 3 else status + "x"
    return rng.choice([status.upper(), status.capitalize(), status + " ", status[:-1], swapped])


def _bad_invoice_email(rng: random.Random, doc: Doc) -> str:
    user = doc["customer_email"].split("@")[0]
    return rng.choice([user, f"{user}@", f"{user}@acme", f"{user}@@acme.com", f"{user} @acme.com"])


def _bad_billing_phone(rng: random.Random, doc: Doc) -> str:
    digits = "".join(c for c in doc["billing_phone"] if c.isdigit())
    return rng.choice([digits, f"({digits[:3]}) {digits[3:]}", digits[:7], f"+{digits}ext"])


DEFECTS: dict[str, Defect] = {d.kind: d for d in [
    Defect("negative_amount", "trips", "fare", frozenset({"outlier_value"}),
           _set("fare", lambda r, d: -d["fare"])),
    Defect("future_past_date", "appointments", "visited_at", frozenset({"outlier_value"}),
           _set("visited_at", lambda r, d: NOW + timedelta(days=r.uniform(30, 3 * 365)))),
    Defect("number_as_string", "loans", "copies", frozenset({"type_mismatch"}),
           _set("copies", lambda r, d: str(d["copies"]))),
    Defect("enum_variant", "appointments", "status", frozenset({"enum_violation", "format_violation"}),
           _set("status", _enum_variant)),
    Defect("bad_email", "trips", "driver_email", frozenset({"format_violation"}), _set("driver_email", _bad_email)),
    Defect("bad_phone", "loans", "member_phone", frozenset({"format_violation"}), _set("member_phone", _bad_phone)),
    Defect("required_null", "trips", "vehicle_id", frozenset({"null_rate"}), _set("vehicle_id", lambda r, d: None)),
    Defect("placeholder", "loans", "member_name", frozenset({"empty_value"}),
           _set("member_name", lambda r, d: r.choice(["N/A", "n/a", "TBD", "-", "unknown", "none", "?"]))),
    Defect("duplicate_key", "trips", "trip_id", frozenset({"duplicate_value"}), _duplicate("trip_id"),
           truth_is_groups=True),
    Defect("impossible_count", "appointments", "duration_min", frozenset({"outlier_value"}),
           _set("duration_min", lambda r, d: r.choice([-30, -15, 0, 1440 * 7, 99_999]))),
]}

# The second set: the same kinds on other domains and other spellings of each defect.
SECOND: dict[str, Defect] = {d.kind: d for d in [
    Defect("negative_amount", "invoices", "amount_due", frozenset({"outlier_value"}),
           _set("amount_due", lambda r, d: -d["amount_due"])),
    Defect("future_past_date", "invoices", "issued_at", frozenset({"outlier_value"}),
           _set("issued_at", lambda r, d: NOW + timedelta(days=r.uniform(20, 900)))),
    Defect("number_as_string", "invoices", "line_items", frozenset({"type_mismatch"}),
           _set("line_items", lambda r, d: str(d["line_items"]))),
    Defect("enum_variant", "invoices", "status", frozenset({"enum_violation", "format_violation"}),
           _set("status", _status_typo)),
    Defect("bad_email", "invoices", "customer_email", frozenset({"format_violation"}),
           _set("customer_email", _bad_invoice_email)),
    Defect("bad_phone", "invoices", "billing_phone", frozenset({"format_violation"}),
           _set("billing_phone", _bad_billing_phone)),
    Defect("required_null", "readings", "sensor", frozenset({"null_rate"}), _set("sensor", lambda r, d: None)),
    Defect("placeholder", "invoices", "contact_name", frozenset({"empty_value"}),
           _set("contact_name", lambda r, d: r.choice(["N/A", "unknown", "-", "", "TBD", "null", "?"]))),
    Defect("duplicate_key", "invoices", "invoice_no", frozenset({"duplicate_value"}), _duplicate("invoice_no"),
           truth_is_groups=True),
    Defect("impossible_count", "invoices", "line_items", frozenset({"outlier_value"}),
           _set("line_items", lambda r, d: r.choice([-1, -4, 100_000]))),
    Defect("impossible_range", "readings", "humidity_pct", frozenset({"outlier_value"}),
           _set("humidity_pct", lambda r, d: r.choice([-5.0, 140.0, 999.0]))),
    Defect("end_before_start", "invoices", "due_date", frozenset({"cross_field"}),
           _set("due_date", lambda r, d: d["issued_at"] - timedelta(days=r.choice([1, 7, 30])))),
]}
# The names set: defects a name alone once hid (issue 20).
NAMES: dict[str, Defect] = {d.kind: d for d in [
    Defect("duplicate_key", "sales", "order_id", frozenset({"duplicate_value"}), _duplicate("order_id"),
           truth_is_groups=True),
    Defect("null_flag", "sales", "paid", frozenset({"null_rate"}), _set("paid", lambda r, d: None)),
    Defect("percent_rate", "sales", "tax_rate", frozenset({"outlier_value"}),
           _set("tax_rate", lambda r, d: round(d["tax_rate"] * 100, 2))),
    Defect("grams_weight", "sales", "weight_kg", frozenset({"outlier_value"}),
           _set("weight_kg", lambda r, d: round(d["weight_kg"] * 1000, 1))),
]}
SETS: dict[str, dict[str, Defect]] = {"first": DEFECTS, "second": SECOND, "names": NAMES}
SET_RATES: dict[str, tuple[float, ...]] = {"names": (0.001, 0.005, 0.02, 0.05, 0.10, 0.20)}


def _plant(defect: Defect, rate: float, size: int, seed: int) -> tuple[list[Doc], int]:
    """The domain's clean documents with ``rate`` of them corrupted; returns them and the true count."""
    rng = random.Random(f"{seed}:{defect.kind}:{rate}")
    docs = DOMAINS[defect.domain](rng, size)
    planted = max(1, round(rate * size))
    # Odd positions only, so a duplicate's original (the even document before it) stays intact.
    positions = rng.sample(range(1, size, 2), min(planted, size // 2))
    for i in positions:
        defect.corrupt(rng, docs[i], i, docs)
    return docs, len(positions) * (2 if defect.truth_is_groups else 1)


# --- auditing and scoring -------------------------------------------------------------------------


def _audit(docs: list[Doc], name: str, folder: Path) -> tuple[AuditReport, float]:
    """Audit ``docs`` as ``argus audit --file NAME.jsonl`` would (no store), in this process."""
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json_util.dumps(d) + "\n" for d in docs), encoding="utf-8")
    options = Settings().audit_options()
    t0 = time.perf_counter()
    target = load_jsonl(path, max_time_ms=options.max_time_ms)
    report = run_audit(target, make_planner("heuristic").planner, options=options)
    return report, time.perf_counter() - t0


def count_ok(found: int, truth: int) -> bool:
    return abs(found - truth) <= max(COUNT_SLACK, COUNT_TOLERANCE * truth)


# A cell whose audit failed or sampled no document measured nothing (shown as ERR).
UNMEASURED = ("failed", "sampled nothing")

@dataclass
class Cell:
    kind: str
    rate: float
    truth: int
    found: bool
    count: int | None  # the best matching finding's count (field and category match), None when none
    off_target: list[str]  # findings on other (clean) fields: false positives
    other_category: list[str]  # findings on the defect's field in a category that does not fit it
    outcome: str
    seconds: float

    def text(self) -> str:
        if self.outcome in UNMEASURED:
            return "ERR"
        mark = "Y" if self.found else ("c" if self.count is not None else "-")
        return f"{mark} {self.count if self.count is not None else '·'}/{self.truth}"


def _score(defect: Defect, rate: float, truth: int, report: AuditReport, seconds: float) -> Cell:
    on_field = [f for f in report.findings if f.field == defect.field and f.category.value in defect.categories]
    best = min(on_field, key=lambda f: abs(f.affected_count - truth), default=None)
    # A relation between two fields is about both: a due date now before a corrupted issue date
    # is the planted defect seen from the other side, not a false positive on due_date.
    about = {f.id for f in report.findings if f.field == defect.field or (
        f.category.value == "cross_field" and f'"${defect.field}"' in json.dumps(f.evidence_query))}
    off = [f"{f.field} {f.category.value} {f.affected_count}" for f in report.findings if f.id not in about]
    other = [f"{f.field} {f.category.value} {f.affected_count}" for f in report.findings
             if f.id in about and (f.field != defect.field or f.category.value not in defect.categories)]
    return Cell(defect.kind, rate, truth, best is not None and count_ok(best.affected_count, truth),
                best.affected_count if best else None, off, other,
                report.outcome if report.documents_sampled else "sampled nothing", seconds)


def _rate_label(rate: float) -> str:
    return f"{rate * 100:g}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=3000, help="documents per collection (default 3000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help=f"CI: 400 documents, rates "
                                                             f"{', '.join(map(_rate_label, QUICK_RATES))}")
    parser.add_argument("--set", choices=sorted(SETS), default="first",
                        help="first: appointments, trips, loans (default); second: invoices and sensor readings, "
                             "with other spellings of each defect; names: a shop's sales, defects a name once hid")
    parser.add_argument("--kinds", nargs="+", choices=sorted({k for kinds in SETS.values() for k in kinds}),
                        default=None,
                        help="only these defect kinds")
    parser.add_argument("--rates", nargs="+", type=float, default=None, help="fractions, e.g. 0.02 0.2")
    parser.add_argument("--no-control", action="store_true", help="skip the clean control collections")
    parser.add_argument("--strict", action="store_true", help="exit 1 unless every cell is found, no clean field "
                                                              "is flagged and the control is silent")
    args = parser.parse_args(argv)
    size = 400 if args.quick and args.size == 3000 else args.size
    rates = tuple(args.rates) if args.rates else (QUICK_RATES if args.quick else SET_RATES.get(args.set, RATES))
    if size < 20 or any(not 0 < r < 0.5 for r in rates):
        parser.error("--size must be at least 20 and every rate between 0 and 0.5")
    defects = SETS[args.set]
    kinds = args.kinds or list(defects)
    if any(k not in defects for k in kinds):
        parser.error(f"the {args.set} set has the kinds {', '.join(defects)}")
    configure_logging("WARNING")
    folder = Path(tempfile.mkdtemp(prefix="argus-sweep-"))
    started = time.perf_counter()

    cells: dict[tuple[str, float], Cell] = {}
    for kind in kinds:
        defect = defects[kind]
        for rate in rates:
            docs, truth = _plant(defect, rate, size, args.seed)
            report, seconds = _audit(docs, f"{defect.domain}_{kind}_{rate:g}", folder)
            cells[(kind, rate)] = _score(defect, rate, truth, report, seconds)
    control: dict[str, AuditReport] = {}
    if not args.no_control:
        for domain in sorted({d.domain for d in defects.values()}):
            make = DOMAINS[domain]
            control[domain], _ = _audit(make(random.Random(f"{args.seed}:control:{domain}"), size),
                                        f"{domain}_clean", folder)

    print(f"sweep: {size:,} documents per collection, seed {args.seed}, heuristic planner, in-memory engine")
    print(f"found (Y) = a finding on the defect's field, in one of its categories, whose affected count is within "
          f"max({COUNT_SLACK}, {COUNT_TOLERANCE:.0%}) of the truth;")
    print("c = field and category match but the count is outside that tolerance; - = no such finding; "
          "cells read 'count/truth'")
    width = max(10, *(len(c.text()) + 1 for c in cells.values())) if cells else 10
    print(f"{'kind':<18} {'field':<22}" + "".join(f"{_rate_label(r):>{width}}" for r in rates) + "   found")
    for kind in kinds:
        row = [cells[(kind, r)] for r in rates]
        defect = defects[kind]
        print(f"{kind:<18} {defect.domain + '.' + defect.field:<22}" + "".join(f"{c.text():>{width}}" for c in row)
              + f"   {sum(c.found for c in row)}/{len(row)}")
    found = sum(c.found for c in cells.values())
    print(f"cells found: {found}/{len(cells)}")

    false_positives = [(c, fp) for c in cells.values() for fp in c.off_target]
    print(f"false positives on clean fields: {len(false_positives)}")
    for c, fp in false_positives:
        print(f"  {c.kind} at {_rate_label(c.rate)}: {fp}")
    other_category = [(c, text) for c in cells.values() for text in c.other_category]
    print(f"findings on the defect's field in another category (not counted as found): {len(other_category)}")
    for c, text in other_category:
        print(f"  {c.kind} at {_rate_label(c.rate)}: {text}")
    speaking = [(d, f) for d, r in control.items() for f in r.findings]
    if control:
        print(f"control (clean {', '.join(control)}): {len(speaking)} findings")
        for domain, f in speaking:
            print(f"  {domain}.{f.field} {f.category.value} {f.severity.value} {f.affected_count}")
    audits = len(cells) + len(control)
    failed = [c for c in cells.values() if c.outcome in UNMEASURED] + [
        r for r in control.values() if r.outcome == "failed" or not r.documents_sampled]
    print(f"audits: {audits} ({len(failed)} failed), {time.perf_counter() - started:.1f} s wall, "
          f"{sum(c.seconds for c in cells.values()) / max(len(cells), 1):.2f} s per audit")
    if failed:
        print(f"sweep: {len(failed)} audit(s) failed or sampled no document: their cells measured nothing",
              file=sys.stderr)
        return 1
    if args.strict and (found < len(cells) or false_positives or speaking):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
