#!/usr/bin/env python3
"""Polymorphic collections: are shapes found, judged per shape, and renames told apart?

Usage: python bench/shapes.py [--size 4000] [--seed 5] [--quick]

Generates collections of its own with known truth, and audits each in-process as
``argus audit --file`` does, twice, interleaved: rules judged per shape (the default) and every
rule over the whole collection (``HeuristicPlanner(shapes=False)``, Argus before shapes):

- payments (``method``: card, SEPA transfer, wallet, voucher, each with its own fields), events
  (``ev``: eight kinds, each with its own payload under ``data``), GeoJSON features
  (``geometry.type``: Point, LineString, Polygon, whose ``coordinates`` nest one level deeper each
  and whose ``properties`` differ), each with values planted missing inside one shape;
- two collections where a field was renamed at a known time (``assignee`` to ``owner_ref`` and
  ``prio`` to ``priority_level``; ``temp_c`` to ``temperature``), the documents' ObjectIds
  written in time order;
- controls: shipments with one shape (a categorical field that predicts nothing) and a value
  planted missing collection-wide, and contacts whose two writers use ``phone`` and ``mobile``
  side by side all along (no rename).

Prints (a) precision and recall of discriminator discovery (the found field against the
generator's; None for the controls), (b) of missing-value findings (a ``null_rate`` finding is
right when its field and exact count are a planted defect's) per shape against collection-wide,
(c) of renames (the pair, and the boundary's distance from the planted time), and the documents
audited per second in each mode. Exit status: 0 when it measured, 1 when an audit failed or
sampled no document.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402
from typing import Any  # noqa: E402

from bson import ObjectId, json_util  # noqa: E402

from argus.agent.findings import Category  # noqa: E402
from argus.agent.loop import run_audit  # noqa: E402
from argus.agent.planners.heuristic import HeuristicPlanner  # noqa: E402
from argus.agent.report import AuditReport  # noqa: E402
from argus.config.settings import Settings  # noqa: E402
from argus.daemon.logs import configure_logging  # noqa: E402
from argus.daemon.sources import load_jsonl  # noqa: E402

Doc = dict[str, Any]
START = datetime(2025, 6, 1, tzinfo=UTC)
STEP = timedelta(minutes=7)


@dataclass
class Case:
    """A generated collection and what was planted in it."""

    name: str
    docs: list[Doc]
    discriminator: str | None
    missing: dict[str, int] = field(default_factory=dict)           # path -> documents planted without it
    renames: dict[tuple[str, str], datetime] = field(default_factory=dict)  # (old, new) -> when


def _oid(i: int) -> ObjectId:
    return ObjectId(int((START + i * STEP).timestamp()).to_bytes(4, "big") + i.to_bytes(8, "big"))


def _pick(rng: random.Random, docs: list[Doc], k: int, where: Callable[[Doc], bool]) -> list[Doc]:
    return rng.sample([d for d in docs if where(d)], k)


def _drop(rng: random.Random, docs: list[Doc], path: str, k: int, where: Callable[[Doc], bool]) -> None:
    for doc in _pick(rng, docs, k, where):
        *parents, leaf = path.split(".")
        for part in parents:
            doc = doc[part]
        del doc[leaf]


def payments(rng: random.Random, n: int) -> Case:
    docs: list[Doc] = []
    for i in range(n):
        method = rng.choices(["card", "sepa", "wallet", "voucher"], weights=[55, 30, 12, 3])[0]
        doc: Doc = {"_id": _oid(i), "payment_id": f"P{i:08d}", "amount": round(rng.lognormvariate(3.5, 1), 2),
                    "currency": rng.choice(["EUR", "EUR", "USD", "CHF"]), "customer": f"K{rng.randrange(n // 4):06d}",
                    "method": method}
        if method == "card":
            doc["card"] = {"last4": f"{rng.randrange(10**4):04d}", "brand": rng.choice(["visa", "mc", "amex"]),
                           "exp_month": rng.randint(1, 12)}
        elif method == "sepa":
            doc |= {"iban": f"NL{rng.randrange(10**16):016d}", "bic": rng.choice(["INGBNL2A", "RABONL2U", "ABNANL2A"]),
                    "mandate_id": f"M-{rng.randrange(10**7)}"}
        elif method == "wallet":
            doc["wallet"] = {"provider": rng.choice(["applepay", "gpay", "paypal"]),
                             "account": f"W{rng.randrange(10**9)}"}
        else:
            doc["voucher_code"] = f"V{rng.randrange(10**6):06d}"
        docs.append(doc)
    planted = {"iban": max(3, n // 400), "card.brand": max(2, n // 800)}
    _drop(rng, docs, "iban", planted["iban"], lambda d: d["method"] == "sepa")
    _drop(rng, docs, "card.brand", planted["card.brand"], lambda d: d["method"] == "card")
    return Case("payments", docs, "method", planted)


_EVENTS: dict[str, Callable[[random.Random], Doc]] = {
    "page_view": lambda r: {"url": f"/p/{r.randrange(500)}", "referrer": r.choice(["search", "direct", "ad"])},
    "click": lambda r: {"element": f"btn-{r.randrange(40)}", "x": r.randrange(1920), "y": r.randrange(1080)},
    "purchase": lambda r: {"order_ref": f"O{r.randrange(10**7)}", "total": round(r.uniform(3, 400), 2),
                           "currency": "EUR"},
    "signup": lambda r: {"plan": r.choice(["free", "pro", "team"]), "channel": r.choice(["web", "ios", "android"])},
    "search": lambda r: {"terms": f"q{r.randrange(3000)}", "hits": r.randrange(200)},
    "error": lambda r: {"code": r.choice([400, 404, 500, 503]), "message": f"E{r.randrange(90)}"},
    "login": lambda r: {"method": r.choice(["password", "sso", "otp"])},
    "logout": lambda r: {},
}


def events(rng: random.Random, n: int) -> Case:
    kinds = list(_EVENTS)
    docs: list[Doc] = []
    for i in range(n):
        kind = rng.choices(kinds, weights=[30, 25, 8, 4, 15, 3, 10, 5])[0]
        doc: Doc = {"_id": _oid(i), "ts": START + i * STEP, "user": f"u{rng.randrange(n // 5)}", "ev": kind,
                    "session": f"s{rng.randrange(n // 3)}"}
        payload = _EVENTS[kind](rng)
        if payload:
            doc["data"] = payload
        docs.append(doc)
    planted = {"data.total": max(3, n // 500), "data.terms": max(2, n // 700)}
    _drop(rng, docs, "data.total", planted["data.total"], lambda d: d["ev"] == "purchase")
    _drop(rng, docs, "data.terms", planted["data.terms"], lambda d: d["ev"] == "search")
    return Case("events", docs, "ev", planted)


def _ring(rng: random.Random, x: float, y: float) -> list[list[float]]:
    points = [[round(x + rng.uniform(-0.01, 0.01), 6), round(y + rng.uniform(-0.01, 0.01), 6)]
              for _ in range(rng.randint(3, 7))]
    return [*points, points[0]]


def features(rng: random.Random, n: int) -> Case:
    """GeoJSON (RFC 7946) Features as a collection holds them: the geometry's type implies how
    deep its coordinates nest; the properties differ by what the feature maps."""
    docs: list[Doc] = []
    for i in range(n):
        kind = rng.choices(["Point", "LineString", "Polygon"], weights=[50, 30, 20])[0]
        x, y = round(rng.uniform(4.7, 5.1), 6), round(rng.uniform(52.2, 52.5), 6)
        if kind == "Point":
            coordinates: Any = [x, y]
            properties: Doc = {"name": f"poi {rng.randrange(10**5)}", "amenity": rng.choice(["cafe", "bank", "school"])}
        elif kind == "LineString":
            coordinates = [[round(x + k * 0.001, 6), round(y + rng.uniform(-0.001, 0.001), 6)]
                           for k in range(rng.randint(2, 9))]
            properties = {"highway": rng.choice(["primary", "residential", "cycleway"]), "lanes": rng.randint(1, 4)}
        else:
            coordinates = [_ring(rng, x, y)]
            properties = {"building": rng.choice(["house", "office", "shed"]), "levels": rng.randint(1, 12)}
        docs.append({"_id": _oid(i), "type": "Feature", "geometry": {"type": kind, "coordinates": coordinates},
                     "properties": properties})
    planted = {"properties.name": max(3, n // 400)}
    _drop(rng, docs, "properties.name", planted["properties.name"], lambda d: d["geometry"]["type"] == "Point")
    return Case("geojson", docs, "geometry.type", planted)


def shipments(rng: random.Random, n: int) -> Case:
    docs = [{"_id": _oid(i), "tracking": f"TR{i:09d}", "carrier": rng.choice(["dhl", "ups", "gls", "dpd", "postnl"]),
             "weight_kg": round(rng.uniform(0.1, 30), 2), **({"note": f"n{rng.randrange(99)}"} if rng.random() < 0.3
                                                            else {})} for i in range(n)]
    planted = {"weight_kg": max(3, n // 300)}
    _drop(rng, docs, "weight_kg", planted["weight_kg"], lambda d: True)
    return Case("shipments", docs, None, planted)


def tickets(rng: random.Random, n: int) -> Case:
    agents = [f"agent-{k:03d}" for k in range(60)]
    first, second = int(n * 0.35), int(n * 0.65)
    docs = []
    for i in range(n):
        doc: Doc = {"_id": _oid(i), "subject": f"S{rng.randrange(10**6)}", "state": rng.choice(["open", "closed"])}
        doc["assignee" if i < second else "owner_ref"] = rng.choice(agents)
        doc["prio" if i < first else "priority_level"] = rng.choice([1, 2, 3, 4])
        docs.append(doc)
    return Case("tickets", docs, None, renames={("assignee", "owner_ref"): START + second * STEP,
                                                ("prio", "priority_level"): START + first * STEP})


def readings(rng: random.Random, n: int) -> Case:
    at = n // 2
    docs = []
    for i in range(n):
        doc: Doc = {"_id": _oid(i), "sensor": f"s{rng.randrange(80)}"}
        doc["temp_c" if i < at else "temperature"] = round(rng.gauss(19, 4), 1)
        docs.append(doc)
    return Case("readings", docs, None, renames={("temp_c", "temperature"): START + at * STEP})


def contacts(rng: random.Random, n: int) -> Case:
    docs = []
    for i in range(n):
        number = f"+31 6{rng.randrange(10**8):08d}"
        docs.append({"_id": _oid(i), "name": f"C{rng.randrange(10**6)}",
                     ("phone" if rng.random() < 0.6 else "mobile"): number})
    return Case("contacts", docs, None)


CASES: dict[str, Callable[[random.Random, int], Case]] = {
    "payments": payments, "events": events, "geojson": features, "shipments": shipments, "tickets": tickets,
    "readings": readings, "contacts": contacts}


def _audit(case: Case, folder: Path, *, shapes: bool) -> tuple[AuditReport, float]:
    path = folder / f"{case.name}.jsonl"
    if not path.exists():
        path.write_text("".join(json_util.dumps(d) + "\n" for d in case.docs), encoding="utf-8")
    options = Settings().audit_options()
    t0 = time.perf_counter()
    target = load_jsonl(path, max_time_ms=options.max_time_ms)
    report = run_audit(target, HeuristicPlanner(shapes=shapes), options=options)
    return report, time.perf_counter() - t0


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, tp: int, fp: int, fn: int) -> None:
        self.tp, self.fp, self.fn = self.tp + tp, self.fp + fp, self.fn + fn

    def text(self) -> str:
        precision = f"{self.tp / (self.tp + self.fp):.2f}" if self.tp + self.fp else "n/a"
        recall = f"{self.tp / (self.tp + self.fn):.2f}" if self.tp + self.fn else "n/a"
        return f"precision {precision} recall {recall} (tp {self.tp}, fp {self.fp}, fn {self.fn})"


def _missing(case: Case, report: AuditReport) -> tuple[int, int, int, list[str]]:
    found = {f.field: f.affected_count for f in report.findings if f.category == Category.NULL_RATE}
    right = {p for p, n in found.items() if case.missing.get(p) == n}
    wrong = [f"{p} {n}" for p, n in sorted(found.items()) if p not in right]
    return len(right), len(found) - len(right), len(case.missing) - len(right), wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=4000, help="documents per collection (default 4000)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="CI: 600 documents per collection")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=None)
    args = parser.parse_args(argv)
    if args.quick and args.size == 4000:
        args.size = 600
    if args.size < 200:
        parser.error("--size must be at least 200")
    configure_logging("WARNING")
    folder = Path(tempfile.mkdtemp(prefix="argus-shapes-"))
    discovery, per_shape, wide, renames = Tally(), Tally(), Tally(), Tally()
    seconds = {True: 0.0, False: 0.0}
    documents = measured = unmeasured = 0
    print(f"shapes: {args.size:,} documents per collection, seed {args.seed}, heuristic planner, in-memory engine; "
          f"each collection audited per shape and collection-wide, interleaved")
    print(f"{'collection':<10} {'discriminator (truth)':<36} {'missing per shape':<24} {'collection-wide':<24} renames")
    for name in args.cases or list(CASES):
        case = CASES[name](random.Random(f"{args.seed}:{name}"), args.size)
        report, took = _audit(case, folder, shapes=True)
        plain, took_plain = _audit(case, folder, shapes=False)
        failed = [r for r in (report, plain) if r.outcome == "failed" or not r.documents_sampled]
        if failed:
            print(f"{name:<10} MEASURED NOTHING: {failed[0].outcome}, {failed[0].documents_sampled} documents sampled"
                  f"{': ' + failed[0].error if failed[0].error else ''}")
            unmeasured += 1
            continue
        measured += 1
        documents += len(case.docs)
        seconds[True] += took
        seconds[False] += took_plain
        found = report.shapes.discriminator if report.shapes is not None else None
        discovery.add(int(found is not None and found == case.discriminator),
                      int(found is not None and found != case.discriminator),
                      int(case.discriminator is not None and found != case.discriminator))
        tp, fp, fn, wrong = _missing(case, report)
        per_shape.add(tp, fp, fn)
        tp2, fp2, fn2, wrong2 = _missing(case, plain)
        wide.add(tp2, fp2, fn2)
        pairs = {(r.old, r.new): r.boundary for r in (report.shapes.renames if report.shapes else [])}
        right = [p for p in pairs if p in case.renames]
        renames.add(len(right), len(pairs) - len(right), len(case.renames) - len(right))
        off = [abs((pairs[p] - case.renames[p]).total_seconds()) / 60 for p in right if pairs[p] is not None]
        shown = f"{found} ({case.discriminator})"
        said = ", ".join(f"{o}->{n}" for o, n in pairs) or "-"
        print(f"{name:<10} {shown:<36} {f'{tp}/{len(case.missing)} right, {fp} wrong':<24} "
              f"{f'{tp2}/{len(case.missing)} right, {fp2} wrong':<24} {said}"
              + (f" (boundary within {max(off):.0f} min)" if off else ""))
        if report.shapes is not None and report.shapes.discriminator is not None:
            print(f"  {report.shapes.summary()}")
        for label, items in (("per shape", wrong), ("collection-wide", wrong2)):
            if items:
                print(f"  wrong missing findings {label}: {', '.join(items)}")
    print(f"(a) discriminator discovery: {discovery.text()}")
    print(f"(b) missing values, per shape: {per_shape.text()}")
    print(f"(b) missing values, collection-wide: {wide.text()}")
    print(f"(c) renames: {renames.text()}")
    if measured:
        print(f"throughput: per shape {documents / seconds[True]:,.0f} documents/s, collection-wide "
              f"{documents / seconds[False]:,.0f} documents/s ({documents:,} documents each, audits interleaved)")
    if measured == 0 or unmeasured:
        print(f"nothing was measured on {unmeasured or 'any'} collection(s): an audit failed or sampled no document",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
