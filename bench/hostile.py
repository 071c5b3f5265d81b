#!/usr/bin/env python3
"""Hostile-input benchmark: every guard payload refused, every hostile document audited in budget.

Generates its own inputs: the hostile filter/projection/pipeline corpus of tests/security, and
Extended JSON lines files of hostile documents (deep nesting, DBRef and code values, dates
outside years 1-9999, an array of 100,000 objects, strings of 150,000 characters, an invalid
$oid). Each file is audited with the real CLI (`argus audit --file`, heuristic planner) in its own
process. Prints payloads refused / total, then per file: outcome and wall time, and the slowest.
Exits non-zero when a payload passes or raises anything else, when a file ends in `internal
error`, a hang past the budget, or no `file:line` error where one is due, or when nothing ran.

Usage: python bench/hostile.py [--budget 20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _corpus() -> tuple[int, int, list[str]]:
    sys.path.insert(0, str(ROOT))
    from agent.ejson import decode
    from agent.errors import QueryRefused
    from tests.security.test_guard_corpus import CHECKS, CORPUS

    refused, problems = 0, []
    for kind, payload, words in CORPUS:
        try:
            CHECKS[kind](decode(payload))
            problems.append(f"{kind} passed: {str(payload)[:80]}")
        except QueryRefused as exc:
            refused += 1
            if words not in str(exc):
                problems.append(f"{kind} refused without naming {words!r}: {exc}")
        except Exception as exc:  # anything else is what this benchmark looks for
            problems.append(f"{kind} raised {type(exc).__name__}")
    return refused, len(CORPUS), problems


def _deep(levels: int, arrays: bool) -> str:
    return "[" * levels + "1" + "]" * levels if arrays else '{"x": ' * levels + "1" + "}" * levels


def _files() -> dict[str, tuple[list[str], str | None]]:
    """name → (lines, expected file:line error suffix or None for a report)."""
    far = [{"$date": {"$numberLong": "-62135596800001"}}, {"$date": {"$numberLong": "253402300800000"}}]
    return {
        "nested_objects_1000": ([f'{{"_id": 1, "a": {_deep(1000, False)}}}'], ":1: the document is nested deeper"),
        "nested_arrays_1000": ([f'{{"_id": 1, "a": {_deep(1000, True)}}}'], ":1: the document is nested deeper"),
        "nested_objects_100": ([f'{{"_id": {i}, "a": {_deep(99, False)}}}' for i in range(50)], None),
        "dbref_values": ([json.dumps({"_id": i, "owner": {"$ref": "users", "$id": i, "$db": "app"}})
                          for i in range(200)], None),
        "code_values": ([json.dumps({"_id": i, "fn": {"$code": "return 1"}, "s": {"$code": "x", "$scope": {"x": i}}})
                         for i in range(200)], None),
        "far_dates": ([json.dumps({"_id": i, "d": far[i % 2]}) for i in range(200)], None),
        "array_100k_objects": ([json.dumps({"_id": 1, "items": [{"q": i, "s": "x"} for i in range(100_000)]})], None),
        "spaces_150k": ([json.dumps({"_id": i, "s": " " * 150_000 + ("x" if i % 2 else "")}) for i in range(10)],
                        None),
        "invalid_oid": (['{"_id": 1}', '{"_id": {"$oid": "zz"}}'], ":2: not valid Extended JSON"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0, help="audit time budget in seconds")
    parser.add_argument("--quick", action="store_true", help="a smoke run: the guard corpus and two small files")
    args = parser.parse_args()
    files = {k: v for k, v in _files().items() if not args.quick or k in ("invalid_oid", "dbref_values")}
    refused, total, problems = _corpus()
    print(f"guard corpus: {refused}/{total} payloads refused")
    audited, slowest = 0, ("", 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (lines, error) in files.items():
            path = Path(tmp) / f"{name}.jsonl"
            path.write_text("\n".join(lines) + "\n")
            started = time.monotonic()
            try:
                done = subprocess.run([sys.executable, "-m", "daemon.cli", "audit", "--file", str(path), "--format",
                                       "json", "--fail-on", "none", "--time-budget", str(args.budget)],
                                      cwd=ROOT, capture_output=True, text=True, timeout=args.budget * 3)
            except subprocess.TimeoutExpired:
                problems.append(f"{name}: no answer within {args.budget * 3:.0f} s")
                continue
            seconds = time.monotonic() - started
            if error is not None:
                ok = done.returncode == 2 and f"{name}.jsonl{error}" in done.stderr.replace("\n", "")
                outcome = "file:line error" if ok else f"exit {done.returncode}: {done.stderr.strip()[-120:]}"
            else:
                report = json.loads(done.stdout) if done.returncode in (0, 3) and done.stdout.strip() else None
                ok = report is not None and report["error"] is None and seconds < args.budget + 15
                outcome = (f"{report['outcome']} ({report['termination_reason']}, audit {report['duration_s']:.1f} s)"
                           if report else f"exit {done.returncode}: {done.stderr.strip()[-120:]}")
            audited += ok
            if seconds > slowest[1]:
                slowest = (name, seconds)
            print(f"  {name:22s} {seconds:6.1f} s  {outcome}")
            if not ok:
                problems.append(f"{name}: {outcome}")
    print(f"hostile documents: {audited}/{len(files)} handled; slowest {slowest[0]} {slowest[1]:.1f} s "
          "(process wall time, load included)")
    for problem in problems:
        print(f"PROBLEM {problem}")
    return 1 if problems or total == 0 or audited == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
