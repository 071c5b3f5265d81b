"""Servers that refuse part of what Argus sends, over real pymongo and TCP (mockupdb answering from a
real query engine): each run degrades as a careful client would, says so in its notes, and ends
with every finding it can confirm, the same as the batched run's on the same data. A check that
gets no answer is named and makes the run partial; it never passes as clean."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from argus.agent.clock import ManualClock
from argus.agent.health.models import HealthOptions
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.heuristic import HeuristicPlanner
from argus.agent.report import AuditReport
from argus.agent.state import AgentAction
from argus.agent.tools.compat import NOT_BY_SUBTRACTION
from argus.daemon.cli import app
from tests.agent.tools.engine_server import STALL, EngineServer, Refusal, refuse, uses
from tests.agent.tools.refusing_data import DOCS, NOW, TRUTH
from tests.conftest import memory_collection
from tests.doubles.planner import ScriptedPlanner

NOT_IMPLEMENTED = "Operator '$not' is not currently implemented"


@pytest.fixture
def servers() -> Iterator[list[EngineServer]]:
    started: list[EngineServer] = []
    yield started
    for server in started:
        server.close()


def _serve(servers: list[EngineServer], **kwargs: Any) -> EngineServer:
    server = EngineServer(DOCS, collection="orders", **kwargs)
    server.start()
    servers.append(server)
    return server


def _audit(server: EngineServer, planner: Any = None, **options: Any) -> AuditReport:
    target = server.target(max_time_ms=options.pop("max_time_ms", 5000))
    clock = ManualClock(NOW)
    # The orders stopped ten days before NOW: a first-run baseline would (rightly) report the silence.
    options.setdefault("health", HealthOptions(backfill=False))
    return run_audit(target, planner or HeuristicPlanner(clock=clock), clock=clock,
                     options=AuditOptions(time_budget_s=options.pop("time_budget_s", 60.0), **options))


def _found(report: AuditReport) -> dict[tuple[str, str], int]:
    return {(f.field, f.category.value): f.affected_count for f in report.findings}


def _unanswered(report: AuditReport) -> str:
    return next(n for n in report.notes if "went unanswered" in n)


def test_the_batched_run_over_the_wire_finds_every_planted_defect(servers: list[EngineServer]) -> None:
    report = _audit(_serve(servers))

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == TRUTH
    assert report.database_cost.passes == 3  # the batches; the evidence pass confirms every finding
    assert report.notes == []


# --- the four defects of issue 25 -------------------------------------------------------------

def test_a_server_refusing_not_in_every_form_answers_its_counts_by_subtraction_and_names_what_went_unanswered(
        servers: list[EngineServer]) -> None:
    """No error code, only a message: the counts written with ``$not`` are answered as count(Q) minus
    count(Q and P), so the type and format findings stand; a statistic filtered with ``$not`` (the
    duplicates of order_no, placeholders left out) has no such identity and goes unanswered."""
    server = _serve(servers, refusals=[refuse("$not", NOT_IMPLEMENTED)])
    report = _audit(server)

    assert (report.outcome, report.termination_reason) == ("partial", "concluded")
    assert _found(report) == {k: v for k, v in TRUTH.items() if k != ("order_no", "duplicate_value")}
    note = _unanswered(report)
    assert note.endswith("order_no (the server refused $not)"), note
    assert [(c.fields, c.reason) for c in report.unanswered_checks] == [(["order_no"], "the server refused $not")]
    assert NOT_BY_SUBTRACTION in report.notes
    assert "the server refuses $not, also in a query of its own: the checks written with it were not answered" \
        in report.notes
    # never satisfied by queries that test nothing
    assert not any(uses(doc, "$exists") and len(doc.get("pipeline", [])) == 1 for doc in server.commands("aggregate"))


def test_a_batch_with_twenty_checks_using_not_is_answered_by_subtraction(servers: list[EngineServer]) -> None:
    """Twenty of forty checks use ``$not``: the run used to end `partial` with twenty checks unanswered
    (and before that, `succeeded` with the batch only a failed action). Each is now counted as the
    in-process engine counts it with ``$not`` (each count compared in test_not_by_subtraction)."""
    server = _serve(servers, refusals=[refuse("$not", NOT_IMPLEMENTED)])
    queries = [{"filter": {"qty": {"$not": {"$gt": n}}} if n % 2 else {"qty": n}} for n in range(40)]
    steps = [AgentAction(action="schema_sample"), AgentAction(action="count_many", action_input={"queries": queries})]
    report = _audit(server, ScriptedPlanner(steps), min_field_coverage=0.0)

    assert (report.outcome, report.termination_reason) == ("succeeded", "concluded"), report.notes
    [step] = [t for t in report.trace if t.action == "count_many"]
    assert step.outcome == "ok" and "went unanswered" not in step.observation
    matched = sum(1 for q in queries if memory_collection(DOCS, "orders").count_documents(q["filter"]))
    assert f"counted 40 queries and 0 statistics in one pass; {matched} queries matched" in step.observation
    assert NOT_BY_SUBTRACTION in report.notes
    assert len([d for d in server.commands("aggregate") if uses(d, "$not")]) == 2  # the batch, one check alone


def test_the_command_line_exits_3_for_a_server_refusing_not(servers: list[EngineServer]) -> None:
    server = _serve(servers, refusals=[refuse("$not", NOT_IMPLEMENTED)])
    result = CliRunner().invoke(app, ["audit", "--uri", server.uri, "--database", "db", "--collection", "orders",
                                      "--no-store"])

    assert result.exit_code == 3, result.output
    assert "partial audit (planned checks went unanswered or declared rules were not checked: see the notes)" \
        in " ".join(result.output.split())


def test_a_query_the_server_never_answers_is_a_timeout_of_that_check_not_a_lost_database(
        servers: list[EngineServer]) -> None:
    """The server ignores maxTimeMS for one query but still answers ping: pymongo's NetworkTimeout
    is that query's timeout, and the audit goes on."""
    stalled = {"qty": 3}
    server = _serve(servers, refusals=[lambda name, doc: STALL if name == "aggregate" and
                                       doc.get("pipeline", [{}])[0] == {"$match": stalled} else None])
    steps = [AgentAction(action="schema_sample"), AgentAction(action="run_query", action_input={"filter": stalled}),
             AgentAction(action="run_query", action_input={"filter": {"qty": 4}, "limit": 0})]
    report = _audit(server, ScriptedPlanner(steps), max_time_ms=2000, min_field_coverage=0.0)

    assert (report.outcome, report.error) == ("succeeded", None)
    [error] = [t.observation for t in report.trace if t.outcome == "error"]
    assert error.startswith("count_documents got no answer within its time limit (2000 ms) although the server "
                            "answers ping")
    assert report.trace[-2].observation.startswith("matched ")  # the next query was answered
    assert len(server.stalled) == 1


