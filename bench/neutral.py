#!/usr/bin/env python3
"""Neutral-names benchmark: is every defect whose kind needs no name found without names?

Usage: python bench/neutral.py [--size 3000] [--seed 7] [--quick] [--kinds KIND ...] [--rates R ...]
                               [--all-kinds] [--strict]

``--quick`` (CI): 400 documents, the first and names sets, one rate (5%).

Takes the generated domains and planted defects of ``bench/sweep.py`` (all three sets) and audits
each collection twice: as generated, and with every field renamed to a neutral name (``f1``,
``f2``, … at every level, in order of first appearance) and the collection named ``t``. The
defects whose kind needs no name's meaning (nulls, types, duplicates, value-set typos, formats,
placeholders, units written another way) must be found in both, each with its count (within the
sweep's tolerance, ``=`` marks the exact count), and nothing else may be reported: findings on
other fields, and on the clean domains (renamed too), are false positives. ``--all-kinds`` adds
the kinds that do need a name (a sign, a range, a past event, an interval), for information.

Prints one row per kind, named beside neutral: cells found of the rates, exact counts, false
positives; then every miss and false positive. Exit status: 0 when it measured, 1 when an audit
failed or sampled no document (its cell, shown ERR, measured nothing), and with ``--strict``
also 1 when a name-free kind is missed without names or a false positive appears without names.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [str(_HERE.parent)] + [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import random  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

from argus.daemon.logs import configure_logging  # noqa: E402
from bench.sweep import DOMAINS, SETS, UNMEASURED, Cell, Defect, Doc, _audit, _plant, _score  # noqa: E402

RATES = (0.001, 0.005, 0.02, 0.05, 0.10, 0.20)
QUICK_RATES = (0.05,)
QUICK_SETS = ("first", "names")  # --quick: one domain set of each kind of defect, one rate
# Kinds that need a name's meaning (a sign, a range, that an event has happened, which dates pair):
# without names the values alone cannot say a negative fare or a humidity of 140 is wrong at every rate.
NEEDS_A_NAME = {"negative_amount", "future_past_date", "impossible_count", "impossible_range", "end_before_start"}


def _defects(all_kinds: bool, sets: tuple[str, ...] = tuple(SETS)) -> list[Defect]:
    return [defect for name in sets for kind, defect in SETS[name].items() if all_kinds or kind not in NEEDS_A_NAME]


class Renamer:
    """Every key at every level renamed to ``f1``, ``f2``, … in order of first appearance."""

    def __init__(self, docs: list[Doc]) -> None:
        self.names: dict[str, str] = {}
        for doc in docs:
            self._learn(doc, "")

    def _learn(self, value: Any, prefix: str) -> None:
        if isinstance(value, list):
            for item in value:
                self._learn(item, prefix)
        elif isinstance(value, dict):
            for key, inner in value.items():
                path = prefix + key
                self.names.setdefault(path, f"f{len(self.names) + 1}")
                self._learn(inner, path + ".")

    def doc(self, value: Any, prefix: str = "") -> Any:
        if isinstance(value, list):
            return [self.doc(item, prefix) for item in value]
        if isinstance(value, dict):
            return {self.names[prefix + k]: self.doc(v, prefix + k + ".") for k, v in value.items()}
        return value

    def path(self, path: str) -> str:
        parts = path.split(".")
        return ".".join(self.names[".".join(parts[: i + 1])] for i in range(len(parts)))


def _run(defect: Defect, rate: float, size: int, seed: int, folder: Path) -> tuple[Cell, Cell]:
    docs, truth = _plant(defect, rate, size, seed)
    base = f"{defect.domain}-{defect.kind}-{rate:g}"
    named_dir, neutral_dir = folder / f"{base}-named", folder / f"{base}-neutral"
    named_dir.mkdir()
    neutral_dir.mkdir()
    report, seconds = _audit(docs, defect.domain, named_dir)
    named = _score(defect, rate, truth, report, seconds)
    renamer = Renamer(docs)
    report, seconds = _audit([renamer.doc(d) for d in docs], "t", neutral_dir)
    neutral = _score(dataclasses.replace(defect, field=renamer.path(defect.field)), rate, truth, report, seconds)
    return named, neutral


def _control(domain: str, size: int, seed: int, folder: Path) -> tuple[list[str], list[str], int]:
    """The named and the neutral audit's findings on a clean copy, and how many of the two measured nothing."""
    docs = DOMAINS[domain](random.Random(f"{seed}:control:{domain}"), size)
    (folder / f"control-{domain}-named").mkdir()
    (folder / f"control-{domain}-neutral").mkdir()
    named, _ = _audit(docs, domain, folder / f"control-{domain}-named")
    renamer = Renamer(docs)
    neutral, _ = _audit([renamer.doc(d) for d in docs], "t", folder / f"control-{domain}-neutral")
    back = {v: k for k, v in renamer.names.items()}
    return ([f"{f.field} {f.category.value} {f.affected_count}" for f in named.findings],
            [f"{f.field} ({back.get(f.field, '?')}) {f.category.value} {f.affected_count}" for f in neutral.findings],
            sum(r.outcome == "failed" or not r.documents_sampled for r in (named, neutral)))


