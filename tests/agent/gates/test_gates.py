"""Each deterministic gate rule: what it refuses and the critique the planner reads."""

from __future__ import annotations

from typing import Any

import pytest

from argus.agent.ejson import filter_key
from argus.agent.findings import Category, Finding, Severity
from argus.agent.gates.action import action_gate, action_key, parse_action
from argus.agent.gates.finding import finding_gate
from argus.agent.gates.run import run_gate
from argus.agent.options import AuditOptions
from argus.agent.state import AgentAction, AgentState
from argus.agent.tools.models import SchemaSampleResult
from argus.agent.tools.profiling import profile_documents


def _state(**options: Any) -> AgentState:
    fields, _, _ = profile_documents([{"age": i, "name": f"n{i}", "city": "x"} for i in range(10)])
    state = AgentState(connection_name="c", database="d", collection="people", options=AuditOptions(**options))
    state.schema = SchemaSampleResult(collection="people", collection_size=1000, documents_sampled=10, fields=fields)
    state.collection_size = 1000
    return state


def _act(action: str, **inp: Any) -> AgentAction:
    return AgentAction(action=action, action_input=inp)  # type: ignore[arg-type]


def _rules(record) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {r.rule: r.verdict for r in record.rules}


# --- action gate -----------------------------------------------------------------------------

def test_sample_first() -> None:
    state = _state()
    state.schema = None
    record = action_gate().evaluate(parse_action(_act("run_query", filter={})), state)
    assert record.verdict == "FAIL" and record.critique == "schema_sample must run before any other action"


def test_sample_first_allows_the_sample() -> None:
    state = _state()
    state.schema = None
    assert action_gate().evaluate(parse_action(_act("schema_sample", sample_size=10)), state).verdict == "PASS"


@pytest.mark.parametrize(("action", "inp", "problem"), [
    ("run_query", {"filter": "age > 3"}, "run_query.filter"),
    ("run_query", {"filter": {}, "limit": -1}, "run_query.limit"),
    ("run_query", {"filter": {}, "sort": {"a": 1}}, "run_query.sort: Extra inputs are not permitted"),
    ("get_stats", {"field": "age", "operation": "median"}, "get_stats.operation"),
    ("get_stats", {"operation": "min"}, "get_stats.field: Field required"),
    ("write_finding", {"field": "age"}, "write_finding.category: Field required"),
    ("write_finding", {"field": "age", "category": "bad_data", "severity": "high", "description": "d",
                       "evidence_query": {}, "affected_count": 1, "affected_pct": 0.1}, "write_finding.category"),
])
def test_input_shape(action: str, inp: dict, problem: str) -> None:
    record = action_gate().evaluate(parse_action(_act(action, **inp)), _state())
    assert record.verdict == "FAIL" and _rules(record) == {"input_shape": "FAIL"}
    assert problem in (record.critique or "")


@pytest.mark.parametrize("query", [{"$where": "1"}, {"a": {"$function": {}}}, {"$expr": {"$accumulator": {}}}])
def test_read_only(query: dict) -> None:
    record = action_gate().evaluate(parse_action(_act("run_query", filter=query)), _state())
    assert _rules(record)["read_only"] == "FAIL"
    assert "allow-list" in (record.critique or "") or "refused" in (record.critique or "")


@pytest.mark.parametrize("value", [{"$numberDecimal": "abc"}, {"$oid": "zz"}, {"$date": "not a date"},
                                   {"$numberLong": "x"}])
def test_a_malformed_extended_json_value_is_refused_not_a_crash(value: dict) -> None:
    """A planner's filter with a bad $numberDecimal or $oid ended the whole audit with a traceback."""
    record = action_gate().evaluate(parse_action(_act("run_query", filter={"age": value})), _state())
    assert _rules(record)["read_only"] == "FAIL"
    assert "not valid Extended JSON" in (record.critique or "")


def test_read_only_checks_get_stats_filters() -> None:
    record = action_gate().evaluate(parse_action(_act("get_stats", field="age", operation="min",
                                                      value_filter={"$where": "1"})), _state())
    assert _rules(record)["read_only"] == "FAIL"


def test_no_repeat_query_names_the_iteration() -> None:
    state = _state()
    proposed = parse_action(_act("run_query", filter={"age": {"$gt": 1}}, limit=0))
    assert proposed.params is not None
    state.executed_keys[action_key("run_query", proposed.params)] = 4
    record = action_gate().evaluate(proposed, state)
    assert record.verdict == "FAIL" and "already ran at iteration 4" in (record.critique or "")


