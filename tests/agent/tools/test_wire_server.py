"""Real pymongo over TCP to a scripted server (mockupdb speaks the wire protocol): the driver path
mongomock never exercises. The server answers like Cosmos DB (16500 with ``RetryAfterMs``,
``getLastRequestStatistics``), like a primary stepping down, and like a server that never answers;
every audit ends with a report within its time budget."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mockupdb import MockupDB

from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.state import AgentAction
from argus.daemon.sources import open_uri
from tests.daemon.process import free_port
from tests.doubles.planner import ScriptedPlanner

_DOCS = [{"_id": i, "sku": f"S-{i:04d}", "qty": i % 7, "status": "open" if i % 3 else "shipped"} for i in range(60)]

Reply = Callable[[Any], None]


class ScriptedServer:
    """A MongoDB-speaking server whose answers a test scripts per command name.

    ``handlers[name]`` gets each request of that command; unscripted commands get a plausible
    empty answer. Every request is kept, in order, in ``received``.
    """

    def __init__(self, **hello: Any) -> None:
        self.server = MockupDB(auto_ismaster={"maxWireVersion": 17, "minWireVersion": 0, **hello})
        self.handlers: dict[str, Reply] = {}
        self.received: list[Any] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def start(self) -> str:
        self.server.run()
        self._thread.start()
        return self.server.uri

    def close(self) -> None:
        self._stop.set()
        self.server.stop()

    def commands(self, name: str) -> list[Any]:
        return [r for r in self.received if r.command_name == name]

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                request = self.server.receives(timeout=0.2)
            except AssertionError:  # nothing arrived within the timeout
                continue
            except Exception:
                return
            if request is None:  # the server is stopping
                return
            self.received.append(request)
            handler = self.handlers.get(request.command_name, _default)
            try:
                handler(request)
            except Exception:  # a closed client connection
                continue


def _cursor(request: Any, docs: list[dict[str, Any]]) -> None:
    request.ok(cursor={"id": 0, "ns": f"db.{request.doc.get(request.command_name, 'c')}", "firstBatch": docs})


def _default(request: Any) -> None:
    name = request.command_name
    if name == "aggregate":
        first = request.doc["pipeline"][0] if request.doc["pipeline"] else {}
        _cursor(request, _DOCS if "$sample" in first else [])
    elif name == "find":
        _cursor(request, [])
    elif name == "count":
        request.ok(n=len(_DOCS))
    elif name == "getLastRequestStatistics":
        request.command_err(code=59, errmsg="no such command: 'getLastRequestStatistics'")
    else:
        request.ok()


def _cosmos_statistics(charge: float) -> Reply:
    return lambda request: request.ok(CommandName="find", RequestCharge=charge, RequestDurationInMilliSeconds=2,
                                      ActivityId="00000000-0000-0000-0000-000000000000")


def _fails_then_default(times: int, fail: Reply) -> Reply:
    left = [times]

    def handler(request: Any) -> None:
        if left[0] > 0:
            left[0] -= 1
            fail(request)
        else:
            _default(request)
    return handler


@pytest.fixture
def wire() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()


def _count(query: dict[str, Any]) -> AgentAction:
    return AgentAction(action="run_query", action_input={"filter": query, "limit": 0})


def _audit(uri: str, planner: Any, sleeps: list[float] | None = None, **options: Any) -> Any:
    target = open_uri(uri, database="db", collection="items", max_time_ms=options.pop("max_time_ms", 2000),
                      connect_timeout_ms=2000)
    if sleeps is not None:
        target._sleep = sleeps.append  # record the waits instead of sleeping them
    opts = AuditOptions(min_field_coverage=0.0, time_budget_s=options.pop("time_budget_s", 20.0), **options)
    return run_audit(target, planner, options=opts)


def test_a_throttled_read_is_retried_after_the_wait_cosmos_db_asks_for(wire: ScriptedServer) -> None:
    uri = wire.start()
    wire.handlers["getLastRequestStatistics"] = _cosmos_statistics(2.5)
    wire.handlers["aggregate"] = _fails_then_default(2, lambda r: r.command_err(
        code=16500, errmsg="Request rate is large. More Request Units may be needed, so no changes were made. "
                           "Please retry this request later. RetryAfterMs=40, Details='Response status code does "
                           "not indicate success: TooManyRequests (429)'"))
    sleeps: list[float] = []
    report = _audit(uri, ScriptedPlanner([AgentAction(action="schema_sample"), _count({"qty": {"$gt": 5}})]), sleeps)

    assert report.outcome == "succeeded"
    assert sleeps == [0.04, 0.04]
    cost = report.database_cost
    assert cost.server == "cosmosdb" and cost.throttled == 2
    assert cost.queries_sent == 3 and cost.passes == 1  # $sample and the metadata count are not passes
    assert cost.request_units == pytest.approx(3 * 2.5)
    assert any("throttled 2 request(s)" in note for note in report.notes)
    assert len(wire.commands("aggregate")) == 4


def test_throttling_that_outlasts_the_run_is_a_tool_error_not_a_lost_run(wire: ScriptedServer) -> None:
    uri = wire.start()
    wire.handlers["getLastRequestStatistics"] = _cosmos_statistics(1.0)
    wire.handlers["aggregate"] = _fails_then_default(1, _default)  # the sample answers, every count is throttled
    after_sample = wire.handlers["aggregate"]

    def throttled(request: Any) -> None:
        if "$sample" in (request.doc["pipeline"] or [{}])[0]:
            after_sample(request)
        else:
            request.command_err(code=16500, errmsg="Request rate is large. RetryAfterMs=60000")
    wire.handlers["aggregate"] = throttled
    report = _audit(uri, ScriptedPlanner([AgentAction(action="schema_sample"), _count({"qty": 1})]), [],
                    time_budget_s=10.0)

    assert report.outcome == "succeeded"
    [error] = [t for t in report.trace if t.outcome == "error"]
    assert "throttled by the server (code 16500, TooManyRequests)" in error.observation
    assert report.database_cost.throttled == 1


def test_exceeded_time_limit_is_a_tool_error_with_its_reason(wire: ScriptedServer) -> None:
    uri = wire.start()

    def counts_four(request: Any) -> None:
        first = request.doc["pipeline"][0]
        _cursor(request, _DOCS if "$sample" in first else [{"_id": 1, "n": 4}])
    wire.handlers["aggregate"] = counts_four
    wire.handlers["find"] = lambda r: r.command_err(code=50, errmsg="Request timed out. Retries due to rate "
                                                                    "limiting: True.")
    report = _audit(uri, ScriptedPlanner([AgentAction(action="schema_sample"), AgentAction(
        action="run_query", action_input={"filter": {"qty": 1}, "limit": 5})]))

    assert report.outcome == "succeeded"
    [error] = [t.observation for t in report.trace if t.outcome == "error"]
    assert error.startswith("find reached its server time limit (maxTimeMS, code 50 ExceededTimeLimit)")


def test_request_units_past_the_budget_end_the_run_as_partial(wire: ScriptedServer) -> None:
    uri = wire.start()
    wire.handlers["getLastRequestStatistics"] = _cosmos_statistics(40.0)
    steps = [AgentAction(action="schema_sample"), *(_count({"qty": n}) for n in range(10))]
    report = _audit(uri, ScriptedPlanner(steps), ru_budget=100.0)

    assert (report.outcome, report.termination_reason) == ("partial", "ru_budget")
    assert report.database_cost.request_units == pytest.approx(120.0)  # sample, size, one count: then it stops
    assert report.iterations == 2
    assert any("request unit budget of 100 RU is spent" in note for note in report.notes)


def test_mongodb_reports_passes_and_documents_examined_without_request_units(wire: ScriptedServer) -> None:
    uri = wire.start()
    report = _audit(uri, ScriptedPlanner([AgentAction(action="schema_sample"), _count({"qty": 1}),
                                          _count({"_id": 3})]))

    cost = report.database_cost
    assert cost.server == "mongodb" and cost.request_units is None
    assert cost.passes == 1                                  # an _id equality uses the index
    assert cost.documents_examined == len(_DOCS) + len(_DOCS)  # the sample, then one pass over 60 documents
    assert len(wire.commands("getLastRequestStatistics")) == 1  # asked once: MongoDB does not know it


def test_a_heuristic_audit_over_the_wire_ends_with_a_report(wire: ScriptedServer) -> None:
    uri = wire.start()
    wire.handlers["getLastRequestStatistics"] = _cosmos_statistics(3.0)
    report = _audit(uri, HeuristicPlanner(), max_iterations=60)

    assert report.outcome in ("succeeded", "partial") and report.error is None
    assert report.database_cost.queries_sent == len(wire.commands("aggregate")) + len(wire.commands("find")) + \
        len(wire.commands("count"))
    assert report.database_cost.request_units == pytest.approx(3.0 * report.database_cost.queries_sent)


def test_a_primary_stepping_down_once_is_retried(wire: ScriptedServer) -> None:
    uri = wire.start()
    wire.handlers["aggregate"] = _fails_then_default(1, lambda r: r.command_err(
        code=11602, errmsg="operation was interrupted because of a replica set state change"))
    report = _audit(uri, ScriptedPlanner([AgentAction(action="schema_sample"), _count({"qty": 2})]), [])

    assert report.outcome == "succeeded"
    assert report.documents_sampled == len(_DOCS)


def test_a_primary_that_stays_down_fails_the_run_with_a_clear_reason(wire: ScriptedServer) -> None:
    uri = wire.start()
    wire.handlers["aggregate"] = lambda r: r.command_err(code=10107, errmsg="not primary")
    started = time.monotonic()
    report = _audit(uri, ScriptedPlanner([AgentAction(action="schema_sample")]), [], time_budget_s=5.0)

    assert report.outcome == "failed"
    # Where the deadline strikes (a retried read, the server selection before it, or Argus's own
    # retry of the step-down running out of time) decides the wording; each names the cause.
    assert report.error in ("aggregate got no answer within its time limit: the server is unreachable, not "
                            "answering, or has no primary (pymongo retried until the limit)",
                            "aggregate could not reach the database: ServerSelectionTimeoutError",
                            "aggregate failed: the server stepped down from primary (NotPrimaryError) and no "
                            "primary answered within the time limit; use readPreference=secondaryPreferred")
    assert time.monotonic() - started < 5.0 + 2.0


def test_a_server_that_never_answers_ends_the_run_within_its_budget() -> None:
    port = free_port()
    listener = socket.create_server(("127.0.0.1", port))
    accepted: list[tuple[socket.socket, Any]] = []
    threading.Thread(target=lambda: accepted.extend(listener.accept() for _ in range(50)), daemon=True).start()
    try:
        started = time.monotonic()
        report = _audit(f"mongodb://127.0.0.1:{port}/?directConnection=true", HeuristicPlanner(),
                        time_budget_s=3.0, max_time_ms=1500)
        elapsed = time.monotonic() - started
    finally:
        listener.close()
        for conn, _ in accepted:
            conn.close()
    assert report.outcome == "failed"
    assert "could not reach the database" in (report.error or "")
    assert elapsed < 3.0 + 1.5


def test_reads_follow_the_read_preference_of_the_uri() -> None:
    router = ScriptedServer(msg="isdbgrid")  # through mongos the driver states the preference on every read
    uri = router.start()
    try:
        report = _audit(f"{uri}/?readPreference=secondaryPreferred",
                        ScriptedPlanner([AgentAction(action="schema_sample"), _count({"qty": 1})]))
    finally:
        router.close()
    reads = router.commands("aggregate") + router.commands("getLastRequestStatistics") + router.commands("ping")
    assert report.outcome == "succeeded" and len(reads) == 4  # ping: the first contact, within serverSelectionTimeoutMS
    assert all(r.doc["$readPreference"] == {"mode": "secondaryPreferred"} for r in reads)


def _contains(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_contains(v, key) for v in value.values())
    if isinstance(value, list):
        return any(_contains(v, key) for v in value)
    return False


def test_one_operator_the_server_refuses_costs_only_its_own_check(wire: ScriptedServer) -> None:
    """A server without ``$expr`` (an older Cosmos DB API) refuses every batch holding it and names it:
    the other checks are batched again, the refused one is asked alone once, and every other count
    still comes back."""
    uri = wire.start()

    def no_expr(request: Any) -> None:
        pipeline = request.doc["pipeline"]
        if _contains(pipeline, "$expr"):
            request.command_err(code=168, errmsg="unknown operator: $expr")
        elif "$sample" in pipeline[0]:
            _cursor(request, _DOCS)
        else:
            facet = next(stage["$facet"] for stage in pipeline if "$facet" in stage)
            _cursor(request, [{name: [{"n": 4}] for name in facet}])
    wire.handlers["aggregate"] = no_expr
    queries = [{"filter": {"qty": n}} for n in range(6)] + [{"filter": {"$expr": {"$lt": ["$qty", "$_id"]}}}]
    report = _audit(uri, ScriptedPlanner([AgentAction(action="schema_sample"),
                                          AgentAction(action="count_many", action_input={"queries": queries})]))

    [step] = [t for t in report.trace if t.action == "count_many"]
    assert step.outcome == "ok", step.observation
    assert "1 of them went unanswered (the server refused $expr)" in step.observation
    assert report.outcome == "partial"
    assert "1 planned check(s) went unanswered, so the run is partial and resolves no earlier finding: " \
           "_id, qty (the server refused $expr)" in report.notes
    refused = [len(r.doc["pipeline"]) for r in wire.commands("aggregate") if _contains(r.doc["pipeline"], "$expr")]
    assert len(refused) == 2        # the whole batch, then the check alone