def _exact(cell: Cell) -> bool:
    return cell.count == cell.truth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=3000, help="documents per collection (default 3000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="CI: 400 documents, rate 5%%, the first and names sets")
    parser.add_argument("--kinds", nargs="+", default=None, help="only these defect kinds (all sets)")
    parser.add_argument("--rates", nargs="+", type=float, default=None, help="fractions, e.g. 0.02 0.2")
    parser.add_argument("--all-kinds", action="store_true", help="also the kinds that need a name's meaning")
    parser.add_argument("--strict", action="store_true", help="exit 1 unless every name-free cell is found "
                                                              "without names and nothing else is reported")
    args = parser.parse_args(argv)
    size = 400 if args.quick and args.size == 3000 else args.size
    rates = tuple(args.rates) if args.rates else (QUICK_RATES if args.quick else RATES)
    if size < 20 or any(not 0 < r < 0.5 for r in rates):
        parser.error("--size must be at least 20 and every rate between 0 and 0.5")
    sets = QUICK_SETS if args.quick else tuple(SETS)
    chosen = [d for d in _defects(args.all_kinds or bool(args.kinds), sets) if not args.kinds or d.kind in args.kinds]
    if not chosen:
        parser.error("no such kind; the sets have " + ", ".join(sorted({k for d in SETS.values() for k in d})))
    configure_logging("WARNING")
    folder = Path(tempfile.mkdtemp(prefix="argus-neutral-"))
    started = time.perf_counter()
    rows: list[tuple[Defect, list[Cell], list[Cell]]] = []
    for defect in chosen:
        pairs = [_run(defect, rate, size, args.seed, folder) for rate in rates]
        rows.append((defect, [p[0] for p in pairs], [p[1] for p in pairs]))
    domains = sorted({d.domain for d in chosen})
    controls = {domain: _control(domain, size, args.seed, folder) for domain in domains}

    print(f"neutral names: {size:,} documents per collection, seed {args.seed}, rates "
          f"{', '.join(f'{r * 100:g}%' for r in rates)}; without names every field is f1, f2, … and the collection t")
    print("found = cells whose finding (field and category) counts the truth within the sweep's tolerance; "
          "exact = cells counted exactly; fp = findings on other fields")
    print("a missed cell reads '- ·/T' (no finding on the field in a fitting category; T planted) or 'c N/T' (a "
          "fitting finding counting N, outside the tolerance); ERR: the audit failed or sampled nothing")
    print(f"{'kind':<18} {'field':<24} {'named: found exact  fp':>24} {'neutral: found exact  fp':>26}")
    totals = {"named": [0, 0, 0], "neutral": [0, 0, 0]}
    every = {"named": [0, 0, 0], "neutral": [0, 0, 0]}  # the * kinds too: values alone should find them (issue 31)
    cells = 0
    for defect, named, neutral in rows:
        label = defect.kind + (" *" if defect.kind in NEEDS_A_NAME else "")
        out = []
        for side, row in (("named", named), ("neutral", neutral)):
            found, exact = sum(c.found for c in row), sum(_exact(c) for c in row)
            fps = sum(len(c.off_target) for c in row)
            out.append(f"{found:>2}/{len(row):<2} {exact:>4}/{len(row):<2} {fps:>3}")
            every[side] = [every[side][0] + found, every[side][1] + exact, every[side][2] + fps]
            if defect.kind not in NEEDS_A_NAME:
                totals[side][0] += found
                totals[side][1] += exact
                totals[side][2] += fps
        cells += len(named) if defect.kind not in NEEDS_A_NAME else 0
        print(f"{label:<18} {defect.domain + '.' + defect.field:<24} {out[0]:>24} {out[1]:>26}")
    named_ctl = sum(len(c[0]) for c in controls.values())
    neutral_ctl = sum(len(c[1]) for c in controls.values())
    cols = [f"{t[0]}/{cells} {t[1]:>4}/{cells} {t[2]:>3}" for t in (totals["named"], totals["neutral"])]
    print(f"{'name-free total':<43} {cols[0]:>24} {cols[1]:>26}")
    if any(d.kind in NEEDS_A_NAME for d, _, _ in rows):
        all_cells = sum(len(named) for _, named, _ in rows)
        cols = [f"{t[0]}/{all_cells} {t[1]:>4}/{all_cells} {t[2]:>3}" for t in (every["named"], every["neutral"])]
        print(f"{'every kind, * included':<43} {cols[0]:>24} {cols[1]:>26}")
    print(f"control (clean {', '.join(domains)}): named {named_ctl} findings, neutral {neutral_ctl} findings")
    if any(d.kind in NEEDS_A_NAME for d, _, _ in rows):
        print("* needs a name's meaning (sign, range, past event, interval): shown for information, not in the total")
    for defect, named, neutral in rows:
        for side, row in (("named", named), ("neutral", neutral)):
            for c in row:
                if not c.found:
                    print(f"  missed {side}: {defect.kind} {defect.domain}.{defect.field} at {c.rate * 100:g}%: "
                          f"{c.text()}")
                for fp in c.off_target:
                    print(f"  false positive {side}: {defect.kind} {defect.domain}.{defect.field} at "
                          f"{c.rate * 100:g}%: {fp}")
    for domain, (named_fp, neutral_fp, _) in controls.items():
        for text in named_fp:
            print(f"  control named {domain}: {text}")
        for text in neutral_fp:
            print(f"  control neutral {domain}: {text}")
    audits = 2 * sum(len(r[1]) for r in rows) + 2 * len(controls)
    controls_failed = sum(c[2] for c in controls.values())
    failed = [c for r in rows for c in (*r[1], *r[2]) if c.outcome in UNMEASURED]
    print(f"audits: {audits} ({len(failed) + controls_failed} failed or sampled nothing), "
          f"{time.perf_counter() - started:.1f} s wall")
    if failed or controls_failed:
        print(f"neutral: {len(failed) + controls_failed} audit(s) failed or sampled no document: measured nothing "
              f"there", file=sys.stderr)
        return 1
    missed = totals["neutral"][0] < cells
    if args.strict and (missed or totals["neutral"][2] or neutral_ctl):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
