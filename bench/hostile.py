#!/usr/bin/env python3
"""Hostile-input benchmark: every guard payload refused, every hostile document audited in budget.

Generates its own inputs: the hostile filter/projection/pipeline corpus of tests/security, and
Extended JSON lines files of hostile documents (deep nesting, DBRef and code values, dates
outside years 1-9999, an array of 100,000 objects, strings of 150,000 characters, an invalid
$oid). Each file is audited with the real CLI (`argus audit --file`, heuristic planner) in its own
process. Prints payloads refused / total, then per file: outcome and wall time, and the slowest.
Then each model answer that once ended an audit (integers beyond int64, NUL in a key or a pattern,
a bare regex as value_filter, arguments nested 5,000 deep, patterns PCRE backtracks on) is sent by a
local model endpoint to `argus audit --planner hybrid` over real pymongo (a scripted wire-protocol
server). Exits non-zero when a payload passes or raises anything else, when a file ends in `internal
error`, a hang past the budget, or no `file:line` error where one is due, when an answer's audit
fails or ends past budget + 10 s, or when nothing ran.

Usage: python bench/hostile.py [--budget 20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _corpus() -> tuple[int, int, list[str]]:
    sys.path.insert(0, str(ROOT))
    from argus.agent.ejson import decode
    from argus.agent.errors import QueryRefused
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


def _gzip(lines: list[str]) -> bytes:
    import gzip

    return gzip.compress(("\n".join(lines) + "\n").encode())


def _bson(docs: list[dict[str, object]]) -> bytes:
    import bson

    return b"".join(bson.encode(d) for d in docs)


def _files() -> dict[str, tuple[list[str] | bytes, str | None]]:
    """name → (lines or raw bytes, expected file:line error suffix or None for a report)."""
    plain = [json.dumps({"_id": i, "qty": i % 7, "city": ["Bonn", "Köln"][i % 2]}) for i in range(300)]
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
        # files as people have them, and bytes that are no JSON at all (issue 22): each read by one decoder
        "gzip_lines": (_gzip(plain), None),
        "gzip_json_array": (_gzip(["[", ",\n".join(plain), "]"]), None),
        "bson_dump": (_bson([{"_id": i, "qty": i % 7} for i in range(300)]), None),
        "latin1": (b'{"_id": 1, "city": "Bonn"}\n{"_id": 2, "city": "M\xfcnchen"}\n',
                   ":2:22: not UTF-8 (byte 0xFC); the file looks like Latin-1"),
        "utf16": ("\n".join(plain[:5]).encode("utf-16"), ": cannot be read: the content is UTF-16 text"),
        "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)),
                   ": cannot be read: the content is binary"),
        "gzip_cut_short": (_gzip(plain * 20)[:400], ": the gzip data is damaged or cut short"),
        "json_syntax": (['{"_id": 1}', '{"_id": 2,, "a": 1}'], ":2:11: not valid JSON: Expecting property name"),
        "bad_date": (['{"_id": 1, "t": {"$date": "next tuesday"}}'], ":1: not valid Extended JSON: a $date must be"),
        "snan_decimal": (['{"_id": 1099, "qty": {"$numberDecimal": "sNaN"}}', '{"_id": 1100, "qty": '
                          '{"$numberDecimal": "-sNaN"}}', *plain], None),
        "no_id": ([json.dumps({"qty": i % 7}) for i in range(300)], None),
        "int_past_64_bits": (['{"_id": 1, "n": 99999999999999999999999}'], ":1: an integer does not fit in 64 bits"),
    }


def _deep_filter(levels: int) -> str:
    return '{"filter": ' + '{"$and": [' * levels + '{"qty": 1}' + ']}' * levels + ', "limit": 0}'


def _answers() -> dict[str, Any]:
    """name → what the model answers once (a tool call's arguments as text): each once ended the audit
    with an exception, or sent a pattern to the server that PCRE takes minutes on."""
    big = 99999999999999999999999
    regexes = [r"^(?:a?){28}a{28}$", r"^(ab?|b)+$", r"^(a[bc]?|b)*$", r"^(a|[ab])+$", r"^(\d|[0-9])+$",
               r"^(\w|\d)+$", "^([\u0100-\u0102]|[\u0101-\u0103])+$", r"^.*a.*a.*a.*a.*a.*b$",
               # classes PCRE reads wider than Python (\W \S \D \v), and a POSIX class Python reads as characters
               r"^(\W|é)+$", r"^(\S|\xa0)+$", "^(\\D|\u0663)+$", r"^(\v|\n)+$", r"^([[:digit:]]|1)+$"]
    answers: dict[str, Any] = {
        "integer_beyond_int64": ("run_query", {"filter": {"qty": big}, "limit": 0}),
        "integer_beyond_int64_in": ("run_query", {"filter": {"qty": {"$in": [1, big]}}, "limit": 0}),
        "nul_in_a_key": ("run_query", {"filter": {"sku": {"a\x00b": 1}}, "limit": 0}),
        "nul_in_a_pattern": ("run_query", {"filter": {"sku": {"$regularExpression": {"pattern": "a\x00",
                                                                                     "options": ""}}}, "limit": 0}),
        "value_filter_regex": ("get_stats", {"field": "sku", "operation": "value_counts",
                                             "value_filter": {"$regex": "^S"}}),
        "arguments_nested_5000": ("run_query", _deep_filter(5000)),
    }
    answers.update({f"regex_{i}": ("run_query", {"filter": {"sku": {"$regex": r}}, "limit": 0})
                    for i, r in enumerate(regexes)})
    return answers


def _model_answers(budget: float, quick: bool, problems: list[str]) -> tuple[int, int]:
    """Each hostile answer, in an `argus audit --planner hybrid` process over real pymongo (a scripted
    server speaking the wire protocol): the audit must end with a report, within budget + 10 s, and a
    pattern PCRE backtracks on must be refused before it reaches the wire."""
    sys.path.insert(0, str(ROOT))
    from tests.agent.tools.test_wire_server import ScriptedServer
    from tests.doubles.model_server import LocalChatServer, tool_reply

    answers = _answers()
    names = ["value_filter_regex", "integer_beyond_int64"] if quick else list(answers)
    handled = 0
    wire = ScriptedServer()
    uri = wire.start()
    try:
        for name in names:
            tool, arguments = answers[name]
            chat = LocalChatServer([tool_reply(tool, arguments)], default=tool_reply("conclude", {})).start()
            started = time.monotonic()
            try:
                done = subprocess.run([sys.executable, "-m", "argus.daemon.cli", "audit", "--no-store", "--uri", uri,
                                       "--database", "db", "--collection", "items", "--planner", "hybrid",
                                       "--model", "m", "--base-url", chat.base_url, "--format", "json",
                                       "--fail-on", "none", "--time-budget", str(budget)],
                                      cwd=ROOT, capture_output=True, text=True, timeout=budget * 3,
                                      env={**os.environ, "ARGUS_LLM_MAX_RETRIES": "0"})
            except subprocess.TimeoutExpired:
                problems.append(f"{name}: no answer within {budget * 3:.0f} s")
                continue
            finally:
                chat.stop()
            seconds = time.monotonic() - started
            report = json.loads(done.stdout) if done.returncode in (0, 3) and done.stdout.strip() else None
            step = next((t for t in report["trace"] if t["proposed_by"] == "model"), None) if report else None
            ok = report is not None and report["outcome"] != "failed" and seconds < budget + 10
            if name.startswith("regex_"):  # the scripted server answers any pattern: refused is the only pass
                ok = ok and step is not None and step["outcome"] == "rejected"
            what = (f"{report['outcome']}, the answer {step['outcome'] if step else 'invalid (no step)'}"
                    if report else f"exit {done.returncode}: {done.stderr.strip()[-120:]}")
            handled += ok
            print(f"  {name:26s} {seconds:6.1f} s  {what}")
            if not ok:
                problems.append(f"{name}: {what}")
    finally:
        wire.close()
    return handled, len(names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0, help="audit time budget in seconds")
    parser.add_argument("--quick", action="store_true", help="a smoke run: the guard corpus and two small files")
    args = parser.parse_args()
    files = {k: v for k, v in _files().items()
             if not args.quick or k in ("invalid_oid", "dbref_values", "latin1", "gzip_json_array")}
    refused, total, problems = _corpus()
    print(f"guard corpus: {refused}/{total} payloads refused")
    audited, slowest = 0, ("", 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (lines, error) in files.items():
            path = Path(tmp) / f"{name}.jsonl"
            if isinstance(lines, bytes):
                path.write_bytes(lines)
            else:
                path.write_text("\n".join(lines) + "\n")
            started = time.monotonic()
            try:
                done = subprocess.run([sys.executable, "-m", "argus.daemon.cli", "audit", "--file", str(path),
                                       "--format", "json", "--fail-on", "none", "--time-budget", str(args.budget)],
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
    print("hostile model answers (argus audit --planner hybrid over the wire protocol):")
    answered, asked = _model_answers(args.budget, args.quick, problems)
    print(f"hostile model answers: {answered}/{asked} ended with a report within budget + 10 s")
    for problem in problems:
        print(f"PROBLEM {problem}")
    return 1 if problems or total == 0 or audited == 0 or answered == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
