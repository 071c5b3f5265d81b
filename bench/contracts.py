#!/usr/bin/env python3
"""The contract round trip on every shared bench collection: `argus contract suggest` drafts a contract
from the dirty collection, the draft is read back as a file, and fed back with --contract it must
find the planted defects (declared findings only) and pass on a clean copy of the data.

Clean copies: the documents carrying a planted defect are removed. The truth files name the defects
(field, category, count), not the documents, so the documents are those the inferred audit's finding
on each defect's field and category matches (its evidence query, run as is); the row says how many
documents that removed against the truth's count, and which defects it could not remove (a defect in
every document, as the beers' units, has no clean subset).

Usage: python bench/contracts.py [PATH/TO/bench] [--only NAME ...] [--quick] [--time-budget S]
Exits 1 when it measured nothing: no collection with a truth file, or an audit (the dirty
collection's or the clean copy's, with the contract) failed, ended partial or sampled no document.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import argparse
import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import mongomock
from bson import json_util

from argus.agent.clock import ManualClock
from argus.agent.contracts.suggest import draft_contract
from argus.agent.ejson import decode
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.report import AuditReport
from argus.config.contracts import load_contract
from argus.daemon.logs import configure_logging
from argus.daemon.sources import load_jsonl

NOW = datetime(2026, 11, 1, tzinfo=UTC)
OPTIONS = AuditOptions(time_budget_s=3600, max_iterations=2000, privacy="full")


def _unmeasured(report: AuditReport, what: str) -> list[str]:
    """Why ``report`` measured nothing, or nothing."""
    if report.outcome != "succeeded" or not report.documents_sampled:
        return [f"{what} audit ended {report.outcome} ({report.termination_reason}) with "
                f"{report.documents_sampled} documents sampled"]
    return []


def _norm(path: str) -> str:
    return ".".join(p for p in path.replace("$", "").split(".") if p and not p.isdigit()).lower()


def _audit(path: Path, name: str, contract: Any = None) -> AuditReport:
    setup = make_planner("heuristic", clock=ManualClock(NOW))
    return run_audit(load_jsonl(path, collection=name), setup.planner, options=OPTIONS, gates=setup.gates,
                     clock=ManualClock(NOW), contract=contract)


def _matches(finding: dict[str, Any], defect: dict[str, Any]) -> bool:
    fields = {_norm(defect["field"])} | {_norm(f) for f in defect.get("alt_fields", [])}
    return _norm(finding["field"]) in fields and ("*" in defect["accept"] or finding["category"] in defect["accept"])


def _clean_copy(path: Path, name: str, truth: dict[str, Any], out: Path) -> tuple[int, list[str]]:
    """``path`` without the documents the inferred finding of each defect matches; how many were
    removed, and the defects none (or every document) matched."""
    report = _audit(path, name)
    docs = [json_util.loads(line) for line in path.read_text().splitlines() if line.strip()]
    coll: Any = mongomock.MongoClient()["c"][name]
    coll.insert_many([dict(d, __line=i) for i, d in enumerate(docs)])
    drop: set[int] = set()
    kept_defects: list[str] = []
    for defect in truth["defects"]:
        found = [f for f in report.findings if _matches(f.model_dump(mode="json"), defect)]
        lines = {d["__line"] for f in found for d in coll.find(decode(f.evidence_query), {"__line": 1})}
        if not lines or len(lines) >= len(docs):
            kept_defects.append(f"{defect['field']}/{defect['category']}")
            continue
        drop |= lines
    with out.open("w") as handle:
        for i, doc in enumerate(docs):
            if i not in drop:
                handle.write(json_util.dumps(doc) + "\n")
    return len(drop), kept_defects


def _measure(name: str, path: Path, truth: dict[str, Any], scratch: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    target = load_jsonl(path, collection=name)
    target.cap_time_with(lambda: 3_600_000)  # an hour, as the audits here: the in-memory engine is slow
    draft = draft_contract(target, now=NOW, privacy="full")
    contract_path = scratch / f"{name}.contract.yaml"
    contract_path.write_text(draft.yaml(source=f"files.{name}", now=NOW))
    contract = load_contract(contract_path, shown_as=contract_path.name, collection=name)
    dirty = _audit(path, name, contract)
    declared = [f.model_dump(mode="json") for f in dirty.findings if f.rule is not None]
    found, counted, missed = 0, 0, []
    for defect in truth["defects"]:
        hits = [f for f in declared if _matches(f, defect)]
        if not hits:
            missed.append(f"{defect['field']}/{defect['category']}")
            continue
        found += 1
        targets = [defect["affected"], *([defect["affected_alt"]] if "affected_alt" in defect else [])]
        counted += any(abs(h["affected_count"] - t) <= 0.1 * t for h in hits for t in targets)
    clean_path = scratch / f"{name}.clean.jsonl"
    removed, unremoved = _clean_copy(path, name, truth, clean_path)
    clean = _audit(clean_path, name, contract)
    assert dirty.contract is not None and clean.contract is not None
    failed_clean = [f"{r.field} {r.rule} ({r.count})" for r in clean.contract.rules if r.result == "failed"]
    return {"collection": name, "documents": dirty.collection_size, "rules": len(contract.checks),
            "broken_today": sum(1 for d in draft.rules if d.broken), "draft_passes": draft.passes,
            "defects": len(truth["defects"]), "found": found, "counts_within_10pct": counted, "missed": missed,
            "audit_passes": dirty.database_cost.passes, "dirty_outcome": dirty.outcome,
            "dirty_summary": dirty.contract.summary(), "removed": removed,
            "planted": sum(d["affected"] for d in truth["defects"]), "not_removed": unremoved,
            "clean_summary": clean.contract.summary(), "clean_failed": failed_clean,
            "unmeasured": _unmeasured(dirty, "the dirty collection's") + _unmeasured(clean, "the clean copy's"),
            "wall_s": round(time.perf_counter() - t0, 1)}


def _quick(scratch: Path) -> tuple[Path, dict[str, Any]]:
    """A small generated collection with three planted defects and its truth."""
    rng = random.Random(3)
    docs = []
    for i in range(1500):
        docs.append({"ticket_id": f"T-{100000 + i}", "queue": rng.choice(["billing", "tech", "sales"]),
                     "minutes": rng.randint(1, 300), "opened_at": NOW - timedelta(days=rng.uniform(1, 300))})
    for d in docs[:15]:
        d["queue"] = "Billing "
    for d in docs[100:112]:
        d["minutes"] = -d["minutes"]
    for k in range(10):
        docs[200 + 2 * k + 1]["ticket_id"] = docs[200 + 2 * k]["ticket_id"]
    path = scratch / "tickets.jsonl"
    path.write_text("\n".join(json_util.dumps(d) for d in docs) + "\n")
    truth = {"collection": "tickets", "defects": [
        {"field": "queue", "category": "enum_violation", "accept": ["enum_violation"], "affected": 15},
        {"field": "minutes", "category": "outlier_value", "accept": ["outlier_value"], "affected": 12},
        {"field": "ticket_id", "category": "duplicate_value", "accept": ["duplicate_value"], "affected": 10,
         "affected_alt": 20}]}
    return path, truth


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench", nargs="?", type=Path, default=_HERE.parent.parent / "shared" / "bench")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--quick", action="store_true", help="a smoke run on a small generated collection")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    parser.add_argument("--time-budget", type=float, default=3600.0, help="each audit's budget in seconds")
    args = parser.parse_args(argv)
    global OPTIONS
    OPTIONS = OPTIONS.model_copy(update={"time_budget_s": args.time_budget})
    configure_logging("WARNING")
    rows = []
    with tempfile.TemporaryDirectory(prefix="argus-contracts-") as tmp:
        scratch = Path(tmp)
        if args.quick:
            sources = [_quick(scratch)]
        else:
            sources = [(p, json.loads(p.with_name(p.stem + ".truth.json").read_text()))
                       for p in sorted(args.bench.glob("*.jsonl")) if p.with_name(p.stem + ".truth.json").exists()
                       and (args.only is None or p.stem in args.only)]
        for path, truth in sources:
            row = _measure(path.stem, path, truth, scratch)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{row['collection']:<10} {row['documents']:>6,} docs  drafted {row['rules']:>4} rules "
                      f"({row['broken_today']} broken today, {row['draft_passes']} passes)  "
                      f"planted found {row['found']}/{row['defects']} (counts within 10%: "
                      f"{row['counts_within_10pct']})  audit passes {row['audit_passes']}  "
                      f"clean copy (-{row['removed']:,} docs, planted {row['planted']:,}): {row['clean_summary']}  "
                      f"{row['wall_s']}s", flush=True)
                for what, items in (("NOT MEASURED", row["unmeasured"]), ("missed", row["missed"]),
                                    ("failed on the clean copy", row["clean_failed"]),
                                    ("no clean subset for", row["not_removed"])):
                    if items:
                        print(f"    {what}: {', '.join(items)}", flush=True)
    if not rows:
        print(f"nothing measured: no collection with a truth file in {args.bench}", file=sys.stderr)
        return 1
    unmeasured = [row["collection"] for row in rows if row["unmeasured"]]
    if unmeasured:
        print(f"nothing measured on {', '.join(unmeasured)}: an audit did not succeed or sampled no document",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
