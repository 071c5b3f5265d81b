#!/usr/bin/env python3
"""Prompt-size benchmark: the largest LLM planner prompt per benchmark collection, in tokens.

Usage: python bench/prompts.py [BENCH_DIR] [--only NAME ...] [--scale N] [--wide-scale N] [--steps N] [--quick]

Each NAME.jsonl in BENCH_DIR (default ../shared/bench beside the repository) is audited by the LLM
planner against the local OpenAI-compatible server, driven by the scripted ``Explorer`` (every tool,
a malformed answer, a failing query, a dismissed finding, then coverage and conclude), in privacy
mode ``shapes`` with the ``balanced`` evaluators. Every request is measured with the offline
estimate the budget uses (messages and tool schemas). Three sizes per collection: its first 1,000
documents, the file as it is, and the documents replicated (fresh ``_id``) to ``--scale``
(default 100,000; collections wider than 50 fields use ``--wide-scale``, default 30,000, to keep the
run's length in bounds). The documents are held by the in-process engine behind ``argus audit
--file``, which keeps each read's time limit itself, so ``--time-budget`` (default 900 s) bounds
every audit: an audit that runs out of it ends ``partial`` and the row says so. The prompt budget is
8,000 tokens: the target is met when every audit succeeded, every prompt stays within the budget
and a collection's largest prompt does not grow with its size. ``--quick`` is a smoke run without
BENCH_DIR: one generated 300-document collection at 300 and 1,000 documents, two scripted steps. A
run that measured nothing exits 2; one whose audit did not succeed, or whose target is missed, 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as `python bench/prompts.py`: the repository root holds `tests`, whose scripted model server
# (tests/doubles) this script drives.
ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

import argparse
import logging
import random
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import structlog
from bson import ObjectId, json_util

from argus.agent.engine import DocumentStore, MemoryCollection
from argus.agent.llm.options import LLMOptions
from argus.agent.llm.tokens import estimate_messages
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.tools import schema_sample
from argus.agent.tools.models import SchemaSampleInput
from argus.agent.tools.target import AuditTarget
from tests.doubles.explorer import Explorer
from tests.doubles.model_server import LocalChatServer

BUDGET = 8000
WIDE = 50


def _documents(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json_util.loads(line) for line in handle if line.strip()]


def _replicated(docs: list[dict[str, Any]], size: int) -> Iterator[dict[str, Any]]:
    for i in range(size):
        doc = docs[i % len(docs)]
        yield doc if i < len(docs) else {**doc, "_id": ObjectId()}


def _target(name: str, docs: list[dict[str, Any]], size: int) -> AuditTarget:
    """The documents in the in-process engine, as ``argus audit --file`` holds them: its reads keep
    their time limit (the run's remaining budget) themselves, so no read outlives the audit."""
    return AuditTarget(MemoryCollection(DocumentStore.of(_replicated(docs, size)), name=name, database="bench"),
                       connection_name="bench")


def _largest(target: AuditTarget, steps: int, budget_s: float) -> tuple[int, int, str]:
    fields = [f.path for f in schema_sample(target, SchemaSampleInput(sample_size=200)).fields if f.queryable]
    with LocalChatServer(Explorer(fields, steps=steps)) as server:
        setup = make_planner("llm", llm=LLMOptions(model="gpt-4o-mini", base_url=server.base_url,
                                                   evaluators="balanced", prompt_token_budget=BUDGET))
        report = run_audit(target, setup.planner, gates=setup.gates, llm=setup.account,
                           options=AuditOptions(privacy="shapes", time_budget_s=budget_s))
        sizes = [estimate_messages(r.body.get("messages", []), r.body.get("tools"), r.body.get("response_format"))
                 for r in server.requests]
    return max(sizes, default=0), len(sizes), report.outcome


def _quick_documents() -> list[dict[str, Any]]:
    rng = random.Random(5)
    return [{"_id": ObjectId(), "ticket": f"T-{i:05d}", "priority": rng.choice(["low", "normal", "high"]),
             "minutes_open": round(rng.lognormvariate(4, 1), 1), "agent": f"agent{rng.randint(1, 9)}@example.com"}
            for i in range(300)]


def main() -> int:
    default = Path(__file__).resolve().parents[1].parent / "shared" / "bench"
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", nargs="?", type=Path, default=default)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--scale", type=int, default=100_000)
    parser.add_argument("--wide-scale", type=int, default=30_000)
    parser.add_argument("--steps", type=int, default=8, help="scripted steps before coverage and conclude")
    parser.add_argument("--time-budget", type=float, default=900.0, help="seconds per audit (default 900)")
    parser.add_argument("--quick", action="store_true", help="smoke run on one generated collection")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if args.quick:
        args.scale, args.wide_scale, args.steps = 1000, 1000, 2
        collections = {"tickets": _quick_documents}
    else:
        collections = {path.name.removesuffix(".jsonl"): partial(_documents, path)
                       for path in sorted(args.bench.glob("*.jsonl"))
                       if not args.only or path.name.removesuffix(".jsonl") in args.only}
    if not collections:
        print(f"nothing measured: no benchmark collections (NAME.jsonl) in {args.bench}"
              f"{' matching ' + ', '.join(args.only) if args.only else ''}; see docs/benchmarks.md",
              file=sys.stderr)
        return 2
    print(f"{'collection':<11} {'fields':>6} {'docs':>8} {'largest':>8} {'calls':>6} {'outcome':>10} {'s':>6}")
    ok = True
    for name, load in collections.items():
        docs = load()
        fields = len(schema_sample(_target(name, docs, min(len(docs), 1000)),
                                   SchemaSampleInput(sample_size=1000)).fields)
        scale = args.wide_scale if fields > WIDE else args.scale
        largest: list[int] = []
        for size in sorted({min(1000, len(docs)), len(docs), scale}):
            t0 = time.perf_counter()
            target = _target(name, docs, size)
            tokens, calls, outcome = _largest(target, args.steps, args.time_budget)
            largest.append(tokens)
            print(f"{name:<11} {fields:>6} {size:>8,} {tokens:>8,} {calls:>6} {outcome:>10} "
                  f"{time.perf_counter() - t0:>6.1f}", flush=True)
            del target
            # an audit that failed, was cut short (its largest prompt may be still to come) or asked nothing
            ok &= outcome == "succeeded" and calls > 0
        spread = max(largest) - min(largest)
        ok &= max(largest) <= BUDGET and spread <= 0.02 * BUDGET
    print(f"targets met: {'yes' if ok else 'NO'} (every prompt <= {BUDGET:,} estimated tokens; a collection's "
          f"largest prompt varies by at most 2% of the budget across sizes)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
