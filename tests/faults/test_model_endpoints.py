"""Model endpoints that misbehave, against real `argus audit` processes over real HTTP.

Each case runs ``argus audit --planner llm|hybrid --time-budget 30`` as a subprocess against a
local OpenAI-compatible server that answers 500, 429 with Retry-After, a 200 that is not JSON,
nothing at all, or one byte every 20 seconds. What a user must see: the process ends within the
budget plus 10 seconds of the audit's start (Python's start-up before it, several seconds on a
loaded machine, is printed but does not depend on the endpoint), prints a report, keeps what the
rule sweep found, and a run that did not finish exits 3 (partial), never 0. The cases run four at
a time (they mostly wait), so the module takes about two budgets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from bson import json_util

from tests.doubles.model_server import LocalChatServer, Reply, drip_reply, error_reply, hang_reply, raw_reply

pytestmark = pytest.mark.slow

BUDGET_S = 30.0
GRACE_S = 10.0
_CHECKOUT = str(Path(__file__).resolve().parents[2])

CASES: dict[str, tuple[str, Reply]] = {  # the quick ones first, so four workers finish in about one budget
    "llm-answers-500": ("llm", error_reply(500, "upstream overloaded")),
    "llm-answers-429-retry-after": ("llm", error_reply(429, "slow down", headers={"retry-after": "1"})),
    "llm-answers-200-not-json": ("llm", raw_reply(b"<html><body>502 Bad Gateway</body></html>")),
    "llm-never-answers": ("llm", hang_reply()),
    "hybrid-never-answers": ("hybrid", hang_reply()),
    "llm-drips-a-byte-every-20s": ("llm", drip_reply(20.0)),
    "hybrid-drips-a-byte-every-20s": ("hybrid", drip_reply(20.0)),
}


@dataclass
class Outcome:
    seconds: float  # from spawning the process to its exit
    after_start: float  # from the audit's start (the report's started_at) to the process's exit
    returncode: int
    report: dict[str, Any] | None
    stderr: str
    requests: int


def _collection(path: Path) -> Path:
    docs: list[dict[str, Any]] = [{"order_no": f"O-{i}", "qty": 1 + i % 5, "status": "open"} for i in range(400)]
    for d in docs[:20]:
        d["qty"] = str(d["qty"])  # a type mismatch the rule sweep finds
    path.write_text("\n".join(json_util.dumps(d) for d in docs) + "\n")
    return path


def _run(name: str, planner: str, base_url: str, data: Path, env: dict[str, str], cwd: Path) -> Outcome:
    argv = [sys.executable, "-m", "argus.daemon.cli", "audit", "--no-store", "--file", str(data), "--format", "json",
            "--planner", planner, "--model", "m", "--base-url", base_url, "--time-budget", str(BUDGET_S)]
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    try:
        out, err = proc.communicate(timeout=BUDGET_S * 4)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    seconds, ended = time.monotonic() - started, datetime.now(UTC)
    try:
        report = json.loads(out)
    except json.JSONDecodeError:
        report = None
    after = (ended - datetime.fromisoformat(report["started_at"])).total_seconds() if report else float("inf")
    return Outcome(seconds, after, proc.returncode, report, err, 0)


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    root = tmp_path_factory.mktemp("model-endpoints")
    data = _collection(root / "orders.jsonl")
    servers = {name: LocalChatServer([], default=reply).start() for name, (_, reply) in CASES.items()}
    env = {**os.environ, "PYTHONPATH": _CHECKOUT, "ARGUS_DATA_DIR": str(root / "data"), "NO_COLOR": "1"}
    env.pop("ARGUS_DATABASE_URL", None)
    try:
        # Four at a time: the processes mostly wait, but their start-up competes for two cores.
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = {name: pool.submit(_run, name, planner, servers[name].base_url, data, env, root)
                       for name, (planner, _) in CASES.items()}
            results = {name: future.result() for name, future in futures.items()}
        for name, outcome in results.items():
            outcome.requests = len(servers[name].requests)
        yield results
    finally:
        for server in servers.values():
            server.stop()


@pytest.mark.parametrize("case", list(CASES))
def test_the_run_ends_within_its_budget_with_a_report(outcomes: dict[str, Outcome], case: str) -> None:
    outcome = outcomes[case]
    print(f"{case}: audit start to exit {outcome.after_start:.1f}s (process {outcome.seconds:.1f}s), audit "
          f"{outcome.report['duration_s'] if outcome.report else float('nan'):.1f}s, budget {BUDGET_S:g}s")
    assert outcome.after_start <= BUDGET_S + GRACE_S, f"{case}: {outcome.after_start:.1f}s\n{outcome.stderr[-2000:]}"
    assert outcome.report is not None, outcome.stderr[-2000:]
    assert outcome.report["duration_s"] <= BUDGET_S + 1
    assert outcome.report["outcome"] in ("succeeded", "partial")


@pytest.mark.parametrize("case", ["llm-never-answers", "llm-drips-a-byte-every-20s"])
def test_a_run_cut_short_by_a_silent_endpoint_exits_three_not_zero(outcomes: dict[str, Outcome], case: str) -> None:
    outcome = outcomes[case]
    assert outcome.report is not None and outcome.report["outcome"] == "partial"
    assert outcome.report["termination_reason"] == "time_budget"
    assert outcome.returncode == 3
    assert "argus: warning: partial audit (time_budget)" in outcome.stderr


@pytest.mark.parametrize("case", ["hybrid-never-answers", "hybrid-drips-a-byte-every-20s"])
def test_the_hybrid_runs_keep_the_findings_of_the_rule_sweep(outcomes: dict[str, Outcome], case: str) -> None:
    report = outcomes[case].report
    assert report is not None
    assert ("qty", "type_mismatch", 20) in [(f["field"], f["category"], f["affected_count"])
                                            for f in report["findings"]]
    assert "the model endpoint did not finish answering" in report["llm"]["fallback"]
    assert outcomes[case].returncode != 0


@pytest.mark.parametrize("case", ["llm-never-answers", "llm-drips-a-byte-every-20s"])
def test_a_timed_out_call_is_sent_once_so_nothing_queues_behind_it(outcomes: dict[str, Outcome], case: str) -> None:
    outcome = outcomes[case]
    assert outcome.requests == 1
    assert outcome.report is not None and outcome.report["llm"]["usage"][0]["timed_out_calls"] == 1


@pytest.mark.parametrize("case", ["llm-answers-500", "llm-answers-429-retry-after", "llm-answers-200-not-json"])
def test_an_endpoint_that_answers_badly_hands_the_run_to_the_heuristic_planner(outcomes: dict[str, Outcome],
                                                                               case: str) -> None:
    report = outcomes[case].report
    assert report is not None and report["outcome"] == "succeeded", outcomes[case].stderr[-2000:]
    assert report["llm"]["fallback"] and "heuristic planner finished the run" in " ".join(report["notes"])
    assert ("qty", "type_mismatch", 20) in [(f["field"], f["category"], f["affected_count"])
                                            for f in report["findings"]]
    assert outcomes[case].returncode == 1  # a high finding, the run complete