@pytest.mark.slow  # four queries left to time out at 2.5 s each
def test_a_stalled_batch_is_split_until_the_stalled_checks_stand_alone_and_only_they_go_unanswered(
        servers: list[EngineServer]) -> None:
    def stall_email_format(name: str, doc: dict[str, Any]) -> Refusal | None:  # its pattern ends in xn--
        return STALL if name == "aggregate" and "xn--" in str(doc) else None

    report = _audit(_serve(servers, refusals=[stall_email_format]), max_time_ms=2500)

    assert (report.outcome, report.error) == ("partial", None)
    found = _found(report)
    assert found[("qty", "type_mismatch")] == 6 and found[("price", "outlier_value")] == 5
    assert ("email", "format_violation") not in found and found[("order_no", "duplicate_value")] == 2
    assert {c.reason for c in report.unanswered_checks} == {"timed out"}
    assert {f for c in report.unanswered_checks for f in c.fields} == {"email"}
    assert any(n.startswith("a batched pass reached its time limit: later passes of ") for n in report.notes)


def _alone_counts(server: EngineServer) -> int:
    """The evidence queries counted on their own (pymongo's count_documents: ``$match`` then ``$group``)."""
    return sum(1 for doc in server.commands("aggregate")
               if not uses(doc, "$facet") and any("$group" in stage for stage in doc["pipeline"]))