def test_no_repeat_sees_through_key_order_and_date_spelling() -> None:
    state = _state()
    first = parse_action(_act("run_query", filter={"a": 1, "t": {"$gt": {"$date": "2024-01-01T00:00:00Z"}}}))
    again = parse_action(_act("run_query", filter={"t": {"$gt": {"$date": "2024-01-01T00:00:00.000Z"}}, "a": 1}))
    assert first.params is not None and again.params is not None
    state.executed_keys[action_key("run_query", first.params)] = 1
    assert _rules(action_gate().evaluate(again, state))["no_repeat_query"] == "FAIL"


def test_unknown_field_is_a_warning_not_a_failure() -> None:
    record = action_gate().evaluate(parse_action(_act("get_stats", field="ghost", operation="count")), _state())
    assert record.verdict == "WARN" and _rules(record) == {"known_field": "WARN"}


# --- finding gate ----------------------------------------------------------------------------

def _finding(**over: Any) -> Finding:
    base: dict[str, Any] = dict(field="age", category=Category.OUTLIER_VALUE, severity=Severity.HIGH,
                                description="d", evidence_query={"age": {"$gt": 130}}, affected_count=20,
                                affected_pct=0.02)
    return Finding(**(base | over))


def _confirmed(state: AgentState, query: dict, count: int) -> AgentState:
    state.evidence_counts[filter_key(query)] = count
    return state


def test_finding_with_confirmed_evidence_passes() -> None:
    state = _confirmed(_state(), {"age": {"$gt": 130}}, 20)
    assert finding_gate().evaluate(_finding(), state).verdict == "PASS"


def test_evidence_required_needs_affected_documents() -> None:
    record = finding_gate().evaluate(_finding(affected_count=0, affected_pct=0.0), _state())
    assert _rules(record)["evidence_required"] == "FAIL"


def test_evidence_required_needs_a_query() -> None:
    record = finding_gate().evaluate(_finding(evidence_query={}), _state())
    assert "evidence_query is empty" in (record.critique or "")


def test_evidence_must_have_been_run() -> None:
    record = finding_gate().evaluate(_finding(), _state())
    assert record.verdict == "FAIL" and "was never run" in (record.critique or "")


def test_affected_count_must_match_the_evidence_count() -> None:
    state = _confirmed(_state(), {"age": {"$gt": 130}}, 17)
    record = finding_gate().evaluate(_finding(), state)
    assert "affected_count 20 differs from the evidence query's matched_count 17" in (record.critique or "")


def test_share_must_be_a_fraction_of_the_collection() -> None:
    state = _confirmed(_state(), {"age": {"$gt": 130}}, 20)
    record = finding_gate().evaluate(_finding(affected_pct=0.2), state)
    assert _rules(record) == {"share_consistent": "FAIL"}


def test_critical_needs_one_percent() -> None:
    state = _confirmed(_state(), {"age": {"$gt": 130}}, 5)
    record = finding_gate().evaluate(_finding(severity=Severity.CRITICAL, affected_count=5, affected_pct=0.005),
                                     state)
    assert _rules(record) == {"severity_calibration": "FAIL"}
    assert "critical needs at least 1% of documents affected" in (record.critique or "")


def test_critical_at_one_percent_passes() -> None:
    state = _confirmed(_state(), {"age": {"$gt": 130}}, 10)
    record = finding_gate().evaluate(_finding(severity=Severity.CRITICAL, affected_count=10, affected_pct=0.01), state)
    assert record.verdict == "PASS"


def test_finding_on_a_field_outside_the_sample_is_a_warning() -> None:
    state = _confirmed(_state(), {"ghost": 1}, 20)
    record = finding_gate().evaluate(_finding(field="ghost", evidence_query={"ghost": 1}), state)
    assert record.verdict == "WARN" and _rules(record) == {"field_known": "WARN"}


# --- run gate --------------------------------------------------------------------------------

def test_conclude_needs_field_coverage() -> None:
    state = _state(min_field_coverage=0.8)
    state.fields_investigated = {"age"}
    record = run_gate().evaluate(_act("conclude"), state)
    assert record.verdict == "FAIL"
    assert "only 1/3 fields (33%) were checked by a query; at least 80% needed" in (record.critique or "")
    assert "name" in (record.critique or "") and "city" in (record.critique or "")


def test_conclude_with_enough_coverage_passes() -> None:
    state = _state(min_field_coverage=0.6)
    state.fields_investigated = {"age", "name"}
    assert run_gate().evaluate(_act("conclude"), state).verdict == "PASS"


def test_conclude_needs_a_sample() -> None:
    state = _state()
    state.schema = None
    assert _rules(run_gate().evaluate(_act("conclude"), state))["sample_taken"] == "FAIL"
