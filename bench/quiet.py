#!/usr/bin/env python3
"""Does the heuristic planner stay quiet on healthy data it has never seen?

Usage: python bench/quiet.py [--size 3000] [--seed 11] [--quick] [--strict]

Generates clean collections from ten domains the planner was not tuned on (flights, a bank
ledger, order lines, an app store, call logs, contacts, device telemetry, staff, shipments, a
blog), each holding the shapes healthy production data has and a monitor must not page for:
references that repeat (a customer's orders, a flight number flown daily, a parent key in a
child collection), signed quantities (early departures, debits, stock going out), legitimate
zeros (free apps, unanswered calls), optional fields (a missing phone, the top of a hierarchy),
intervals whose end is never before their start, times and codes written with digits
(``08:45``, ``B12``, ``2024-FA``), sizes from XS to XXL, large measurements unique by chance
(uptime, mileage), heavy tails, arrays of objects and nested documents. Every finding here is a
false positive. Each collection is audited in-process exactly as ``argus audit --file`` does.

Prints the findings per collection. Exit status: 0 when it measured, 1 when an audit failed or
sampled no document (that collection measured nothing), and with ``--strict`` also 1 when any collection speaks.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from datetime import timedelta  # noqa: E402
from typing import Any  # noqa: E402

from argus.daemon.logs import configure_logging  # noqa: E402
from bench.sweep import NOW, _audit  # noqa: E402

Doc = dict[str, Any]
_NAMES = ["Ana Ruiz", "Bo Chen", "Chidi Okafor", "Dana Levi", "Emil Novak", "Fatou Diallo", "Greta Lind",
          "Hugo Martin", "Ines Costa", "Jonas Berg", "Kaito Sato", "Lea Weber", "Marek Nowak", "Nia Roberts"]


def _lognormal(rng: random.Random, median: float, sigma: float) -> float:
    return math.exp(rng.gauss(math.log(median), sigma))


def _ago(rng: random.Random, days: float) -> Any:
    return NOW - timedelta(days=rng.uniform(0.01, days))


def flights(rng: random.Random, n: int) -> list[Doc]:
    routes = [f"{rng.choice(['LH', 'BA', 'AF', 'KL'])}{rng.randint(100, 2999)}" for _ in range(max(n // 25, 4))]
    docs = []
    for i in range(n):
        departed = _ago(rng, 400)
        delay = round(rng.gauss(-2, 12) if rng.random() < 0.9 else rng.expovariate(1 / 60))
        docs.append({"leg_id": f"L{i:07d}", "flight_number": rng.choice(routes), "departed_at": departed,
                     "arrived_at": departed + timedelta(minutes=rng.uniform(45, 600)), "delay_minutes": delay,
                     "scheduled_departure_next": NOW + timedelta(days=rng.uniform(1, 90)),
                     "gate": f"{rng.choice('ABCDE')}{rng.randint(1, 40)}", "boarding_time": f"{rng.randint(5, 22):02d}:"
                     f"{rng.choice(['00', '15', '30', '45'])}", "pax": rng.randint(40, 320)})
    return docs


def ledger(rng: random.Random, n: int) -> list[Doc]:
    accounts = [f"ACC-{rng.randint(10**6, 10**7 - 1)}" for _ in range(max(n // 3, 10))]
    docs = []
    for i in range(n):
        direction = rng.choices(["debit", "credit"], weights=[70, 30])[0]
        size = round(_lognormal(rng, 60, 1.1), 2)
        docs.append({"txn_id": f"T{i:08d}", "account_id": rng.choice(accounts), "direction": direction,
                     "amount": -size if direction == "debit" else size, "currency": rng.choice(["EUR", "USD", "GBP"]),
                     "balance_after": round(rng.gauss(1500, 2500), 2), "booked_at": _ago(rng, 365)})
    return docs


def order_lines(rng: random.Random, n: int) -> list[Doc]:
    skus = [f"SKU-{rng.randint(10000, 99999)}" for _ in range(max(n // 8, 10))]
    docs: list[Doc] = []
    order = 500000
    while len(docs) < n:
        order += 1
        for line in range(1, rng.choice([1, 1, 2, 3, 4, 6]) + 1):
            docs.append({"order_id": f"SO-{order}", "line_no": line, "product_sku": rng.choice(skus),
                         "quantity": rng.choices([1, 2, 3, 5, 10], weights=[60, 20, 10, 7, 3])[0],
                         "unit_price": round(_lognormal(rng, 25, 0.8), 2),
                         "discount": rng.choices([0, 5, 10, 15], weights=[75, 10, 10, 5])[0]})
    return docs[:n]


def apps(rng: random.Random, n: int) -> list[Doc]:
    return [{"app_id": f"com.example.app{i}", "price": 0.0 if rng.random() < 0.15 else
             rng.choice([0.99, 1.99, 2.99, 4.99, 9.99]), "rating": round(min(5.0, max(1.0, rng.gauss(4.1, 0.5))), 1),
             "installs": int(1000 * rng.paretovariate(1.1)), "size_label": f"{rng.randint(5, 900)} MB",
             "category": rng.choices(["games", "tools", "social", "finance", "health", "kids", "weather"],
                                     weights=[30, 20, 15, 10, 10, 10, 5])[0],
             "released_on": _ago(rng, 3000)} for i in range(n)]


def calls(rng: random.Random, n: int) -> list[Doc]:
    docs = []
    for _ in range(n):
        started = _ago(rng, 60)
        answered = rng.random() > 0.22
        seconds = round(_lognormal(rng, 180, 1.0)) if answered else 0
        docs.append({"call_id": f"{rng.getrandbits(64):016x}", "direction": rng.choice(["inbound", "outbound"]),
                     "caller": f"+{rng.choice([1, 44, 49])}{rng.randint(10**9, 10**10 - 1)}",
                     "started_at": started, "ended_at": started + timedelta(seconds=seconds + rng.randint(5, 40)),
                     "duration_seconds": seconds, "answered": answered})
    return docs


def contacts(rng: random.Random, n: int) -> list[Doc]:
    docs = []
    for i in range(n):
        name = rng.choice(_NAMES)
        doc: Doc = {"contact_id": i + 1, "name": name, "email": f"{name.split()[0].lower()}.{i}@example-mail.com",
                    "country": rng.choices(["DE", "FR", "US", "GB", "LI", "MC", "BT"],
                                           weights=[40, 20, 20, 15, 2, 2, 1])[0],
                    "shirt_size": rng.choices(["XS", "S", "M", "L", "XL", "XXL"], weights=[3, 20, 35, 30, 10, 2])[0],
                    "locale": rng.choices(["de", "en", "fr", "zh-Hant"], weights=[40, 40, 18, 2])[0]}
        if rng.random() < 0.8:
            doc["phone"] = f"+49 {rng.randint(30, 89)} {rng.randint(1000000, 9999999)}"
        if rng.random() < 0.25:
            doc["middle_name"] = rng.choice(_NAMES).split()[0]
        docs.append(doc)
    return docs


def telemetry(rng: random.Random, n: int) -> list[Doc]:
    devices = [f"dev-{rng.getrandbits(32):08x}" for _ in range(max(n // 40, 5))]
    return [{"device_id": rng.choice(devices), "recorded_at": _ago(rng, 30),
             "uptime_seconds": rng.randint(60, 90 * 86400), "battery_pct": min(100, max(1, round(rng.gauss(85, 15)))),
             "temperature_c": round(rng.gauss(8, 12), 1), "firmware": rng.choice(["1.2.10", "1.2.9", "1.3.0"]),
             "rssi_dbm": rng.randint(-110, -40)} for _ in range(n)]


def staff(rng: random.Random, n: int) -> list[Doc]:
    docs = []
    for i in range(n):
        hired = _ago(rng, 20 * 365)
        doc: Doc = {"employee_id": f"E{100000 + i}", "name": rng.choice(_NAMES),
                    "manager_id": f"E{100000 + rng.randint(0, max(n // 20, 1))}" if i > n // 20 else None,
                    "salary": round(_lognormal(rng, 62000, 0.35), -2), "hire_date": hired,
                    "term": rng.choice(["2024-FA", "2025-SP", "2025-FA"])}
        if rng.random() < 0.1:
            doc["termination_date"] = hired + (NOW - hired) * rng.uniform(0.05, 0.99)
        docs.append(doc)
    return docs


def shipments(rng: random.Random, n: int) -> list[Doc]:
    docs = []
    for i in range(n):
        shipped = _ago(rng, 200)
        doc: Doc = {"shipment_no": f"SH{i:07d}", "shipped_at": shipped,
                    "address": {"street": f"{rng.randint(1, 300)} {rng.choice(['Oak', 'Elm', 'Main', 'Hill'])} St",
                                "zip": f"{rng.randint(0, 99999):05d}", "country": rng.choice(["US", "CA", "MX"])},
                    "items": [{"sku": f"P-{rng.randint(1000, 9999)}", "qty": rng.choice([1, 1, 2, 3]),
                               "weight_kg": round(_lognormal(rng, 1.2, 0.9), 2)} for _ in range(rng.randint(1, 4))]}
        if rng.random() < 0.9:
            doc["delivered_at"] = min(shipped + timedelta(days=rng.uniform(1, 9)), NOW)
        docs.append(doc)
    return docs


def blog(rng: random.Random, n: int) -> list[Doc]:
    return [{"slug": f"post-{i}-{rng.choice(['news', 'howto', 'review'])}", "author": rng.choice(_NAMES),
             "created_at": _ago(rng, 900), "tags": rng.sample(["db", "ops", "python", "cloud", "security"],
                                                              rng.randint(0, 3)),
             "words": int(_lognormal(rng, 900, 0.6)), "comments": int(rng.paretovariate(1.5)) - 1}
            for i in range(n)]


DOMAINS: dict[str, Callable[[random.Random, int], list[Doc]]] = {
    "flights": flights, "ledger": ledger, "order_lines": order_lines, "apps": apps, "calls": calls,
    "contacts": contacts, "telemetry": telemetry, "staff": staff, "shipments": shipments, "blog": blog}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=3000, help="documents per collection (default 3000)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--quick", action="store_true", help="CI: 400 documents per collection")
    parser.add_argument("--domains", nargs="+", choices=sorted(DOMAINS), default=None)
    parser.add_argument("--strict", action="store_true", help="exit 1 when any clean collection has a finding")
    args = parser.parse_args(argv)
    if args.quick and args.size == 3000:
        args.size = 400
    if args.size < 50:
        parser.error("--size must be at least 50")
    configure_logging("WARNING")
    folder = Path(tempfile.mkdtemp(prefix="argus-quiet-"))
    started = time.perf_counter()
    speaking = measured = unmeasured = 0
    print(f"quiet: {args.size:,} clean documents per collection, seed {args.seed}, heuristic planner, "
          f"in-memory engine; every finding is a false positive")
    for name in args.domains or list(DOMAINS):
        docs = DOMAINS[name](random.Random(f"{args.seed}:{name}"), args.size)
        report, seconds = _audit(docs, name, folder)
        if report.outcome == "failed" or not report.documents_sampled:
            print(f"{name:<12} MEASURED NOTHING: {report.outcome}, {report.documents_sampled} documents sampled"
                  f"{': ' + report.error if report.error else ''}")
            unmeasured += 1
            continue
        measured += 1
        speaking += len(report.findings)
        print(f"{name:<12} {len(report.findings)} findings ({report.outcome}, {seconds:.1f} s)")
        for f in report.findings:
            print(f"  {f.field} {f.category.value} {f.severity.value} {f.affected_count}")
    print(f"collections: {measured}, findings (false positives): {speaking}, "
          f"{time.perf_counter() - started:.1f} s wall")
    if measured == 0 or unmeasured:
        print(f"nothing was measured on {unmeasured or 'any'} collection(s): an audit failed or sampled no document",
              file=sys.stderr)
        return 1
    return 1 if args.strict and speaking else 0


if __name__ == "__main__":
    raise SystemExit(main())