def test_findings_confirmed_by_the_evidence_pass_cost_no_read_of_their_own(servers: list[EngineServer]) -> None:
    """Each finding carries its evidence query's count from the batched evidence pass: no finding
    is counted again on its own, so the run's passes do not grow with its findings."""
    server = _serve(servers)
    report = _audit(server)

    assert _found(report) == TRUTH
    assert _alone_counts(server) == 0
    assert report.database_cost.passes <= 4, [o.kind for o in report.database_cost.operations]


def _off_by_two(name: str, doc: dict[str, Any], docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if name != "aggregate" or not uses(doc, "$facet"):
        return docs
    return [{branch: [{**row, "n": row["n"] + 2} if "n" in row else row for row in rows]
             for branch, rows in facet.items()} for facet in docs]


def test_a_finding_that_disagrees_with_its_batched_count_is_counted_on_its_own(servers: list[EngineServer]) -> None:
    """A server whose batched counts are off by two (a bug, a stage it evaluates differently) and a
    finding that says 6 where the batch said 8: only that finding's evidence query is counted on
    its own, and its own count (6) stands, noted."""
    query = {"qty": {"$type": "string"}}
    steps = [AgentAction(action="schema_sample"),
             AgentAction(action="count_many", action_input={"queries": [{"filter": query}]}),
             AgentAction(action="write_finding", action_input={
                 "field": "qty", "category": "type_mismatch", "severity": "high", "description": "qty as text",
                 "evidence_query": query, "affected_count": 6, "affected_pct": 0.01, "sample_values": ["4"]})]
    server = _serve(servers, tamper=_off_by_two)
    report = _audit(server, ScriptedPlanner(steps), min_field_coverage=0.0)

    assert _found(report) == {("qty", "type_mismatch"): 6}
    assert _alone_counts(server) == 1
    assert "the evidence query of qty type_mismatch counts 6 documents on its own where the batched pass counted " \
           "8: the finding carries 6" in report.notes


# --- each refusal and its fallback --------------------------------------------------------------

FACET_REFUSED = Refusal("Unrecognized pipeline stage name: '$facet'", 40324)


def test_a_server_without_facet_is_asked_check_by_check(servers: list[EngineServer]) -> None:
    server = _serve(servers, refusals=[refuse("$facet", FACET_REFUSED.errmsg, FACET_REFUSED.code)])
    report = _audit(server)

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == TRUTH
    assert "the server refused $facet (code 40324): every check was asked on its own (count_documents, find, one " \
           "pipeline per statistic) instead of in batched passes" in report.notes
    assert sum(1 for doc in server.commands("aggregate") if uses(doc, "$facet")) == 1  # learned once


def test_get_stats_duplicates_on_a_server_without_facet_is_its_two_pipelines(servers: list[EngineServer]) -> None:
    steps = [AgentAction(action="schema_sample"),
             AgentAction(action="get_stats", action_input={"field": "order_no", "operation": "duplicates"})]
    results = []
    for refusals in ([], [refuse("$facet", FACET_REFUSED.errmsg, FACET_REFUSED.code)]):
        report = _audit(_serve(servers, refusals=refusals), ScriptedPlanner(list(steps)), min_field_coverage=0.0)
        [stats] = [t for t in report.trace if t.action == "get_stats"]
        assert stats.outcome == "ok", stats.observation
        results.append(stats.observation)
    assert results[0] == results[1] == "duplicates of order_no: 1 values, 1 duplicated values in 2 documents"


def test_a_server_without_sample_is_sampled_with_find_from_random_points_of_the_id_index(
        servers: list[EngineServer]) -> None:
    server = _serve(servers, refusals=[refuse("$sample", "Unrecognized pipeline stage name: '$sample'", 40324)])
    report = _audit(server, sample_size=300)

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == TRUTH
    assert report.documents_sampled == 300
    assert any(n.startswith("the server refused $sample (code 40324): the sample was read with find from 10 random "
                            "points of the _id index") for n in report.notes)
    finds = [doc for doc in server.commands("find") if uses(doc, "$gte")]
    assert 3 <= len(finds) <= 10 and all(doc["sort"] == {"_id": 1} for doc in finds)


def test_expr_refused_inside_facet_is_asked_alone(servers: list[EngineServer]) -> None:
    server = _serve(servers, refusals=[refuse("$expr", "$expr is not allowed inside a $facet stage", 2,
                                              when=lambda doc: uses(doc, "$facet"))])
    report = _audit(server)

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == TRUTH
    assert "the server refused $expr inside a batched pass (code 2): the checks written with it were asked one at " \
           "a time" in report.notes


def test_a_batch_refused_without_naming_what_is_split_until_the_refused_checks_stand_alone(
        servers: list[EngineServer]) -> None:
    """A look-alike that refuses a pattern inside ``$facet`` with only a code: halves of the batch
    are asked again until the refused check stands alone, then it is asked on its own."""
    server = _serve(servers, refusals=[refuse("$regex", "not supported", 115, when=lambda doc: uses(doc, "$facet"))])
    report = _audit(server)

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == TRUTH
    assert "the server refused a batched pass without naming what it refused (code 115): the batch was split until " \
           "the refused checks stood alone, and those were asked one at a time" in report.notes


def test_a_refused_type_alias_is_sent_again_as_its_numeric_code(servers: list[EngineServer]) -> None:
    def no_number_alias(name: str, doc: dict[str, Any]) -> Refusal | None:
        texts = [str(v) for v in _values_of(doc, "$type")]
        return Refusal("unknown string alias for $type: number", 2) if "number" in texts else None

    server = _serve(servers, refusals=[no_number_alias])
    report = _audit(server)

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == TRUTH
    assert "the server refused a $type alias (such as 'number'): every $type was sent again as its numeric BSON " \
           "type code" in report.notes


def test_refused_request_statistics_leave_request_units_uncounted_and_say_the_budget_was_not_enforced(
        servers: list[EngineServer]) -> None:
    server = _serve(servers, statistics_error=Refusal(
        "not authorized on db to execute command { getLastRequestStatistics: 1 }", 13))
    report = _audit(server, ru_budget=500.0)

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == TRUTH
    assert report.database_cost.request_units is None
    assert len(server.commands("getLastRequestStatistics")) == 1
    assert "the server refused getLastRequestStatistics (code 13): request units are not counted, so an ru_budget " \
           "cannot be enforced; on Cosmos DB grant the command to Argus's user" in report.notes
    assert "the ru_budget of 500 RU was not enforced: the server does not report request units" in report.notes


def test_refused_list_indexes_leaves_freshness_to_the_sample(servers: list[EngineServer]) -> None:
    server = _serve(servers, indexes=["created_at"], refusals=[lambda name, doc: Refusal(
        "not authorized on db to execute command { listIndexes: \"orders\" }", 13) if name == "listIndexes" else None])
    report = _audit(server, health=HealthOptions(time_field="created_at", backfill=False))

    assert report.outcome == "succeeded", report.notes
    assert _found(report) == TRUTH
    assert report.health is not None and report.health.time_source == "sample:created_at"
    assert any(n.startswith("the server refused listIndexes (code 13)") for n in report.notes)


def _values_of(value: Any, key: str) -> list[Any]:
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                found.append(item[key])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
